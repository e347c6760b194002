"""Assembly: bring a roughly placed model onto its constraints, and make velocities consistent.

Held joints (``simulate(..., hold=[joint names])``) keep the relative position they are drawn in:
their joint coordinates, zero at the drawn configuration, are held at zero by temporary drivers
while the rest of the mechanism moves to close its loops.

Positions: Gauss–Newton with the minimum-norm correction Δq = −Φ_q⁺ Φ (the closest assembled
configuration to the one the user drew).  Velocities: the weighted least-change projection
    min ½ (q̇ − q̇₀)ᵀ W (q̇ − q̇₀)   s.t.  Φ_q q̇ = ν,
    q̇ = q̇₀ + W⁻¹ Φ_qᵀ (Φ_q W⁻¹ Φ_qᵀ)⁺ (ν − Φ_q q̇₀),
with large weights on the velocities the user gave explicitly so those are kept.
"""
from __future__ import annotations

import numpy as np

from ..errors import ModelError, SolverError
from ..partitioning.block import block_rows
from ..partitioning.partition import SPARSE_RANK_MIN, independent_rows


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
                      time=t, elements=owners, kind="assembly")


def consistent_velocities(system, q, qd, t):
    """Weighted least-change projection of q̇ onto Φ_q q̇ = ν (see module docstring), over the rows a
    partition would take as independent (:func:`independent_rows`: a row of round-off, which the
    tree already satisfies, would otherwise be solved as a constraint and take the motion away).
    From SPARSE_RANK_MIN independent rows on, (Φ_q W⁻¹ Φ_qᵀ) y = ν − Φ_q q̇₀ by a sparse LU (it is
    positive definite on independent rows: :func:`solver.partitioning.rank.weighted_projection`)."""
    ev = system.constraints(q, t, level=1)
    if ev.phi.size == 0:
        return qd
    if not np.all(np.isfinite(ev.jac)) or block_rows(system, "qr", ev.jac) is not None:
        rows = np.arange(ev.phi.size)       # (an open tree's normalization rows: independent, no QR of Φ_qᵀ)
    else:
        rows, _ = independent_rows(ev.jac)
    J = ev.jac[rows]
    residual = ev.nu[rows] - J @ qd
    if not np.any(residual):
        return qd                 # already consistent (e.g. at rest): the projection's correction is 0
    winv = 1.0 / system.velocity_weights()
    y = None
    if len(rows) >= SPARSE_RANK_MIN:
        from ..partitioning.rank import weighted_projection
        y = weighted_projection(J, winv, residual)
    if y is None:
        y, *_ = np.linalg.lstsq((J * winv) @ J.T, residual, rcond=None)
    return qd + winv * (J.T @ y)


def holding_model(model, hold):
    """A copy of ``model`` in which every coordinate of the ``hold`` joints is prescribed to stay at
    its drawn value (0) — used only to assemble; coordinates already driven are left to their driver,
    those a coupler sets to their coupler."""
    m = model.copy()
    problems = []
    for name in hold:
        joint = m.joints.get(name)
        if joint is None or not joint.coordinates():
            valid = [j.name for j in m.joints.values() if j.coordinates()]
            problems.append(f"hold: '{name}' is not a joint with coordinates (joints: {', '.join(valid) or 'none'})")
            continue
        driven = {m.driver_coordinate(d.name) for d in m.drivers.values() if d.joint == name}
        driven |= {m.coupler_coordinates(c.name)[1] for c in m.couplers.values() if c.joint_j == name}
        for coord in joint.coordinates():
            if coord not in driven:
                m.add_driver(f"hold {name} {coord}", joint=name, expression=0, coordinate=coord)
    if problems:
        raise ModelError(problems)
    return m
