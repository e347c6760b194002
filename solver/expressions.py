"""Time functions for drivers and applied forces: safe expressions and tabulated splines.

A *time function* gives a value and its first two time derivatives at a time ``t`` (a float, or a
numpy array of times).  Three kinds exist, all implementing :class:`TimeFunction`:

* :class:`Expression` -- a formula in ``t`` parsed by :func:`parse_expression`, with exact
  symbolic derivatives;
* :class:`TableFunction` -- a cubic spline through tabulated ``(t, value)`` points;
* constants, which are expressions without ``t`` (``time_function(2.5)``).

:func:`time_function` builds the right kind from its JSON form (number, string or table dict).

Expression grammar
------------------
::

    expression := term (("+" | "-") term)*              left-associative
    term       := factor (("*" | "/") factor)*          left-associative
    factor     := ("+" | "-") factor | power
    power      := primary (("^" | "**") factor)?        right-associative: 2^3^2 = 2^9
    primary    := number | name | name "(" arguments ")" | "(" expression ")"
    arguments  := expression ("," expression)*

As in Python, a power binds tighter than a leading sign (``-2**2 == -4``) and its exponent may carry
a sign (``2^-1``).  Numbers are decimal (``3``, ``0.5``, ``.5``, ``1e-3``).  Names are
case-sensitive: the variable (``t`` unless :func:`parse_expression` is told otherwise), the
constants ``pi``, ``e`` and ``deg`` (π/180: ``30*deg`` is 30° in radians), and these functions:

=================================  ==========================================================
``sin cos tan asin acos atan``     trigonometric functions (radians)
``atan2(y, x)``                    angle of the point ``(x, y)``
``sinh cosh tanh``                 hyperbolic functions
``exp log log10 sqrt``             ``log`` is the natural logarithm
``abs sign``                       ``sign`` is -1, 0 or 1
``min(a, b) max(a, b)``            smaller / larger argument
``pow(a, b)``                      same as ``a^b``
``step(x, x0, h0, x1, h1)``        Adams-style cubic step: ``h0`` for ``x <= x0``, ``h1`` for
                                   ``x >= x1`` and the blend ``h0 + (h1 - h0) d^2 (3 - 2d)``,
                                   ``d = (x - x0)/(x1 - x0)``, in between (``x0 < x1`` is
                                   checked when both are constants)
=================================  ==========================================================

Limits: at most 2000 characters; parentheses, calls, signs and powers nested at most 60 deep;
constant exponents of absolute value at most 64 ("huge exponent"); and the expression and its
first two derivatives, written out as syntax trees, at most 20000 nodes and 200 levels deep
(a chain ``a+b+...`` counts one level per operator).  The last limit bounds evaluation time and
the Python call depth of the recursive tree walks; only contrived input (products of dozens of
factors, deeply nested functions) reaches it.  Sub-expressions without the variable are folded
to numbers when parsed.  A project file's expressions together may not exceed
:data:`~solver.expression_budget.MAX_MODEL_EXPRESSION_NODES` such nodes (the whole-file budget,
:mod:`solver.expression_budget`).

Derivatives of ``abs``, ``sign``, ``min``, ``max`` and ``step`` are taken piecewise: ``sign`` has
derivative 0, ``abs'(0)`` is 0, ``min``/``max`` follow their first argument on a tie and ``step``
follows its outer pieces at ``x0`` and ``x1``.  The derivative trees express such pieces with the
internal helper ``ifle(a, b, p, q)`` (``p`` where ``a <= b``, else ``q``), which user text cannot
call.

Why no ``eval``
---------------
Expressions come from model files and the GUI, i.e. from anyone who hands a user a model.  Python's
``eval``/``exec``/``compile`` would run arbitrary code (``__import__('os').system(...)``) and even
restricted namespaces are escapable through attribute access, and Python syntax would also accept
far more than a function of time.  This module therefore has its own tokenizer and
recursive-descent parser, which accepts exactly the grammar above and builds a small immutable
syntax tree (:class:`Num`, :class:`Var`, :class:`Unary`, :class:`Binary`, :class:`Call`); the tree
is evaluated by nested closures over whitelisted ``math``/``numpy`` functions.  Anything else --
attribute access, subscripts, strings, keywords, assignments, unknown names -- is reported as an
:class:`~solver.errors.ExpressionError` naming the position and the offending token.
"""
from __future__ import annotations

import functools
import math
import numbers
import operator
import re
from dataclasses import dataclass
from typing import Callable, NamedTuple, Protocol, Union, runtime_checkable

import numpy as np

from .errors import ExpressionError
from .expression_budget import charge, check_budget

MAX_LENGTH = 2000
MAX_NESTING = 60
MAX_TREE_DEPTH = 200
MAX_TREE_SIZE = 20000
MAX_EXPONENT = 64

_REAL_SCALARS = (float, int, np.floating, np.integer)


@runtime_checkable
class TimeFunction(Protocol):
    """A function of time with two derivatives; ``t`` is a float or a numpy array of times (the
    result then is an array of the same shape)."""

    def value(self, t):
        """The function value at ``t``."""

    def d1(self, t):
        """The first time derivative at ``t``."""

    def d2(self, t):
        """The second time derivative at ``t``."""

    def to_json(self):
        """The JSON-able form the function was created from (see :func:`time_function`)."""


# --------------------------------------------------------------------------------------------
# Syntax tree
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Num:
    """A number: a literal, ``pi``, ``e``, ``deg`` or a folded constant sub-expression."""
    value: float


