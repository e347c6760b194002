"""The joint kinds (a joint's ``type``): one :class:`JointKind` entry per kind holds what the kind is.

* ``fields``: the optional Joint fields it uses (the GUI shows only these; the file keeps all);
* ``coordinates``: the joint coordinates a driver can prescribe (first = the default), measured as
  :data:`solver.constraints.joints.COORDINATES` defines them;
* ``equations``: its rows of Φ in the Cartesian formulation, as data in the equation forms of
  :mod:`solver.constraints.forms` (Haug's basic constraints; Lee, Lee & Bae (2013), Table 1):
  revolute = spherical + 2 dot-1, prismatic = 3 dot-1 + 2 dot-2, cylindrical = 2 dot-1 + 2 dot-2,
  universal = spherical + dot-1, planar = 2 dot-1 + dot-2, screw = cylindrical + screw relation,
  fixed = spherical + 3 dot-1; massless links: distance (½(dᵀd − L²) = 0) and revolute–spherical
  (axial offset and radius fixed); the joint primitive inplane (the point of body_j stays in the x–y
  plane of body_i's marker: z_iᵀd = 0, 5 degrees of freedom, no mobilizer);
* ``parametric``: its parametric form (Lee, Lee & Bae (2013) §3, :mod:`solver.constraints.parametric`),
  None when it keeps its conventional rows there;
* ``label``, ``glyph`` (the viewport's parts, drawn in this order: barrel, slide, helix, ball, cross,
  cube, disc, link, ball_i), ``icon`` (resources/icons/<icon>.svg) and ``color`` (RGB, None:
  the viewport's joint colour) for the GUI;
* ``check``: cross-field checks of a joint of this kind → (field, message) or None;
* the planar model option (:mod:`solver.formulations.planar`): ``planar_axis`` says how the kind's
  axis must lie for planar motion ("along" the plane's normal, "across" it (in the plane),
  "one_along" (``axis`` or ``axis2``), "" any); ``planar`` its rows in a planar model
  (:func:`solver.constraints.planar.planar_equations`: "coincide" the two in-plane components of
  P_j − P_i, "across" no in-plane offset across the axis, "no_spin" no rotation about the normal,
  or an equation form), None when the kind has no planar form; ``planar_revolute``: the kind is a
  revolute about the normal in a planar model.

A kind's relative kinematics (its mobilizer) is registered beside the others in
:mod:`solver.formulations.mobilizers` (``@mobilizer(kind, ncoord)``); a kind without one is always
a cut (loop-closure) joint of the relative formulation, closed by its equations.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

_X, _Y, _Z = 0, 1, 2

# Limits of a joint's coordinate (from URDF <limit>): lower and upper are enforced as stops (their
# law: the STOP_FIELDS, solver.math.impact), effort and velocity are kept as data.
LIMIT_FIELDS = ("lower_limit", "upper_limit", "effort_limit", "velocity_limit")
STOP_FIELDS = ("stops", "limit_coordinate", "stop_stiffness", "stop_exponent", "stop_damping", "stop_depth",
               "stop_push_only")


@dataclass(frozen=True)
class ParametricForm:
    """Parametric form of one joint kind (:mod:`solver.constraints.parametric`).

    coordinates: names of the joint's α (in order); the driver coordinates of the model map here.
    trn: (row axis, α index, factor) entries of T in d'' = T α ('pitch' = the screw's m/rad).
    rot: (axis, α index) of the factors of H'' = R_axis(α) ⋯, left to right.
    trn_kind, rot_kind: the paper's names (Table 3)."""
    coordinates: tuple
    trn: tuple
    rot: tuple
    trn_kind: str
    rot_kind: str


@dataclass(frozen=True)
class JointKind:
    """What a joint kind is (module docstring)."""
    name: str
    label: str
    equations: tuple
    fields: tuple = ()
    coordinates: tuple = ()
    parametric: ParametricForm | None = None
    glyph: tuple = ()
    icon: str = "joint"
    color: tuple | None = None
    check: Callable | None = None
    planar: tuple | None = None
    planar_axis: str = ""
    planar_revolute: bool = False

    @property
    def second_point(self) -> bool:
        """Body_j's side sits at ``origin2`` (massless links), not at ``origin``."""
        return "origin2" in self.fields


def _perpendicular_axes(joint):
    if abs(float(np.dot(joint.axis, joint.axis2))) > 1e-6:
        return "axis2", f"must be perpendicular to axis for a {joint.type} joint"
    return None


def _two_points(joint):
    if joint.length is None and np.linalg.norm(np.subtract(joint.origin2, joint.origin)) < 1e-9:
        return "origin2", "a distance link needs two distinct points (or a length)"
    return None


# the rows shared by several kinds (named joint vectors: solver.constraints.forms)
_SPH = (("dot", "d", "ex", 0.0), ("dot", "d", "ey", 0.0), ("dot", "d", "ez", 0.0))   # P_j = P_i
_PAR = (("dot", "xi", "zj", 0.0), ("dot", "yi", "zj", 0.0))           # z_j ∥ z_i
_ON_AXIS = (("dot", "xi", "d", 0.0), ("dot", "yi", "d", 0.0))         # P_j on the z_i axis line
_NO_SPIN = (("dot", "xi", "yj", 0.0),)                                 # no rotation about z
_LIMITED = ("axis",) + LIMIT_FIELDS + STOP_FIELDS

JOINT_KINDS = {k.name: k for k in (
    JointKind("fixed", "fixed", _SPH + _PAR + _NO_SPIN,
              parametric=ParametricForm((), (), (), "trn0", "rot0"),
              glyph=("cube",), icon="joint_fixed", color=(0.45, 0.50, 0.55), planar=("coincide", "no_spin")),
    JointKind("revolute", "revolute", _SPH + _PAR, _LIMITED + ("armature",), ("rotation",),
              ParametricForm(("rotation",), (), ((_Z, 0),), "trn0", "rot1"),
              glyph=("barrel",), icon="joint_revolute", planar=("coincide",), planar_axis="along"),
    JointKind("prismatic", "prismatic", _PAR + _ON_AXIS + _NO_SPIN, _LIMITED + ("armature",), ("translation",),
              ParametricForm(("translation",), ((_Z, 0, 1.0),), (), "trn1", "rot0"),
              glyph=("slide",), icon="joint_prismatic", color=(0.95, 0.55, 0.10), planar=("across", "no_spin"),
              planar_axis="across"),
    JointKind("cylindrical", "cylindrical", _PAR + _ON_AXIS, _LIMITED, ("rotation", "translation"),
              ParametricForm(("translation", "rotation"), ((_Z, 0, 1.0),), ((_Z, 1),), "trn1", "rot1"),
              glyph=("barrel", "slide"), icon="joint_revolute", planar_axis="along", planar_revolute=True),
    JointKind("spherical", "spherical", _SPH,
              parametric=ParametricForm(("angle_z", "angle_y", "angle_x"), (), ((_Z, 0), (_Y, 1), (_X, 2)),
                                        "trn0", "rot3"),
              glyph=("ball",), icon="joint_spherical", color=(0.85, 0.25, 0.25), planar_revolute=True),
    JointKind("universal", "universal", _SPH + (("dot", "zi", "xj", 0.0),), ("axis", "axis2"),
              parametric=ParametricForm(("angle1", "angle2"), (), ((_Z, 0), (_X, 1)), "trn0", "rot2"),
              glyph=("cross",), check=_perpendicular_axes, planar_axis="one_along", planar_revolute=True),
    JointKind("planar", "planar", _PAR + (("dot", "zi", "d", 0.0),), ("axis",), ("x", "y", "rotation"),
              ParametricForm(("x", "y", "rotation"), ((_X, 0, 1.0), (_Y, 1, 1.0)), ((_Z, 2),), "trn2", "rot1"),
              glyph=("disc",), planar=(), planar_axis="along"),
    JointKind("screw", "screw", _PAR + _ON_AXIS + (("screw",),), ("axis", "pitch"), ("rotation",),
              ParametricForm(("rotation",), ((_Z, 0, "pitch"),), ((_Z, 0),), "trn1", "rot1"),
              glyph=("barrel", "helix"), icon="joint_revolute"),
    JointKind("distance", "distance", (("half_square", "d", "length"),), ("origin2", "length"),
              glyph=("link", "ball_i"), color=(0.55, 0.55, 0.60), check=_two_points,
              planar=(("half_square", "d", "length"),)),
    JointKind("revolute_spherical", "revolute-spherical", (("dot", "zi", "d", "axial"), ("half_square", "d", "radius")),
              ("axis", "origin2"), glyph=("barrel", "link"), planar=(("half_square", "d", "radius"),),
              planar_axis="along"),
    JointKind("inplane", "in-plane", (("dot", "zi", "d", 0.0),), ("axis",), glyph=("disc", "ball_i"),
              planar=(), planar_axis="along"),
)}
JOINT_TYPES = tuple(JOINT_KINDS)
