"""Coordinate partitioning with sparse factorizations of Φ_q (cost that grows like the model).

The partition is the one of :class:`~solver.partitioning.partition.Partition` (same q_ref, V, U,
same independent coordinates z): only the linear algebra changes.  Every formula there involves
the dependent basis U through U (Φ_q U)⁻¹ or (Φ_q U)ᵀ, which do not change when U is replaced by
any B = U K with K invertible.  B is chosen sparse:

    LU:       B = U (columns of the identity: the dependent coordinates),
    QR, SVD:  B = Φ_q[rows](q_ref)ᵀ (U spans its range; K⁻¹ = Uᵀ B = (Φ_q[rows](q_ref) U)ᵀ),

each with its columns in a fill-reducing order fixed at partition time (B P is as good a basis),

so with J = Φ_q[rows] (gathered through the system's ``jacobian_pattern``) and S = J B, sparse and
r×r, factorized by SuperLU (scipy.sparse.linalg.splu):

    positions      q ← q − B S⁻¹ Φ  (Newton, Kim & Yoo (1997) eq. 7), started on the partition's
                   affine set from q_guess + V (z − Vᵀ (q_guess − q_ref))
    velocities     q̇ = V ż + B S⁻¹ (ν − J V ż)                          (Kim & Yoo (1997) eq. 8)
    accelerations  N = V − B S⁻¹ J V,  c = B S⁻¹ γ,  (Nᵀ M N) z̈ = Nᵀ (Q − M c)   (eq. 13)
    multipliers    Sᵀ λ_rows = Bᵀ (Q − M q̈), then the minimum-norm λ over the redundant rows with
                   X = J_red B S⁻¹ (as reduced.c does), equal to the least-squares λ of the dense path
    σ_min(J U)     power iteration on ((J U)ᵀ J U)⁻¹ with (J U)⁻¹ = K⁻¹ S⁻¹ (an estimate from above,
                   as reduced.c's), for the re-partition test
    σ(J)           power iterations on J Jᵀ and (SuperLU) on (J Jᵀ)⁻¹: estimates of σ_max (from below)
                   and σ_min (from above) for the re-partition test and the conditioning output

Everything else (the partition itself, V from the dense QR/LU/SVD at partition time, the
re-partition and hybrid rules) is the dense path's — except a QR partition's V from
``SPARSE_BASIS_MIN`` coordinates on: an orthonormal basis of null(J) from the same factorization
(:meth:`SparsePartition._null_basis`), U made only if the dense algebra reads it.  The relative
formulation's generated systems give their Φ_q pattern too (the four-bar row at N = 1,000: 2,000
independent rows of 5,000, 2,001 coordinates).  Chosen automatically by size: ``choose.sparse_pattern``
returns the pattern when the system has one and r ≥ ``choose.SPARSE_MIN_ROWS`` (measured crossover, see
docs/performance.md).  With generated kernels a dynamic run's right-hand sides of such a partition are
solved in C by the band algebra (solver/codegen/banded.c, the same B) wherever its band applies;
these solves then serve the rest (renewal tests, velocities after a renewal, the first row).
"""
from __future__ import annotations

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
from scipy.sparse.linalg import splu

from .partition import POSITION_TOL, Partition, PartitionError, converged, qr_bases
from .rank import projected_null_basis
from .singular_estimates import largest_gain, row_singular_estimates

ROUND_OFF = 1e-15              # entries of S = J B below this fraction of its largest are dropped
SPARSE_BASIS_MIN = 600          # coordinates from which a QR partition's V comes from the sparse factorization
NORMAL_CONDITION = 1e8          # minimum_norm_correction: normal equations up to this condition number


