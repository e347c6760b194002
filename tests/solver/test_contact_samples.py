"""The contact and stop samples (tools/make_samples.py builders, sample_models/*.mbs.json) run as
saved, through ``solver.simulate`` with their own settings (the compiled loop: contact and stops in
C), against closed forms:

* slider_end_stop: free fall until the stop (y = y₀ − g t²/2 to round-off), then at rest on the stop
  at its static penetration m g/k, the stop force equal to the weight;
* cam_follower: below the lift-off speed ω* the follower's lift is the cam profile e (1 − cos θ)
  within the contact's penetration (≤ (N_max/k)^(1/1.5)) and the contact force the closed form
  N(θ) = m g + P + k_s e − (k_s − m ω²) e cos θ once the start's transient has died out; above ω*
  the follower leaves the cam where N(θ) = 0;
* geneva: each turn of the crank indexes the wheel −90° (within the slot's play seen from the pin's
  exit radius) and the wheel dwells between the indexings;
* kuka_on_limits: the iiwa from its URDF falls over onto its stops and rests on joint 2's, the
  penetration equal to the stop torque over the stiffness.
"""
import sys
from pathlib import Path

import numpy as np
import pytest

import solver

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import make_samples as S  # noqa: E402

pytestmark = pytest.mark.usefixtures("module_codegen_cache")


def sample(name):
    return solver.load_model(ROOT / "sample_models" / f"{name}.mbs.json")


def in_compiled_loop(res):
    return any(e["message"].startswith("step loop in C") for e in res.events)


def test_slider_falls_onto_its_end_stop_and_rests_at_the_static_penetration():
    model = sample("slider_end_stop")
    res = solver.simulate(model)
    assert in_compiled_loop(res)
    y = res.body_position("carriage")[:, 1]
    force = solver.output(model, "joints.rail_slide.stop_force").evaluate(res, model)
    g, h, m = 9.81, S.SLIDER_DROP, S.SLIDER_MASS
    falling = res.t < np.sqrt(2 * h / g)
    assert np.all(force[falling] == 0.0) and force[~falling][0] > 0.0      # first touch at √(2h/g)
    assert np.max(np.abs(y[falling] - (0.05 - 0.5 * g * res.t[falling] ** 2))) < 1e-9
    sink = m * g / S.SLIDER_STOP["stop_stiffness"]
    assert (0.05 - h) - y[-1] == pytest.approx(sink, rel=1e-6)            # at rest: k δ = m g
    assert force[-1] == pytest.approx(m * g, rel=1e-6)


def test_cam_follower_keeps_to_the_profile_below_the_lift_off_speed():
    model = sample("cam_follower")
    res = solver.simulate(model)
    assert in_compiled_loop(res)
    omega = 0.9 * S.cam_lift_off_speed()
    theta = omega * res.t
    lift = res.body_position("follower")[:, 1] - res.body_position("follower")[0, 1]
    N = -res.contact_force("cam")[:, 1]                    # on the camshaft (body_j), downwards
    closed = S.cam_contact_force(theta, omega)
    penetration = (closed.max() / S.CAM_CONTACT["stiffness"]) ** (1 / 1.5)
    e = S.CAM_ECCENTRICITY
    assert np.max(np.abs(lift - e * (1 - np.cos(theta)))) <= penetration      # measured 8.6e-6 ≤ 1.2e-5 m
    later = theta > 2 * np.pi                              # after the first turn: the start's transient gone
    assert N.min() > 0.0
    assert np.max(np.abs(N[later] - closed[later])) < 1e-2 * closed.max()    # measured 1e-3


@pytest.mark.parametrize("ratio", [1.1, pytest.param(1.2, marks=pytest.mark.sweep)])
def test_cam_follower_lifts_off_where_the_spring_no_longer_holds_it(ratio):
    """Above ω* the follower leaves the cam at cos θ = −(m g + P + k_s e)/((m ω² − k_s) e); the
    compliant contact lets go a little later (its penetration relaxes): measured 0.018 and 0.012 rad."""
    model = S.cam_follower(ratio)
    omega = ratio * S.cam_lift_off_speed()
    res = solver.simulate(model, t_end=2 * np.pi / omega, output_step=5e-5)
    theta = omega * res.t
    N = -res.contact_force("cam")[:, 1]
    m, e, k = S.FOLLOWER_MASS, S.CAM_ECCENTRICITY, S.VALVE_SPRING
    closed = np.arccos(-(m * 9.81 + S.SPRING_PRELOAD + k * e) / ((m * omega ** 2 - k) * e))
    first_apart = theta[np.argmax(N <= 0.0)]
    assert closed <= first_apart < closed + 0.05


def test_geneva_indexes_a_quarter_turn_per_crank_turn():
    model = sample("geneva")
    res = solver.simulate(model)
    assert in_compiled_loop(res)
    angle = solver.output(model, "joints.wheel_axis.rotation").evaluate(res, model)
    turn = 2 * np.pi / S.GENEVA_SPEED
    play = S.GENEVA_CLEARANCE / (S.GENEVA_CENTRES * np.sin(np.pi / 4))    # the slot's play at the exit radius
    for k in (1, 2, 3):
        at = np.argmin(np.abs(res.t - k * turn))
        assert abs(angle[at] + k * np.pi / 2) < play                    # measured 4.4e-3 < 7.1e-3 rad
        # the crank turns 90° while the pin is in a slot (from 45° after the start), then the wheel dwells
        dwell = (res.t > (k - 1 + 0.4) * turn) & (res.t < (k + 0.1) * turn)
        assert np.ptp(angle[dwell]) < 1e-4


def test_kuka_falls_onto_its_limits_and_rests_on_joint_2s_stop():
    """The iiwa of pybullet_data's URDF, upright with joint 2 turning: it falls over; no joint passes
    its limit by more than its stop lets it at the impact (measured 0.017 rad at a 1070 N·m peak,
    k = 1e5 N·m/rad), and joint 2 ends resting on its upper stop, its penetration the stop torque
    over k (the damping's share c |θ̇|/k is 1e-6 rad at the end)."""
    pytest.importorskip("pybullet_data")
    model = sample("kuka_on_limits")
    res = solver.simulate(model)
    assert in_compiled_loop(res)
    for joint in model.joints.values():
        angle = solver.output(model, f"joints.{joint.name}.rotation").evaluate(res, model)
        assert np.max(np.abs(angle)) < joint.upper_limit + 0.02, joint.name
    j2 = model.joints["lbr_iiwa_joint_2"]
    angle = solver.output(model, "joints.lbr_iiwa_joint_2.rotation").evaluate(res, model)
    torque = solver.output(model, "joints.lbr_iiwa_joint_2.stop_force").evaluate(res, model)
    rate = res.t[-1] - res.t[-2]
    rate = (angle[-1] - angle[-2]) / rate
    assert torque[-1] < -10.0                                            # holding the arm up
    assert abs((angle[-1] - j2.upper_limit) - (-torque[-1] / j2.stop_stiffness)) <= (
        j2.stop_damping * abs(rate) / j2.stop_stiffness + 1e-9)
