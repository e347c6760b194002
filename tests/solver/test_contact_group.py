"""Contact groups (solver.ContactGroup, docs/contact.md): every pair of a set of bodies in contact by
one law, no element per pair.

* A group is the contact elements of its pairs: at random states of mixed shapes (spheres, boxes,
  capsules) its wrenches, elastic energy and step cap are those of one element per pair, in Python
  and in C (contact.c: the pairs found in broadphase.c's sweep); ten spheres dropped into a box
  move the same under ``simulate(model)`` with a group as with 45 pair elements, and the group's
  forces in the results (the total on each body, one pair's) are the elements' sums.
* Files: a group survives a save and load; bad bodies are ModelErrors naming ``bodies``, the mbs
  command's exit 2; a hostile list is refused by its length before its items are read.
"""
import json

import numpy as np
import pytest

import solver
from solver import cli
from solver.codegen.contact import CompiledContact, split_interpreted
from solver.forces import BodyFrames, Wrenches
from solver.model.fields import MAX_GROUP_BODIES

LAW = dict(stiffness=1e6, damping=50.0, exponent=1.5, friction=(0.3, 0.3))
SHAPES = ({"shape": "sphere", "radius": 0.05}, {"shape": "box", "size": [0.08, 0.06, 0.1]},
          {"shape": "capsule", "radius": 0.03, "length": 0.06, "axis": "x"})


def scene(shapes, group, positions=None, velocities=None):
    """Bodies of ``shapes`` touching each other by one contact group, or by one element per pair
    (a listed before b: body_i = a), and a floor under each."""
    m = solver.Model(name="group", gravity=(0, -9.81, 0))
    n = len(shapes)
    for k, shape in enumerate(shapes):
        m.add_body(f"b{k}", mass=0.5, inertia=(5e-4,) * 3,
                   position=tuple(positions[k]) if positions is not None else (0.0, 0.2 * k, 0.0),
                   velocity=tuple(velocities[k]) if velocities is not None else (0.0, 0.0, 0.0), geometry=shape)
        m.add_contact(f"floor{k}", "ground", f"b{k}", **LAW,
                      geometry_i={"shape": "plane", "point": (0, 0, 0), "normal": (0, 1, 0)})
    if group:
        m.add_contact_group("all", [f"b{k}" for k in range(n)], **LAW)
    else:
        for a in range(n):
            for b in range(a + 1, n):
                m.add_contact(f"c{a}_{b}", f"b{a}", f"b{b}", **LAW)
    return m


def rotations(rng, n):
    Q = np.array([np.linalg.qr(rng.normal(size=(3, 3)))[0] for _ in range(n)])
    Q[:, :, 0] *= np.sign(np.linalg.det(Q))[:, None]
    return Q


def evaluators(model):
    system = solver.compile_model(model, formulation="cartesian").system
    contact = split_interpreted(system)[0]
    return contact, CompiledContact(system, contact)


def test_a_group_evaluates_as_its_pairs_in_python_and_in_c():
    rng = np.random.default_rng(5)
    n = 12
    for shapes in ([SHAPES[0]] * 9 + [SHAPES[1]] + [SHAPES[0]] * 2, [SHAPES[2]] + [SHAPES[0]] * (n - 1)):
        evaluate_as_pairs(shapes, rng)


def evaluate_as_pairs(kinds, rng):
    """The group of bodies of shapes ``kinds`` against their pair elements at random states."""
    n = len(kinds)
    group, group_c = evaluators(scene(kinds, True))
    pairs, pairs_c = evaluators(scene(kinds, False))
    assert len(group.pairs) == n and len(pairs.pairs) == n + n * (n - 1) // 2
    touching = []
    states = []
    for spread in (0.25, 0.15, 0.1, 0.08):
        frames = BodyFrames(rng.uniform(-spread, spread, (n, 3)) + [0.0, 0.05, 0.0], rotations(rng, n),
                            rng.normal(0.0, 0.5, (n, 3)), rng.normal(0.0, 5.0, (n, 3)))
        states.append(frames)
        out_g, out_p = Wrenches(n), Wrenches(n)
        group.apply(0.0, frames, out_g)
        pairs.apply(0.0, frames, out_p)
        scale = np.max(np.abs(out_p.F))
        touching.append(len(pairs.points(frames).owner))
        assert scale > 0.0            # the same points; the sums in another order: their round-off
        assert np.max(np.abs(out_g.F - out_p.F)) <= 1e-12 * scale and np.max(np.abs(out_g.T - out_p.T)) <= 1e-12 * scale
        assert abs(group.potential(frames) - pairs.potential(frames)) <= 1e-12 * pairs.potential(frames)
        assert group.step_cap(frames) == pytest.approx(pairs.step_cap(frames), rel=1e-12)
        for v, w in ((frames.v, frames.w), (0 * frames.v, 0 * frames.w), (np.eye(n, 3), 0 * frames.w)):
            moving = BodyFrames(frames.r, frames.A, v, w)    # and at rest, and one body moving: no pair bound
            cap = pairs_c.step_cap(moving)                  # the same arithmetic, the group's pairs pruned
            assert group_c.step_cap(moving) == cap and cap == pytest.approx(pairs.step_cap(moving), rel=1e-12)
    assert max(touching) > 2 * n                                   # packed states: many pairs touch
    stacked = BodyFrames(*(np.array([getattr(f, x) for f in states]) for x in ("r", "A", "v", "w")))
    F, T, V = group_c.states(stacked)
    Fp, Tp, Vp = pairs_c.states(stacked)
    scale = np.max(np.abs(Fp))
    assert np.max(np.abs(F - Fp)) <= 1e-12 * scale and np.max(np.abs(T - Tp)) <= 1e-12 * scale
    assert np.max(np.abs(V - Vp)) <= 1e-12 * np.max(Vp)
    for k, frames in enumerate(states):                            # C against Python
        out = Wrenches(n)
        group.apply(0.0, frames, out)
        assert np.max(np.abs(F[k] - out.F)) <= 1e-12 * scale


