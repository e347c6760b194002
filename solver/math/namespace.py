"""The numeric namespace of the formulas written once for numbers and for the code generator.

The tire (:mod:`solver.vehicle.tire`), the road profiles (:mod:`solver.vehicle.road`), the
spring-damper (:mod:`solver.forces`) and the speed controller (:mod:`solver.vehicle.speed_control`)
take their mathematics from a namespace ``m``: :data:`NUMPY_MATH`
here for numbers, or the generator's on sympy expressions (:func:`solver.codegen.derive` names its
intermediates there).  Both have::

    sin cos atan tanh sqrt pi  the functions and π
    let(x)                     an intermediate given a name (the generator's symbol e{n}); x itself here
    vector(v)                  a 3-vector of named components (an array here; components given as stacked
                               numbers (…) make stacked vectors (…, 3))
    piecewise(*(value, cond))  the value of the first pair whose condition holds (the last one's is True;
                               here also stacked values with a condition each)
    gate(cond, x)              x where cond holds, else 0 (x a scalar or a vector; here also stacked
                               scalars or vectors with a condition each)

Conditions are written with comparisons and ``&`` (numpy booleans, sympy relations alike).
Vector algebra that needs no namespace (:func:`dot`, :func:`along`, :mod:`solver.math.rotations`)
works on numbers, stacked numbers and sympy object arrays alike.
"""
from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np


def _piecewise(*pairs):
    """The value of the first (value, condition) pair whose condition holds (one point, or stacked
    values and conditions: each state's first)."""
    if all(np.ndim(condition) == 0 for _, condition in pairs):
        return next(value for value, condition in pairs if condition)
    *head, (value, _) = pairs
    for earlier, condition in reversed(head):     # np.select's choice by nested wheres (a tenth of its cost)
        value = np.where(condition, earlier, value)
    return value


def _gate(condition, x):
    """x where the condition holds, else 0; stacked scalars or vectors (…, 3) with a condition each (…)."""
    if np.ndim(condition) == 0:         # one state: a choice (np.where costs microseconds per call)
        return x if condition else np.zeros(np.shape(x))[()]
    condition = np.asarray(condition)
    return np.where(condition.reshape(condition.shape + (1,) * (np.ndim(x) - condition.ndim)), x, 0.0)


def _vector(v):
    """A 3-vector of numbers, or stacked 3-vectors (…, 3) of components given as stacked numbers."""
    if isinstance(v, (list, tuple)) and any(np.ndim(x) for x in v):
        out = np.empty(np.broadcast_shapes(*(np.shape(x) for x in v)) + (len(v),), np.result_type(*v))
        for k, x in enumerate(v):
            out[..., k] = x
        return out
    return np.asarray(v)


NUMPY_MATH = SimpleNamespace(sin=np.sin, cos=np.cos, atan=np.arctan, tanh=np.tanh, sqrt=np.sqrt, pi=math.pi,
                             let=lambda x: x, vector=_vector, piecewise=_piecewise, gate=_gate)


def dot(a, b):
    """a·b over the last axis of 3-vectors, single or stacked (…, 3) and broadcast; numbers or sympy
    (summed in the same order either way; np.sum costs about ten times more on single vectors)."""
    if np.ndim(a) == 1 and np.ndim(b) == 1:
        return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
    a, b = np.asarray(a), np.asarray(b)         # stacked: the same sum written out (np.sum's overhead, again)
    return a[..., 0] * b[..., 0] + a[..., 1] * b[..., 1] + a[..., 2] * b[..., 2]


def along(x, v):
    """x v of a scalar x and a vector v (…, 3), or of stacked ones (x (…), v (…, 3)); numbers or sympy."""
    return x * v if np.ndim(x) == 0 else np.asarray(x)[..., None] * v
