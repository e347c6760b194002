"""Joint constraints in Cartesian coordinates, conventional form (Haug's basic constraints;
seed paper 2, Table 1): revolute = spherical + 2 dot-1, prismatic = 3 dot-1 + 2 dot-2,
cylindrical = 2 dot-1 + 2 dot-2, universal = spherical + dot-1, planar = 2 dot-1 + dot-2,
screw = cylindrical + screw relation, fixed = spherical + 3 dot-1; massless links:
distance (½(dᵀd − L²) = 0) and revolute–spherical (axial offset and radius fixed).

Each joint has marker frames on body i and body j that coincide at the initial configuration:
origin O, axes (x, y, z) with z along the joint axis.  Joint coordinates (rotation about z,
translation along z, planar x/y) are zero there; rotation is right-handed about the axis and
measures body j relative to body i.
"""
from __future__ import annotations

import numpy as np

from ..math.rotations import frame_from_axis
from .primitives import BodyState, body_vector, dot, component, atan2, linear, half_square

EQUATION_COUNT = {"fixed": 6, "revolute": 5, "prismatic": 5, "cylindrical": 4, "spherical": 3,
                  "universal": 4, "planar": 3, "screw": 5, "distance": 1, "revolute_spherical": 2}


def joint_frame(joint):
    """Global joint frame at the initial configuration (columns x, y, z)."""
    if joint.type == "universal":
        # z along the first axis (on body i); x along the second axis (on body j)
        return frame_from_axis(joint.axis, joint.axis2)
    return frame_from_axis(joint.axis)


class CartesianJoint:
    """Constraint equations of one joint between two bodies (conventional form)."""

    def __init__(self, joint, init_i, init_j):
        """init_i, init_j: (r0, A0) of body i and j at the initial configuration."""
        self.name = joint.name
        self.type = joint.type
        self.pitch = joint.pitch / (2.0 * np.pi)            # m per rad
        C = joint_frame(joint)
        O = np.asarray(joint.origin, dtype=float)
        (ri, Ai), (rj, Aj) = init_i, init_j
        self.C_i = Ai.T @ C                                  # marker axes in body frames
        self.C_j = Aj.T @ C
        self.s_i = Ai.T @ (O - ri)
        P2 = np.asarray(joint.origin2, dtype=float)
        self.s_j = Aj.T @ ((P2 if joint.type in ("distance", "revolute_spherical") else O) - rj)
        d0 = P2 - O
        if joint.type == "distance":
            self.length = joint.length if joint.length is not None else float(np.linalg.norm(d0))
        elif joint.type == "revolute_spherical":
            self.axial = float(C[:, 2] @ d0)
            self.radius2 = float(d0 @ d0)
        self.angle = 0.0        # last rotation angle, for continuous unwrapping
        self.n_eq = EQUATION_COUNT[joint.type]

    def _vectors(self, Si: BodyState, Sj: BodyState, level):
        ax = lambda S, side, M, k: body_vector(S, side, M[:, k], False, level)  # noqa: E731
        v = {"xi": ax(Si, 0, self.C_i, 0), "yi": ax(Si, 0, self.C_i, 1), "zi": ax(Si, 0, self.C_i, 2),
             "xj": ax(Sj, 1, self.C_j, 0), "yj": ax(Sj, 1, self.C_j, 1), "zj": ax(Sj, 1, self.C_j, 2)}
        v["d"] = body_vector(Sj, 1, self.s_j, True, level) - body_vector(Si, 0, self.s_i, True, level)
        return v

    def equations(self, Si, Sj, level):
        """The joint's scalar constraint functions (list of Scalar) at the given states."""
        v = self._vectors(Si, Sj, level)
        d, t = v["d"], self.type
        sph = [component(d, k) for k in range(3)]
        par = [dot(v["xi"], v["zj"]), dot(v["yi"], v["zj"])]          # z_j ∥ z_i
        onaxis = [dot(v["xi"], d), dot(v["yi"], d)]                    # P_j on the z_i axis line
        if t == "spherical":
            return sph
        if t == "revolute":
            return sph + par
        if t == "fixed":
            return sph + par + [dot(v["xi"], v["yj"])]
        if t == "universal":
            return sph + [dot(v["zi"], v["xj"])]
        if t == "cylindrical":
            return par + onaxis
        if t == "prismatic":
            return par + onaxis + [dot(v["xi"], v["yj"])]
        if t == "planar":
            return par + [dot(v["zi"], d)]
        if t == "screw":
            theta = self._rotation(v)
            return par + onaxis + [linear([(1.0, dot(v["zi"], d)), (-self.pitch, theta)])]
        if t == "distance":
            return [half_square(d, self.length)]
        if t == "revolute_spherical":
            return [linear([(1.0, dot(v["zi"], d))], -self.axial), half_square(d, np.sqrt(self.radius2))]
        raise ValueError(t)

    def _rotation(self, v):
        theta = atan2(dot(v["yi"], v["xj"]), dot(v["xi"], v["xj"]), self.angle)
        self.angle = theta.val
        return theta

    def coordinate(self, name, Si, Sj, level):
        """Joint coordinate as a Scalar: 'rotation' about z, 'translation' along z, planar 'x'/'y'."""
        v = self._vectors(Si, Sj, level)
        if name == "rotation":
            return self._rotation(v)
        axis = {"translation": "zi", "x": "xi", "y": "yi"}[name]
        return dot(v[axis], v["d"])

    def frame(self, Si: BodyState):
        """Global joint-frame axes (columns) attached to body i."""
        return Si.A @ self.C_i

    def origin_j(self, Sj: BodyState):
        """Global position of the joint origin attached to body j (where reactions act)."""
        return Sj.r + Sj.A @ self.s_j