@dataclass(frozen=True, slots=True)
class Var:
    """The variable (time)."""
    name: str


@dataclass(frozen=True, slots=True)
class Unary:
    """Negation ``-operand`` (the parser drops a unary ``+``)."""
    operand: Node


@dataclass(frozen=True, slots=True)
class Binary:
    """``left op right`` with ``op`` one of ``+ - * / ^``."""
    op: str
    left: Node
    right: Node


@dataclass(frozen=True, slots=True)
class Call:
    """A call of a whitelisted (or internal) function."""
    name: str
    args: tuple


Node = Union[Num, Var, Unary, Binary, Call]

_ZERO, _ONE, _TWO, _THREE = Num(0.0), Num(1.0), Num(2.0), Num(3.0)


def _children(node):
    """The direct sub-trees of ``node``."""
    if isinstance(node, Unary):
        return (node.operand,)
    if isinstance(node, Binary):
        return (node.left, node.right)
    if isinstance(node, Call):
        return node.args
    return ()


def _distinct_nodes(root):
    """Each distinct node object under ``root`` once, children before parents (derived trees
    share sub-trees).  Iterative, so safe for trees of any depth."""
    order, seen, stack = [], set(), [(root, False)]
    while stack:
        node, children_done = stack.pop()
        if children_done:
            order.append(node)
        elif id(node) not in seen:
            seen.add(id(node))
            stack.append((node, True))
            stack.extend((child, False) for child in _children(node))
    return order


def _complexity(root):
    """``(size, depth)`` of the tree ``root`` written out in full: its number of nodes, counting
    shared sub-trees each time they occur (what evaluation and formatting cost), and its
    number of levels (what they need in Python call-stack frames)."""
    size, depth = {}, {}
    for node in _distinct_nodes(root):
        children = _children(node)
        size[id(node)] = 1 + sum(size[id(child)] for child in children)
        depth[id(node)] = 1 + max((depth[id(child)] for child in children), default=0)
    return size[id(root)], depth[id(root)]


def _check_complexity(tree, what):
    """The written-out size of ``tree``; raise :class:`ExpressionError` if it (described as
    ``what``) exceeds :data:`MAX_TREE_SIZE` or :data:`MAX_TREE_DEPTH`."""
    size, depth = _complexity(tree)
    if size > MAX_TREE_SIZE or depth > MAX_TREE_DEPTH:
        raise ExpressionError(f"{what} is too complex: {size} nodes, {depth} levels deep (the "
                              f"limits are {MAX_TREE_SIZE} nodes and {MAX_TREE_DEPTH} levels)")
    return size


# --------------------------------------------------------------------------------------------
# Functions: implementations for floats and arrays, derivative rules
# --------------------------------------------------------------------------------------------

def _sign(x):
    """Sign of a float: -1.0, 0.0 or 1.0 (NaN stays NaN)."""
    return 1.0 if x > 0 else -1.0 if x < 0 else x


def _min(a, b):
    """Smaller of two floats, NaN if either is NaN (like ``numpy.minimum``)."""
    return a if a <= b else b if b < a else math.nan


def _max(a, b):
    """Larger of two floats, NaN if either is NaN (like ``numpy.maximum``)."""
    return a if a >= b else b if b > a else math.nan


def _step(x, x0, h0, x1, h1):
    """Adams cubic step for floats (see the module docstring)."""
    if x <= x0:
        return h0
    if x >= x1:
        return h1
    d = (x - x0) / (x1 - x0)
    return h0 + (h1 - h0) * d * d * (3.0 - 2.0 * d)


def _step_array(x, x0, h0, x1, h1):
    """Adams cubic step for arrays, with the same pieces as :func:`_step`."""
    d = (x - x0) / (x1 - x0)
    blend = h0 + (h1 - h0) * d * d * (3.0 - 2.0 * d)
    return np.where(x <= x0, h0, np.where(x >= x1, h1, blend))


def _ifle(a, b, p, q):
    """``p`` if ``a <= b`` else ``q``, for floats."""
    return p if a <= b else q


def _ifle_array(a, b, p, q):
    """``p`` where ``a <= b`` else ``q``, for arrays."""
    return np.where(a <= b, p, q)


def _d_atan2(args, dargs):
    """d/dt atan2(y, x) = (x y' - y x') / (x^2 + y^2)."""
    (y, x), (dy, dx) = args, dargs
    return _div(_sub(_mul(x, dy), _mul(y, dx)), _add(_pow(x, _TWO), _pow(y, _TWO)))


def _d_step(args, dargs):
    """d/dt step(x, x0, h0, x1, h1): h0' up to x0, h1' from x1, the blend's derivative between."""
    x, x0, h0, x1, h1 = args
    dh0, dh1 = dargs[2], dargs[4]
    d = _div(_sub(x, x0), _sub(x1, x0))
    blend = _add(h0, _mul(_sub(h1, h0), _mul(_pow(d, _TWO), _sub(_THREE, _mul(_TWO, d)))))
    return _call("ifle", (x, x0, dh0, _call("ifle", (x1, x, dh1, _derivative(blend, {})))))


@dataclass(frozen=True)
class _Function:
    """A function of the language: its arity, its float and array implementations, and its
    derivative rule ``(args, derivatives of args) -> derivative tree``."""
    arity: int
    scalar: Callable
    array: Callable
    derivative: Callable


def _inverse_sqrt_one_minus_square(u):
    """The tree ``sqrt(1 - u^2)`` (derivatives of asin and acos)."""
    return _call("sqrt", (_sub(_ONE, _pow(u, _TWO)),))


