"""Exact motion of the four-bar row (``tools.scale_models.fourbar_row``) from its 1-DOF reduction.

On its regular branch the row of N parallelogram four-bars moves with one coordinate: every crank
R0..RN turns by the same angle θ (from straight down, about +z) and every coupler C1..CN translates
with the crank tips.  With links of length ℓ, coupler length (pivot spacing) s, masses m_r, m_c and
crank inertia I_r about the CM (slender rods: m_r ℓ²/12):

    T = ½ J θ̇²,   J = (N+1)(I_r + m_r ℓ²/4) + N m_c ℓ²
    V = −G cos θ,  G = g ℓ ((N+1) m_r / 2 + N m_c)

and Lagrange's equation d/dt ∂T/∂θ̇ − ∂T/∂θ + ∂V/∂θ = 0 is J θ̈ + G sin θ = 0, integrated here by
scipy's DOP853 at rtol 1e-12.  The full mechanism may fold into an anti-parallelogram at every
horizontal pass (θ = π/2, 3π/2: all links collinear with the ground line, the DOF jumps from 1 to
N+1); the reduction is the motion that stays on the parallelogram branch, which is what the
integrated multibody model must follow.

``position_error(results, n)`` is the benchmark's measure: the largest distance of any body's CM
from its exact position over all output points of a run.
"""
from __future__ import annotations

import os
import sys

import numpy as np
from scipy.integrate import solve_ivp

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from tools.scale_models import FOURBAR_ROW  # noqa: E402

G_ACC = 9.81
RTOL = 1e-12


def inertia_and_moment(n):
    """(J, G) of the reduced equation J θ̈ + G sin θ = 0 (module docstring; all links of mass m,
    the couplers translate, so their length and inertia do not enter)."""
    length, mass = FOURBAR_ROW["length"], FOURBAR_ROW["mass"]
    inertia_rod = mass * length**2 / 12
    J = (n + 1) * (inertia_rod + mass * length**2 / 4) + n * mass * length**2
    G = G_ACC * length * ((n + 1) * mass / 2 + n * mass)
    return J, G


def reduced_energy(n, theta, theta_dot):
    """T + V = ½ J θ̇² − G cos θ of the reduction."""
    J, G = inertia_and_moment(n)
    return 0.5 * J * np.asarray(theta_dot)**2 - G * np.cos(theta)


def exact_angle(n, times, theta0=FOURBAR_ROW["tilt"], omega0=FOURBAR_ROW["omega"]):
    """(θ, θ̇) at ``times`` (increasing, from 0) of J θ̈ + G sin θ = 0 from θ(0) = θ0, θ̇(0) = ω0."""
    J, G = inertia_and_moment(n)
    times = np.asarray(times, dtype=float)
    sol = solve_ivp(lambda _, y: (y[1], -G / J * np.sin(y[0])), (0.0, float(times[-1])), (theta0, omega0),
                    method="DOP853", t_eval=times, rtol=RTOL, atol=RTOL)
    if not sol.success:
        raise RuntimeError(f"four-bar row reduction: {sol.message}")
    return sol.y[0], sol.y[1]


def exact_bodies(n, times):
    """Exact CM positions and velocities (len(times), 2n+1, 3) of the bodies in model order
    (R0..Rn, C1..Cn), and θ̇ (every crank's angular velocity about +z; the couplers do not turn)."""
    length, spacing = FOURBAR_ROW["length"], FOURBAR_ROW["spacing"]
    theta, theta_dot = exact_angle(n, times)
    u = np.stack([np.sin(theta), -np.cos(theta), np.zeros_like(theta)], axis=1)          # crank direction
    du = np.stack([np.cos(theta), np.sin(theta), np.zeros_like(theta)], axis=1) * theta_dot[:, None]
    pivots = np.array([[k * spacing, 0.0, 0.0] for k in range(n + 1)])
    mids = np.array([[(k - 0.5) * spacing, 0.0, 0.0] for k in range(1, n + 1)])
    r = np.concatenate([pivots[None] + 0.5 * length * u[:, None], mids[None] + length * u[:, None]], axis=1)
    v = np.concatenate([np.repeat(0.5 * length * du[:, None], n + 1, axis=1),
                        np.repeat(length * du[:, None], n, axis=1)], axis=1)
    return r, v, theta_dot


def body_names(n):
    """Body names of ``fourbar_row(n)`` in model order."""
    return [f"R{k}" for k in range(n + 1)] + [f"C{k}" for k in range(1, n + 1)]


def position_error(results, n):
    """max over output points and bodies of |r_CM − r_CM exact| (m) of a run of ``fourbar_row(n)``."""
    exact, _, _ = exact_bodies(n, results.t)
    got = np.stack([results.body_position(b) for b in body_names(n)], axis=1)
    return float(np.max(np.linalg.norm(got - exact, axis=2)))


def pass_times(n, t_end, samples=100_000):
    """Times of the horizontal (singular) passes in [0, t_end]: θ = π/2 + kπ, each located by
    linear interpolation between samples of the exact motion (error ~ (t_end/samples)² θ̈/θ̇)."""
    t = np.linspace(0.0, t_end, samples + 1)
    theta, _ = exact_angle(n, t)
    k = np.floor((theta - np.pi / 2) / np.pi)
    i = np.nonzero(np.diff(k))[0]
    target = np.pi / 2 + np.pi * np.maximum(k[i], k[i + 1])
    return t[i] + (t[i + 1] - t[i]) * (target - theta[i]) / (theta[i + 1] - theta[i])
