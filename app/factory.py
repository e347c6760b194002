"""New elements with sensible defaults and unique names (``body1``, ``revolute1``, ...).

Each ``new_*`` function returns an unattached element (the caller adds it through an undoable
command) or raises ``solver.ModelError`` saying what the model needs first (e.g. a body).
"""
from __future__ import annotations

import re

import solver

from .inertia import inertia_from_geometry

# Colours cycled through new bodies (RGB in [0, 1]).
PALETTE = ((0.30, 0.55, 0.85), (0.90, 0.50, 0.20), (0.35, 0.70, 0.35), (0.80, 0.30, 0.35),
           (0.60, 0.45, 0.80), (0.85, 0.75, 0.25), (0.30, 0.70, 0.75))

BODY_DENSITY = 7850.0  # kg/m³ (steel), used for new bodies' mass and inertia

def unique_name(model: solver.Model, prefix: str, taken=()) -> str:
    """``prefix1``, ``prefix2``, ... — the first name not used in the model (nor in ``taken``:
    names of elements made in the same step)."""
    i = 1
    while f"{prefix}{i}" in model or f"{prefix}{i}" == solver.GROUND or f"{prefix}{i}" in taken:
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
    """A force element of ``kind`` (a key of ``solver.FORCE_CLASSES``) on the selected body or joint,
    made from its class's declarations: ``NEW`` (values and placement words, :func:`placed`),
    ``NAME_PREFIX``, and for the other required fields a value their declaration admits."""
    return new_element(model, solver.FORCE_CLASSES[kind], selected)


def new_element(model: solver.Model, cls, selected: str = ""):
    """An element of kind ``cls`` (a force kind, a coupler) made from its class's declarations:
    ``NEW`` (values and placement words, :func:`placed`), ``NAME_PREFIX``, and for the other required
    fields a value their declaration admits."""
    values = {"name": unique_name(model, cls.NAME_PREFIX or cls.KIND)}
    for field in cls.FIELDS[1:]:
        if field.name in cls.NEW:
            values[field.name] = placed(model, cls, field, cls.NEW[field.name], selected)
        elif field.required:
            values[field.name] = placed(model, cls, field, _filler(field), selected)
    return cls(**values)


def placed(model: solver.Model, cls, field, value, selected: str = ""):
    """The value of a new ``cls`` element's ``field``: ``value`` itself, or what its placement word
    (``PLACEMENT_WORDS`` of solver/model/elements.py) names in ``model`` given the ``selected`` element; raises
    solver.ModelError saying what the model needs first."""
    if not (isinstance(value, str) and value.startswith("@")):
        return value
    word, _, arg = value[1:].partition(":")
    what = f"a {cls.LABEL.lower()}"
    if word == "ground":
        return solver.GROUND
    if word == "joint":
        return _pick_joint(model, selected, what, lambda j: not arg or arg in j.coordinates())
    if word == "other_joint":         # a second joint with a coordinate, before the one "@joint" picks
        first = _pick_joint(model, selected, what, lambda j: bool(j.coordinates()))
        others = [n for n, j in model.joints.items() if j.coordinates() and n != first]
        if not others:
            raise solver.ModelError(f"add a second joint with a coordinate first: {what} relates two ({field.name})")
        before = [n for n in others if list(model.joints).index(n) < list(model.joints).index(first)]
        return (before or others)[-1]
    if word == "shaped":              # every body with a finite shape (a contact group's members)
        found = [n for n, b in model.bodies.items() if (b.geometry or {}).get("shape", "none") not in ("none", "plane")]
        if len(found) < 2:
            raise solver.ModelError(f"give two bodies a geometry first: {what} is between bodies with shapes "
                                    f"({field.name})")
        return found
    if word == "first":
        found = [f.name for f in model.forces.values() if f.KIND == arg]
        if not found:
            raise solver.ModelError(f"add a {arg.replace('_', ' ')} first: {what} needs one ({field.name})")
        return found[0]
    body = _pick_body(model, selected, what)
    if word == "body":
        return body
    if word in ("cm", "above"):
        p = list(model.bodies[body].position)
        return [p[0], p[1] + 0.5, p[2]] if word == "above" else p
    if word == "body_of":
        of, n = arg.split(":")
        bodies = [b for b in dict.fromkeys(_acted_on(model, of)) if b != body]
        if len(bodies) <= int(n):
            fields = [f for f, v in cls.NEW.items() if str(v).startswith(f"@body_of:{of}:")] or [field.name]
            raise solver.ModelError(f"add {of.replace('_', ' ')}s on {len(fields)} bodies other than '{body}' first: "
                                    f"{what} needs them ({', '.join(fields)})")
        return bodies[int(n)]
    raise ValueError(f"{cls.KIND}.NEW: unknown placement word {value!r} (PLACEMENT_WORDS in solver/model/elements.py)")


