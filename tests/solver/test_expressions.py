"""Tests of solver.expressions: parsing, evaluation, symbolic derivatives, limits, tables."""
import math
import pickle
import string
import timeit
import warnings

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy.interpolate import CubicSpline

from solver.errors import ExpressionError, ModelError
from solver.expressions import (FUNCTION_NAMES, Binary, Call, Expression, Num, TableFunction,
                                TimeFunction, parse_expression, time_function)

PI = math.pi
TIMES = np.linspace(-9.7, 9.3, 41)

# (text, value, first derivative, second derivative) as numpy closed forms
CLOSED_FORMS = [
    ("pi/3*sin(pi/5*t)",
     lambda t: PI / 3 * np.sin(PI / 5 * t),
     lambda t: PI / 3 * PI / 5 * np.cos(PI / 5 * t),
     lambda t: -PI / 3 * (PI / 5) ** 2 * np.sin(PI / 5 * t)),
    ("0.5*sin(2*t)",
     lambda t: 0.5 * np.sin(2 * t), lambda t: np.cos(2 * t), lambda t: -2 * np.sin(2 * t)),
    ("t^2", lambda t: t ** 2, lambda t: 2 * t, lambda t: 2 + 0 * t),
    ("t**3 - 2*t + 1", lambda t: t ** 3 - 2 * t + 1, lambda t: 3 * t ** 2 - 2, lambda t: 6 * t),
    ("pow(t, 3)", lambda t: t ** 3, lambda t: 3 * t ** 2, lambda t: 6 * t),
    ("exp(-0.5*t)*cos(3*t)",
     lambda t: np.exp(-0.5 * t) * np.cos(3 * t),
     lambda t: np.exp(-0.5 * t) * (-0.5 * np.cos(3 * t) - 3 * np.sin(3 * t)),
     lambda t: np.exp(-0.5 * t) * (-8.75 * np.cos(3 * t) + 3 * np.sin(3 * t))),
    ("sqrt(1 + t^2)",
     lambda t: np.sqrt(1 + t ** 2), lambda t: t / np.sqrt(1 + t ** 2),
     lambda t: (1 + t ** 2) ** -1.5),
    ("atan2(t, 2)",
     lambda t: np.arctan2(t, 2), lambda t: 2 / (4 + t ** 2), lambda t: -4 * t / (4 + t ** 2) ** 2),
    ("atan2(2, t)",
     lambda t: np.arctan2(2, t), lambda t: -2 / (4 + t ** 2), lambda t: 4 * t / (4 + t ** 2) ** 2),
    ("log(1 + t^2)",
     lambda t: np.log(1 + t ** 2), lambda t: 2 * t / (1 + t ** 2),
     lambda t: (2 - 2 * t ** 2) / (1 + t ** 2) ** 2),
    ("log10(1 + t^2)",
     lambda t: np.log10(1 + t ** 2), lambda t: 2 * t / (1 + t ** 2) / np.log(10),
     lambda t: (2 - 2 * t ** 2) / (1 + t ** 2) ** 2 / np.log(10)),
    ("tanh(t)",
     lambda t: np.tanh(t), lambda t: 1 - np.tanh(t) ** 2,
     lambda t: -2 * np.tanh(t) * (1 - np.tanh(t) ** 2)),
    ("cosh(t/3) + sinh(t/4)",
     lambda t: np.cosh(t / 3) + np.sinh(t / 4),
     lambda t: np.sinh(t / 3) / 3 + np.cosh(t / 4) / 4,
     lambda t: np.cosh(t / 3) / 9 + np.sinh(t / 4) / 16),
    ("atan(t) + tan(t/10)",
     lambda t: np.arctan(t) + np.tan(t / 10),
     lambda t: 1 / (1 + t ** 2) + 1 / (10 * np.cos(t / 10) ** 2),
     lambda t: -2 * t / (1 + t ** 2) ** 2 + np.sin(t / 10) / (50 * np.cos(t / 10) ** 3)),
    ("asin(t/20) - acos(t/30)",
     lambda t: np.arcsin(t / 20) - np.arccos(t / 30),
     lambda t: 1 / (20 * np.sqrt(1 - (t / 20) ** 2)) + 1 / (30 * np.sqrt(1 - (t / 30) ** 2)),
     lambda t: (t / 20) / (400 * (1 - (t / 20) ** 2) ** 1.5)
     + (t / 30) / (900 * (1 - (t / 30) ** 2) ** 1.5)),
    ("2^t",
     lambda t: 2.0 ** t, lambda t: 2.0 ** t * np.log(2), lambda t: 2.0 ** t * np.log(2) ** 2),
    ("e^(t/4)", lambda t: np.exp(t / 4), lambda t: np.exp(t / 4) / 4, lambda t: np.exp(t / 4) / 16),
    ("(t^2 + 1)^(t/10)",
     lambda t: (t ** 2 + 1) ** (t / 10),
     lambda t: (t ** 2 + 1) ** (t / 10) * (np.log(t ** 2 + 1) / 10 + t ** 2 / (5 * (t ** 2 + 1))),
     None),
    ("1/(2 + sin(t))",
     lambda t: 1 / (2 + np.sin(t)), lambda t: -np.cos(t) / (2 + np.sin(t)) ** 2,
     lambda t: (np.sin(t) * (2 + np.sin(t)) + 2 * np.cos(t) ** 2) / (2 + np.sin(t)) ** 3),
    ("abs(t)*t", lambda t: np.abs(t) * t, lambda t: 2 * np.abs(t), lambda t: 2 * np.sign(t)),
    ("sign(t)*t^2", lambda t: np.sign(t) * t ** 2, lambda t: 2 * np.abs(t),
     lambda t: 2 * np.sign(t)),
    ("min(t, 1) + 2*max(t, -1)",
     lambda t: np.minimum(t, 1) + 2 * np.maximum(t, -1),
     lambda t: (t <= 1) + 2.0 * (t >= -1), lambda t: 0 * t),
    ("7", lambda t: 7 + 0 * t, lambda t: 0 * t, lambda t: 0 * t),
]


