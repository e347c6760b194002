"""Coordinate partitioning: LU (Wehage–Haug), QR (Kim–Vanderploeg), SVD — Kim & Yoo (1997) §2.

All three describe the configuration near a reference q_ref as

    q = q_ref + V z + U w,     Vᵀ V = I,  Vᵀ U = 0,

with z the independent coordinates (integrated) and w the dependent ones (solved from Φ = 0 by
Newton–Raphson, Kim & Yoo (1997) eq. 7).  LU: V, U are columns of the identity chosen by a pivoted LU of
Φ_qᵀ (the independent set is a subset of q, eqs. 6–8).  QR: Φ_qᵀ = [Q1 Q2] R, U = Q1, V = Q2 — the
tangent space of the constraint manifold at q_ref (eqs. 9–14).  SVD: U, V from the right singular
vectors (range and null space of Φ_q), which also ranks the constraints robustly.

Redundant constraint equations (rank Φ_q < rows) are detected by a rank-revealing pivoted QR of
Φ_qᵀ; the partition keeps a set of independent rows and reports the others.

Velocities q̇ = V ż + U ẇ with (Φ_q U) ẇ = ν − Φ_q V ż (eq. 8).  Accelerations: with
N = V − U (Φ_q U)⁻¹ Φ_q V (a null-space basis, Φ_q N = 0) and c = U (Φ_q U)⁻¹ γ,
q̈ = N z̈ + c and (Nᵀ M N) z̈ = Nᵀ (Q − M c) (the tangent-space equations, eq. 13).

When to renew a partition (:meth:`Partition.degraded`): its dependent block Φ_q U has become much
worse conditioned than the best one possible at the configuration (``quality``), or N = ∂q/∂z has
grown much larger than at partition time (``amplification``): the integrator controls the error of z
only, and q carries it multiplied by ‖N‖.  Near a singular configuration both σ_min(Φ_q U) and
σ_min(Φ_q) vanish, so the quality stays put while an LU set whose coordinates turn stationary
along the motion lets ‖N‖ grow a hundredfold: the rigid singular four-bar's first LU set is the
rocker's Euler parameter e₃ = sin(θ/2), stationary at θ = −180°, its second flattened passage —
‖N‖ 2.8 at the start, 224 just before the passage, 1.4 for a fresh LU partition there.
"""
from __future__ import annotations

import numpy as np
from ..math.lazy import sla

from ..errors import SolverError

METHODS = ("lu", "qr", "svd")



# Φ is known to a few roundings of the size of its terms — positions and marker points, r + A s' (the
# points are also the size of Φ_q's entries, B(p, s')): Newton stops at max |Φ| below
# max(tol, ROUNDOFF · max(|q_ref|, |Φ_q|) at partition time), so a model drawn far from the origin or
# from its bodies (1e6 m: max |Φ| stalls at 1.2e-10 against tol 1e-10) converges where its arithmetic allows
ROUNDOFF = 4 * np.finfo(float).eps


POSITION_TOL = 1e-10     # the position Newton's bound on max |Φ| (m, rad) …
POSITION_FRACTION = 0.1  # … or this fraction of the integrator's atol where that is tighter
NEWTON_STALL = 0.5       # an iteration that no longer halves max |Φ| has reached the round-off: below
                         # POSITION_TOL it is converged (converged(); a tight atol asks for what the
                         # model's arithmetic may not give: the 40-loop four-bar row stalls near 1e-14)


# independent rows up to which σ(Φ_q[rows]) (the conditioning read-out, the partition quality) comes from
# a dense SVD, O(r² nq); above, from sparse power iterations, O(nnz) (singular_estimates.row_singular_estimates).  The
# four-bar row's rows, CPU per call (one BLAS thread; two threads on the shared machine: 28–60 ms for
# the SVD from 150 rows): SVD 0.76 / 2.0 / 2.8 ms, estimate 0.65 / 0.53 / 0.73 ms at 100 / 150 / 200 rows
SVD_MAX_ROWS = 100

