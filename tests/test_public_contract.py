"""The public Python contract (README tour, docs/architecture.md): every call that scripts and checks
outside the project rely on, on tiny models with closed-form answers, and the sign conventions.

A pendulum of mass m on a massless rod of length L about a revolute pivot: at rest it stays, the pivot
pushes the bob up with m g; driven as q(t) = 0.5 sin 2t the actuator torque is the inverse dynamics
τ = m L² q̈ + m g L sin q; linearized it swings at √(g/L)/2π."""
import math

import numpy as np
import pytest

import solver

G, MASS, LENGTH = 9.81, 1.0, 1.0


def hanging_pendulum():
    mod = solver.Model(name="contract-pendulum", gravity=(0.0, -G, 0.0))
    mod.add_body("bob", mass=MASS, inertia=(1e-9, 1e-9, 1e-9), position=(0.0, -LENGTH, 0.0),
                 geometry={"shape": "sphere", "radius": 0.05})
    mod.add_joint("pivot", "revolute", "ground", "bob", origin=(0.0, 0.0, 0.0), axis=(0.0, 0.0, 1.0))
    return mod


def driven_pendulum():
    mod = hanging_pendulum()
    mod.add_driver("D", joint="pivot", expression="0.5*sin(2*t)")
    return mod


@pytest.fixture(scope="module")
def driven_run():
    return solver.simulate(driven_pendulum(), t_end=1.0, output_step=0.01)


def test_hanging_pendulum_rests_and_the_pivot_carries_its_weight():
    res = solver.simulate(hanging_pendulum(), t_end=0.5, output_step=0.01)
    t = np.asarray(res.t)
    assert t.ndim == 1 and abs(t[0]) < 1e-12 and abs(t[-1] - 0.5) < 1e-9
    p = np.asarray(res.body_position("bob"))
    assert p.shape == (len(t), 3)
    np.testing.assert_allclose(p, np.tile([0.0, -LENGTH, 0.0], (len(t), 1)), atol=1e-8)
    assert np.asarray(res.body_rotation("bob")).shape == (len(t), 3, 3)
    force, _ = res.joint_reaction("pivot")          # on body_j (the bob) from body_i, at the origin
    np.testing.assert_allclose(np.asarray(force), np.tile([0.0, MASS * G, 0.0], (len(t), 1)), atol=1e-6)
    assert all(k in res.energy for k in ("kinetic", "potential", "strain", "total"))
    assert float(np.max(np.asarray(res.constraint_violation))) < 1e-8


def test_driver_force_is_the_inverse_dynamics_torque(driven_run):
    t = np.asarray(driven_run.t)
    q, qdd = 0.5 * np.sin(2 * t), -2.0 * np.sin(2 * t)
    tau = MASS * LENGTH**2 * qdd + MASS * G * LENGTH * np.sin(q)
    np.testing.assert_allclose(np.asarray(driven_run.driver_force("D")), tau, atol=1e-6 * np.abs(tau).max())
    # a positive joint angle is a right-handed rotation about the joint axis
    x = np.asarray(driven_run.body_position("bob"))[:, 0]
    np.testing.assert_allclose(x, LENGTH * np.sin(q), atol=1e-8)


def test_model_and_results_files_round_trip(tmp_path, driven_run):
    mod = driven_pendulum()
    first, second = tmp_path / "p.mbs.json", tmp_path / "p2.mbs.json"
    mod.save(str(first))
    solver.load_model(str(first)).save(str(second))
    assert first.read_text() == second.read_text()
    driven_run.save(str(tmp_path / "r.h5"))
    back = solver.load_results(str(tmp_path / "r.h5"))
    np.testing.assert_allclose(np.asarray(back.driver_force("D")), np.asarray(driven_run.driver_force("D")))


def test_linearized_pendulum_frequency():
    f = np.asarray(solver.linearize(hanging_pendulum()).frequencies_hz)
    assert f.size >= 1
    assert abs(f[0] - math.sqrt(G / LENGTH) / (2 * math.pi)) < 1e-6


def test_a_ball_dropped_on_a_contact_plane_comes_to_rest_on_it():
    """The contact contract (docs/contact.md): a ball on a ground plane through a contact element;
    the contact force on the ball is zero while it falls and carries its weight m g at rest, the
    ball resting at the static penetration (m g/k)^(1/e)."""
    m = solver.Model(name="contract-ball", gravity=(0.0, -G, 0.0))
    m.add_body("ball", mass=MASS, inertia=(4e-4, 4e-4, 4e-4), position=(0.0, 0.1, 0.0),
               geometry={"shape": "sphere", "radius": 0.05})
    m.add_contact("c1", "ground", "ball", stiffness=1e6, damping=1e3, exponent=1.5, friction=(0.5, 0.4),
                  geometry_i={"shape": "plane", "point": (0, 0, 0), "normal": (0, 1, 0)})
    res = solver.simulate(m, t_end=1.0, output_step=0.01)
    F = np.asarray(res.contact_force("c1"))
    assert F.shape == (len(res.t), 3)
    assert np.all(F[:5] == 0.0)                                     # falling: 0.05 m takes 0.1 s
    assert np.allclose(F[-1], (0.0, MASS * G, 0.0), rtol=0, atol=1e-6 * MASS * G)
    assert abs(res.body_position("ball")[-1, 1] - (0.05 - (MASS * G / 1e6) ** (1 / 1.5))) < 1e-9


def test_a_coupler_holds_two_joint_coordinates_in_ratio_and_reports_its_force(tmp_path):
    """m.add_coupler(name, joint_i, joint_j, ratio, offset, coefficients): θ_j = ratio·θ_i + offset.
    Two pendulums geared 1 : −1 (no gravity), a torque τ on the first: each turns at α = τ / 2I and
    res.coupler_force is the torque on the second along its joint, I α2 = −τ/2; it survives a save."""
    mod = solver.Model(name="contract-gears", gravity=(0.0, 0.0, 0.0))
    for k, x in enumerate((0.0, 1.0)):
        mod.add_body(f"wheel{k}", mass=1.0, inertia=(0.5, 0.5, 1.0), position=(x, 0.0, 0.0))
        mod.add_joint(f"axle{k}", "revolute", "ground", f"wheel{k}", origin=(x, 0.0, 0.0), axis=(0.0, 0.0, 1.0))
    mod.add_coupler("gears", "axle0", "axle1", ratio=-1.0, offset=0.0, coefficients=None)
    mod.add_torque("T", "wheel0", torque=(0.0, 0.0, 2.0))
    res = solver.simulate(mod, t_end=1.0, output_step=0.5)
    w = [np.asarray(res.body_angular_velocity(f"wheel{k}"))[:, 2] for k in (0, 1)]
    np.testing.assert_allclose(w[0], 1.0 * np.asarray(res.t), atol=1e-8)
    np.testing.assert_allclose(w[1], -w[0], atol=1e-8)
    np.testing.assert_allclose(np.asarray(res.coupler_force("gears")), -1.0, atol=1e-8)
    mod.save(str(tmp_path / "g.mbs.json"))
    assert solver.load_model(str(tmp_path / "g.mbs.json")).couplers["gears"].ratio == -1.0
    res.save(str(tmp_path / "g.h5"))
    np.testing.assert_allclose(np.asarray(solver.load_results(str(tmp_path / "g.h5")).coupler_force("gears")), -1.0,
                               atol=1e-8)
