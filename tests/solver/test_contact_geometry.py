"""Contact points of the closed-form shape pairs (solver/contact/geometry.py) against hand-worked
cases, the broad phase against every pair queried exactly, and an elastic contact's energy."""
import numpy as np
import pytest

import solver
from solver.contact.element import ContactPair, ContactSet
from solver.contact.geometry import Shape, pair_function
from solver.forces import BodyFrames, Wrenches

I3 = np.eye(3)


def placed(geometry, r=(0.0, 0.0, 0.0), A=I3):
    return Shape.of(geometry).placed(np.asarray(r, dtype=float), A)


def points(gi, gj, ri=(0, 0, 0), rj=(0, 0, 0), Ai=I3, Aj=I3):
    f, swapped = pair_function(gi["shape"], gj["shape"], "forces 'c'")
    a, b = placed(gi, ri, Ai), placed(gj, rj, Aj)
    return [(P, -n, d) for P, n, d in f(b, a)] if swapped else f(a, b)


PLANE = {"shape": "plane", "point": (0, 0, 0), "normal": (0, 0, 1)}


def rot_x(angle):
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


def test_sphere_pairs():
    assert points({"shape": "sphere", "radius": 0.3}, {"shape": "sphere", "radius": 0.2 - 1e-9}, rj=(0.4, 0.0, 0.3)) == []
    [(P, n, d)] = points({"shape": "sphere", "radius": 0.3}, {"shape": "sphere", "radius": 0.25}, rj=(0.4, 0.0, 0.3))
    assert np.allclose(n, (0.8, 0.0, 0.6)) and d == pytest.approx(0.05)
    assert np.allclose(P, (0.3 - 0.025) * n)                                   # midway through the overlap
    [(P, n, d)] = points({"shape": "sphere", "radius": 0.1}, PLANE, ri=(1.0, 2.0, 0.07))   # swapped pair
    assert np.allclose(n, (0, 0, -1)) and d == pytest.approx(0.03) and np.allclose(P, (1.0, 2.0, -0.015))
    assert points(PLANE, {"shape": "sphere", "radius": 0.1}, rj=(0, 0, 0.1 + 1e-9)) == []


@pytest.mark.parametrize("centre, normal, depth", [
    ((0.0, 0.0, 0.28), (0, 0, 1), 0.02),                                     # over a face
    ((0.2 + 0.06, 0.0, 0.2 + 0.08), None, 0.0),                               # off an edge by 0.1: apart
    ((0.26, 0.0, 0.2 + 0.07), np.array((0.6, 0, 0.7)) / np.hypot(0.6, 0.7), 0.1 - 0.01 * np.hypot(6, 7)),
    ((0.0, 0.0, 0.15), (0, 0, 1), 0.15),                                      # centre inside: nearest face
])
def test_box_sphere(centre, normal, depth):
    box = {"shape": "box", "size": (0.4, 0.4, 0.4)}
    found = points(box, {"shape": "sphere", "radius": 0.1}, rj=centre)
    if normal is None:
        assert found == []
        return
    [(P, n, d)] = found
    assert np.allclose(n, normal, atol=1e-5) and d == pytest.approx(depth, abs=1e-6)


def test_box_on_a_plane_touches_at_its_low_corners():
    A = rot_x(np.radians(10))
    found = points(PLANE, {"shape": "box", "size": (0.2, 0.2, 0.2)}, rj=(0, 0, 0.1), Aj=A)
    corners = (np.array([(x, y, z) for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]) * 0.1) @ A.T + (0, 0, 0.1)
    low = corners[corners[:, 2] < 0]
    assert len(found) == len(low) == 2
    assert sorted(d for _, _, d in found) == pytest.approx(sorted(-low[:, 2]))


def test_capsule_pairs():
    capsule = {"shape": "capsule", "radius": 0.05, "length": 0.4, "axis": "x"}
    found = points(PLANE, capsule, rj=(0, 0, 0.04))                      # lying: both end spheres
    assert [d for _, _, d in found] == pytest.approx([0.01, 0.01])
    assert sorted(P[0] for P, _, _ in found) == pytest.approx([-0.2, 0.2])
    [(P, n, d)] = points(capsule, {"shape": "sphere", "radius": 0.1}, rj=(0.1, 0.0, 0.14))
    assert np.allclose(n, (0, 0, 1)) and d == pytest.approx(0.01)
    [(P, n, d)] = points(capsule, {"shape": "sphere", "radius": 0.1}, rj=(0.2 + 0.06, 0.0, 0.08))   # beyond the end
    assert np.allclose(n, (0.6, 0, 0.8)) and d == pytest.approx(0.05)


def test_cylinder_on_a_plane():
    cylinder = {"shape": "cylinder", "radius": 0.1, "length": 0.2, "axis": "y"}
    lying = points(PLANE, cylinder, rj=(0, 0, 0.099))                   # on its side: one rim point per end
    assert len(lying) == 2 and [d for _, _, d in lying] == pytest.approx([0.001, 0.001])
    standing = points(PLANE, cylinder, rj=(0, 0, 0.099), Aj=rot_x(np.pi / 2))   # on an end face: 4 points
    assert len(standing) == 4 and all(d == pytest.approx(0.001) for _, _, d in standing)
    assert np.allclose(np.mean([P for P, _, _ in standing], axis=0), (0, 0, -0.0005))


def test_a_pair_without_a_closed_form_names_the_field():
    with pytest.raises(solver.ModelError, match=r"forces 'c'.geometry_j: no contact between a cylinder and a box"):
        pair_function("cylinder", "box", "forces 'c'")


