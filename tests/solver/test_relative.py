"""Relative (recursive, joint-coordinate) formulation — Kim & You (1997) — checked against the
Cartesian formulation, finite differences, the recursive Newton–Euler sweep and conservation laws.
"""
import os
import sys

import numpy as np
import pytest

import solver
from solver.formulations.cartesian import CartesianSystem
from solver.formulations.relative import RelativeSystem

sys.path.insert(0, os.path.dirname(__file__))
import relative_models as rm  # noqa: E402

TIGHT = dict(rtol=1e-9, atol=1e-11)


def _rel(a, b, scale=None):
    a, b = np.asarray(a), np.asarray(b)
    s = scale if scale is not None else max(float(np.abs(b).max(initial=0.0)), 1e-12)
    return float(np.abs(a - b).max(initial=0.0)) / s


def _both(model, t_end, **kw):
    args = dict(t_end=t_end, output_step=0.01, **TIGHT)
    args.update(kw)
    return (solver.simulate(model, formulation="cartesian", **args),
            solver.simulate(model, formulation="relative", **args))


def _random_state(S, rng, spread=0.4):
    q0, _, _ = S.initial_state()
    return S.normalize(q0 + spread * rng.standard_normal(S.nq)), rng.standard_normal(S.nq)


# ---- topology -----------------------------------------------------------------------------------
def test_topology_tree_cut_and_inversion():
    S = RelativeSystem(rm.four_bar(redundant=False))
    names = S.joint_names
    assert [names[k] for k in S.topology.cut] == ["J3"]                  # the spherical closes the loop
    inverted = {names[e.joint]: e.inverted for e in S.topology.edges}
    assert inverted == {"J1": False, "J2": False, "J4": True}            # J4's body_i is the rocker
    assert S.nq == 1 + 1 + 2 and S.m == 3

    m = rm.floating_chain(3)
    m.add_body("link", mass=0.1, inertia=(1e-4, 1e-4, 1e-4), position=(0.0, 0.5, 0.0))
    m.add_joint("rod", "distance", "ground", "link", origin=(0, 1, 0), origin2=(0, 0.5, 0))
    S = RelativeSystem(m)
    kinds = [S.mobs[e].kind for e in range(len(S.topology.edges))]
    assert kinds.count("free") == 2                                      # links are never tree joints
    assert [S.joint_names[k] for k in S.topology.cut] == ["rod"]


# ---- mass matrix, Jacobians, γ ------------------------------------------------------------------
def _body_jacobian_fd(S, q, h=1e-6):
    """[v_b; ω_b] per unit q̇_k by central differences of CM positions and rotations."""
    cols = []
    for k in range(S.nq):
        e = np.zeros(S.nq)
        e[k] = h
        kp, km = S.kinematics(q + e), S.kinematics(q - e)
        col = []
        for b in range(S.nb):
            v = (kp.r[b] - km.r[b]) / (2 * h)
            W = (kp.A[b] - km.A[b]) / (2 * h) @ S.kinematics(q).A[b].T
            col += [v, 0.5 * np.array([W[2, 1] - W[1, 2], W[0, 2] - W[2, 0], W[1, 0] - W[0, 1]])]
        cols.append(np.concatenate(col))
    return np.column_stack(cols)


@pytest.mark.parametrize("make", [lambda: rm.chain(7), rm.prismatic_cylindrical_chain, rm.double_pendulum_3d,
                                  lambda: rm.four_bar(False)])
def test_mass_matrix_is_JT_Mbody_J_and_spd(make):
    S = RelativeSystem(make())
    rng = np.random.default_rng(3)
    q, qd = _random_state(S, rng)
    M = S.mass(q)
    assert np.abs(M - M.T).max() <= 1e-14 * np.abs(M).max()
    assert np.linalg.eigvalsh(M).min() > 0.0
    J = _body_jacobian_fd(S, q)
    kin = S.kinematics(q)
    Mb = np.zeros((6 * S.nb, 6 * S.nb))
    for b in range(S.nb):
        Mb[6 * b:6 * b + 3, 6 * b:6 * b + 3] = S.mass_values[b] * np.eye(3)
        Mb[6 * b + 3:6 * b + 6, 6 * b + 3:6 * b + 6] = kin.A[b] @ S.inertia[b] @ kin.A[b].T
    assert _rel(M, J.T @ Mb @ J) < 1e-8
    post = S.postprocess(q, qd, np.zeros(S.nq), np.zeros(S.m), 0.0)
    assert 0.5 * qd @ M @ qd == pytest.approx(post["energy"][0], rel=1e-12)


@pytest.mark.parametrize("make", [rm.spherical_pendulum, rm.free_body, rm.double_pendulum_3d])
def test_kinetic_energy_equals_cartesian(make):
    """½ q̇ᵀ M q̇ at the initial state equals the Cartesian kinetic energy of the same motion."""
    m = make()
    S, C = RelativeSystem(m), CartesianSystem(m)
    q, qd, _ = S.initial_state()
    qc, qdc, _ = C.initial_state()
    kin_c = 0.5 * qdc @ C.mass(qc) @ qdc
    assert 0.5 * qd @ S.mass(q) @ qd == pytest.approx(kin_c, rel=1e-12)
    assert kin_c > 0.1
    # M is singular only along the Euler parameters; on the tangent space it is definite
    ev = S.constraints(q, 0.0)
    N = np.linalg.svd(ev.jac)[2][ev.jac.shape[0]:].T if ev.jac.shape[0] else np.eye(S.nq)
    assert np.linalg.eigvalsh(N.T @ S.mass(q) @ N).min() > 0.0


