"""The band problem of a partition for ``banded.c``: the compiled reduction of many-loop models.

banded.c solves the reduced equations of a partition with the dependent basis U replaced by a sparse B
of the same range (LU: B = U; QR, SVD: B = Φ_q[rows](q_ref)ᵀ, as :mod:`solver.partitioning.sparse`)
and factors S = Φ_q[rows] B in band storage.  Everything structural is fixed here once per partition:

* the pattern of J = Φ_q[rows] (the system's ``kernel_jacobian_pattern``: the entries the kernels
  can write), the non-zeros of B, and from them the pattern of S;
* an order of S's rows and columns (the same permutation for both: reverse Cuthill–McKee on the
  pattern of S + Sᵀ, scipy.sparse.csgraph; Cuthill & McKee (1969); for a Cartesian system on the S of
  its structural Φ_q pattern, jacobian_pattern, a superset of the entries its kernels write) that makes
  S banded with kl sub- and ku super-diagonals — a row of loops gives a bandwidth independent of
  their number;
* the assembly of S in band storage as a fixed linear map of Φ_q's entries
  (S[s_at[e]] += coef[e] · Φ_q[jac_at[e]], Φ_q's buffer dense row-major or, for a relative library,
  packed in its pattern: relative.c's or cartesian_packed.c's cg_position_packed), J by rows and B by rows (CSR), the pattern
  of the kernels' M by rows where the system gives one (``kernel_mass_pattern``) with each entry's
  position in M's buffer (dense, or packed in the pattern: cg_dynamics_packed), Φ_q's redundant rows
  by rows (the minimum-norm multipliers skip the rows that are zero), and V's non-zeros by rows;
* the half bandwidth ``gw`` of G = J Jᵀ in the same order, for the conditioning read-out's estimates
  of σ(Φ_q[rows]) from ``partition.COMPILED_ESTIMATE_ROWS`` rows
  (:func:`solver.partitioning.singular_estimates.row_singular_estimates`' algorithm in C: banded.c
  ``cg_band_row_sigma``, called by segment.c at the output rows and by
  :attr:`solver.codegen.reduced.CompiledReduction.conditioning` for the Python loop's rows).

:func:`band_problem` returns None where the dense algebra of reduced.c is as cheap: fewer than
``BAND_MIN_ROWS`` independent rows, or a band wider than ``BAND_FRACTION`` of S (its factorization
costs r·kl·(kl + ku) against r³/3 dense).
"""
from __future__ import annotations

import ctypes

import numpy as np

BAND_MIN_ROWS = 16       # independent rows from which the band algebra is used (docs/performance.md)
BAND_FRACTION = 0.5      # … when 2 kl + ku + 1 is at most this fraction of r (5 slider–cranks, r = 100,
                         # 2 kl + ku + 1 = 31: 0.18 against 0.44 CPU s per simulated s dense; docs/performance.md)

_INT, _PTR = ctypes.c_int, ctypes.c_void_p


class BandStruct(ctypes.Structure):
    """``struct cg_banded`` of banded.c (same fields, same order)."""
    _fields_ = [("kl", _INT), ("ku", _INT), ("row", _PTR), ("pos", _PTR), ("n_map", _INT), ("s_at", _PTR), ("jac_at", _PTR),
                ("coef", _PTR), ("j_ptr", _PTR), ("j_at", _PTR), ("j_col", _PTR), ("b_ptr", _PTR), ("b_col", _PTR),
                ("b_val", _PTR), ("m_ptr", _PTR), ("m_col", _PTR), ("m_at", _PTR), ("red_ptr", _PTR),
                ("red_at", _PTR), ("red_col", _PTR), ("v_ptr", _PTR), ("v_col", _PTR), ("v_val", _PTR), ("gw", _INT)]


class BandProblem:
    """The arrays of banded.c's problem for one partition and the struct pointing at them
    (``struct_``; keep this object alive while the struct is in use); ``gw``: the sub- and
    super-diagonals of J Jᵀ in the same order (−1: too wide for cg_band_row_sigma)."""

    def __init__(self, kl, ku, arrays, gw=-1):
        self.kl, self.ku, self.gw = kl, ku, gw
        self.arrays = arrays
        self.struct_ = BandStruct(kl=kl, ku=ku, n_map=len(arrays["s_at"]), gw=gw,
                                  **{name: a.ctypes.data for name, a in arrays.items()})


