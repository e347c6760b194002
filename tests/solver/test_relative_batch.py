"""Vectorized post-processing of the relative formulation (RelativeSystem.postprocess_batch):
N stacked output points equal the points one by one (postprocess is the batch of one), on every
test mechanism and both RRC arm samples, both reaction methods; eq. 30 equals Newton–Euler to
round-off; and, independently, the reactions, driver forces, accelerations and energies equal the
Cartesian formulation's at the same physical states (each formulation solving its own
M q̈ + Φ_qᵀλ = Q, Φ_q q̈ = γ there).
"""
import os

import numpy as np
import pytest

import relative_models as rm
import solver
from solver.formulations.cartesian import CartesianSystem
from solver.formulations.relative import RelativeSystem
from solver.math.rotations import G_matrix, quat_from_matrix
from test_codegen import all_features_model

SAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                       "sample_models")
KEYS = ("r", "A", "v", "w", "a", "alpha", "reaction_force", "reaction_torque", "reaction_force_joint",
        "reaction_torque_joint", "driver_force", "energy")


def springs_chain():
    """A 4-link chain with a rotational spring-damper (preloaded), a bushing and an applied torque:
    force elements that run point by point inside the batch."""
    m = rm.chain(4)
    m.add_rotational_spring_damper("RS", "J2", stiffness=30.0, damping=0.5, free_angle=0.2, preload=1.0)
    m.add_bushing("BU", "L1", "L3", origin=(0.8, 0.0, 0.02), stiffness=(900.0, 800.0, 700.0, 9.0, 8.0, 7.0),
                  damping=(3.0, 2.0, 1.0, 0.3, 0.2, 0.1))
    m.add_torque("T", "L4", torque=(0.0, "0.5*sin(3*t)", 0.1))
    return m


def screw_loop():
    """Three balls on ground closed by a screw and a cylindrical cut joint, each driven (rotation of the
    screw, translation of the cylinder): angle-based and translation rows on cut joints."""
    m = solver.Model(name="screw-loop", gravity=(0.0, -9.81, 0.0))
    for name, r in (("a", (0.2, 0.1, 0.0)), ("b", (0.5, 0.0, 0.1)), ("c", (0.1, 0.3, 0.2))):
        m.add_body(name, mass=1.0, inertia=(0.01, 0.02, 0.03), position=r)
    m.add_joint("Ja", "spherical", "ground", "a", origin=(0.0, 0.0, 0.0))
    m.add_joint("Jb", "spherical", "ground", "b", origin=(0.6, 0.0, 0.1))
    m.add_joint("Jc", "spherical", "ground", "c", origin=(0.1, 0.4, 0.2))
    m.add_joint("S", "screw", "a", "b", origin=(0.4, 0.0, 0.0), axis=(1, 0, 0.3), pitch=0.02)
    m.add_joint("C", "cylindrical", "c", "a", origin=(0.1, 0.2, 0.1), axis=(0, 1, 0.5))
    m.add_driver("DS", joint="S", expression="0.5*t")
    m.add_driver("DC", joint="C", coordinate="translation", expression="0.1*t")
    return m


def _sample(name):
    return lambda: solver.load_model(os.path.join(SAMPLES, f"{name}.mbs.json"))


MODELS = {
    "double pendulum 3d": rm.double_pendulum_3d, "spherical pendulum": rm.spherical_pendulum,
    "prismatic-cylindrical chain": rm.prismatic_cylindrical_chain, "free body": rm.free_body,
    "driven pendulum": rm.driven_pendulum, "slider-crank": lambda: rm.slider_crank(False),
    "driven slider-crank": lambda: rm.slider_crank(True), "four-bar": lambda: rm.four_bar(False),
    "redundant four-bar": lambda: rm.four_bar(True), "driven four-bar": lambda: rm.four_bar(False, True),
    "four-bar driven at its cut joint": lambda: rm.four_bar(True, True, "J3"), "chain 7": lambda: rm.chain(7),
    "floating chain": rm.floating_chain, "planar-screw-fixed": lambda: rm.planar_screw_fixed(True),
    "spherical + distance link": rm.spherical_with_distance_link, "springs chain": springs_chain,
    "screw loop": screw_loop,
    "all features": all_features_model, "RRC arm case 1": _sample("rrc_arm_case1"),
    "RRC arm case 2": _sample("rrc_arm_case2"),
}
# non-redundant ones: unique multipliers, so unique reactions to compare with the Cartesian formulation
UNIQUE = ("double pendulum 3d", "spherical pendulum", "prismatic-cylindrical chain", "free body", "driven pendulum",
          "four-bar", "driven four-bar", "chain 7", "floating chain", "planar-screw-fixed",
          "spherical + distance link", "springs chain", "RRC arm case 1")


