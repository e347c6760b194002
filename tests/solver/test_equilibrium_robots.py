"""Static equilibrium of imported 7-DOF arms drawn upright (the URDF zero configuration, near the
top of the potential): descent (solver/analysis/equilibrium.py) must end hanging, at rest, stable,
in seconds.  Checked against MuJoCo reading the same URDF (tests/solver/robots.py):

* equilibrium — ``mj_inverse`` at q̇ = q̈ = 0 gives the joint torques that hold the arm; they must
  vanish to our residual plus the agreement of the two dynamics (1e-9 of the largest torque,
  tests/solver/test_urdf.py), i.e. |τ| ≤ 1e-9 W with W = Σ m g · (arm's reach) the size of the
  gravity torques;
* stability and frequencies — ω² from MuJoCo's mass matrix (``mj_fullM``) and its stiffness
  K = ∂τ_gravity/∂q (central differences of ``qfrc_bias`` at q̇ = 0, step 1e-5 rad: error
  ≈ 1e-10 relative) must be ≥ 0 and equal the generalized eigenvalues of our linearization's
  K̂, M̂ (invariant under the change of coordinates δq = N δz) to 1e-6 of the largest.

Joint limits are not modelled (the solver does not enforce them), so "hanging" may turn joints
past the limits the URDF lists.
"""
import time

import mujoco
import numpy as np
import pytest
from scipy.linalg import eigh

import solver
from solver.io.urdf import read_urdf       # limits as data: MuJoCo's constraints (its joint limits) are off
from robots import iiwa_urdf, mujoco_and_ours, panda_urdf, write

G = 9.81
REACH = 1.4        # m: both arms are shorter than this from the base joint to the flange


def mujoco_statics(mj, q):
    """(τ at rest, M, K = ∂τ/∂q) of MuJoCo at joint positions q (MuJoCo's order)."""
    data = mujoco.MjData(mj)
    data.qpos[:] = q
    mujoco.mj_inverse(mj, data)
    tau = data.qfrc_inverse.copy()
    M = np.zeros((mj.nv, mj.nv))
    mujoco.mj_fullM(mj, data, M)
    K, h = np.zeros((mj.nv, mj.nv)), 1e-5
    for k in range(mj.nv):
        for sign in (1.0, -1.0):
            data.qpos[:] = q
            data.qpos[k] += sign * h
            mujoco.mj_inverse(mj, data)
            K[:, k] += sign * data.qfrc_inverse / (2 * h)
    return tau, M, K


@pytest.mark.parametrize("urdf", (iiwa_urdf, panda_urdf), ids=("iiwa", "panda"))
def test_arm_drawn_upright_hangs_at_a_stable_equilibrium(tmp_path, urdf):
    text = urdf()
    mj, _, ours = mujoco_and_ours(tmp_path, text)
    model = read_urdf(write(tmp_path, text), enforce_limits=False).model
    start = time.perf_counter()
    eq = solver.static_equilibrium(model, formulation="relative")
    seconds = time.perf_counter() - start
    print(f"{model.name}: {eq.iterations} iterations, {seconds:.2f} s, max|r| {eq.residual:.1e}")
    assert eq.method == "descent" and eq.stable and eq.iterations <= 30 and seconds < 5.0

    W = G * sum(b.mass for b in model.bodies.values()) * REACH
    tau, M, K = mujoco_statics(mj, eq.q[ours])
    print(f"  MuJoCo torques at the equilibrium: max {np.max(np.abs(tau)):.1e} N·m (W = {W:.0f} N·m)")
    assert np.max(np.abs(tau)) <= 1e-9 * W

    w2_mujoco = eigh(0.5 * (K + K.T), M, eigvals_only=True)
    lin = solver.linearize(model, state=eq.state, formulation="relative")
    w2 = eigh(0.5 * (lin.K + lin.K.T), lin.M, eigvals_only=True)
    print(f"  ω² ours {np.array2string(w2, precision=6)}, MuJoCo {np.array2string(w2_mujoco, precision=6)}, "
          f"difference {np.max(np.abs(w2 - w2_mujoco)) / np.max(w2_mujoco):.1e} of the largest")
    assert np.min(w2_mujoco) >= -1e-6 * np.max(w2_mujoco)
    assert np.allclose(w2, w2_mujoco, atol=1e-6 * np.max(w2_mujoco))
    assert not np.any(lin.unstable)
    swinging = lin.frequencies_hz > 1e-3 * np.max(lin.frequencies_hz)
    assert np.count_nonzero(swinging) == np.count_nonzero(w2_mujoco > 1e-6 * np.max(w2_mujoco))
    assert np.all(np.abs(lin.damping_ratios[swinging]) < 1e-6)              # real frequencies


