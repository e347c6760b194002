"""The C printer of the generated kernels (solver.codegen.printer.Printer): its direct walk over the
expression tree prints C that evaluates to the sympy expression's value (checked by evaluating the
C text, whose operators are Python's, against sympy's own lambdify), never divides integers, and
hands nodes it does not know to sympy's C printer."""
import math
import re

import numpy as np
import pytest
import sympy as sp

from solver.codegen.printer import Printer

X, Y, Z = sp.symbols("x y z")
VALUES = {"x": 0.7, "y": -1.3, "z": 2.1}
C_NAMES = {"pow": math.pow, "sqrt": math.sqrt, "fabs": math.fabs, "sin": math.sin, "cos": math.cos,
           "tan": math.tan, "atan": math.atan, "atan2": math.atan2, "exp": math.exp, "log": math.log, "tanh": math.tanh,
           "M_PI": math.pi, "cbrt": lambda v: math.copysign(abs(v) ** (1 / 3), v)}


def random_expression(rng, depth):
    if depth == 0:
        return [X, Y, Z, sp.Integer(int(rng.integers(-3, 4))), sp.Rational(int(rng.integers(-5, 6)), 7),
                sp.Float(rng.normal())][int(rng.integers(0, 6))]
    a, b = random_expression(rng, depth - 1), random_expression(rng, depth - 1)
    op = int(rng.integers(0, 9))
    return [a + b, a - b, a * b, a * b * Z, -a * b, a ** int(rng.integers(-5, 6)), sp.sin(a) * sp.cos(b),
            sp.sqrt(a * a + 1) + 1 / sp.sqrt(b * b + 2), sp.atan2(a, b + sp.Rational(1, 3))][op]


def test_printed_c_evaluates_to_the_expression():
    printer, rng = Printer({"order": "none"}), np.random.default_rng(7)
    checked = 0
    for _ in range(150):
        e = random_expression(rng, int(rng.integers(1, 4)))
        try:
            exact = float(sp.lambdify((X, Y, Z), e, "math")(*VALUES.values()))
        except (ZeroDivisionError, OverflowError, ValueError, TypeError):
            continue
        if not math.isfinite(exact):
            continue
        text = printer.doprint(e)
        assert "**" not in text and not re.search(r"(?<![\w.])\d+/\d", text), text      # no integer quotient
        assert eval(text, dict(C_NAMES), dict(VALUES)) == pytest.approx(exact, rel=1e-12, abs=1e-12), text
        checked += 1
    assert checked > 100


def test_examples_and_fallback():
    p = Printer({"order": "none"})
    assert p.doprint(X / (Y * Z ** 2)) == "x/(y*(z*z))"
    assert p.doprint(sp.Rational(1, 2) * X) == "(1.0/2.0)*x"
    assert p.doprint(1 / X) == "(1.0/x)"
    assert p.doprint(1 / sp.sqrt(X)) == "(1.0/sqrt(x))"
    assert p.doprint(sp.Abs(X - Y)) == "fabs(x - y)"
    assert p.doprint(sp.Float(0.1) * X) == "0.1*x"
    piecewise = sp.Piecewise((X, Y > 0), (Z, True))                      # not walked: sympy's printer
    assert "".join(p.doprint(piecewise).split()) == "".join(sp.ccode(piecewise).split())


def test_polynomial_definitions_print_the_same_numbers():
    """A definition's terms Σ c·Π x are printed without factors 1 and with negative c as a
    subtraction (emit.definition_c): evaluated, the C text gives bit for bit the value of
    c₀·Π + c₁·Π + … as written term by term with every coefficient."""
    from solver.codegen.emit import definition_c
    printer, rng = Printer({"order": "none"}), np.random.default_rng(3)
    symbols = sp.symbols("a0:5")
    values = {x.name: float(v) for x, v in zip(symbols, rng.normal(size=5))}
    for _ in range(200):
        terms = [(float(rng.choice([1.0, -1.0, 0.5, -4.0, rng.normal()])),
                  tuple(symbols[k] for k in sorted(rng.integers(0, 5, size=int(rng.integers(0, 3))))))
                 for _ in range(int(rng.integers(1, 5)))]
        text, reads = definition_c(terms, printer)
        assert reads == {x for _, f in terms for x in f}
        written = " + ".join("*".join([f"({c!r})", *(x.name for x in f)]) for c, f in terms)
        assert eval(text, {}, dict(values)) == eval(written, {}, dict(values)), (text, written)
    assert definition_c([(1.0, symbols[:2]), (-1.0, symbols[2:3]), (-4.0, symbols[:1]), (1.0, ())], printer)[0] == \
        "a0*a1 - a2 - 4.0*a0 + 1.0"