_FUNCTIONS = {
    "sin": _Function(1, math.sin, np.sin, lambda a, d: _mul(_call("cos", a), d[0])),
    "cos": _Function(1, math.cos, np.cos, lambda a, d: _neg(_mul(_call("sin", a), d[0]))),
    "tan": _Function(1, math.tan, np.tan,
                     lambda a, d: _div(d[0], _pow(_call("cos", a), _TWO))),
    "asin": _Function(1, math.asin, np.arcsin,
                      lambda a, d: _div(d[0], _inverse_sqrt_one_minus_square(a[0]))),
    "acos": _Function(1, math.acos, np.arccos,
                      lambda a, d: _neg(_div(d[0], _inverse_sqrt_one_minus_square(a[0])))),
    "atan": _Function(1, math.atan, np.arctan,
                      lambda a, d: _div(d[0], _add(_ONE, _pow(a[0], _TWO)))),
    "atan2": _Function(2, math.atan2, np.arctan2, _d_atan2),
    "sinh": _Function(1, math.sinh, np.sinh, lambda a, d: _mul(_call("cosh", a), d[0])),
    "cosh": _Function(1, math.cosh, np.cosh, lambda a, d: _mul(_call("sinh", a), d[0])),
    "tanh": _Function(1, math.tanh, np.tanh,
                      lambda a, d: _div(d[0], _pow(_call("cosh", a), _TWO))),
    "exp": _Function(1, math.exp, np.exp, lambda a, d: _mul(_call("exp", a), d[0])),
    "log": _Function(1, math.log, np.log, lambda a, d: _div(d[0], a[0])),
    "log10": _Function(1, math.log10, np.log10,
                       lambda a, d: _div(d[0], _mul(Num(math.log(10.0)), a[0]))),
    "sqrt": _Function(1, math.sqrt, np.sqrt,
                      lambda a, d: _div(d[0], _mul(_TWO, _call("sqrt", a)))),
    "abs": _Function(1, abs, np.abs, lambda a, d: _mul(_call("sign", a), d[0])),
    "sign": _Function(1, _sign, np.sign, lambda a, d: _ZERO),
    "min": _Function(2, _min, np.minimum, lambda a, d: _call("ifle", (a[0], a[1], d[0], d[1]))),
    "max": _Function(2, _max, np.maximum, lambda a, d: _call("ifle", (a[1], a[0], d[0], d[1]))),
    "step": _Function(5, _step, _step_array, _d_step),
    "ifle": _Function(4, _ifle, _ifle_array,
                      lambda a, d: _call("ifle", (a[0], a[1], d[2], d[3]))),
}

FUNCTION_NAMES = ("sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh",
                  "exp", "log", "log10", "sqrt", "abs", "sign", "min", "max", "pow", "step")
"""The functions user text may call (``pow`` is parsed as the ``^`` operator)."""

CONSTANTS = {"pi": math.pi, "e": math.e, "deg": math.pi / 180.0}   # deg: one degree in radians
"""The named constants user text may use."""

_OPERATORS = {"+": (operator.add, np.add), "-": (operator.sub, np.subtract),
              "*": (operator.mul, np.multiply), "/": (operator.truediv, np.divide),
              "^": (math.pow, np.power)}
"""Binary operators: (float implementation, array implementation).  ``math.pow`` rather than
``**``, which turns a negative base with a fractional exponent into a complex number."""


# --------------------------------------------------------------------------------------------
# Simplifying constructors (constant folding and the light rules 0*x = 0, 1*x = x, x+0 = x, ...)
# --------------------------------------------------------------------------------------------

def _fold(scalar, array, values):
    """A :class:`Num` holding ``scalar(*values)``; overflow and domain errors give the numpy
    result (inf or NaN) instead of an exception."""
    try:
        return Num(float(scalar(*values)))
    except (ArithmeticError, ValueError):
        with np.errstate(all="ignore"):
            return Num(float(array(*values)))


def _is(node, number):
    """Whether ``node`` is the number ``number``."""
    return isinstance(node, Num) and node.value == number


def _is_scaled(node):
    """Whether ``node`` is ``c * x`` with a number ``c`` (how :func:`_mul` writes products)."""
    return isinstance(node, Binary) and node.op == "*" and isinstance(node.left, Num)


def _neg(a):
    """``-a``, simplified."""
    if isinstance(a, Num):
        return Num(-a.value)
    if isinstance(a, Unary):
        return a.operand
    if _is_scaled(a):
        return _mul(Num(-a.left.value), a.right)
    return Unary(a)


def _add(a, b):
    """``a + b``, simplified."""
    if isinstance(a, Num) and isinstance(b, Num):
        return _fold(*_OPERATORS["+"], (a.value, b.value))
    if _is(a, 0):
        return b
    if _is(b, 0):
        return a
    if isinstance(b, Unary):
        return _sub(a, b.operand)
    if isinstance(b, Num) and b.value < 0:
        return _sub(a, Num(-b.value))
    if _is_scaled(b) and b.left.value < 0:
        return _sub(a, _mul(Num(-b.left.value), b.right))
    return Binary("+", a, b)


def _sub(a, b):
    """``a - b``, simplified."""
    if isinstance(a, Num) and isinstance(b, Num):
        return _fold(*_OPERATORS["-"], (a.value, b.value))
    if _is(b, 0):
        return a
    if _is(a, 0):
        return _neg(b)
    if isinstance(b, Unary):
        return _add(a, b.operand)
    if isinstance(b, Num) and b.value < 0:
        return _add(a, Num(-b.value))
    if _is_scaled(b) and b.left.value < 0:
        return _add(a, _mul(Num(-b.left.value), b.right))
    return Binary("-", a, b)


