"""Planar joint forms: the in-plane equations of each joint of a model whose motion is planar.

In a plane with unit normal n (a global axis e_c; e_a, e_b the two global axes in the plane) a body
has three freedoms.  A joint of a planar mechanism built with 3-D equations
(:data:`solver.constraints.joints.EQUATIONS`) also writes its out-of-plane equations (the point
coincidence along n, the axes kept parallel to n); in a closed loop those are dependent, and
their reaction components are not unique (Kim & Yoo (1997) §2, self-stress states).  A planar
form keeps only what the joint prescribes in the plane, in the same declared form as the 3-D
equations (so the per-joint, batched and relative evaluators read them unchanged):

  revolute                 d·e_a = 0, d·e_b = 0                  (the in-plane point coincidence)
  prismatic (axis z in the plane, w the marker axis x or y in the plane, c the one along n)
                           w_i·d = 0                             (no in-plane offset across the axis)
                           no spin about n                       (a pair of marker axes, below)
  fixed                    d·e_a = 0, d·e_b = 0, no spin about n
  planar (axis along n)    —                                     (its three equations are out-of-plane)
  distance                 ½(dᵀd − L²) = 0                       (unchanged)
  revolute_spherical (axis along n)  ½(dᵀd − R²) = 0            (the axial offset is out-of-plane)

"No spin about n" is u_i·w_j = 0 for the pair of marker axes (u, w) with u × w = c, c the marker
axis most nearly along n: under a rotation δφ of body j about n its rate is u·(n × w) = −n·c ≠ 0
(x_i·y_j for c = z, the 3-D ``_NO_SPIN`` row; y_i·z_j for c = x; z_i·x_j for c = y).

The joint types that are revolutes in the plane (spherical; cylindrical and universal with an
axis along n) are compiled as revolutes about n (:mod:`solver.formulations.planar`).  The
out-of-plane motion of each body is removed once per body, not per joint: by the formulation's
tree (relative coordinates) or by an implicit 3-D planar joint of each body to ground (Cartesian).
"""
from __future__ import annotations

import numpy as np

from .joints import CartesianJoint, joint_frame

#: plane name → index c of its normal e_c (the settings' values "xy", "yz", "zx")
PLANES = {"xy": 2, "yz": 0, "zx": 1}
_AXES = ("ex", "ey", "ez")
_NO_SPIN_PAIRS = {0: ("yi", "zj"), 1: ("zi", "xj"), 2: ("xi", "yj")}   # (u, w) with u × w = marker axis c


def in_plane_axes(plane):
    """The names of the global axes (e_a, e_b) spanning ``plane``."""
    c = PLANES[plane]
    return tuple(_AXES[k] for k in range(3) if k != c)


def planar_equations(kind, frame, plane):
    """The planar form (module docstring) of a joint of ``kind`` (a
    :class:`solver.model.joint_kinds.JointKind`, its ``planar`` rows) whose marker axes are the
    columns of ``frame`` (global, at the initial configuration), as equation-form specs."""
    if kind.planar is None:
        raise ValueError(f"no planar form for a {kind.name} joint")
    ea, eb = in_plane_axes(plane)
    normal = np.eye(3)[PLANES[plane]]
    along = int(np.argmax(np.abs(frame.T @ normal)))          # the marker axis most nearly along n
    rows = {"coincide": [("dot", "d", ea, 0.0), ("dot", "d", eb, 0.0)],
            "across": [("dot", "yi" if along == 0 else "xi", "d", 0.0)],   # marker axis in the plane ⊥ the slide
            "no_spin": [("dot", *_NO_SPIN_PAIRS[along], 0.0)]}
    return [spec for row in kind.planar for spec in (rows[row] if isinstance(row, str) else [row])]


class PlanarJoint(CartesianJoint):
    """A joint compiled with its planar form in ``plane`` ("xy", "yz" or "zx"): the marker geometry,
    coordinates (drivers) and reaction frame of :class:`CartesianJoint`, the equations of
    :func:`planar_equations`."""

    def __init__(self, joint, init_i, init_j, plane):
        super().__init__(joint, init_i, init_j)
        self.specs = planar_equations(joint.kind, joint_frame(joint), plane)
        self.n_eq = len(self.specs)
