"""Analytic Φ_q, γ and (Φ_qᵀλ)_q of every joint type equal finite differences (STYLE §8).

Configurations are random (hypothesis seeds) and away from the assembled one, so the checks
exercise the full nonlinear expressions; Euler parameters are perturbed in R⁴ (the homogeneous
quadratic A(p) makes the analytic derivatives exact there too).
"""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import solver
from solver.formulations.cartesian import CartesianSystem

pytestmark = pytest.mark.numerics   # run again under another BLAS kernel (Makefile)

JOINTS = ["fixed", "revolute", "prismatic", "cylindrical", "spherical", "universal", "planar", "screw",
          "distance", "revolute_spherical"]


def two_body_model(jtype, ground_i=False):
    m = solver.Model(name=f"fd-{jtype}", gravity=(0, -9.81, 0))
    q1 = (np.cos(0.3), 0.2, np.sin(0.3), 0.1)
    m.add_body("a", mass=1.0, inertia=(0.1, 0.2, 0.25), position=(0.1, 0.2, 0.3), orientation=q1)
    m.add_body("b", mass=2.0, inertia=(0.3, 0.2, 0.4), position=(0.6, -0.1, 0.2), orientation=(0.9, -0.1, 0.3, 0.2))
    opts = {}
    if jtype == "universal":
        opts["axis2"] = (1.0, -0.4, 0.0)
    if jtype in ("distance", "revolute_spherical"):
        opts["origin2"] = (0.7, 0.1, -0.2)
    if jtype == "screw":
        opts["pitch"] = 0.05
    m.add_joint("J", jtype, "ground" if ground_i else "a", "b", origin=(0.4, 0.0, 0.1), axis=(0.4, 1.0, 0.0), **opts)
    if jtype in ("revolute", "cylindrical", "screw", "prismatic", "planar"):
        m.add_driver("D", joint="J", expression="0.3*sin(2*t) + 0.1*t^2")
    return m


def fd_jacobian(f, x, h=1e-6):
    cols = []
    for k in range(len(x)):
        e = np.zeros(len(x))
        e[k] = h
        cols.append((f(x + e) - f(x - e)) / (2 * h))
    return np.column_stack(cols)


@pytest.mark.parametrize("jtype", JOINTS)
@pytest.mark.parametrize("ground_i", [False, True])
@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**31 - 1))
def test_jacobian_gamma_hessian(jtype, ground_i, seed):
    rng = np.random.default_rng(seed)
    system = CartesianSystem(two_body_model(jtype, ground_i))
    q0, _, _ = system.initial_state()
    q = q0 + 0.2 * rng.standard_normal(system.nq)        # off the constraint manifold on purpose
    qd = rng.standard_normal(system.nq)
    lam = rng.standard_normal(system.m)
    t = float(rng.uniform(0, 2))
    assert_constraint_derivatives(system, q, qd, lam, t)


def assert_constraint_derivatives(system, q, qd, lam, t):
    """Analytic Φ_q, γ, ν and (Φ_qᵀλ)_q of ``system`` at an arbitrary state equal central
    differences (the check every joint form must pass)."""
    ev = system.constraints(q, t, qd, level=2)
    jac_fd = fd_jacobian(lambda x: system.constraints(x, t).phi, q)
    assert np.allclose(ev.jac, jac_fd, rtol=1e-6, atol=1e-7 * max(1, np.abs(jac_fd).max()))
    # γ: Φ̈ = Φ_q q̈ + q̇ᵀ Φ_qq q̇ − f̈ (drivers); γ = −q̇ᵀ Φ_qq q̇ + f̈ ; check the quadratic part
    # (central second differences at h and h/2, Richardson-extrapolated: error O(h⁴) — the O(h²) one
    # of a single difference exceeds the tolerance where the joint angle curves hard, 2.3e-2 of 601)
    h = 1e-4
    phi = lambda s: system.constraints(q + s * qd, t).phi  # noqa: E731
    second = lambda k: (phi(k) - 2 * phi(0.0) + phi(-k)) / k**2  # noqa: E731
    quad_fd = (4 * second(h / 2) - second(h)) / 3
    fdd = np.zeros(system.m)
    nu_fd = np.zeros(system.m)
    for d in system.drivers:
        fdd[d.row] = d.function.d2(t)
        nu_fd[d.row] = d.function.d1(t)
    assert np.allclose(ev.gamma, -quad_fd + fdd, rtol=1e-5, atol=1e-5 * max(1, np.abs(quad_fd).max()))
    # ν = −Φ_t
    k = 1e-6
    phit = (system.constraints(q, t + k).phi - system.constraints(q, t - k).phi) / (2 * k)
    assert np.allclose(ev.nu, -phit, atol=1e-6)
    assert np.allclose(ev.nu, nu_fd, atol=1e-12)
    # (Φ_qᵀλ)_q
    H = system.constraint_hessian(q, lam, t)
    H_fd = fd_jacobian(lambda x: system.constraints(x, t).jac.T @ lam, q)
    assert np.allclose(H, H_fd, rtol=1e-6, atol=1e-6 * max(1, np.abs(H_fd).max()))


def test_joint_coordinates_zero_at_assembly():
    for jtype in JOINTS:
        system = CartesianSystem(two_body_model(jtype))
        q0, _, _ = system.initial_state()
        ev = system.constraints(q0, 0.0)
        # joints close at the initial configuration (drivers are f(0) = 0 there)
        assert np.max(np.abs(ev.phi)) < 1e-12, jtype


@pytest.mark.parametrize("jtype", JOINTS)
@settings(max_examples=5, deadline=None)
@given(seed=st.integers(0, 2**31 - 1))
def test_batched_equals_per_joint_evaluator(jtype, seed):
    """The batched evaluator (used in runs) equals the per-joint one (the reference) to round-off."""
    rng = np.random.default_rng(seed)
    system = CartesianSystem(two_body_model(jtype, ground_i=bool(seed % 2)))
    q0, _, _ = system.initial_state()
    q = q0 + 0.2 * rng.standard_normal(system.nq)
    qd = rng.standard_normal(system.nq)
    t = float(rng.uniform(0, 2))
    a = system.constraints(q, t, qd, level=2)
    b = system.constraints_per_joint(q, t, qd, level=2)
    for x, y in ((a.phi, b.phi), (a.jac, b.jac), (a.nu, b.nu), (a.gamma, b.gamma)):
        assert np.allclose(x, y, rtol=1e-12, atol=1e-12)
