"""The numeric namespace of the formulas written once for numbers and for the code generator.

The tire (:mod:`solver.vehicle.tire`), the road profiles (:mod:`solver.vehicle.road`), the
spring-damper (:mod:`solver.forces`) and the speed controller (:mod:`solver.vehicle.speed_control`)
take their mathematics from a namespace ``m``: :data:`NUMPY_MATH`
here for numbers, or the generator's on sympy expressions (:func:`solver.codegen.derive` names its
intermediates there).  Both have::

    sin cos atan tanh sqrt pi  the functions and π
    let(x)                     an intermediate given a name (the generator's symbol e{n}); x itself here
    vector(v)                  a 3-vector of named components (an array here)
    piecewise(*(value, cond))  the value of the first pair whose condition holds (the last one's is True)
    gate(cond, x)              x where cond holds, else 0 (x a scalar or a vector; here also stacked
                               scalars with a condition each)

Conditions are written with comparisons and ``&`` (numpy booleans, sympy relations alike).
Vector algebra that needs no namespace (:func:`dot`, :func:`along`, :mod:`solver.math.rotations`)
works on numbers, stacked numbers and sympy object arrays alike.
"""
from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np


def _piecewise(*pairs):
    """The value of the first (value, condition) pair whose condition holds (one point)."""
    return next(value for value, condition in pairs if condition)


def _gate(condition, x):
    """x where the condition holds, else 0; stacked scalars with a condition each."""
    if np.ndim(condition) == 0:         # one state: a choice (np.where costs microseconds per call)
        return x if condition else np.zeros(np.shape(x))[()]
    return np.where(condition, x, 0.0)


NUMPY_MATH = SimpleNamespace(sin=np.sin, cos=np.cos, atan=np.arctan, tanh=np.tanh, sqrt=np.sqrt, pi=math.pi,
                             let=lambda x: x, vector=np.asarray, piecewise=_piecewise, gate=_gate)


def dot(a, b):
    """a·b over the last axis of 3-vectors, single or stacked (…, 3) and broadcast; numbers or sympy
    (summed in the same order either way; np.sum costs about ten times more on single vectors)."""
    if np.ndim(a) == 1 and np.ndim(b) == 1:
        return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
    return np.sum(a * b, axis=-1)


def along(x, v):
    """x v of a scalar x and a vector v (…, 3), or of stacked ones (x (…), v (…, 3)); numbers or sympy."""
    return x * v if np.ndim(x) == 0 else np.expand_dims(x, -1) * v
