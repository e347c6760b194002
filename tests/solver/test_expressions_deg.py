"""The ``deg`` constant of time expressions: one degree in radians (π/180), exact derivatives."""
import math

import numpy as np
import pytest

from solver.errors import ExpressionError
from solver.expressions import parse_expression


def test_deg_is_pi_over_180_with_exact_derivatives():
    e = parse_expression("30*deg*sin(2*t)")
    t = np.linspace(0.0, 3.0, 7)
    a = math.radians(30.0)   # the standard library's conversion, independent of the constant
    np.testing.assert_allclose(e.value(t), a * np.sin(2 * t), rtol=1e-15, atol=1e-16)
    np.testing.assert_allclose(e.d1(t), 2 * a * np.cos(2 * t), rtol=1e-14, atol=1e-16)
    np.testing.assert_allclose(e.d2(t), -4 * a * np.sin(2 * t), rtol=1e-14, atol=1e-16)
    assert parse_expression("180*deg").value(0.0) == pytest.approx(math.pi, rel=1e-16)


def test_deg_cannot_be_the_variable():
    with pytest.raises(ExpressionError):
        parse_expression("deg + 1", variable="deg")