@pytest.mark.parametrize("make", [lambda: rm.slider_crank(True), lambda: rm.four_bar(False),
                                  lambda: rm.four_bar(True, True, "J3"), rm.spherical_pendulum, rm.free_body])
def test_constraint_jacobian_and_gamma_by_finite_differences(make):
    S = RelativeSystem(make())
    rng = np.random.default_rng(5)
    q, qd = _random_state(S, rng, 0.3)
    t, h = 0.37, 1e-6
    ev = S.constraints(q, t, qd, level=2)
    Jfd = np.column_stack([(S.constraints(q + h * e, t).phi - S.constraints(q - h * e, t).phi) / (2 * h)
                           for e in np.eye(S.nq)])
    assert _rel(ev.jac, Jfd, max(1.0, np.abs(Jfd).max())) < 1e-8
    # along q(s) = q + s q̇, t + s:  dΦ/ds = Φ_q q̇ − ν and d²Φ/ds² = −γ (q̈ = 0)
    hh = 1e-4
    phi = [S.constraints(q + s * qd, t + s).phi for s in (-hh, 0.0, hh)]
    assert _rel((phi[2] - phi[0]) / (2 * hh), ev.jac @ qd - ev.nu, max(1.0, np.abs(ev.nu).max())) < 1e-6
    d2 = (phi[2] - 2 * phi[1] + phi[0]) / hh**2
    assert _rel(d2, -ev.gamma, max(1.0, np.abs(ev.gamma).max())) < 1e-5