@pytest.mark.parametrize("text, f, df, d2f", CLOSED_FORMS, ids=[c[0] for c in CLOSED_FORMS])
def test_values_and_derivatives_match_closed_forms(text, f, df, d2f):
    expression = parse_expression(text)
    for method, expected in ((expression.value, f), (expression.d1, df), (expression.d2, d2f)):
        if expected is None:
            continue
        want = expected(TIMES)
        np.testing.assert_allclose(method(TIMES), want, rtol=1e-12, atol=1e-12)
        for t, w in zip(TIMES, want):
            got = method(float(t))
            assert isinstance(got, float)
            assert got == pytest.approx(w, rel=1e-12, abs=1e-12)


SMOOTH = ["pi/3*sin(pi/5*t)", "0.5*sin(2*t)", "t^2", "t**3 - 2*t + 1", "exp(-0.5*t)*cos(3*t)",
          "sqrt(1 + t^2)", "atan2(t, 2)", "atan2(sin(t), 2 + cos(t))", "log(1 + t^2)",
          "log10(2 + t^2)", "tanh(t)", "cosh(t/3) + sinh(t/4)", "atan(t) + tan(t/10)",
          "asin(t/20) - acos(t/30)", "2^t", "(t^2 + 1)^(t/10)", "1/(2 + sin(t))",
          "t/(1 + t^2)^2", "exp(sin(t))*sqrt(2 + cos(3*t))", "-t^2/2 + 3*t - 4",
          "e^(-t^2/20)", "pow(1 + t^2, 0.5)*cos(t)"]

# piecewise-smooth expressions and the points where they are not smooth
PIECEWISE = [("abs(t)*t", [0.0]), ("sign(t)*t^3", [0.0]), ("min(t, 1)*t + max(t^2, 4)", [1, -2, 2]),
             ("step(t, -2, 1, 3, -1)", [-2, 3]), ("step(t, 0, 0, 1, 1)*sin(t)", [0, 1]),
             ("step(sin(t), -0.5, 0, 0.5, 2*t)",
              [k * PI + s for k in range(-4, 5) for s in (PI / 6, -PI / 6)]),
             ("step(t, -1, t^2, 1, 3*t)", [-1, 1]),
             ("abs(sin(t)) + t", [k * PI for k in range(-4, 5)])]


