"""Joint friction (the Adams joint-friction law, solver.math.friction; the normal load from the
joint's own reaction, Kim & You (1997) eq. 30, solved as a fixed point with the accelerations).

Checked against closed forms and an independent 1-DOF reference:
- a torsional oscillator J θ̈ = −k θ − T_f sign θ̇ with a constant friction torque T_f = μ_d·preload
  loses 2 T_f/k of amplitude every half cycle (each half cycle is a free oscillation about ±T_f/k),
  4 T_f/k per cycle; in both formulations;
- a motor torque below the breakaway torque μ_s R m g of a shaft does not turn it: the stick–slip law
  lets it creep at the speed v_c < v_s where μ(v_c) = T/(R m g), so the drift is at most v_c t/R;
  above breakaway it accelerates at (T − μ_d R m g)/J;
- a slider on a horizontal rail pushed down by a growing force F = 10 t: N = m g + 10 t, so
  v(t) = v₀ − μ_d (g t + 5 t²/m) exactly (generated kernels too); the energy it loses is the
  friction_power output integrated;
- a ball joint spinning a hanging body: N = m g, ω(t) = ω₀ − μ_d R m g t/J_z;
- a pendulum with pin friction, whose pin load depends on its angular acceleration (and that on the
  friction): against J θ̈ = −m g l cos θ + T_f(θ̇, N(θ̈)) integrated by scipy, with the pin load
  N = |m a_cm − m g| solved by iteration in the right-hand side;
- a four-bar with friction in a tree joint and in the cut (loop-closing) joint: the energy the run
  loses is the work of the friction_power outputs.
"""
import numpy as np
import pytest
from scipy.integrate import solve_ivp

import solver
from solver.math.friction import friction_coefficient, friction_per_speed
import relative_models as rm
from test_joint_stops import extremes, simulate_with

G = 9.81


def creep_speed(ratio, mu_s, v_s):
    """v_c < v_s with μ(v_c) = ratio·μ_s on the stiction branch: s²(3 − 2s) = (1 + ratio)/2,
    s = (v_c + v_s)/(2 v_s), by bisection."""
    lo, hi = 0.5, 1.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if mid * mid * (3.0 - 2.0 * mid) < 0.5 * (1.0 + ratio) else (lo, mid)
    return (2.0 * lo - 1.0) * v_s


def test_the_stick_slip_law():
    law = (0.3, 0.2, 1e-3, 2e-3)
    v = np.array([0.0, 1e-3, 1.5e-3, 2e-3, 1.0])
    assert np.allclose(friction_coefficient(v, *law), [0.0, 0.3, 0.25, 0.2, 0.2], rtol=0, atol=1e-15)
    assert friction_per_speed(0.0, *law) == pytest.approx(friction_coefficient(1e-9, *law) / 1e-9, rel=1e-6)
    assert friction_coefficient(creep_speed(0.5, 0.3, 1e-3), *law) == pytest.approx(0.15, rel=1e-12)


def oscillator(formulation):
    m = solver.Model(name="torsional", gravity=(0.0, 0.0, 0.0))
    m.add_body("rotor", mass=1.0, inertia=(0.1, 0.1, 0.1))
    m.add_joint("pivot", "revolute", "ground", "rotor", axis=(0.0, 0.0, 1.0))
    m.add_rotational_spring_damper("spring", "pivot", stiffness=10.0, free_angle=0.5)
    m.add_joint_friction("friction", "pivot", static_coefficient=0.1, dynamic_coefficient=0.1, preload=1.0,
                         radius=0.01, stiction_velocity=1e-4, transition_velocity=2e-4, reaction_load=False)
    m.settings.formulation = formulation
    return m


@pytest.mark.parametrize("formulation", ["relative", "cartesian"])
def test_torsional_oscillator_amplitude_drops_by_4_tf_over_k_per_cycle(formulation):
    m = oscillator(formulation)
    res = solver.simulate(m, t_end=1.3, output_step=5e-3)
    theta = solver.output(m, "joints.pivot.rotation").evaluate(res, m)
    peaks, troughs = extremes(theta)
    tf_k = 0.1 * 1.0 / 10.0                 # T_f/k: μ_d · preload / k
    # released at θ = 0, 0.5 from the spring's free angle: the first half cycle swings about 0.5 − T_f/k
    # to 1 − 2 T_f/k, each later one loses 2 T_f/k more
    expected_peaks = 0.5 + (0.5 - (4 * np.arange(len(peaks)) + 2) * tf_k)
    expected_troughs = 0.5 - (0.5 - (4 * np.arange(len(troughs)) + 4) * tf_k)
    # extremes from parabolas through the samples: off by up to ≈ A (ωh)³/12 ≈ 5e-6 rad; the stiction band
    # (|θ̇| < v_s/R = 0.01 rad/s, ≈ 4e-4 s at each turning point) changes the amplitude by ≈ 4e-8
    assert len(peaks) >= 2 and len(troughs) >= 2
    assert np.allclose(peaks, expected_peaks, rtol=0, atol=1e-5)          # of drops of 0.04 rad per cycle
    assert np.allclose(troughs, expected_troughs, rtol=0, atol=1e-5)