def _rel(a, b, floor=1e-12):
    """max |a − b| / max |b| (at least ``floor``)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.abs(a - b).max(initial=0.0)) / max(float(np.abs(b).max(initial=0.0)), floor)


def _points(S, n, seed):
    """n random states (t, q, q̇, q̈, λ) stacked, q near the initial one with unit Euler parameters."""
    rng = np.random.default_rng(seed)
    q0, _, _ = S.initial_state()
    q = np.array([S.normalize(q0 + 0.4 * rng.standard_normal(S.nq)) for _ in range(n)])
    return (np.linspace(0.1, 0.9, n), q, rng.standard_normal((n, S.nq)), rng.standard_normal((n, S.nq)),
            rng.standard_normal((n, S.m)))


@pytest.mark.parametrize("how", ["nonrecursive", "newton-euler"])
@pytest.mark.parametrize("name", list(MODELS))
def test_batch_equals_the_points_one_by_one(name, how):
    t, q, qd, qdd, lam = _points(RelativeSystem(MODELS[name](), how), 5, seed=3)
    batch = RelativeSystem(MODELS[name](), how).postprocess_batch(t, q, qd, qdd, lam)
    S = RelativeSystem(MODELS[name](), how)               # fresh: force elements start unwrapping alike
    points = [S.postprocess(*point) for point in zip(q, qd, qdd, lam, t)]
    assert sorted(batch) == sorted(KEYS)
    for key in KEYS:
        ref = np.array([p[key] for p in points])
        assert batch[key].shape == ref.shape, key
        assert _rel(batch[key], ref) <= 1e-12, key


@pytest.mark.parametrize("name", list(MODELS))
def test_nonrecursive_equals_newton_euler(name):
    """Eq. (30) and the Newton–Euler sweep (eq. 28) from the same stacked states, cut-joint loads included."""
    A = RelativeSystem(MODELS[name](), "nonrecursive")
    B = RelativeSystem(MODELS[name](), "newton-euler")
    points = _points(A, 4, seed=5)
    a, b = A.postprocess_batch(*points), B.postprocess_batch(*points)
    for key in ("reaction_force", "reaction_torque", "reaction_force_joint", "reaction_torque_joint",
                "driver_force"):
        assert _rel(a[key], b[key]) < 1e-11, key
    assert max(np.abs(a["reaction_force"]).max(initial=0.0), np.abs(a["driver_force"]).max(initial=0.0)) > 0.1 \
        or name == "free body"


@pytest.mark.parametrize("name", ["screw loop", "all features", "four-bar driven at its cut joint",
                                  "spherical + distance link", "slider-crank"])
def test_cut_joint_wrenches_are_rows_of_the_constraint_jacobian(name):
    """The stacked cut-joint wrenches of a unit multiplier, −Σ_b W_bᵀ J_b (J_b the body Jacobian),
    equal that row of Φ_q from constraints() (per-joint Cartesian evaluator + chain rule)."""
    S = RelativeSystem(MODELS[name]())
    rows = [r for _, cut_rows in S.cut for r in cut_rows] + [d.row for d in S.drivers if d.column is None]
    for q in _points(S, 3, seed=9)[1]:
        jac = S.constraints(q, 0.3).jac[rows]
        wrenches = S._cut_wrenches(S._recursion(np.repeat(q[None], len(rows), axis=0), None), np.eye(S.m)[rows])
        rebuilt = np.zeros_like(jac)
        for k, sides in wrenches.items():
            for b, W in zip(S.joint_ends[k], sides):
                if b >= 0:
                    rebuilt -= W @ S.body_jacobian(S.kinematics(q), b)
        assert _rel(rebuilt, jac) < 1e-12


def test_chunks_bounded_by_post_entries(monkeypatch):
    """More points than one chunk holds: the same result in pieces."""
    S = RelativeSystem(rm.four_bar(False, True))
    points = _points(S, 7, seed=2)
    whole = S.postprocess_batch(*points)
    monkeypatch.setattr("solver.formulations.relative.POST_ENTRIES", 1)      # one point per chunk
    pieces = S.postprocess_batch(*points)
    for key in KEYS:
        assert np.array_equal(whole[key], pieces[key]), key


def _solve(M, Q, ev):
    """q̈, λ of M q̈ + Φ_qᵀλ = Q, Φ_q q̈ = γ."""
    n, m = M.shape[0], len(ev.gamma)
    kkt = np.block([[M, ev.jac.T], [ev.jac, np.zeros((m, m))]])
    x = np.linalg.solve(kkt, np.concatenate([Q, ev.gamma]))
    return x[:n], x[n:]


def _cartesian_state(S, q, qd):
    """Cartesian coordinates [r, p] and rates [ṙ, ṗ = ½ G(p)ᵀ ω] of the relative state's bodies."""
    fr = S.frames(q, qd)
    p = [quat_from_matrix(A) for A in fr.A]
    return (np.concatenate([np.concatenate([r, pk]) for r, pk in zip(fr.r, p)]),
            np.concatenate([np.concatenate([v, 0.5 * G_matrix(pk).T @ w]) for v, w, pk in zip(fr.v, fr.w, p)]))


@pytest.mark.parametrize("name", UNIQUE)
def test_batch_equals_the_cartesian_formulation(name):
    """At 3 states of a short relative run (consistent positions and velocities) both formulations
    solve their own equations of motion; the relative batch then equals the Cartesian outputs (relative
    to their peak, or to 1 in SI units where that is smaller: exact zeros come out as round-off)."""
    model = MODELS[name]()
    res = solver.simulate(model, t_end=0.1, output_step=0.05, formulation="relative", rtol=1e-9, atol=1e-11)
    S, C = RelativeSystem(model), CartesianSystem(model)
    rel, cart = [], []
    for q, qd, t in zip(res.coordinates, res.velocities, res.t):
        qdd, lam = _solve(S.mass(q), S.forces(q, qd, t), S.constraints(q, t, qd, level=2))
        rel.append((t, q, qd, qdd, lam))
        qc, qdc = _cartesian_state(S, q, qd)
        qddc, lamc = _solve(C.mass(qc), C.forces(qc, qdc, t), C.constraints(qc, t, qdc, level=2))
        cart.append(C.postprocess(qc, qdc, qddc, lamc, t))
    batch = S.postprocess_batch(*(np.array(x) for x in zip(*rel)))
    for key in KEYS:
        ref = np.array([c[key] for c in cart])
        assert _rel(batch[key], ref, floor=1.0) < 1e-9, key
    assert np.abs(batch["reaction_force"]).max(initial=0.0) > 0.1 or name == "free body"
