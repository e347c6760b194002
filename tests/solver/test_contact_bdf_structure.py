"""BDF's Jacobian by components on contact models (solver/codegen/bdf_structure.py, bdf.c "structure",
segment.c segment_groups).

* The clusters of the unknowns: free bodies apart, bodies joined by a joint chain or a force element
  together (what couples them without contact).
* A compiled BDF run of spheres in a box, two of them stacked (in contact from the start: one
  component of 24 unknowns, the others 12 each), moves as the same run with the dense Jacobian of
  every unknown, within the corrector's tolerance, with fewer right-hand sides.
"""
import numpy as np

import solver
from solver.analysis import segments
from solver.codegen import segment as compiled_segment
from solver.codegen.bdf_structure import clusters
from solver.partitioning.choose import build_partition

R, MASS = 0.05, 0.5
INERTIA = (0.4 * MASS * R ** 2,) * 3
LAW = dict(stiffness=1e6, damping=50.0, exponent=1.5, friction=(0.3, 0.3))


def spheres():
    """Four spheres on a floor: s0 resting, s1 on it (0.5 mm into it), s2 and s3 falling apart."""
    m = solver.Model(name="stack", gravity=(0, -9.81, 0))
    start = {"s0": (0.0, R - 1e-4, 0.0), "s1": (0.0, 3 * R - 6e-4, 0.0), "s2": (0.3, 0.1, 0.0), "s3": (-0.3, 0.12, 0.1)}
    for name, position in start.items():
        m.add_body(name, mass=MASS, inertia=INERTIA, position=position, velocity=(0.1, 0.0, -0.05),
                   geometry={"shape": "sphere", "radius": R})
        m.add_contact(f"floor_{name}", "ground", name,
                      geometry_i={"shape": "plane", "point": (0, 0, 0), "normal": (0, 1, 0)}, **LAW)
    m.add_contact_group("balls", list(start), **LAW)
    return m


def test_clusters_follow_what_couples_the_bodies():
    m = spheres()
    m.add_body("a", mass=1.0, inertia=(0.01,) * 3, position=(1.0, 1.0, 0.0))
    m.add_body("b", mass=1.0, inertia=(0.01,) * 3, position=(1.0, 0.5, 0.0))
    m.add_joint("hinge", "revolute", "ground", "a", origin=(1.0, 1.5, 0.0), axis=(0, 0, 1))
    m.add_joint("knee", "revolute", "a", "b", origin=(1.0, 0.75, 0.0), axis=(0, 0, 1))
    m.add_body("c", mass=1.0, inertia=(0.01,) * 3, position=(2.0, 1.0, 0.0))
    m.add_body("d", mass=1.0, inertia=(0.01,) * 3, position=(2.5, 1.0, 0.0))
    m.add_spring_damper("spring", "c", "d", stiffness=100.0, damping=1.0)
    system = solver.compile_model(m).system
    q = np.asarray(system.initial_state()[0])
    col, body, count = clusters(system, build_partition("qr", system, q, 0.0))
    index = {name: body[i] for i, name in enumerate(system.body_names)}
    assert index["a"] == index["b"] and index["c"] == index["d"]
    assert len({index[name] for name in ("s0", "s1", "s2", "s3", "a", "c")}) == 6 == count
    assert len(col) == 2 * (4 * 6 + 2 + 2 * 6) and set(col) == set(range(count))


def _run(monkeypatch, structured):
    if not structured:
        monkeypatch.setattr(segments, "_structure", lambda *args: None)
    seen = []
    advance = compiled_segment.CompiledSegments.advance

    def watched(self):
        status = advance(self)
        seen.append((self.seg.bdf.ncomp, self.seg.bdf.csize, self.seg.bdf.njev))
        return status
    monkeypatch.setattr(compiled_segment.CompiledSegments, "advance", watched)
    res = solver.simulate(spheres(), t_end=0.15, output_step=0.01, integrator="bdf")
    monkeypatch.undo()
    return res, seen


def test_components_move_as_the_dense_jacobian(monkeypatch):
    dense, _ = _run(monkeypatch, False)
    res, seen = _run(monkeypatch, True)
    assert res.status == dense.status == "ok"
    assert seen[0][:2] == (3, 24)                   # s0 + s1 in contact (24 unknowns), s2 and s3 alone
    assert res.meta["rhs_evaluations"] < dense.meta["rhs_evaluations"]
    # the two differ only in J (round-off of the difference quotients; the entries between bodies not in
    # contact, zero in both): the corrector converges to the same tolerance, so the runs agree within the
    # error control's local scale, rtol (1e-6) of the 0.1 m positions (measured: 3.3e-9 m, 6.8e-9 N)
    for name in ("s0", "s1", "s2", "s3"):
        assert np.max(np.abs(res.body_position(name) - dense.body_position(name))) < 1e-6 * 0.1
    assert np.max(np.abs(res.contact_force("balls") - dense.contact_force("balls"))) < 1e-4 * MASS * 9.81