def _mul(a, b):
    """``a * b``, simplified; number factors and signs are moved to the front and merged."""
    if isinstance(a, Num) and isinstance(b, Num):
        return _fold(*_OPERATORS["*"], (a.value, b.value))
    if isinstance(b, Num):
        a, b = b, a
    if isinstance(a, Num):
        if a.value == 0:
            return _ZERO
        if a.value == 1:
            return b
        if _is_scaled(b):
            return _mul(Num(a.value * b.left.value), b.right)
        if isinstance(b, Unary):
            return _mul(Num(-a.value), b.operand)
        if a.value == -1:
            return _neg(b)
        return Binary("*", a, b)
    if isinstance(a, Unary):
        return _neg(_mul(a.operand, b))
    if isinstance(b, Unary):
        return _neg(_mul(a, b.operand))
    if _is_scaled(a):
        return _mul(a.left, _mul(a.right, b))
    if _is_scaled(b):
        return _mul(b.left, _mul(a, b.right))
    return Binary("*", a, b)


def _div(a, b):
    """``a / b``, simplified; number factors and signs of the numerator and signs of the
    denominator are moved to the front."""
    if isinstance(a, Num) and isinstance(b, Num):
        return _fold(*_OPERATORS["/"], (a.value, b.value))
    if _is(a, 0):
        return _ZERO
    if _is(b, 1):
        return a
    if isinstance(a, Unary):
        return _neg(_div(a.operand, b))
    if isinstance(b, Unary):
        return _neg(_div(a, b.operand))
    if _is_scaled(a):
        if isinstance(b, Num):
            return _mul(_div(a.left, b), a.right)
        return _mul(a.left, _div(a.right, b))
    return Binary("/", a, b)


def _pow(a, b):
    """``a ^ b``, simplified."""
    if isinstance(a, Num) and isinstance(b, Num):
        return _fold(*_OPERATORS["^"], (a.value, b.value))
    if _is(b, 0):
        return _ONE
    if _is(b, 1):
        return a
    return Binary("^", a, b)


def _call(name, args):
    """``name(*args)``, folded when all arguments are numbers; ``ifle`` with a decided
    condition or equal numeric branches is replaced by its branch."""
    if all(isinstance(arg, Num) for arg in args):
        function = _FUNCTIONS[name]
        return _fold(function.scalar, function.array, [arg.value for arg in args])
    if name == "ifle":
        a, b, p, q = args
        if isinstance(a, Num) and isinstance(b, Num):
            return p if a.value <= b.value else q
        if isinstance(p, Num) and p == q:
            return p
    return Call(name, tuple(args))


# --------------------------------------------------------------------------------------------
# Symbolic derivative
# --------------------------------------------------------------------------------------------

def _quotient_derivative(node, da, db):
    """d/dt a/b given the derivatives of a and b."""
    if _is(db, 0):
        return _div(da, node.right)
    return _div(_sub(_mul(da, node.right), _mul(node.left, db)), _pow(node.right, _TWO))


def _power_derivative(node, dbase, dexponent):
    """d/dt base^exponent given the derivatives of base and exponent."""
    base, exponent = node.left, node.right
    if _is(dexponent, 0):
        return _mul(_mul(exponent, _pow(base, _sub(exponent, _ONE))), dbase)
    log_base = _call("log", (base,))
    if _is(dbase, 0):
        return _mul(_mul(node, log_base), dexponent)
    return _mul(node, _add(_mul(dexponent, log_base), _div(_mul(exponent, dbase), base)))


_BINARY_DERIVATIVES = {
    "+": lambda node, da, db: _add(da, db),
    "-": lambda node, da, db: _sub(da, db),
    "*": lambda node, da, db: _add(_mul(da, node.right), _mul(node.left, db)),
    "/": _quotient_derivative,
    "^": _power_derivative,
}
"""Derivative rules of the binary operators: ``(node, d left, d right) -> derivative``."""


def _derivative(node, memo):
    """The simplified derivative of ``node`` with respect to its variable.  ``memo`` maps the
    ids of nodes already differentiated to their derivatives, so shared sub-trees are
    differentiated once (pass ``{}``)."""
    result = memo.get(id(node))
    if result is not None:
        return result
    if isinstance(node, Num):
        result = _ZERO
    elif isinstance(node, Var):
        result = _ONE
    elif isinstance(node, Unary):
        result = _neg(_derivative(node.operand, memo))
    elif isinstance(node, Binary):
        da, db = _derivative(node.left, memo), _derivative(node.right, memo)
        result = _BINARY_DERIVATIVES[node.op](node, da, db)
    else:
        dargs = []
        for arg in node.args:
            dargs.append(_derivative(arg, memo))
        if all(_is(d, 0) for d in dargs):
            result = _ZERO
        else:
            result = _FUNCTIONS[node.name].derivative(node.args, dargs)
    memo[id(node)] = result
    return result


# --------------------------------------------------------------------------------------------
# Text form
# --------------------------------------------------------------------------------------------

_PREC_SUM, _PREC_PRODUCT, _PREC_SIGN, _PREC_POWER, _PREC_ATOM = 1, 2, 3, 4, 5
_BINARY_PRECEDENCE = {"+": _PREC_SUM, "-": _PREC_SUM, "*": _PREC_PRODUCT, "/": _PREC_PRODUCT,
                      "^": _PREC_POWER, "**": _PREC_POWER}


