"""The free-falling 7-DOF RRC arm of bench/peers.py (Kim & You (1997)) is the same model in MBS
Studio and in MuJoCo: mass matrix, accelerations and a 1 s trajectory.  The MuJoCo model is the
MJCF that ``bench/peers.py`` writes from our Model (every body frame at its joint origin with
world axes at the initial configuration), so this test also guards the benchmark's comparison."""
import sys
from pathlib import Path

import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")       # the `bench` and `test` extras

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import peers  # noqa: E402

import solver  # noqa: E402

RATES = (0.4, -0.3, 0.8, 0.2, -0.6, 0.5, 1.1)    # joint rates at t = 0: a 3-D motion, all joints moving


@pytest.fixture(scope="module")
def arm():
    model, tip = peers.free_falling_arm(t_end=1.0, rates=RATES)
    system = solver.compile_model(model, formulation="relative", codegen="off").system
    mj = mujoco.MjModel.from_xml_string(peers.mjcf(model, 1e-4, tip))
    return model, tip, system, mj, peers.coordinate_map(system, mj)


def test_coordinates_map_one_to_one_with_the_same_zero_and_sign(arm):
    model, tip, system, mj, cols = arm
    q0, qd0, _ = system.initial_state()
    assert mj.nq == mj.nv == system.nq == 7 and sorted(cols) == list(range(7))
    assert np.all(q0 == 0.0)                                 # both: zero at the drawn configuration
    assert np.allclose(qd0[cols], RATES, rtol=1e-12, atol=1e-12)   # positive about the joint axis, as hinges
    data = mujoco.MjData(mj)
    mujoco.mj_kinematics(mj, data)
    assert np.allclose(data.site_xpos[0], tip, rtol=0, atol=1e-12)


def worst_differences(system, mj, cols, rng, states, q_range, qd_scale):
    """Largest relative differences (mass matrix, accelerations) between ours (M q̈ = Q of the
    relative formulation) and MuJoCo's (mj_fullM, qacc) over ``states`` random states."""
    data = mujoco.MjData(mj)
    n, worst = mj.nv, np.zeros(2)
    for _ in range(states):
        q, qd = rng.uniform(-q_range, q_range, n), rng.normal(0.0, qd_scale, n)
        data.qpos[:], data.qvel[:] = q, qd
        mujoco.mj_forward(mj, data)
        M_mj = np.zeros((n, n))
        mujoco.mj_fullM(mj, data, M_mj)
        x, xd = np.zeros(n), np.zeros(n)
        x[cols], xd[cols] = q, qd
        M = system.mass(x)
        qdd = np.linalg.solve(M, system.forces(x, xd, 0.0))
        worst = np.maximum(worst, [np.max(np.abs(M[np.ix_(cols, cols)] - M_mj)) / np.max(np.abs(M_mj)),
                                   np.max(np.abs(qdd[cols] - data.qacc)) / np.max(np.abs(data.qacc))])
    return worst


def test_mass_matrix_and_accelerations_equal_mujoco(arm):
    model, tip, system, mj, cols = arm
    assert np.all(worst_differences(system, mj, cols, np.random.default_rng(18), 5, 1.5, 1.5) < 1e-9)


@pytest.mark.slow            # ~3 s: the generic relative path, ~1000 right-hand sides
def test_one_second_trajectory_equals_mujoco(arm):
    """Ours: DOP853 at rtol 1e-10 (generic kernels); MuJoCo: RK4 at dt = 1e-4 (error ~dt⁴): joint
    angles and the tip agree to 1e-6 at every output point (measured: 1e-10 rad, 2e-11 m)."""
    model, tip, system, mj, cols = arm
    res = solver.simulate(model, formulation="relative", codegen="off", integrator="rk", rtol=1e-10, atol=1e-12)
    q0, qd0, _ = system.initial_state()
    qpos, _ = peers.mujoco_python_loop(mj, q0[cols], qd0[cols], 1.0, model.settings.values["output_step"])
    assert qpos.shape == (len(res.t), 7)
    assert np.max(np.abs(res.coordinates[:, cols] - qpos)) < 1e-6
    assert np.max(np.linalg.norm(peers.our_tip(res, model, tip) - peers.mujoco_tip(mj, qpos), axis=1)) < 1e-6
    assert np.ptp(res.coordinates, axis=0).min() > 0.05     # every joint moved


def test_a_branched_tree_with_a_slider_equals_mujoco():
    """The MJCF writer beyond the chain: a cart on an inclined slide carrying two pendulums, one
    with a tilted axis and a second link, bodies turned and with products of inertia."""
    m = solver.Model(name="branches", gravity=(0.0, -9.81, 0.0))
    turned = (np.cos(0.2), np.sin(0.2) * 0.6, 0.0, np.sin(0.2) * 0.8)
    m.add_body("cart", mass=5.0, inertia=(0.2, 0.3, 0.25, 0.01, 0.02, -0.015), position=(0.0, 0.0, 0.0),
               orientation=turned)
    m.add_body("left", mass=1.5, inertia=(0.05, 0.01, 0.05), position=(-0.3, -0.4, 0.0))
    m.add_body("right", mass=2.0, inertia=(0.04, 0.02, 0.03, 0.0, 0.005, 0.0), position=(0.3, -0.3, 0.1),
               orientation=turned)
    m.add_body("tip", mass=0.7, inertia=(0.01, 0.002, 0.01), position=(0.3, -0.8, 0.15))
    m.add_joint("slide", "prismatic", solver.GROUND, "cart", origin=(0.0, 0.0, 0.0), axis=(0.8, 0.6, 0.0))
    m.add_joint("hinge_l", "revolute", "cart", "left", origin=(-0.3, 0.0, 0.0), axis=(0.0, 0.0, 1.0))
    m.add_joint("hinge_r", "revolute", "cart", "right", origin=(0.3, 0.0, 0.1), axis=(0.0, 0.6, 0.8))
    m.add_joint("elbow", "revolute", "right", "tip", origin=(0.3, -0.6, 0.1), axis=(1.0, 0.0, 0.0))
    system = solver.compile_model(m, formulation="relative", codegen="off").system
    mj = mujoco.MjModel.from_xml_string(peers.mjcf(m, 1e-3))
    cols = peers.coordinate_map(system, mj)
    assert np.all(worst_differences(system, mj, cols, np.random.default_rng(5), 4, 1.0, 1.0) < 1e-9)


def test_only_trees_of_revolute_and_prismatic_joints_are_written():
    model, _ = peers.free_falling_arm()
    model.set_field("J3", "type", "spherical")
    with pytest.raises(solver.ModelError, match="J3.*type"):
        peers.mjcf(model, 1e-3)
    model, _ = peers.free_falling_arm()
    model.set_field("J1", "body_i", "link2")
    model.set_field("J2", "body_i", "link1")           # link1 and link2 hang on each other, not on ground
    with pytest.raises(solver.ModelError, match="link1, link2, link3"):
        peers.mjcf(model, 1e-3)
