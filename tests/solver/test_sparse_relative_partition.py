"""The sparse partition of the relative formulation (generated kernels: their Φ_q pattern) on the
four-bar row, its V from the sparse factorization (sparse.SPARSE_BASIS_MIN forced): the dense
partition's answers to round-off — V (one degree of freedom: the same up to sign), positions,
velocities, accelerations, minimum-norm multipliers, ‖N‖, σ_min(Φ_q U) — in Python and through the
compiled band reduction."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest

import solver
from solver.codegen import banded
from solver.partitioning import choose, sparse
from solver.partitioning.partition import Partition, independent_rows
from solver.partitioning.sparse import SparsePartition

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
from tools.scale_models import fourbar_row  # noqa: E402

N = 10                                  # as test_banded_reduction: the same library from the cache


@pytest.fixture(scope="module")
def state():
    system = solver.compile_model(fourbar_row(N), codegen="on").system
    q, qd, t = system.initial_state()
    part = Partition("qr", q, system.constraints(q, t).jac, *independent_rows(system.constraints(q, t).jac))
    q, ev = part.positions(system, part.z_of(q) + 0.3, t, q)           # away from the drawn state
    qd = part.velocities(ev.jac, ev.nu, part.V.T @ qd + 0.2)
    return system, q, qd, t


def rel(a, b):
    return np.max(np.abs(a - b)) / max(np.max(np.abs(a)), 1e-300)


def _pair(system, q, t, monkeypatch):
    monkeypatch.setattr(sparse, "SPARSE_BASIS_MIN", 1)
    jac = system.constraints(q, t).jac
    rows, redundant = independent_rows(jac)
    dense = Partition("qr", q, jac, rows, redundant)
    fast = SparsePartition("qr", q, jac, rows, redundant, system.jacobian_pattern())
    return dense, fast


def test_the_relative_system_takes_the_sparse_partition(state, monkeypatch):
    system, q, _, t = state
    monkeypatch.setattr(choose, "SPARSE_MIN_ROWS", 1)
    assert isinstance(choose.build_partition("qr", system, q, t), SparsePartition)


def test_sparse_solves_equal_the_dense_ones(state, monkeypatch):
    system, q, qd, t = state
    dense, fast = _pair(system, q, t, monkeypatch)
    assert fast._U is None                             # no dense U made
    sign = np.sign(float(fast.V[:, 0] @ dense.V[:, 0]))
    assert rel(dense.V, sign * fast.V) < 1e-13
    z, zd = dense.z_of(q) - 0.05, dense.V.T @ qd + 0.1
    q1, ev1 = dense.positions(system, z, t, q)
    q2, ev2 = fast.positions(system, sign * z, t, q)
    assert rel(q1, q2) < 1e-12
    v1, v2 = dense.velocities(ev1.jac, ev1.nu, zd), fast.velocities(ev2.jac, ev2.nu, sign * zd)
    assert rel(v1, v2) < 1e-12
    ev = system.constraints(q1, t, v1, level=2)
    M, Q = system.mass(q1), system.forces(q1, v1, t)
    a1, _, N1 = dense.accelerations(M, Q, ev.jac, ev.gamma)
    a2, _, N2 = fast.accelerations(M, Q, ev.jac, ev.gamma)
    assert rel(a1, a2) < 1e-11 and rel(N1, sign * N2) < 1e-11
    assert rel(dense.multipliers(ev.jac, M, a1, Q), fast.multipliers(ev.jac, M, a1, Q)) < 1e-10
    assert fast.amplification(ev.jac) == pytest.approx(dense.amplification(ev.jac), rel=1e-11)
    # σ_min(Φ_q U) without U (Bᵀ(I − VVᵀ)B): the estimate of the dense-basis form, from above the SVD's
    with monkeypatch.context() as mp:
        mp.setattr(sparse, "SPARSE_BASIS_MIN", 10**9)
        jac = system.constraints(q, t).jac
        with_u = SparsePartition("qr", q, jac, dense.rows, dense.redundant, system.jacobian_pattern())
    assert fast._dependent_sigma_min(ev.jac) == pytest.approx(with_u._dependent_sigma_min(ev.jac), rel=1e-10)
    assert fast._dependent_sigma_min(ev.jac) >= dense._dependent_sigma_min(ev.jac) * (1 - 1e-9)
    # U when read: an orthonormal complement of V
    U = fast.U
    assert np.abs(U.T @ U - np.eye(U.shape[1])).max() < 1e-13 and np.abs(U.T @ fast.V).max() < 1e-13


def test_the_band_reduction_of_the_sparse_partition(state, monkeypatch):
    """cg_reduced (band algebra) on the sparse partition: the dense partition's q̈ and λ to round-off."""
    system, q, qd, t = state
    monkeypatch.setattr(banded, "BAND_MIN_ROWS", 1)
    monkeypatch.setattr(banded, "BAND_FRACTION", 10.0)
    dense, fast = _pair(system, q, t, monkeypatch)
    out = []
    for part in (dense, fast):
        c = system.compiled_reduction(part)
        assert c.band is not None
        c.solve(t, np.concatenate([part.z_of(q), part.V.T @ qd]), q, c.MULTIPLIERS)
        out.append({name: np.array(getattr(c, name)) for name in ("q", "qd", "qdd", "lam")})
    for name in ("q", "qd", "qdd"):
        assert rel(out[0][name], out[1][name]) < 1e-11, name
    assert rel(out[0]["lam"], out[1]["lam"]) < 1e-9
    assert fast._U is None                             # the band reduction never read U


def test_a_run_on_the_sparse_start_matches_the_dense_one(monkeypatch):
    """simulate() on the defaults (generated kernels, compiled loop) with every sparse form forced —
    the certificate's rows, null spaces and velocities, the sparse partition with V from its
    factorization, the band reduction — against the same run on the dense forms: the same exact-motion
    error (tools/fourbar_row.py), positions to the integration's round-off amplified over a singular
    pass, the same non-unique reaction components."""
    from solver.analysis import assembly
    from solver.partitioning import partition, self_stress
    from tools.fourbar_row import position_error
    compiled = solver.compile_model(fourbar_row(N), codegen="on")
    monkeypatch.setattr(banded, "BAND_MIN_ROWS", 1)
    monkeypatch.setattr(banded, "BAND_FRACTION", 10.0)
    runs = {}
    for key, low in (("dense", False), ("sparse", True)):
        with monkeypatch.context() as mp:
            if low:
                for module in (partition, self_stress, assembly):
                    mp.setattr(module, "SPARSE_RANK_MIN", 1)
                mp.setattr(choose, "SPARSE_MIN_ROWS", 1)
                mp.setattr(sparse, "SPARSE_BASIS_MIN", 1)
            runs[key] = solver.simulate(compiled, t_end=1.0, output_step=0.01)
    d, s = runs["dense"], runs["sparse"]
    assert d.status == s.status == "ok"
    assert any("sparse" in e["message"] or "band" in e["message"] for e in s.events if e["kind"] == "partition")
    err_d, err_s = position_error(d, N), position_error(s, N)
    assert err_d < 1e-6 and err_s < 1e-6          # the row's accuracy on the defaults (6.7e-6 m over 20 s, 20 passes)
    # measured: errors 1.8715e-08 / 1.8721e-08 m, positions 8e-12 m apart (steps ~1e-8 relative apart)
    assert abs(err_d - err_s) < 1e-9
    for name in ("R1", f"R{N}", f"C{N}"):
        assert np.abs(d.body_position(name) - s.body_position(name)).max() < 1e-9
    assert d.nonunique_components == s.nonunique_components and len(s.nonunique_components) > 0