def band_problem(system, part, packed=False):
    """The :class:`BandProblem` of ``part`` (a :class:`solver.partitioning.partition.Partition` of the
    generated ``system``), or None when the dense algebra should be used (module docstring).
    ``packed``: the kernels write Φ_q packed in the order of ``kernel_jacobian_pattern`` (by rows,
    columns ascending: cg_position_packed) and M packed in ``kernel_mass_pattern`` (cg_dynamics_packed);
    otherwise both dense row-major (M's pattern, where the system gives one, still skips its zeros)."""
    pattern = getattr(system, "kernel_jacobian_pattern", lambda: None)()
    r = len(part.rows)
    if pattern is None or r < BAND_MIN_ROWS or not part.dof:
        return None
    import scipy.sparse as sparse
    from scipy.sparse.csgraph import reverse_cuthill_mckee
    m, nq = system.m, system.nq
    position = np.full(m, -1)
    position[part.rows] = np.arange(r)

    def rows_pattern(pattern):
        keep = position[pattern[0]] >= 0
        J = sparse.csr_matrix((np.ones(int(keep.sum())), (position[pattern[0][keep]], pattern[1][keep])), shape=(r, nq))
        J.sum_duplicates()
        J.data[:] = 1.0
        return J
    J = rows_pattern(pattern)
    B = _basis(part, J, sparse)
    B_nz = (B != 0).astype(float)

    def product_pattern(J):
        S = (J @ B_nz).tocsr()
        S.data[:] = 1.0
        return S
    S = product_pattern(J)
    # the order from the structural pattern where the system has one (the Cartesian joints' rows on all 7
    # columns of their bodies: the slider–cranks' band kl = ku = 10, against 12 from the entries the
    # kernels write), else from S's own
    structural = getattr(system, "jacobian_pattern", lambda: None)()
    ordered = S if structural is None else product_pattern(rows_pattern(structural))
    order = np.asarray(reverse_cuthill_mckee((ordered + ordered.T).tocsr(), symmetric_mode=True), dtype=int)
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
    at = _positions(pattern, nq, packed)
    j_at = at(rows[j_row], Jo.indices)
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
    red_rows = np.repeat(np.asarray(list(part.redundant), dtype=int), np.diff(red.indptr))
    arrays["red_ptr"], arrays["red_col"] = red.indptr.astype(np.intc), red.indices.astype(np.intc)
    arrays["red_at"] = at(red_rows, red.indices).astype(np.intc)
    V = sparse.csr_matrix(np.asarray(part.V, dtype=float))     # its exact zeros left out
    V.sort_indices()
    arrays["v_ptr"], arrays["v_col"], arrays["v_val"] = V.indptr.astype(np.intc), V.indices.astype(np.intc), V.data
    mass = getattr(system, "kernel_mass_pattern", lambda: None)()
    if mass is not None:                      # M's products over its pattern, at its entries' positions
        m_ptr, m_col = (np.asarray(a, dtype=int) for a in mass)
        m_at = np.arange(len(m_col)) if packed else np.repeat(np.arange(nq), np.diff(m_ptr)) * nq + m_col
        arrays["m_ptr"], arrays["m_col"], arrays["m_at"] = (a.astype(np.intc) for a in (m_ptr, m_col, m_at))
        arrays["m_ptr"], arrays["m_col"] = (np.asarray(a, dtype=np.intc) for a in mass)
    arrays = {name: a if len(a) else np.zeros(1, dtype=a.dtype) for name, a in arrays.items()}
    G = (Jo @ Jo.T).tocoo()                     # the conditioning read-out's J Jᵀ (cg_band_row_sigma)
    gw = int(np.max(np.abs(G.row - G.col), initial=0))
    return BandProblem(kl, ku, arrays, gw if 3 * gw + 1 <= BAND_FRACTION * r else -1)


def _positions(pattern, nq, packed):
    """at(rows, cols): the positions of Φ_q's entries (row, col) in the kernels' buffer: row · nq + col
    (dense row-major), or their index in ``pattern`` (packed: by rows, columns ascending, no
    duplicates)."""
    if not packed:
        return lambda rows, cols: np.asarray(rows) * nq + np.asarray(cols)
    keys = pattern[0] * nq + pattern[1]
    if np.any(np.diff(keys) <= 0):
        raise ValueError("a packed Φ_q needs its pattern by rows, columns ascending, without duplicates")

    def at(rows, cols):
        wanted = np.asarray(rows) * nq + np.asarray(cols)
        e = np.searchsorted(keys, wanted)
        if np.any(e >= len(keys)) or np.any(keys[np.minimum(e, len(keys) - 1)] != wanted):
            raise ValueError("an entry outside the packed Φ_q's pattern")
        return e
    return at


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