def _format_number(value):
    """Shortest text that reads back as ``value`` (integers without ``.0``)."""
    if value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(value)


def _format(node):
    """``(text, precedence)`` of ``node``, parenthesized as little as the grammar allows (and
    recursing once per level, like evaluation)."""
    if isinstance(node, Num):
        text = _format_number(node.value)
        return text, _PREC_SIGN if text.startswith("-") else _PREC_ATOM
    if isinstance(node, Var):
        return node.name, _PREC_ATOM
    if isinstance(node, Unary):
        # -a*b reads as (-a)*b, which is exactly -(a*b): no parentheses needed
        return "-" + _parenthesized(_format(node.operand), _PREC_PRODUCT), _PREC_SIGN
    if isinstance(node, Binary):
        precedence = _BINARY_PRECEDENCE[node.op]
        if node.op == "^":
            left = _parenthesized(_format(node.left), _PREC_ATOM)
            right = _parenthesized(_format(node.right), _PREC_SIGN)
        else:
            left = _parenthesized(_format(node.left), precedence)
            right = _parenthesized(_format(node.right), precedence + 1)
        separator = f" {node.op} " if precedence == _PREC_SUM else node.op
        return left + separator + right, precedence
    args = []
    for arg in node.args:
        args.append(_format(arg)[0])
    return f"{node.name}({', '.join(args)})", _PREC_ATOM


def _parenthesized(formatted, min_precedence):
    """The text of a ``(text, precedence)`` pair, in parentheses if it binds less tightly than
    ``min_precedence``."""
    text, precedence = formatted
    return text if precedence >= min_precedence else f"({text})"


# --------------------------------------------------------------------------------------------
# Evaluation
# --------------------------------------------------------------------------------------------

def _compile(node, array):
    """A closure ``f(t)`` evaluating ``node`` with the float (``array=False``) or the numpy
    (``array=True``) implementations.  A sub-tree shared by several parents (derivative trees
    share most of theirs) is compiled once, so compiling costs the distinct nodes, not the tree
    written out in full (up to 20000 nodes each, which took seconds and megabytes per expression)."""
    memo = {}
    for item in _distinct_nodes(node):
        memo[id(item)] = _closure(item, array, [memo[id(child)] for child in _children(item)])
    return memo[id(node)]


def _closure(node, array, fs):
    """The closure of ``node`` given the closures ``fs`` of its children."""
    if isinstance(node, Num):
        value = node.value
        return lambda t: value
    if isinstance(node, Var):
        return lambda t: t
    if isinstance(node, Unary):
        f = fs[0]
        return lambda t: -f(t)
    if isinstance(node, Binary):
        op = _OPERATORS[node.op][array]
        f, g = fs
        return lambda t: op(f(t), g(t))
    function = _FUNCTIONS[node.name].array if array else _FUNCTIONS[node.name].scalar
    if len(fs) == 1:
        f = fs[0]
        return lambda t: function(f(t))
    if len(fs) == 2:
        f, g = fs
        return lambda t: function(f(t), g(t))
    return lambda t: function(*[f(t) for f in fs])


class Expression:
    """A function of one variable given by a formula; implements :class:`TimeFunction`.

    Normally created by :func:`parse_expression`.  ``tree`` is the syntax tree, ``variable`` the
    variable name, ``text`` the text it was parsed from (or the formatted tree for derived
    expressions), ``is_constant`` tells whether the variable is absent after constant folding.
    ``derivative_trees`` optionally holds the already computed trees of the first, second, ...
    derivatives.

    Evaluation with a float uses ``math`` functions (a few microseconds); where those fail
    (overflow, domain errors, division by zero) the numpy result -- inf or NaN -- is returned
    instead of raising.  An array argument is evaluated with numpy, silently, and gives a new
    float array of the same shape.  ``cost``: the written-out nodes of the expression and its first
    two derivatives, what one evaluation of all three costs (set by :func:`parse_expression`).
    """

    cost = 1

    def __init__(self, tree, variable="t", text=None, derivative_trees=()):
        self.tree = tree
        self.variable = variable
        self._text = text
        self.is_constant = not any(isinstance(node, Var) for node in _distinct_nodes(tree))
        self._scalar = _compile(tree, array=False)
        self._array = _compile(tree, array=True)
        self._derivative = (Expression(derivative_trees[0], variable,
                                       derivative_trees=derivative_trees[1:])
                            if derivative_trees else None)

    @property
    def text(self):
        """The text parsed, or for a derived expression its tree formatted (when first asked: a
        derivative's text is rarely shown and can be long)."""
        if self._text is None:
            self._text = _format(self.tree)[0]
        return self._text

    def value(self, t):
        """The value at ``t`` (float -> float, array -> array of the same shape)."""
        if isinstance(t, _REAL_SCALARS):
            t = float(t)
            try:
                return self._scalar(t)
            except (ArithmeticError, ValueError):
                return float(self._evaluate_array(np.asarray(t)))
        return self._evaluate_array(np.asarray(t, dtype=float))

    __call__ = value

    def _evaluate_array(self, t):
        """Numpy evaluation at the float array ``t``, without floating-point warnings."""
        with np.errstate(all="ignore"):
            result = np.array(self._array(t), dtype=float)
        if result.shape != t.shape:
            result = np.broadcast_to(result, t.shape).copy()
        return result

    def derivative(self):
        """The derivative with respect to the variable, as an :class:`Expression` (cached).
        Raises :class:`ExpressionError` if it exceeds the complexity limits (never for the
        first and second derivatives of a parsed expression: :func:`parse_expression` checks
        those)."""
        if self._derivative is None:
            tree = _derivative(self.tree, {})
            _check_complexity(tree, f"the derivative of {_snippet(self.text)}")
            self._derivative = Expression(tree, self.variable)
        return self._derivative

    def d1(self, t):
        """The first derivative at ``t``."""
        return self.derivative().value(t)

    def d2(self, t):
        """The second derivative at ``t``."""
        return self.derivative().derivative().value(t)

    def to_json(self):
        """The text of the expression."""
        return self.text

    def __str__(self):
        return self.text

    def __repr__(self):
        return f"Expression({self.text!r})"

    def __reduce__(self):
        return Expression, (self.tree, self.variable, self.text)


