"""The conditioning read-out of a block of output points without an SVD at every point.

The read-out is c = σ_min / σ_max of the independent constraint rows Φ_q[rows]
(:func:`solver.partitioning.partition.singular_value_ratio`, near 0 at singular configurations).
An exact value needs a dense SVD of Φ_q[rows] (r × nq): 4 ms per point for the four-bar row with
N = 100 loops (r = 200), where the whole step costs far less.  The compiled step loop already has, at
every output point, the LU of the dependent block A = Φ_q[rows] U and from it an estimate σ̃ of
σ_min(A) (reduced.c ``sigma_min_estimate``: power iteration on (AᵀA)⁻¹, the estimate the loop's
re-partition test uses).  A singular configuration of Φ_q makes A singular too (σ_min(A) ≤
σ_min(Φ_q[rows]), U has orthonormal columns), so σ̃ falls with c as the run nears one.

Rule (:func:`tracked_conditioning`), over the rows of one call of the compiled loop (one partition):

* exact (one batched SVD of the rows chosen) at the first row, at every row where σ̃ has moved by more
  than a factor ``TRACK_FACTOR`` from its value at the last exact row, at every local minimum of σ̃
  along the rows and its two neighbours (a singular pass is such a minimum), at the last row when σ̃
  is still falling there, and where σ̃ is 0 or not finite;
* elsewhere c_k = c_a σ̃_k / σ̃_a with a the last exact row: the exact value carried along by the
  change of the estimate, which stays within ``TRACK_FACTOR`` of its anchor's.

So the run's passes near singular configurations, and its smallest values, are exact values; between
them the read-out follows the estimate.  That is not a bound: it is as good as σ̃ tracks σ_min(Φ_q[rows])
/ σ_max (power iteration on the inverse, as in the condition estimators of Cline, Moler, Stewart &
Wilkinson (1979); Golub & Van Loan (2013) §3.5.4) — measured 0.88–1.34 of the SVD value on the
four-bar row with N = 3 … 100, where one row in five is exact
(tests/solver/test_conditioning_readout.py compares every row of a run through singular positions
with the SVD).  The Python step loop still takes the SVD at each of its output points
(``Partition.singularity``).

Above ``partition.SVD_MAX_ROWS`` independent rows even the anchors' SVDs (O(r² nq) each) would cost
more than the run: there the anchors (:func:`anchor_values`), and ``Partition.singularity``, take the
sparse estimates of σ_min (from above) and σ_max (from below) of
:func:`solver.partitioning.singular_estimates.row_singular_estimates` instead — power iterations on (J Jᵀ)⁻¹ and
J Jᵀ, O(nnz) each, c within 1.0–1.25 of the SVD value on the four-bar row (N = 10 … 100).  On the
band algebra (solver/codegen/banded.c) the compiled loop computes those estimates itself at every
output row (``cg_band_row_sigma``: J Jᵀ is banded in the order of the band's S, and factored as S is),
already from ``partition.COMPILED_ESTIMATE_ROWS`` = 50 rows, where in C they cost less than the SVD
(``loops_50``, r = 100: c within 1.098–1.105 of the SVD value at each of its rows; the four-bar row
from N = 10 within 1.00–1.26, 1.00–1.06 at its singular passes; from above, never a lower value), so
there no row is tracked, no Φ_q[rows] is stored and this module is not called
(:meth:`solver.codegen.segment.CompiledSegments.conditioning`).
"""
from __future__ import annotations

import numpy as np

from .partition import extreme_singular_values, singular_value_ratio

TRACK_FACTOR = 2.0        # σ̃ moving more than this factor from the last exact row's asks for an exact value


def exact_rows(estimate) -> np.ndarray:
    """Boolean mask of the rows :func:`tracked_conditioning` computes exactly (module docstring)."""
    est = np.asarray(estimate, dtype=float)
    n = len(est)
    forced = ~(np.isfinite(est) & (est > 0.0))
    if n:
        forced[0] = True
    if n > 1:
        low = np.zeros(n, dtype=bool)
        low[1:-1] = (est[1:-1] <= est[:-2]) & (est[1:-1] <= est[2:])
        low[-1] = est[-1] < est[-2]
        forced |= low
        forced[:-1] |= low[1:]
        forced[1:] |= low[:-1]
    exact = forced.copy()
    anchor = None
    for k in range(n):                  # anchors depend on the estimates only: one pass, no SVD
        if not exact[k] and not (anchor / TRACK_FACTOR <= est[k] <= anchor * TRACK_FACTOR):
            exact[k] = True
        if exact[k]:
            anchor = est[k]
    return exact


def anchor_values(jac) -> np.ndarray:
    """c = σ_min / σ_max of each Φ_q[rows] in ``jac`` (N, r, nq), by
    :func:`solver.partitioning.partition.extreme_singular_values`: one batched SVD up to SVD_MAX_ROWS
    rows, sparse estimates above (O(nnz) each; c from above, measured within 1.0–1.25 of the SVD's)."""
    return singular_value_ratio(*extreme_singular_values(jac))


def tracked_conditioning(jac, estimate) -> np.ndarray:
    """c = σ_min / σ_max of each Φ_q[rows] in ``jac`` (N, r, nq), at the rows of :func:`exact_rows` by
    :func:`anchor_values` and carried along the estimates σ̃ (N,) elsewhere."""
    exact = exact_rows(estimate)
    est = np.asarray(estimate, dtype=float)
    values = np.empty(len(est))
    values[exact] = anchor_values(jac[exact])
    anchor = np.maximum.accumulate(np.where(exact, np.arange(len(est)), 0))
    tracked = ~exact
    values[tracked] = values[anchor[tracked]] * est[tracked] / est[anchor[tracked]]
    return values
