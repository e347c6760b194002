"""Parametric generalized coordinates (Lee, Lee & Bae (2013) §3): derivatives and agreement with the
conventional joint form.

FD checks as in test_constraint_derivatives.py (random off-manifold states, α included; Euler
parameters perturbed in R⁴ where the homogeneous quadratic A(p) makes the analytic derivatives
exact), then the same mechanisms run in both forms must give the same trajectories, reactions and
driver forces (STYLE §9).
"""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import solver
from solver.constraints.parametric import PARAMETRIC_FORMS
from solver.formulations.cartesian import CartesianSystem
from solver.partitioning.choose import build_partition

from test_constraint_derivatives import JOINTS, assert_constraint_derivatives, two_body_model


SAMPLES = ["pendulum", "double_pendulum", "slider_crank", "fourbar"]


def _random_state(system, seed, spread=0.2):
    rng = np.random.default_rng(seed)
    q0, _, _ = system.initial_state()
    q = q0 + spread * rng.standard_normal(system.nq)         # off the manifold, α ≠ 0 too
    return q, rng.standard_normal(system.nq), rng.standard_normal(system.m), float(rng.uniform(0, 2))


@pytest.mark.parametrize("jtype", JOINTS)
@pytest.mark.parametrize("ground_i", [False, True])
@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 2**31 - 1))
def test_jacobian_gamma_nu_hessian(jtype, ground_i, seed):
    system = CartesianSystem(two_body_model(jtype, ground_i), form="parametric")
    q, qd, lam, t = _random_state(system, seed)
    assert_constraint_derivatives(system, q, qd, lam, t)
    H = system.constraint_hessian(q, lam, t)
    assert np.allclose(H, H.T, atol=1e-12 * max(1, np.abs(H).max()))


@pytest.mark.parametrize("jtype", JOINTS)
def test_layout_zero_alpha_and_full_rank_at_assembly(jtype):
    """Six rows per parametric joint, α appended after the bodies, Φ = 0 at α = 0, and Φ_q of full
    row rank there (the reason for the small-rotation form instead of the paper's f_iᵀf_j − cos α)."""
    system = CartesianSystem(two_body_model(jtype), form="parametric")
    n_alpha = len(PARAMETRIC_FORMS[jtype].coordinates) if jtype in PARAMETRIC_FORMS else 0
    assert system.nq == 14 + n_alpha
    q0, _, _ = system.initial_state()
    assert np.all(q0[14:] == 0.0)
    ev = system.constraints(q0, 0.0)
    assert np.max(np.abs(ev.phi)) < 1e-12
    assert np.linalg.matrix_rank(ev.jac, tol=1e-9) == system.m
    joint_rows = [k for k, e in enumerate(system.equations) if e.kind == "joint"]
    assert len(joint_rows) == (6 if jtype in PARAMETRIC_FORMS else CartesianSystem(two_body_model(jtype)).joints[0].joint.n_eq)
    for d in system.drivers:                         # a driver is the trivial row α_k − f(t)
        assert np.count_nonzero(ev.jac[d.row]) == 1 and ev.jac[d.row, 14:].max() == 1.0
    M = system.mass(q0)
    assert not M[14:].any() and not M[:, 14:].any() and not system.forces(q0, q0 * 0, 0.0)[14:].any()


def test_reduced_mass_matrix_positive_definite():
    """α carries no inertia, yet Nᵀ M N > 0: α is fixed by the joint equations."""
    for name in SAMPLES:
        system = CartesianSystem(solver.load_model(f"sample_models/{name}.mbs.json"), form="parametric")
        q0, _, _ = system.initial_state()
        for method in ("lu", "qr", "svd"):
            part = build_partition(method, system, q0, 0.0)
            ev = system.constraints(q0, 0.0, np.zeros(system.nq), level=2)
            _, _, N = part.accelerations(system.mass(q0), system.forces(q0, np.zeros(system.nq), 0.0),
                                         ev.jac, ev.gamma)
            if N.shape[1]:
                assert np.linalg.eigvalsh(N.T @ system.mass(q0) @ N).min() > 0, (name, method)


def _both(model, **kw):
    kw = dict(dict(rtol=1e-10, atol=1e-12), **kw)
    return (solver.simulate(model, constraints="conventional", **kw),
            solver.simulate(model, constraints="parametric", **kw))


def _close(a, b, rel=1e-6):
    return np.abs(a - b).max() <= rel * max(np.abs(a).max(), 1e-12)


@pytest.mark.parametrize("name, t_end", [("pendulum", 1.0), ("double_pendulum", 0.8), ("slider_crank", 0.5),
                                         ("fourbar", 1.0)])
@pytest.mark.slow
def test_samples_same_in_both_forms(name, t_end):
    """Trajectories, in-plane reactions and driver forces agree to 1e-6 relative (the samples are
    planar; the slider–crank and four-bar have 3 redundant equations — only their in-plane
    reactions and the driver torque are unique, and those are compared)."""
    model = solver.load_model(f"sample_models/{name}.mbs.json")
    a, b = _both(model, t_end=t_end, output_step=t_end / 20)
    assert b.status == "ok" and len(a.t) == len(b.t)
    assert len(a.redundant_equations) == len(b.redundant_equations)
    for f in ("body_position", "body_velocity", "body_angular_velocity", "body_acceleration"):
        # relative to the largest value of the quantity over the bodies (a piston does not rotate)
        scale = max(np.abs(getattr(a, f)(body)).max() for body in a.body_names)
        for body in a.body_names:
            assert np.abs(getattr(a, f)(body) - getattr(b, f)(body)).max() <= 1e-6 * scale, (f, body)
    scale = max(np.abs(a.joint_reaction(j)[0]).max() for j in a.joint_names)
    for j in a.joint_names:
        (Fa, Ta), (Fb, Tb) = a.joint_reaction(j), b.joint_reaction(j)
        assert np.abs(Fa[:, :2] - Fb[:, :2]).max() <= 1e-6 * scale, j
        assert np.abs(Ta[:, 2] - Tb[:, 2]).max() <= 1e-6 * scale * 0.1, j        # lengths ~0.1–1 m
    for d in a.driver_names:
        assert _close(a.driver_force(d), b.driver_force(d)), d
    assert b.constraint_violation.max() < 1e-9


