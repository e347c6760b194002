"""The sparse full-row-rank certificate (solver/partitioning/rank.py) gives the dense pivoted QR's
decisions: the same independent and redundant rows, the same self-stress and mode spaces, and the
same consistent velocities — on the four-bar row in joint coordinates (its redundant rows are rows
of zeros), a Cartesian chain (no redundant row) — and declines (the dense QR answers) where rows are
redundant without being zero or the rank drops."""
from __future__ import annotations

import functools
import os
import sys

import numpy as np
import pytest
import scipy.linalg as sla

import solver
from solver.analysis import assembly
from solver.partitioning import partition, self_stress
from solver.partitioning.rank import certified_null_spaces, certified_rows

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
from tools.scale_models import chain, fourbar_row  # noqa: E402

EPS = np.finfo(float).eps


def _dense_rows(jac, tol=1e-9):
    """independent_rows' dense decision: the pivoted QR of Φ_qᵀ."""
    _, R, piv = sla.qr(jac.T, mode="economic", pivoting=True)
    rank = partition.numerical_rank(np.abs(np.diag(R)), jac.shape, tol)
    return np.sort(piv[:rank]), np.sort(piv[rank:])


@functools.lru_cache(maxsize=None)
def _start(builder, n, formulation):
    system = solver.compile_model(builder(n), codegen="off", formulation=formulation).system
    return system, system.initial_state()


def _state(builder, n, formulation, t=0.0, shake=0.0):
    system, (q, qd, _) = _start(builder, n, formulation)
    if shake:
        q = system.normalize(q + shake * np.random.default_rng(3).standard_normal(len(q)))
    return system, q, qd, system.constraints(q, t, level=1)


@pytest.fixture
def sparse_everywhere(monkeypatch):
    """The certificate tried from the first row on (the models here are below SPARSE_RANK_MIN)."""
    for module in (partition, self_stress, assembly):
        monkeypatch.setattr(module, "SPARSE_RANK_MIN", 1)


@pytest.mark.parametrize("n, shake", [(10, 0.0), (20, 0.0), (20, 0.02)])
def test_fourbar_row_relative_rows_and_spaces(n, shake, sparse_everywhere):
    system, q, _, ev = _state(fourbar_row, n, "relative", shake=shake)
    jac = ev.jac
    dense = _dense_rows(jac)
    found = certified_rows(jac, 1e-9)
    assert found is not None
    for a, b in zip(found, dense):
        np.testing.assert_array_equal(a, b)
    assert len(found[1]) == 3 * n                    # the out-of-plane rows of the N cut revolutes
    spaces = self_stress.null_spaces(jac)
    assert spaces.rank == len(found[0])
    # the dense QR's spaces (monkeypatch off: compare against sla.qr directly)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(self_stress, "SPARSE_RANK_MIN", 10**9)
        ref = self_stress.null_spaces(jac)
    np.testing.assert_array_equal(spaces.independent, ref.independent)
    np.testing.assert_array_equal(spaces.redundant, ref.redundant)
    # the same spaces: each basis reproduces the other's vectors by orthogonal projection
    scale = len(jac) * EPS * 100
    assert np.abs(spaces.stress @ (spaces.stress.T @ ref.stress) - ref.stress).max() < scale
    assert np.abs(spaces.modes @ (spaces.modes.T @ ref.modes) - ref.modes).max() < scale
    np.testing.assert_allclose(spaces.modes.T @ spaces.modes, np.eye(spaces.modes.shape[1]), atol=scale)


def test_fourbar_row_consistent_velocities(monkeypatch):
    """The sparse LU of Φ_q W⁻¹ Φ_qᵀ gives the dense least squares' q̇ to round-off."""
    system, q, qd, ev = _state(fourbar_row, 20, "relative", shake=0.02)
    qd0 = qd + 0.1 * np.random.default_rng(5).standard_normal(len(qd))
    dense = assembly.consistent_velocities(system, q, qd0, 0.0)
    for module in (partition, self_stress, assembly):
        monkeypatch.setattr(module, "SPARSE_RANK_MIN", 1)
    sparse = assembly.consistent_velocities(system, q, qd0, 0.0)
    np.testing.assert_allclose(sparse, dense, rtol=0, atol=1e-12 * max(1.0, np.abs(dense).max()))
    rows = partition.independent_rows(ev.jac)[0]
    assert np.abs(ev.jac[rows] @ sparse - ev.nu[rows]).max() < 1e-12


def test_cartesian_chain_certified(sparse_everywhere):
    """No redundant row (joints and normalizations of a chain): every row independent, as the dense QR."""
    _, _, _, ev = _state(chain, 30, "cartesian", shake=0.01)
    found = certified_rows(ev.jac, 1e-9)
    assert found is not None and len(found[1]) == 0
    np.testing.assert_array_equal(found[0], np.arange(len(ev.jac)))


def test_declined_where_rows_are_redundant_but_not_zero(sparse_everywhere):
    """Cartesian planar loops of 3D revolutes: redundant rows with non-zero entries — no certificate,
    the dense QR decides (independent_rows falls back to it)."""
    _, _, _, ev = _state(fourbar_row, 10, "cartesian")
    assert certified_rows(ev.jac, 1e-9) is None
    assert certified_null_spaces(ev.jac, 1e-9) is None
    for a, b in zip(partition.independent_rows(ev.jac), _dense_rows(ev.jac)):
        np.testing.assert_array_equal(a, b)


def test_declined_at_a_rank_drop():
    """Two equal non-zero rows (a rank drop): A Aᵀ − (2t)² I is not positive definite."""
    rng = np.random.default_rng(0)
    jac = rng.standard_normal((6, 10))
    jac[4] = jac[1]
    assert certified_rows(jac, 1e-9) is None
    jac[4] = jac[1] + 1e-3 * rng.standard_normal(10)        # far from the threshold: certified
    rows, redundant = certified_rows(jac, 1e-9)
    np.testing.assert_array_equal(rows, np.arange(6))
    assert len(redundant) == 0
