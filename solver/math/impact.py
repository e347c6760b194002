"""The Adams STEP cubic and IMPACT contact law, and the two-sided joint stop built from it.

STEP (Adams/Solver function STEP(x, x0, h0, x1, h1)): a cubic blend from h0 to h1 with zero slope at
both ends,

    s = clip((x − x0)/(x1 − x0), 0, 1),   step = h0 + (h1 − h0) s² (3 − 2 s).

IMPACT (Adams/Solver function IMPACT(x, ẋ, x1, k, e, c_max, d)): a one-sided contact force that acts
when the distance x falls below x1.  Written with the penetration δ = x1 − x ≥ 0 and its rate δ̇ = −ẋ,

    F = k δ^e + step(δ, 0, 0, d, c_max) δ̇          (δ > 0; F = 0 otherwise),

pushing x back up.  The damping coefficient rises smoothly from 0 at first touch to c_max at the
penetration d, so the force is continuous at contact.  As in Adams the force is not clipped: on a
fast separation the damping term may pull (F < 0) for a moment.  ``push_only`` clips it,
F = max(F, 0), as a constraint that only pushes (MuJoCo's joint limits): while clipped the stop
does no work and the potential it releases is dissipated, P = −k δ^e δ̇ ≥ 0.

A joint stop (:func:`stop_load`) is two IMPACTs on a joint coordinate q with lower and upper limits:
δ_l = q_lower − q below the lower limit (force +F along q) and δ_u = q − q_upper above the upper limit
(force −F).  Its potential is V = k δ^(e+1)/(e+1) and the power it dissipates P = c(δ) δ̇² ≥ 0
(the work of the damping term); the stop's spring returns what it stores.
"""
from __future__ import annotations

import numpy as np


def step(x, x0, h0, x1, h1):
    """Adams STEP: h0 for x ≤ x0, h1 for x ≥ x1, the cubic h0 + (h1 − h0) s²(3 − 2s) between."""
    s = np.clip((x - x0) / (x1 - x0), 0.0, 1.0)
    return h0 + (h1 - h0) * s * s * (3.0 - 2.0 * s)


def impact(delta, rate, k, e, c, d, push_only=False):
    """(force F, dissipated power P, potential V) of the IMPACT law at penetration ``delta`` (δ, > 0
    in contact) and penetration rate ``rate`` (δ̇): F = k δ^e + step(δ, 0, 0, d, c) δ̇,
    P = step(δ, 0, 0, d, c) δ̇², V = k δ^(e+1)/(e+1); all zero for δ ≤ 0.  ``push_only``: F < 0
    becomes 0 and P = −k δ^e δ̇ there (module docstring).  Numbers or arrays."""
    pen = np.maximum(delta, 0.0)
    damping = np.where(delta > 0.0, step(pen, 0.0, 0.0, d, c), 0.0)
    spring = k * pen ** e
    force = spring + damping * rate
    if push_only:
        return np.maximum(force, 0.0), np.where(force < 0.0, -spring * rate, damping * rate * rate), \
            k * pen ** (e + 1.0) / (e + 1.0)
    return force, damping * rate * rate, k * pen ** (e + 1.0) / (e + 1.0)


def stop_load(q, qd, lower, upper, k, e, c, d, push_only=False):
    """(generalized force along q, dissipated power, potential) of a two-sided stop on coordinate q
    (rate q̇) with limits ``lower`` and ``upper`` (None: no stop on that side), by :func:`impact`."""
    force = power = energy = 0.0
    if lower is not None:
        f, p, v = impact(lower - q, -qd, k, e, c, d, push_only)
        force, power, energy = force + f, power + p, energy + v
    if upper is not None:
        f, p, v = impact(q - upper, qd, k, e, c, d, push_only)
        force, power, energy = force - f, power + p, energy + v
    return force, power, energy