def test_iiwa_both_formulations_reach_the_same_potential(tmp_path):
    """The Cartesian formulation (63 coordinates, 56 constraints) ends at the same lowest potential
    as the relative one (the hanging arm, up to its neutral turns about the vertical)."""
    model = read_urdf(write(tmp_path, iiwa_urdf()), enforce_limits=False).model
    energies = {}
    for formulation in ("relative", "cartesian"):
        eq = solver.static_equilibrium(model, formulation=formulation)
        print(f"iiwa ({formulation}): {eq.iterations} iterations")
        assert eq.method == "descent" and eq.stable and eq.iterations <= 40
        lin = solver.linearize(model, state=eq.state, formulation=formulation)
        masses = np.array([model.bodies[b].mass for b in lin.body_names])
        energies[formulation] = -masses @ lin.body_positions @ np.asarray(model.gravity)   # V = −Σ m g·r
    print(f"  potential {energies}")
    assert abs(energies["cartesian"] - energies["relative"]) < 1e-9 * abs(energies["relative"])


def test_iiwa_pushed_at_its_last_link_hangs_where_the_torques_balance_the_push(tmp_path):
    """A constant force F on link_7's CM has no potential in the energy account: descent's merit is
    the work of the loads along each step.  At the equilibrium MuJoCo's holding torques against
    gravity (``mj_inverse`` at rest) equal the push's generalized force Jᵀ F (``mj_jac`` at that
    CM), to our residual plus the agreement of the two dynamics (1e-9 W)."""
    text = iiwa_urdf()
    mj, _, ours = mujoco_and_ours(tmp_path, text)
    data = mujoco.MjData(mj)
    mujoco.mj_forward(mj, data)
    body = mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_BODY, "link_7")
    F = np.array([20.0, 0.0, 0.0])
    model = read_urdf(write(tmp_path, text), enforce_limits=False).model
    model.add_force("push", "link_7", force=tuple(F), point=tuple(data.xipos[body]))
    start = time.perf_counter()
    eq = solver.static_equilibrium(model, formulation="relative")
    seconds = time.perf_counter() - start
    print(f"pushed iiwa: {eq.iterations} iterations, {seconds:.2f} s")
    assert eq.method == "descent" and eq.stable and eq.iterations <= 40
    data.qpos[:], data.qvel[:], data.qacc[:] = eq.q[ours], 0.0, 0.0
    mujoco.mj_inverse(mj, data)
    jacp = np.zeros((3, mj.nv))
    mujoco.mj_jac(mj, data, jacp, None, data.xipos[body], body)
    W = G * sum(b.mass for b in model.bodies.values()) * REACH
    imbalance = np.max(np.abs(data.qfrc_inverse - jacp.T @ F))
    print(f"  MuJoCo: holding torques − Jᵀ F = {imbalance:.1e} N·m (W = {W:.0f} N·m)")
    assert np.max(np.abs(jacp.T @ F)) > 1.0 and imbalance <= 1e-9 * W


def test_iiwa_from_arbitrary_poses(tmp_path):
    """``start``: three random joint poses (uniform in ±π, seeded) of the iiwa each end at a stable
    equilibrium where MuJoCo's holding torques vanish (same bound as above)."""
    text = iiwa_urdf()
    mj, _, ours = mujoco_and_ours(tmp_path, text)
    model = read_urdf(write(tmp_path, text), enforce_limits=False).model
    W = G * sum(b.mass for b in model.bodies.values()) * REACH
    rng = np.random.default_rng(3)
    for _ in range(3):
        start = np.zeros(mj.nv)
        start[ours] = rng.uniform(-np.pi, np.pi, mj.nv)
        t0 = time.perf_counter()
        eq = solver.static_equilibrium(model, formulation="relative", start=start)
        print(f"iiwa from a random pose: {eq.iterations} iterations, {time.perf_counter() - t0:.2f} s")
        assert eq.method == "descent" and eq.stable and eq.iterations <= 40
        tau = mujoco_statics(mj, eq.q[ours])[0]
        assert np.max(np.abs(tau)) <= 1e-9 * W
