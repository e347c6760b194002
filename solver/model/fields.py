"""Field declarations: each model element declares its fields once (type, unit, bounds, default,
doc); validation, the project-file schema and the GUI property editor are all derived from them.

A :class:`Field` converts a raw value (from Python or from JSON) into its canonical stored form and
reports problems as ``"<path>.<field>: <message>"`` strings, collected by the caller.
"""
from __future__ import annotations

import math
import unicodedata
from itertools import islice
from dataclasses import dataclass, field as dc_field
from typing import Any

import numpy as np

REQUIRED = object()

# Field kinds understood by coerce() and by the GUI property editor.
KINDS = ("float", "int", "bool", "str", "name", "vec3", "unit_vec3", "inertia", "orientation",
         "body", "joint", "enum", "function", "function_vec3", "geometry", "vec6", "optional_float",
         "optional_vec3", "polynomial", "bodies")


class FieldProblem(Exception):
    """Raised by a coercion with the message for one field (without its path)."""


@dataclass(frozen=True)
class Field:
    """Declaration of one field of a model element.

    kind: one of KINDS; unit: SI unit shown in the GUI as a suffix; minimum/maximum: bounds for
    numbers (``exclusive_min`` makes the minimum strict); choices: for ``enum``; doc: one line.
    """
    name: str
    kind: str
    unit: str = ""
    default: Any = REQUIRED
    doc: str = ""
    minimum: float | None = None
    maximum: float | None = None
    exclusive_min: bool = False
    choices: tuple = ()
    advanced: bool = False
    extra: dict = dc_field(default_factory=dict)

    @property
    def required(self) -> bool:
        return self.default is REQUIRED

    def default_value(self):
        d = self.default
        return list(d) if isinstance(d, (list, tuple)) else (dict(d) if isinstance(d, dict) else d)

    def coerce(self, value):
        """Return the canonical stored value, or raise FieldProblem with a message."""
        return _COERCERS[self.kind](self, value)


# ---- coercers -------------------------------------------------------------------------------

def _number(value, what="a number"):
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise FieldProblem(f"must be {what}, got {show_value(value)}")
    try:
        x = float(value)
    except OverflowError:          # an integer beyond the float range (e.g. 10**400 in a file)
        raise FieldProblem("must be finite, got an integer too large for a float") from None
    if not math.isfinite(x):
        raise FieldProblem(f"must be finite, got {x}")
    return x


MAX_SHOWN = 20          # names listed in one message, problems listed in one error


def show_names(names, count=None, limit=MAX_SHOWN) -> str:
    """Up to ``limit`` of ``names`` (any iterable; only those are taken from it) joined by commas,
    then "and N more" where ``count`` is the number of names (default: ``len(names)``, or just
    "and more" for an iterator); "none" for no names.  A model with thousands of elements never
    puts all of them into every message."""
    if count is None and not hasattr(names, "__len__"):
        names = list(islice(names, limit + 1))
        if len(names) > limit:
            return ", ".join(names[:limit]) + " and more"
    count = len(names) if count is None else count
    shown = ", ".join(islice(names, limit))
    return "none" if not count else shown if count <= limit else f"{shown} and {count - limit} more"


def show_problems(problems, limit=MAX_SHOWN) -> list:
    """The first ``limit`` problems and a last line "... and N more problems" for the rest."""
    problems = list(problems)
    if len(problems) <= limit:
        return problems
    return problems[:limit] + [f"... and {len(problems) - limit} more problems"]


def problem_count(problems) -> int:
    """How many problems a list from :func:`show_problems` stands for."""
    last = problems[-1] if problems else ""
    if last.startswith("... and ") and last.endswith(" more problems"):
        return len(problems) - 1 + int(last[len("... and "):-len(" more problems")])
    return len(problems)


def show_value(value):
    try:
        text = repr(value)
    except (ValueError, RecursionError):        # an integer of thousands of digits, deep nesting
        return "an integer too large to show" if isinstance(value, int) else f"a {type(value).__name__} too large to show"
    return text if len(text) <= 40 else text[:37] + "..."


# Largest magnitude of a quantity by unit: a length beyond 1000 km (or a speed beyond 1000 km/s)
# is a mistake in a multibody model and squares to overflow in the kinematics (positions of ±1e308
# validated and then failed the run); other units are bounded by finiteness only.
UNIT_LIMITS = {"m": 1e6, "m/s": 1e6, "m/s²": 1e9, "rad/s": 1e6}


def _bounded(f: Field, x):
    limit = UNIT_LIMITS.get(f.unit)
    if limit is not None and abs(x) > limit:
        raise FieldProblem(f"must be within ±{limit:g} {f.unit}, got {x:g}")
    return x


