"""The friction coefficient of the Adams joint-friction model: a smooth stick–slip law of the slip
speed v ≥ 0 with the stiction transition velocity v_s and the friction transition velocity v_t > v_s
(Adams/Solver FRICTION statement; STEP from :mod:`solver.math.impact`):

    μ(v) = step(v, −v_s, −μ_s, v_s, μ_s)      0 ≤ v < v_s      (stiction: 0 at v = 0, μ_s at v_s)
    μ(v) = step(v, v_s, μ_s, v_t, μ_d)        v_s ≤ v < v_t    (breakaway: μ_s → μ_d)
    μ(v) = μ_d                                v ≥ v_t          (sliding)

The friction force is −μ(|u|) S u/|u| for a slip velocity u and a normal load S; it is continuous
(μ(0) = 0, slope dμ/dv = 3μ_s/(2v_s) at 0), so an adaptive integrator can follow stick and slip.
Sticking is modelled as creep: under a tangential load F < μ_s S the slip settles at the speed
v_c < v_s where μ(v_c) S = F.
"""
from __future__ import annotations

import numpy as np

from .impact import step


def friction_coefficient(v, mu_s, mu_d, v_s, v_t):
    """μ(v) of the module docstring for slip speeds v ≥ 0 (numbers or arrays)."""
    return np.where(v < v_s, step(v, -v_s, -mu_s, v_s, mu_s), step(v, v_s, mu_s, v_t, mu_d))


def friction_per_speed(v, mu_s, mu_d, v_s, v_t):
    """μ(v)/v, with its limit 3μ_s/(2v_s) at v = 0: the friction force is −(μ/v) S u."""
    safe = np.where(v > 0.0, v, 1.0)
    return np.where(v > 0.0, friction_coefficient(v, mu_s, mu_d, v_s, v_t) / safe, 1.5 * mu_s / v_s)