def shaft(torque, mass=2.0, radius=0.02, law=(0.3, 0.2, 1e-4, 2e-4)):
    """A shaft on a horizontal revolute (axis x, gravity −z): pin load m g."""
    m = solver.Model(name="shaft", gravity=(0.0, 0.0, -G))
    m.add_body("shaft", mass=mass, inertia=(0.05, 0.1, 0.1))
    m.add_joint("bearing", "revolute", "ground", "shaft", axis=(1.0, 0.0, 0.0))
    m.add_joint_friction("friction", "bearing", static_coefficient=law[0], dynamic_coefficient=law[1],
                         stiction_velocity=law[2], transition_velocity=law[3], radius=radius)
    m.add_torque("motor", "shaft", torque=(torque, 0.0, 0.0))
    return m


def test_torque_below_breakaway_only_creeps_and_above_it_turns():
    breakaway = 0.3 * 0.02 * 2.0 * G
    m = shaft(0.5 * breakaway)
    res = solver.simulate(m, t_end=1.0, output_step=0.05)
    drift = solver.output(m, "joints.bearing.rotation").evaluate(res, m)
    creep = creep_speed(0.5, 0.3, 1e-4) / 0.02                    # rad/s: 0.0035 (v_c = 0.347 v_s)
    assert 0.0 < drift[-1] <= creep * 1.0 and drift[-1] == pytest.approx(creep * 1.0, rel=1e-2)
    m = shaft(1.5 * breakaway)
    res = solver.simulate(m, t_end=0.5, output_step=0.05)
    w = res.body_angular_velocity("shaft")[:, 0]
    slope = (1.5 * breakaway - 0.2 * 0.02 * 2.0 * G) / 0.05
    # past the transition (a few ms), ω grows at the sliding rate
    assert (w[-1] - w[-5]) / (res.t[-1] - res.t[-5]) == pytest.approx(slope, rel=1e-6)


def slider():
    m = solver.Model(name="slider", gravity=(0.0, -G, 0.0))
    m.add_body("slider", mass=2.0, inertia=(0.01, 0.01, 0.01), velocity=(1.0, 0.0, 0.0))
    m.add_joint("rail", "prismatic", "ground", "slider", axis=(1.0, 0.0, 0.0))
    m.add_force("push", "slider", force=(0.0, "-10*t", 0.0))
    m.add_joint_friction("friction", "rail", static_coefficient=0.2, dynamic_coefficient=0.2,
                         stiction_velocity=1e-4, transition_velocity=2e-4)
    return m


@pytest.mark.parametrize("codegen", ["off", "on"])
def test_slider_decelerates_with_its_growing_normal_load(codegen):
    m = slider()
    res = simulate_with(m, codegen, t_end=0.3, output_step=1e-3)
    t, v = res.t, res.body_velocity("slider")[:, 0]
    assert np.max(np.abs(v - (1.0 - 0.2 * (G * t + 5.0 * t * t / 2.0)))) < 1e-9
    power = solver.output(m, "forces.friction.friction_power").evaluate(res, m)
    kinetic = res.energy["kinetic"]
    # P = μ (m g + 10 t) v is smooth: the trapezoid's error is h²/12 ∫|P''| ≈ 1e-7 J
    assert kinetic[0] - kinetic[-1] == pytest.approx(np.sum(0.5 * (power[1:] + power[:-1]) * np.diff(t)), abs=1e-6)


def test_friction_load_is_run_state():
    compiled = solver.compile_model(slider())
    friction = [f for f in compiled.system.force_elements if f.name == "friction"]
    assert friction and friction[0] in compiled.system.run_state()
    first, again = (solver.simulate(compiled, t_end=0.05, output_step=0.01) for _ in range(2))
    assert np.array_equal(first.body_velocity("slider"), again.body_velocity("slider"))


def test_ball_joint_spin_decays_linearly():
    m = solver.Model(name="ball", gravity=(0.0, 0.0, -G))
    m.add_body("top", mass=3.0, inertia=(0.02, 0.02, 0.04), position=(0.0, 0.0, -0.2),
               angular_velocity=(0.0, 0.0, 5.0))
    m.add_joint("ball", "spherical", "ground", "top")
    m.add_joint_friction("friction", "ball", static_coefficient=0.25, dynamic_coefficient=0.25, radius=0.01,
                         stiction_velocity=1e-4, transition_velocity=2e-4)
    res = solver.simulate(m, t_end=0.5, output_step=0.05)
    w = res.body_angular_velocity("top")[:, 2]
    assert np.allclose(w, 5.0 - 0.25 * 0.01 * 3.0 * G * res.t / 0.04, rtol=0, atol=1e-6)      # rtol 1e-8 runs: ≈ 1e-8


