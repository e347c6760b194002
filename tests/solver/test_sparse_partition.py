"""Sparse factorizations of Φ_q in the Cartesian formulation (solver/partitioning/sparse.py, issue 18):
the same partition solved with SuperLU instead of dense LU gives the dense path's positions,
velocities, accelerations and multipliers to round-off (kernel level, LU / QR / SVD), the same
short trajectories (1e-9), conditioning estimates equal to their power iterations in exact arithmetic
(from the SVD), bounds of the singular values from the right side, and is
chosen by size only for systems with a known Φ_q pattern."""
from __future__ import annotations

import glob
import os
import sys

import numpy as np
import pytest

import solver
from solver.analysis.assembly import assemble_positions, consistent_velocities
from solver.formulations.cartesian import CartesianSystem
from solver.partitioning import choose, sparse
from solver.partitioning.partition import Partition, independent_rows
from solver.partitioning.choose import build_partition
from solver.partitioning.singular_estimates import SIGMA_ITERATIONS
from solver.partitioning.sparse import SparsePartition

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
sys.path.insert(0, ROOT)
from bench.slider_crank import slider_cranks  # noqa: E402
from tools.scale_models import fourbar_row  # noqa: E402

pytestmark = pytest.mark.numerics   # run again under another BLAS kernel (Makefile)

MODELS = {"slider_crank_x5": lambda: slider_cranks(5), "fourbar_row_5": lambda: fourbar_row(5)}


def rel(a, b):
    return np.max(np.abs(a - b)) / max(np.max(np.abs(a)), 1e-300)


def power_iteration(A, inverse):
    """What singular_estimates.largest_gain's SIGMA_ITERATIONS steps from its start give in exact
    arithmetic on (A Aᵀ)⁻¹ (inverse: σ_min's estimate 1/√gain) or A Aᵀ (σ_max's √gain), from A's SVD:
    A Aᵀ = W diag(σ²) Wᵀ, so the k-th iterate is W diag(σ^∓2k) Wᵀ x0 and the last gain is
    ‖diag(σ^∓2k) c‖ / ‖diag(σ^∓2(k-1)) c‖, c = Wᵀ x0.  Returns (estimate, κ(A))."""
    W, sv, _ = np.linalg.svd(A)
    x0 = 1.0 + 0.1 * (np.arange(A.shape[0]) % 7)
    c, mu, k = W.T @ x0, (sv ** -2.0 if inverse else sv ** 2.0), SIGMA_ITERATIONS
    gain = np.linalg.norm(mu ** k * c) / np.linalg.norm(mu ** (k - 1) * c)
    return (1.0 / np.sqrt(gain) if inverse else np.sqrt(gain)), sv[0] / sv[-1]


@pytest.fixture(scope="module", params=sorted(MODELS))
def state(request):
    """A consistent state of the model, away from its drawn configuration."""
    system = CartesianSystem(MODELS[request.param]())
    q, qd, t = system.initial_state()
    q = assemble_positions(system, q, t)
    qd = consistent_velocities(system, q, qd, t)
    part = build_partition("qr", system, q, t)
    z, zd = part.z_of(q) + 0.05, part.V.T @ qd + 0.3
    q, ev = part.positions(system, z, t, q)
    qd = part.velocities(ev.jac, ev.nu, zd)
    return system, q, qd, t


