"""The joint actuator (a generalized force f(t) along a joint coordinate) against closed forms: a
shaft on a revolute with torque a·t turns θ = a t³/(6 I), its kinetic energy the work ∫ F θ̇ dt =
a² t⁴/(8 I); a slider pushed by F moves x = F t²/(2 m);
between two floating bodies the reaction on body_i is equal and opposite (the momenta stay zero:
I_j ω_j = −I_i ω_i = a t²/2, m_j v_j = −m_i v_i = F t); the default run (generated kernels, step
loop in C) and the generic path agree; a declared input drives it; bad joints are ModelErrors."""
from __future__ import annotations

import numpy as np
import pytest

import solver
from solver.errors import ModelError
from solver.fmu import input_slots
from test_codegen import check_kernels

RTOL = 1e-8          # the default integrator tolerance: the closed forms below are met to a few of it
RUN = dict(t_end=1.0, output_step=0.1)
A = 2.0              # N·m/s: the torque a·t
F = 1.5              # N: the slider's force
AXIS = (0.6, 0.8, 0.0)


def shaft(torque=f"{A}*t"):
    """A body on a revolute about z through (0, 0.1, 0), its CM 0.3 m away: I = J_zz + m d²."""
    m = solver.Model(name="shaft", gravity=(0.0, 0.0, 0.0))
    m.add_body("b", mass=3.0, inertia=(0.2, 0.3, 0.5), position=(0.3, 0.1, 0.0))
    m.add_joint("j", "revolute", "ground", "b", origin=(0.0, 0.1, 0.0), axis=(0.0, 0.0, 1.0))
    m.add_joint_actuator("motor", "j", force=torque)
    return m


def shaft_angle(res):
    p = res.body_position("b")
    return np.unwrap(np.arctan2(p[:, 1] - 0.1, p[:, 0]))


def slider(kind="prismatic", coordinate="default"):
    m = solver.Model(name="slider", gravity=(0.0, 0.0, 0.0))
    m.add_body("b", mass=3.0, inertia=(0.2, 0.3, 0.5), position=(0.3, 0.1, 0.0))
    m.add_joint("j", kind, "ground", "b", origin=(0.0, 0.1, 0.0), axis=AXIS)
    m.add_joint_actuator("push", "j", force=F, coordinate=coordinate)
    return m


def slider_travel(res):
    p = res.body_position("b")
    return (p - p[0]) @ np.array(AXIS)


def test_a_torque_a_t_turns_a_shaft_by_a_t3_over_6_i_on_the_default_path():
    res = solver.simulate(shaft(), **RUN)
    assert res.status == "ok"
    assert any(e["message"].startswith("step loop in C") for e in res.events)
    inertia = 0.5 + 3.0 * 0.3 ** 2
    exact = A * res.t ** 3 / (6 * inertia)
    np.testing.assert_allclose(shaft_angle(res), exact, rtol=0, atol=10 * RTOL * exact.max())
    generic = solver.simulate(shaft(), codegen=False, **RUN)
    np.testing.assert_allclose(shaft_angle(generic), exact, rtol=0, atol=10 * RTOL * exact.max())
    work = A ** 2 * res.t ** 4 / (8 * inertia)          # ∫ F θ̇ dt = ∫ a t · a t²/(2I) dt: its power F q̇
    np.testing.assert_allclose(res.energy["kinetic"], work, rtol=0, atol=10 * RTOL * work.max())


def test_a_force_moves_a_slider_by_f_t2_over_2_m_on_both_paths():
    exact = F * np.linspace(0.0, 1.0, 11) ** 2 / (2 * 3.0)
    for codegen in ("auto", False):
        res = solver.simulate(slider(), codegen=codegen, **RUN)
        np.testing.assert_allclose(slider_travel(res), exact, rtol=0, atol=10 * RTOL * exact.max())


def test_a_cylindrical_joint_takes_the_coordinate_it_names():
    res = solver.simulate(slider("cylindrical", "translation"), codegen=False, **RUN)
    exact = F * res.t ** 2 / (2 * 3.0)
    np.testing.assert_allclose(slider_travel(res), exact, rtol=0, atol=10 * RTOL * exact.max())
    np.testing.assert_allclose(res.body_angular_velocity("b"), 0.0, atol=1e-12)