def _central_difference(function, t, h):
    return (function(t + h) - function(t - h)) / (2 * h)


def _check_finite_differences(expression, t):
    h = 1e-5
    for function, derivative in ((expression.value, expression.d1),
                                 (expression.d1, expression.d2)):
        scale = 1 + max(abs(function(t + s)) for s in (-h, 0, h))
        assert derivative(t) == pytest.approx(_central_difference(function, t, h),
                                              rel=1e-5, abs=1e-5 * scale)


@pytest.mark.parametrize("text", SMOOTH)
@settings(max_examples=60, deadline=None)
@given(t=st.floats(-10, 10))
def test_smooth_derivatives_match_finite_differences(text, t):
    _check_finite_differences(parse_expression(text), t)


@pytest.mark.parametrize("text, kinks", PIECEWISE, ids=[p[0] for p in PIECEWISE])
@settings(max_examples=60, deadline=None)
@given(t=st.floats(-10, 10))
def test_piecewise_derivatives_match_finite_differences_away_from_kinks(text, kinks, t):
    assume(all(abs(t - kink) > 1e-3 for kink in kinks))
    _check_finite_differences(parse_expression(text), t)


def _random_expressions():
    """(text, numpy function) pairs of fully parenthesized random expressions."""
    leaves = st.one_of(
        st.just(("t", lambda t: t)),
        st.floats(-3, 3, allow_nan=False).map(lambda c: (repr(c), lambda t, c=c: c + 0 * t)))

    def extend(children):
        binary = st.tuples(children, st.sampled_from("+-*"), children).map(
            lambda x: (f"({x[0][0]} {x[1]} {x[2][0]})",
                       lambda t, a=x[0][1], op=x[1], b=x[2][1]:
                       {"+": np.add, "-": np.subtract, "*": np.multiply}[op](a(t), b(t))))
        unary = st.tuples(st.sampled_from(["sin", "cos", "tanh", "-"]), children).map(
            lambda x: (f"{x[0]}({x[1][0]})",
                       lambda t, name=x[0], a=x[1][1]:
                       {"sin": np.sin, "cos": np.cos, "tanh": np.tanh,
                        "-": np.negative}[name](a(t))))
        return binary | unary

    return st.recursive(leaves, extend, max_leaves=8)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(pair=_random_expressions(), t=st.floats(-3, 3))
def test_random_expressions_evaluate_and_differentiate_correctly(pair, t):
    text, function = pair
    expression = parse_expression(text)
    assert expression.value(t) == pytest.approx(float(function(np.float64(t))),
                                                rel=1e-9, abs=1e-9)
    _check_finite_differences(expression, t)


def test_derivatives_stay_small():
    expression = parse_expression("pi/3*sin(pi/5*t)")
    first, second = expression.derivative(), expression.derivative().derivative()
    assert isinstance(first.tree, Binary) and first.tree.op == "*"
    assert isinstance(first.tree.left, Num) and isinstance(first.tree.right, Call)
    assert first.tree.left.value == pytest.approx(PI ** 2 / 15)
    assert str(first) == f"{first.tree.left.value!r}*cos({PI / 5!r}*t)"
    assert str(second) == f"{second.tree.left.value!r}*sin({PI / 5!r}*t)"
    assert str(parse_expression("0.5*sin(2*t)").derivative()) == "cos(2*t)"
    assert str(parse_expression("t^2").derivative()) == "2*t"
    assert str(parse_expression("t^2").derivative().derivative()) == "2"
    assert str(parse_expression("4*t - 3").derivative()) == "4"


