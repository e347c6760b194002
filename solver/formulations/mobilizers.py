"""Relative kinematics of one tree joint (mobilizer) in its own joint coordinates.

A mobilizer places the *outboard* marker frame (on the child body) relative to the *inboard*
marker frame (on the parent body): rotation ``R(x)`` (outboard axes → inboard axes) and the
outboard origin ``d(x)`` in inboard axes.  Its rates, in inboard axes, are

    ω_rel = H(x) ẋ,   ḋ = Dq(x) ẋ,

and the velocity-quadratic parts of their time derivatives (ẍ = 0) are ``a_w = Ḣ ẋ`` and
``a_d = Ḋq ẋ``.  These are the joint-level pieces of seed paper 1 eqs. (1)–(4): the formulation
turns them into ``B_j`` (eq. 6) and ``D_j = Ḃ_j q̇_j`` (eq. 8).

Coordinates per model joint type (identical to :meth:`CartesianJoint.coordinate` so drivers mean
the same in both formulations; all zero / identity at the model's initial configuration):

    fixed (none); revolute θ; prismatic s; cylindrical (θ, s); screw θ with s = pitch θ / 2π;
    universal (θ1 about z_i, θ2 about the rotated second axis x_j): R = R_z(θ1) R_x(θ2);
    planar (x, y, θ); spherical p (4 Euler parameters); free (x, y, z, p).

Euler parameters are used normalized, ``R = A(p/|p|)``, so that the pose depends on the
direction of p only and ``ω = 2 G(p) ṗ / |p|²`` holds exactly for any p ≠ 0 (no gimbal lock;
the normalization pᵀp = 1 is a constraint of the formulation, as in the Cartesian one).

An *inverted* mobilizer (the model joint's body_i is the child) keeps the model joint's
coordinates and uses the inverse transform: R' = Rᵀ, d' = −Rᵀ d, H' = −Rᵀ H,
Dq' = −Rᵀ (Dq + d̃ H), a_w' = −Rᵀ a_w, a_d' = Rᵀ (2 ω × ḋ + ω × (d × ω) − a_d − d × a_w).
"""
from __future__ import annotations

import numpy as np

from ..math.rotations import G_matrix, rotation_matrix, skew

EX, EY, EZ = np.eye(3)
NCOORD = {"fixed": 0, "revolute": 1, "prismatic": 1, "cylindrical": 2, "screw": 1, "universal": 2,
          "planar": 3, "spherical": 4, "free": 7}
EULER_OFFSET = {"spherical": 0, "free": 3}      # where p starts within the joint's coordinates


def _cross(a, b):
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]])


def rot_z(t):
    c, s = np.cos(t), np.sin(t)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def rot_x(t):
    c, s = np.cos(t), np.sin(t)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


class Mobilizer:
    """Joint-space kinematics of one tree joint (see module docstring)."""

    def __init__(self, kind, pitch=0.0, inverted=False):
        self.kind = kind
        self.n = NCOORD[kind]
        self.pitch = pitch                  # m per rad (screw)
        self.inverted = inverted
        self.euler = EULER_OFFSET.get(kind)

    def initial(self):
        """Coordinates at the initial configuration (identity)."""
        x = np.zeros(self.n)
        if self.euler is not None:
            x[self.euler] = 1.0
        return x

    def relative(self, x, xd=None):
        """(R, d, H, Dq, a_w, a_d) in inboard-marker axes; a_w, a_d are None without ẋ."""
        out = self._model_sense(x, xd)
        return self._invert(*out, xd) if self.inverted else out

    # ---- helpers --------------------------------------------------------------------------------
    def _model_sense(self, x, xd):
        """Body_j's marker relative to body_i's marker, as the model joint defines it."""
        k, n = self.kind, self.n
        H = np.zeros((3, n))
        Dq = np.zeros((3, n))
        d = np.zeros(3)
        R = np.eye(3)
        aw = np.zeros(3) if xd is not None else None
        ad = np.zeros(3) if xd is not None else None
        if k in ("revolute", "cylindrical", "screw"):
            R = rot_z(x[0])
            H[:, 0] = EZ
            if k == "cylindrical":
                d = x[1] * EZ
                Dq[:, 1] = EZ
            elif k == "screw":
                d = self.pitch * x[0] * EZ
                Dq[:, 0] = self.pitch * EZ
        elif k == "prismatic":
            d = x[0] * EZ
            Dq[:, 0] = EZ
        elif k == "planar":
            R = rot_z(x[2])
            d = np.array([x[0], x[1], 0.0])
            Dq[:, 0], Dq[:, 1] = EX, EY
            H[:, 2] = EZ
        elif k == "universal":
            Rz = rot_z(x[0])
            R = Rz @ rot_x(x[1])
            H[:, 0] = EZ
            H[:, 1] = Rz[:, 0]
            if xd is not None:
                aw = xd[0] * xd[1] * Rz[:, 1]          # d/dt(R_z e_x) = θ̇1 e_z × R_z e_x
        elif k in ("spherical", "free"):
            o = self.euler
            p = x[o:o + 4]
            nn = float(p @ p)
            R = rotation_matrix(p / np.sqrt(nn))
            H[:, o:o + 4] = 2.0 * G_matrix(p) / nn
            if k == "free":
                d = x[:3].copy()
                Dq[:, :3] = np.eye(3)
            if xd is not None:
                pd = xd[o:o + 4]
                aw = -2.0 * float(p @ pd) / nn * (H[:, o:o + 4] @ pd)
        return R, d, H, Dq, aw, ad

    @staticmethod
    def _invert(R, d, H, Dq, aw, ad, xd):
        Rt = R.T
        H2 = -Rt @ H
        Dq2 = -Rt @ (Dq + skew(d) @ H)
        d2 = -Rt @ d
        if xd is None:
            return Rt, d2, H2, Dq2, None, None
        w = H @ xd
        dd = Dq @ xd
        aw2 = -Rt @ aw
        ad2 = Rt @ (2.0 * _cross(w, dd) + _cross(w, _cross(d, w)) - ad - _cross(d, aw))
        return Rt, d2, H2, Dq2, aw2, ad2
