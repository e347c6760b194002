"""The 7-DOF RRC robot arm of Kim & You (1997) §4 (samples rrc_arm_case1/2, built by
tools/make_samples.py): relative vs Cartesian, non-recursive (eq. 30) vs Newton–Euler reactions,
energy of the free-falling arm."""
import importlib.util
import os

import numpy as np
import pytest

import solver
from solver.formulations.relative import RelativeSystem

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SAMPLES = os.path.join(ROOT, "sample_models")


def _builders():
    spec = importlib.util.spec_from_file_location("make_samples", os.path.join(ROOT, "tools", "make_samples.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _rel(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return float(np.abs(a - b).max()) / max(float(np.abs(b).max()), 1e-300)


@pytest.fixture(scope="module")
def case1_runs():
    """Case 1 shortened to 0.8 s, both formulations, tight tolerances."""
    model = solver.load_model(os.path.join(SAMPLES, "rrc_arm_case1.mbs.json"))
    args = dict(t_end=0.8, output_step=0.04, rtol=1e-10, atol=1e-12)
    return (model, solver.simulate(model, formulation="cartesian", **args),
            solver.simulate(model, formulation="relative", **args))


@pytest.mark.parametrize("name, dof, drivers", [("rrc_arm_case1", 2, 5), ("rrc_arm_case2", 1, 6)])
def test_samples_load_with_the_documented_data(name, dof, drivers):
    m = solver.load_model(os.path.join(SAMPLES, f"{name}.mbs.json"))
    assert len(m.bodies) == 7 and len(m.joints) == 7 and len(m.drivers) == drivers
    assert m.settings.formulation == "relative"
    S = RelativeSystem(m)
    assert S.nq - S.m == dof                                  # the DOF stated in the docstrings
    link1 = m.bodies["link1"]
    assert link1.mass == pytest.approx(229.5 * 14.5939)       # Table 2, slug → kg
    assert link1.inertia[:3] == pytest.approx((6.907 * 0.112985, 10.0 * 0.112985, 10.0 * 0.112985))
    if name == "rrc_arm_case2":
        spring = m.forces["gripper_spring"]
        assert spring.stiffness == pytest.approx(1.7513e7 * 175.1268) and spring.free_length == 0.0254
        assert m.settings.integrator == "galpha"


def test_case1_relative_equals_cartesian(case1_runs):
    """Positions ≤ 1e-6, driver torque and reaction of joint 2 ≤ 1e-5 (relative to their peaks)."""
    _, cart, rel = case1_runs
    assert cart.status == rel.status == "ok" and len(cart.t) == len(rel.t)
    scale = max(np.abs(cart.body_position(b)).max() for b in cart.body_names)
    for b in cart.body_names:
        assert np.abs(cart.body_position(b) - rel.body_position(b)).max() <= 1e-6 * scale, b
    assert _rel(rel.driver_force("drive2"), cart.driver_force("drive2")) <= 1e-5
    for k in range(2):                                        # force and torque of joint 2
        assert _rel(rel.joint_reaction("J2")[k], cart.joint_reaction("J2")[k]) <= 1e-5
    assert np.abs(rel.driver_force("drive2")).max() > 1e3     # a real load, not a zero compare
    assert rel.constraint_violation.max() < 1e-9


def test_nonrecursive_reactions_equal_newton_euler_at_every_joint(case1_runs):
    """Eq. (30)–(31) and the recursive Newton–Euler sweep (eq. 28) from the same states."""
    model, _, rel = case1_runs
    nonrec, ne = RelativeSystem(model, reactions="nonrecursive"), RelativeSystem(model, reactions="newton-euler")
    for n in range(0, len(rel.t), 5):
        args = (rel.coordinates[n], rel.velocities[n], rel.accelerations[n], rel.multipliers[n], rel.t[n])
        a, b = nonrec.postprocess(*args), ne.postprocess(*args)
        for key in ("reaction_force", "reaction_torque"):
            scale = max(np.abs(b[key]).max(), 1.0)
            for k, j in enumerate(model.joints):
                assert np.abs(a[key][k] - b[key][k]).max() <= 1e-9 * scale, (key, j, rel.t[n])
        assert np.abs(a["driver_force"] - b["driver_force"]).max() <= 1e-9 * max(np.abs(b["driver_force"]).max(), 1.0)


def test_free_falling_arm_conserves_energy():
    """No drivers, pitch joints bent 0.3 rad, 1 s at rtol 1e-6, relative formulation."""
    model = _builders().rrc_arm("free", pitch=(0.3, 0.3, 0.3))
    res = solver.simulate(model, formulation="relative", t_end=1.0, output_step=0.02, rtol=1e-6, atol=1e-8)
    e = res.energy
    swing = np.ptp(e["kinetic"])
    assert swing > 1e3                                         # the arm really falls
    assert np.abs(e["total"] - e["total"][0]).max() <= 1e-4 * swing
    assert res.summary()["energy_drift"] <= 1e-4


@pytest.mark.slow
def test_case2_spring_loop_generalized_alpha():
    """Case 2 (stiff spring, generalized-α) for 0.1 s: the relative run converges in the step
    (1 ms vs 0.5 ms ≤ 1 %) and agrees with the Cartesian run to the method's discretization error
    (≤ 5 % at 1 ms — different coordinates, so different O(h²) errors; not a round-off compare)."""
    model = solver.load_model(os.path.join(SAMPLES, "rrc_arm_case2.mbs.json"))
    args = dict(t_end=0.1, output_step=0.01)
    rel = solver.simulate(model, formulation="relative", **args)
    fine = solver.simulate(model, formulation="relative", max_step=5e-4, **args)
    cart = solver.simulate(model, formulation="cartesian", **args)
    assert _rel(rel.driver_force("drive4"), fine.driver_force("drive4")) <= 1e-2
    assert _rel(rel.driver_force("drive4"), cart.driver_force("drive4")) <= 5e-2