@pytest.mark.parametrize("text, expected", [
    ("-2**2", -4), ("-2^2", -4), ("(-2)^2", 4), ("2^3^2", 512), ("2**3**2", 512),
    ("(2^3)^2", 64), ("2*3^2", 18), ("2^-1", 0.5), ("-2^-2", -0.25), ("1-2-3", -4),
    ("8/4/2", 1), ("2*-3", -6), ("2--3", 5), ("+-+3", -3), ("2 + 3*4", 14), ("(2 + 3)*4", 20),
    ("1e-3", 0.001), ("1.5E+2", 150), (".5", 0.5), ("5.", 5), ("pi", PI), ("e", math.e),
    ("  sin( pi / 2 )\t", 1), ("pow(2, 10)", 1024), ("min(3, -1)", -1), ("max(3, -1)", 3),
    ("abs(-2.5)", 2.5), ("sign(-3)", -1), ("sign(0)", 0), ("atan2(1, -1)", 3 * PI / 4),
    ("log(e^2)", 2), ("log10(1000)", 3), ("sqrt(16)", 4), ("exp(0)", 1),
    ("step(0.5, 0, 1, 1, 3)", 2), ("step(-1, 0, 1, 1, 3)", 1), ("step(7, 0, 1, 1, 3)", 3),
])
def test_constant_expressions(text, expected):
    expression = parse_expression(text)
    assert expression.is_constant
    assert expression.value(0.0) == pytest.approx(expected, rel=1e-15)
    assert expression.d1(1.0) == 0 and expression.d2(1.0) == 0


def test_precedence_with_the_variable():
    assert parse_expression("-t^2")(3.0) == -9
    assert parse_expression("2^t^2")(2.0) == 16
    assert parse_expression("t - t*2 + t/4")(4.0) == -3
    assert parse_expression("-t")(2.0) == -2
    assert parse_expression("(t)")(2.0) == 2


def test_step_values_and_derivatives_at_and_between_the_ends():
    expression = parse_expression("step(t, 0, 0, 1, 1)")
    assert [expression(t) for t in (-1.0, 0.0, 0.5, 1.0, 2.0)] == [0, 0, 0.5, 1, 1]
    assert [expression.d1(t) for t in (-1.0, 0.0, 0.5, 1.0, 2.0)] == [0, 0, 1.5, 0, 0]
    assert expression.d1(0.25) == pytest.approx(6 * 0.25 * 0.75)
    # the second derivative jumps at the ends (6 to the right of 0, -6 left of 1) and follows
    # the outer pieces exactly at them
    assert [expression.d2(t) for t in (-1.0, 0.0, 0.5, 1.0, 2.0)] == [0, 0, 0, 0, 0]
    assert expression.d2(1e-9) == pytest.approx(6)
    assert expression.d2(1 - 1e-9) == pytest.approx(-6)
    assert expression.d2(0.25) == pytest.approx(3)
    np.testing.assert_allclose(expression.d1(np.array([-1.0, 0.0, 0.5, 1.0, 2.0])),
                               [0, 0, 1.5, 0, 0])


def test_step_with_general_heights_and_ends():
    expression = parse_expression("step(t, 1, 2, 3, -2)")
    t = np.linspace(1.01, 2.99, 7)
    d = (t - 1) / 2
    np.testing.assert_allclose(expression(t), 2 - 4 * d ** 2 * (3 - 2 * d))
    np.testing.assert_allclose(expression.d1(t), -4 * 6 * d * (1 - d) / 2)
    np.testing.assert_allclose(expression.d2(t), -4 * (6 - 12 * d) / 4)
    assert expression(0.0) == 2 and expression(5.0) == -2


def test_min_max_abs_follow_documented_conventions_at_ties():
    assert parse_expression("abs(t)").d1(0.0) == 0
    assert parse_expression("min(t, 1)").d1(1.0) == 1
    assert parse_expression("min(1, t)").d1(1.0) == 0
    assert parse_expression("max(t, 1)").d1(1.0) == 1
    assert parse_expression("max(1, t)").d1(1.0) == 0
    assert parse_expression("sign(t)").d1(0.5) == 0


def test_variable_name_can_be_chosen():
    expression = parse_expression("x^2 + 1", variable="x")
    assert expression(3.0) == 10 and expression.d1(3.0) == 6
    assert str(expression.derivative()) == "2*x"
    with pytest.raises(ExpressionError, match="unknown name 't'"):
        parse_expression("t", variable="x")
    for bad in ("pi", "sin", "2x", "", "a b", 3):
        with pytest.raises(ExpressionError, match="variable"):
            parse_expression("1", variable=bad)