class SparsePartition(Partition):
    """A :class:`Partition` whose solves use sparse factorizations (module docstring)."""

    sparse = True

    def __init__(self, method, q_ref, jac, rows, redundant, pattern):
        self._pattern = pattern
        self._U = None
        super().__init__(method, q_ref, jac, rows, redundant)

    @property
    def U(self):
        """The orthonormal dependent basis (dense, nq × r): only the dense algebra reads it (a
        diagnosis, the dense compiled reduction); from SPARSE_BASIS_MIN coordinates on, a QR
        partition makes it at the first such read (:func:`qr_bases`: an orthonormal basis of
        range(Φ_q[rows](q_ref)ᵀ), the complement of V)."""
        if self._U is None:
            self._U = qr_bases(self.reference_rows)[0]
        return self._U

    @U.setter
    def U(self, value):
        self._U = value

    def _qr_bases(self, J):
        """Below SPARSE_BASIS_MIN coordinates the dense QR's (U, V); above, neither yet: V comes from
        the factorization of S (:meth:`_prepare`), U when read (:attr:`U`)."""
        if J.shape[1] < SPARSE_BASIS_MIN:
            return qr_bases(J)
        return None, None

    def _prepare(self, jac):
        """Gathers of J = Φ_q[rows] and J_red = Φ_q[redundant] (CSR structure fixed, values taken
        through the pattern), the sparse basis B and K⁻¹ (module docstring)."""
        m, nq = jac.shape
        self._J = _Gather(self._pattern, self.rows, m, nq)
        self._J_red = _Gather(self._pattern, self.redundant, m, nq)
        if self.method == "lu":
            dep = np.setdiff1d(np.arange(nq), self.independent)
            B = sp.csr_matrix((np.ones(len(dep)), (dep, np.arange(len(dep)))), shape=(nq, len(dep)))
        else:
            B = self._J.matrix(jac).T.tocsr()
        # columns of B in the fill-reducing order SuperLU's COLAMD picks for the structure of S = J B
        # (every entry the pattern allows, with arbitrary values), so every later factorization skips
        # the ordering (permc_spec NATURAL) and its fill stays bounded whatever entries vanish: B P is
        # as good a basis as B
        S = _Product(self._J, B)
        arbitrary = np.random.default_rng(0).uniform(1.0, 2.0, len(self._J.indices))
        try:
            order = np.argsort(splu(S.matrix(arbitrary)).perm_c)
        except RuntimeError:               # (structurally) singular with these values: no reordering
            order = np.arange(B.shape[1])
        self.B = B[:, order].tocsr()
        self._S = _Product(self._J, self.B)
        self._factor_cache = (None, None)
        if self.V is None:
            self.V = self._null_basis(jac)

    # ---- the reduced equations ------------------------------------------------------------------
    def positions(self, system, z, t, q_guess, tol=POSITION_TOL, max_iter=25):
        q = q_guess + self.V @ (z - self.V.T @ (q_guess - self.q_ref))
        tol, prev = max(tol, self.roundoff_tol), None
        for _ in range(max_iter):
            ev = system.constraints(q, t, level=1)
            err = np.max(np.abs(ev.phi)) if ev.phi.size else 0.0
            if not np.isfinite(err):
                raise PartitionError("constraint evaluation produced NaN/inf")
            if converged(err, prev, tol):
                return q, ev
            q, prev = q - self.B @ self._factor(ev.jac)[0].solve(ev.phi[self.rows]), err
        raise PartitionError(f"position Newton did not converge (max |Φ| = {err:.3g})", kind="locked")

    def velocities(self, jac, nu, zd):
        lu, values = self._factor(jac)
        Vzd = self.V @ zd
        return Vzd + self.B @ lu.solve(nu[self.rows] - self._J.dot(values, Vzd))

    def accelerations(self, M, Q, jac, gamma):
        lu, values = self._factor(jac)
        f = self.V.shape[1]
        X = lu.solve(np.column_stack([self._J.dot(values, self.V), gamma[self.rows]]))
        BX = self.B @ X
        N, c = self.V - BX[:, :f], BX[:, f]
        if f == 0:
            return c, np.zeros(0), N
        MN = M @ N
        rhs = N.T @ (Q - M @ c)
        try:
            zdd = sla.cho_solve(sla.cho_factor(N.T @ MN), rhs)
        except np.linalg.LinAlgError:
            zdd = np.linalg.solve(N.T @ MN, rhs)
        return N @ zdd + c, zdd, N

    def multipliers(self, jac, M, qdd, Q):
        lu, _ = self._factor(jac)
        lam = np.zeros(jac.shape[0])
        lam_rows = lu.solve(self.B.T @ (Q - M @ qdd), trans="T")
        if len(self.redundant):
            X = lu.solve((self._J_red.matrix(jac) @ self.B).T.toarray(), trans="T").T     # J_red B S⁻¹
            y = minimum_norm_correction(X, lam_rows)
            lam_rows = lam_rows + X.T @ y
            lam[self.redundant] = -y
        lam[self.rows] = lam_rows
        return lam

    # ---- the sparse algebra ---------------------------------------------------------------------
    def _factor(self, jac):
        """(SuperLU of S = J B, J's values) at this Jacobian; the last one is kept (velocities,
        accelerations and multipliers at the same state factorize once)."""
        values = self._J.values(jac)
        lu, cached = self._factor_cache
        if cached is not None and np.array_equal(values, cached):
            return lu, cached
        try:
            lu = splu(self._S.matrix(values), permc_spec="NATURAL")
        except RuntimeError:               # exactly singular
            raise PartitionError("dependent Jacobian block is singular", kind="singular") from None
        self._factor_cache = (lu, values)
        return lu, values

    def _null_basis(self, jac):
        """V (nq × dof, orthonormal) of a QR partition from the factorization of S = J B, B = Jᵀ P at
        q_ref: I − B S⁻¹ J = I − Jᵀ (J Jᵀ)⁻¹ J is the orthogonal projector onto null(J), applied twice
        to seeded Gaussian columns (Parlett & Kahan's "twice is enough") and orthonormalized by a thin
        QR — an orthonormal basis of the dense QR's null space (the same one up to sign for one
        degree of freedom), at O(dof · nnz of the factors)."""
        lu, values = self._factor(jac)
        r = len(self.rows)
        return projected_null_basis(lambda Y: self.B @ lu.solve(np.asarray(self._J.dot(values, Y)).reshape(r, -1)),
                                    jac.shape[1], jac.shape[1] - r)

    def _dependent_sigma_min(self, jac):
        """Estimate (from above) of σ_min(J U): power iteration on ((J U)ᵀ J U)⁻¹, (J U)⁻¹ = K⁻¹ S⁻¹
        with K⁻¹ = Uᵀ B, so K⁻ᵀ K⁻¹ = Bᵀ U Uᵀ B = Bᵀ (I − V Vᵀ) B (no dense U; for LU, B = U: K = I)."""
        lu, _ = self._factor(jac)
        if self.method == "lu":
            gain = largest_gain(lambda x: lu.solve(lu.solve(x), trans="T"), len(self.rows))
        else:
            def apply(x):
                w = self.B @ lu.solve(x)
                return lu.solve(self.B.T @ (w - self.V @ (self.V.T @ w)), trans="T")
            gain = largest_gain(apply, len(self.rows))
        return 1.0 / np.sqrt(gain) if gain > 0 else 0.0

    def _row_singular_values(self, jac):
        """Estimates of (σ_min, σ_max) of J (:func:`row_singular_estimates`)."""
        return row_singular_estimates(self._J.matrix(jac))

    def _smallest_row_norm(self, jac):
        values = self._J.values(jac)
        return np.sqrt(np.min(np.bincount(self._J.row_of, values * values, minlength=len(self.rows))))


