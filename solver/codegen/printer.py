"""The C printer of the generated kernels (:mod:`solver.codegen.emit`, :mod:`solver.codegen.tree`):
sympy's C99 printer with a direct walk over the nodes the kernels are made of.  Imported by a build
only (it imports sympy)."""
from __future__ import annotations

import sympy as sp
from sympy.printing.c import C99CodePrinter

_FUNCTIONS = {"sin": "sin", "cos": "cos", "tan": "tan", "asin": "asin", "acos": "acos", "atan": "atan",
              "atan2": "atan2", "exp": "exp", "log": "log", "sinh": "sinh", "cosh": "cosh", "tanh": "tanh",
              "Abs": "fabs"}


class Printer(C99CodePrinter):
    """C99 with small integer powers written as products.

    ``doprint`` walks the expression tree directly for the nodes the kernels are made of (symbols,
    numbers, sums, products, powers, elementary functions) — sympy's printer spends most of a cold
    build on precedence and ordering there — and hands any other node to sympy's printer.  Every
    operand that is not a symbol or a non-negative number is parenthesized, so the C evaluates
    exactly the sympy tree; rationals are written as double quotients (p.0/q.0), floats as Python's
    shortest round-trip repr."""

    def doprint(self, expr, assign_to=None):
        if assign_to is not None:
            return super().doprint(expr, assign_to)
        return self._c(expr)

    def _c(self, e):
        if e.is_Symbol:
            return e.name
        if e.is_Integer:
            return str(int(e))
        if e.is_Rational:
            return f"{e.p}.0/{e.q}.0"
        if e.is_Float:
            return repr(float(e))
        if e.is_Add:
            text = self._c(e.args[0])
            for term in e.args[1:]:
                coef = term.args[0] if term.is_Mul else term
                if coef.is_Number and coef.is_negative:
                    text += " - " + self._product(-coef, term.args[1:] if term.is_Mul else ())
                else:
                    text += " + " + self._c(term)
            return text
        if e.is_Mul:
            coef = e.args[0] if e.args[0].is_Number else None
            factors = e.args[1:] if coef is not None else e.args
            if coef is not None and coef.is_negative:
                return "-" + self._operand(self._product(-coef, factors), e)
            return self._product(coef, factors)
        if e.is_Pow:
            return self._power(e.base, e.exp)
        name = _FUNCTIONS.get(type(e).__name__)
        if name is not None and e.is_Function:
            return f"{name}({', '.join(self._c(a) for a in e.args)})"
        return self._print(e)

    def _operand(self, text, e):
        """``text`` (the C of e) as an operand of a product or a power."""
        if e.is_Symbol or (e.is_Number and not e.is_Rational or e.is_Integer) and not e.is_negative:
            return text
        if e.is_Function and not e.is_Pow:
            return text
        return f"({text})"

    def _product(self, coef, factors):
        """C of coef · Π factors (coef a positive number or None); factors with negative integer
        exponents go to a denominator."""
        num, den = [], []
        if coef is not None and coef != 1:
            num.append(self._operand(self._c(coef), coef))
        for f in factors:
            if f.is_Pow and f.exp.is_Integer and f.exp < 0:
                den.append(self._power(f.base, -f.exp))
            else:
                num.append(self._operand(self._c(f), f))
        text = "*".join(num) if num else "1.0"
        if den:
            text += "/" + (den[0] if len(den) == 1 else "(" + "*".join(den) + ")")
        return text

    def _power(self, base, exp):
        b = self._operand(self._c(base), base)
        if exp.is_Integer:
            n = int(exp)
            if n == 1:
                return b
            if n == -1:
                return f"(1.0/{b})"
            if 2 <= abs(n) <= 4:
                prod = "*".join([b] * abs(n))
                return f"({prod})" if n > 0 else f"(1.0/({prod}))"
            return f"pow({b}, {n}.0)" if n > 0 else f"(1.0/pow({b}, {-n}.0))"
        if exp == sp.Rational(1, 2):
            return f"sqrt({self._c(base)})"
        if exp == sp.Rational(-1, 2):
            return f"(1.0/sqrt({self._c(base)}))"
        return f"pow({self._c(base)}, {self._c(exp)})"

    def _print_Pow(self, expr):
        base, e = expr.base, expr.exp
        if e.is_Integer and 2 <= abs(int(e)) <= 4:
            prod = "*".join([f"({self._print(base)})"] * abs(int(e)))
            return f"({prod})" if e > 0 else f"(1.0/({prod}))"
        return super()._print_Pow(expr)