@pytest.mark.parametrize("text, fragment", [
    ("__import__('os')", "at position 1: unknown function '__import__'"),
    ("t.real", "position 2: expected an operator or the end, found the character '.'"),
    ("().__class__", "position 2"),
    ("a[0]", "unknown name 'a'"),
    ("t[0]", "the character '['"),
    ("'x'", "the character \"'\""),
    ('"x"', "the character '\"'"),
    ("t**1000", "huge exponent 1000"),
    ("t^-65", "huge exponent -65"),
    ("2^(8*9)", "huge exponent 72"),
    ("pow(t, 100)", "huge exponent 100"),
    ("t^1e999", "huge exponent"),
    ("foo(t)", "unknown function 'foo'"),
    ("Sin(t)", "did you mean 'sin'"),
    ("PI", "did you mean 'pi'"),
    ("1+", "found the end of the expression"),
    ("(t", "expected ')' to close the '(' at position 1"),
    ("sin(t", "expected ')'"),
    ("t)", "found ')'"),
    ("", "empty expression"),
    ("   ", "empty expression"),
    ("1,2", "found ','"),
    ("t = 1", "the character '='"),
    ("t; 1", "the character ';'"),
    ("lambda: t", "unknown name 'lambda'"),
    ("lambda t: t", "unknown name 'lambda'"),
    ("import os", "unknown name 'import'"),
    ("x if t else 1", "unknown name 'x'"),
    ("t if t else 1", "found the name 'if'"),
    ("sin", "function 'sin' without its arguments"),
    ("t(2)", "'t' is not a function"),
    ("pi(2)", "'pi' is not a function"),
    ("sin(1, 2)", "sin() takes 1 argument, got 2"),
    ("atan2(t)", "atan2() takes 2 arguments, got 1"),
    ("step(t, 0, 0, 1)", "step() takes 5 arguments, got 4"),
    ("min()", "min() takes 2 arguments, got 0"),
    ("step(t, 1, 0, 1, 1)", "x0 < x1"),
    ("ifle(t, 0, 1, 2)", "unknown function 'ifle'"),
    ("1 2", "found the number 2"),
    ("t t", "found the name 't'"),
    ("2e", "found the name 'e'"),
    ("0x10", "found the name 'x10'"),
    ("1_000", "found the name '_000'"),
    ("t @ t", "the character '@'"),
    ("t % 2", "the character '%'"),
    ("{t}", "the character '{'"),
    ("t\\n", "the character '\\\\'"),
    ("t\u00a0+ 1", "the character '\\xa0'"),
    ("\u0663", "the character"),
    ("sin(t,)", "found ')'"),
    ("*t", "found '*'"),
    ("t**", "found the end"),
    ("t^^2", "found '^'"),
])
def test_rejects_bad_text(text, fragment):
    with pytest.raises(ExpressionError) as caught:
        parse_expression(text)
    assert fragment in str(caught.value)
    assert isinstance(caught.value, ValueError) and isinstance(caught.value, ModelError)


def test_unknown_names_list_the_valid_names_and_functions():
    with pytest.raises(ExpressionError) as caught:
        parse_expression("2*foo(t)")
    message = str(caught.value)
    assert "'2*foo(t)' at position 3" in message
    assert "valid functions: " + ", ".join(FUNCTION_NAMES) in message
    with pytest.raises(ExpressionError) as caught:
        parse_expression("1 + time")
    message = str(caught.value)
    assert "at position 5: unknown name 'time'" in message
    assert "valid names: t, pi, e" in message and "step" in message


def test_rejects_non_strings_and_long_or_deep_text():
    with pytest.raises(ExpressionError, match="must be a string"):
        parse_expression(3)
    with pytest.raises(ExpressionError, match="too long: 3000 characters"):
        parse_expression("t+" * 1499 + "tt")
    assert parse_expression("t" + " " * 1999)(2.0) == 2  # 2000 characters: accepted
    assert parse_expression("(" * 60 + "t" + ")" * 60)(2.0) == 2
    with pytest.raises(ExpressionError, match="nested more than 60 levels"):
        parse_expression("(" * 61 + "t" + ")" * 61)
    with pytest.raises(ExpressionError, match="nested more than 60 levels"):
        parse_expression("(" * 500 + "t" + ")" * 500)
    with pytest.raises(ExpressionError, match="nested more than 60 levels"):
        parse_expression("sin(" * 61 + "t" + ")" * 61)
    assert parse_expression("-" * 60 + "t")(2.0) == 2
    with pytest.raises(ExpressionError, match="nested more than 60 levels"):
        parse_expression("-" * 61 + "t")
    with pytest.raises(ExpressionError, match="nested more than 60 levels"):
        parse_expression("t" + "^t" * 61)