# --------------------------------------------------------------------------------------------
# Tokenizer and parser
# --------------------------------------------------------------------------------------------

class _Token(NamedTuple):
    """A token: ``kind`` is num, name, op, bad (an unexpected character) or end; ``position``
    is the 0-based offset in the text."""
    kind: str
    text: str
    position: int


_TOKEN = re.compile(r"(?P<num>(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)"
                    r"|(?P<name>[A-Za-z_][A-Za-z0-9_]*)|(?P<op>\*\*|[-+*/^(),])", re.ASCII)
_SPACE = re.compile(r"\s*", re.ASCII)
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*", re.ASCII)


def _tokenize(text):
    """The tokens of ``text``, ending with an ``end`` token, or with a ``bad`` token at the first
    character that starts no token (the parser reports it when it gets there)."""
    tokens, position = [], 0
    while True:
        position = _SPACE.match(text, position).end()
        if position == len(text):
            tokens.append(_Token("end", "", position))
            return tokens
        match = _TOKEN.match(text, position)
        if match is None:
            tokens.append(_Token("bad", text[position], position))
            return tokens
        tokens.append(_Token(match.lastgroup, match.group(), position))
        position = match.end()


def _describe(token):
    """How an error message names ``token``."""
    if token.kind == "end":
        return "the end of the expression"
    if token.kind == "bad":
        return f"the character {token.text!r}"
    if token.kind == "num":
        return f"the number {token.text}"
    if token.kind == "name":
        return f"the name {token.text!r}"
    return repr(token.text)


def _snippet(text, limit=60):
    """``text`` quoted, shortened to about ``limit`` characters."""
    return repr(text if len(text) <= limit else text[:limit - 3] + "...")


_BUILDERS = {"+": _add, "-": _sub, "*": _mul, "/": _div}


class _Parser:
    """Recursive-descent parser with precedence climbing for the binary operators.

    ``depth`` arguments count the nesting of parentheses, calls, signs and powers."""

    def __init__(self, text, variable):
        self.text = text
        self.variable = variable
        self.tokens = _tokenize(text)
        self.index = 0

    def error(self, detail, token):
        """An :class:`ExpressionError` for ``detail`` found at ``token``."""
        return ExpressionError(f"invalid expression {_snippet(self.text)} "
                               f"at position {token.position + 1}: {detail}")

    def peek(self):
        """The next token, not consumed."""
        return self.tokens[self.index]

    def advance(self):
        """The next token, consumed."""
        token = self.tokens[self.index]
        self.index += 1
        return token

    def at(self, symbol):
        """Whether the next token is the operator or punctuation ``symbol``."""
        token = self.tokens[self.index]
        return token.kind == "op" and token.text == symbol

    def parse(self):
        """The tree of the whole text."""
        tree = self.expression(_PREC_SUM, 0)
        token = self.peek()
        if token.kind != "end":
            raise self.error(f"expected an operator or the end, found {_describe(token)}", token)
        return tree

    def expression(self, min_precedence, depth):
        """Operands joined by binary operators binding at least as tightly as
        ``min_precedence``."""
        if depth > MAX_NESTING:
            raise self.error(f"nested more than {MAX_NESTING} levels deep", self.peek())
        left = self.signed(depth)
        while True:
            token = self.peek()
            precedence = _BINARY_PRECEDENCE.get(token.text) if token.kind == "op" else None
            if precedence is None or precedence < min_precedence:
                return left
            self.advance()
            if precedence == _PREC_POWER:
                left = self.power(left, self.expression(_PREC_POWER, depth + 1), token)
            else:
                left = _BUILDERS[token.text](left, self.expression(precedence + 1, depth))

    def signed(self, depth):
        """An operand with optional leading signs (which bind less tightly than ``^``)."""
        token = self.peek()
        if self.at("+") or self.at("-"):
            self.advance()
            operand = self.expression(_PREC_POWER, depth + 1)
            return _neg(operand) if token.text == "-" else operand
        return self.primary(depth)

    def primary(self, depth):
        """A number, a name, a function call or a parenthesized expression."""
        token = self.advance()
        if token.kind == "num":
            return Num(float(token.text))
        if token.kind == "name":
            return self.name(token, depth)
        if token.kind == "op" and token.text == "(":
            tree = self.expression(_PREC_SUM, depth + 1)
            self.close(token)
            return tree
        raise self.error(f"expected a number, a name or '(', found {_describe(token)}", token)

    def close(self, opening):
        """Consume the ``)`` matching the ``(`` token ``opening``."""
        token = self.advance()
        if not (token.kind == "op" and token.text == ")"):
            raise self.error(f"expected ')' to close the '(' at position {opening.position + 1}, "
                             f"found {_describe(token)}", token)

    def power(self, base, exponent, token):
        """``base ^ exponent`` for the operator or ``pow`` token ``token``, refusing a huge
        constant exponent."""
        if isinstance(exponent, Num) and not abs(exponent.value) <= MAX_EXPONENT:
            raise self.error(f"huge exponent {_format_number(exponent.value)} (the limit is "
                             f"{MAX_EXPONENT}) for {token.text!r}", token)
        return _pow(base, exponent)

    def name(self, token, depth):
        """The variable, a constant or a function call starting with the name ``token``."""
        name = token.text
        functions = f"; valid functions: {', '.join(FUNCTION_NAMES)}"
        if self.at("("):
            if name in FUNCTION_NAMES:
                return self.call(token, self.arguments(self.advance(), depth))
            if name == self.variable or name in CONSTANTS:
                raise self.error(f"{name!r} is not a function", token)
            raise self.error(f"unknown function {name!r}{_case_hint(name)}{functions}", token)
        if name == self.variable:
            return Var(name)
        if name in CONSTANTS:
            return Num(CONSTANTS[name])
        if name in FUNCTION_NAMES:
            raise self.error(f"function {name!r} without its arguments in parentheses", token)
        names = f"; valid names: {', '.join([self.variable, *CONSTANTS])}"
        raise self.error(f"unknown name {name!r}{_case_hint(name)}{names}{functions}", token)

    def arguments(self, opening, depth):
        """The comma-separated arguments after the ``(`` token ``opening``, up to its ``)``."""
        args = []
        if not self.at(")"):
            args.append(self.expression(_PREC_SUM, depth + 1))
            while self.at(","):
                self.advance()
                args.append(self.expression(_PREC_SUM, depth + 1))
        self.close(opening)
        return args

    def call(self, token, args):
        """The tree of a call of the whitelisted function named by ``token``."""
        name = token.text
        arity = 2 if name == "pow" else _FUNCTIONS[name].arity
        if len(args) != arity:
            raise self.error(f"{name}() takes {arity} argument{'s' if arity > 1 else ''}, "
                             f"got {len(args)}", token)
        if name == "pow":
            return self.power(*args, token)
        if name == "step":
            x0, x1 = args[1], args[3]
            if isinstance(x0, Num) and isinstance(x1, Num) and not x0.value < x1.value:
                raise self.error(f"step() needs x0 < x1, got x0 = {_format_number(x0.value)} "
                                 f"and x1 = {_format_number(x1.value)}", token)
        return _call(name, args)


