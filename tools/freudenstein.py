"""Closed-form position analysis of a planar four-bar (Freudenstein (1955), "Approximate synthesis
of four-bar linkages", Trans. ASME 77): the reference the four-bar tests compare a run with.

With the ground pivots A (crank) and D (rocker) on the x axis a distance d apart, crank a at θ2,
coupler b, rocker c at θ4 (the angle of D→C from x), the loop a e^{iθ2} + b e^{iθ3} = d + c e^{iθ4}
gives K1 cos θ4 − K2 cos θ2 + K3 = cos(θ2 − θ4) with K1 = d/a, K2 = d/c,
K3 = (a² − b² + c² + d²)/(2ac), i.e. P cos θ4 + Q sin θ4 = R with P = K1 − cos θ2, Q = −sin θ2,
R = K2 cos θ2 − K3: θ4 = atan2(Q, P) ± acos(R/√(P² + Q²)), one root per assembly branch.
"""
from __future__ import annotations

import numpy as np


def rocker_angle(theta2, a, b, c, d, near):
    """θ4 for the crank angles ``theta2`` (array), on the branch nearest the angles ``near``."""
    theta2 = np.asarray(theta2, float)
    k1, k2, k3 = d / a, d / c, (a * a - b * b + c * c + d * d) / (2 * a * c)
    P, Q, R = k1 - np.cos(theta2), -np.sin(theta2), k2 * np.cos(theta2) - k3
    base, spread = np.arctan2(Q, P), np.arccos(R / np.hypot(P, Q))
    roots = np.stack([base + spread, base - spread])
    wrapped = np.angle(np.exp(1j * (roots - near)))
    return near + wrapped[np.argmin(np.abs(wrapped), axis=0), np.arange(roots.shape[1])]


def angle_error(theta, exact):
    """Largest |θ − θ_exact| with the difference wrapped to (−π, π]."""
    return float(np.max(np.abs(np.angle(np.exp(1j * (np.asarray(theta) - exact))))))
