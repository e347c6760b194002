"""The Cartesian formulation's compiled reduction in band storage (solver/codegen/banded.c on the
Cartesian kernels, issue #32 item 4): n independent slider–cranks side by side (bench/slider_crank.py,
Lee, Lee & Bae (2013) Table 8), here n = 3 (r = 60 independent rows, 9 redundant) with the thresholds
forced so that the band and the sparse partition are taken at this size.

* partition.qr_bases: one QR per mechanism gives the same orthonormal bases of range(Φ_qᵀ) and
  null(Φ_q) as the one QR of the whole Φ_qᵀ (equal projectors), each column on one mechanism.
* One state: band against dense algebra.  Both are backward-stable solves of the same equations, so
  they agree to round-off amplified by κ(Φ_q U) κ(Φ_q(q_ref)) (B = U K, K of the condition of
  Φ_q[rows](q_ref)), as tests/solver/test_banded_reduction.py derives for the relative formulation.
* A run on the sample's saved settings (QR, LSODA "adams", rtol 1e-6) with a sparse partition: it
  takes the band in C (its partition event says so) and agrees with the same partition solved in
  Python by SuperLU (solver/partitioning/sparse.py).  The two solve the same equations with the same
  independent coordinates, so they differ by round-off carried through LSODA's step and order
  choices: at most the integrator's own error scale, rtol · max|x|.
"""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest

import solver
from solver.analysis.dynamics import Run
from solver.codegen import banded
from solver.partitioning import choose, partition
from solver.partitioning.partition import independent_rows, qr_bases

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
from bench.slider_crank import slider_cranks  # noqa: E402

EPS = np.finfo(float).eps
COPIES = 3


@pytest.fixture(scope="module")
def compiled():
    return solver.compile_model(slider_cranks(COPIES))


@pytest.fixture(scope="module")
def state(compiled):
    """A consistent state 0.05 s into the saved-settings run (crank turned ≈ 0.75 rad)."""
    res = solver.simulate(compiled, t_end=0.05, output_step=0.05)
    return res.coordinates[-1], res.velocities[-1], res.t[-1]


def _algebra(monkeypatch, which):
    """Force the band algebra ("band": any partition with rows) or the dense one."""
    monkeypatch.setattr(banded, "BAND_MIN_ROWS", 1 if which == "band" else 10**9)
    monkeypatch.setattr(banded, "BAND_FRACTION", 10.0)


def test_per_mechanism_qr_bases_span_the_same_spaces(compiled, state):
    q, _, t = state
    jac = compiled.system.constraints(q, t).jac
    J = jac[independent_rows(jac)[0]]
    U, V = qr_bases(J)
    Q, _ = np.linalg.qr(J.T, mode="complete")
    U0, V0 = Q[:, :J.shape[0]], Q[:, J.shape[0]:]
    nq = J.shape[1]
    assert np.max(np.abs(np.hstack([U, V]).T @ np.hstack([U, V]) - np.eye(nq))) <= 10 * nq * EPS
    assert np.max(np.abs(U @ U.T - U0 @ U0.T)) <= 10 * nq * EPS
    assert np.max(np.abs(V @ V.T - V0 @ V0.T)) <= 10 * nq * EPS
    # each independent coordinate moves one slider–crank (its 3 bodies: 21 coordinates)
    assert V.shape[1] == COPIES and all(np.count_nonzero(V[:, c]) <= 21 for c in range(COPIES))


@pytest.mark.parametrize("method", ["qr", "lu"])
def test_one_state_band_equals_dense(compiled, state, monkeypatch, method):
    """q, q̇, q̈, z̈, λ, σ_min(Φ_q U) and ‖N‖_F of one level-3 solve (Cartesian kernels, block-diagonal
    M over its pattern, minimum-norm λ of the 9 redundant rows), band against dense, within
    100 ε κ · scale (module docstring)."""
    from solver.partitioning.choose import build_partition
    s = compiled.system
    q, qd, t = state
    part = build_partition(method, s, q, t)
    assert not part.sparse and len(part.redundant) == 3 * COPIES
    y = np.concatenate([part.z_of(q), part.V.T @ qd])
    out = {}
    for which in ("dense", "band"):
        _algebra(monkeypatch, which)
        c = s.compiled_reduction(part)
        assert (c.band is not None) == (which == "band")
        assert c.solve(t, y, q, c.MULTIPLIERS)
        out[which] = {name: np.array(getattr(c, name)) for name in ("q", "qd", "qdd", "zdd", "lam")}
        out[which] |= {"sigma": c.sigma_min, "gain": c.amplification}
        J = c.jac[part.rows]
    kappa = np.linalg.cond(J @ part.U) * np.linalg.cond(part.reference_rows)
    a, b = out["dense"], out["band"]
    for name in ("q", "qd", "qdd", "zdd", "lam"):
        scale = max(1.0, np.max(np.abs(a[name])))
        assert np.max(np.abs(a[name] - b[name])) <= 100 * EPS * kappa * scale, name
    assert b["sigma"] == pytest.approx(a["sigma"], rel=100 * EPS * kappa)
    assert b["gain"] == pytest.approx(a["gain"], rel=100 * EPS * kappa)


