"""The planar model option (``settings.planar``): is the whole model planar, and the model the
formulations compile with planar joint forms (:mod:`solver.constraints.planar`).

``settings.planar``: "off" (3-D joint forms, the default), "xy" / "yz" / "zx" (the model must be
planar in that plane: a model that is not is a ModelError naming the joint or body and field) or
"auto" (the first of xy, yz, zx in which the model is planar, else the 3-D forms).

A model is planar in the plane with normal n (a global axis) when every motion it can make keeps
each body in a plane parallel to it, checked on its data at the initial configuration:

- revolute, cylindrical, planar, universal (``axis`` or ``axis2``), revolute–spherical ``axis`` ∥ n;
- prismatic ``axis`` ⊥ n;  spherical, fixed and distance joints: any;  screw joints are not planar
  (their rotation about n drives a translation along n);
- no driver prescribes a translation along n (a cylindrical joint's ``translation``);
- every rigid body's initial ``velocity`` ⊥ n and ``angular_velocity`` ∥ n;
- no flexible bodies, the conventional joint form (the parametric form has no planar variant);
- relative formulation: every body reaches ground through joints (a loose body's 6-DOF free joint
  is not planar).

Loads are not restricted: a force along n or a moment about an in-plane axis (gravity along n, say)
is carried by the constraints that keep the bodies in their planes — reported by
:func:`out_of_plane_loads`, not by the joints' reactions.

Compiling: spherical joints, and cylindrical and universal joints with an axis along n, are
revolutes about n in the plane (their out-of-plane freedoms are gone), so :func:`planar_model`
turns them into revolutes (``axis`` = their axis along n, else +n).  The Cartesian formulation then
removes each body's out-of-plane motion by :func:`plane_joints` (an implicit 3-D planar joint of
the body to ground at its CM: n_i·d = 0 and the body's n kept along n — three rows per body), the
relative one by its tree (revolutes about n, prismatic and planar joints in the plane move the
bodies in their planes).  What remains has no redundant out-of-plane rows.
"""
from __future__ import annotations

import numpy as np

from ..constraints.joints import joint_frame
from ..constraints.planar import PLANES, planar_equations
from ..errors import ModelError, Problem
from ..model.elements import Joint, Settings
from ..model.model import GROUND
from .mobilizers import MOBILIZERS

AXIS_TOL = 1e-9                    # |a·n| or |a × n| below this: in the plane / along the normal


def normal_of(plane):
    """The unit normal e_c of ``plane``."""
    return np.eye(3)[PLANES[plane]]


def planar_problems(model, plane, settings) -> list[Problem]:
    """Why ``model`` is not planar in ``plane`` (module docstring) when compiled with ``settings``
    (their formulation resolved), one Problem per joint, body or setting field; empty when it is."""
    n = normal_of(plane)
    problems = []

    def along(v):
        return np.linalg.norm(np.cross(v, n)) <= AXIS_TOL * max(1.0, np.linalg.norm(v))

    def across(v):
        return abs(float(np.dot(v, n))) <= AXIS_TOL * max(1.0, np.linalg.norm(v))

    for j in model.joints.values():
        kind = j.kind
        if kind.planar is None and not kind.planar_revolute:
            problems.append(j.problem("type", f"a {j.type} joint moves out of the {plane} plane", j.name))
        elif kind.planar_axis == "along" and not along(j.axis):
            problems.append(j.problem("axis", f"must be along the normal of the {plane} plane "
                                              f"{tuple(n)} for a planar model", j.name))
        elif kind.planar_axis == "one_along" and not (along(j.axis) or along(j.axis2)):
            problems.append(j.problem("axis", f"axis or axis2 must be along the normal of the {plane} plane "
                                              f"{tuple(n)} for a planar model", j.name))
        elif kind.planar_axis == "across" and not across(j.axis):
            problems.append(j.problem("axis", f"must lie in the {plane} plane for a planar model", j.name))
    for d in model.drivers.values():
        joint = model.joints.get(d.joint)
        if (joint is not None and joint.kind.planar_axis == "along"
                and model.driver_coordinate(d.name) == "translation"):
            problems.append(d.problem("coordinate", f"drives a translation along the normal of the {plane} plane",
                                      d.name))
    for b in model.bodies.values():
        if not across(b.velocity):
            problems.append(b.problem("velocity", f"must lie in the {plane} plane for a planar model", b.name))
        if not along(b.angular_velocity) and np.any(b.angular_velocity):
            problems.append(b.problem("angular_velocity", f"must be along the normal of the {plane} plane "
                                                          "for a planar model", b.name))
    for e in model.flexible_bodies.values():
        problems.append(e.problem(None, "flexible bodies have no planar form; use settings.planar = 'off'", e.name))
    if settings.values["constraints"] != "conventional":
        problems.append(Settings.problem("constraints", "the planar forms need the conventional joint form",
                                         "settings"))
    if settings.values["formulation"] == "relative":
        problems += _loose_bodies(model)
    return problems