def minimum_norm_correction(X, lam_rows):
    """y minimizing ‖λ_rows + Xᵀ y‖² + ‖y‖² (the minimum-norm multipliers: λ_rows + Xᵀ y on the
    independent rows, −y on the redundant ones): the normal equations (X Xᵀ + I) y = −X λ_rows while
    their condition number, at most 1 + ‖X‖_F², stays below NORMAL_CONDITION (round-off ≤ ε · that);
    beyond, the least-squares problem [Xᵀ; I] y ≈ [−λ_rows; 0] (8× the time: near a singular
    configuration X reaches 1e8 and X Xᵀ + I is singular in floating point — the 40-loop Cartesian
    four-bar row)."""
    n = X.shape[0]
    if np.sum(X * X) < NORMAL_CONDITION:
        return np.linalg.solve(X @ X.T + np.eye(n), -X @ lam_rows)
    return np.linalg.lstsq(np.vstack([X.T, np.eye(n)]), np.concatenate([-lam_rows, np.zeros(n)]), rcond=None)[0]


class _Gather:
    """Rows ``rows`` of a dense Φ_q as a CSR matrix with a fixed structure: the pattern entries of
    those rows, in CSR order, read from the dense array by one fancy index."""

    def __init__(self, pattern, rows, m, nq):
        position = np.full(m, -1)
        position[rows] = np.arange(len(rows))
        keep = position[pattern[0]] >= 0
        r, c = position[pattern[0][keep]], pattern[1][keep]
        order = np.lexsort((c, r))
        self._flat = pattern[0][keep][order] * nq + c[order]        # positions in the row-major Φ_q
        self.indices = c[order]
        self.indptr = np.concatenate([[0], np.cumsum(np.bincount(r, minlength=len(rows)))])
        self.row_of = r[order]                                      # the row of each entry
        self.shape = (len(rows), nq)
        self._reused = None

    def values(self, jac):
        return np.take(jac, self._flat)

    def matrix(self, jac):
        return sp.csr_matrix((self.values(jac), self.indices, self.indptr), shape=self.shape)

    def dot(self, values, x):
        """J x for J with these ``values`` (one CSR matrix reused: no constructor per product)."""
        if self._reused is None:
            self._reused = sp.csr_matrix((values, self.indices, self.indptr), shape=self.shape)
        self._reused.data = values
        return self._reused @ x