def _float(f: Field, value):
    x = _bounded(f, _number(value))
    if f.minimum is not None:
        if f.exclusive_min and not x > f.minimum:
            raise FieldProblem(f"must be > {f.minimum:g}, got {x:g}")
        if not f.exclusive_min and x < f.minimum:
            raise FieldProblem(f"must be >= {f.minimum:g}, got {x:g}")
    if f.maximum is not None and x > f.maximum:
        raise FieldProblem(f"must be <= {f.maximum:g}, got {x:g}")
    return x


def _optional_float(f: Field, value):
    return None if value is None else _float(f, value)


def _int(f: Field, value):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise FieldProblem(f"must be an integer, got {show_value(value)}")
    v = int(value)
    if f.minimum is not None and v < f.minimum:
        raise FieldProblem(f"must be >= {f.minimum:g}, got {show_value(v)}")
    if f.maximum is not None and v > f.maximum:
        raise FieldProblem(f"must be <= {f.maximum:g}, got {show_value(v)}")
    return v


def _bool(f: Field, value):
    if not isinstance(value, (bool, np.bool_)):
        raise FieldProblem(f"must be true or false, got {show_value(value)}")
    return bool(value)


def _str(f: Field, value):
    if not isinstance(value, str):
        raise FieldProblem(f"must be a string, got {show_value(value)}")
    if len(value) > 10000:
        raise FieldProblem("is too long (more than 10000 characters)")
    return value


def _name(f: Field, value):
    s = _str(f, value).strip()
    if not s:
        raise FieldProblem("must be a non-empty name")
    if len(s) > 200:
        raise FieldProblem("must be at most 200 characters")
    if any(c in s for c in "\n\r\t/\\\"'"):
        raise FieldProblem("must not contain quotes, slashes, tabs or line breaks")
    if not printable(s):
        raise FieldProblem("must not contain control characters (e.g. ESC, NUL)")
    bad = next((c for c in s if noncharacter(c)), None)
    if bad is not None:
        raise FieldProblem(f"must not contain the Unicode noncharacter U+{ord(bad):04X} (XML, e.g. an FMU's "
                           "modelDescription.xml, and other output formats cannot carry it)")
    return s


def noncharacter(c: str) -> bool:
    """U+FDD0–U+FDEF and the last two code points of every plane (U+FFFE, U+FFFF, U+1FFFE, …):
    reserved by Unicode for a program's internal use, not for text that is exchanged (XML 1.0
    refuses U+FFFE and U+FFFF outright)."""
    code = ord(c)
    return 0xFDD0 <= code <= 0xFDEF or code & 0xFFFE == 0xFFFE


def printable(text: str) -> bool:
    """No control or format characters (Unicode categories Cc, Cf, Cs): a name printed on a
    terminal cannot carry escape sequences, NUL bytes or bidirectional overrides."""
    return not any(unicodedata.category(c) in ("Cc", "Cf", "Cs") for c in text)


def shown_text(text) -> str:
    """``text`` with every control or format character (ESC, NUL, line breaks, bidirectional
    overrides) shown as its escape: how text from a file is shown, on a terminal (the CLI) and in
    the GUI's messages, so that it cannot drive the terminal or reorder what is read."""
    return "".join(c if printable(c) else repr(c)[1:-1] for c in str(text))


def _vector(value, n):
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if not isinstance(value, (list, tuple)) or len(value) != n:
        raise FieldProblem(f"must be a {n}-vector, got {show_value(value)}")
    return [_number(v, "a number in each component") for v in value]


def _vec3(f: Field, value):
    return [_bounded(f, x) for x in _vector(value, 3)]


def _optional_vec3(f: Field, value):
    return None if value is None else _vec3(f, value)


def _vec6(f: Field, value):
    v = _vector(value, 6)
    if f.minimum is not None and min(v) < f.minimum:
        raise FieldProblem(f"components must be >= {f.minimum:g}")
    return v


def _unit_vec3(f: Field, value):
    v = _vector(value, 3)
    n = math.sqrt(sum(c * c for c in v))
    if math.isinf(n):              # components near the float limit: scale before normalizing
        big = max(abs(c) for c in v)
        v = [c / big for c in v]
        n = math.sqrt(sum(c * c for c in v))
    if n < 1e-12:
        raise FieldProblem("must be a non-zero 3-vector")
    return [c / n for c in v]


