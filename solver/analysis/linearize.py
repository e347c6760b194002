"""Linearization of constrained systems, natural frequencies and mode shapes (Bae, Yang & Seo (2003)).

At a state (q, q̇, t) the tangent-space (QR) partition gives independent coordinates z with
q = q_ref + V z + U w(z) (Kim & Yoo (1997) eqs. 9–14).  The reduced equations F* = Nᵀ(M q̈ − Q) = 0
(Bae, Yang & Seo (2003) eq. 24, N a null-space basis of Φ_q, eqs. 21–23), solved for z̈ = g(z, ż), hold the
position, velocity and acceleration constraints exactly (the partition's Newton, Φ_q q̇ = ν and
Φ_q q̈ = γ), so perturbing them by central differences is Bae, Yang & Seo (2003)'s eqs. 25–29 with the dependent
variations eliminated by the constraints; comparing with eq. 30

    M̂ δz̈ + Ĉ δż + K̂ δz = 0,   M̂ = Nᵀ M N,   K̂ = −M̂ ∂g/∂z,   Ĉ = −M̂ ∂g/∂ż.

Step choice: h = 1e-5 in z (m or rad) and h·max(1, |ż_k|) in ż, with the position Newton solved
to 1e-14: the truncation error O(h²) ≈ 1e-10 and the round-off O(ε_Newton / h) ≈ 1e-9 are both
below 1e-8 relative (tests check 1e-6 against closed forms).

Eigenvalues λ of the first-order form [[0, I], [∂g/∂z, ∂g/∂ż]] (= [[0, I], [−M̂⁻¹K̂, −M̂⁻¹Ĉ]]):
a complex-conjugate pair is one oscillatory mode (the member with Im λ > 0), every real
eigenvalue is a mode of its own — an overdamped pair gives two, a static instability (an inverted
pendulum, a mechanism released above its singular position) the pair ±a, both reported.  Natural
frequency |λ|/2π, damping ratio −Re λ/|λ| (1 for a decaying real mode, −1 for a growing one).
A mode is unstable when Re λ > τ.  A free coordinate (δz̈ = 0, a double zero eigenvalue) perturbed
by an error E of ∂g/∂z splits into ±√‖E‖ (Wilkinson, *The Algebraic Eigenvalue Problem*, 1965,
§2.19), so slower growth is not resolved.  E is estimated by differencing again with step 2h
(E ≈ G(h) − G(2h): the round-off part dominates and is halved at 2h, the truncation part grows
fourfold), τ = max(2 √‖G(h) − G(2h)‖₂, 1e-9 max(1, |λ|max)) (the second term: eig's round-off).
Measured τ: 1e-4 on a pendulum, 0.06 on the flexible four-bar sample (whose swing grows at
1.58 1/s), 6 on a stiff beam between two ball joints (modes up to 16 000 rad/s), whose free spin
comes out at 1.4 rad/s.

Where to linearize: K̂ and Ĉ are exact tangents of the reduced equations at any state, but at a
state with q̈ ≠ 0 they depend on the choice of coordinates (the terms ∂N/∂z·M q̈ differ between
the Cartesian and the relative formulation), so their eigenvalues are not "the" natural
frequencies.  At a static equilibrium (q̇ = 0, q̈ = 0) they do not depend on the coordinates:
use ``state="equilibrium"`` (:func:`solver.analysis.equilibrium.static_equilibrium` first).

Mode shapes: the eigenvector's δz mapped by N to all coordinates (δq = N δz), scaled so its
largest component is 1 (real); and as body motions, the CM translation δr and small rotation δθ
(global) of every body, from the linear velocity map q̇ ↦ (v, ω) applied to δq.  Flexible bodies
(floating frame r, p and modal coordinates a, Kim & Yoo (1997) eq. 5: node k at r + A(p)(x_k + Φ_k a),
:mod:`solver.flexible.floating`) add their frame's motion δr, δθ = A(p)·2 L(p) δp (the
body-frame angular velocity ω' = 2 L ṗ mapped to global) and the nodes' elastic displacements per mode δu_k = Φ_k δa.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.spatial.transform import Rotation

from ..compile import CompiledModel, for_analysis
from ..errors import ModelError
from ..math.rotations import L_matrix, rotation_matrix
from ..model.model import Model
from ..partitioning.choose import build_partition
from .assembly import assemble_positions, consistent_velocities
from .threads import single_threaded_blas

STEP = 1e-5
NEWTON_TOL = 1e-14


@dataclass
class Linearization:
    """Linearized equations M δz̈ + C δż + K δz = 0 in the independent coordinates z."""
    M: np.ndarray
    C: np.ndarray
    K: np.ndarray
    eigenvalues: np.ndarray         # one per conjugate pair and every real one, ordered by frequency
    frequencies_hz: np.ndarray      # |λ| / 2π, ascending
    damping_ratios: np.ndarray      # −Re λ / |λ|
    unstable: np.ndarray            # bool per mode: Re λ > growth_tolerance
    growth_tolerance: float         # τ (1/s): growth slower than this is not resolved (module docstring)
    mode_shapes: np.ndarray         # (nq, n_modes): each mode mapped to all coordinates
    q: np.ndarray                   # the state linearized about
    qd: np.ndarray
    t: float
    coordinates_basis: np.ndarray   # N: δq = N δz (to first order)
    body_names: list                # bodies of body_positions / body_modes, in result order
    body_positions: np.ndarray      # (nb, 3) CM positions at the state, global
    body_rotations: np.ndarray      # (nb, 3, 3) body-to-global rotations at the state
    body_modes: np.ndarray          # (n_modes, nb, 6) complex: [δr, δθ] of each body, global
    flexible_names: list = field(default_factory=list)   # flexible bodies, in the formulation's order
    flexible_positions: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))   # (F, 3) frame origins r
    flexible_rotations: np.ndarray = field(default_factory=lambda: np.zeros((0, 3, 3)))  # (F, 3, 3) frames A
    flexible_modes: np.ndarray = field(default_factory=lambda: np.zeros((0, 0, 6)))    # (n_modes, F, 6) complex
    node_displacements: list = field(default_factory=list)  # per flexible body (nodes, 3) u = Φ a at the state
    node_modes: list = field(default_factory=list)          # per flexible body (n_modes, nodes, 3) complex Φ δa

    def body_poses(self, mode, s):
        """{body: (position, rotation)} displaced by s times the real part of mode ``mode``:
        r = r₀ + s δr, A = exp(s δθ̃) A₀ (exact rotation of the small-rotation vector)."""
        d = np.real(self.body_modes[mode]) * s
        return {b: (self.body_positions[k] + d[k, :3],
                    Rotation.from_rotvec(d[k, 3:]).as_matrix() @ self.body_rotations[k])
                for k, b in enumerate(self.body_names)}

    def flexible_poses(self, mode, s):
        """{flexible body: (r, A, u (nodes, 3))} displaced by s times the real part of mode ``mode``:
        floating frame r = r₀ + s δr, A = exp(s δθ̃) A₀ and the nodes' elastic displacements in it
        u = Φ (a₀ + s δa) (node k drawn at r + A (x_k + u_k)); {} for a model without flexible bodies."""
        d = np.real(self.flexible_modes[mode]) * s if self.flexible_names else None
        return {b: (self.flexible_positions[k] + d[k, :3],
                    Rotation.from_rotvec(d[k, 3:]).as_matrix() @ self.flexible_rotations[k],
                    self.node_displacements[k] + s * np.real(self.node_modes[k][mode]))
                for k, b in enumerate(self.flexible_names)}


def linearize(model: Model | CompiledModel, state: str | dict | tuple | None = None,
              formulation: str | None = None) -> Linearization:
    """Linearize ``model`` at its initial (assembled) state, or at ``state``: ``"equilibrium"``
    (the static equilibrium near the initial configuration, at rest), a dict with ``q`` (and
    optionally ``qd``, ``t``) in the formulation's coordinates (e.g. ``static_equilibrium(...).state``),
    or ``(results, index)`` for an output point of a run.  Raises ModelError for a bad state or a
    model without degrees of freedom, SolverError when the equilibrium is not found."""
    compiled = for_analysis(model, formulation)
    if isinstance(state, str) and state == "equilibrium":
        from .equilibrium import static_equilibrium
        state = static_equilibrium(compiled).state
    with single_threaded_blas():
        return _linearize(compiled.system.workspace(), state)


def _linearize(system, state):
    """The linearization of ``system`` (a workspace: this evaluates it) at ``state``."""
    q, qd, t = _state(system, state)
    part = build_partition("qr", system, q, t)
    f = part.dof
    if f == 0:
        raise ModelError("linearize: the model has no degrees of freedom")
    zd0 = part.zd_of(qd)

    def accel(z, zd):
        qq, ev = part.positions(system, z, t, q, tol=NEWTON_TOL)
        qqd = part.velocities(ev.jac, ev.nu, zd)
        ev = system.constraints(qq, t, qqd, level=2)
        return part.accelerations(system.mass(qq), system.forces(qq, qqd, t), ev.jac, ev.gamma)[1]

    z0 = np.zeros(f)
    Gz = np.empty((f, f))
    Gz2 = np.empty((f, f))          # with step 2h: the error estimate of the module docstring
    Gzd = np.empty((f, f))
    for k in range(f):
        e = np.zeros(f)
        e[k] = STEP
        Gz[:, k] = (accel(z0 + e, zd0) - accel(z0 - e, zd0)) / (2 * STEP)
        Gz2[:, k] = (accel(z0 + 2 * e, zd0) - accel(z0 - 2 * e, zd0)) / (4 * STEP)
        hz = STEP * max(1.0, abs(zd0[k]))
        e[k] = hz
        Gzd[:, k] = (accel(z0, zd0 + e) - accel(z0, zd0 - e)) / (2 * hz)
    ev = system.constraints(q, t, qd, level=2)
    _, _, N = part.accelerations(system.mass(q), system.forces(q, qd, t), ev.jac, ev.gamma)
    Mhat = N.T @ system.mass(q) @ N
    A = np.block([[np.zeros((f, f)), np.eye(f)], [Gz, Gzd]])
    lam, vec = np.linalg.eig(A)
    lam, vec = _one_per_pair(lam, vec)
    growth_tol = max(2.0 * np.sqrt(np.linalg.norm(Gz - Gz2, 2)),
                     1e-9 * max(1.0, np.abs(lam).max(initial=0.0)))
    freq = np.abs(lam) / (2 * np.pi)
    order = np.argsort(freq, kind="stable")
    lam, vec, freq = lam[order], vec[:, order], freq[order]
    with np.errstate(invalid="ignore", divide="ignore"):
        zeta = np.where(np.abs(lam) > 0, -lam.real / np.abs(lam), 0.0)
    shapes = _normalized(N @ vec[:f])
    rest = system.frames(q, np.zeros(system.nq))
    return Linearization(Mhat, -Mhat @ Gzd, -Mhat @ Gz, lam, freq, zeta, lam.real > growth_tol, growth_tol,
                         shapes, q, qd, t, N, list(system.body_names), rest.r.copy(), rest.A.copy(),
                         _body_modes(system, q, shapes), **_flexible_modes(system, q, shapes))


def _normalized(shapes):
    """Each column divided by its largest-magnitude component (which becomes exactly 1)."""
    if not shapes.size:
        return shapes
    k = np.argmax(np.abs(shapes), axis=0)
    pivot = shapes[k, np.arange(shapes.shape[1])]
    return shapes / np.where(np.abs(pivot) > 0, pivot, 1.0)


def _body_modes(system, q, shapes):
    """(n_modes, nb, 6): [δr, δθ] per body — the velocity map q̇ ↦ (v, ω) is linear in q̇, so
    applying it to δq (real and imaginary parts) gives the first-order body displacements."""
    out = np.zeros((shapes.shape[1], len(system.body_names), 6), dtype=complex)
    for m in range(shapes.shape[1]):
        for part, scale in ((shapes[:, m].real, 1.0), (shapes[:, m].imag, 1j)):
            if np.any(part):
                fr = system.frames(q, np.ascontiguousarray(part))
                out[m] += scale * np.hstack([fr.v, fr.w])
    return out


def _flexible_modes(system, q, shapes):
    """The flexible bodies' fields of :class:`Linearization` (module docstring): per body the frame
    (r, A) and nodal u = Φ a at q, and per mode the frame motion [δr, A·2L(p)δp] and δu = Φ δa."""
    flex = getattr(system, "flex", [])
    if not flex:
        return {}
    out = {"flexible_names": [fb.name for fb in flex], "node_displacements": [], "node_modes": []}
    r0, A0, modes = [], [], np.zeros((shapes.shape[1], len(flex), 6), dtype=complex)
    for i, fb in enumerate(flex):
        r, p, a = fb.split(q)
        A = rotation_matrix(p)
        r0.append(r)
        A0.append(A)
        dr, dp, da = fb.split(shapes)
        modes[:, i, :3] = dr.T
        modes[:, i, 3:] = (A @ (2.0 * L_matrix(p)) @ dp).T
        out["node_displacements"].append(np.einsum("nik,k->ni", fb.body.node_phi, a))
        out["node_modes"].append(np.einsum("nik,km->mni", fb.body.node_phi, da))
    out.update(flexible_positions=np.array(r0), flexible_rotations=np.array(A0), flexible_modes=modes)
    return out


def _one_per_pair(lam, vec, tol=1e-9):
    """(λ, eigenvectors) keeping one eigenvalue per conjugate pair (Im λ > 0) and every real one
    (|Im λ| ≤ tol·max(1, |λ|max); its imaginary round-off dropped)."""
    scale = max(1.0, float(np.max(np.abs(lam)))) if lam.size else 1.0
    real = np.abs(lam.imag) <= tol * scale
    keep = real | (lam.imag > 0)
    return np.where(real, lam.real, lam)[keep], vec[:, keep]


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
    raise ModelError("state: must be None, \"equilibrium\", a dict with 'q' (and 'qd', 't'), or (results, index)")
