"""The compiled contact forces, joint stops and rotational spring-dampers (solver/codegen/contact.c)
against the Python evaluators (solver/contact/element.py, solver/joint_forces.py JointStop,
solver/forces.py RotationalSpringDamperForce), the reference: the generalized forces of every
closed-form shape pair, both orders, of stops past either limit and of the springs, at
random poses and velocities with the bodies overlapping, for each way contact.c reads the body
frames (Cartesian coordinates, a relative tree map with Euler-parameter rows, an open tree's
articulated map) agree to round-off; a contact model steps in the compiled loop and gives the
Python loop's motion."""
import numpy as np
import pytest

import solver
from solver.codegen.contact import CARTESIAN, RELATIVE, TREE, CompiledContact, contact_mode, split_interpreted

PLANE = {"shape": "plane", "point": (0.0, 0.0, 0.0), "normal": (0.0, 1.0, 0.0)}
SHAPES = [{"shape": "sphere", "radius": 0.05}, {"shape": "box", "size": (0.1, 0.08, 0.06)},
          {"shape": "capsule", "radius": 0.03, "length": 0.1, "axis": "x"},
          {"shape": "cylinder", "radius": 0.04, "length": 0.1, "axis": "z"}, {"shape": "mesh", "file": "cube.stl"},
          {"shape": "sphere", "radius": 0.04}]
LAW = dict(stiffness=1e6, damping=100.0, friction=(0.5, 0.4))


def unit(rng, n):
    x = rng.normal(0.0, 1.0, n)
    return tuple(x / np.linalg.norm(x))


def free_bodies(tmp_path, formulation, driven=True):
    """Free bodies of every shape low over a floor and overlapping each other; contacts of every
    pair kind, in both orders (the swapped pairs), one Hunt–Crossley.  ``driven``: with a driven
    crank (a driver row: the relative formulation's tree map, not the articulated one)."""
    import trimesh
    trimesh.creation.box(extents=(0.07, 0.07, 0.07)).export(tmp_path / "cube.stl")
    m = solver.Model(name="pairs", gravity=(0, -9.81, 0))
    m.base_dir = tmp_path
    rng = np.random.default_rng(1)
    for k, g in enumerate(SHAPES):
        m.add_body(f"b{k}", mass=1.0, inertia=(1e-3,) * 3, position=(0.03 * k, 0.02, 0.01 * k),
                   velocity=tuple(rng.normal(0, 1, 3)), angular_velocity=tuple(rng.normal(0, 3, 3)),
                   orientation=unit(rng, 4), geometry=g)
        m.add_contact(f"floor{k}", "ground", f"b{k}", geometry_i=PLANE, **LAW)
    m.add_contact("sphere_sphere", "b0", "b5", damping_law="hunt_crossley", **{**LAW, "damping": 10.0})
    m.add_contact("box_sphere", "b1", "b0", **LAW)
    m.add_contact("sphere_box", "b0", "b1", **LAW)
    m.add_contact("capsule_sphere", "b2", "b5", **LAW)
    m.add_contact("sphere_capsule", "b5", "b2", **LAW)
    m.add_contact("mesh_plane", "b4", "ground", geometry_j={**PLANE, "point": (0.0, 0.01, 0.0)}, **LAW)
    m.add_body("arm", mass=1.0, inertia=(1e-3,) * 3, position=(0.5, 0.5, 0.0), angular_velocity=(0, 0, 1.0))
    m.add_joint("pivot", "revolute", "ground", "arm", origin=(0.4, 0.5, 0.0), axis=(0, 0, 1), lower_limit=-1e-3,
                upper_limit=1e-3, stop_damping=30.0)       # a stop: compiled in the relative formulation
    m.add_rotational_spring_damper("pivot_spring", "pivot", stiffness=40.0, damping=0.3, free_angle=0.2, preload=0.1)
    if driven:
        m.add_body("crank", mass=1.0, inertia=(1e-3,) * 3, position=(-0.5, 0.5, 0.0))
        m.add_joint("crank_pin", "revolute", "ground", "crank", origin=(-0.4, 0.5, 0.0), axis=(0, 0, 1))
        m.add_driver("turn", "crank_pin", "t")
    m.settings.set("formulation", formulation)
    return m


