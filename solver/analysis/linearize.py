"""Linearization of constrained systems and natural frequencies (seed paper 4).

At a state (q, q̇, t) the tangent-space (QR) partition gives independent coordinates z with
q = q_ref + V z + U w(z); the reduced equations z̈ = g(z, ż) (paper 4 eq. 24, F* = Nᵀ(M q̈ − Q) = 0,
with N the null-space basis) are perturbed by central differences (paper 4 eqs. 25–30):

    M̂ δz̈ + Ĉ δż + K̂ δz = 0,   M̂ = Nᵀ M N,   K̂ = −M̂ ∂g/∂z,   Ĉ = −M̂ ∂g/∂ż.

Step choice: h = 1e-5 (relative to the coordinate scale, ≥ 1e-5 absolute) with the position
Newton solved to 1e-14, so the truncation error O(h²) and the round-off error O(ε_Newton / h) are
both below 1e-8 relative.  Eigenvalues λ of the first-order form [[0, I], [∂g/∂z, ∂g/∂ż]] are
reported one per conjugate pair; natural frequency |λ|/2π, damping ratio −Re λ/|λ|.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ModelError
from ..partitioning.partition import Partition
from .assembly import assemble_positions, consistent_velocities
from .dynamics import compile_model, resolve_settings, single_threaded_blas

STEP = 1e-5
NEWTON_TOL = 1e-14


@dataclass
class Linearization:
    """Linearized equations M δz̈ + C δż + K δz = 0 in the independent coordinates z."""
    M: np.ndarray
    C: np.ndarray
    K: np.ndarray
    eigenvalues: np.ndarray         # one per conjugate pair, ordered by frequency
    frequencies_hz: np.ndarray      # |λ| / 2π, ascending
    damping_ratios: np.ndarray      # −Re λ / |λ|
    mode_shapes: np.ndarray         # (nq, n_modes): each mode mapped to all coordinates
    q: np.ndarray                   # the state linearized about
    qd: np.ndarray
    t: float
    coordinates_basis: np.ndarray   # N: δq = N δz (to first order)


def linearize(model, state=None, formulation=None):
    """Linearize ``model`` at its initial (assembled) state, or at ``state``: a dict with ``q``
    (and optionally ``qd``, ``t``) in the formulation's coordinates, or ``(results, index)`` for an
    output point of a run."""
    settings = resolve_settings(model, formulation=formulation)
    system = compile_model(model, settings)
    with single_threaded_blas():
        return _linearize(system, state)


def _linearize(system, state):
    q, qd, t = _state(system, state)
    part = Partition.build("qr", system, q, t)
    f = part.dof
    if f == 0:
        raise ModelError("linearize: the model has no degrees of freedom")
    zd0 = part.V.T @ qd

    def accel(z, zd):
        qq, ev = part.positions(system, z, t, q, tol=NEWTON_TOL)
        qqd = part.velocities(ev.jac, ev.nu, zd)
        ev = system.constraints(qq, t, qqd, level=2)
        return part.accelerations(system.mass(qq), system.forces(qq, qqd, t), ev.jac, ev.gamma)[1]

    z0 = np.zeros(f)
    Gz = np.empty((f, f))
    Gzd = np.empty((f, f))
    for k in range(f):
        e = np.zeros(f)
        e[k] = STEP
        Gz[:, k] = (accel(z0 + e, zd0) - accel(z0 - e, zd0)) / (2 * STEP)
        hz = STEP * max(1.0, abs(zd0[k]))
        e[k] = hz
        Gzd[:, k] = (accel(z0, zd0 + e) - accel(z0, zd0 - e)) / (2 * hz)
    ev = system.constraints(q, t, qd, level=2)
    _, _, N = part.accelerations(system.mass(q), system.forces(q, qd, t), ev.jac, ev.gamma)
    Mhat = N.T @ system.mass(q) @ N
    A = np.block([[np.zeros((f, f)), np.eye(f)], [Gz, Gzd]])
    lam, vec = np.linalg.eig(A)
    keep = _one_per_pair(lam)
    lam, vec = lam[keep], vec[:, keep]
    freq = np.abs(lam) / (2 * np.pi)
    order = np.argsort(freq, kind="stable")
    lam, vec, freq = lam[order], vec[:, order], freq[order]
    with np.errstate(invalid="ignore", divide="ignore"):
        zeta = np.where(np.abs(lam) > 0, -lam.real / np.abs(lam), 0.0)
    shapes = N @ vec[:f]
    norms = np.max(np.abs(shapes), axis=0)
    shapes = shapes / np.where(norms > 0, norms, 1.0)
    return Linearization(Mhat, -Mhat @ Gzd, -Mhat @ Gz, lam, freq, zeta, shapes, q, qd, t, N)


def _one_per_pair(lam, tol=1e-9):
    """Indices keeping one eigenvalue per conjugate pair (Im > 0), and every second real one."""
    scale = max(1.0, float(np.max(np.abs(lam)))) if lam.size else 1.0
    complex_idx = [k for k in range(len(lam)) if lam[k].imag > tol * scale]
    real_idx = sorted((k for k in range(len(lam)) if abs(lam[k].imag) <= tol * scale),
                      key=lambda k: abs(lam[k]))
    return np.array(complex_idx + real_idx[::2], dtype=int)


def _state(system, state):
    if state is None:
        q, qd, t = system.initial_state()
        q = assemble_positions(system, q, t)
        return q, consistent_velocities(system, q, qd, t), t
    if isinstance(state, tuple) and len(state) == 2:
        res, k = state
        return np.asarray(res.coordinates[k]), np.asarray(res.velocities[k]), float(res.t[k])
    if isinstance(state, dict) and "q" in state:
        q = np.asarray(state["q"], dtype=float)
        if q.shape != (system.nq,):
            raise ModelError(f"state.q: must have {system.nq} coordinates, got shape {q.shape}")
        t = float(state.get("t", 0.0))
        q = assemble_positions(system, q, t)
        qd = np.asarray(state.get("qd", np.zeros(system.nq)), dtype=float)
        return q, consistent_velocities(system, q, qd, t), t
    raise ModelError("state: must be None, a dict with 'q' (and 'qd', 't'), or (results, index)")