def spheres(n):
    """n spheres on a grid 0.12 m apart in a 0.38 m box, random velocities (seed 0): they hit each
    other and the walls within 0.3 s."""
    rng = np.random.default_rng(0)
    k = np.arange(n)
    positions = np.column_stack([(k % 4 - 1.5) * 0.12, 0.1 + 0.12 * (k // 16), (k // 4 % 4 - 1.5) * 0.12])
    return positions, rng.normal(0.0, 0.6, (n, 3))


def test_ten_spheres_with_a_group_move_as_with_their_pairs():
    n = 10
    runs = {}
    for group in (True, False):
        m = scene([SHAPES[0]] * n, group, *spheres(n))
        for w, (point, normal) in enumerate((((-0.25, 0, 0), (1, 0, 0)), ((0.25, 0, 0), (-1, 0, 0)),
                                             ((0, 0, -0.25), (0, 0, 1)), ((0, 0, 0.25), (0, 0, -1)))):
            for k in range(n):
                m.add_contact(f"w{w}_{k}", "ground", f"b{k}", **LAW,
                              geometry_i={"shape": "plane", "point": point, "normal": normal})
        m.settings.t_end, m.settings.output_step = 0.3, 2e-3
        runs[group] = solver.simulate(m)
        assert runs[group].status == "ok"
    group, pairs = runs[True], runs[False]
    # the same right-hand sides, the group's forces summed in the sweep's order: round-off apart
    x = np.array([group.body_position(f"b{k}") for k in range(n)])
    assert np.max(np.abs(x - np.array([pairs.body_position(f"b{k}") for k in range(n)]))) <= 1e-9
    total = group.contact_force("all")
    assert total.shape == (len(group.t), n, 3)
    on = np.zeros_like(total)
    hits = 0
    for a in range(n):
        for b in range(a + 1, n):
            F = pairs.contact_force(f"c{a}_{b}")
            hits += np.any(F != 0.0)
            on[:, b] += F
            on[:, a] -= F
    assert hits >= 3                                                 # spheres met spheres
    scale = np.max(np.abs(on))
    assert np.max(np.abs(total - on)) <= 1e-6 * scale
    a, b = next((a, b) for a in range(n) for b in range(a + 1, n) if np.any(pairs.contact_force(f"c{a}_{b}")))
    assert np.max(np.abs(group.contact_force("all", pair=(f"b{a}", f"b{b}")) - pairs.contact_force(f"c{a}_{b}"))) \
        <= 1e-6 * scale
    assert np.allclose(group.contact_point("all", pair=(f"b{a}", f"b{b}")), pairs.contact_point(f"c{a}_{b}"),
                       atol=1e-9, equal_nan=True)
    with pytest.raises(solver.ModelError, match="^pair: "):
        group.contact_point("all")
    with pytest.raises(solver.ModelError, match="^pair: 'b3' must be listed before 'b1'"):
        group.contact_force("all", pair=("b3", "b1"))
    assert "all" in group.contact_group_names and "all" not in group.contact_names


def test_a_group_survives_a_file_and_bad_bodies_name_the_field(tmp_path):
    m = scene([SHAPES[0]] * 3, True)
    m.add_body("bare", mass=1.0, inertia=(1e-3,) * 3)
    path = tmp_path / "g.mbs.json"
    m.save(path)
    again = solver.load_model(path)
    assert again.forces["all"].to_dict() == m.forces["all"].to_dict() and again.forces["all"].bodies == ["b0", "b1", "b2"]
    for bodies, message in ((["b0", "nope"], "[1] no body named 'nope'"), (["b0"], "at least 2 bodies"),
                            (["b0", "b1", "b0"], "[2] 'b0' is listed twice"),
                            (["b0", "bare"], "[1] body 'bare' has no finite geometry"),
                            (["x"] * (MAX_GROUP_BODIES + 1), f"at most {MAX_GROUP_BODIES} bodies")):
        with pytest.raises(solver.ModelError) as exc:
            m.add_contact_group("g", bodies, stiffness=1e6)
        assert exc.value.problems[0].startswith("contact_group 'g'.bodies: ") and message in exc.value.problems[0]
    data = json.loads(path.read_text())
    data["model"]["forces"][-1]["bodies"] = ["b0", "ghost"]
    path.write_text(json.dumps(data))
    assert cli.main(["validate", str(path)]) == 2
    m.add_body("crate1", mass=1.0, inertia=(1e-3,) * 3, geometry=SHAPES[1])
    m.add_body("crate2", mass=1.0, inertia=(1e-3,) * 3, position=(1.0, 0.0, 0.0), geometry=SHAPES[1])
    m.add_contact_group("boxes", ["b0", "crate1", "crate2"], stiffness=1e6)
    with pytest.raises(solver.ModelError, match=r"forces 'boxes'.bodies: 'crate1' \(box\) and 'crate2' \(box\)"):
        solver.compile_model(m)