def _inertia(f: Field, value):
    """(Ixx, Iyy, Izz) or (Ixx, Iyy, Izz, Ixy, Iyz, Izx) at the CM in body axes; must be positive
    definite and satisfy the triangle inequality of its principal moments."""
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if not isinstance(value, (list, tuple)) or len(value) not in (3, 6):
        raise FieldProblem(f"must be (Ixx, Iyy, Izz) or (Ixx, Iyy, Izz, Ixy, Iyz, Izx), got {show_value(value)}")
    v = [_number(c, "a number in each component") for c in value] + [0.0] * (6 - len(value))
    J = inertia_matrix(v)
    w = np.linalg.eigvalsh(J)
    if w[0] <= 0.0:
        raise FieldProblem(f"must be positive definite (principal moments {', '.join(f'{x:.4g}' for x in w)})")
    if w[2] > w[0] + w[1] + 1e-9 * w[2]:
        raise FieldProblem(f"violates the triangle inequality of principal moments "
                           f"({w[2]:.4g} > {w[0]:.4g} + {w[1]:.4g})")
    return v


def inertia_matrix(v):
    """3×3 inertia tensor from (Ixx, Iyy, Izz, Ixy, Iyz, Izx) (products as tensor components)."""
    ixx, iyy, izz, ixy, iyz, izx = v
    return np.array([[ixx, ixy, izx], [ixy, iyy, iyz], [izx, iyz, izz]], dtype=float)


def _orientation(f: Field, value):
    """None (identity), a quaternion (w, x, y, z) or a 3×3 rotation matrix; stored as a unit
    quaternion [w, x, y, z] with w >= 0."""
    from ..math.rotations import quat_from_matrix
    if value is None:
        return [1.0, 0.0, 0.0, 0.0]
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, (list, tuple)) and len(value) == 3 and all(isinstance(r, (list, tuple)) for r in value):
        rows = [_vector(r, 3) for r in value]
        R = np.array(rows)
        if not np.allclose(R @ R.T, np.eye(3), atol=1e-6) or np.linalg.det(R) < 0:
            raise FieldProblem("must be a proper rotation matrix (orthonormal, det +1)")
        q = quat_from_matrix(R)
    else:
        q = np.array(_vector(value, 4))
        if np.max(np.abs(q)) > 1e150:              # scale before squaring (no overflow)
            q = q / np.max(np.abs(q))
        n = np.linalg.norm(q)
        if n < 1e-12:
            raise FieldProblem("quaternion must be non-zero")
        q = q / n
    if q[0] < 0:
        q = -q
    return [float(c) for c in q]


def _enum(f: Field, value):
    if value not in f.choices:
        raise FieldProblem(f"must be one of {', '.join(map(str, f.choices))}; got {show_value(value)}")
    return value


def _function(f: Field, value):
    """A number, an expression of t, or a table {"t": [...], "values": [...]}; stored in JSON form."""
    from ..expressions import time_function
    from ..errors import ExpressionError
    try:
        fn = time_function(value)
    except ExpressionError as exc:
        raise FieldProblem(str(exc)) from None
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else fn.to_json()


def _function_vec3(f: Field, value):
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if not isinstance(value, (list, tuple)) or len(value) != 3:
        raise FieldProblem(f"must be 3 components (numbers or expressions of t), got {show_value(value)}")
    return [_function(f, v) for v in value]


GEOMETRY_SHAPES = ("box", "cylinder", "sphere", "capsule", "plane", "mesh", "none")


def _geometry(f: Field, value):
    """Display and contact geometry (body axes): {"shape": box|cylinder|sphere|capsule|plane|mesh|none,
    size/radius/length/axis/point/normal/file, color, offset}; a capsule is a cylinder of ``length``
    between two hemispheres, a plane the half-space below ``point`` along ``normal``
    (:mod:`solver.contact.geometry`)."""
    if value is None:
        return {"shape": "none"}
    if not isinstance(value, dict):
        raise FieldProblem(f"must be an object with a 'shape', got {show_value(value)}")
    shape = value.get("shape")
    if shape not in GEOMETRY_SHAPES:
        raise FieldProblem(f"shape must be one of {', '.join(GEOMETRY_SHAPES)}; got {show_value(shape)}")
    out = {"shape": shape}
    allowed = {"box": ("size",), "cylinder": ("radius", "length", "axis"), "sphere": ("radius",),
               "capsule": ("radius", "length", "axis"), "plane": ("point", "normal"),
               "mesh": ("file", "scale"), "none": ()}[shape] + ("color", "offset")
    for key in value:
        if key != "shape" and key not in allowed:
            raise FieldProblem(f"unknown key '{key}' for shape {shape} (allowed: {', '.join(allowed)})")
    try:
        if shape == "box":
            out["size"] = _positive_vec(value.get("size", [0.1, 0.1, 0.1]))
        elif shape in ("cylinder", "capsule"):
            out["radius"] = _positive(value.get("radius", 0.05))
            out["length"] = _positive(value.get("length", 0.2))
            out["axis"] = _enum_value(value.get("axis", "z"), ("x", "y", "z"))
        elif shape == "sphere":
            out["radius"] = _positive(value.get("radius", 0.05))
        elif shape == "plane":
            out["point"] = _vector(value.get("point", [0.0, 0.0, 0.0]), 3)
            try:
                out["normal"] = _unit_vec3(f, value.get("normal", [0.0, 0.0, 1.0]))
            except FieldProblem as p:
                raise FieldProblem(f"normal {p}") from None
        elif shape == "mesh":
            if not isinstance(value.get("file"), str) or not value["file"]:
                raise FieldProblem("mesh needs a 'file' (STL or OBJ path)")
            out["file"] = _mesh_file(value["file"])
            out["scale"] = _positive(value.get("scale", 1.0))
        if "color" in value:
            c = _vector(value["color"], 3)
            if min(c) < 0 or max(c) > 1:
                raise FieldProblem("color components must be in [0, 1]")
            out["color"] = c
        if "offset" in value:
            out["offset"] = _vector(value["offset"], 3)
    except FieldProblem as p:
        raise FieldProblem(f"geometry: {p}") from None
    return out