# ---- relative vs Cartesian ----------------------------------------------------------------------
CASES = {
    "double pendulum 3D": (rm.double_pendulum_3d, 0.4, False),
    "spherical pendulum": (rm.spherical_pendulum, 0.4, False),
    "revolute-prismatic-cylindrical chain": (rm.prismatic_cylindrical_chain, 0.3, False),
    "free body with loads": (rm.free_body, 0.4, False),
    "planar (inverted), screw, fixed": (rm.planar_screw_fixed, 0.3, False),
    "planar x and screw driven": (lambda: rm.planar_screw_fixed(True), 0.3, False),
    "ball joint with distance and revolute-spherical links": (rm.spherical_with_distance_link, 0.3, False),
    "driven pendulum": (rm.driven_pendulum, 0.4, False),
    "slider-crank driven": (lambda: rm.slider_crank(True), 0.4, True),
    "slider-crank free": (lambda: rm.slider_crank(False), 0.12, True),
    "four-bar RRSU": (lambda: rm.four_bar(False), 0.25, False),
    "four-bar RRSU driven": (lambda: rm.four_bar(False, True), 0.3, False),
    "four-bar 4R free": (lambda: rm.four_bar(True), 0.25, True),
    "four-bar 4R driven": (lambda: rm.four_bar(True, True), 0.3, True),
    "four-bar 4R driven at the cut joint": (lambda: rm.four_bar(True, True, "J3"), 0.3, True),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", list(CASES))
def test_relative_agrees_with_cartesian(case):
    """Positions ≤1e-6 relative; reactions and driver forces ≤1e-5 relative to the largest reaction
    of the model (for redundant planar models only the determinate in-plane components)."""
    make, t_end, planar = CASES[case]
    m = make()
    c, r = _both(m, t_end)
    assert r.status == "ok" and len(r.t) == len(c.t)
    for b in m.bodies:
        assert _rel(r.body_position(b), c.body_position(b), max(1.0, np.abs(c.body_position(b)).max())) < 1e-6
        assert _rel(r.body_rotation(b), c.body_rotation(b), 1.0) < 1e-6
        assert _rel(r.body_angular_velocity(b), c.body_angular_velocity(b),
                    max(1.0, np.abs(c.body_angular_velocity(b)).max())) < 1e-5
    if m.joints:
        sF = max(np.abs(c.joint_reaction(j)[0]).max() for j in m.joints)
        sT = max([0.1 * sF] + [np.abs(c.joint_reaction(j)[1]).max() for j in m.joints])
        for j in m.joints:
            (Fc, Tc), (Fr, Tr) = c.joint_reaction(j), r.joint_reaction(j)
            if planar:
                Fc, Fr, Tc, Tr = Fc[:, :2], Fr[:, :2], Tc[:, 2], Tr[:, 2]
            assert _rel(Fr, Fc, sF) < 1e-5, j
            assert _rel(Tr, Tc, sT) < 1e-5, j
            if not planar:
                (Fc, Tc), (Fr, Tr) = c.joint_reaction(j, "joint"), r.joint_reaction(j, "joint")
                assert _rel(Fr, Fc, sF) < 1e-5 and _rel(Tr, Tc, sT) < 1e-5, j
    for d in m.drivers:
        assert _rel(r.driver_force(d), c.driver_force(d)) < 1e-5
    ec, er = c.energy, r.energy
    assert _rel(er["total"], ec["total"], max(1.0, np.abs(ec["total"]).max())) < 1e-6


# ---- non-recursive (eq. 30) vs recursive Newton–Euler ---------------------------------------------
def test_nonrecursive_reactions_equal_newton_euler_in_a_7_link_chain():
    m = rm.chain(7)
    runs = [solver.simulate(m, t_end=0.3, output_step=0.05, formulation="relative", reactions=how)
            for how in ("nonrecursive", "newton-euler")]
    for j in m.joints:
        for k in (0, 1):
            a, b = runs[0].joint_reaction(j)[k], runs[1].joint_reaction(j)[k]
            assert np.abs(b).max() > 1.0
            assert _rel(a, b) < 1e-9, j


@pytest.mark.parametrize("make", [lambda: rm.chain(7), lambda: rm.four_bar(False, True), rm.floating_chain,
                                  rm.prismatic_cylindrical_chain])
def test_nonrecursive_equals_newton_euler_at_random_states(make):
    """Same state, accelerations and multipliers (cut-joint loads included) → same reactions."""
    m = make()
    A, B = RelativeSystem(m, "nonrecursive"), RelativeSystem(m, "newton-euler")
    rng = np.random.default_rng(7)
    q, qd = _random_state(A, rng)
    qdd, lam = rng.standard_normal(A.nq), rng.standard_normal(A.m)
    a, b = A.postprocess(q, qd, qdd, lam, 0.2), B.postprocess(q, qd, qdd, lam, 0.2)
    for key in ("reaction_force", "reaction_torque", "reaction_torque_joint", "driver_force"):
        assert _rel(a[key], b[key]) < 1e-12, key


def test_driving_force_eq36_equals_multiplier():
    """τ = B_eᵀ R̂_e (eq. 36) equals −λ of the driver constraint, also with a closed loop."""
    for m in (rm.four_bar(False, True), rm.floating_chain()):
        res = solver.simulate(m, t_end=0.1, output_step=0.02, formulation="relative")
        S = RelativeSystem(m)
        for name, d in zip(S.driver_names, S.drivers):
            assert _rel(res.driver_force(name), -np.asarray(res.multipliers)[:, d.row]) < 1e-9


# ---- conservation -------------------------------------------------------------------------------
def test_free_floating_chain_conserves_momentum():
    """Zero gravity, internal joints driven (inverse dynamics): linear and angular momentum stay."""
    m = rm.floating_chain()
    res = solver.simulate(m, t_end=1.0, output_step=0.05, formulation="relative", **TIGHT)
    S = RelativeSystem(m)
    P = np.zeros((len(res.t), 3))
    H = np.zeros((len(res.t), 3))
    for b, name in enumerate(S.body_names):
        r, v = res.body_position(name), res.body_velocity(name)
        A, w = res.body_rotation(name), res.body_angular_velocity(name)
        mb = S.mass_values[b]
        P += mb * v
        H += mb * np.cross(r, v) + np.einsum("nij,jk,nlk,nl->ni", A, S.inertia[b], A, w)
    assert np.abs(np.asarray(res.driver_force("D3"))).max() > 1e-3          # the drivers do work
    assert _rel(P, P[0], np.abs(P[0]).max()) < 1e-8
    assert _rel(H, H[0], np.abs(H[0]).max()) < 1e-7


# ---- the public contract ------------------------------------------------------------------------
def test_contract_pendulum_with_relative_formulation():
    g, L = 9.81, 1.0

    def pendulum():
        m = solver.Model(name="contract-pendulum", gravity=(0.0, -g, 0.0))
        m.add_body("bob", mass=1.0, inertia=(1e-9, 1e-9, 1e-9), position=(0.0, -L, 0.0))
        m.add_joint("pivot", "revolute", "ground", "bob", origin=(0.0, 0.0, 0.0), axis=(0.0, 0.0, 1.0))
        return m
    for how in ("nonrecursive", "newton-euler"):
        res = solver.simulate(pendulum(), t_end=0.5, output_step=0.01, formulation="relative", reactions=how)
        assert np.allclose(res.body_position("bob"), [0.0, -L, 0.0], atol=1e-8)
        assert np.allclose(res.joint_reaction("pivot")[0], [0.0, g, 0.0], atol=1e-6)
        m = pendulum()
        m.add_driver("D", joint="pivot", expression="0.5*sin(2*t)")
        res = solver.simulate(m, t_end=1.0, output_step=0.01, formulation="relative", reactions=how)
        t = np.asarray(res.t)
        q = 0.5 * np.sin(2 * t)
        tau = L**2 * (-2.0 * np.sin(2 * t)) + g * L * np.sin(q)
        assert np.allclose(res.driver_force("D"), tau, atol=1e-6 * np.abs(tau).max())
        assert np.allclose(res.body_position("bob")[:, 0], L * np.sin(q), atol=1e-8)
