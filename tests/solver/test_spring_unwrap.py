"""A rotational spring on a joint turning more than π between output points (issue #27, fuzz seed
2033): the post-processed spring energy and reactions take the spring's angle the integration tracked
(the relative formulation's joint coordinate, the Cartesian step loop's unwrapped angle at the output
point), never one unwrapped again from output row to row, which loses a turn per row here.

A body spinning on a revolute about its CM axis (no gravity) with a rotational spring k: θ̈ = −(k/J) θ,
θ(0) = 0, θ̇(0) = ω0, so θ(t) = (ω0/Ω) sin Ωt with Ω = √(k/J), and ½Jθ̇² + ½kθ² = ½Jω0² (closed form).
ω0 = 500 rad/s turns the body 5 rad between the 10 ms output points; over 0.1 s θ reaches 48 rad and
the spring holds 288 J of the 1250 J.  A re-unwrapped angle stays within π of the previous row's and reports
at most ½kπ² ≈ 1.2 J."""
from __future__ import annotations

import numpy as np
import pytest

import solver

J, K, OMEGA0, T_END = 0.01, 0.25, 500.0, 0.1
RATE = np.sqrt(K / J)                 # Ω (rad/s)
E0 = 0.5 * J * OMEGA0**2              # the conserved total (J)
# the spring energy to within this share of E0: the runs' default tolerances (rtol 1e-6 per step over
# ~100 steps) keep θ within ~1e-5 relative; a lost turn is an error of k(2π)·θ ≈ 75 J = 6e-2 E0
BOUND = 1e-4


def spinning_spring():
    m = solver.Model(name="spin", gravity=(0.0, 0.0, 0.0))
    m.add_body("rotor", mass=1.0, inertia=(0.02, 0.02, J), angular_velocity=(0.0, 0.0, OMEGA0))
    m.add_joint("axle", "revolute", "ground", "rotor", origin=(0.0, 0.0, 0.0), axis=(0.0, 0.0, 1.0))
    m.add_rotational_spring_damper("coil", "axle", stiffness=K)
    return m


@pytest.mark.parametrize("formulation", [None, "cartesian"])     # None: the defaults (generated kernels)
def test_spring_energy_of_a_joint_turning_more_than_pi_between_outputs(formulation):
    options = {} if formulation is None else {"formulation": formulation}
    r = solver.simulate(spinning_spring(), t_end=T_END, output_step=0.01, **options)
    assert r.status == "ok"
    t = np.asarray(r.t)
    spring, kinetic = np.asarray(r.energy["spring"]), np.asarray(r.energy["kinetic"])
    exact = 0.5 * K * (OMEGA0 / RATE * np.sin(RATE * t)) ** 2
    assert np.max(np.abs(spring - exact)) < BOUND * E0
    assert np.max(np.abs(kinetic + spring - E0)) < BOUND * E0
    # the reaction moment about the axis is zero: the spring's torque is an applied load, not a reaction
    moment = np.asarray(r.joint_reaction("axle", "joint")[1])[:, 2]
    assert np.max(np.abs(moment)) < BOUND * K * OMEGA0 / RATE


@pytest.mark.parametrize("formulation", [None, "cartesian"])
def test_the_joint_rotation_output_follows_a_joint_turning_more_than_pi_between_outputs(formulation):
    """The output ``joints.axle.rotation`` (solver/outputs.py) rebuilds θ from the recorded poses: each
    row's angle on the branch nearest the previous one advanced by the trapezoid of the recorded rate
    (5 rad between rows here; the prediction's error (Δt³/12)·Ω²ω0 ≈ 2e-3 rad, far below π).  Against
    θ = (ω0/Ω) sin Ωt within the runs' tolerance share of its amplitude."""
    from solver.outputs import output
    options = {} if formulation is None else {"formulation": formulation}
    m = spinning_spring()
    r = solver.simulate(m, t_end=T_END, output_step=0.01, **options)
    theta = output(m, "joints.axle.rotation").evaluate(r, m)
    exact = OMEGA0 / RATE * np.sin(RATE * np.asarray(r.t))
    assert np.max(np.abs(theta - exact)) < BOUND * OMEGA0 / RATE
