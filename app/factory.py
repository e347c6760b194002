"""New elements with sensible defaults and unique names (``body1``, ``revolute1``, ...).

Each ``new_*`` function returns an unattached element (the caller adds it through an undoable
command) or raises ``solver.ModelError`` saying what the model needs first (e.g. a body).
"""
from __future__ import annotations

import re

import numpy as np

import solver

from .inertia import inertia_from_geometry

# Colours cycled through new bodies (RGB in [0, 1]).
PALETTE = ((0.30, 0.55, 0.85), (0.90, 0.50, 0.20), (0.35, 0.70, 0.35), (0.80, 0.30, 0.35),
           (0.60, 0.45, 0.80), (0.85, 0.75, 0.25), (0.30, 0.70, 0.75))

BODY_DENSITY = 7850.0  # kg/m³ (steel), used for new bodies' mass and inertia

_NAME_PREFIX = {"spring_damper": "spring", "rotational_spring_damper": "rspring"}


def unique_name(model: solver.Model, prefix: str) -> str:
    """``prefix1``, ``prefix2``, ... — the first name not used in the model."""
    i = 1
    while f"{prefix}{i}" in model or f"{prefix}{i}" == solver.GROUND:
        i += 1
    return f"{prefix}{i}"


def new_body(model: solver.Model) -> solver.Body:
    """A steel bar 0.5 m long along x, placed beside the existing bodies."""
    geometry = {"shape": "box", "size": [0.5, 0.05, 0.05],
                "color": list(PALETTE[len(model.bodies) % len(PALETTE)])}
    mass, inertia = inertia_from_geometry(geometry, BODY_DENSITY)
    x = 0.6 * len(model.bodies)
    return solver.Body(name=unique_name(model, "body"), mass=mass, inertia=inertia,
                       position=[x, 0.0, 0.0], geometry=geometry)


def new_joint(model: solver.Model, joint_type: str, selected: str = "") -> solver.Joint:
    """A joint of ``joint_type`` from ground to the selected body (else the last body), with its
    origin at that body's centre of mass."""
    body = _pick_body(model, selected, f"a {joint_type} joint")
    origin = list(model.bodies[body].position)
    options = {}
    if solver.JOINT_KINDS[joint_type].second_point:
        options["origin2"] = origin
        origin = [origin[0], origin[1] + 0.5, origin[2]]
    return solver.Joint(name=unique_name(model, joint_type), type=joint_type,
                        body_i=solver.GROUND, body_j=body, origin=origin, axis=[0.0, 0.0, 1.0], **options)


def new_force(model: solver.Model, kind: str, selected: str = ""):
    """A force element of ``kind`` (a key of ``solver.FORCE_CLASSES``) on the selected body or joint."""
    cls = solver.FORCE_CLASSES[kind]
    name = unique_name(model, _NAME_PREFIX.get(kind, kind))
    if kind == "rotational_spring_damper":
        joint = _pick_joint(model, selected, "a rotational spring-damper",
                            lambda j: "rotation" in j.coordinates())
        return cls(name=name, joint=joint, stiffness=10.0)
    if kind == "joint_friction":
        return cls(name=name, joint=_pick_joint(model, selected, "joint friction",
                                                lambda j: j.type in solver.FRICTION_JOINTS))
    if kind == "road":
        return cls(name=name)                                 # flat, at z = 0
    body = _pick_body(model, selected, f"a {cls.LABEL.lower()}")
    if kind == "tire":
        roads = [f.name for f in model.forces.values() if f.KIND == "road"]
        if not roads:
            raise solver.ModelError("add a road first: a tire rolls on a road element")
        return cls(name=name, body=body, road=roads[0])
    if kind == "speed_control":
        # the selected body is the chassis; the driven wheels are the first two tired bodies and
        # their carriers the chassis (the property editor changes them, e.g. to the knuckles)
        wheels = [b for b in dict.fromkeys(f.body for f in model.forces.values() if f.KIND == "tire") if b != body]
        if len(wheels) < 2:
            raise solver.ModelError("add tires on two wheel bodies first (other than the selected chassis): "
                                    "a speed controller drives two wheels")
        return cls(name=name, chassis=body, left_wheel=wheels[0], right_wheel=wheels[1],
                   left_carrier=body, right_carrier=body)
    p = list(model.bodies[body].position)
    if cls.GLYPH == "spring":                     # two points: from 0.5 m above the body to its CM
        line = dict(name=name, body_i=solver.GROUND, body_j=body, point_i=[p[0], p[1] + 0.5, p[2]], point_j=p)
        return cls(**line, stiffness=100.0) if kind == "spring_damper" else cls(**line)
    if kind == "bushing":
        return cls(name=name, body_i=solver.GROUND, body_j=body, origin=p,
                   stiffness=[1e4] * 3 + [1e2] * 3)
    if kind == "force":
        return cls(name=name, body=body, force=[0.0, 0.0, 0.0], point=p)
    if kind == "contact":                         # the body on a ground plane through the origin, up = −gravity
        g = np.asarray(model.gravity, dtype=float)
        up = list(-g / np.linalg.norm(g)) if np.any(g) else [0.0, 1.0, 0.0]
        own = model.bodies[body].geometry["shape"] != "none"
        return cls(name=name, body_i=solver.GROUND, body_j=body, stiffness=1e6, damping=1e3,
                   geometry_i={"shape": "plane", "point": [0.0, 0.0, 0.0], "normal": up},
                   geometry_j={"shape": "none"} if own else {"shape": "sphere", "radius": 0.05})
    return cls(name=name, body=body, torque=[0.0, 0.0, 0.0])