def resolve_plane(model, settings) -> tuple[str | None, str | None]:
    """(plane or None, notice or None) for ``settings.planar`` (module docstring; ``settings`` with
    the formulation resolved); a model that is not planar in an explicitly chosen plane is a
    ModelError with every reason."""
    choice = settings.values["planar"]
    if choice == "off":
        return None, None
    if choice == "auto":
        plane = planar_plane(model, settings)
        if plane is None:
            return None, "planar: the model is not planar in the xy, yz or zx plane; the 3-D joint forms are used"
    else:
        problems = planar_problems(model, choice, settings)
        if problems:
            raise ModelError([Problem(p.path, p.element, p.field, f"{p.message} (settings.planar = {choice!r})")
                              for p in problems])
        plane = choice
    return plane, f"planar: the model is planar in the {plane} plane; its joints are compiled in their planar forms"


def planar_model(model, plane):
    """A copy of ``model`` whose spherical joints, and cylindrical and universal joints with an axis
    along the normal, are revolutes about that axis (module docstring)."""
    n = normal_of(plane)
    out = model.copy()
    for j in list(out.joints.values()):
        if not j.kind.planar_revolute:
            continue
        axis = n
        for a in ((j.axis, j.axis2) if j.kind.planar_axis == "one_along" else (j.axis,)):
            if np.linalg.norm(np.cross(a, n)) <= AXIS_TOL:
                axis = tuple(a)
                break
        out.set_field(j.name, "type", "revolute")          # first: a universal's axes must stay perpendicular
        out.set_field(j.name, "axis", tuple(axis))
    return out


def plane_joints(model, plane):
    """The implicit planar joints (3-D ``planar`` equations) holding each rigid body in its plane:
    ground → body at its CM, axis n; named after the body."""
    n = tuple(normal_of(plane))
    return [Joint(name=f"{b.name}", type="planar", body_i=GROUND, body_j=b.name, origin=tuple(b.position), axis=n)
            for b in model.bodies.values()]


def planar_equation_counts(model, plane) -> dict:
    """{joint: number of equations of its planar form} (for Grübler's planar count)."""
    return {name: len(planar_equations(j.kind, joint_frame(j), plane))
            for name, j in planar_model(model, plane).joints.items()}


def planar_plane(model, settings) -> str | None:
    """The first of xy, yz, zx in which ``model`` compiled with ``settings`` is planar, or None."""
    return next((plane for plane in PLANES if not planar_problems(model, plane, settings)), None)


def out_of_plane_loads(system, plane, tol=1e-12) -> list[str]:
    """The force elements (and "gravity") whose load at the initial state has a force along the
    normal or a moment about an in-plane axis: carried by the plane constraints, not the joints."""
    n = normal_of(plane)
    names = []
    g = np.asarray(system.gravity, dtype=float)
    if abs(g @ n) > tol * max(1.0, np.linalg.norm(g)):
        names.append("gravity")
    from ..forces import Wrenches
    q, qd, t = system.initial_state()
    frames = system.frames(q, qd)
    for f in system.force_elements:
        w = Wrenches(len(frames.r))
        f.apply(t, frames, w)
        F, T = np.asarray(w.F), np.asarray(w.T)
        scale = max(1.0, np.abs(F).max(initial=0.0), np.abs(T).max(initial=0.0))
        if np.abs(F @ n).max(initial=0.0) > tol * scale or np.abs(np.cross(T, n)).max(initial=0.0) > tol * scale:
            names.append(getattr(f, "name", type(f).__name__))
    return names


def _loose_bodies(model) -> list[Problem]:
    """Bodies no chain of joints connects to ground (the relative formulation's free joints)."""
    reach = {GROUND}
    grown = True
    while grown:
        grown = False
        for j in model.joints.values():
            if j.type in MOBILIZERS and (j.body_i in reach) != (j.body_j in reach):
                reach |= {j.body_i, j.body_j}
                grown = True
    return [b.problem(None, "is not connected to ground by joints; in the relative formulation its free joint is "
                            "not planar (use formulation = 'cartesian')", b.name)
            for b in model.bodies.values() if b.name not in reach]
