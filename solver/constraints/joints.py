"""Joint constraints in Cartesian coordinates, conventional form (Haug's basic constraints;
Lee, Lee & Bae (2013), Table 1).

Each joint has marker frames on body i and body j that coincide at the initial configuration:
origin O, axes (x, y, z) with z along the joint axis.  Joint coordinates (rotation about z,
translation along z, planar x/y) are zero there; rotation is right-handed about the axis and
measures body j relative to body i.

The equations are declared once, as data, in the joint kind's entry
(:data:`solver.model.joint_kinds.JOINT_KINDS`, ``equations``) in the forms of
:mod:`solver.constraints.forms`, which interprets them for every evaluator: the per-joint one here
(used for the exact Hessian (Φ_qᵀλ)_q), the batched one (:mod:`solver.constraints.batch`, Φ, Φ_q, ν,
γ), the flexible joints, the relative formulation's cut joints and the generated kernels.
Joint coordinates (``COORDINATES``): rotation θ = atan2(y_iᵀx_j, x_iᵀx_j), translation z_iᵀd, planar
x_iᵀd and y_iᵀd.  Named constants (``CONSTANTS``) come from the joint's fields.
"""
from __future__ import annotations

import functools

import numpy as np

from ..math.rotations import frame_from_axis
from .forms import constants_of, nearest_branch, scalar
from .primitives import BodyState, ScalarOps, body_vector

# The named constants of the equation forms, from the joint's fields (frame C, d0 = origin2 − origin).
CONSTANTS = {
    "length": lambda joint, C, d0: joint.length if joint.length is not None else float(np.linalg.norm(d0)),
    "axial": lambda joint, C, d0: float(C[:, 2] @ d0),
    "radius": lambda joint, C, d0: float(np.linalg.norm(d0)),           # |P_j − O| stays constant
    "pitch": lambda joint, C, d0: joint.pitch / (2.0 * np.pi),          # m per rad
}

COORDINATES = {
    "rotation": ("angle",),
    "translation": ("dot", "zi", "d", 0.0),
    "x": ("dot", "xi", "d", 0.0),
    "y": ("dot", "yi", "d", 0.0),
}

_GLOBAL_AXES = {"ex": 0, "ey": 1, "ez": 2}


def joint_frame(joint):
    """Global joint frame at the initial configuration (columns x, y, z)."""
    if "axis2" in joint.kind.fields:
        # z along the first axis (on body i); x along the second axis (on body j)
        return _frame(tuple(joint.axis), tuple(joint.axis2)).copy()
    return _frame(tuple(joint.axis), None).copy()


@functools.lru_cache(maxsize=1024)
def _frame(axis, axis2):
    """frame_from_axis of one (axis, second axis) — joints of a large model repeat a few."""
    return frame_from_axis(axis, axis2)


class CartesianJoint:
    """Marker geometry and constraint equations of one joint (conventional form)."""

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
        self.specs = joint.kind.equations
        self.s_j = Aj.T @ ((P2 if joint.kind.second_point else O) - rj)
        self.constants = {key: CONSTANTS[key](joint, C, P2 - O) for spec in self.specs for key in constants_of(spec)}
        self.angle = 0.0        # last rotation angle, for continuous unwrapping
        self.n_eq = len(self.specs)

    # ---- public API -----------------------------------------------------------------------------
    def constant(self, key):
        return self.constants[key] if isinstance(key, str) else float(key)

    def vector_slots(self):
        """Named vectors as (side, local vector, is_point): side 0 = body i, 1 = body j."""
        return {"xi": (0, self.C_i[:, 0], False), "yi": (0, self.C_i[:, 1], False),
                "zi": (0, self.C_i[:, 2], False), "xj": (1, self.C_j[:, 0], False),
                "yj": (1, self.C_j[:, 1], False), "zj": (1, self.C_j[:, 2], False),
                "Pi": (0, self.s_i, True), "Pj": (1, self.s_j, True)}

    def equations(self, Si: BodyState, Sj: BodyState, level):
        """The joint's scalar constraint functions (list of Scalar) at the given states."""
        v = self._vectors(Si, Sj, level)
        return [scalar(spec, v, ScalarOps(self), self.constant) for spec in self.specs]

    def coordinate(self, name, Si, Sj, level):
        """Joint coordinate as a Scalar: 'rotation' about z, 'translation' along z, planar 'x'/'y'."""
        return scalar(COORDINATES[name], self._vectors(Si, Sj, level), ScalarOps(self), self.constant)

    def reset(self):
        """Forget the last angle (a new run starts at the model's configuration, angle 0)."""
        self.angle = 0.0

    def unwrap(self, raw):
        """Continuous angle nearest the last one (joint rotations may exceed ±π)."""
        self.angle = nearest_branch(raw, self.angle)
        return self.angle

    def frame(self, Si: BodyState):
        """Global joint-frame axes (columns) attached to body i."""
        return Si.A @ self.C_i

    def origin_j(self, Sj: BodyState):
        """Global position of the joint origin attached to body j (where reactions act)."""
        return Sj.r + Sj.A @ self.s_j

    # ---- helpers --------------------------------------------------------------------------------
    def _vectors(self, Si, Sj, level):
        states = (Si, Sj)
        v = {name: body_vector(states[side], side, local, point, level)
             for name, (side, local, point) in self.vector_slots().items()}
        v["d"] = v["Pj"] - v["Pi"]
        ground = BodyState(None)
        for name, k in _GLOBAL_AXES.items():
            v[name] = body_vector(ground, 0, np.eye(3)[k], False, level)
        return v
