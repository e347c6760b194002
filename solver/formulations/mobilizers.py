"""Relative kinematics of one tree joint (mobilizer) in its own joint coordinates.

A mobilizer places the *outboard* marker frame (on the child body) relative to the *inboard*
marker frame (on the parent body): rotation ``R(x)`` (outboard axes → inboard axes) and the
outboard origin ``d(x)`` in inboard axes.  Its rates, in inboard axes, are

    ω_rel = H(x) ẋ,   ḋ = Dq(x) ẋ,

and the velocity-quadratic parts of their time derivatives (ẍ = 0) are ``a_w = Ḣ ẋ`` and
``a_d = Ḋq ẋ``.  These are the joint-level pieces of Kim & You (1997) eqs. (1)–(4): the formulation
turns them into ``B_j`` (eq. 6) and ``D_j = Ḃ_j q̇_j`` (eq. 8).

Coordinates per model joint type (identical to :meth:`CartesianJoint.coordinate` so drivers mean
the same in both formulations; all zero / identity at the model's initial configuration):

    fixed (none); revolute θ; prismatic s; cylindrical (θ, s); screw θ with s = pitch θ / 2π;
    universal (θ1 about z_i, θ2 about the rotated second axis x_j): R = R_z(θ1) R_x(θ2);
    planar (x, y, θ); spherical p (4 Euler parameters); free (x, y, z, p).

Each kind's kinematics is one function registered in ``MOBILIZERS`` with ``@mobilizer(kind, n,
euler)``; a joint kind (:data:`solver.model.joint_kinds.JOINT_KINDS`) without one is always a cut
joint of the relative formulation (:mod:`solver.formulations.topology`).

Euler parameters are used normalized, ``R = A(p/|p|)``, so that the pose depends on the
direction of p only and ``ω = 2 G(p) ṗ / |p|²`` holds exactly for any p ≠ 0 (no gimbal lock;
the normalization pᵀp = 1 is a constraint of the formulation, as in the Cartesian one).

The kinematics are written once, for numbers and for symbols: :meth:`Mobilizer.kinematics` takes an
``ops`` object with the few operations whose form differs — :class:`Floats` (numpy, one state or
stacked states; the numeric recursion of :mod:`solver.formulations.relative`) or
:class:`solver.codegen.tree.Symbols` (object arrays of polynomials with every intermediate bound to
a name; the generated tree map).  With ``quaternion=True`` it also gives the Euler parameters p_R of R
(the generated tree map composes body orientations as quaternions).

An *inverted* mobilizer (the model joint's body_i is the child) keeps the model joint's
coordinates and uses the inverse transform: R' = Rᵀ, d' = −Rᵀ d, H' = −Rᵀ H,
Dq' = −Rᵀ (Dq + d̃ H), a_w' = −Rᵀ a_w, a_d' = Rᵀ (2 ω × ḋ + ω × (d × ω) − a_d − d × a_w).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..math.rotations import G_matrices, cross, matvec, quat_multiply, rotation_matrices, skew



@dataclass(frozen=True)
class MobilizerKind:
    """A registered mobilizer: n coordinates, Euler parameters from coordinate ``euler`` (or None),
    ``pose(m, x, xd, ops)`` filling the :class:`Pose` ``m`` (identity on entry) in the model's sense."""
    n: int
    euler: int | None
    pose: Callable


MOBILIZERS: dict[str, MobilizerKind] = {}


def mobilizer(kind, n, euler=None):
    """Register the kinematics of joint kind ``kind`` (a function of (Pose, x, ẋ, ops))."""
    def register(fn):
        MOBILIZERS[kind] = MobilizerKind(n, euler, fn)
        return fn
    return register


class Floats:
    """The operations of :meth:`Mobilizer.kinematics` on numbers: numpy arrays with leading axes
    ``lead`` (one state: ``()``; stacked states: their shape)."""

    def __init__(self, lead=()):
        self.lead = tuple(lead)

    def zeros(self, *shape):
        return np.zeros(self.lead + shape)

    cos, sin = staticmethod(np.cos), staticmethod(np.sin)

    @staticmethod
    def rsqrt(v):
        return 1.0 / np.sqrt(v)

    @staticmethod
    def bind(a):
        """Intermediate results need no names on the numeric path."""
        return a

    @staticmethod
    def number(v):
        return v


