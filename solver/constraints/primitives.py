"""Differentiable building blocks of Cartesian constraints (Haug's basic constraints).

Coordinates of body b are ``q_b = [r_b (3), p_b (4)]`` (CM position and Euler parameters).  A
constraint equation involves at most two bodies, i and j; its local coordinate vector is
``[q_i, q_j]`` (14 entries; a ground side contributes nothing).

Every quantity here carries what the solver needs, all analytic:
  ``val``    the value;
  ``J``      its Jacobian w.r.t. the local coordinates (Φ_q rows);
  ``dot``    its time derivative  J q̇;
  ``quad``   the velocity-quadratic part of its second derivative, d²/dt² = J q̈ + quad
             (so γ = −quad for Φ = 0; Haug eq. 6.3.x);
  ``hess(λ)`` the Hessian contraction ∂²(λᵀ val)/∂q² ((Φ_qᵀλ)_q for implicit integrators).

Vectors: a body-fixed direction ``a = A(p) a'`` and a body point ``P = r + A(p) s'``; because A(p)
is a homogeneous quadratic in p (see ``solver.math.rotations``) ``ä = B(p,a') p̈ + B(ṗ,a') ṗ``.
Scalars: dot products of vectors, and atan2 of two scalars (joint angles).
"""
from __future__ import annotations

import math

import numpy as np

from ..math.rotations import B_matrix, B_hessian, rotation_matrix
from .forms import atan2_chain, atan2_quad, nearest_branch

NLOC = 14          # local coordinates [q_i (7), q_j (7)]


class BodyState:
    """Coordinates and derived quantities of one body (or ground when ``offset`` is None)."""
    __slots__ = ("offset", "r", "p", "A", "rd", "pd")

    def __init__(self, offset, q=None, qd=None):
        self.offset = offset
        if offset is None:
            self.r = np.zeros(3)
            self.p = np.array([1.0, 0.0, 0.0, 0.0])
            self.A = np.eye(3)
            self.rd = np.zeros(3)
            self.pd = np.zeros(4)
        else:
            self.r = q[offset:offset + 3]
            self.p = q[offset + 3:offset + 7]
            self.A = rotation_matrix(self.p)
            if qd is not None:
                self.rd = qd[offset:offset + 3]
                self.pd = qd[offset + 3:offset + 7]
            else:
                self.rd = self.pd = None


class Vec:
    """A 3-vector quantity with derivatives over the 14 local coordinates."""
    __slots__ = ("val", "J", "dot", "quad", "_hess")

    def __init__(self, val, J, dot=None, quad=None, hess=None):
        self.val, self.J, self.dot, self.quad, self._hess = val, J, dot, quad, hess

    def hess(self, lam3):
        return self._hess(lam3) if self._hess is not None else np.zeros((NLOC, NLOC))

    def __sub__(self, other):
        return Vec(self.val - other.val, self.J - other.J,
                   None if self.dot is None else self.dot - other.dot,
                   None if self.quad is None else self.quad - other.quad,
                   lambda lam, a=self, b=other: a.hess(lam) - b.hess(lam))


def body_vector(state: BodyState, side: int, local, point: bool, level: int) -> Vec:
    """``A a'`` (direction) or ``r + A s'`` (point) of a body on local side 0 (i) or 1 (j).

    level: 0 value and Jacobian; 1 also ``dot``; 2 also ``quad`` (needs velocities)."""
    val = state.A @ local
    J = np.zeros((3, NLOC))
    if state.offset is None:
        return Vec(val, J, np.zeros(3) if level >= 1 else None, np.zeros(3) if level >= 2 else None, None)
    c = 7 * side
    if point:
        val = val + state.r
        J[:, c:c + 3] = np.eye(3)
    B = B_matrix(state.p, local)
    J[:, c + 3:c + 7] = B
    dot = quad = None
    if level >= 1:
        dot = B @ state.pd + (state.rd if point else 0.0)
    if level >= 2:
        quad = B_matrix(state.pd, local) @ state.pd

    def hess(lam, c=c, local=local):
        H = np.zeros((NLOC, NLOC))
        H[c + 3:c + 7, c + 3:c + 7] = B_hessian(local, lam)
        return H
    return Vec(val, J, dot, quad, hess)


