"""C source of the derived kernels: common-subexpression elimination (``sympy.cse``) per kernel,
then straight-line C99 (one ``const double`` per subexpression).

Every kernel is ``void cg_<name>(const double *q, const double *qd, const double *par,
const double *f, const double *u, double *out1[, double *out2, ...])`` — the same five inputs
for all (unused ones are ignored), outputs as in :func:`solver.codegen.derive.derive`.  Dense
outputs (Φ_q, M) are zeroed with ``memset`` and only their structurally non-zero entries written.
Integer powers are written as products (``pow`` is not folded without ``-ffast-math``).
"""
from __future__ import annotations

import sympy as sp
from sympy.printing.c import C99CodePrinter
from sympy.simplify.cse_main import tree_cse

INPUTS = ("q", "qd", "par", "f", "u")
OUTPUTS = {"position": (("phi", "m"), ("jac", "m*nq"), ("ang", "na")), "gamma": (("gamma", "m"),),
           "mass": (("M", "nq*nq"),), "forces": (("Q", "nq"),), "loads": (("F", "nb*3"), ("T", "nb*3"))}
ZEROED = {"jac", "M"}


_FUNCTIONS = {"sin": "sin", "cos": "cos", "tan": "tan", "asin": "asin", "acos": "acos", "atan": "atan",
              "atan2": "atan2", "exp": "exp", "log": "log", "sinh": "sinh", "cosh": "cosh", "tanh": "tanh",
              "Abs": "fabs"}


class _Printer(C99CodePrinter):
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


def c_source(kernels, definitions, symbols, sizes, prefix="cg_", zeroed=ZEROED) -> tuple[str, int]:
    """(C translation unit, number of common subexpressions); the kernels are named
    ``<prefix><name>``.  Outputs in ``zeroed`` are cleared first; the others get only their
    structurally non-zero entries written, always the same ones, so the caller keeps them in buffers
    that start zeroed (relative.c's work arrays: no 7nb × 7nb memset per call).

    kernels: {name: [(output, flat index, expression)]}; definitions: [(symbol, polynomial terms
    [(c, (input symbols…))] or a sympy expression)] the outputs may use; symbols: {input name: [symbols]}; sizes: {"m",
    "nq", "na"} to size the zeroed outputs.  Per kernel, in the order the outputs need them: inputs,
    definitions (printed directly, coefficients as Python's shortest round-trip repr; products shared
    between them are left to the compiler's value numbering), the outputs' common subexpressions
    (``x{n}``, sympy's ``tree_cse``), the outputs."""
    printer = _Printer({"order": "none"})
    input_of = {sym: f"{name}[{k}]" for name, syms in symbols.items() for k, sym in enumerate(syms)}
    parts = ["/* generated by solver.codegen (MBS Studio); do not edit */", "#include <math.h>",
             "#include <string.h>", ""]
    n_sub = 0
    defined = dict(definitions)
    printed = {}                        # definitions printed so far (shared by the kernels)
    for name, outputs in kernels.items():
        subs, reduced = tree_cse([e for _, _, e in outputs], sp.numbered_symbols("x"), opt_subs={}, order="none")
        n_sub += len(subs)
        values = {sym: (f"{input_of[sym]}", ()) for sym in input_of}
        values.update({sym: (printer.doprint(e), e.free_symbols) for sym, e in subs})
        args = ", ".join([f"const double *{a}" for a in INPUTS] + [f"double *{o}" for o, _ in OUTPUTS[name]])
        body = [f"void {prefix}{name}({args})", "{"]
        body += [f"    memset({out}, 0, sizeof(double) * {_size(size, sizes)});"
                 for out, size in OUTPUTS[name] if out in zeroed]
        done = set()

        def need(symbols):
            """Emit the values ``symbols`` depend on, each once, just before its first use (short
            live ranges: register allocation dominates the compile time of long kernels)."""
            for sym in sorted(symbols, key=lambda x: x.name):
                if sym not in done:
                    done.add(sym)
                    if sym not in values:                   # a definition, printed at its first use
                        if sym not in printed:
                            printed[sym] = _definition(defined[sym], printer)
                        values[sym] = printed[sym]
                    text, deps = values[sym]
                    need(deps)
                    body.append(f"    const double {sym.name} = {text};")
        for (out, index, _), e in zip(outputs, reduced):
            need(e.free_symbols)
            body.append(f"    {out}[{index}] = {printer.doprint(e)};")
        body.append("}")
        parts += body + [""]
    return "\n".join(parts), n_sub


def _size(expr, sizes):
    value = 1
    for factor in expr.split("*"):
        value *= sizes[factor]
    return value


def _definition(terms, printer):
    """(C text, symbols it reads) of a definition: a sympy expression, or polynomial terms."""
    if isinstance(terms, sp.Basic):
        return printer.doprint(terms), terms.free_symbols
    return (" + ".join("*".join([repr(c), *(x.name for x in f)]) for c, f in terms),
            {x for _, f in terms for x in f})
