"""The equation forms of the joint kinds, interpreted in one place.

A joint kind's ``equations`` (:data:`solver.model.joint_kinds.JOINT_KINDS`) and the joint coordinates
(:data:`solver.constraints.joints.COORDINATES`) are scalars of the named joint vectors — marker
directions ``xi yi zi`` (body i) and ``xj yj zj`` (body j), the point difference ``d = P_j − P_i``
and the global axes ``ex ey ez`` — written in these forms:

    ("dot", u, w, c)       uᵀw − c
    ("half_square", u, c)  ½ (uᵀu − c²)
    ("screw",)             z_iᵀd − pitch θ        (pitch in m/rad, θ the continuous rotation angle)
    ("angle",)             θ = atan2(y_iᵀx_j, x_iᵀx_j)

c is a number or the name of a joint constant (:data:`solver.constraints.joints.CONSTANTS`).
:func:`scalar` reads a form with the few operations of a backend ``ops``:

    ops.dot(u, w)           uᵀw of two joint vectors
    ops.half_square(u, c)   ½ (uᵀu − c²)
    ops.shift(s, c)         s − c
    ops.combine(a, f, b)    a + f b
    ops.atan2(y, x)         θ = atan2(y, x) (on the branch the backend follows)

The backends: :class:`solver.constraints.primitives.ScalarOps` (value, Jacobian, rates and Hessian of
one joint; rigid and flexible joints), :mod:`solver.constraints.batch` (compiles the rows of all
joints into index arrays), :mod:`solver.formulations.relative` (spatial gradients of cut joints),
:mod:`solver.codegen.derive` (sympy), :class:`Values` here (plain numbers: a force element that reads
a joint coordinate) and :class:`_Probe` here (which constants a form reads, whether it holds an angle
and with what coefficient).  A new form is one case of :func:`scalar`.

The chain rule of θ = atan2(y, x), used by every backend (:func:`atan2_chain`), with r² = x² + y²:
    ∂θ/∂y = x/r²,  ∂θ/∂x = −y/r²,  ∂²θ/∂y² = −2xy/r⁴,  ∂²θ/∂x² = 2xy/r⁴,  ∂²θ/∂x∂y = (y² − x²)/r⁴,
    θ̈'s velocity-quadratic part = θ_y ÿ' + θ_x ẍ' + θ_yy ẏ² + 2 θ_xy ẋ ẏ + θ_xx ẋ²  (:func:`atan2_quad`).
"""
from __future__ import annotations

import functools
import math
from collections import defaultdict


def scalar(spec, v, ops, constant):
    """The form ``spec`` of the joint vectors ``v`` (name → the backend's vector) with the backend
    ``ops``; ``constant(c)`` gives the value of a constant (a number or a name)."""
    kind = spec[0]
    if kind == "dot":
        return ops.shift(ops.dot(v[spec[1]], v[spec[2]]), constant(spec[3]))
    if kind == "half_square":
        return ops.half_square(v[spec[1]], constant(spec[2]))
    if kind == "angle":
        return ops.atan2(ops.dot(v["yi"], v["xj"]), ops.dot(v["xi"], v["xj"]))
    if kind == "screw":
        return ops.combine(ops.dot(v["zi"], v["d"]), -constant("pitch"), scalar(("angle",), v, ops, constant))
    raise ValueError(f"unknown equation form {kind!r}")


def nearest_branch(raw, reference):
    """θ = raw + 2πk with k nearest (reference − raw)/2π: the unwrapped angle of an atan2 in (−π, π]
    on the branch nearest ``reference`` (the run's prediction, :mod:`solver.formulations.branches`;
    reduced.c unwraps with the same formula).  A NaN or infinite angle or reference gives NaN, as
    reduced.c's nearbyint does — a state that blew up is then refused as not finite by the step loops
    (PartitionError), where round() raised ValueError out of simulate (fuzz seed 1031, LSODA)."""
    turns = (reference - raw) / (2.0 * math.pi)
    if not math.isfinite(turns):
        return math.nan
    return raw + 2.0 * math.pi * round(turns)


def atan2_chain(y, x):
    """(θ_y, θ_x, θ_yy, θ_xx, θ_xy) of θ = atan2(y, x) (module docstring); numbers, arrays or symbols."""
    r2 = x * x + y * y
    return x / r2, -y / r2, -2 * x * y / r2**2, 2 * x * y / r2**2, (y * y - x * x) / r2**2


def atan2_quad(chain, yd, xd, yq, xq):
    """Velocity-quadratic part of θ̈ from :func:`atan2_chain` and the rates (ẏ, ẋ) and quadratic parts
    (yq, xq) of y and x."""
    gy, gx, hyy, hxx, hxy = chain
    return gy * yq + gx * xq + hyy * yd * yd + 2 * hxy * xd * yd + hxx * xd * xd


@functools.lru_cache(maxsize=None)
def constants_of(spec) -> tuple:
    """Names of the joint constants the form reads (a spec is a tuple; the few forms there are
    are probed once each)."""
    names = []
    scalar(spec, _ANY, _Probe(), lambda c: names.append(c) or 0.0)
    return tuple(c for c in names if isinstance(c, str))


def uses_angle(spec) -> bool:
    """Whether the form holds the joint angle θ (which the evaluators unwrap)."""
    probe = _Probe()
    scalar(spec, _ANY, probe, lambda c: 0.0)
    return probe.angle


def angle_coefficient(spec, constant) -> float:
    """The coefficient of θ in the form (1 for the angle, −pitch for the screw relation)."""
    return scalar(spec, _ANY, _Probe(), constant)


class Values:
    """The backend of plain numbers: the joint vectors are global numpy 3-vectors, θ = atan2(y, x) in
    (−π, π] (the caller unwraps it) — e.g. the rotational spring-damper's angle (solver/forces.py)."""

    @staticmethod
    def dot(u, w):
        return float(u @ w)

    @staticmethod
    def half_square(u, c):
        return 0.5 * (float(u @ u) - c * c)

    @staticmethod
    def shift(s, c):
        return s - c

    @staticmethod
    def combine(a, f, b):
        return a + f * b

    atan2 = staticmethod(math.atan2)


class _Probe:
    """The backend whose scalars are the coefficient of θ in a form (and which notes an angle)."""

    def __init__(self):
        self.angle = False

    @staticmethod
    def dot(u, w):
        return 0.0

    @staticmethod
    def half_square(u, c):
        return 0.0

    @staticmethod
    def shift(s, c):
        return s

    @staticmethod
    def combine(a, f, b):
        return a + f * b

    def atan2(self, y, x):
        self.angle = True
        return 1.0


_ANY = defaultdict(lambda: None)        # the probe reads no vector
