"""Time functions as C: the value and first two derivatives of a driver's motion or a force
element's f(t), for code that runs without Python (the FMU of :mod:`solver.fmu`).

Each function becomes ``static void <name>(double t, double v[3])`` writing f(t), ḟ(t), f̈(t):

* an :class:`~solver.expressions.Expression` is printed from its syntax tree and from the trees of
  its exact derivatives (:meth:`Expression.derivative`) — the same trees the solver evaluates, so
  the C value differs from Python's only by the C library's rounding;
* a :class:`~solver.expressions.TableFunction` is its piecewise polynomial (the not-a-knot cubic
  spline, or the linear interpolant of 2–3 points: scipy ``PPoly`` breakpoints and coefficients
  written as tables), evaluated by bisection with the same end rule as the solver: the end value
  held outside the tabulated range, derivatives 0 there.

The helpers ``mbs_sign``, ``mbs_min``, ``mbs_max``, ``mbs_step`` and ``mbs_ifle`` (:data:`PRELUDE`)
follow the float implementations of :mod:`solver.expressions` (NaN handling included).
"""
from __future__ import annotations

from ..expressions import Binary, Call, Expression, Num, TableFunction, Unary, Var

PRELUDE = r"""
static double mbs_sign(double x) { return x > 0 ? 1.0 : x < 0 ? -1.0 : x; }
static double mbs_min(double a, double b) { return a <= b ? a : b < a ? b : NAN; }
static double mbs_max(double a, double b) { return a >= b ? a : b > a ? b : NAN; }
static double mbs_ifle(double a, double b, double p, double q) { return a <= b ? p : q; }
static double mbs_step(double x, double x0, double h0, double x1, double h1)
{
    if (x <= x0) return h0;
    if (x >= x1) return h1;
    const double d = (x - x0) / (x1 - x0);
    return h0 + (h1 - h0) * d * d * (3.0 - 2.0 * d);
}
/* value (order 0, 1, 2) of the piecewise polynomial with n pieces on breaks x[0..n], coefficients
 * c[k][piece] of (t - x[piece])^(deg - k); the end values held outside [x0, xn] */
static double mbs_ppoly(const double *x, const double *c, int n, int deg, double t, int order)
{
    if (order > 0 && (t < x[0] || t > x[n])) return 0.0;
    if (t < x[0]) t = x[0];
    if (t > x[n]) t = x[n];
    int lo = 0, hi = n - 1;
    while (lo < hi) { const int mid = (lo + hi + 1) / 2; if (x[mid] <= t) lo = mid; else hi = mid - 1; }
    const double s = t - x[lo];
    double v = 0.0;
    for (int k = 0; k <= deg - order; ++k) {
        const int power = deg - k - order;
        double coef = c[k * n + lo];
        for (int j = 0; j < order; ++j) coef *= power + order - j;
        v = v * s + coef;
    }
    return v;
}
"""

_FUNCTIONS = {"abs": "fabs", "sign": "mbs_sign", "min": "mbs_min", "max": "mbs_max", "step": "mbs_step",
              "ifle": "mbs_ifle"}


def c_expression(node) -> str:
    """C text of an expression tree in the variable ``t``."""
    if isinstance(node, Num):
        return repr(float(node.value)) if node.value >= 0 else f"({float(node.value)!r})"
    if isinstance(node, Var):
        return "t"
    if isinstance(node, Unary):
        return f"(-{c_expression(node.operand)})"
    if isinstance(node, Binary):
        left, right = c_expression(node.left), c_expression(node.right)
        return f"pow({left}, {right})" if node.op == "^" else f"({left} {node.op} {right})"
    if isinstance(node, Call):
        return f"{_FUNCTIONS.get(node.name, node.name)}({', '.join(c_expression(a) for a in node.args)})"
    raise TypeError(f"not an expression node: {node!r}")


def c_time_function(fn, name) -> str:
    """C definition ``static void name(double t, double v[3])`` of a time function (module docstring)."""
    if isinstance(fn, Expression):
        d1 = fn.derivative()
        trees = (fn.tree, d1.tree, d1.derivative().tree)
        body = "".join(f"    v[{k}] = {c_expression(tree)};\n" for k, tree in enumerate(trees))
        return f"static void {name}(double t, double v[3])\n{{\n{body}}}\n"
    if isinstance(fn, TableFunction):
        spline = fn._spline
        deg, n = spline.c.shape[0] - 1, spline.c.shape[1]
        breaks = ", ".join(repr(float(x)) for x in spline.x)
        coefs = ", ".join(repr(float(c)) for c in spline.c.ravel())
        return (f"static const double {name}_x[] = {{{breaks}}};\n"
                f"static const double {name}_c[] = {{{coefs}}};\n"
                f"static void {name}(double t, double v[3])\n{{\n"
                + "".join(f"    v[{k}] = mbs_ppoly({name}_x, {name}_c, {n}, {deg}, t, {k});\n" for k in range(3))
                + "}\n")
    raise TypeError(f"time function {fn!r}: only expressions and tables can be written as C")