def rot_z(t, ops=None):
    """R_z(t) of a scalar or stacked angles (…) → (…, 3, 3)."""
    ops = ops or Floats(np.shape(t))
    return _rotation(ops, ops.cos(t), ops.sin(t), (0, 1))


def rot_x(t, ops=None):
    """R_x(t) of a scalar or stacked angles (…) → (…, 3, 3)."""
    ops = ops or Floats(np.shape(t))
    return _rotation(ops, ops.cos(t), ops.sin(t), (1, 2))


def _rotation(ops, c, s, plane):
    """The rotation by the angle of (cos, sin) = (c, s) in the plane of axes ``plane`` (i, j)."""
    i, j = plane
    R = ops.zeros(3, 3)
    for k in range(3):
        R[..., k, k] = 1
    R[..., i, i], R[..., i, j], R[..., j, i], R[..., j, j] = c, -s, s, c
    return R


def _half_angle(ops, t, axis):
    """Euler parameters of the rotation by t about coordinate axis ``axis``."""
    p = ops.zeros(4)
    p[..., 0], p[..., 1 + axis] = ops.cos(t / 2), ops.sin(t / 2)
    return p


class Pose:
    """The pieces of :meth:`Mobilizer.kinematics` a kind's function fills (module docstring): R, d,
    H, Dq, a_w, a_d (None without ẋ) and p_R (None unless asked for); ``pitch`` in m per rad."""

    def __init__(self, n, xd, ops, quaternion, pitch):
        self.R = _rotation(ops, 1, 0, (0, 1))       # identity
        self.d, self.H, self.Dq = ops.zeros(3), ops.zeros(3, n), ops.zeros(3, n)
        self.aw = ops.zeros(3) if xd is not None else None
        self.ad = ops.zeros(3) if xd is not None else None
        self.pR = None
        if quaternion:
            self.pR = ops.zeros(4)
            self.pR[..., 0] = 1
        self.pitch = pitch

    def turn_z(self, th, column, ops):
        """Rotation by θ (coordinate ``column``) about the marker z axis."""
        self.R = rot_z(th, ops)
        self.H[..., 2, column] = 1
        if self.pR is not None:
            self.pR = _half_angle(ops, th, 2)

    def slide(self, axis, value, column, factor=1):
        """Translation ``factor`` · x_column along marker axis ``axis``."""
        self.d[..., axis] = factor * value
        self.Dq[..., axis, column] = factor


@mobilizer("fixed", 0)
def _fixed(m, x, xd, ops):
    """No relative motion."""


@mobilizer("revolute", 1)
def _revolute(m, x, xd, ops):
    m.turn_z(x[..., 0], 0, ops)


@mobilizer("prismatic", 1)
def _prismatic(m, x, xd, ops):
    m.slide(2, x[..., 0], 0)


@mobilizer("cylindrical", 2)
def _cylindrical(m, x, xd, ops):
    m.turn_z(x[..., 0], 0, ops)
    m.slide(2, x[..., 1], 1)


@mobilizer("screw", 1)
def _screw(m, x, xd, ops):
    m.turn_z(x[..., 0], 0, ops)
    m.slide(2, x[..., 0], 0, ops.number(m.pitch))


@mobilizer("planar", 3)
def _planar(m, x, xd, ops):
    m.turn_z(x[..., 2], 2, ops)
    m.slide(0, x[..., 0], 0)
    m.slide(1, x[..., 1], 1)


@mobilizer("universal", 2)
def _universal(m, x, xd, ops):
    Rz = rot_z(x[..., 0], ops)
    m.R = ops.bind(Rz @ rot_x(x[..., 1], ops))
    m.H[..., 2, 0] = 1
    m.H[..., :, 1] = Rz[..., :, 0]
    if xd is not None:
        m.aw = np.expand_dims(xd[..., 0] * xd[..., 1], -1) * Rz[..., :, 1]   # d/dt(R_z e_x) = θ̇1 e_z × R_z e_x
    if m.pR is not None:
        m.pR = ops.bind(quat_multiply(_half_angle(ops, x[..., 0], 2).T, _half_angle(ops, x[..., 1], 0).T).T)