def spheres_in_a_row(n):
    """n spheres of radius 0.1 in a row 0.19 apart, every other one on the floor plane; a contact
    element for every sphere pair and every sphere–floor."""
    m = solver.Model(gravity=(0, 0, -9.81))
    plane = {"shape": "plane", "point": (0, 0, 0), "normal": (0, 0, 1)}
    for k in range(n):
        m.add_body(f"s{k}", mass=1.0, inertia=(0.004,) * 3, position=(0.19 * k, 0.0, 0.099 if k % 2 else 0.2),
                   velocity=(0.1 * k, 0.0, -0.2), geometry={"shape": "sphere", "radius": 0.1})
        m.add_contact(f"floor{k}", "ground", f"s{k}", stiffness=1e6, damping=10.0, friction=(0.5, 0.4),
                      geometry_i=plane)
    for a in range(n):
        for b in range(a + 1, n):
            m.add_contact(f"c{a}_{b}", f"s{a}", f"s{b}", stiffness=1e6)
    return m


def test_the_broad_phase_keeps_every_touching_pair_and_only_few_others():
    n = 12
    m = spheres_in_a_row(n)
    index = {f"s{k}": k for k in range(n)}
    from solver.contact.element import contact_spec
    pairs = [ContactPair(contact_spec(e, m), index) for e in m.forces.values()]
    group = ContactSet(pairs)
    rng = np.random.default_rng(1)
    r = np.array([m.bodies[f"s{k}"].position for k in range(n)]) + rng.normal(0, 0.05, (n, 3))
    A = np.stack([rot_x(a) for a in rng.uniform(0, 1, n)])
    frames = BodyFrames(r, A, rng.normal(0, 1, (n, 3)), rng.normal(0, 1, (n, 3)))
    kept = group.candidates(frames)
    assert len(kept) < len(pairs) / 3                       # 78 sphere pairs and 12 floors: a few kept
    fast, exact = Wrenches(n), Wrenches(n)
    group.apply(0.0, frames, fast)
    points = group.points(frames, pairs=range(len(pairs)))     # every pair queried exactly
    for k, point, force in zip(points.owner, points.P, group.forces(frames, points)[0]):
        exact.at_point(pairs[k].bj, force, point, frames)
        exact.at_point(pairs[k].bi, -force, point, frames)
    assert np.any(exact.F) and len(set(points.owner)) > 3
    assert np.allclose(fast.F, exact.F, rtol=0, atol=1e-12 * np.max(np.abs(exact.F)))
    assert np.allclose(fast.T, exact.T, rtol=0, atol=1e-12 * np.max(np.abs(exact.T)))


def test_an_elastic_contact_keeps_the_energy():
    """Damping and friction 0: the contact is conservative, its potential k δ^(e+1)/(e+1) closes the
    energy balance of a ball bouncing on a plane (to the integrator's tolerance)."""
    m = solver.Model(gravity=(0, -9.81, 0))
    m.add_body("ball", mass=0.5, inertia=(5e-4,) * 3, position=(0, 0.15, 0), geometry={"shape": "sphere", "radius": 0.05})
    m.add_contact("c", "ground", "ball", stiffness=1e6, geometry_i={"shape": "plane", "normal": (0, 1, 0)})
    res = solver.simulate(m, t_end=0.5, output_step=1e-3)
    e = res.energy["total"]
    assert np.min(res.body_position("ball")[:, 1]) < 0.05               # it bounced
    assert np.max(np.abs(e - e[0])) < 1e-5 * 0.5 * 9.81 * 0.1


def test_the_laws_pieces():
    """IMPACT damping ramp c_max STEP(δ; 0, 0, d_max, 1): 0 at touch, c_max/2 at d_max/2, c_max from
    d_max on; Hunt–Crossley λ δ^e; the clip at 0; Adams friction μ(0) = 0, μ(v_s) = μ_s, μ_d from v_d,
    STEP's midpoint value between v_s and v_d, slope 1.5 μ_s/v_s at rest."""
    from solver.contact.laws import ContactLaw
    law = ContactLaw(1e6, 1.5, 100.0, "impact", 1e-4, 0.5, 0.3, 1e-3, 1e-2)
    assert [float(law.damping_at(d)) for d in (0.0, 5e-5, 1e-4, 1e-3)] == pytest.approx([0.0, 50.0, 100.0, 100.0])
    assert float(law.normal_force(1e-4, 0.3)) == pytest.approx(1e6 * 1e-6 + 100.0 * 0.3)
    assert float(law.normal_force(1e-4, -100.0)) == 0.0                                  # never pulls
    hc = ContactLaw(1e6, 1.5, 1e5, "hunt_crossley", 1e-4, 0.5, 0.3, 1e-3, 1e-2)
    assert float(hc.normal_force(4e-4, 2.0)) == pytest.approx(8e-6 * (1e6 + 2e5))
    mu = [float(law.friction_coefficient(s)) for s in (0.0, 1e-3, 5.5e-3, 1e-2, 1.0)]
    assert mu == pytest.approx([0.0, 0.5, 0.4, 0.3, 0.3])
    assert float(law.friction_coefficient(1e-9)) / 1e-9 == pytest.approx(1.5 * 0.5 / 1e-3, rel=1e-5)
    assert float(law.friction_coefficient(law.creep_speed(0.2))) == pytest.approx(0.2, rel=1e-12)
