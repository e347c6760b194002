"""The four-bar row benchmark (issue 18): tools/scale_models.fourbar_row(n) and its exact motion from
the 1-DOF reduction (tools/fourbar_row.py), checked against the energy of the whole mechanism summed
body by body, against the revolution time from a quadrature of the energy integral, and (N = 1)
against direct solver runs through the singular horizontal passes."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest
from scipy.integrate import quad

import solver

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
from tools.fourbar_row import (G_ACC, body_names, exact_angle, exact_bodies, inertia_and_moment,  # noqa: E402
                               position_error, reduced_energy)
from tools.scale_models import FOURBAR_ROW, fourbar_row  # noqa: E402


def test_builder_counts_and_start():
    m = fourbar_row(4)
    assert list(m.bodies) == body_names(4)
    assert len(m.joints) == 3 * 4 + 1
    r, v, theta_dot = exact_bodies(4, np.array([0.0, 1e-3]))
    for k, name in enumerate(body_names(4)):
        b = m.bodies[name]
        np.testing.assert_allclose(b.position, r[0, k], atol=1e-15)
        np.testing.assert_allclose(b.velocity, v[0, k], atol=1e-15)
        expected_spin = FOURBAR_ROW["omega"] if name.startswith("R") else 0.0
        assert b.angular_velocity[2] == pytest.approx(expected_spin)
    assert theta_dot[0] == FOURBAR_ROW["omega"]


@pytest.mark.parametrize("n", [1, 7])
def test_reduction_conserves_the_mechanism_energy(n):
    """Kinetic + potential energy summed over the bodies (½ m v² + ½ I_z ω² + m g y) along the exact
    θ(t) stays constant: J and G of the reduction are the mechanism's."""
    t = np.linspace(0.0, 20.0, 2001)
    r, v, theta_dot = exact_bodies(n, t)
    mass, length = FOURBAR_ROW["mass"], FOURBAR_ROW["length"]
    energy = (0.5 * mass * np.sum(v**2, axis=(1, 2))
              + 0.5 * (n + 1) * (mass * length**2 / 12) * theta_dot**2
              + mass * G_ACC * np.sum(r[:, :, 1], axis=1))
    assert np.ptp(energy) < 1e-9 * np.max(np.abs(energy))
    theta, _ = exact_angle(n, t)
    np.testing.assert_allclose(reduced_energy(n, theta, theta_dot), energy, rtol=1e-12, atol=1e-9)


def test_revolution_time_matches_the_energy_integral():
    """Time of one full revolution of the cranks, ∮ dθ / θ̇(θ) with θ̇ from the energy integral
    (scipy quad), against the time the integrated θ(t) takes to turn 2π."""
    n = 40
    J, G = inertia_and_moment(n)
    theta0, omega0 = FOURBAR_ROW["tilt"], FOURBAR_ROW["omega"]
    energy = 0.5 * J * omega0**2 - G * np.cos(theta0)
    period, _ = quad(lambda th: 1.0 / np.sqrt(2.0 * (energy + G * np.cos(th)) / J), theta0, theta0 + 2 * np.pi,
                     epsabs=1e-13, epsrel=1e-13)
    theta, _ = exact_angle(n, np.array([0.0, period]))
    assert theta[1] == pytest.approx(theta0 + 2 * np.pi, abs=1e-9)
    assert 1.0 < period < 3.0     # the row goes round several times in the benchmark's 20 s


@pytest.mark.parametrize("formulation", ["cartesian", "relative"])
def test_single_four_bar_follows_the_reduction_through_singular_passes(formulation):
    """N = 1, 3 s (two horizontal passes), tight tolerances: every body within 2e-5 m of the exact motion."""
    t_end = 3.0
    theta, _ = exact_angle(1, np.array([0.0, t_end]))
    assert theta[1] - theta[0] > np.pi        # passed θ = 3π/2 and 5π/2 (horizontal)
    res = solver.simulate(fourbar_row(1), t_end=t_end, output_step=0.01, formulation=formulation,
                          partitioning="qr", rtol=1e-10, atol=1e-11)
    assert res.status == "ok"
    assert position_error(res, 1) < 2e-5
    e = res.energy["total"]
    assert np.ptp(e) < 1e-6 * np.max(np.abs(e))


# ---- the benchmark of issue 18: N = 40, 20 s (ten revolutions, twenty singular passes) -------------
ROW_TOLERANCE = 1e-3       # m, largest CM distance from the exact motion over the 20 s


@pytest.mark.slow
def test_forty_loop_row_holds_its_exact_motion_on_the_default_settings():
    """The default settings — formulation "auto" (relative here), QR, integrator "auto" (with generated
    kernels: DOP853 stepped in C), rtol 1e-8, atol 1e-10 — hold the row through its twenty singular
    passes (measured N = 40: 6.4e-6 m, energy drift 3.3e-8, 11 s CPU for 20 s; LSODA, the default
    before: 1.2e-5 m, 2.5e-7, 12 s).  Generated kernels as "auto" gives them outside the test suite
    (which turns "auto" off)."""
    compiled = solver.compile_model(fourbar_row(40), codegen="on")
    s = compiled.settings
    assert (s.formulation, s.partitioning, s.integrator, s.rtol, s.atol) == ("relative", "qr", "auto", 1e-8, 1e-10)
    events = []
    res = solver.simulate(compiled, t_end=20.0, output_step=0.01, on_event=events.append)
    assert "step loop in C (Dormand–Prince 8(5,3))" in [e["message"] for e in events]
    assert position_error(res, 40) < ROW_TOLERANCE
    assert res.summary()["energy_drift"] < 1e-5