class Scalar:
    """A scalar quantity with derivatives over the 14 local coordinates."""
    __slots__ = ("val", "grad", "dot", "quad", "_hess")

    def __init__(self, val, grad, dot=None, quad=None, hess=None):
        self.val, self.grad, self.dot, self.quad, self._hess = val, grad, dot, quad, hess

    def hess(self, lam):
        return self._hess(lam)


def dot(u: Vec, w: Vec) -> Scalar:
    """s = uᵀw (dot-1 when both are directions, dot-2 when w is a point difference)."""
    val = float(u.val @ w.val)
    grad = w.val @ u.J + u.val @ w.J
    d = quad = None
    if u.dot is not None:
        d = float(u.dot @ w.val + u.val @ w.dot)
    if u.quad is not None:
        quad = float(w.val @ u.quad + u.val @ w.quad + 2.0 * (u.dot @ w.dot))

    def hess(lam):
        C = lam * (u.J.T @ w.J)
        return C + C.T + u.hess(lam * w.val) + w.hess(lam * u.val)
    return Scalar(val, grad, d, quad, hess)


def component(u: Vec, k: int) -> Scalar:
    """s = u[k] (a component of a vector along a global axis)."""
    e = np.zeros(3)
    e[k] = 1.0
    return Scalar(float(u.val[k]), u.J[k].copy(), None if u.dot is None else float(u.dot[k]),
                  None if u.quad is None else float(u.quad[k]), lambda lam: u.hess(lam * e))


def atan2(y: Scalar, x: Scalar, reference: float) -> Scalar:
    """θ = atan2(y, x), unwrapped to the branch nearest ``reference`` (continuous joint angles)."""
    raw = math.atan2(y.val, x.val)
    val = nearest_branch(raw, reference)
    chain = gy, gx, hyy, hxx, hxy = atan2_chain(y.val, x.val)
    grad = gy * y.grad + gx * x.grad
    d = quad = None
    if y.dot is not None:
        d = gy * y.dot + gx * x.dot
    if y.quad is not None:
        quad = atan2_quad(chain, y.dot, x.dot, y.quad, x.quad)

    def hess(lam):
        H = y.hess(lam * gy) + x.hess(lam * gx)
        H += lam * (hyy * np.outer(y.grad, y.grad) + hxx * np.outer(x.grad, x.grad)
                    + hxy * (np.outer(y.grad, x.grad) + np.outer(x.grad, y.grad)))
        return H
    return Scalar(val, grad, d, quad, hess)


def linear(terms, constant=0.0) -> Scalar:
    """s = constant + Σ c_k s_k."""
    val = constant + sum(c * s.val for c, s in terms)
    grad = sum(c * s.grad for c, s in terms)
    d = None if terms[0][1].dot is None else sum(c * s.dot for c, s in terms)
    quad = None if terms[0][1].quad is None else sum(c * s.quad for c, s in terms)
    return Scalar(val, grad, d, quad, lambda lam: sum(s.hess(c * lam) for c, s in terms))


def half_square(u: Vec, constant=0.0) -> Scalar:
    """s = ½ (uᵀu − constant²) (distance constraints)."""
    s = dot(u, u)
    return Scalar(0.5 * (s.val - constant * constant), 0.5 * s.grad,
                  None if s.dot is None else 0.5 * s.dot, None if s.quad is None else 0.5 * s.quad,
                  lambda lam: s.hess(0.5 * lam))


class ScalarOps:
    """The operations of :func:`solver.constraints.forms.scalar` on Scalars of one joint (value,
    Jacobian, rates, Hessian); ``holder.angle`` is the joint's last angle, followed by atan2
    (continuous unwrapping)."""

    def __init__(self, holder):
        self.holder = holder

    dot = staticmethod(dot)
    half_square = staticmethod(half_square)

    @staticmethod
    def shift(s, c):
        return s if c == 0.0 else linear([(1.0, s)], -c)

    @staticmethod
    def combine(a, f, b):
        return linear([(1.0, a), (f, b)])

    def atan2(self, y, x):
        theta = atan2(y, x, self.holder.angle)
        self.holder.angle = theta.val
        return theta
