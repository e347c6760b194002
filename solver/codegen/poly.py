"""Expanded polynomials in the kernels' input symbols with float coefficients, Σ c · Π symbols —
the form of :meth:`solver.codegen.derive._Symbols.define`, built by plain Python arithmetic.

numpy object arrays of :class:`Poly` go through the same numeric code as floats (``@``, einsum,
trace, the rotation helpers), so a formula written once for numbers gives its kernel expression
without sympy's arithmetic (about a thousand times slower per operation on these sizes); each
result becomes one named definition (:func:`defined`), printed to C directly.
"""
from __future__ import annotations

import numpy as np

from .symbolic import sp


def _key(symbol):
    return symbol.name


def _accumulate(terms, monomial, c):
    """terms[monomial] += c, the monomial dropped when its coefficient cancels to 0."""
    total = terms.get(monomial, 0.0) + c
    if total == 0.0:
        terms.pop(monomial, None)
    else:
        terms[monomial] = total


class Poly:
    """Σ c · Π symbols: ``terms`` {tuple of symbols sorted by name (a monomial): float c}; the symbols
    are sympy's, or any hashable objects with a ``name`` (:mod:`solver.codegen.tree`'s)."""

    __slots__ = ("terms",)

    def __init__(self, terms):
        self.terms = terms

    @classmethod
    def of(cls, x):
        """A Poly from a number, a sympy symbol (or number) or a Poly."""
        if isinstance(x, Poly):
            return x
        if isinstance(x, sp.Symbol):
            return cls({(x,): 1.0})
        c = float(x)
        return cls({(): c} if c != 0.0 else {})

    def __add__(self, other):
        if isinstance(other, np.ndarray):
            return NotImplemented
        terms = dict(self.terms)
        for m, c in Poly.of(other).terms.items():
            _accumulate(terms, m, c)
        return Poly(terms)

    __radd__ = __add__

    def __neg__(self):
        return Poly({m: -c for m, c in self.terms.items()})

    def __sub__(self, other):
        if isinstance(other, np.ndarray):
            return NotImplemented
        return self + (-Poly.of(other))

    def __rsub__(self, other):
        return Poly.of(other) + (-self)

    def __mul__(self, other):
        if isinstance(other, np.ndarray):
            return NotImplemented
        if not isinstance(other, (Poly, sp.Symbol)):
            c = float(other)
            return Poly({m: c * v for m, v in self.terms.items()} if c != 0.0 else {})
        terms = {}
        for m2, c2 in Poly.of(other).terms.items():
            for m1, c1 in self.terms.items():
                _accumulate(terms, tuple(sorted(m1 + m2, key=_key)), c1 * c2)
        return Poly(terms)

    __rmul__ = __mul__

    def __truediv__(self, other):
        """Division by a number (a Poly divisor is left to its own ``__rtruediv__``, if any)."""
        if isinstance(other, (Poly, np.ndarray)):
            return NotImplemented
        d = float(other)
        return Poly({m: c / d for m, c in self.terms.items()})


def polys(symbols):
    """Object array of Polys of sympy symbols (any shape)."""
    return np.vectorize(Poly.of, otypes=[object])(np.asarray(symbols, dtype=object))


def defined(s, x):
    """The sympy symbol standing for Poly (or number) ``x`` (derive's ``s.define``; 0 for zero)."""
    return s.define([(c, m) for m, c in Poly.of(x).terms.items()])


def named(s):
    """Array of Polys → the same array, each entry one named definition (as a Poly of one symbol),
    so that products built on it stay short."""
    return np.vectorize(lambda x: Poly.of(defined(s, x)), otypes=[object])


def symbols(s, x):
    """Array of Polys → the same shape of sympy symbols, one definition each (:func:`defined`)."""
    return np.vectorize(lambda e: defined(s, e), otypes=[object])(x)
