"""The band problem of a partition for ``banded.c``: the compiled reduction of many-loop models.

banded.c solves the reduced equations of a partition with the dependent basis U replaced by a sparse B
of the same range (LU: B = U; QR, SVD: B = Φ_q[rows](q_ref)ᵀ, as :mod:`solver.partitioning.sparse`)
and factors S = Φ_q[rows] B in band storage.  Everything structural is fixed here once per partition:

* the pattern of J = Φ_q[rows] (the system's ``kernel_jacobian_pattern``: the entries the kernels
  can write), the non-zeros of B, and from them the pattern of S;
* an order of S's rows and columns (the same permutation for both: reverse Cuthill–McKee on the
  pattern of S + Sᵀ, scipy.sparse.csgraph; Cuthill & McKee (1969)) that makes S banded with kl sub-
  and ku super-diagonals — a row of loops gives a bandwidth independent of their number;
* the assembly of S in band storage as a fixed linear map of Φ_q's entries
  (S[s_at[e]] += coef[e] · Φ_q.flat[jac_at[e]]), J by rows and B by rows (CSR), and the pattern of
  the kernels' M by rows where the system gives one (``kernel_mass_pattern``), Φ_q's redundant rows
  by rows (the minimum-norm multipliers skip the rows that are zero), and V's non-zeros by rows;
* above ``partition.SVD_MAX_ROWS`` rows, where the conditioning read-out takes estimates of σ(Φ_q[rows])
  (:func:`solver.partitioning.singular_estimates.row_singular_estimates`), G = J Jᵀ's assembly in band
  storage in the same order (``_gram_map``), so that banded.c computes them at each level-3 solve
  (the output rows) with the same algorithm instead of SuperLU in Python.

:func:`band_problem` returns None where the dense algebra of reduced.c is as cheap: fewer than
``BAND_MIN_ROWS`` independent rows, or a band wider than ``BAND_FRACTION`` of S (its factorization
costs r·kl·(kl + ku) against r³/3 dense).
"""
from __future__ import annotations

import ctypes

import numpy as np

from ..partitioning import partition

BAND_MIN_ROWS = 16       # independent rows from which the band algebra is used (docs/performance.md)
BAND_FRACTION = 0.5      # … when 2 kl + ku + 1 is at most this fraction of r (5 slider–cranks, r = 100,
                         # 2 kl + ku + 1 = 31: 0.18 against 0.44 CPU s per simulated s dense; docs/performance.md)

_INT, _PTR = ctypes.c_int, ctypes.c_void_p


class BandStruct(ctypes.Structure):
    """``struct cg_banded`` of banded.c (same fields, same order)."""
    _fields_ = [("kl", _INT), ("ku", _INT), ("row", _PTR), ("pos", _PTR), ("n_map", _INT), ("s_at", _PTR), ("jac_at", _PTR),
                ("coef", _PTR), ("j_ptr", _PTR), ("j_at", _PTR), ("j_col", _PTR), ("b_ptr", _PTR), ("b_col", _PTR),
                ("b_val", _PTR), ("m_ptr", _PTR), ("m_col", _PTR), ("red_ptr", _PTR), ("red_col", _PTR),
                ("v_ptr", _PTR), ("v_col", _PTR), ("v_val", _PTR), ("g_kl", _INT), ("g_n_map", _INT), ("g_at", _PTR),
                ("g_a", _PTR), ("g_b", _PTR), ("row_sigma", _PTR)]


class BandProblem:
    """The arrays of banded.c's problem for one partition and the struct pointing at them
    (``struct_``; keep this object alive while the struct is in use)."""

    def __init__(self, kl, ku, arrays, g_kl=0):
        self.kl, self.ku = kl, ku
        self.arrays = arrays
        self.row_sigma = arrays.get("row_sigma")        # (σ_min, σ_max) of Φ_q[rows] at level 3, or None
        self.struct_ = BandStruct(kl=kl, ku=ku, n_map=len(arrays["s_at"]), g_kl=g_kl,
                                  g_n_map=len(arrays["g_at"]) if "g_at" in arrays else 0,
                                  **{name: a.ctypes.data for name, a in arrays.items()})