def pendulum_reference(t, mass, arm, Ic, radius, law):
    J = Ic + mass * arm * arm

    def rhs(_, y):
        th, om = y
        acc = -mass * G * arm * np.cos(th) / J
        for _ in range(100):                     # θ̈ ↔ pin load: contracts by ≈ μ R m l/J = 0.004
            a = arm * acc * np.array([-np.sin(th), np.cos(th)]) - arm * om * om * np.array([np.cos(th), np.sin(th)])
            N = np.hypot(*(mass * a - mass * np.array([0.0, -G])))
            torque = -friction_coefficient(abs(radius * om), *law) * np.sign(om) * radius * N
            acc, old = (-mass * G * arm * np.cos(th) + torque) / J, acc
            if abs(acc - old) <= 1e-14 * abs(acc):
                break
        return [om, acc]
    return solve_ivp(rhs, (0.0, t[-1]), [0.0, 0.0], method="LSODA", rtol=1e-10, atol=1e-12, t_eval=t).y[0]


def test_pendulum_pin_friction_with_the_acceleration_dependent_load():
    mass, arm, Ic, radius, law = 2.0, 0.5, 0.01, 0.02, (0.3, 0.2, 1e-4, 2e-4)
    m = solver.Model(name="pin", gravity=(0.0, -G, 0.0))
    m.add_body("arm", mass=mass, inertia=(Ic, Ic, Ic), position=(arm, 0.0, 0.0))
    m.add_joint("pivot", "revolute", "ground", "arm", axis=(0.0, 0.0, 1.0))
    m.add_joint_friction("friction", "pivot", static_coefficient=law[0], dynamic_coefficient=law[1],
                         stiction_velocity=law[2], transition_velocity=law[3], radius=radius)
    res = solver.simulate(m, t_end=0.8, output_step=0.02)
    theta = solver.output(m, "joints.pivot.rotation").evaluate(res, m)
    reference = pendulum_reference(res.t, mass, arm, Ic, radius, law)
    frictionless = pendulum_reference(res.t, mass, arm, Ic, radius, (0.0, 0.0, 1e-4, 2e-4))
    assert np.max(np.abs(frictionless - reference)) > 1e-3          # the friction shows
    assert np.max(np.abs(theta - reference)) < 1e-6                 # rtol 1e-8 runs: ≈ 7e-8 rad


def test_four_bar_loses_the_work_of_friction_in_a_tree_and_a_cut_joint():
    """J3 (spherical) closes the loop: its normal load comes from its multipliers.  The run's energy
    loss equals the friction_power outputs integrated (Richardson-extrapolated trapezoids of 1 and
    2 ms: the 1 ms trapezoid alone is off by 8e-8 J of 0.034 J)."""
    m = rm.four_bar(False)
    for name, joint in (("f1", "J1"), ("f3", "J3")):
        m.add_joint_friction(name, joint, static_coefficient=0.3, dynamic_coefficient=0.25, radius=0.02,
                             stiction_velocity=1e-2, transition_velocity=2e-2)
    assert [joint for joint, _ in solver.compile_model(m).system.cut] == [list(m.joints).index("J3")]
    res = solver.simulate(m, t_end=0.1, output_step=1e-3)
    power = sum(solver.output(m, f"forces.{n}.friction_power").evaluate(res, m) for n in ("f1", "f3"))
    work = [np.sum(0.5 * (p[1:] + p[:-1]) * np.diff(t)) for p, t in ((power, res.t), (power[::2], res.t[::2]))]
    total = res.energy["total"]
    assert total[0] - total[-1] == pytest.approx(work[0] + (work[0] - work[1]) / 3.0, rel=1e-6)


def test_bad_friction_input_names_the_field():
    m = shaft(0.0)
    with pytest.raises(solver.ModelError, match="transition_velocity"):
        m.add_joint_friction("bad", "bearing", stiction_velocity=1e-3, transition_velocity=1e-3)
    m.add_joint("weld", "fixed", "ground", "shaft")
    with pytest.raises(solver.ModelError, match=r"joint_friction 'bad'.joint: joint 'weld' is fixed"):
        m.add_joint_friction("bad", "weld")
    m = shaft(0.0)
    m.settings.formulation = "cartesian"
    with pytest.raises(solver.ModelError, match="reaction_load"):
        solver.simulate(m, t_end=0.01)