def floating_pair(kind):
    """Two free bodies (no gravity) on one joint along z through both CMs, the actuator between them."""
    m = solver.Model(name="pair", gravity=(0.0, 0.0, 0.0))
    m.add_body("i", mass=2.0, inertia=(0.3, 0.3, 0.4), position=(0.0, 0.0, 0.0))
    m.add_body("j", mass=5.0, inertia=(0.4, 0.4, 0.7), position=(0.0, 0.0, 0.5))
    m.add_joint("k", kind, "i", "j", origin=(0.0, 0.0, 0.25), axis=(0.0, 0.0, 1.0))
    m.add_joint_actuator("act", "k", force=f"{A}*t" if kind == "revolute" else F)
    return m


def test_the_reaction_on_body_i_is_equal_and_opposite():
    t = np.linspace(0.0, 1.0, 11)
    res = solver.simulate(floating_pair("revolute"), codegen=False, **RUN)
    spin = A * t ** 2 / 2                              # ∫ a t dt: the angular momentum each body takes
    np.testing.assert_allclose(0.7 * res.body_angular_velocity("j")[:, 2], spin, atol=10 * RTOL * spin.max())
    np.testing.assert_allclose(0.4 * res.body_angular_velocity("i")[:, 2], -spin, atol=10 * RTOL * spin.max())
    res = solver.simulate(floating_pair("prismatic"), codegen=False, **RUN)
    np.testing.assert_allclose(5.0 * res.body_velocity("j")[:, 2], F * t, atol=10 * RTOL * F)
    np.testing.assert_allclose(2.0 * res.body_velocity("i")[:, 2], -F * t, atol=10 * RTOL * F)


def test_a_declared_input_drives_it():
    model = shaft(torque=0.0)
    model.set_field("motor", "gain", 2.0)             # F = gain·input: the input a·t/2 gives a·t
    model.add_input("torque", "forces.motor.force", default=0.0)
    given = solver.simulate(model, inputs={"torque": f"{A / 2}*t"}, codegen=False, **RUN)
    reference = solver.simulate(shaft(), codegen=False, **RUN)
    np.testing.assert_allclose(given.body_position("b"), reference.body_position("b"), rtol=0, atol=1e-12)
    idle = solver.simulate(model, codegen=False, **RUN)
    np.testing.assert_allclose(shaft_angle(idle), 0.0, atol=1e-12)


def test_a_joint_without_the_coordinate_is_a_model_error_naming_the_field():
    m = slider()
    m.add_joint("ball", "spherical", "ground", "b", origin=(0.3, 0.1, 0.0))
    m.add_joint_actuator("bad", "ball")
    assert m.validate() == ["joint_actuator 'bad'.joint: a spherical joint has no coordinate that can be actuated"]
    with pytest.raises(ModelError, match="no coordinate that can be actuated"):
        solver.simulate(m, **RUN)
    m = slider()
    m.add_joint_actuator("bad", "j", coordinate="rotation")
    assert m.validate() == ["joint_actuator 'bad'.coordinate: joint 'j' (prismatic) has coordinates translation; got rotation"]


def test_the_generated_wrench_equals_the_generic_one_off_the_constraint_manifold():
    """Q of the kernels (hook JointActuatorHook) equals the generic evaluator's at random states, with
    actuators on a rotation and on a translation between two moving bodies; an exported FMU would
    offer their forces as inputs."""
    m = floating_pair("revolute")
    m.add_body("c", mass=1.0, inertia=(0.1, 0.2, 0.25), position=(0.4, 0.0, 0.5), orientation=(0.9, 0.1, -0.3, 0.2))
    m.add_joint("s", "cylindrical", "j", "c", origin=(0.2, 0.1, 0.5), axis=(0.3, -0.5, 0.8))
    m.add_joint_actuator("thrust", "s", force="1 + sin(t)", coordinate="translation")
    m.add_joint_actuator("spin", "s", force=-0.7, gain=1.3)
    system = check_kernels(m, seed=3, required=True)
    assert system.interpreted == []
    slots = input_slots(system)
    assert ("forces.thrust.force", "N") in slots and ("forces.spin.force", "N·m") in slots