def band_problem(system, part):
    """The :class:`BandProblem` of ``part`` (a :class:`solver.partitioning.partition.Partition` of the
    generated ``system``), or None when the dense algebra should be used (module docstring)."""
    pattern = getattr(system, "kernel_jacobian_pattern", lambda: None)()
    r = len(part.rows)
    if pattern is None or r < BAND_MIN_ROWS or not part.dof:
        return None
    import scipy.sparse as sparse
    from scipy.sparse.csgraph import reverse_cuthill_mckee
    m, nq = system.m, system.nq
    position = np.full(m, -1)
    position[part.rows] = np.arange(r)
    keep = position[pattern[0]] >= 0
    J = sparse.csr_matrix((np.ones(int(keep.sum())), (position[pattern[0][keep]], pattern[1][keep])), shape=(r, nq))
    J.sum_duplicates()
    J.data[:] = 1.0
    B = _basis(part, J, sparse)
    S = (J @ (B != 0).astype(float)).tocsr()
    S.data[:] = 1.0
    order = np.asarray(reverse_cuthill_mckee((S + S.T).tocsr(), symmetric_mode=True), dtype=int)
    rank = np.empty(r, dtype=int)
    rank[order] = np.arange(r)
    si, sj = S.nonzero()
    i, j = rank[si], rank[sj]
    kl, ku = int(max(0, np.max(i - j, initial=0))), int(max(0, np.max(j - i, initial=0)))
    if 2 * kl + ku + 1 > BAND_FRACTION * r:
        return None
    # J by rows in the new order; the assembly map: J entry (i, k) times B entry (k, j) into S(i, j)
    Jo = J[order].tocsr()
    Jo.sort_indices()
    rows = np.asarray(part.rows)[order]
    j_row = np.repeat(np.arange(r), np.diff(Jo.indptr))
    j_at = rows[j_row] * nq + Jo.indices
    Bo = sparse.csr_matrix((B.data, rank[B.indices], B.indptr), shape=B.shape)
    Bo.sort_indices()
    counts = np.diff(Bo.indptr)[Jo.indices]                      # B entries in row k of each J entry
    e = np.repeat(np.arange(len(j_at)), counts)
    b = np.repeat(Bo.indptr[Jo.indices], counts) + (np.arange(len(e)) - np.repeat(np.cumsum(counts) - counts, counts))
    si, sj = j_row[e], Bo.indices[b]
    kv, ld = kl + ku, 2 * kl + ku + 1
    s_at = sj * ld + kv + si - sj
    order_map = np.argsort(s_at, kind="stable")                 # memory order of the band storage
    arrays = {"row": rows.astype(np.intc), "pos": order.astype(np.intc), "s_at": s_at[order_map].astype(np.intc),
              "jac_at": j_at[e][order_map].astype(np.intc), "coef": np.ascontiguousarray(Bo.data[b][order_map]),
              "j_ptr": Jo.indptr.astype(np.intc), "j_at": j_at.astype(np.intc), "j_col": Jo.indices.astype(np.intc),
              "b_ptr": Bo.indptr.astype(np.intc), "b_col": Bo.indices.astype(np.intc),
              "b_val": np.ascontiguousarray(Bo.data, dtype=float)}
    red = sparse.csr_matrix((np.ones(len(pattern[0])), pattern), shape=(m, nq))[list(part.redundant)]
    red.sum_duplicates()
    red.sort_indices()
    arrays["red_ptr"], arrays["red_col"] = red.indptr.astype(np.intc), red.indices.astype(np.intc)
    V = sparse.csr_matrix(np.asarray(part.V, dtype=float))     # its exact zeros left out
    V.sort_indices()
    arrays["v_ptr"], arrays["v_col"], arrays["v_val"] = V.indptr.astype(np.intc), V.indices.astype(np.intc), V.data
    mass = getattr(system, "kernel_mass_pattern", lambda: None)()
    if mass is not None:                                        # M's products over its pattern
        arrays["m_ptr"], arrays["m_col"] = (np.asarray(a, dtype=np.intc) for a in mass)
    g_kl = 0
    if r > partition.SVD_MAX_ROWS:      # the conditioning read-out takes estimates (extreme_singular_values)
        gram = _gram_map(j_row, Jo.indices, j_at, nq)
        g_kl = int(np.max(np.abs(gram[0] - gram[1]), initial=0))
        if 3 * g_kl + 1 <= BAND_FRACTION * r:
            i, j, a, b = gram
            g_at = j * (3 * g_kl + 1) + 2 * g_kl + i - j
            at = np.argsort(g_at, kind="stable")
            arrays |= {"g_at": g_at[at].astype(np.intc), "g_a": a[at].astype(np.intc), "g_b": b[at].astype(np.intc),
                       "row_sigma": np.zeros(2)}
    arrays = {name: a if len(a) else np.zeros(1, dtype=a.dtype) for name, a in arrays.items()}
    return BandProblem(kl, ku, arrays, g_kl)


def _gram_map(row, col, flat, nq):
    """(i, j, a, b): G = J Jᵀ as G[i, j] += Φ_q.flat[a] · Φ_q.flat[b] over every pair of J's entries
    (rows ``row``, columns ``col``, flat Φ_q positions ``flat``) in one column."""
    order = np.argsort(col, kind="stable")
    row, col, flat = row[order], col[order], flat[order]
    counts = np.bincount(col, minlength=nq)
    starts = np.cumsum(counts) - counts
    reps = counts[col]                                          # the partners of each entry
    a = np.repeat(np.arange(len(row)), reps)
    b = np.repeat(starts[col], reps) + np.arange(len(a)) - np.repeat(np.cumsum(reps) - reps, reps)
    return row[a], row[b], flat[a], flat[b]


def _basis(part, J, sparse):
    """B (nq × r, CSR): the dependent coordinates' columns of the identity for an LU partition, else
    Φ_q[rows](q_ref)ᵀ on the pattern of J (its exact zeros left out)."""
    nq, r = J.shape[1], J.shape[0]
    if part.method == "lu":
        dep = np.setdiff1d(np.arange(nq), part.independent)
        return sparse.csr_matrix((np.ones(r), (dep, np.arange(r))), shape=(nq, r))
    i, k = J.nonzero()
    values = part.reference_rows[i, k]
    nz = values != 0.0
    return sparse.csr_matrix((values[nz], (k[nz], i[nz])), shape=(nq, r))
