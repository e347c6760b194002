"""σ estimates of the compiled reduction only where they are read (issue #32 items 2 and 4).

* σ_min(Φ_q[rows] U) (reduced.c ``SIGMA_AT``): a level-2 solve — an integrator's right-hand side —
  leaves it; levels 1 and 3 estimate it, and ``cg_reduced_sigma`` (segment.c, at its accepted steps)
  gives after a level-2 solve the number a level-3 solve at the same state gives, bit for bit: the same
  factorization of the same Φ_q (dense algebra: one slider–crank; band: five).
* The conditioning read-out (σ_min / σ_max of Φ_q[rows]) from ``partition.COMPILED_ESTIMATE_ROWS``
  rows on the band algebra comes from banded.c's ``cg_band_row_sigma`` in both step loops: power
  iterations (4 steps, reduced.c SIGMA_ITERATIONS) on (J Jᵀ)⁻¹ and J Jᵀ give σ_min from above and σ_max
  from below, so the read-out is never below the SVD's; measured within 1.0–1.26 of it (module
  docstring of solver/partitioning/conditioning.py), here bounded by 1.3.  Its σ_min is an upper bound
  of σ_min(Φ_q[rows]), what the Python loop's partition-quality test takes (Partition.degraded's
  ``bound``, as segment.c's SEG_QUALITY does).
"""
from __future__ import annotations

import ctypes
import os
import sys

import numpy as np
import pytest

import solver
from solver.codegen.build import compiler_path
from solver.partitioning import partition
from solver.partitioning.choose import build_partition

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
from bench.slider_crank import slider_cranks  # noqa: E402

pytestmark = pytest.mark.skipif(not compiler_path(), reason="no C compiler")


@pytest.fixture(scope="module")
def models():
    return {n: solver.compile_model(slider_cranks(n), codegen="on") for n in (1, 5)}


@pytest.mark.parametrize("n, band", [(1, False), (5, True)])
def test_sigma_min_after_a_right_hand_side_only_when_asked(models, n, band):
    s = models[n].system.workspace()
    q, qd, _ = s.initial_state()
    part = build_partition("qr", s, q, 0.0)
    y = np.concatenate([part.z_of(q), part.V.T @ qd])
    c = s.compiled_reduction(part)
    assert (c.band is not None) == band
    assert c.solve(0.0, y, q, c.MULTIPLIERS)
    at_output = c.sigma_min
    assert at_output > 0.0
    c.arrays["sigma_min"][0] = -1.0
    assert c.solve(0.0, y, q, 2)
    assert c.sigma_min == -1.0                       # a right-hand side leaves it
    fn = s.kernels.runtime.cg_reduced_sigma
    fn.argtypes, fn.restype = [ctypes.c_void_p], ctypes.c_int
    assert fn(c._problem_ptr) == 1
    assert c.sigma_min == at_output                  # the same number, not an approximation of it
    assert c.solve(0.0, y, q, 1) and c.sigma_min == at_output


@pytest.mark.parametrize("integrator", ["adams", "rk"])     # the Python loop (LSODA), the compiled loop
def test_conditioning_from_the_band_estimates_bounds_the_svd_from_above(models, integrator):
    compiled = models[5]
    res = solver.simulate(compiled, t_end=0.1, output_step=0.01, integrator=integrator)
    assert res.status == "ok"
    s = compiled.system.workspace()
    rows = build_partition("qr", s, res.coordinates[0], 0.0).rows
    assert len(rows) >= partition.COMPILED_ESTIMATE_ROWS
    exact = []
    for t, q in zip(res.t, res.coordinates):
        sv = np.linalg.svd(s.constraints(q, t).jac[rows], compute_uv=False)
        exact.append(sv[-1] / sv[0])
    ratio = np.asarray(res.conditioning) / np.array(exact)
    assert np.all(ratio >= 1.0 - 1e-10) and np.all(ratio <= 1.3), ratio
    assert not np.all(ratio == 1.0)                  # the estimates, not the SVD


def test_the_band_estimate_bounds_sigma_min_of_the_rows_from_above(models):
    s = models[5].system.workspace()
    q, qd, _ = s.initial_state()
    part = build_partition("qr", s, q, 0.0)
    c = s.compiled_reduction(part)
    assert c.solve(0.0, np.concatenate([part.z_of(q), part.V.T @ qd]), q, 1)
    exact = np.linalg.svd(c.jac[part.rows], compute_uv=False)[-1]
    assert exact * (1 - 1e-12) <= c.row_sigma_min() <= 1.3 * exact
