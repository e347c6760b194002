"""The initial velocities of a relative system with many coordinates (RelativeSystem.initial_state:
min ½ (A q̇ − y)ᵀ W (A q̇ − y) subject to Φ_q q̇ = ν) from the sparse LU of the KKT matrix
(relative.sparse_velocity_fit) against a second formulation of the same problem: the null-space
method, q̇ = q̇_p + N z with N an orthonormal basis of null(Φ_q) (SVD) and z the weighted least squares
in it.  Both are backward stable: they agree to ε κ, κ the condition number of W^½ A N."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest
from scipy.linalg import null_space

from solver.formulations import relative
from solver.formulations.relative import RelativeSystem

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
from tools.scale_models import fourbar_row  # noqa: E402

EPS = np.finfo(float).eps


@pytest.mark.parametrize("n", [10, 30])
def test_the_sparse_fit_is_the_constrained_least_squares(monkeypatch, n):
    s = RelativeSystem(fourbar_row(n))
    monkeypatch.setattr(relative, "SPARSE_FIT_MIN", 0)
    q, qd, _ = s.initial_state()
    A, y, w = s.velocity_fit(q)
    ev = s.constraints(q, 0.0, level=1)
    N = null_space(ev.jac)
    qp = np.linalg.lstsq(ev.jac, ev.nu, rcond=None)[0]
    sw = np.sqrt(w)[:, None]
    z = np.linalg.lstsq(sw * (A @ N), np.sqrt(w) * (y - A @ qp), rcond=None)[0]
    reference = qp + N @ z
    kappa = np.linalg.cond(sw * (A @ N))
    scale = max(1.0, np.max(np.abs(reference)))
    assert np.max(np.abs(qd - reference)) <= 100 * EPS * kappa * scale
    assert np.max(np.abs(ev.jac @ qd - ev.nu)) <= 100 * EPS * scale * np.max(np.abs(ev.jac))
    assert np.max(np.abs(qd)) > 0.5                  # the cranks' 1 rad/s: a moving start


def test_a_singular_kkt_matrix_is_left_to_the_dense_fit():
    """Dependent non-zero rows of Φ_q make the KKT matrix singular: no sparse answer (None)."""
    A = np.eye(2)
    jac = np.array([[1.0, 1.0], [2.0, 2.0]])
    assert relative.sparse_velocity_fit(A, np.ones(2), np.ones(2), jac, np.zeros(2)) is None
    assert relative.sparse_velocity_fit(A, np.ones(2), np.ones(2), jac[:1], np.zeros(1)) == pytest.approx([0.0, 0.0])