def new_driver(model: solver.Model, selected: str = "") -> solver.Driver:
    """A driver holding the selected (else last drivable) joint's first coordinate at zero."""
    joint = _pick_joint(model, selected, "a driver", lambda j: bool(j.coordinates()))
    return solver.Driver(name=unique_name(model, "driver"), joint=joint, expression="0")


def new_marker(model: solver.Model, selected: str = "") -> solver.Marker:
    """A marker at the selected (else last) body's centre of mass."""
    body = _pick_body(model, selected, "a marker")
    return solver.Marker(name=unique_name(model, "marker"), body=body,
                         position=list(model.bodies[body].position))


def duplicate(model: solver.Model, name: str):
    """A copy of element ``name`` under a new unique name (bodies shifted 0.1 m along x)."""
    return copy_of(model, model.element(name))


def copy_of(model: solver.Model, original):
    """A copy of ``original`` (from this or another model) under a name unique in ``model``, a body
    shifted 0.1 m along x."""
    name = original.name
    values = original.copy().values
    values["name"] = unique_name(model, re.sub(r"\d+$", "", name) or "copy")
    if isinstance(original, solver.Body):
        values["position"] = [values["position"][0] + 0.1] + list(values["position"][1:])
    return type(original)(**values)


def copies_of(model: solver.Model, originals) -> list:
    """Copies of ``originals`` as :func:`copy_of` makes them, named in turn so the names are unique
    together; a reference to another original (a joint's body) is pointed at that one's copy.
    Raises solver.ModelError when a copy refers to something ``model`` lacks."""
    scratch, renamed, copies = model.copy(), {}, []
    for original in originals:
        values = original.copy().values
        for field in original.FIELDS:
            if (field.kind in ("body", "joint") or "reference" in field.extra) and values[field.name] in renamed:
                values[field.name] = renamed[values[field.name]]
        element = copy_of(scratch, type(original)(**values))
        scratch.add(element.copy())
        renamed[original.name] = element.name
        copies.append(element)
    return copies


# ---- helpers ------------------------------------------------------------------------------------

def _pick_body(model, selected, what):
    bodies = model.bodies
    if not bodies:
        raise solver.ModelError(f"add a body before adding {what}")
    if selected in bodies:
        return selected
    if selected in model:
        for ref in model.element(selected).references():
            if ref in bodies:
                return ref
    return list(bodies)[-1]


def _pick_joint(model, selected, what, usable):
    joints = {n: j for n, j in model.joints.items() if usable(j)}
    if not joints:
        raise solver.ModelError(f"add a suitable joint (revolute, prismatic, ...) before adding {what}")
    return selected if selected in joints else list(joints)[-1]
