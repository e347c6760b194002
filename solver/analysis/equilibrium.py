"""Static equilibrium of a constrained system under gravity, springs and constant loads.

At rest (q̇ = 0) the equations of motion M q̈ + Φ_qᵀ λ = Q reduce, after pre-multiplying by a
null-space basis N of Φ_q (Bae, Yang & Seo (2003) eqs. 21–24, F* = Nᵀ(M q̈ − Q) with q̈ = 0), to

    r(z) = N(q(z))ᵀ Q(q(z), 0, t) = 0,

f equations in the f independent coordinates z of a tangent-space (QR) partition at the current
configuration, q(z) = q_ref + V z + U w(z) with Φ(q(z), t) = 0 (Kim & Yoo (1997) eqs. 9–14;
:class:`solver.partitioning.partition.Partition`).  ∂r/∂z = −K̂ is the tangent stiffness of the
linearization (Bae, Yang & Seo (2003) eq. 30 at rest), including the geometric terms from the change of N.

Newton: J = ∂r/∂z by central differences (step ``STEP`` = 1e-6 in z, m or rad: truncation
O(h²) ≈ 1e-12 and round-off ε|Q|/h ≈ 1e-10 |Q|, both far below what Newton needs), the step
Δz = −J⁺ r (least squares, so neutral directions get no step) halved until max|r| decreases, and a
fresh partition at every iterate.  Converged when max|r| ≤ tol · F, F = max(1, max|Q(q₀, 0, t)|)
the size of the loads at the start (N, N·m).

Fallback, dynamic relaxation: the infinitely damped motion M̂ ż = r(z) (M̂ = NᵀMN; for
conservative loads the potential then only decreases, dV/dτ = −rᵀM̂⁻¹r) integrated by implicit
Euler in a pseudo-time step τ,

    (M̂ / τ − J) Δz = r,

with τ grown after a decrease of the residual by the ratio of successive residuals (×2 at least,
×10 at most), shrunk by that ratio after an increase, and halved while M̂/τ − J is not positive
definite, so each step goes downhill and the iteration settles in a *stable*
equilibrium; as τ → ∞ the step becomes Newton's.  ``method="auto"`` tries Newton and falls back
to relaxation (from the start) when Newton fails or ends in an unstable equilibrium.

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

STEP = 1e-6             # central-difference step in z (m or rad)
NEWTON_TOL = 1e-14      # constraint Newton tolerance inside r(z)
GROWTH = 10.0           # largest growth of the pseudo-time step per relaxation step
FIRST_MOVE = 0.05       # first relaxation step moves z by about this much (m or rad)
METHODS = ("auto", "newton", "relaxation")


@dataclass
class Equilibrium:
    """A static equilibrium: ``q`` (assembled, formulation coordinates) at time ``t``."""
    q: np.ndarray
    t: float
    residual: float          # max |Nᵀ Q| at q (N or N·m)
    iterations: int          # iterations of the method that converged
    method: str              # "newton" or "relaxation"
    stable: bool             # no direction of negative stiffness (eigenvalues of M̂⁻¹K̂ ≥ 0)
    stiffness: np.ndarray    # K̂ = −∂(NᵀQ)/∂z at q
    history: list = field(default_factory=list)   # max|r| after each iteration, both phases

    @property
    def state(self) -> dict:
        """{"q", "qd" (zeros), "t"}: the state argument of :func:`solver.linearize`."""
        return {"q": self.q.copy(), "qd": np.zeros_like(self.q), "t": self.t}


def static_equilibrium(model: Model | CompiledModel, formulation: str | None = None, tol: float = 1e-10,
                       max_iter: int = 50, method: str = "auto") -> Equilibrium:
    """Static equilibrium of ``model`` near its initial configuration, under the loads at t = 0
    (see module docstring).  Raises ModelError for bad arguments and SolverError when neither
    method converges in ``max_iter`` iterations (each)."""
    if method not in METHODS:
        raise ModelError(f"static_equilibrium: method must be one of {', '.join(METHODS)}; got {method!r}")
    if not tol > 0 or int(max_iter) < 1:
        raise ModelError("static_equilibrium: tol must be > 0 and max_iter ≥ 1")
    system = for_analysis(model, formulation).system
    with single_threaded_blas():
        return _Solver(system, tol, int(max_iter)).solve(method)


def starting_at_equilibrium(system, tol=1e-10, max_iter=50):
    """((q, q̇ = 0, t), eq): the static equilibrium of the compiled ``system`` at rest as a start
    state for a run, and the :class:`Equilibrium`.  Raises SolverError when it is not found."""
    with single_threaded_blas():
        eq = _Solver(system, tol, max_iter).solve("auto")
    return (eq.q.copy(), np.zeros_like(eq.q), eq.t), eq


class _Solver:
    def __init__(self, system, tol, max_iter):
        """system: a compiled system; the solver evaluates its own workspace of it
        (:meth:`~solver.formulations.system.MechanicalSystem.workspace`)."""
        self.system = system = system.workspace()
        self.max_iter = max_iter
        q, _, self.t = system.initial_state()
        self.q0 = assemble_positions(system, q, self.t)
        self.zero = np.zeros(system.nq)
        self.tol = tol * max(1.0, float(np.max(np.abs(system.forces(self.q0, self.zero, self.t)), initial=0.0)))
        self.history = []

    def solve(self, method):
        failure = None
        if method in ("auto", "newton"):
            try:
                eq = self._finish(*self._newton(self.q0), "newton")
                if method == "newton" or eq.stable:
                    return eq
                failure = "Newton ended in an unstable equilibrium"
            except SolverError as exc:
                if method == "newton":
                    raise
                failure = str(exc)
        try:
            return self._finish(*self._relax(self.q0), "relaxation")
        except SolverError as exc:
            raise SolverError(f"static equilibrium not found: {exc}" + (f" (Newton: {failure})" if failure else ""),
                              time=self.t, kind="equilibrium") from None

    # ---- residual and its Jacobian at a partition ---------------------------------------------
    def _residual(self, part, z, q_guess):
        """(r = NᵀQ, q, M̂) at q(z) of the partition."""
        q, ev = part.positions(self.system, z, self.t, q_guess, tol=NEWTON_TOL)
        M, Q = self.system.mass(q), self.system.forces(q, self.zero, self.t)
        _, _, N = part.accelerations(M, Q, ev.jac, np.zeros(len(ev.phi)))
        return N.T @ Q, q, N.T @ M @ N

    def _linear(self, q):
        """Partition at q, r(0), J = ∂r/∂z (central differences) and M̂ at q."""
        part = build_partition("qr", self.system, q, self.t)
        r, q, Mhat = self._residual(part, np.zeros(part.dof), q)
        J = np.empty((part.dof, part.dof))
        for k in range(part.dof):
            e = np.zeros(part.dof)
            e[k] = STEP
            J[:, k] = (self._residual(part, e, q)[0] - self._residual(part, -e, q)[0]) / (2 * STEP)
        return part, q, r, J, Mhat

    def _norm(self, r):
        return float(np.max(np.abs(r), initial=0.0))

    # ---- methods --------------------------------------------------------------------------------
    def _iterate(self, q, step, name):
        """Linearize, test convergence, take ``step(part, q, r, J, Mhat, res) -> q``; shared by
        Newton and dynamic relaxation.  Returns (q, r, J, M̂, iterations)."""
        for it in range(self.max_iter + 1):
            part, q, r, J, Mhat = self._linear(q)
            res = self._norm(r)
            self.history.append(res)
            if res <= self.tol:
                return q, r, J, Mhat, it
            if it < self.max_iter:
                q = step(part, q, r, J, Mhat, res)
        raise SolverError(f"{name} did not converge in {self.max_iter} iterations (max |NᵀQ| = {res:.3g})",
                          kind="equilibrium")

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
        K = -J
        if K.size:
            lam = np.linalg.eigvals(np.linalg.solve(Mhat, K)).real
            stable = bool(np.min(lam) >= -1e-9 * max(1.0, float(np.max(np.abs(lam)))))
        else:
            stable = True
        return Equilibrium(q, self.t, self._norm(r), iterations, method, stable, K, list(self.history))