@pytest.mark.parametrize("method", ["qr", "lu", "svd"])
def test_sparse_solves_equal_the_dense_ones(state, method):
    system, q, qd, t = state
    jac = system.constraints(q, t).jac
    rows, redundant = independent_rows(jac)
    assert len(redundant) > 0                          # minimum-norm multipliers are exercised
    dense = Partition(method, q, jac, rows, redundant)
    fast = SparsePartition(method, q, jac, rows, redundant, system.jacobian_pattern())
    np.testing.assert_array_equal(fast.V, dense.V)     # the same partition, only the algebra differs
    rng = np.random.default_rng(3)
    z, zd = dense.z_of(q) + 0.02, dense.V.T @ qd - 0.1
    guess = q + 1e-3 * rng.standard_normal(len(q))
    q1, ev1 = dense.positions(system, z, t, guess)
    q2, ev2 = fast.positions(system, z, t, guess)
    assert rel(q1, q2) < 1e-12
    v1, v2 = dense.velocities(ev1.jac, ev1.nu, zd), fast.velocities(ev2.jac, ev2.nu, zd)
    assert rel(v1, v2) < 1e-12
    ev = system.constraints(q1, t, v1, level=2)
    M, Q = system.mass(q1), system.forces(q1, v1, t)
    a1, zdd1, N1 = dense.accelerations(M, Q, ev.jac, ev.gamma)
    a2, zdd2, N2 = fast.accelerations(M, Q, ev.jac, ev.gamma)
    assert rel(a1, a2) < 1e-11 and rel(zdd1, zdd2) < 1e-11 and rel(N1, N2) < 1e-11
    assert rel(dense.multipliers(ev.jac, M, a1, Q), fast.multipliers(ev.jac, M, a1, Q)) < 1e-10
    # σ estimates (power iterations, as reduced.c): σ_min from above, σ_max from below, and what the
    # same iterations give in exact arithmetic (power_iteration) within their round-off, 100 ε κ²; how
    # close that is to the SVD depends on the start's component along the extreme singular vectors
    # (≈ 0.27 for σ_min = 0.18 at this state of the four-bar row: the next ones are 0.272, 0.277)
    eps = np.finfo(float).eps
    exact_dep, A = dense._dependent_sigma_min(ev.jac), ev.jac[dense.rows] @ dense.U
    estimate, kappa = power_iteration(A, inverse=True)
    assert exact_dep * (1 - 1e-9) <= fast._dependent_sigma_min(ev.jac)
    assert fast._dependent_sigma_min(ev.jac) == pytest.approx(estimate, rel=100 * eps * kappa ** 2)
    (lo1, hi1), (lo2, hi2) = dense._row_singular_values(ev.jac), fast._row_singular_values(ev.jac)
    assert lo1 * (1 - 1e-9) <= lo2 and hi2 <= hi1 * (1 + 1e-9)
    (low, kappa), (high, _) = power_iteration(ev.jac[dense.rows], True), power_iteration(ev.jac[dense.rows], False)
    assert lo2 == pytest.approx(low, rel=100 * eps * kappa ** 2) and hi2 == pytest.approx(high, rel=100 * eps * kappa ** 2)
    assert fast._smallest_row_norm(ev.jac) == pytest.approx(dense._smallest_row_norm(ev.jac), rel=1e-14)
    assert fast.amplification(ev.jac) == pytest.approx(dense.amplification(ev.jac), rel=1e-11)


@pytest.mark.parametrize("name, t_end", [("slider_crank_x5", 0.1), ("fourbar_row_5", 0.3)])
def test_sparse_trajectory_equals_the_dense_one(monkeypatch, name, t_end):
    """A short run (no re-partition) on the sparse path equals the dense path's to 1e-9 (Cartesian: the
    relative formulation's many-loop models, which "auto" picks for the row, take sparse partitions
    too since it gives its pattern: tests/solver/test_sparse_relative_partition.py)."""
    model = MODELS[name]()
    runs = {}
    for key, threshold in (("dense", 10**9), ("sparse", 1)):
        monkeypatch.setattr(choose, "SPARSE_MIN_ROWS", threshold)
        runs[key] = solver.simulate(model, t_end=t_end, output_step=t_end / 20, partitioning="qr",
                                    formulation="cartesian")
    d, s = runs["dense"], runs["sparse"]
    assert d.meta["steps"] == s.meta["steps"]
    for attr in ("coordinates", "velocities", "accelerations"):
        assert rel(getattr(d, attr), getattr(s, attr)) < 1e-9, attr
    assert rel(d.multipliers, s.multipliers) < 1e-9
    assert rel(d.conditioning, s.conditioning) < 0.1