SPARSE_RANK_MIN = 400    # rows of Φ_q from which independent_rows tries rank.certified_rows before its dense QR

# independent rows from which a compiled band reduction's conditioning read-out takes banded.c's
# cg_band_row_sigma (the same estimates as above SVD_MAX_ROWS, in C: O(r gw²), no Python per row) instead of
# the SVD of Φ_q[rows] (docs/performance.md "Conditioning and σ_min where they are read")
COMPILED_ESTIMATE_ROWS = 50


def converged(err, prev, tol) -> bool:
    """Whether the position Newton stops at max |Φ| = ``err`` after an iteration from ``prev`` (None
    before the first): below ``tol``, or below POSITION_TOL and no longer gaining (NEWTON_STALL).
    reduced.c's Newton applies the same rule (its fields tol, accept, stall)."""
    return err < tol or (prev is not None and err < POSITION_TOL and err > NEWTON_STALL * prev)


def position_tolerance(atol) -> float:
    """… or a tenth of the integrator's ``atol`` (POSITION_FRACTION) where that is tighter (the FMU's
    fmu.c applies the same rule with these constants): the solved dependent coordinates
    carry the residual's error into every right-hand side, and an error estimate that must resolve
    atol cannot settle on a right-hand side noisier than it — the step size collapses instead (the
    flattened parallelogram in LU at rtol 1e-9, atol 1e-11: DOP853's steps fell to the round-off of t
    with residuals up to 1e-10, amplified near the singular configuration by 1/σ_min(Φ_q U); it passes
    with 1e-12).  At the default atol 1e-10 the bound is 1e-11."""
    return min(POSITION_TOL, POSITION_FRACTION * atol)


def newton_tolerance(tol, q, jac) -> float:
    """The position Newton's stopping bound for the requested ``tol`` at coordinates ``q`` with
    constraint Jacobian ``jac``."""
    return max(tol, ROUNDOFF * max(1.0, float(np.max(np.abs(q), initial=0.0)), float(np.max(np.abs(jac), initial=0.0))))


def extreme_singular_values(J):
    """(σ_min, σ_max) of independent rows Φ_q[rows] — J (r × nq) or stacked (N × r × nq): their SVD up
    to SVD_MAX_ROWS rows, above it the sparse estimates of
    :func:`solver.partitioning.singular_estimates.row_singular_estimates` (σ_min from above, σ_max
    from below, O(nnz) each)."""
    if J.shape[-2] <= SVD_MAX_ROWS:
        sv = np.linalg.svd(J, compute_uv=False)
        return sv[..., -1], sv[..., 0]
    from .singular_estimates import row_singular_estimates
    if J.ndim == 2:
        return row_singular_estimates(J)
    low, high = np.array([row_singular_estimates(x) for x in J]).reshape(-1, 2).T
    return low, high


def singular_value_ratio(low, high):
    """σ_min / σ_max (elementwise over stacked values), 0 where σ_max = 0: the conditioning of the
    independent constraint rows that a run records at each output point."""
    high = np.asarray(high, dtype=float)
    return np.divide(low, high, out=np.zeros(high.shape), where=high > 0)

class Renewal(str):
    """Why a degraded partition is renewed (:meth:`Partition.degraded`): a restart after accepted
    steps, progress rather than a failure (the step loops do not count it towards 'cannot get past
    this configuration')."""


class PartitionError(SolverError):
    """The partition cannot represent the current configuration (Newton failed, the dependent block
    became singular, values are not finite); the step loops catch it and re-partition.  One that no
    loop catches — raised by an integrator's first evaluations, before its first step (scipy's BDF,
    Radau and DOP853 evaluate the right-hand side and its Jacobian when they are made) — ends the
    run as the SolverError it is: ``kind`` "locked" (position Newton did not converge), "singular"
    (the dependent block) or "diverged" (NaN or inf, the default), the message as raised."""

    def __init__(self, message, kind="diverged"):
        super().__init__(message, kind=kind)


