"""Estimates of the extreme singular values of a sparse constraint Jacobian Φ_q[rows] by power
iteration — the partitions' quality and the conditioning read-out above ``partition.SVD_MAX_ROWS``
rows (:mod:`solver.partitioning.partition`, :mod:`solver.partitioning.conditioning`) and the sparse
partitions' σ_min (:mod:`solver.partitioning.sparse`), at O(nnz) cost where an SVD is O(r² nq)."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import splu

SIGMA_ITERATIONS = 4            # power iterations of the σ estimates (as reduced.c's σ_min(J U))


def row_singular_estimates(J):
    """Estimates of (σ_min, σ_max) of J (r × nq, sparse or a dense array of a sparse matrix): power
    iterations on (J Jᵀ)⁻¹ (SuperLU) and on J Jᵀ (:func:`largest_gain`), σ_min from above and σ_max
    from below — measured within 1.0–1.25 of the SVD's σ_min / σ_max on the four-bar row, N = 10 … 100,
    at O(nnz) cost where the SVD is O(r² nq)."""
    J = sp.csr_matrix(J)
    G = (J @ J.T).tocsc()
    high = np.sqrt(largest_gain(G.dot, G.shape[0]))
    try:
        lu = splu(G)
    except RuntimeError:               # exactly singular
        return 0.0, high
    gain = largest_gain(lu.solve, G.shape[0])
    return (1.0 / np.sqrt(gain) if gain > 0 else 0.0), high


def largest_gain(apply, n):
    """‖A x‖ after SIGMA_ITERATIONS steps of power iteration (x normalized before each) of a
    symmetric positive semi-definite operator A from a fixed start: an estimate from below of its
    largest eigenvalue (inf when it is not finite: a singular inverse)."""
    x = 1.0 + 0.1 * (np.arange(n) % 7)
    gain = 0.0
    for _ in range(SIGMA_ITERATIONS):
        x = apply(x / np.linalg.norm(x))
        gain = np.linalg.norm(x)
    return gain if np.isfinite(gain) else np.inf
