"""Static equilibrium of a constrained system under gravity, springs and constant loads.

At rest (q̇ = 0) the equations of motion M q̈ + Φ_qᵀ λ = Q reduce, after pre-multiplying by a
null-space basis N of Φ_q (Bae, Yang & Seo (2003) eqs. 21–24, F* = Nᵀ(M q̈ − Q) with q̈ = 0), to

    r(z) = N(q(z))ᵀ Q(q(z), 0, t) = 0,

f equations in the f independent coordinates z of a tangent-space (QR) partition at the current
configuration, q(z) = q_ref + V z + U w(z) with Φ(q(z), t) = 0 (Kim & Yoo (1997) eqs. 9–14;
:class:`solver.partitioning.partition.Partition`).  ∂r/∂z = −K̂ is the tangent stiffness of the
linearization (Bae, Yang & Seo (2003) eq. 30 at rest), including the geometric terms from the
change of N.  Every iterate takes a fresh partition.  J = ∂r/∂z by differences with step ``STEP``
= 1e-6 in z (m or rad): central (truncation O(h²) ≈ 1e-12, round-off ε|Q|/h ≈ 1e-10 |Q|), except
that descent takes forward differences until max|r| ≤ tol (truncation O(h) ≈ 1e-6 relative: its
steps need no more, at half the cost; the stiffness that judges stability is central).  Newton
and relaxation keep central differences: a one-sided J at a kink of the loads (a tyre just
touching the road) misses the stiffness there.  Converged when max|r| ≤ tol · F,
F = max(1, max|Q(q₀, 0, t)|) the size of the loads at the start (N, N·m).

Stability: stable when the reduced stiffness K̂ (symmetrized) has no negative eigenvalue relative
to M̂ = NᵀMN: K̂ S = M̂ S diag(ω²), SᵀM̂S = I, all ω² ≥ −ε_K.  ε_K bounds the error of ω² from the
difference quotient: ε_eig = 1e-9 max(1, max|ω²|) (the eigenvalues' round-off) for central
differences, 1e-6 max(1, max|ω²|) (STEP) for forward ones, and for loads with a potential at
least ‖J − Jᵀ‖₂ / λ_min(M̂) (K̂ is then symmetric, so its computed asymmetry measures the error).
For loads without a potential: the real parts of eig(M̂⁻¹K̂) ≥ −ε_eig.  Neutral directions (an
arm's base joint about the vertical, ω² = 0) count as stable.

Descent (``method="descent"``, and first in the default ``"auto"``): minimize the potential V(z), whose
gradient is −r, by Newton's method with the Hessian K̂ modified to be positive definite by taking
the absolute values of its eigenvalues ω² (eigenvalue modification, Nocedal & Wright, *Numerical
Optimization*, 2nd ed., 2006, §3.4; absolute values as in Greenstadt, *Math. Comp.* 21, 1967):

    Δz = S diag(1 / max(|ω²_k|, ε_eig)) Sᵀ r,

a descent direction (rᵀΔz ≥ 0: the loads do work along it) that is Newton's step where K̂ is
positive definite and moves away from a maximum where it is not.  Where some ω² < −ε_K the
quadratic model has no minimum: the part of Δz along those modes is lengthened to move a
coordinate by the trust radius ρ; at a point with r ≈ 0 (a saddle or maximum, e.g. an arm drawn
exactly upright) that part is the eigenvector of the most negative ω², pointed so that rᵀΔz ≥ 0.
The step is shortened to move no coordinate by more than ρ, then halved until the merit falls by at least c (α rᵀΔz + ½ α² max(0, −ΔzᵀK̂Δz)) (Armijo with the
negative-curvature term, c = 1e-4); once that predicted fall is within the merit's round-off
(1e-12 of the sum of its terms' magnitudes) a decrease of max|r| is accepted instead.  ρ starts at
``MAX_MOVE`` (1 rad or m), becomes twice the move of a step the line search shortened, doubles
after a full step of length ρ, and never exceeds ``MAX_MOVE``.  The merit:

* loads with a potential (gravity, springs, flexible strain; dampers exert nothing at rest;
  :func:`has_potential`): V(0) − V(α Δz), V the gravity, spring and strain energy
  ``system.energy`` reports.  V falls at every step, so the iteration ends in a stable
  equilibrium (a local minimum of V) reached downhill from the start;
* otherwise (applied loads, actuators, tires): the work of the loads along the step, by
  Simpson's rule W = α/6 (r(0)·Δz + 4 r(α/2)·Δz + r(α)·Δz) (exact for a quadratic V, and V(0) −
  V(α Δz) when there is one).  Not a function of z when the loads do not derive from a
  potential, so without the guarantee; measured: 6 iterations for a pushed pendulum, 28 for the
  iiwa pushed at its last link by 1 N (dynamic relaxation: 33 and 151).

Newton (``method="newton"``, the option for an unstable equilibrium): Δz = −J⁺ r (least squares,
so neutral directions get no step) halved until max|r| decreases.  It converges to the nearest
equilibrium, stable or not (an inverted pendulum started near upright stays upright); ``stable``
reports which.

Dynamic relaxation (``method="relaxation"``, and the fallback of ``"auto"``, from the start, when
descent fails): the infinitely damped motion M̂ ż = r(z) integrated by implicit Euler in a
pseudo-time step τ,

    (M̂ / τ − J) Δz = r,

with τ grown after a decrease of the residual by the ratio of successive residuals (×2 at least,
×10 at most), shrunk by that ratio after an increase, and halved while M̂/τ − J is not positive
definite, so each step goes downhill and the iteration settles in a *stable* equilibrium; as
τ → ∞ the step becomes Newton's.  Descent needs fewer iterations wherever both converge (a
horizontal pendulum 4 vs 11, a pushed pendulum 6 vs 33); relaxation earns its place where
descent's longer tangent steps fail (the flexible four-bar sample released 10° above its singular
position needed it while the position Newton's bound was a fixed 1e-10: descent stopped after 11
iterations, relaxation converged in 43; with the bound from atol descent converges in 7).

Use of the result: ``solver.linearize(model, state=eq.state)`` linearizes there (or
``state="equilibrium"`` does both).  ``eq.state`` is in the formulation's coordinates.  A run
starts there, at rest, with ``solver.simulate(model, initial="equilibrium")`` (``mbs run
--from-equilibrium``; :func:`starting_at_equilibrium`); otherwise from the model's own initial
configuration (joints are defined at it either way).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..compile import CompiledModel, for_analysis
from ..errors import ModelError, SolverError
from ..model.model import Model
from ..partitioning.partition import PartitionError
from ..partitioning.choose import build_partition
from .assembly import assemble_positions
from .threads import single_threaded_blas

STEP = 1e-6             # difference step in z (m or rad)
NEWTON_TOL = 1e-14      # constraint Newton tolerance inside r(z)
GROWTH = 10.0           # largest growth of the pseudo-time step per relaxation step
FIRST_MOVE = 0.05       # first relaxation step moves z by about this much (m or rad)
MAX_MOVE = 1.0          # largest trust radius of descent: move of any z in one step (m or rad)
ARMIJO = 1e-4           # sufficient-decrease constant of the descent line search
ROUNDOFF = 1e-12        # relative round-off of the merit (potential energy or work)
EIG_ROUNDOFF = 1e-9     # relative round-off of the eigenvalues ω² (eig, difference quotients)
METHODS = ("auto", "descent", "newton", "relaxation")


@dataclass
class Equilibrium:
    """A static equilibrium: ``q`` (assembled, formulation coordinates) at time ``t``."""
    q: np.ndarray
    t: float
    residual: float          # max |Nᵀ Q| at q (N or N·m)
    iterations: int          # iterations of the method that converged
    method: str              # "descent", "newton" or "relaxation"
    stable: bool             # no direction of negative stiffness (module docstring: ω² ≥ −ε_K)
    stiffness: np.ndarray    # K̂ = −∂(NᵀQ)/∂z at q
    history: list = field(default_factory=list)   # max|r| at each iterate, all methods tried

    @property
    def state(self) -> dict:
        """{"q", "qd" (zeros), "t"}: the state argument of :func:`solver.linearize`."""
        return {"q": self.q.copy(), "qd": np.zeros_like(self.q), "t": self.t}


def static_equilibrium(model: Model | CompiledModel, formulation: str | None = None, tol: float = 1e-10,
                       max_iter: int = 50, method: str = "auto", start=None) -> Equilibrium:
    """Static equilibrium of ``model`` near its initial configuration, or near ``start`` (a
    configuration q in the formulation's coordinates, e.g. ``results.coordinates[k]``; assembled
    first), under the loads at t = 0 (see module docstring): with ``method="auto"`` (descent, then
    relaxation) a stable one, ``"newton"`` the nearest, stable or not.  Raises ModelError for bad
    arguments and SolverError when no method converges in ``max_iter`` iterations (each)."""
    if method not in METHODS:
        raise ModelError(f"static_equilibrium: method must be one of {', '.join(METHODS)}; got {method!r}")
    if not tol > 0 or int(max_iter) < 1:
        raise ModelError("static_equilibrium: tol must be > 0 and max_iter ≥ 1")
    system = for_analysis(model, formulation).system
    if start is not None:
        start = np.asarray(start, dtype=float)
        if start.shape != (system.nq,):
            raise ModelError(f"static_equilibrium: start must have {system.nq} coordinates, got shape {start.shape}")
    with single_threaded_blas():
        return _Solver(system, tol, int(max_iter), start).solve(method)


def starting_at_equilibrium(system, tol=1e-10, max_iter=50):
    """((q, q̇ = 0, t), eq): the static equilibrium of the compiled ``system`` at rest as a start
    state for a run, and the :class:`Equilibrium`.  Raises SolverError when it is not found."""
    with single_threaded_blas():
        eq = _Solver(system, tol, max_iter).solve("auto")
    return (eq.q.copy(), np.zeros_like(eq.q), eq.t), eq


def has_potential(system) -> bool:
    """True when the loads at rest are −∂V/∂q of the potential ``system.energy`` reports, i.e.
    every force element's load at rest is (``conservative_at_rest``, else ``conserves_energy``:
    dampers exert nothing at rest; applied loads, actuators and tires do work that is not in V)."""
    return all(getattr(f, "conservative_at_rest", f.conserves_energy)() for f in getattr(system, "force_elements", ()))


class _Solver:
    def __init__(self, system, tol, max_iter, start=None):
        """system: a compiled system; the solver evaluates its own workspace of it
        (:meth:`~solver.formulations.system.MechanicalSystem.workspace`); start: q to start from
        (None: the initial configuration)."""
        self.system = system = system.workspace()
        self.max_iter = max_iter
        q, _, self.t = system.initial_state()
        self.q0 = assemble_positions(system, q if start is None else start, self.t)
        self.zero = np.zeros(system.nq)
        self.tol = tol * max(1.0, float(np.max(np.abs(system.forces(self.q0, self.zero, self.t)), initial=0.0)))
        self.potential = has_potential(system)
        self.history = []

    def solve(self, method):
        """The equilibrium by ``method``; "auto" is descent, then relaxation (from the start) if
        descent fails (module docstring)."""
        names = ["descent", "relaxation"] if method == "auto" else [method]
        iterate = {"descent": self._descent, "newton": self._newton, "relaxation": self._relax}
        failures = []
        for name in names:
            try:
                return self._finish(*iterate[name](self.q0), name)
            except SolverError as exc:
                failures.append(exc.message)
        hint = "; method='newton' finds the nearest equilibrium, stable or not" if method != "newton" else ""
        raise SolverError(f"static equilibrium not found: {'; '.join(failures)}{hint}", time=self.t,
                          kind="equilibrium")

    # ---- residual, potential and their derivatives at a partition -----------------------------
    def _residual(self, part, z, q_guess):
        """(r = NᵀQ, q, M̂) at q(z) of the partition."""
        q, ev = part.positions(self.system, z, self.t, q_guess, tol=NEWTON_TOL)
        M, Q = self.system.mass(q), self.system.forces(q, self.zero, self.t)
        _, _, N = part.accelerations(M, Q, ev.jac, np.zeros(len(ev.phi)))
        return N.T @ Q, q, N.T @ M @ N

    def _energy(self, q):
        """(V, Σ|terms of V|): gravity + spring + strain energy at rest."""
        e = self.system.energy(q, self.zero, self.t)[1:]
        return float(np.sum(e)), float(np.sum(np.abs(e)))

    def _linear(self, q, forward=False):
        """Partition at q, r(0), J = ∂r/∂z and M̂ at q: J by central differences, or with
        ``forward`` by forward differences where r is not converged (module docstring)."""
        part = build_partition("qr", self.system, q, self.t)
        r, q, Mhat = self._residual(part, np.zeros(part.dof), q)
        central = not forward or self._norm(r) <= self.tol
        J = np.empty((part.dof, part.dof))
        for k in range(part.dof):
            e = np.zeros(part.dof)
            e[k] = STEP
            back = self._residual(part, -e, q)[0] if central else r
            J[:, k] = (self._residual(part, e, q)[0] - back) / ((1 + central) * STEP)
        return part, q, r, J, Mhat

    def _modes(self, J, Mhat, central=True):
        """(ω², S, floor, ε_K): K̂ S = M̂ S diag(ω²) with SᵀM̂S = I for K̂ = −J symmetrized, the
        round-off of ω² and their tolerance for J by central or forward differences (module
        docstring)."""
        from scipy.linalg import eigh     # (scipy.linalg is loaded by the partitions: a lookup)
        w2, S = eigh(-0.5 * (J + J.T), Mhat)
        floor = EIG_ROUNDOFF * max(1.0, float(np.max(np.abs(w2), initial=0.0)))
        eps = floor if central else floor * STEP / EIG_ROUNDOFF
        if self.potential:
            eps = max(eps, np.linalg.norm(J - J.T, 2) / float(np.min(np.linalg.eigvalsh(Mhat))))
        return w2, S, floor, eps

    def _stable(self, J, Mhat):
        """No direction of negative stiffness (module docstring)."""
        if not J.size:
            return True
        if self.potential:
            w2, _, _, eps = self._modes(J, Mhat)
            return bool(np.min(w2) >= -eps)
        lam = np.linalg.eigvals(np.linalg.solve(Mhat, -J)).real
        return bool(np.min(lam) >= -EIG_ROUNDOFF * max(1.0, float(np.max(np.abs(lam)))))

    def _norm(self, r):
        return float(np.max(np.abs(r), initial=0.0))

    # ---- methods --------------------------------------------------------------------------------
    def _iterate(self, q, step, name, done=None, forward=False):
        """Linearize (``forward``: see :meth:`_linear`), test convergence (max|r| ≤ tol, and
        ``done(J, M̂)`` when given), take ``step(part, q, r, J, Mhat, res) -> q``; shared by the
        methods.  Returns (q, r, J, M̂, iterations)."""
        for it in range(self.max_iter + 1):
            try:
                part, q, r, J, Mhat = self._linear(q, forward)
            except PartitionError as exc:     # the constraints cannot be solved near q to NEWTON_TOL
                raise SolverError(f"{name} stopped at iteration {it}: {exc}", kind="equilibrium") from None
            res = self._norm(r)
            self.history.append(res)
            if res <= self.tol and (done is None or done(J, Mhat)):
                return q, r, J, Mhat, it
            if it < self.max_iter:
                q = step(part, q, r, J, Mhat, res)
        raise SolverError(f"{name} did not converge in {self.max_iter} iterations (max |NᵀQ| = {res:.3g})",
                          kind="equilibrium")

    def _descent(self, q):
        state = {"radius": MAX_MOVE}

        def step(part, q, r, J, Mhat, res):
            w2, S, floor, eps = self._modes(J, Mhat, central=res <= self.tol)
            radius = state["radius"]
            y = (S.T @ r) / np.maximum(np.abs(w2), floor)
            down = w2 < -eps             # the merit falls without bound along these in the quadratic model
            d = S[:, ~down] @ y[~down]
            if np.any(down):
                if res <= self.tol:      # at a saddle or maximum: along the most negative curvature
                    y = np.where(w2 == np.min(w2), 1.0, 0.0)
                escape = S[:, down] @ y[down]
                d = d + escape * (np.copysign(radius, r @ escape) / np.max(np.abs(escape)))
            if not np.any(d):            # r = 0, unstable by eig(M̂⁻¹K̂) but no negative ω²: loads without a potential
                raise SolverError("descent found no downhill direction at an unstable equilibrium", kind="equilibrium")
            d *= min(1.0, radius / np.max(np.abs(d)))
            q, alpha = self._descent_search(part, q, r, d, d @ (-0.5 * (J + J.T)) @ d, res)
            move = alpha * np.max(np.abs(d))
            state["radius"] = min(MAX_MOVE, 2.0 * move if alpha < 1.0 or move >= radius else radius)
            return q
        return self._iterate(q, step, "descent", self._stable, forward=True)

    def _descent_search(self, part, q, r, d, curvature, res):
        """q at α d, α halved from 1 until the merit falls enough (Armijo with the negative
        curvature term; module docstring), or, where that fall is within its round-off, max|r| does."""
        V0 = self._energy(q) if self.potential else None
        alpha = 1.0
        while alpha > 1e-3:
            predicted = alpha * (r @ d) + 0.5 * alpha ** 2 * max(0.0, -curvature)
            try:
                rn, qn, _ = self._residual(part, alpha * d, q)
                fall, scale = self._fall(part, q, r, d, alpha, rn, qn, V0)
                if fall >= ARMIJO * predicted or (predicted <= ROUNDOFF * scale and self._norm(rn) < res):
                    return qn, alpha
            except PartitionError:
                pass
            alpha *= 0.5
        raise SolverError(f"descent made no progress at max |NᵀQ| = {res:.3g}", kind="equilibrium")

    def _fall(self, part, q, r, d, alpha, rn, qn, V0):
        """(fall of the merit from z = 0 to α d, its round-off scale): V(0) − V(α d) and Σ|V terms|
        with a potential; else the work of the loads along the step by Simpson's rule,
        W = α/6 (r(0)·d + 4 r(α/2)·d + r(α)·d), and Σ of its terms' magnitudes."""
        if V0 is not None:
            return V0[0] - self._energy(qn)[0], V0[1]
        rm = self._residual(part, 0.5 * alpha * d, q)[0]
        terms = alpha / 6.0 * np.array([r @ d, 4.0 * (rm @ d), rn @ d])
        return float(np.sum(terms)), float(np.sum(np.abs(terms)))

    def _newton(self, q):
        def step(part, q, r, J, Mhat, res):
            qn = self._line_search(part, q, np.linalg.lstsq(J, -r, rcond=None)[0], res)
            if qn is None:
                raise SolverError(f"Newton made no progress at max |NᵀQ| = {res:.3g}", kind="equilibrium")
            return qn
        return self._iterate(q, step, "Newton")

    def _line_search(self, part, q, dz, res):
        alpha = 1.0
        while alpha > 1e-3:
            try:
                r, qn, _ = self._residual(part, alpha * dz, q)
                if self._norm(r) < res:
                    return qn
            except PartitionError:
                pass
            alpha *= 0.5
        return None

    def _relax(self, q):
        state = {"tau": None, "res": None}

        def step(part, q, r, J, Mhat, res):
            tau, res_old = state["tau"], state["res"]
            if tau is None:      # first step: move z by about FIRST_MOVE
                tau = FIRST_MOVE / max(float(np.max(np.abs(np.linalg.solve(Mhat, r)))), 1e-300)
            else:
                tau *= min(GROWTH, max(2.0, res_old / res)) if res < res_old else res_old / res
            q, state["tau"] = self._relax_step(part, q, r, J, Mhat, tau)
            state["res"] = res
            return q
        return self._iterate(q, step, "dynamic relaxation")

    def _relax_step(self, part, q, r, J, Mhat, tau):
        """One implicit-Euler step (M̂/τ − J) Δz = r with τ halved until the matrix is positive
        definite (a descent step) and the constraint Newton converges."""
        for _ in range(60):
            A = Mhat / tau - J
            try:
                np.linalg.cholesky(0.5 * (A + A.T))
                return self._residual(part, np.linalg.solve(A, r), q)[1], tau
            except (np.linalg.LinAlgError, PartitionError):
                tau *= 0.5
        raise SolverError("dynamic relaxation step failed (no pseudo-time step keeps it downhill)", kind="equilibrium")

    def _finish(self, q, r, J, Mhat, iterations, method):
        return Equilibrium(q, self.t, self._norm(r), iterations, method, self._stable(J, Mhat), -J,
                           list(self.history))