def reduced_mass_solve(Mhat, rhs):
    """z̈ = (NᵀMN)⁻¹ rhs by Cholesky.  Raises LinAlgError when NᵀMN is singular to working precision:
    a pivot d_k ≤ f ε max_k (NᵀMN)_kk (f its order) — a free motion with (almost) no mass or inertia.
    reduced.c's cholesky_solve applies the same test, so the compiled and the Python path agree on
    what is singular whatever the BLAS rounds."""
    factor, lower = sla.cho_factor(Mhat)
    pivots = np.diag(factor) ** 2
    if pivots.min() <= len(pivots) * np.finfo(float).eps * np.max(np.diag(Mhat)):
        raise np.linalg.LinAlgError("the reduced mass matrix is singular")
    return sla.cho_solve((factor, lower), rhs)


def independent_rows(jac, tol=1e-9):
    """Rank-revealing pivoted QR of Φ_qᵀ: (independent rows sorted, redundant rows sorted).  The
    pivots are judged against the largest one, but never against less than 1: Φ_q's entries are
    unit-vector components, Euler-parameter and joint-coordinate gradients of order 1 (lengths in
    m), so a largest pivot below 1 · tol means a Jacobian of round-off — a cut joint's equation
    that the tree already satisfies exactly (a fixed joint beside an in-plane one between the same
    two bodies: 6.9e-18) — which, judged against itself, would count as an independent row and take
    away a degree of freedom.  From SPARSE_RANK_MIN rows on, the same decision comes from a sparse
    certificate where it holds (:func:`solver.partitioning.rank.certified_rows`: O(nnz) instead of
    the QR's O(m n²))."""
    m = jac.shape[0]
    if m == 0:
        return np.zeros(0, dtype=int), np.zeros(0, dtype=int)
    if m >= SPARSE_RANK_MIN:      # the same decision from a sparse full-row-rank certificate where it holds
        from .rank import certified_rows
        found = certified_rows(jac, tol)
        if found is not None:
            return found
    _, R, piv = sla.qr(jac.T, mode="economic", pivoting=True)
    rank = numerical_rank(np.abs(np.diag(R)), jac.shape, tol)
    return np.sort(piv[:rank]), np.sort(piv[rank:])


def numerical_rank(pivots, shape, tol=1e-9) -> int:
    """The rank :func:`independent_rows` decides from the pivots |R_kk| (descending) of a pivoted QR
    of Φ_qᵀ (``shape``: Φ_q's): pivots above tol · max(|R_00|, 1) · max(shape)."""
    scale = max(pivots[0], 1.0) if len(pivots) else 1.0
    return int(np.sum(pivots > tol * scale * max(shape)))


def qr_bases(J):
    """(U, V) of a QR partition of the independent rows J = Φ_q[rows] (r × nq): Jᵀ = [Q1 Q2] R, U = Q1,
    V = Q2 (Kim & Yoo (1997) eqs. 9–14) — one QR per mechanism when J's rows fall into groups that
    share no coordinate and cover them all (copies of a mechanism side by side: the independent
    slider–cranks of Lee, Lee & Bae (2013) Table 8): block by block the same orthonormal bases of
    range(Jᵀ) and null(J), each column of U and V on one mechanism's coordinates only, so that
    N = ∂q/∂z and its products stay as sparse as Φ_q (the compiled band algebra, codegen/banded.c).
    U's block columns sit at their rows' places in J.  One group, or coordinates no row touches
    (a relative tree's free joint coordinates): the one QR of the whole Jᵀ, as before."""
    r, nq = J.shape
    groups = _row_groups(J) if r else None
    if groups is None:
        Q, _ = sla.qr(J.T, mode="full") if r else (np.eye(nq), None)
        return Q[:, :r], Q[:, r:]
    U, V = np.zeros((nq, r)), np.zeros((nq, nq - r))
    at = 0
    for rows, cols in groups:
        Q = np.linalg.qr(J[np.ix_(rows, cols)].T, mode="complete")[0]     # small blocks: numpy's lighter call
        U[np.ix_(cols, rows)] = Q[:, :len(rows)]
        V[cols, at:at + len(cols) - len(rows)] = Q[:, len(rows):]
        at += len(cols) - len(rows)
    return U, V