def _case_hint(name):
    """A note when ``name`` is a function or constant in other letter case, else ''."""
    lower = name.lower()
    if lower != name and (lower in FUNCTION_NAMES or lower in CONSTANTS):
        return f" (names are case-sensitive: did you mean {lower!r}?)"
    return ""


def _check_numbers(expression, text):
    """Raise :class:`ExpressionError` when the expression or its first two derivatives hold a number
    that is not finite (``t + 1e999``, ``t*(0*1e999)`` after folding): no time function can be
    evaluated with it, and generated C cannot spell it."""
    function = expression
    for what in ("it", "its first derivative", "its second derivative"):
        bad = [node.value for node in _distinct_nodes(function.tree)
               if isinstance(node, Num) and not math.isfinite(node.value)]
        if bad:
            raise ExpressionError(f"invalid expression {_snippet(text)}: {what} holds the number "
                                  f"{bad[0]}, which is not finite (beyond the float range or undefined)")
        function = function.derivative()


def parse_expression(text, variable="t"):
    """Parse ``text`` (see the module docstring for the grammar) into an :class:`Expression` of
    ``variable``, with its first two derivatives ready.  Raises :class:`ExpressionError` naming
    the position and token of any problem, or naming the limit the expression or one of these
    derivatives exceeds."""
    if not isinstance(variable, str) or not _NAME.fullmatch(variable) \
            or variable in CONSTANTS or variable in FUNCTION_NAMES:
        raise ExpressionError(f"invalid variable name {variable!r}")
    if not isinstance(text, str):
        raise ExpressionError(f"an expression must be a string, got {type(text).__name__}")
    if len(text) > MAX_LENGTH:
        raise ExpressionError(f"expression too long: {len(text)} characters "
                              f"(the limit is {MAX_LENGTH})")
    if not text.strip():
        raise ExpressionError("empty expression")
    return _parse(text, variable)


@functools.lru_cache(maxsize=256)
def _parse(text, variable):
    """:func:`parse_expression` of checked arguments, remembered: a project's expressions are
    parsed when its file is checked and again when a run compiles its forces and drivers (an
    Expression is immutable but for its cached derivatives, so one object can serve both)."""
    tree = _Parser(text, variable).parse()
    invalid = f"invalid expression {_snippet(text)}: "
    cost = _check_complexity(tree, invalid + "it")
    first = _derivative(tree, {})
    cost += _check_complexity(first, invalid + "its first derivative")
    second = _derivative(first, {})
    cost += _check_complexity(second, invalid + "its second derivative")
    expression = Expression(tree, variable, text, (first, second))
    expression.cost = cost
    return expression


# --------------------------------------------------------------------------------------------
# Tables
# --------------------------------------------------------------------------------------------

def _number_vector(name, data, problems):
    """``data`` as a 1-D float array, or None after adding a problem to ``problems`` when it is
    not a list of finite numbers."""
    try:
        array = np.asarray(data)
    except (TypeError, ValueError):
        array = None
    if array is None or array.ndim != 1 or array.dtype.kind not in "iuf":
        problems.append(f"{name}: must be a list of numbers")
        return None
    array = array.astype(float)
    bad = np.flatnonzero(~np.isfinite(array))
    if bad.size:
        problems.append(f"{name}[{bad[0]}]: must be finite, got {array[bad[0]]}")
        return None
    return array