def test_a_sparse_partition_says_its_steps_are_in_python(monkeypatch):
    """"auto" on generated kernels steps in C only through a compiled reduction: a sparse partition
    the band algebra does not take (codegen/banded.py; refused here) steps LSODA in Python, and its
    event says so (it used to say "step loop in C").  tests/solver/test_cartesian_band.py: one it takes."""
    from solver.codegen import banded
    monkeypatch.setattr(choose, "SPARSE_MIN_ROWS", 1)
    monkeypatch.setattr(banded, "BAND_MIN_ROWS", 10**9)
    events = []
    res = solver.simulate(MODELS["slider_crank_x5"](), t_end=0.02, output_step=0.01, integrator="auto",
                          on_event=events.append)
    messages = [e["message"] for e in events]
    assert res.status == "ok" and not any(m.startswith("step loop in C") for m in messages)
    assert "step loop in Python (adams): sparse factorizations of Φ_q (no compiled reduction)" in messages


@pytest.mark.parametrize("sample", sorted(glob.glob(os.path.join(ROOT, "sample_models", "*.mbs.json"))),
                         ids=lambda p: os.path.basename(p).split(".")[0])
def test_the_jacobian_pattern_holds_every_nonzero(sample):
    """Every sample compiled to Cartesian coordinates (all joint types and drivers they use): Φ_q at a
    random state has no non-zero outside ``jacobian_pattern`` (None only for flexible bodies)."""
    system = CartesianSystem(solver.load_model(sample))
    pattern = system.jacobian_pattern()
    if system.flex:
        assert pattern is None
        return
    q, _, _ = system.initial_state()
    rng = np.random.default_rng(5)
    jac = system.constraints(q + 0.1 * rng.standard_normal(len(q)), 0.3).jac
    outside = np.ones(jac.shape, dtype=bool)
    outside[pattern] = False
    assert np.count_nonzero(jac[outside]) == 0
    assert len(set(zip(*pattern))) == len(pattern[0])          # no entry twice


def test_the_sparse_path_is_chosen_by_size_and_pattern(monkeypatch):
    monkeypatch.setattr(choose, "SPARSE_MIN_ROWS", 50)
    for n, expected in ((5, True), (2, False)):            # 76 and 34 independent rows
        system = CartesianSystem(fourbar_row(n))
        q, _, t = system.initial_state()
        part = build_partition("qr", system, q, t)
        assert part.sparse is expected and len(part.rows) == 7 * (2 * n + 1) - 1
    parametric = CartesianSystem(fourbar_row(5), form="parametric")
    assert parametric.jacobian_pattern() is None
    q, _, t = parametric.initial_state()
    assert not build_partition("qr", parametric, q, t).sparse


def test_minimum_norm_correction_holds_where_the_normal_equations_fail():
    """sparse.minimum_norm_correction against the same minimization solved in 60-digit arithmetic
    (mpmath) for an X of rank one scaled to 1e8 plus 1e-3 noise: X Xᵀ + I is singular in double (the
    normal equations the multipliers used to solve are singular to working precision), the least-squares form is
    within 2.3e-5 of the exact y (asserted 1e-3; the noise is resolved only to 1e-5 in X itself)."""
    import mpmath
    rng = np.random.default_rng(2)
    X = 1e8 * np.outer(rng.standard_normal(3), rng.standard_normal(6)) + 1e-3 * rng.standard_normal((3, 6))
    lam_rows = rng.standard_normal(6)
    # X Xᵀ + I is singular in double precision (whether LAPACK then raises depends on its kernel: it
    # did under SkylakeX, not under Nehalem) — its condition number is beyond 1/ε
    assert np.linalg.cond(X @ X.T + np.eye(3)) > 1.0 / np.finfo(float).eps
    with mpmath.workdps(60):
        Xm = mpmath.matrix(X.tolist())
        exact = mpmath.lu_solve(Xm * Xm.T + mpmath.eye(3), -(Xm * mpmath.matrix(lam_rows.tolist())))
        exact = np.array([float(v) for v in exact])
    y = sparse.minimum_norm_correction(X, lam_rows)
    assert np.max(np.abs(y - exact)) <= 1e-3 * np.max(np.abs(exact))
