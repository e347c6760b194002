"""The independent rows of a large Φ_q without its dense pivoted QR: a full-row-rank certificate in
sparse arithmetic that reproduces :func:`solver.partitioning.partition.independent_rows`'s decision.

The dense decision (Businger & Golub (1965) column pivoting on Φ_qᵀ) counts the pivots
|R_kk| > t = tol · max(‖row‖_max, 1) · max(m, n).  Two facts make it cheap to reproduce where it is
clear:

* a row of norm ≤ t can never give a pivot above t (a pivot is the norm of a row's residual after
  projecting out the rows chosen before it, at most the row's norm): it is redundant;
* for the other rows A, if σ_min(A) > t, every row of A gives a pivot above t whatever the order
  (|R_kk| = dist(a_k, span(a_1 … a_(k−1))) ≥ σ_min(A)), and the pivoting takes all of them before
  any row of norm ≤ t: A is exactly the dense set of independent rows.

σ_min(A) > 2t is certified by G = A Aᵀ − (2t)² I being positive definite: an LDLᵀ (SuperLU in
symmetric mode, diagonal pivots only, a minimum-degree order of G) with every pivot positive
(Sylvester; backward stable for a positive-definite G, its round-off ~ n ε ‖G‖ far below the
margin 3t² above the threshold t²).  O(nnz of G's factors): the four-bar row's G is banded.  Where
the certificate fails (a rank drop near a singular configuration, more such rows than columns) the
caller takes the dense QR.

The same factorization solves the weighted least-change velocity projection of
:func:`solver.analysis.assembly.consistent_velocities` sparsely (:func:`weighted_projection`).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import splu

MARGIN = 2.0             # the certificate proves σ_min(A) > MARGIN · t


def certified_rows(jac, tol):
    """(independent rows sorted, redundant rows sorted) of Φ_q ``jac`` (dense or scipy.sparse,
    m × n) equal to the dense pivoted QR's decision at ``tol``, or None when the certificate does
    not hold (module docstring)."""
    found = _certify(jac, tol)
    return None if found is None else found[1:]


def certified_null_spaces(jac, tol):
    """(rank, independent, redundant, stress S (m × k), modes (n × (n − rank))) of Φ_q as
    :func:`solver.partitioning.self_stress.null_spaces` defines them, or None.  Where the
    certificate holds and the redundant rows are rows of zeros (a tree that satisfies a cut joint's
    equations identically: the out-of-plane rows of planar loops in joint coordinates), the
    self-stress states are exactly the unit vectors of those rows (Φ_qᵀ e_d = 0; the dense
    B = [−R₁₁⁻¹R₁₂; I] with R₁₂ = 0) and the modes an orthonormal basis of null(A) =
    range(I − Aᵀ(AAᵀ)⁻¹A): the projection of seeded Gaussian columns, applied twice (Parlett &
    Kahan's "twice is enough"), orthonormalized by a thin QR — the same spaces as the dense QR's,
    another basis of the modes.  Otherwise None (the dense QR then)."""
    found = _certify(jac, tol)
    if found is None:
        return None
    A, keep, rest = found
    if A[rest].nnz:
        return None
    m, n = A.shape
    r, k = len(keep), len(rest)
    stress = np.zeros((m, k))
    stress[rest, np.arange(k)] = 1.0
    dof = n - r
    if dof == 0 or r == 0:
        modes = np.eye(n)[:, :dof] if r == 0 else np.zeros((n, 0))
        return r, keep, rest, stress, modes
    Ak = A[keep]
    lu = splu((Ak @ Ak.T).tocsc(), permc_spec="MMD_AT_PLUS_A")
    return r, keep, rest, stress, projected_null_basis(lambda Y: Ak.T @ lu.solve(np.asarray(Ak @ Y)), n, dof)


def projected_null_basis(project, n, dof):
    """An orthonormal n × dof basis of a null space from its complement's projector: ``project(Y)``
    = Aᵀ (A Aᵀ)⁻¹ A Y (so Y − project(Y) is the orthogonal projection onto null(A)) applied twice to
    seeded Gaussian columns (Parlett & Kahan's "twice is enough"), each pass orthonormalized by a
    thin QR; the same seed everywhere, so a basis is reproducible run to run."""
    Y = np.random.default_rng(0).standard_normal((n, dof))
    for _ in range(2):
        Y = np.linalg.qr(Y - project(Y))[0]
    return Y


def _certify(jac, tol):
    """(A = Φ_q as CSR, independent rows, redundant rows) when the certificate holds, else None."""
    A = sp.csr_matrix(jac)
    m, n = A.shape
    norms = np.sqrt(np.asarray(A.multiply(A).sum(axis=1)).ravel())
    t = tol * max(float(np.max(norms, initial=0.0)), 1.0) * max(m, n)
    keep = np.flatnonzero(norms > t)
    rest = np.setdiff1d(np.arange(m), keep)
    if len(keep) > n:
        return None
    if len(keep) == 0:
        return A, keep, rest
    Ak = A[keep]
    G = (Ak @ Ak.T - (MARGIN * t) ** 2 * sp.identity(len(keep))).tocsc()
    try:
        lu = splu(G, permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0, options={"SymmetricMode": True})
    except RuntimeError:                 # a zero pivot: not certified
        return None
    if not np.array_equal(lu.perm_r, lu.perm_c) or not np.all(lu.U.diagonal() > 0.0):
        return None
    return A, keep, rest


def weighted_projection(J, winv, residual):
    """y of (J W⁻¹ Jᵀ) y = residual for independent rows J (sparse LU of J W⁻¹ Jᵀ, positive
    definite), or None when it is singular to SuperLU (the caller's least squares then)."""
    Js = sp.csr_matrix(J)
    K = (Js.multiply(winv[None, :]).tocsr() @ Js.T).tocsc()
    try:
        return splu(K).solve(np.asarray(residual, dtype=float))
    except RuntimeError:
        return None