def test_fourbar_driver_torque_equals_reaction_about_the_axis():
    """The driver torque (−λ of the trivial row α − f(t)) is carried to the bodies by the joint's
    rows: the crank joint's reaction torque about z equals it."""
    model = solver.load_model("sample_models/fourbar.mbs.json")
    res = solver.simulate(model, t_end=1.0, output_step=0.05, constraints="parametric")
    _, T = res.joint_reaction("A")
    tau = res.driver_force("crank_drive")
    assert np.abs(tau).max() > 0.1
    assert np.allclose(T[:, 2], tau, atol=1e-9 * np.abs(tau).max())


def test_pendulum_pivot_reaction_closed_form_parametric():
    """Point pendulum from 60°: radial pivot force m (g cos θ + L θ̇²), tangential 0."""
    th = np.radians(60.0)
    m = solver.Model(name="pendulum", gravity=(0, -9.81, 0))
    m.add_body("bob", mass=1.0, inertia=(1e-9, 1e-9, 1e-9), position=(np.sin(th), -np.cos(th), 0))
    m.add_joint("pivot", "revolute", "ground", "bob", origin=(0, 0, 0), axis=(0, 0, 1))
    res = solver.simulate(m, t_end=1.0, output_step=0.02, rtol=1e-10, atol=1e-12, constraints="parametric")
    r = res.body_position("bob")
    w = res.body_angular_velocity("bob")[:, 2]
    F, _ = res.joint_reaction("pivot")
    u = -r / np.linalg.norm(r, axis=1)[:, None]
    expected = 9.81 * -r[:, 1] + w**2
    assert np.allclose(np.einsum("ij,ij->i", F, u), expected, rtol=1e-6, atol=1e-8)
    # the joint angle is a coordinate: α equals the swing angle from the start
    alpha = res.coordinates[:, -1]
    assert np.allclose(alpha, np.arctan2(r[:, 0], -r[:, 1]) - th, atol=1e-9)


def test_screw_joint_same_in_both_forms():
    """A nut on a vertical screw under gravity, spun up: translation = pitch/2π · rotation."""
    m = solver.Model(name="screw", gravity=(0, 0, -9.81))
    m.add_body("nut", mass=0.5, inertia=(2e-3, 2e-3, 3e-3), position=(0.0, 0.0, 0.2),
               angular_velocity=(0, 0, 4.0))
    m.add_joint("S", "screw", "ground", "nut", origin=(0.0, 0.0, 0.2), axis=(0, 0, 1), pitch=0.05)
    a, b = _both(m, t_end=0.5, output_step=0.025)
    assert _close(a.body_position("nut"), b.body_position("nut"))
    assert _close(a.body_angular_velocity("nut"), b.body_angular_velocity("nut"))
    z = b.body_position("nut")[:, 2] - 0.2
    assert np.allclose(z, 0.05 / (2 * np.pi) * b.coordinates[:, -1], atol=1e-10)
    Fa, Ta = a.joint_reaction("S")
    Fb, Tb = b.joint_reaction("S")
    assert np.allclose(Fa, Fb, atol=1e-6 * np.abs(Fa).max()) and np.allclose(Ta, Tb, atol=1e-6 * np.abs(Ta).max())


@pytest.mark.slow
def test_universal_joint_same_in_both_forms():
    """A body hanging from a universal joint (axes z then x), launched spinning about both axes."""
    m = solver.Model(name="universal", gravity=(0, -9.81, 0))
    m.add_body("link", mass=1.2, inertia=(0.02, 0.004, 0.02), position=(0.0, -0.3, 0.0),
               angular_velocity=(1.5, 0.0, 2.0))
    m.add_joint("U", "universal", "ground", "link", origin=(0, 0, 0), axis=(0, 0, 1), axis2=(1, 0, 0))
    a, b = _both(m, t_end=0.6, output_step=0.03)
    for f in ("body_position", "body_velocity", "body_angular_velocity"):
        assert _close(getattr(a, f)("link"), getattr(b, f)("link")), f
    Fa, Ta = a.joint_reaction("U")
    Fb, Tb = b.joint_reaction("U")
    assert np.allclose(Fa, Fb, atol=1e-6 * np.abs(Fa).max()) and np.allclose(Ta, Tb, atol=1e-6 * np.abs(Ta).max())


@pytest.mark.slow
def test_massless_link_stays_conventional():
    """Distance links keep their conventional row in the parametric form (no α)."""
    m = solver.Model(name="link", gravity=(0, -9.81, 0))
    m.add_body("b", mass=1.0, inertia=(1e-3, 1e-3, 1e-3), position=(0.5, -0.2, 0.0))
    m.add_joint("L", "distance", "ground", "b", origin=(0, 0, 0), origin2=(0.5, -0.2, 0.0))
    m.add_joint("P", "planar", "ground", "b", origin=(0, 0, 0), axis=(0, 0, 1))
    system = CartesianSystem(m, form="parametric")
    assert system.nq == 7 + 3 and [e.text for e in system.equations][0] == "distance equation 1"
    a, b = _both(m, t_end=0.5, output_step=0.05)
    assert _close(a.body_position("b"), b.body_position("b"))
