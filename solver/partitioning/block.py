"""The QR partition of an open tree whose constraint rows are all Euler-parameter normalizations
(free and spherical joints of the relative formulation: ``system.norm_rows``), in O(n) memory.

Row i, pᵢᵀpᵢ − 1 = 0, has its non-zeros 2pᵢᵀ in the four columns of pᵢ only, so Φ_qᵀ is block
diagonal and its QR factorization is one Householder reflection per block (Golub & Van Loan,
Matrix Computations, 4th ed. (2013) §5.1.2): with u = pᵢ/|pᵢ| and v = u + sign(u₀) e₀,
H = I − 2vvᵀ/(vᵀv) has first column −sign(u₀) u and three orthonormal columns orthogonal to u.  U holds
u for each row (in its own columns), V the three other columns of each H and a unit column for
every other coordinate: U, V orthonormal, Vᵀ U = 0, the same partition as the dense QR's up to the
choice of basis of each block's tangent space (Kim & Yoo (1997) eqs. 9–14).  They are kept sparse
(scipy.sparse, ≈ 4 non-zeros per column): a dense V of 1000 free bodies is 7000 × 6000 (336 MB),
which reduced.c's tree_reduced never reads (it takes U, V by columns).  Φ_q U is diagonal (row i
meets only U's column i), so the dependent solves are divisions and ‖N‖_F, σ_min(Φ_q U) are O(n).

Used for such systems from BLOCK_MIN_ROWS rows on (smaller ones keep the dense QR: their numbers
are unchanged).  The dense algebra of a diagnosis after a failed compiled solve (``accelerations``)
runs on dense copies.
"""
from __future__ import annotations

import numpy as np

from .partition import Partition, newton_tolerance

BLOCK_MIN_ROWS = 120            # normalization rows from which an open tree's QR partition is block-sparse


def block_rows(system, method, jac):
    """The first column of p of each row when ``system``'s rows are all Euler-parameter normalizations
    (``norm_rows``), each with its non-zeros in its own four columns and not all zero (so the rows
    are independent), ``method`` "qr" and at least BLOCK_MIN_ROWS of them; else None."""
    pairs = list(getattr(system, "norm_rows", ()) or ())    # the relative formulation's (row, column of p)
    m = jac.shape[0]
    if method != "qr" or m < BLOCK_MIN_ROWS or len(pairs) != m or not all(isinstance(x, tuple) for x in pairs):
        return None
    norm = dict(pairs)
    first = np.array([norm.get(i, -1) for i in range(m)])
    if np.any(first < 0):
        return None
    block = jac[np.arange(m)[:, None], first[:, None] + np.arange(4)]
    nonzero = np.count_nonzero(block, axis=1)
    if np.any(nonzero == 0) or np.any(np.count_nonzero(jac, axis=1) != nonzero):
        return None
    return first


class BlockPartition(Partition):
    """A QR partition with block-sparse U, V (module docstring); ``first``: the first column of
    each row's p."""


    def __init__(self, q_ref, jac, first):
        from scipy import sparse
        self.method = "qr"
        self.q_ref = q_ref.copy()
        m, nq = jac.shape
        self.rows, self.redundant = np.arange(m), np.zeros(0, dtype=int)
        self.reference_rows = None
        cols = first[:, None] + np.arange(4)
        u = jac[np.arange(m)[:, None], cols]
        u = u / np.linalg.norm(u, axis=1, keepdims=True)
        v = u.copy()
        v[:, 0] += np.where(u[:, 0] >= 0.0, 1.0, -1.0)
        H = np.eye(4) - 2.0 * v[:, :, None] * v[:, None, :] / np.einsum("ka,ka->k", v, v)[:, None, None]
        self.U = sparse.csc_matrix((u.ravel(), (cols.ravel(), np.repeat(np.arange(m), 4))), shape=(nq, m))
        free = np.setdiff1d(np.arange(nq), cols.ravel())
        # V's columns in coordinate order: each free coordinate, each block's three at its first column
        keys = np.concatenate([free, np.repeat(first, 3) + np.tile([0.25, 0.5, 0.75], m)])
        order = np.argsort(keys, kind="stable")
        rank = np.empty(len(order), dtype=int)
        rank[order] = np.arange(len(order))
        block_cols = rank[len(free):].reshape(m, 3)
        entries_r = np.concatenate([free, np.repeat(cols, 3, axis=0).ravel()])
        entries_c = np.concatenate([rank[:len(free)], np.repeat(block_cols, 4, axis=1).ravel()])
        entries_v = np.concatenate([np.ones(len(free)), H[:, :, 1:].transpose(0, 2, 1).ravel()])
        self.V = sparse.csc_matrix((entries_v, (entries_r, entries_c)), shape=(nq, nq - m))
        self.V.sort_indices()
        self.U.sort_indices()
        self.independent = None
        self.dof = nq - m
        self._last_rows = None
        self.quality_ref = self.quality(jac)
        self.roundoff_tol = newton_tolerance(0.0, q_ref, jac)
        self.amplification_ref = self.amplification(jac)

    def _diagonal(self, jac):
        """diag(Φ_q[rows] U): Φ_q U is diagonal (module docstring)."""
        return np.asarray(self.U.multiply(jac[self.rows].T).sum(axis=0)).ravel()

    def dependent_solve(self, jac, rhs):
        """(Φ_q[rows] U)⁻¹ rhs."""
        d = self._diagonal(jac)
        if np.any(d == 0.0):
            raise np.linalg.LinAlgError("the dependent block is singular")
        return rhs / (d if np.ndim(rhs) == 1 else d[:, None])

    def amplification(self, jac):
        """‖N‖_F, N = V − U D⁻¹ Φ_q[rows] V, D = diag(Φ_q U): over V's columns, sparse."""
        from scipy import sparse
        JV = sparse.csr_matrix(jac[self.rows]) @ self.V
        d = self._diagonal(jac)
        coupled = sparse.diags(1.0 / d) @ JV          # U's columns are orthonormal to V's: ‖N‖² = ‖V‖² + ‖U X‖²
        return float(np.sqrt(self.dof + coupled.multiply(coupled).sum()))

    def _dependent_sigma_min(self, jac):
        return float(np.min(np.abs(self._diagonal(jac))))

    def accelerations(self, M, Q, jac, gamma):
        """The dense algebra on dense copies of U, V (a diagnosis: O(nq²) memory)."""
        dense = Partition.__new__(Partition)
        dense.__dict__.update(self.__dict__, U=self.U.toarray(), V=self.V.toarray())
        return dense.accelerations(M, Q, jac, gamma)