def test_a_sparse_partition_runs_the_band_in_c(compiled, monkeypatch):
    """0.1 s on the saved settings with the sparse partition forced: the band in C (event, no
    "step loop in Python" note) against SuperLU in Python (the band refused), both runs on the same
    steps of LSODA in the Python loop (SuperLU's run steps there, so the band's is kept there too:
    Run.python_loop, else "adams" would step it in C, adams.c): same steps, q and q̇
    within rtol · max|x|, λ within rtol · max|λ| (module docstring).  With the estimates of σ(Φ_q[rows])
    forced too (SVD_MAX_ROWS), the conditioning read-out: banded.c's power iterations on G = J Jᵀ
    against the same iterations on SuperLU's G (singular_estimates), round-off apart: κ(G) = κ(J)²
    times ε, at most 1 / conditioning² · ε, per iteration."""
    monkeypatch.setattr(choose, "SPARSE_MIN_ROWS", 1)
    monkeypatch.setattr(partition, "SVD_MAX_ROWS", 10)
    monkeypatch.setattr(banded, "BAND_FRACTION", 10.0)
    monkeypatch.setattr(Run, "python_loop", ("adams",))
    runs, messages = {}, {}
    for which, min_rows in (("band", 1), ("python", 10**9)):
        monkeypatch.setattr(banded, "BAND_MIN_ROWS", min_rows)
        events = []
        runs[which] = solver.simulate(compiled, t_end=0.1, output_step=0.01, on_event=events.append)
        messages[which] = [e["message"] for e in events]
    a, b = runs["band"], runs["python"]
    assert a.status == b.status == "ok" and compiled.settings.integrator == "adams"
    assert any("band factorization of Φ_q in C (kl = 10, ku = 10)" in m for m in messages["band"])
    assert not any("step loop in Python" in m for m in messages["band"])
    assert any(m.endswith("; sparse factorizations of Φ_q") for m in messages["python"])
    assert a.meta["steps"] == b.meta["steps"]
    rtol = compiled.settings.rtol
    for name in ("coordinates", "velocities", "multipliers"):
        x, y = np.asarray(getattr(a, name)), np.asarray(getattr(b, name))
        assert np.max(np.abs(x - y)) <= rtol * np.max(np.abs(x)), name
    assert np.max(a.constraint_violation) <= 1e-9
    c = np.asarray(a.conditioning)
    assert np.max(np.abs(c / np.asarray(b.conditioning) - 1.0)) <= 100 * EPS / np.min(c) ** 2


def test_the_conditioning_estimates_in_c(compiled, state, monkeypatch):
    """From COMPILED_ESTIMATE_ROWS rows (r = 60 here) CompiledReduction.conditioning (banded.c
    cg_band_row_sigma, after a band solve) estimates σ_min, σ_max of
    Φ_q[rows] as solver.partitioning.singular_estimates does (power iterations on G = J Jᵀ, its inverse
    by the band LU instead of SuperLU): the partition's own read-out above SVD_MAX_ROWS (forced down to
    10 here) within the round-off bound of test_a_sparse_partition_runs_the_band_in_c; below
    COMPILED_ESTIMATE_ROWS none (the partition's read-out stays)."""
    from solver.partitioning.choose import build_partition
    q, qd, t = state
    _algebra(monkeypatch, "band")
    monkeypatch.setattr(partition, "SVD_MAX_ROWS", 10)
    for limit, expected in ((partition.COMPILED_ESTIMATE_ROWS, True), (10**9, False)):
        monkeypatch.setattr(partition, "COMPILED_ESTIMATE_ROWS", limit)
        part = build_partition("qr", compiled.system, q, t)
        c = compiled.system.compiled_reduction(part)
        assert c.solve(t, np.concatenate([part.z_of(q), part.V.T @ qd]), q, c.MULTIPLIERS)
        assert (c.conditioning is not None) is expected
        if expected:
            exact = part.singularity(c.jac)
            assert abs(c.conditioning / exact - 1.0) <= 100 * EPS / exact ** 2


@pytest.mark.parametrize("integrator", ["adams", "rk"])          # the Python loop (LSODA), the compiled loop
def test_packed_kernels_give_the_dense_kernels_runs(compiled, monkeypatch, integrator):
    """The band algebra on the packed Cartesian kernels (codegen/cartesian_packed.c: Φ_q and M in the
    patterns of the entries they write, no dense array per evaluation) and on the dense kernels: the
    same arithmetic on the same entries, so the same runs bit for bit — q, q̇, q̈, λ, conditioning and
    the reactions (which the compiled loop's output_cartesian.c reads from the packed Φ_q)."""
    from solver.codegen import reduced
    from solver.partitioning.choose import build_partition
    _algebra(monkeypatch, "band")
    s = compiled.system
    q0 = s.initial_state()[0]
    assert s.compiled_reduction(build_partition("qr", s, q0, 0.0))._packed is not None
    runs = {}
    for which in ("packed", "dense"):
        if which == "dense":
            monkeypatch.setattr(reduced, "PACKED_KERNELS", {"k_position": "none", "k_dynamics": "none"})
            assert s.compiled_reduction(build_partition("qr", s, q0, 0.0))._packed is None
        runs[which] = solver.simulate(compiled, t_end=0.1, output_step=0.01, integrator=integrator)
    a, b = runs["packed"], runs["dense"]
    assert a.status == b.status == "ok"
    for name in ("coordinates", "velocities", "accelerations", "multipliers", "conditioning"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    for joint in ("crank_pin_0", "crank_rod_2"):
        for x, y in zip(a.joint_reaction(joint), b.joint_reaction(joint)):
            assert np.array_equal(x, y), joint