def _row_groups(J):
    """[(rows, columns)] of the groups of J's rows that share no column (union–find over J's non-zeros
    at the partition's configuration: an entry zero there, a joint axis along a global axis, may split
    a mechanism further, and the bases stay orthonormal bases of the same spaces at q_ref), in order
    of their first column; None for a single group or when some column has no non-zero (:func:`qr_bases`)."""
    r, nq = J.shape
    nonzero = J != 0.0
    if not np.all(nonzero.any(axis=0)):
        return None
    parent = np.arange(nq)

    def root(c):
        while parent[c] != c:
            parent[c] = parent[parent[c]]
            c = parent[c]
        return c

    for row in nonzero:
        cols = np.flatnonzero(row)
        first = root(cols[0])
        for c in cols[1:]:
            parent[root(c)] = first
    labels = np.array([root(c) for c in range(nq)])
    keys = np.unique(labels)
    if len(keys) == 1:
        return None
    row_label = labels[np.argmax(nonzero, axis=1)]
    return [(np.flatnonzero(row_label == k), np.flatnonzero(labels == k)) for k in keys]


class Partition:
    """One choice of independent coordinates (see module docstring)."""

    def __init__(self, method, q_ref, jac, rows, redundant):
        self.method = method
        self.q_ref = q_ref.copy()
        self.rows = rows
        self.redundant = redundant
        J = self.reference_rows = jac[rows]     # Φ_q[rows](q_ref) (the compiled band basis, codegen/banded.py)
        nq, r = jac.shape[1], len(rows)
        if method == "lu":
            P, _, _ = sla.lu(J.T)
            dep = np.sort(np.argmax(P, axis=0)[:r]) if r else np.zeros(0, dtype=int)
            indep = np.setdiff1d(np.arange(nq), dep)
            eye = np.eye(nq)
            self.U, self.V = eye[:, dep], eye[:, indep]
            self.independent = indep
        elif method == "qr":
            self.U, self.V = self._qr_bases(J)
            self.independent = None
        elif method == "svd":
            _, _, Vt = sla.svd(J) if r else (None, None, np.eye(nq))
            self.U, self.V = Vt[:r].T, Vt[r:].T
            self.independent = None
        else:
            raise ValueError(f"partitioning must be one of {', '.join(METHODS)}")
        self.dof = nq - r
        self._last_rows = None     # (Φ_q[rows], σ_min, σ_max) of the last exact _row_singular_values
        self._prepare(jac)
        self.quality_ref = self.quality(jac)
        self.roundoff_tol = newton_tolerance(0.0, q_ref, jac)    # the Newton's floor (ROUNDOFF)
        self.amplification_ref = self.amplification(jac)

    def _qr_bases(self, J):
        """(U, V) of a QR partition (:func:`qr_bases`; a sparse partition of many coordinates makes V
        from its factorization in :meth:`_prepare` instead)."""
        return qr_bases(J)

    def _prepare(self, jac):
        """What a subclass computes once per partition before the solves (the dense path: nothing)."""

    sparse = False       # the dense algebra (solver.partitioning.sparse.SparsePartition: sparse)

    # ---- coordinates ----------------------------------------------------------------------------
    def z_of(self, q):
        return self.V.T @ (q - self.q_ref)

    def zd_of(self, qd):
        """ż = Vᵀ q̇."""
        return self.V.T @ qd

    def positions(self, system, z, t, q_guess, tol=POSITION_TOL, max_iter=25):
        """Solve Φ(q_ref + V z + U w, t) = 0 for w by Newton–Raphson, starting from q_guess.
        Returns (q, ev) with ev the constraint evaluation (Φ, Φ_q, ν) at the solution."""
        base = self.q_ref + self.V @ z
        w = self.U.T @ (q_guess - self.q_ref)
        tol, prev = max(tol, self.roundoff_tol), None
        for _ in range(max_iter):
            q = base + self.U @ w
            ev = system.constraints(q, t, level=1)
            err = np.max(np.abs(ev.phi)) if ev.phi.size else 0.0
            if not np.isfinite(err):
                raise PartitionError("constraint evaluation produced NaN/inf")
            if converged(err, prev, tol):
                return q, ev
            try:
                dw = self.dependent_solve(ev.jac, ev.phi[self.rows])
            except np.linalg.LinAlgError:
                raise PartitionError("dependent Jacobian block is singular", kind="singular") from None
            w, prev = w - dw, err
        raise PartitionError(f"position Newton did not converge (max |Φ| = {err:.3g})", kind="locked")

    def velocities(self, jac, nu, zd):
        """q̇ = V ż + U ẇ with (Φ_q U) ẇ = ν − Φ_q V ż."""
        Jr = jac[self.rows]
        wd = self.dependent_solve(jac, nu[self.rows] - Jr @ (self.V @ zd))
        return self.V @ zd + self.U @ wd

    def dependent_solve(self, jac, rhs):
        """(Φ_q[rows] U)⁻¹ rhs (raises LinAlgError when singular)."""
        return np.linalg.solve(jac[self.rows] @ self.U, rhs)

    def accelerations(self, M, Q, jac, gamma):
        """(q̈, z̈, N) from the tangent-space equations (Nᵀ M N) z̈ = Nᵀ (Q − M c)."""
        if len(self.rows):
            Jr = jac[self.rows]
            lu = sla.lu_factor(Jr @ self.U)
            N = self.V - self.U @ sla.lu_solve(lu, Jr @ self.V)
            c = self.U @ sla.lu_solve(lu, gamma[self.rows])
        else:                     # an open tree: no dependent coordinates, N = V, c = 0
            N, c = self.V, np.zeros(self.V.shape[0])
        if N.shape[1] == 0:
            return c, np.zeros(0), N
        Mhat = N.T @ M @ N
        rhs = N.T @ (Q - M @ c)
        return N @ (zdd := reduced_mass_solve(Mhat, rhs)) + c, zdd, N

    def quality(self, jac, dependent=None):
        """σ_min(Φ_q U) / σ_min(Φ_q) over the independent rows: 1 for a fresh QR partition, lower as
        the dependent block becomes worse than the best possible one at this configuration.
        ``dependent``: σ_min(Φ_q U) if already computed."""
        if not len(self.rows):
            return 1.0
        best = self._row_singular_values(jac)[0]
        if dependent is None:
            dependent = self._dependent_sigma_min(jac)
        return float(dependent / best) if best > 0 else 0.0

    def amplification(self, jac):
        """‖N‖_F of the null-space basis N = ∂q/∂z = V − U (Φ_q U)⁻¹ Φ_q V (q̇ = N ż where ν = 0): how
        far the configuration moves per unit of the independent coordinates.  At least √dof (Vᵀ N = I
        and [V U] is orthonormal), √dof exactly for a QR or SVD partition at q_ref (N = V)."""
        if not self.dof:
            return 0.0
        return float(np.linalg.norm(self.velocities(jac, np.zeros((jac.shape[0], self.dof)), np.eye(self.dof))))

    def degraded(self, jac, fraction, growth, dependent=None, amplification=None, bound=None):
        """Why the partition should be renewed at this Jacobian, or None: quality(jac) / quality_ref
        below ``fraction``, or amplification(jac) above ``growth`` · amplification_ref (module
        docstring).  ``amplification``: ‖N‖_F if already computed (the compiled reduction's);
        ``bound``: an upper bound of σ_min(Φ_q[rows]) at hand, or None (the compiled band reduction's
        estimate from above, CompiledReduction.row_sigma_min).

        One SVD for the quality in the common case (none when ``dependent``, σ_min(Φ_q U), is given,
        e.g. estimated by the compiled reduction): with an upper bound b ≥ σ_min(Φ_q)
        (:meth:`_sigma_min_bound`), σ_min(Φ_q U) / b is a lower bound of quality(jac); when the bound
        already clears ``fraction · quality_ref`` the exact value is not needed."""
        if not len(self.rows):
            return None
        exact = dependent is None
        if exact:
            dependent = self._dependent_sigma_min(jac)
        # the bound is a minimum over the smallest row norm and costlier terms: when the row norm alone
        # clears the test, so does the bound (no estimate computed)
        threshold = fraction * self.quality_ref
        if (dependent < threshold * self._smallest_row_norm(jac)
                and dependent < threshold * min(self._sigma_min_bound(jac), np.inf if bound is None else bound)):
            ratio = self.quality(jac, dependent if exact else None) / self.quality_ref
            if ratio < fraction:
                return Renewal(f"dependent block quality dropped to {ratio:.2g} of its value at partition time")
        if amplification is None:
            amplification = self.amplification(jac)
        gain = amplification / self.amplification_ref if self.dof else 1.0
        if gain > growth:
            return Renewal(f"the independent coordinates lost the motion: ‖∂q/∂z‖ grew to {gain:.3g} × its value "
                           "at partition time")
        return None

    def singularity(self, jac):
        """σ_min / σ_max of the independent constraint rows: near 0 at singular configurations."""
        if not len(self.rows):
            return 1.0
        low, high = self._row_singular_values(jac)
        return float(singular_value_ratio(low, high))

    def multipliers(self, jac, M, qdd, Q):
        """λ from Φ_qᵀ λ = Q − M q̈ (:func:`multipliers`)."""
        return multipliers(jac, M, qdd, Q)

    def _sigma_min_bound(self, jac):
        """An upper bound of σ_min(Φ_q[rows]) without an SVD: the smallest row norm (σ_min is at most
        that of any one row), and, after an exact SVD of J₀ = Φ_q[rows] at an earlier state (the last
        output point or step), Weyl's inequality σ_min(J) ≤ σ_min(J₀) + ‖J − J₀‖₂ ≤ σ_min(J₀) +
        ‖J − J₀‖_F, plus 1e-12 σ_max(J₀) for the round-off of that SVD — far tighter near the
        states the run has just been through.  Above SVD_MAX_ROWS rows, where a step moves J far
        from J₀, the sparse estimate of σ_min(J) instead (from above: an upper bound, O(nnz))."""
        bound = self._smallest_row_norm(jac)
        if len(self.rows) > SVD_MAX_ROWS:
            bound = min(bound, self._row_singular_values(jac)[0])
        elif self._last_rows is not None:
            J0, low, high = self._last_rows
            bound = min(bound, low + np.linalg.norm(jac[self.rows] - J0) + 1e-12 * high)
        return bound

    # ---- the dense algebra (SparsePartition overrides these) -------------------------------------
    def _row_singular_values(self, jac):
        """(σ_min, σ_max) of the independent rows Φ_q[rows] (kept for :meth:`_sigma_min_bound`): their
        SVD up to SVD_MAX_ROWS rows, sparse estimates above (σ_min from above, σ_max from below:
        :func:`solver.partitioning.singular_estimates.row_singular_estimates`; the quality is then estimated low, and
        the bound of :meth:`_sigma_min_bound` stays an upper bound)."""
        J = jac[self.rows]
        low, high = extreme_singular_values(J)
        self._last_rows = (J, low, high)
        return low, high

    def _dependent_sigma_min(self, jac):
        """σ_min(Φ_q[rows] U)."""
        return np.linalg.svd(jac[self.rows] @ self.U, compute_uv=False)[-1]

    def _smallest_row_norm(self, jac):
        return np.min(np.linalg.norm(jac[self.rows], axis=1))


def multipliers(jac, M, qdd, Q):
    """λ from Φ_qᵀ λ = Q − M q̈ (least squares; the minimum-norm λ when rows are redundant)."""
    if jac.shape[0] == 0:
        return np.zeros(0)
    lam, *_ = np.linalg.lstsq(jac.T, Q - M @ qdd, rcond=None)
    return lam