@pytest.mark.parametrize("text", ["*".join(["t"] * 100), "/".join(["t"] * 100),
                                  "*".join(f"(t+{i})" for i in range(60)),
                                  "^".join(["t"] * 40), "sin(" * 60 + "t" + ")" * 60,
                                  "+".join(["t"] * 201)])
def test_rejects_expressions_whose_derivatives_are_too_complex(text):
    with pytest.raises(ExpressionError, match="too complex"):
        parse_expression(text)


def test_long_sums_are_fine():
    expression = parse_expression("+".join(f"{k}*sin({k}*t)" for k in range(1, 120)))
    k = np.arange(1, 120)
    assert expression(0.3) == pytest.approx(np.sum(k * np.sin(0.3 * k)))
    assert expression.d2(0.3) == pytest.approx(-np.sum(k ** 3 * np.sin(0.3 * k)))


# characters of the language plus some of Python's
_SOUP = ["t", "1", "2.5", "1e3", "pi", "e", "+", "-", "*", "/", "^", "**", "(", ")", ",", " ",
         "sin", "step", "min", "atan2", "pow", "sqrt", "log", "abs", ".", "[", "]", "'", "_",
         "x", "__", "=", ";"]


@settings(max_examples=500, deadline=None)
@given(text=st.text(st.characters(codec="utf-8"), max_size=40)
       | st.text(string.printable, max_size=40)
       | st.lists(st.sampled_from(_SOUP), max_size=25).map("".join))
@pytest.mark.slow
def test_arbitrary_text_parses_or_raises_expression_error(text):
    try:
        expression = parse_expression(text)
    except ExpressionError:
        return
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for method in (expression.value, expression.d1, expression.d2):
            assert isinstance(method(0.7), float)
            assert method(np.array([0.0, 0.7, -2.0])).shape == (3,)


def test_text_forms_read_back_to_the_same_values():
    for text in ["-(t^2)", "t - (t - 1)", "(-t)^3", "2^-t", "-t*3", "t/(t*3)", "(1 + t)^(1/2)",
                 "-(-t)", "2^3^t", "(2^3)^t", "exp(-t)*cos(3*t)", "t^2/(1 + t)^2",
                 "atan2(t, 1 - t)"]:
        expression = parse_expression(text)
        for tree in (expression.tree, expression.derivative().tree,
                     expression.derivative().derivative().tree):
            formatted = Expression(tree).text
            assert parse_expression(formatted)(0.37) == pytest.approx(Expression(tree)(0.37),
                                                                      rel=1e-14)
    assert Expression(parse_expression("-(t^2)").tree).text == "-t^2"
    assert Expression(parse_expression("(-2)^t").tree).text == "(-2)^t"
    assert Expression(parse_expression("t - (t - 1)").tree).text == "t - (t - 1)"
    assert Expression(parse_expression("1e-05*t + 1e+20").tree).text == "1e-05*t + 1e+20"


def test_evaluation_failures_give_inf_or_nan_without_raising_or_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert parse_expression("1/t")(0.0) == math.inf
        assert parse_expression("log(t)")(0.0) == -math.inf
        assert math.isnan(parse_expression("sqrt(t)")(-1.0))
        assert math.isnan(parse_expression("asin(t)")(2.0))
        assert parse_expression("exp(t)")(1000.0) == math.inf
        assert parse_expression("t^64")(1e10) == math.inf
        assert math.isnan(parse_expression("t^0.5")(-1.0))
        assert parse_expression("t^-1")(0.0) == math.inf
        assert math.isnan(parse_expression("sin(t)")(math.inf))
        assert math.isnan(parse_expression("(-8)^(1/3)")(0.0))
        assert parse_expression("exp(1000)")(0.0) == math.inf
        values = parse_expression("1/t + log(t)").value(np.array([0.0, -1.0, 1.0]))
        assert math.isnan(values[0]) and math.isnan(values[1]) and values[2] == 1


