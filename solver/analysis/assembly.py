"""Assembly: bring a roughly placed model onto its constraints, and make velocities consistent.

Positions: Gauss–Newton with the minimum-norm correction Δq = −Φ_q⁺ Φ (the closest assembled
configuration to the one the user drew).  Velocities: the weighted least-change projection
    min ½ (q̇ − q̇₀)ᵀ W (q̇ − q̇₀)   s.t.  Φ_q q̇ = ν,
    q̇ = q̇₀ + W⁻¹ Φ_qᵀ (Φ_q W⁻¹ Φ_qᵀ)⁺ (ν − Φ_q q̇₀),
with large weights on the velocities the user gave explicitly so those are kept.
"""
from __future__ import annotations

import numpy as np

from ..errors import SolverError


def assemble_positions(system, q, t, tol=1e-11, max_iter=50):
    """Newton–Raphson (minimum-norm steps) on Φ(q, t) = 0; raises SolverError naming the joints
    whose equations do not close."""
    q = system.normalize(np.array(q, dtype=float))
    for _ in range(max_iter):
        ev = system.constraints(q, t)
        if ev.phi.size == 0 or np.max(np.abs(ev.phi)) < tol:
            return q
        dq, *_ = np.linalg.lstsq(ev.jac, -ev.phi, rcond=None)
        q = q + dq
        if np.linalg.norm(dq) > 1e6 or not np.all(np.isfinite(q)):
            break
    ev = system.constraints(q, t)
    bad = np.nonzero(np.abs(ev.phi) > 1e-6)[0] if np.all(np.isfinite(ev.phi)) else np.arange(len(ev.phi))
    owners = sorted({system.equations[k].owner for k in bad})
    raise SolverError("the model cannot be assembled: these constraints cannot all be satisfied "
                      f"(max |Φ| = {np.max(np.abs(ev.phi)):.3g}); check their positions and axes",
                      time=t, elements=owners)


def consistent_velocities(system, q, qd, t):
    """Weighted least-change projection of q̇ onto Φ_q q̇ = ν (see module docstring)."""
    ev = system.constraints(q, t, level=1)
    if ev.phi.size == 0:
        return qd
    winv = 1.0 / system.velocity_weights()
    JW = ev.jac * winv
    y, *_ = np.linalg.lstsq(JW @ ev.jac.T, ev.nu - ev.jac @ qd, rcond=None)
    return qd + JW.T @ y
