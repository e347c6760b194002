"""σ(Φ_q[rows]) above partition.SVD_MAX_ROWS rows: sparse power-iteration estimates instead of dense SVDs
(solver/partitioning/singular_estimates.py row_singular_estimates) for the conditioning read-out's anchors
(conditioning.anchor_values), Partition.singularity and the partition quality — checked against the SVD."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import solver
from solver.partitioning import conditioning, partition
from solver.partitioning.choose import build_partition
from solver.partitioning.singular_estimates import row_singular_estimates

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tools.scale_models import fourbar_row  # noqa: E402


def test_the_estimates_bound_the_singular_values():
    """σ_min from above and σ_max from below (power iterations on (J Jᵀ)⁻¹ and J Jᵀ: each ‖A x‖ of a
    unit x is at most A's largest eigenvalue), on random sparse rows with a nearly dependent pair.
    J Jᵀ squares the condition number, so an exactly dependent pair reads as σ_min ≈ √ε σ_max (the
    estimates' floor), still far below any well-conditioned value; round-off of J Jᵀ, n ε κ², may put
    σ_min's estimate that much below."""
    rng = np.random.default_rng(3)
    for _ in range(5):
        J = rng.standard_normal((30, 40)) * (rng.random((30, 40)) < 0.15) + np.eye(30, 40)
        J[7] = J[3] + 1e-4 * rng.standard_normal(40)
        low, high = row_singular_estimates(J)
        sv = np.linalg.svd(J, compute_uv=False)
        kappa = sv[0] / sv[-1]          # from above up to the round-off of J Jᵀ: n ε κ²
        assert sv[-1] * (1 - 30 * np.finfo(float).eps * kappa**2) <= low <= 1.25 * sv[-1]
        assert 0.8 * sv[0] <= high <= sv[0] * (1 + 1e-12)
        J[7] = J[3]
        low, high = row_singular_estimates(J)
        assert low < 1e-6 * high


def test_the_gated_read_out_follows_the_svd_through_singular_positions(monkeypatch):
    """Four-bar row N = 3, 4 s (two horizontal passes), compiled loop, every anchor estimated
    (SVD_MAX_ROWS forced to 0): at the passes the read-out is the SVD value from above within the
    estimates' 1.25, elsewhere within TRACK_FACTOR · 1.25 of it; Partition.singularity likewise."""
    monkeypatch.setattr(partition, "SVD_MAX_ROWS", 0)
    compiled = solver.compile_model(fourbar_row(3), codegen="on")
    res = solver.simulate(compiled, t_end=4.0, output_step=0.01)
    assert res.status == "ok"
    system = compiled.system.workspace()
    part = build_partition("qr", system, res.coordinates[0], 0.0)
    exact = []
    for t, q in zip(res.t, res.coordinates):
        sv = np.linalg.svd(system.constraints(q, t).jac[part.rows], compute_uv=False)
        exact.append(sv[-1] / sv[0])
    exact, got = np.array(exact), np.asarray(res.conditioning)
    inner = (exact[1:-1] <= exact[:-2]) & (exact[1:-1] <= exact[2:]) & (exact[1:-1] < 0.2 * np.median(exact))
    passes = np.flatnonzero(inner) + 1
    assert len(passes) >= 2
    ratio = got / exact
    assert np.all((ratio[passes] >= 1 - 1e-9) & (ratio[passes] <= 1.25))
    assert np.all((ratio >= 1 / conditioning.TRACK_FACTOR) & (ratio <= 1.25 * conditioning.TRACK_FACTOR))
    k = passes[0]
    jac = system.constraints(res.coordinates[k], res.t[k]).jac
    assert part.singularity(jac) == pytest.approx(exact[k], rel=0.25)
    assert part.singularity(jac) >= exact[k] * (1 - 1e-9)


def test_the_compiled_loop_reads_out_the_estimates_at_every_row_from_the_band(monkeypatch):
    """On the band algebra from COMPILED_ESTIMATE_ROWS rows the compiled loop writes each output row's
    conditioning itself (banded.c cg_band_row_sigma: the same power iterations on G = J Jᵀ, banded in
    S's order, from the same start): every row equals row_singular_estimates of its Φ_q[rows], to the
    round-off of the two factorizations of G (n ε κ(G) relative, κ(G) = κ(J)²), and no Φ_q[rows] is
    stored.  Four-bar row N = 10 (band and estimates forced), 4 s through two singular passes; compiled
    afresh (recent_compiles forgotten): a recent compilation's workspace keeps a reduction without a band
    that an earlier run of the row made (Run._reduction), which the forced constants would not reach."""
    from solver import recent_compiles
    from solver.codegen import banded, segment
    recent_compiles.forget()
    monkeypatch.setattr(partition, "SVD_MAX_ROWS", 0)
    monkeypatch.setattr(partition, "COMPILED_ESTIMATE_ROWS", 0)
    monkeypatch.setattr(banded, "BAND_FRACTION", 10.0)
    stored = []
    rows = segment.CompiledSegments.rows
    monkeypatch.setattr(segment.CompiledSegments, "rows", lambda self: stored.append(self.store_jac) or rows(self))
    compiled = solver.compile_model(fourbar_row(10), codegen="on")
    res = solver.simulate(compiled, t_end=4.0, output_step=0.02)
    assert res.status == "ok" and stored and not any(stored)
    system = compiled.system.workspace()
    part = build_partition("qr", system, res.coordinates[0], 0.0)
    got = np.asarray(res.conditioning)
    eps = np.finfo(float).eps
    for k in range(1, len(res.t)):            # (the first row is stored by the Python loop)
        low, high = row_singular_estimates(system.constraints(res.coordinates[k], res.t[k]).jac[part.rows])
        assert got[k] == pytest.approx(low / high, rel=len(part.rows) * eps * (high / low) ** 2)
    assert np.min(got) < 0.1 * np.median(got)          # the passes are in it