class _Product:
    """S = J B (CSC) for a fixed J structure (a :class:`_Gather`) and a fixed B: the entries of S
    are a fixed linear map of J's values (one sparse mat-vec instead of a sparse product)."""

    def __init__(self, gather, B):
        rows = np.repeat(np.arange(gather.shape[0]), np.diff(gather.indptr))     # J entry e = (i, k)
        k = gather.indices
        counts = np.diff(B.indptr)[k]                                           # B entries in row k
        e = np.repeat(np.arange(len(k)), counts)
        starts = np.repeat(B.indptr[k], counts)
        within = np.arange(len(e)) - np.repeat(np.cumsum(counts) - counts, counts)
        b = starts + within                                                     # B entry (k, j)
        i, j = rows[e], B.indices[b]
        shape = (gather.shape[0], B.shape[1])
        key = j * shape[0] + i                                                  # CSC order
        unique, s_index = np.unique(key, return_inverse=True)
        self._map = sp.csr_matrix((B.data[b], (s_index, e)), shape=(len(unique), len(k)))
        self.indices = (unique % shape[0]).astype(np.int32)
        self._columns = unique // shape[0]
        self.shape = shape

    def matrix(self, values):
        """S at J's ``values``, without the entries that are zero here up to round-off (a planar
        mechanism's Jacobian has many: SuperLU would carry them through the factorization)."""
        data = self._map @ values
        keep = np.abs(data) > ROUND_OFF * np.max(np.abs(data), initial=0.0)
        indptr = np.concatenate([[0], np.cumsum(np.bincount(self._columns[keep], minlength=self.shape[1]))])
        return sp.csc_matrix((data[keep], self.indices[keep], indptr.astype(np.int32)), shape=self.shape)