class TableFunction:
    """A function tabulated at times ``t_values``; implements :class:`TimeFunction`.

    With 4 or more points it is the 'not-a-knot' cubic spline through the points, with 2 or 3
    points the piecewise linear interpolant (its second derivative is 0).  Outside the tabulated
    range the end value is held, so there the derivatives are 0 (the first derivative may thus
    jump at the ends; at the end points themselves the spline's one-sided derivatives apply).

    Raises :class:`ExpressionError` unless the times are at least 2 strictly increasing finite
    numbers and the values as many finite numbers.
    """

    def __init__(self, t_values, values):
        problems = []
        t = _number_vector("t", t_values, problems)
        v = _number_vector("values", values, problems)
        if t is not None:
            if len(t) < 2:
                problems.append(f"t: needs at least 2 points, got {len(t)}")
            decreasing = np.flatnonzero(np.diff(t) <= 0)
            if decreasing.size:
                i = decreasing[0]
                problems.append(f"t[{i + 1}]: times must be strictly increasing, "
                                f"got {t[i + 1]:g} after {t[i]:g}")
        if t is not None and v is not None and len(t) != len(v):
            problems.append(f"values: must have one value per time, got {len(v)} values "
                            f"for {len(t)} times")
        if problems:
            raise ExpressionError(problems)
        self._t, self._values = t, v
        with np.errstate(all="ignore"):
            slopes = np.diff(v) / np.diff(t)
        steep = np.flatnonzero(~np.isfinite(slopes))
        if steep.size:
            i = steep[0]
            raise ExpressionError(f"t[{i + 1}]: too close to t[{i}] for the change of value between them "
                                  f"(t = {t[i]:g} and {t[i + 1]:g}: the slope is not a finite number)")
        from scipy.interpolate import CubicSpline, PPoly     # imported on use: only tables need them
        if len(t) >= 4:
            try:
                with np.errstate(all="ignore"):
                    spline = CubicSpline(t, v, bc_type="not-a-knot")
            except ValueError:           # (scipy: "`dydx` must contain only finite values")
                spline = None
            if spline is None or not np.all(np.isfinite(spline.c)):
                raise ExpressionError("t: the times are too close together for a spline through these values "
                                      "(its slopes or curvature are not finite numbers)")
            self._spline = spline
        else:
            self._spline = PPoly(np.vstack([slopes, v[:-1]]), t)

    def _evaluate(self, t, order):
        """The ``order``-th derivative at ``t`` (float -> float, array -> array)."""
        times = np.asarray(t, dtype=float)
        result = self._spline(np.clip(times, self._t[0], self._t[-1]), order)
        if order:
            result = np.where((times < self._t[0]) | (times > self._t[-1]), 0.0, result)
        return float(result) if isinstance(t, _REAL_SCALARS) else result

    def value(self, t):
        """The interpolated value at ``t``."""
        return self._evaluate(t, 0)

    __call__ = value

    def d1(self, t):
        """The first derivative at ``t``."""
        return self._evaluate(t, 1)

    def d2(self, t):
        """The second derivative at ``t``."""
        return self._evaluate(t, 2)

    def to_json(self):
        """``{"t": [...], "values": [...]}``."""
        return {"t": self._t.tolist(), "values": self._values.tolist()}

    def __repr__(self):
        return f"TableFunction({self._t.tolist()!r}, {self._values.tolist()!r})"


# --------------------------------------------------------------------------------------------
# Entry point
# --------------------------------------------------------------------------------------------

def time_function(spec):
    """The :class:`TimeFunction` described by ``spec``: a number (a constant expression, whose
    ``to_json`` is its text), a string (:func:`parse_expression` in ``t``; a constant one such as
    "1/0" or "1e999" must be finite), a dict
    ``{"t": [...], "values": [...]}`` (:class:`TableFunction`) or an existing time function
    (returned as is).  Anything else raises :class:`ExpressionError`."""
    if isinstance(spec, numbers.Real) and not isinstance(spec, bool):
        try:
            value = float(spec)
        except OverflowError:          # an integer beyond the float range (10**400 in a file)
            raise ExpressionError("a constant time function must be finite, got an integer too large "
                                  "for a float") from None
        if not math.isfinite(value):
            raise ExpressionError(f"a constant time function must be finite, got {spec!r}")
        return Expression(Num(value))
    if isinstance(spec, str):
        check_budget()
        expression = parse_expression(spec)
        charge(expression.cost)
        if expression.is_constant and not math.isfinite(expression.value(0.0)):
            raise ExpressionError(f"invalid expression {_snippet(spec)}: its constant value "
                                  f"{expression.value(0.0)} is not finite")
        _check_numbers(expression, spec)
        return expression
    if isinstance(spec, dict):
        problems = [f"table: missing key {key!r}" for key in ("t", "values") if key not in spec]
        problems += [f"table: unknown key {key!r}" for key in spec if key not in ("t", "values")]
        if problems:
            raise ExpressionError(problems)
        return TableFunction(spec["t"], spec["values"])
    if isinstance(spec, TimeFunction):
        return spec
    raise ExpressionError(f"a time function must be a number, an expression string, a table "
                          f"{{'t': [...], 'values': [...]}} or a TimeFunction, "
                          f"got {type(spec).__name__}")