def _filler(field):
    """A value for a required field no NEW entry gives: the placement word of a reference (ground
    for a ``body_i``, the target body, the selected joint, the first element of the kind referred
    to), the target body's CM for a point, else a value of the field's kind within its bounds."""
    kind = field.kind
    if kind == "body":
        return "@ground" if field.name == "body_i" else "@body"
    if kind == "joint":
        return "@joint"
    if kind == "bodies":
        return "@shaped"
    if "reference" in field.extra:
        return f"@first:{field.extra['reference']}"
    if kind in ("vec3", "optional_vec3") and field.unit == "m":
        return "@cm"
    if kind in ("float", "int"):
        low = field.minimum if field.minimum is not None else 0.0
        number = low + 1.0 if field.exclusive_min or low > 0.0 else low
        return min(number, field.maximum) if field.maximum is not None else number
    return {"bool": False, "str": "", "enum": field.choices[0] if field.choices else "", "vec3": [0.0] * 3,
            "unit_vec3": [0.0, 0.0, 1.0], "vec6": [0.0] * 6, "inertia": [1.0] * 3, "function": 0.0,
            "function_vec3": [0.0] * 3, "geometry": {"shape": "none"}}.get(kind)


def _acted_on(model, kind):
    """The bodies that the elements of ``kind`` name, in order."""
    for element in model.forces.values():
        if element.KIND == kind:
            for f in element.FIELDS:
                if f.kind == "body":
                    yield element.values[f.name]


def new_driver(model: solver.Model, selected: str = "") -> solver.Driver:
    """A driver holding the selected (else last drivable) joint's first coordinate at zero."""
    joint = _pick_joint(model, selected, "a driver", lambda j: bool(j.coordinates()))
    return solver.Driver(name=unique_name(model, "driver"), joint=joint, expression="0")


def new_point(model: solver.Model, selected: str = "") -> solver.Point:
    """A design point at the selected element's first global point (a point's position, a body's
    CM, a joint's origin), else at the origin."""
    element = model.element(selected) if selected in model else None
    where = next((element.values[f] for f in element.location_fields() if element.values[f] is not None), None) \
        if element is not None else None
    return solver.Point(name=unique_name(model, "point"), position=list(where or (0.0, 0.0, 0.0)))


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
    shifted 0.1 m along x (a link stays on its design points)."""
    name = original.name
    values = original.to_dict()         # its declared fields (a link's derived ones follow from them)
    values["name"] = unique_name(model, re.sub(r"\d+$", "", name) or "copy")
    if isinstance(original, solver.Body) and "position" in original.location_fields():
        values["position"] = [values["position"][0] + 0.1] + list(values["position"][1:])
    return type(original)(**values)


def copies_of(model: solver.Model, originals) -> list:
    """Copies of ``originals`` as :func:`copy_of` makes them, named in turn so the names are unique
    together; a reference to another original (a joint's body) is pointed at that one's copy.
    Raises solver.ModelError when a copy refers to something ``model`` lacks."""
    scratch, renamed, copies = model.copy(), {}, []
    for original in originals:
        values = original.to_dict()
        for field in original.FIELDS:
            if (field.kind in ("body", "joint") or "reference" in field.extra) and values.get(field.name) in renamed:
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
