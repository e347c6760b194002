"""Named outputs (solver/outputs.py): paths and units, and time histories checked against
quantities computed independently (geometry of the recorded positions, closed forms)."""
from __future__ import annotations

import numpy as np
import pytest

import solver
from solver.outputs import output, output_paths

L = 1.0


def looping_pendulum_on_a_slider():
    """A carriage on a prismatic joint along x (driven s = 0.2 sin 3t) carrying a pendulum about z
    that starts fast enough (ω0 = 9 rad/s > 2√(g/L)) to loop over the top: its angle passes ±π."""
    m = solver.Model(name="outputs", gravity=(0.0, -9.81, 0.0))
    m.add_body("cart", mass=2.0, inertia=(0.1, 0.1, 0.1), position=(0.0, 0.0, 0.0))
    m.add_body("bob", mass=1.0, inertia=(1e-3, 1e-3, 1e-3), position=(0.0, -L, 0.0),
               velocity=(9.0 * L, 0.0, 0.0), angular_velocity=(0.0, 0.0, 9.0))
    m.add_joint("rail", "prismatic", "ground", "cart", axis=(1.0, 0.0, 0.0))
    m.add_joint("pivot", "revolute", "cart", "bob", origin=(0.0, 0.0, 0.0), axis=(0.0, 0.0, 1.0))
    m.add_driver("push", joint="rail", expression="0.2*sin(3*t)")
    return m


@pytest.fixture(scope="module")
def run():
    m = looping_pendulum_on_a_slider()
    return m, solver.simulate(m, t_end=1.5, output_step=0.01, formulation="relative", rtol=1e-9, atol=1e-11)


def test_paths_and_units():
    m = looping_pendulum_on_a_slider()
    offered = {o.path: o.unit for o in output_paths(m)}
    assert offered["bodies.bob.position.x"] == "m" and offered["bodies.cart.angular_acceleration.z"] == "rad/s²"
    assert offered["joints.pivot.rotation"] == "rad" and offered["joints.rail.translation"] == "m"
    assert offered["joints.rail.reaction_torque.y"] == "N·m" and offered["drivers.push.force"] == "N"
    assert len(offered) == 2 * 15 + 2 * (6 + 1) + 1


def test_histories_equal_independent_values(run):
    m, res = run
    r_bob, r_cart = res.body_position("bob"), res.body_position("cart")
    # the rotation from the geometry of the recorded positions, unwrapped: it loops past π
    rel = r_bob - r_cart
    angle = np.unwrap(np.arctan2(rel[:, 0], -rel[:, 1]))
    theta = output(m, "joints.pivot.rotation").evaluate(res, m)
    assert theta.max() > 1.5 * np.pi
    assert np.allclose(theta, angle, atol=1e-9, rtol=0)
    s = output(m, "joints.rail.translation").evaluate(res, m)
    assert np.allclose(s, 0.2 * np.sin(3 * res.t), atol=1e-7, rtol=0)
    assert np.array_equal(output(m, "bodies.bob.velocity.y").evaluate(res, m), res.body_velocity("bob")[:, 1])
    assert np.array_equal(output(m, "joints.pivot.reaction_force.x").evaluate(res, m),
                          res.joint_reaction("pivot")[0][:, 0])
    assert np.array_equal(output(m, "drivers.push.force").evaluate(res, m), res.driver_force("push"))


@pytest.mark.parametrize("path, message", [
    ("bob.position.x", r"must be bodies.NAME.QUANTITY.x\|y\|z"),
    ("bodies.ghost.position.x", r"no body named 'ghost' \(the model's bodies: cart, bob\)"),
    ("bodies.bob.position.w", r"body 'bob' offers acceleration.x, .*position.x, position.y, position.z"),
    ("joints.pivot.translation", r"joint 'pivot' offers reaction_force.x, .*rotation"),
    ("drivers.push.torque", r"driver 'push' offers force"),
])
def test_bad_paths_are_refused_naming_the_choices(path, message):
    with pytest.raises(solver.ModelError, match=message):
        output(looping_pendulum_on_a_slider(), path)


@pytest.mark.slow
def test_joint_coordinate_is_the_same_in_both_formulations(run):
    m, relative = run
    cartesian = solver.simulate(m, t_end=1.5, output_step=0.01, formulation="cartesian", rtol=1e-9, atol=1e-11)
    theta = output(m, "joints.pivot.rotation")
    assert np.allclose(theta.evaluate(cartesian, m), theta.evaluate(relative, m), atol=1e-5, rtol=0)