def test_scalar_evaluation_takes_microseconds():
    expression = parse_expression("pi/3*sin(pi/5*t)")
    seconds = min(timeit.repeat(lambda: expression.value(0.3), number=2000, repeat=5)) / 2000
    assert seconds < 10e-6


@pytest.mark.parametrize("text", ["t", "2", "sin(t)", "step(t, 0, 0, 1, 1)", "min(t, 1)",
                                  "atan2(1, t)", "t^2"])
def test_array_input_gives_arrays_of_the_same_shape(text):
    expression = parse_expression(text)
    t = np.linspace(-2, 2, 12).reshape(3, 4)
    for method in (expression.value, expression.d1, expression.d2):
        result = method(t)
        assert isinstance(result, np.ndarray) and result.shape == (3, 4)
        assert result.dtype == float
        np.testing.assert_allclose(result.ravel(), [method(float(x)) for x in t.ravel()],
                                   rtol=1e-14)
    assert expression.value([0.5, 1.0]).shape == (2,)
    assert expression.value(np.float64(0.5)) == expression.value(0.5)
    assert expression.value(np.int64(1)) == expression.value(1) == expression.value(1.0)


def test_array_results_are_new_arrays():
    t = np.array([1.0, 2.0])
    result = parse_expression("t").value(t)
    result[0] = 5
    assert t[0] == 1


def test_expression_protocol_json_str_and_pickle():
    expression = parse_expression("0.5*sin(2*t)")
    assert isinstance(expression, TimeFunction)
    assert expression.to_json() == "0.5*sin(2*t)" == str(expression) == expression.text
    assert "0.5*sin(2*t)" in repr(expression)
    assert expression(1.0) == expression.value(1.0)
    assert not expression.is_constant and parse_expression("2*pi").is_constant
    copy = pickle.loads(pickle.dumps(expression))
    assert copy.text == expression.text and copy.d2(0.3) == expression.d2(0.3)


def test_table_matches_spline_through_points():
    t = [0.0, 0.5, 1.5, 2.0, 3.5, 4.0]
    v = [1.0, 2.0, 0.0, -1.0, 0.5, 3.0]
    table = TableFunction(t, v)
    spline = CubicSpline(t, v, bc_type="not-a-knot")
    x = np.linspace(0, 4, 33)
    np.testing.assert_allclose(table.value(x), spline(x), rtol=1e-14)
    np.testing.assert_allclose(table.d1(x), spline(x, 1), rtol=1e-14)
    np.testing.assert_allclose(table.d2(x), spline(x, 2), rtol=1e-14)
    assert [table(ti) for ti in t] == pytest.approx(v, rel=1e-14)
    assert isinstance(table.value(1.0), float) and isinstance(table.d2(1), float)
    assert table.d1(1.0) == pytest.approx(float(spline(1.0, 1)))
    assert table.value(x.reshape(3, 11)).shape == (3, 11)


@settings(max_examples=50, deadline=None)
@given(t=st.floats(0.01, 3.99))
def test_table_derivatives_match_finite_differences(t):
    table = TableFunction([0, 1, 2, 3, 4], [0, 1, 0, -1, 2])
    h = 1e-6
    assert table.d1(t) == pytest.approx(_central_difference(table.value, t, h), abs=1e-6)
    assert table.d2(t) == pytest.approx(_central_difference(table.d1, t, h), abs=1e-4)


def test_table_holds_end_values_outside_its_range():
    table = TableFunction([0, 1, 2, 3], [1, 2, 0, 5])
    assert table(-1.0) == 1 and table(10.0) == 5
    for method in (table.d1, table.d2):
        assert method(-1.0) == 0 and method(3.5) == 0
        assert method(0.0) != 0 and method(3.0) != 0
    np.testing.assert_allclose(table.value(np.array([-5.0, 0.0, 3.0, 7.0])), [1, 1, 5, 5])
    np.testing.assert_allclose(table.d1(np.array([-5.0, 7.0])), [0, 0])