def arm_and_slider(formulation):
    """An open tree (an arm on a revolute joint, a slider on a prismatic one): the articulated map."""
    m = solver.Model(name="tree", gravity=(0, -9.81, 0))
    m.add_body("arm", mass=1.0, inertia=(1e-3, 1e-3, 2e-3), position=(0.1, 0.02, 0.0), angular_velocity=(0, 0, 2.0),
               geometry={"shape": "box", "size": (0.2, 0.05, 0.05)})
    m.add_body("slider", mass=1.0, inertia=(1e-3,) * 3, position=(0.22, 0.03, 0.0), velocity=(-0.5, 0, 0),
               geometry={"shape": "sphere", "radius": 0.04})
    m.add_joint("pivot", "revolute", "ground", "arm", origin=(0.0, 0.02, 0.0), axis=(0, 0, 1), upper_limit=1e-3,
                stop_exponent=1.5, stop_damping=30.0)
    m.add_joint("rail", "prismatic", "ground", "slider", origin=(0.22, 0.03, 0.0), axis=(1, 0, 0), lower_limit=-1e-3,
                upper_limit=1e-3, stop_push_only=True, stop_stiffness=1e3)    # pulls, clipped, in some states
    m.add_rotational_spring_damper("pivot_spring", "pivot", stiffness=40.0, damping=0.3, free_angle=-0.2)
    m.add_contact("floor_arm", "ground", "arm", geometry_i={**PLANE, "point": (0.0, 0.01, 0.0)}, **LAW)
    m.add_contact("hit", "arm", "slider", **LAW)
    m.settings.set("formulation", formulation)
    return m


def assert_same_forces(compiled, mode, states, stops, springs):
    system = compiled.system
    assert contact_mode(system) == mode
    n_springs = springs
    contact, compiled_stops, springs, rest = split_interpreted(system)
    assert contact is not None and len(compiled_stops) == stops and len(springs) == n_springs
    # Cartesian stops and springs: Python
    assert sorted(f.name for f in rest) == (["pivot", "pivot_spring"] if mode == CARTESIAN else [])
    c = CompiledContact(system, contact, compiled_stops, springs)
    q0, qd0, _ = system.initial_state()
    rng = np.random.default_rng(2)
    for k in range(states):
        q, qd = (q0, qd0) if k == 0 else (q0 + rng.normal(0, 2e-3, q0.size), qd0 + rng.normal(0, 0.5, q0.size))
        reference = system.interpreted_forces(q, qd, 0.0, [contact, *(f for f, _ in compiled_stops + springs)])
        assert c.struct.points == 0 or k > 0
        Q = c.generalized(q, qd)
        assert c.struct.points > 0
        # the same sums in another order: round-off of the largest term
        assert np.max(np.abs(Q - reference)) <= 1e-12 * np.max(np.abs(reference))


@pytest.mark.parametrize("formulation, mode, driven", [("cartesian", CARTESIAN, True), ("relative", RELATIVE, True),
                                                       ("relative", TREE, False)])
def test_every_pair_as_the_python_evaluator(tmp_path, formulation, mode, driven):
    """Without the driven crank the free bodies are an open tree with Euler-parameter rows only:
    the articulated map."""
    pytest.importorskip("trimesh")
    assert_same_forces(solver.compile_model(free_bodies(tmp_path, formulation, driven)), mode, states=5,
                       stops=int(mode != CARTESIAN), springs=int(mode != CARTESIAN))


def test_an_open_tree_as_the_python_evaluator():
    assert_same_forces(solver.compile_model(arm_and_slider("relative")), TREE, states=5, stops=2, springs=1)


def test_a_contact_model_steps_in_the_compiled_loop_as_in_python(monkeypatch):
    """The arm strikes the slider: the compiled loop (DOP853 in C, contact.c) and the Python loop
    (LSODA, the Python evaluator; "adams" kept in the Python loop as interactive runs keep it:
    Run.python_loop) give the same motion within their tolerances."""
    from solver.analysis.dynamics import Run
    monkeypatch.setattr(Run, "python_loop", ("adams",))
    compiled = solver.compile_model(arm_and_slider("relative"))
    options = dict(t_end=0.05, output_step=0.005, rtol=1e-8, atol=1e-10)
    res = solver.simulate(compiled, **options)
    assert any("step loop in C" in e.get("message", "") for e in res.meta["events"])
    python = solver.simulate(compiled, integrator="adams", **options)     # (the Python loop: 3500 evaluations)
    assert not any("step loop in C" in e.get("message", "") for e in python.meta["events"])
    assert np.max(np.abs(res.contact_force("hit"))) > 1e3            # they strike (2.9 kN)
    x, y = res.body_position("slider")[:, 0], python.body_position("slider")[:, 0]
    assert np.max(np.abs(x - y)) < 1e-6                                # the two integrators at rtol 1e-8: 2e-8 m
