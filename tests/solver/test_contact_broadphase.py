"""The compiled contact's broad phase and friction against their references.

* The sort-and-sweep broad phase (solver/codegen/broadphase.c, through contact.c's cc_candidates)
  keeps exactly the elements the n² bounding-volume test of the Python evaluator keeps
  (ContactSet.candidates): random sphere sets, several shapes on one body, planes, ties along the
  sweep axis, states evaluated one after another (the sweep keeps its order between evaluations);
  the wrenches and elastic energy of those states, stacked (cc_states, the recorder's call, with a
  sweep of its own), are the Python evaluator's.
* The compiled contact friction (contact.c cc_point) is the Python law (solver/math/friction.py, the
  Adams stick–slip μ(s)) at slip speeds across stiction, breakaway and sliding, and their bounds.
"""
import numpy as np

import solver
from solver.codegen.contact import CompiledContact, split_interpreted
from solver.forces import BodyFrames, Wrenches
from solver.math.friction import friction_coefficient

PLANE = {"shape": "plane", "point": (0.0, 0.0, 0.0), "normal": (0.0, 1.0, 0.0)}


def compiled_contact(model):
    system = solver.compile_model(model, formulation="cartesian").system
    contact, _, _, _ = split_interpreted(system)
    return CompiledContact(system, contact), contact


def sphere_set(n, rng):
    """n spheres of random radii, all pairs in contact elements, a floor and a wall; every third body
    also meets the next through a capsule of its own (a second bounding sphere on that body)."""
    m = solver.Model(name="set", gravity=(0, -9.81, 0))
    for k in range(n):
        m.add_body(f"s{k}", mass=1.0, inertia=(1e-3,) * 3, position=(0.0, 0.0, 0.0),
                   geometry={"shape": "sphere", "radius": float(rng.uniform(0.02, 0.12))})
        m.add_contact(f"floor{k}", "ground", f"s{k}", geometry_i=PLANE, stiffness=1e5)
        m.add_contact(f"wall{k}", f"s{k}", "ground", geometry_j={"shape": "plane", "point": (0.3, 0.0, 0.0),
                                                                   "normal": (-1.0, 0.0, 0.0)}, stiffness=1e5)
    for a in range(n):
        for b in range(a + 1, n):
            m.add_contact(f"c{a}_{b}", f"s{a}", f"s{b}", stiffness=1e5)
    for a in range(0, n - 1, 3):
        m.add_contact(f"cap{a}", f"s{a}", f"s{a + 1}", stiffness=1e5,
                      geometry_i={"shape": "capsule", "radius": 0.03, "length": 0.2, "axis": "x",
                                  "offset": (0.05, 0.0, 0.0)})
    return m


def rotations(rng, n):
    """n random rotation matrices (orthogonal, determinant +1)."""
    Q = np.array([np.linalg.qr(rng.normal(size=(3, 3)))[0] for _ in range(n)])
    Q[:, :, 0] *= np.sign(np.linalg.det(Q))[:, None]
    return Q


def test_the_sweep_keeps_the_pairs_of_the_n_squared_test():
    rng = np.random.default_rng(3)
    n = 14
    compiled, contact = compiled_contact(sphere_set(n, rng))
    assert compiled.tables.np == n + len(range(0, n - 1, 3)) and compiled.tables.ndirect == 2 * n
    r = rng.uniform(-0.4, 0.4, (n, 3))
    A = rotations(rng, n)
    kept, states = [], []
    for k in range(40):
        if k % 10 == 0:                     # a fresh scatter, at a spread from loose to packed
            r = rng.uniform(-1.0, 1.0, (n, 3)) * [0.5, 0.3, 0.15, 0.05][k // 10]
            A = rotations(rng, n)
        else:                               # small moves: the sweep's order from the last evaluation
            r = r + rng.normal(0.0, 0.02, (n, 3))
        if k == 39:                         # ties along every axis
            r[: n // 2] = r[0]
        frames = BodyFrames(r.copy(), A, rng.normal(0.0, 0.5, (n, 3)), rng.normal(0.0, 5.0, (n, 3)))
        found, reference = compiled.candidates(frames), contact.candidates(frames)
        assert np.array_equal(found, reference)
        kept.append(len(found))
        states.append(frames)
    assert min(kept) < 3 * n < max(kept)     # loose and packed sets were both tested
    stacked = BodyFrames(*(np.array([getattr(f, x) for f in states]) for x in ("r", "A", "v", "w")))
    F, T, V = compiled.states(stacked)
    for k, frames in enumerate(states):
        out = Wrenches(n)
        contact.apply(0.0, frames, out)
        scale = np.max(np.abs(out.F))         # the same sums in the same order, the same arithmetic
        assert scale > 0.0
        assert np.max(np.abs(F[k] - out.F)) <= 1e-12 * scale and np.max(np.abs(T[k] - out.T)) <= 1e-12 * scale
        assert abs(V[k] - contact.potential(frames)) <= 1e-12 * V[k]


def test_compiled_friction_is_the_python_law():
    """A sphere pressed δ into the floor, its contact point slipping at s along x (body velocity and
    spin): the compiled force is (−μ(s) f_n, k δ^e, 0) with μ(s) of solver.math.friction."""
    k, e, R, delta = 1e6, 1.5, 0.05, 1e-4
    mu_s, mu_d, v_s, v_d = 0.5, 0.3, 1e-3, 1e-2
    m = solver.Model(name="slip", gravity=(0, -9.81, 0))
    m.add_body("ball", mass=1.0, inertia=(1e-3,) * 3, position=(0.0, R - delta, 0.0),
               geometry={"shape": "sphere", "radius": R})
    m.add_contact("floor", "ground", "ball", geometry_i=PLANE, stiffness=k, exponent=e, damping=10.0,
                  friction=(mu_s, mu_d), stiction_velocity=v_s, friction_velocity=v_d)
    compiled, _ = compiled_contact(m)
    fn = k * delta ** e
    speeds = np.concatenate([np.linspace(0.0, 2 * v_d, 61), [v_s, v_d, v_s * (1 - 1e-9), v_d * (1 + 1e-9), 1e-9]])
    rho = R - delta / 2                      # centre to contact point
    q = np.array([0.0, R - delta, 0.0, 1.0, 0.0, 0.0, 0.0])
    for s in speeds:
        for spin in (0.0, 0.3):              # part of the slip from rolling the wrong way: ω_z = spin s / ρ
            qd = np.zeros(7)
            qd[0] = (1 - spin) * s           # v_x + ω_z ρ = s at the contact point (below the centre)
            qd[6] = 0.5 * spin * s / rho     # ṗ = ½ G(p)ᵀ ω at p = (1, 0, 0, 0): ṗ_3 = ω_z / 2
            Q = compiled.generalized(q, qd)
            expected = -friction_coefficient(s, mu_s, mu_d, v_s, v_d) * fn
            assert abs(Q[0] - expected) <= 1e-12 * fn
            assert abs(Q[1] - fn) <= 1e-12 * fn and abs(Q[2]) <= 1e-12 * fn