@pytest.mark.parametrize("t, v", [([0, 2], [1, 5]), ([0, 1, 3], [0, 2, 1])])
def test_tables_of_two_or_three_points_are_linear(t, v):
    table = TableFunction(t, v)
    x = np.linspace(t[0], t[-1], 17)
    np.testing.assert_allclose(table.value(x), np.interp(x, t, v), rtol=1e-14)
    np.testing.assert_allclose(table.d2(x), 0)
    slopes = np.diff(v) / np.diff(t)
    inner = x[(x > t[0]) & (x < t[-1]) & ~np.isin(x, t)]
    np.testing.assert_allclose(table.d1(inner), slopes[np.searchsorted(t, inner) - 1])


@pytest.mark.parametrize("t, v, fragment", [
    ([0, 1, 2], [1, 2], "values: must have one value per time, got 2 values for 3 times"),
    ([0], [1], "t: needs at least 2 points, got 1"),
    ([], [], "t: needs at least 2 points, got 0"),
    ([0, 1, 1, 2], [0, 0, 0, 0], "t[2]: times must be strictly increasing, got 1 after 1"),
    ([0, 2, 1], [0, 0, 0], "t[2]: times must be strictly increasing"),
    ([0, float("nan"), 2], [0, 0, 0], "t[1]: must be finite, got nan"),
    ([0, 1], [0, float("inf")], "values[1]: must be finite, got inf"),
    (["0", "1"], [0, 1], "t: must be a list of numbers"),
    ([0, 1], [[0, 1], [2, 3]], "values: must be a list of numbers"),
    ([0, [1, 2]], [0, 1], "t: must be a list of numbers"),
    (5, [0, 1], "t: must be a list of numbers"),
    ([0, 1], [True, False], "values: must be a list of numbers"),
    ([0, 1], None, "values: must be a list of numbers"),
])
def test_table_validation(t, v, fragment):
    with pytest.raises(ExpressionError) as caught:
        TableFunction(t, v)
    assert fragment in str(caught.value)


def test_table_validation_reports_all_problems():
    with pytest.raises(ExpressionError) as caught:
        TableFunction([1, 0], [float("nan"), 1])
    assert len(caught.value.problems) == 2


def test_table_json_round_trip():
    table = time_function({"t": [0, 1, 2, 3], "values": [0, 1, 4, 9]})
    assert isinstance(table, TableFunction) and isinstance(table, TimeFunction)
    assert table.to_json() == {"t": [0.0, 1.0, 2.0, 3.0], "values": [0.0, 1.0, 4.0, 9.0]}
    assert time_function(table.to_json())(1.5) == table(1.5)
    assert "TableFunction" in repr(table)


def test_time_function_accepts_numbers_strings_tables_and_time_functions():
    constant = time_function(2.5)
    assert constant(7.0) == 2.5 and constant.d1(7.0) == 0 and constant.d2(7.0) == 0
    assert constant.is_constant and time_function(constant.to_json())(0.0) == 2.5
    assert time_function(3)(1.0) == 3 and time_function(np.float64(0.5))(1.0) == 0.5
    assert time_function("t^2").d2(3.0) == 2
    expression = parse_expression("t")
    assert time_function(expression) is expression


@pytest.mark.parametrize("spec, fragment", [
    (True, "got bool"), (None, "got NoneType"), ([0, 1], "got list"), (b"t", "got bytes"),
    (float("nan"), "must be finite"), (float("inf"), "must be finite"),
    (10 ** 400, "must be finite"), ("foo", "unknown name 'foo'"),
    ({"t": [0, 1]}, "table: missing key 'values'"),
    ({"t": [0, 1], "values": [0, 1], "kind": "spline"}, "table: unknown key 'kind'"),
    ({"t": [0, 0], "values": [0, 1]}, "strictly increasing"),
])
def test_time_function_rejects_anything_else(spec, fragment):
    with pytest.raises(ExpressionError) as caught:
        time_function(spec)
    assert fragment in str(caught.value)