def _mesh_file(path):
    """A mesh path as a project file may hold it: relative to the project's folder and inside it
    (the GUI reads it; :mod:`solver.io.confine`), printable, at most 1000 characters."""
    from .paths import relative_path_problem
    if len(path) > 1000 or not printable(path):
        raise FieldProblem("file must be a printable path of at most 1000 characters")
    problem = relative_path_problem(path)
    if problem is not None:
        raise FieldProblem(f"file {problem} (the project's folder)")
    return path


def _positive(v):
    x = _number(v)
    if x <= 0:
        raise FieldProblem(f"must be > 0, got {x:g}")
    return x


def _positive_vec(v):
    return [_positive(c) for c in _vector(v, 3)]


def _enum_value(v, choices):
    if v not in choices:
        raise FieldProblem(f"must be one of {', '.join(choices)}; got {show_value(v)}")
    return v


def _reference(f: Field, value):
    return _name(f, value)


MAX_GROUP_BODIES = 100_000


def _bodies(f: Field, value):
    """A list of distinct body names (a contact group's members), at least 2 and at most
    :data:`MAX_GROUP_BODIES`; also the same as text, names separated by commas (the GUI's line
    editor).  Its length is checked before its items are read: a file's list costs at most that."""
    if isinstance(value, str):
        value = [x for x in (x.strip() for x in value.strip().strip("[]()").split(",")) if x]
    if not isinstance(value, (list, tuple)):
        raise FieldProblem(f"must be a list of body names, got {show_value(value)}")
    if len(value) > MAX_GROUP_BODIES:
        raise FieldProblem(f"at most {MAX_GROUP_BODIES} bodies, got {len(value)}")
    if len(value) < 2:
        raise FieldProblem(f"must name at least 2 bodies, got {len(value)}")
    names = []
    for k, x in enumerate(value):
        try:
            names.append(_name(f, x))
        except FieldProblem as exc:
            raise FieldProblem(f"[{k}] {exc}") from None
    seen = set()
    for k, x in enumerate(names):
        if x in seen:
            raise FieldProblem(f"[{k}] '{x}' is listed twice")
        seen.add(x)
    return names


MAX_POLYNOMIAL_DEGREE = 10


def _polynomial(f: Field, value):
    """None, or the coefficients [c_0, c_1, …] of Σ c_k x^k: a list of finite numbers (at most
    :data:`MAX_POLYNOMIAL_DEGREE` + 1) or the same as text, numbers separated by commas or spaces
    (the GUI's line editor; brackets allowed, as it shows the list)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, str):
        try:
            value = [float(x) for x in value.strip().strip("[]()").replace(",", " ").split()]
        except ValueError:
            raise FieldProblem(f"must be numbers separated by commas, got {show_value(value)}") from None
    if not isinstance(value, (list, tuple)) or not value:
        raise FieldProblem(f"must be a non-empty list of numbers (c_0, c_1, …) or null, got {show_value(value)}")
    if len(value) > MAX_POLYNOMIAL_DEGREE + 1:
        raise FieldProblem(f"at most {MAX_POLYNOMIAL_DEGREE + 1} coefficients (degree {MAX_POLYNOMIAL_DEGREE}), "
                           f"got {len(value)}")
    return [_number(c, "a list of numbers") for c in value]


_COERCERS = {
    "float": _float, "optional_float": _optional_float, "int": _int, "bool": _bool, "str": _str,
    "name": _name, "vec3": _vec3, "optional_vec3": _optional_vec3, "vec6": _vec6,
    "unit_vec3": _unit_vec3, "inertia": _inertia, "orientation": _orientation,
    "body": _reference, "joint": _reference, "enum": _enum, "function": _function,
    "function_vec3": _function_vec3, "geometry": _geometry, "polynomial": _polynomial,
    "bodies": _bodies,
}