def _euler_parameters(m, x, xd, ops, o):
    """The rotation of (normalized) Euler parameters p = x[o:o+4] (module docstring)."""
    p = x[..., o:o + 4]
    nn = ops.bind(np.sum(p * p, axis=-1))
    unit = ops.bind(p * np.expand_dims(ops.rsqrt(nn), -1))
    m.R = ops.bind(rotation_matrices(unit))
    m.H[..., :, o:o + 4] = ops.bind(2 * G_matrices(p) / np.expand_dims(nn, (-1, -2)))
    if m.pR is not None:
        m.pR = unit
    if xd is not None:
        pd = xd[..., o:o + 4]
        m.aw = ops.bind(np.expand_dims(-2 * np.sum(p * pd, axis=-1) / nn, -1) * matvec(m.H[..., :, o:o + 4], pd))


@mobilizer("spherical", 4, euler=0)
def _spherical(m, x, xd, ops):
    _euler_parameters(m, x, xd, ops, 0)


@mobilizer("free", 7, euler=3)
def _free(m, x, xd, ops):
    """A floating base's 6-DOF joint to ground (not a model joint kind)."""
    _euler_parameters(m, x, xd, ops, 3)
    m.d = x[..., :3].copy()
    m.Dq[..., 0, 0] = m.Dq[..., 1, 1] = m.Dq[..., 2, 2] = 1


class Mobilizer:
    """Joint-space kinematics of one tree joint (see module docstring)."""

    def __init__(self, kind, pitch=0.0, inverted=False):
        self.kind = kind
        self.spec = MOBILIZERS[kind]
        self.n = self.spec.n
        self.pitch = pitch                  # m per rad (screw)
        self.inverted = inverted
        self.euler = self.spec.euler

    def initial(self):
        """Coordinates at the initial configuration (identity)."""
        x = np.zeros(self.n)
        if self.euler is not None:
            x[self.euler] = 1.0
        return x

    def relative(self, x, xd=None):
        """(R, d, H, Dq, a_w, a_d) in inboard-marker axes of numbers, one state x (n,) or stacked
        states (…, n); a_w, a_d are None without ẋ."""
        return self.kinematics(x, xd, Floats(np.shape(x)[:-1]))[:6]

    def kinematics(self, x, xd, ops, quaternion=False):
        """(R, d, H, Dq, a_w, a_d, p_R) with the operations ``ops`` (:class:`Floats` or symbols);
        p_R (Euler parameters of R) only with ``quaternion=True``, else None."""
        m = Pose(self.n, xd, ops, quaternion, self.pitch)
        self.spec.pose(m, x, xd, ops)          # body_j's marker relative to body_i's, as the model joint defines it
        out = (m.R, m.d, m.H, m.Dq, m.aw, m.ad, m.pR)
        if not self.inverted:
            return out
        pR = out[6]
        return (*self._invert(*out[:6], xd),
                None if pR is None else pR * np.array([1, -1, -1, -1]))

    @staticmethod
    def _invert(R, d, H, Dq, aw, ad, xd):
        """The inverse transform (module docstring) of (stacked) numbers or of sympy object arrays."""
        Rt = np.swapaxes(R, -1, -2)
        H2 = -(Rt @ H)
        Dq2 = -(Rt @ (Dq + skew(d) @ H))
        d2 = -matvec(Rt, d)
        if xd is None:
            return Rt, d2, H2, Dq2, None, None
        w = matvec(H, xd)
        dd = matvec(Dq, xd)
        aw2 = -matvec(Rt, aw)
        ad2 = matvec(Rt, 2.0 * cross(w, dd) + cross(w, cross(d, w)) - ad - cross(d, aw))
        return Rt, d2, H2, Dq2, aw2, ad2
