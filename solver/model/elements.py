"""Model elements: bodies, markers, joints, force elements, drivers and solver settings.

Each element class declares its fields once in ``FIELDS`` (see :mod:`solver.model.fields`); the
constructor, ``set``, the project file and the GUI property editor all use that declaration.
Positions, axes and orientations are global, at the model's initial (assembly) configuration.
"""
from __future__ import annotations

import copy
import math

from ..errors import ModelError, Problem
from .fields import Field, FieldProblem, show_value
from .joint_kinds import JOINT_KINDS, JOINT_TYPES
from .paths import confined

DRIVER_COORDINATES = ("default", "rotation", "translation", "x", "y")

# Obstacle profiles of a Road along x (their equations and the numeric surface: solver.vehicle.road).
ROAD_PROFILES = ("flat", "half_sine", "step", "table")

_ATOMS = (str, int, float, bool, type(None))


def plain_copy(value):
    """A deep copy of field values — dicts, lists and tuples of numbers and strings — by direct
    recursion (a tenth of :func:`copy.deepcopy`'s cost on a large model's bodies); any other object
    goes through :func:`copy.deepcopy`."""
    if type(value) in _ATOMS:
        return value
    if type(value) is dict:
        return {key: plain_copy(v) for key, v in value.items()}
    if type(value) is list:
        return [plain_copy(v) for v in value]
    if type(value) is tuple:
        return tuple([plain_copy(v) for v in value])
    return copy.deepcopy(value)


# The fields each glyph is drawn from, by role (a kind's GLYPH_FIELDS maps a role to another field):
# a coil between two points on two bodies, a spiral about a joint's axis at its origin, a wire
# sphere at a point between two bodies, an arrow along a vector at a point (None: the body's CM),
# a curved arrow about a vector at the body's CM.
GLYPH_ROLES = {
    "spring": {"body_i": "body_i", "body_j": "body_j", "point_i": "point_i", "point_j": "point_j"},
    "spiral": {"joint": "joint"},
    "bushing": {"body_i": "body_i", "body_j": "body_j", "origin": "origin"},
    "arrow": {"body": "body", "point": "point", "vector": "force"},
    "torque": {"body": "body", "vector": "torque"},
}

# The words a kind's NEW may use for the value of a new element's field (resolved by the GUI's
# app/factory.py from the selection): the body the element is added to (the selected body, else
# the body of the selected element, else the last body), ground, that body's CM, a point 0.5 m
# above it (+y), the selected or last joint (":rotation": one with a rotation coordinate), another
# joint with a coordinate (the one before the selected or last one: a coupler's leader), the first
# element of a kind, the N-th body (from 0) other than the target that elements of a kind act on.
PLACEMENT_WORDS = ("@body", "@ground", "@cm", "@above", "@joint", "@joint:<coordinate>", "@other_joint",
                   "@first:<kind>", "@body_of:<kind>:<N>", "@shaped")


class Element:
    """Base class: holds field values in ``self.values``; ``FIELDS`` declares them.  ``ICON``: the
    GUI's icon (resources/icons/<ICON>.svg; None: the one named by KIND).

    What the GUI needs of a kind is declared here as data (docs/architecture.md, "Adding a force
    element kind"), all optional: ``NAME_PREFIX`` (new elements are named PREFIX1, PREFIX2, …; None:
    the KIND), ``NEW`` (field → value of an element the GUI adds, a literal or a placement word of
    :data:`PLACEMENT_WORDS`; a required field not listed gets one from its declaration),
    ``GLYPH_FIELDS`` (glyph role → field, where they differ from :data:`GLYPH_ROLES`) and
    ``ATTACHES_TO_FLEXIBLE`` (its body fields may name a flexible body: it attaches at FE nodes).
    The global points moved by Move and by a drag are the fields :meth:`location_fields` finds."""
    FIELDS: tuple[Field, ...] = ()
    KIND = "element"
    COLLECTION = ""
    ICON: str | None = None
    NAME_PREFIX: str | None = None
    NEW: dict = {}
    GLYPH_FIELDS: dict = {}
    ATTACHES_TO_FLEXIBLE = False

    @classmethod
    def location_fields(cls) -> tuple[str, ...]:
        """The fields holding global points: 3-vectors in m (``position``, ``origin``, ``point_i``…),
        unless declared in body axes (``extra={"frame": "body"}``)."""
        return tuple(f.name for f in cls.FIELDS if f.kind in ("vec3", "optional_vec3") and f.unit == "m"
                     and f.extra.get("frame") != "body")

    @classmethod
    def glyph_fields(cls) -> dict[str, str | None]:
        """Role → field of the kind's ``GLYPH`` (:data:`GLYPH_ROLES`, overridden by ``GLYPH_FIELDS``);
        None for a role whose field the kind does not have."""
        roles = {**GLYPH_ROLES.get(getattr(cls, "GLYPH", None), {}), **cls.GLYPH_FIELDS}
        names = {f.name for f in cls.FIELDS}
        return {role: name if name in names else None for role, name in roles.items()}

    def __init__(self, **values):
        problems = []
        self.values = {}
        known = {f.name for f in self.FIELDS}
        name = values.get("name")
        for key in values:
            if key not in known:
                problems.append(self.problem(None, f"unknown field {show_value(key)} "
                                                   f"(valid: {', '.join(sorted(known))})", name))
        for f in self.FIELDS:
            if f.name in values:
                try:
                    self.values[f.name] = f.coerce(values[f.name])
                except FieldProblem as p:
                    problems.append(self.problem(f.name, str(p), name))
            elif f.required:
                problems.append(self.problem(f.name, "is required", name))
            else:
                self.values[f.name] = f.coerce(f.default_value())
        if problems:
            raise ModelError(problems)
        self.check()

    @classmethod
    def problem(cls, field, message, name) -> Problem:
        """A problem of ``field`` (None: of the whole element) of the element named ``name`` (the
        Problem's element is None for what is not a model element, e.g. the solver settings)."""
        element = name if isinstance(name, str) and cls.COLLECTION else None
        shown = "?" if name is None else name if isinstance(name, str) else show_value(name)   # a name of the wrong type
        return Problem(f"{cls.KIND} '{shown}'", element, field, message)

    # ---- public API ---------------------------------------------------------------------------
    @classmethod
    def field(cls, name) -> Field:
        for f in cls.FIELDS:
            if f.name == name:
                return f
        raise ModelError(f"{cls.KIND}: no field '{name}' (valid: {', '.join(f.name for f in cls.FIELDS)})")

    @property
    def name(self) -> str:
        return self.values["name"]

    def __getattr__(self, item):
        values = self.__dict__.get("values")
        if values is not None and item in values:
            return values[item]
        raise AttributeError(item)

    def set(self, field_name, value):
        """Validate and set one field; raises ModelError naming the field, leaving it unchanged."""
        f = self.field(field_name)
        try:
            new = f.coerce(value)
        except FieldProblem as p:
            raise ModelError(self.problem(field_name, str(p), self.name)) from None
        old = self.values[field_name]
        self.values[field_name] = new
        try:
            self.check()
        except ModelError:
            self.values[field_name] = old
            raise
        return old

    def check(self):
        """Checks across fields of one element; raise ModelError."""

    def references(self) -> list[str]:
        """Names of other elements this one refers to."""
        return [name for f in self.FIELDS for name in
                (self.values[f.name] if f.kind == "bodies" else
                 [self.values[f.name]] if f.kind in ("body", "joint") or "reference" in f.extra else [])
                if name != ""]

    def to_dict(self) -> dict:
        """The file form: every field, except those declared ``extra={"omit_default": True}`` while
        at their default (files written before such a field existed stay as they were)."""
        omit = {f.name: f.default for f in self.FIELDS if f.extra.get("omit_default")}
        return {k: plain_copy(v) for k, v in self.values.items() if not (k in omit and v == omit[k])}

    def copy(self):
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)          # e.g. a flexible body's base_dir
        new.values = plain_copy(self.values)
        return new

    def __eq__(self, other):
        return type(other) is type(self) and other.values == self.values

    def __repr__(self):
        return f"{type(self).__name__}({self.name!r})"


NAME = Field("name", "name", doc="unique name in the model")
# A field written to the project file only when it differs from its default (Element.to_dict): files
# written before the field existed stay byte-identical on a round trip.
OMIT_AT_DEFAULT = {"omit_default": True}


class Body(Element):
    """A rigid body: mass and inertia at the centre of mass (CM), in body axes."""
    KIND = "body"
    COLLECTION = "bodies"
    FIELDS = (
        NAME,
        Field("mass", "float", "kg", doc="mass", minimum=0.0, exclusive_min=True),
        Field("inertia", "inertia", "kg·m²", doc="(Ixx, Iyy, Izz[, Ixy, Iyz, Izx]) at the CM, body axes"),
        Field("position", "vec3", "m", default=(0.0, 0.0, 0.0), doc="CM position, global"),
        Field("orientation", "orientation", default=None, doc="body axes: quaternion (w,x,y,z) or matrix"),
        Field("velocity", "vec3", "m/s", default=(0.0, 0.0, 0.0), doc="initial CM velocity, global"),
        Field("angular_velocity", "vec3", "rad/s", default=(0.0, 0.0, 0.0),
              doc="initial angular velocity, global"),
        Field("geometry", "geometry", default={"shape": "none"}, doc="display geometry (body axes)"),
    )


class Marker(Element):
    """A named point and frame fixed on a body (global at the initial configuration)."""
    KIND = "marker"
    COLLECTION = "markers"
    FIELDS = (
        NAME,
        Field("body", "body", doc="body the marker is fixed on"),
        Field("position", "vec3", "m", default=(0.0, 0.0, 0.0), doc="global position"),
        Field("orientation", "orientation", default=None, doc="global orientation"),
    )


class Joint(Element):
    """A joint between body_i and body_j (either may be 'ground').

    The joint frame has its origin at ``origin`` and its z axis along ``axis`` at the initial
    configuration; joint coordinates are zero there.  ``axis2`` is the universal joint's second
    axis (on body_j); ``pitch`` the screw lead in m per revolution; ``origin2`` the point on body_j
    of a distance or revolute–spherical link; ``length`` the distance link's length (None =
    initial distance).  ``lower_limit`` and ``upper_limit`` (revolute, prismatic, cylindrical) are
    stops on the joint coordinate ``limit_coordinate`` (zero at the initial configuration, measured
    as a driver measures it), enforced by the Adams IMPACT law with ``stop_stiffness``,
    ``stop_exponent``, ``stop_damping`` and ``stop_depth`` (:mod:`solver.math.impact`; ``stop_push_only``: its
    force never pulls,
    docs/formulations.md "Joint stops and friction"; ``stops`` false keeps the limits as data only);
    ``effort_limit`` and ``velocity_limit`` are
    data (URDF ``<limit>``, docs/import.md).  ``armature`` (revolute, prismatic) is the inertia of a
    rotor on the joint coordinate θ (MuJoCo's joint armature): kinetic energy ½ a θ̇² more
    (:mod:`solver.formulations.armature`).  Limits are written to the project file only when set,
    the stop fields only when not at their defaults."""
    KIND = "joint"
    ATTACHES_TO_FLEXIBLE = True
    COLLECTION = "joints"
    FIELDS = (
        NAME,
        Field("type", "enum", choices=JOINT_TYPES, doc="joint type"),
        Field("body_i", "body", doc="first body (base)"),
        Field("body_j", "body", doc="second body (follower); reactions act on it"),
        Field("origin", "vec3", "m", default=(0.0, 0.0, 0.0), doc="joint origin, global"),
        Field("at_point", "str", default="", doc="design point the origin follows (\"\" = none)",
              extra={"reference": "point", "optional": True, **OMIT_AT_DEFAULT}),
        Field("axis", "unit_vec3", default=(0.0, 0.0, 1.0), doc="joint axis, global"),
        Field("axis2", "unit_vec3", default=(1.0, 0.0, 0.0), doc="second axis (universal), global"),
        Field("pitch", "float", "m/rev", default=0.01, doc="screw lead per revolution"),
        Field("origin2", "vec3", "m", default=(0.0, 0.0, 0.0), doc="point on body_j (links), global"),
        Field("length", "optional_float", "m", default=None, minimum=0.0, exclusive_min=True,
              doc="distance link length (None = initial distance)"),
        Field("lower_limit", "optional_float", "m or rad", default=None,
              doc="lower stop of the limited coordinate (None = none)", extra=OMIT_AT_DEFAULT),
        Field("upper_limit", "optional_float", "m or rad", default=None,
              doc="upper stop of the limited coordinate (None = none)", extra=OMIT_AT_DEFAULT),
        Field("effort_limit", "optional_float", "N or N·m", default=None, minimum=0.0,
              doc="largest actuator force or torque (data only; None = none)", extra=OMIT_AT_DEFAULT),
        Field("velocity_limit", "optional_float", "m/s or rad/s", default=None, minimum=0.0,
              doc="largest coordinate rate (data only; None = none)", extra=OMIT_AT_DEFAULT),
        Field("stops", "bool", default=True,
              doc="enforce lower_limit and upper_limit as stops (false: keep them as data only)",
              extra=OMIT_AT_DEFAULT),
        Field("limit_coordinate", "enum", choices=("default", "rotation", "translation"), default="default",
              doc="coordinate the stops limit (default: the joint's first)", extra=OMIT_AT_DEFAULT),
        Field("stop_stiffness", "float", "N/m or N·m/rad", default=1.0e5, minimum=0.0, exclusive_min=True,
              doc="stop stiffness k (force k·δ^e at penetration δ)", extra=OMIT_AT_DEFAULT),
        Field("stop_exponent", "float", default=1.0, minimum=1.0, maximum=10.0, doc="stop force exponent e",
              extra=OMIT_AT_DEFAULT),
        Field("stop_damping", "float", "N·s/m or N·m·s/rad", default=100.0, minimum=0.0,
              doc="stop damping c_max, reached at the penetration stop_depth", extra=OMIT_AT_DEFAULT),
        Field("stop_depth", "float", "m or rad", default=1.0e-3, minimum=0.0, exclusive_min=True,
              doc="penetration d at which the stop damping is full (STEP from 0)", extra=OMIT_AT_DEFAULT),
        Field("stop_push_only", "bool", default=False,
              doc="the stop force never pulls (F ≥ 0, as MuJoCo's limits); false: Adams IMPACT, whose damping may "
                  "pull on a fast separation", extra=OMIT_AT_DEFAULT),
        Field("armature", "float", "kg·m² or kg", default=0.0, minimum=0.0,
              doc="rotor inertia on the joint coordinate (kinetic energy ½·a·rate²)", extra=OMIT_AT_DEFAULT),
    )

    def check(self):
        if self.body_i == self.body_j:
            raise ModelError(self.problem("body_j", f"must differ from body_i ('{self.body_i}')", self.name))
        if self.lower_limit is not None and self.upper_limit is not None and self.lower_limit > self.upper_limit:
            raise ModelError(self.problem("upper_limit", "must be >= lower_limit "
                             f"({self.upper_limit:g} < {self.lower_limit:g})", self.name))
        kind = JOINT_KINDS[self.type]
        if self.armature and "armature" not in kind.fields:
            raise ModelError(self.problem("armature", f"a {self.type} joint has no armature (revolute and prismatic "
                                          f"joints do); got {self.armature:g}", self.name))
        if self.limit_coordinate not in ("default",) + kind.coordinates and "limit_coordinate" in kind.fields:
            raise ModelError(self.problem("limit_coordinate", f"a {self.type} joint has coordinates "
                                          f"{', '.join(kind.coordinates)}; got {self.limit_coordinate}", self.name))
        found = kind.check(self) if kind.check else None
        if found:
            raise ModelError(self.problem(found[0], found[1], self.name))

    @property
    def kind(self):
        """The joint's :class:`~solver.model.joint_kinds.JointKind` (``JOINT_KINDS[type]``)."""
        return JOINT_KINDS[self.type]

    def used_fields(self):
        return ("name", "type", "body_i", "body_j", "origin", "at_point") + self.kind.fields


    def stop_coordinate(self):
        """The coordinate the stops act on (``limit_coordinate``; default: the first), or None when
        the joint has no stop (no limits set, ``stops`` false, or a kind without stops)."""
        if (not self.stops or "limit_coordinate" not in self.kind.fields
                or (self.lower_limit is None and self.upper_limit is None)):
            return None
        return self.coordinates()[0] if self.limit_coordinate == "default" else self.limit_coordinate

    def coordinates(self):
        return self.kind.coordinates


# the two attachment points of an element acting along a line (spring-damper, linear actuator)
TWO_POINTS = (Field("body_i", "body"), Field("body_j", "body"),
              Field("point_i", "vec3", "m", default=(0.0, 0.0, 0.0), doc="attachment on body_i, global"),
              Field("point_j", "vec3", "m", default=(0.0, 0.0, 0.0), doc="attachment on body_j, global"))


class SpringDamper(Element):
    """Translational spring–damper–actuator between point_i (on body_i) and point_j (on body_j).

    Tension (pulling the points together) T = k (l − l0) + c l̇ + preload + force(t)."""
    KIND = "spring_damper"
    COLLECTION = "forces"
    LABEL = "Spring-damper"
    GLYPH = "spring"
    NAME_PREFIX = "spring"
    NEW = {"body_i": "@ground", "body_j": "@body", "point_i": "@above", "point_j": "@cm", "stiffness": 100.0}
    ATTACHES_TO_FLEXIBLE = True
    FIELDS = (
        NAME,
        *TWO_POINTS,
        Field("stiffness", "float", "N/m", default=0.0, minimum=0.0),
        Field("damping", "float", "N·s/m", default=0.0, minimum=0.0),
        Field("free_length", "optional_float", "m", default=None, minimum=0.0,
              doc="free length (None = initial distance)"),
        Field("preload", "float", "N", default=0.0, doc="tension at the free length"),
        Field("force", "function", "N", default=0.0, doc="actuator tension as a function of t"),
    )

    def check(self):
        if self.body_i == self.body_j:
            raise ModelError(self.problem("body_j", "must differ from body_i", self.name))


class LinearActuator(Element):
    """Linear actuator between point_i (on body_i) and point_j (on body_j): a tension along the line
    between the points given as a function of t — an expression or a force table
    (``{"t": [...], "values": [...]}``, a cubic spline) — pulling the points together when positive."""
    KIND = "linear_actuator"
    COLLECTION = "forces"
    LABEL = "Linear actuator"
    GLYPH = "spring"
    ICON = "spring_damper"
    NEW = {"body_i": "@ground", "body_j": "@body", "point_i": "@above", "point_j": "@cm"}
    ATTACHES_TO_FLEXIBLE = True
    FIELDS = (
        NAME,
        *TWO_POINTS,
        Field("force", "function", "N", default=0.0, doc="tension as a function of t (expression or table)"),
    )

    def check(self):
        if self.body_i == self.body_j:
            raise ModelError(self.problem("body_j", "must differ from body_i", self.name))


class RotationalSpringDamper(Element):
    """Torsional spring–damper on a joint's rotation coordinate θ:
    torque on body_j about the joint axis τ = −k (θ − θ0) − c θ̇ − preload."""
    KIND = "rotational_spring_damper"
    COLLECTION = "forces"
    LABEL = "Rotational spring-damper"
    GLYPH = "spiral"
    NAME_PREFIX = "rspring"
    NEW = {"joint": "@joint:rotation", "stiffness": 10.0}
    FIELDS = (
        NAME,
        Field("joint", "joint", doc="revolute, cylindrical or screw joint"),
        Field("stiffness", "float", "N·m/rad", default=0.0, minimum=0.0),
        Field("damping", "float", "N·m·s/rad", default=0.0, minimum=0.0),
        Field("free_angle", "float", "rad", default=0.0),
        Field("preload", "float", "N·m", default=0.0),
    )


class JointActuator(Element):
    """Generalized force F = gain·force(t) along one coordinate q of a joint (a motor); force(t) a
    number, an expression of t or a table (a declared input's target: an imported actuator's
    control, its gear the gain).  On a rotation coordinate it is the torque F z on body_j and −F z on body_i about
    the joint axis z (N·m); on a translation (translation, x, y) the force F a on body_j and −F a on
    body_i, both at body_j's joint point, a the coordinate's axis on body_i (N).  Its virtual power
    is F q̇ (:mod:`solver.joint_forces`); MuJoCo's ``<motor>`` and URDF's SimpleTransmission import
    as one (docs/import.md)."""
    KIND = "joint_actuator"
    COLLECTION = "forces"
    LABEL = "Joint actuator"
    GLYPH = "spiral"
    ICON = "rotational_spring_damper"
    NAME_PREFIX = "motor"
    NEW = {"joint": "@joint"}
    FIELDS = (
        NAME,
        Field("joint", "joint", doc="a joint with a coordinate (not spherical, universal, fixed, …)"),
        Field("force", "function", "N or N·m", default=0.0,
              doc="generalized force along the coordinate as a function of t (expression or table)"),
        Field("gain", "float", default=1.0, doc="factor on force(t): the applied F = gain·force(t)"),
        Field("coordinate", "enum", choices=DRIVER_COORDINATES, default="default",
              doc="which joint coordinate (default: the joint's first)"),
    )


FRICTION_JOINTS = ("revolute", "prismatic", "cylindrical", "spherical")


def stick_slip_fields(static, dynamic, stiction, transition):
    """The four parameters of the Adams stick–slip law (:mod:`solver.math.friction`: μ_s, μ_d, v_s,
    v_t), each a (field name, default) pair: joint friction and contact read the one law under the
    names of their own files."""
    (s_name, s_default), (d_name, d_default), (v_name, v_default), (t_name, t_default) = static, dynamic, stiction, transition
    return (Field(s_name, "float", default=s_default, minimum=0.0, doc="μ_s (stiction)"),
            Field(d_name, "float", default=d_default, minimum=0.0, doc="μ_d (sliding)"),
            Field(v_name, "float", "m/s", default=v_default, minimum=0.0, exclusive_min=True,
                  doc="v_s: slip speed at which μ_s is reached"),
            Field(t_name, "float", "m/s", default=t_default, minimum=0.0, exclusive_min=True,
                  doc="v_t > v_s: slip speed from which μ = μ_d"))


class JointFriction(Element):
    """Friction in a joint (Adams joint-friction model): Coulomb friction with stiction by the smooth
    stick–slip law μ(v) of :mod:`solver.math.friction` (μ_s below ``stiction_velocity``, μ_d beyond
    ``transition_velocity``) on the slip velocity of the joint's surfaces, plus viscous friction.
    The friction limit is μ(v)·S with the normal load S = N + preload (prismatic, cylindrical; S·radius
    as torque) or S = N + preload/radius (revolute, spherical: the limit torque μ (radius·N + preload));
    N is the joint's own reaction across its axis (spherical: all of it) plus |reaction moment
    across the axis|/``moment_arm`` (0: not counted), when ``reaction_load`` (relative formulation,
    :mod:`solver.joint_forces`).  It dissipates the power −(friction · slip) ≥ 0 and stores none."""
    KIND = "joint_friction"
    COLLECTION = "forces"
    LABEL = "Joint friction"
    GLYPH = None
    ICON = "rotational_spring_damper"
    NAME_PREFIX = "friction"
    NEW = {"joint": "@joint"}
    FIELDS = (
        NAME,
        Field("joint", "joint", doc="revolute, prismatic, cylindrical or spherical joint"),
        *stick_slip_fields(("static_coefficient", 0.1), ("dynamic_coefficient", 0.08),
                           ("stiction_velocity", 1.0e-3), ("transition_velocity", 2.0e-3)),
        Field("viscous", "float", "N·s/m or N·m·s/rad", default=0.0, minimum=0.0,
              doc="viscous friction per coordinate rate"),
        Field("preload", "float", "N or N·m", default=0.0, minimum=0.0,
              doc="normal load independent of the reaction (a torque for revolute and spherical joints)"),
        Field("radius", "float", "m", default=0.01, minimum=0.0, exclusive_min=True,
              doc="pin or ball radius: slip speed radius·ω, friction torque radius·force"),
        Field("moment_arm", "float", "m", default=0.0, minimum=0.0,
              doc="the reaction moment across the axis adds |M|/moment_arm to N (0: not counted)"),
        Field("reaction_load", "bool", default=True,
              doc="normal load from the joint reaction (relative formulation); false: preload only"),
    )

    def check(self):
        if self.transition_velocity <= self.stiction_velocity:
            raise ModelError(self.problem("transition_velocity", f"must be > stiction_velocity "
                                          f"({self.transition_velocity:g} <= {self.stiction_velocity:g})", self.name))


class Bushing(Element):
    """6-DOF linear bushing at ``origin`` (global axes at the initial configuration) between two
    bodies: force = −K_t δ − C_t δ̇ and torque = −K_r θ − C_r θ̇ on body_j (small relative rotation θ)."""
    KIND = "bushing"
    COLLECTION = "forces"
    LABEL = "Bushing"
    GLYPH = "bushing"
    NEW = {"body_i": "@ground", "body_j": "@body", "origin": "@cm", "stiffness": [1e4] * 3 + [1e2] * 3}
    ATTACHES_TO_FLEXIBLE = True
    FIELDS = (
        NAME,
        Field("body_i", "body"), Field("body_j", "body"),
        Field("origin", "vec3", "m", default=(0.0, 0.0, 0.0)),
        Field("stiffness", "vec6", "N/m, N·m/rad", default=(0.0,) * 6, minimum=0.0),
        Field("damping", "vec6", "N·s/m, N·m·s/rad", default=(0.0,) * 6, minimum=0.0),
    )

    def check(self):
        if self.body_i == self.body_j:
            raise ModelError(self.problem("body_j", "must differ from body_i", self.name))


class AppliedForce(Element):
    """Force on a body at a body-fixed point (global position at the initial configuration);
    components along global axes, each a number or an expression of t."""
    KIND = "force"
    COLLECTION = "forces"
    LABEL = "Force"
    GLYPH = "arrow"
    NEW = {"body": "@body", "point": "@cm"}
    ATTACHES_TO_FLEXIBLE = True
    FIELDS = (
        NAME,
        Field("body", "body"),
        Field("force", "function_vec3", "N", default=(0.0, 0.0, 0.0)),
        Field("point", "optional_vec3", "m", default=None, doc="application point (None = CM)"),
    )


class AppliedTorque(Element):
    """Torque on a body, components along global axes, each a number or an expression of t.
    On a flexible body it acts at the FE node nearest ``point`` (None: the beam's midpoint)."""
    KIND = "torque"
    COLLECTION = "forces"
    LABEL = "Torque"
    GLYPH = "torque"
    ATTACHES_TO_FLEXIBLE = True
    FIELDS = (
        NAME,
        Field("body", "body"),
        Field("torque", "function_vec3", "N·m", default=(0.0, 0.0, 0.0)),
        Field("point", "optional_vec3", "m", default=None,
              doc="flexible bodies: the node nearest this point takes the torque (None = midpoint)"),
    )


class Road(Element):
    """Road surface for tires (global, z up): flat at ``height`` plus one obstacle profile along x,
    constant across y (:mod:`solver.vehicle.road`).  Applies no load; tires name it in ``road``."""
    KIND = "road"
    COLLECTION = "forces"
    LABEL = "Road"
    GLYPH = None
    FIELDS = (
        NAME,
        Field("height", "float", "m", default=0.0, doc="height z of the flat road"),
        Field("profile", "enum", choices=ROAD_PROFILES, default="flat",
              doc="obstacle: flat, half_sine bump, step (smooth ramp) or table h(x)"),
        Field("start", "float", "m", default=0.0, doc="x where the obstacle begins"),
        Field("obstacle_height", "float", "m", default=0.1, doc="bump or step height"),
        Field("obstacle_length", "float", "m", default=1.0, minimum=0.0, exclusive_min=True,
              doc="bump length, or ramp length of the step"),
        Field("table", "function", "m", default=0.0,
              doc="profile 'table': height above the road as a function of x written as t "
                  "(number, expression or table {t: x values, values: heights})"),
    )


class Tire(Element):
    """Tire on a wheel body rolling on a road: penetration spring–damper with contact loss, Magic
    Formula slip forces with combined slip, rolling resistance, aligning moment
    (:mod:`solver.vehicle.tire`; defaults: a passenger-car tire, docs/vehicle.md)."""
    KIND = "tire"
    COLLECTION = "forces"
    LABEL = "Tire"
    GLYPH = None
    NEW = {"body": "@body", "road": "@first:road"}
    FIELDS = (
        NAME,
        Field("body", "body", doc="wheel body (its CM is the wheel centre)"),
        Field("road", "name", doc="road element the tire rolls on", extra={"reference": "road"}),
        Field("axis", "unit_vec3", default=(0.0, 1.0, 0.0), doc="spin axis, global at the initial configuration"),
        Field("radius", "float", "m", default=0.3, minimum=0.0, exclusive_min=True, doc="free radius R"),
        Field("stiffness", "float", "N/m", default=2.0e5, minimum=0.0, exclusive_min=True,
              doc="vertical stiffness k"),
        Field("damping", "float", "N·s/m", default=500.0, minimum=0.0, doc="vertical damping c"),
        Field("friction", "float", default=1.0, minimum=0.0, exclusive_min=True, doc="peak friction μ"),
        Field("slip_stiffness", "float", "1", default=20.0, minimum=0.0, exclusive_min=True,
              doc="c_κ = (∂F_x/∂κ)/F_z at κ = 0"),
        Field("cornering_stiffness", "float", "1/rad", default=15.0, minimum=0.0, exclusive_min=True,
              doc="c_α = (∂F_y/∂α)/F_z at α = 0"),
        Field("shape_x", "float", default=1.65, minimum=0.0, exclusive_min=True, maximum=2.0,
              doc="Magic Formula shape factor C_x"),
        Field("shape_y", "float", default=1.3, minimum=0.0, exclusive_min=True, maximum=2.0,
              doc="Magic Formula shape factor C_y"),
        Field("curvature_x", "float", default=0.0, maximum=1.0, doc="Magic Formula curvature factor E_x"),
        Field("curvature_y", "float", default=-1.0, maximum=1.0, doc="Magic Formula curvature factor E_y"),
        Field("rbx1", "float", default=13.046, minimum=0.0, advanced=True, doc="combined slip r_Bx1"),
        Field("rbx2", "float", default=9.718, minimum=0.0, advanced=True, doc="combined slip r_Bx2"),
        Field("rby1", "float", default=10.622, minimum=0.0, advanced=True, doc="combined slip r_By1"),
        Field("rby2", "float", default=7.82, minimum=0.0, advanced=True, doc="combined slip r_By2"),
        Field("rolling_resistance", "float", default=0.012, minimum=0.0, doc="coefficient f_r"),
        Field("trail", "float", "m", default=0.03, minimum=0.0, doc="pneumatic trail t_0 at α = 0"),
        Field("low_speed", "float", "m/s", default=0.1, minimum=0.0, exclusive_min=True, advanced=True,
              doc="slip regularization speed v_ε"),
    )


class SpeedControl(Element):
    """PI control of the chassis forward speed by a drive torque on one axle's wheels (reacted on
    their carriers); integral term from the distance the wheels rolled
    (:mod:`solver.vehicle.speed_control`)."""
    KIND = "speed_control"
    COLLECTION = "forces"
    LABEL = "Speed controller"
    GLYPH = None
    # the selected body is the chassis; the driven wheels the first two bodies with tires and their
    # carriers the chassis (the property editor changes them, e.g. to the knuckles)
    NEW = {"chassis": "@body", "left_wheel": "@body_of:tire:0", "right_wheel": "@body_of:tire:1",
           "left_carrier": "@body", "right_carrier": "@body"}
    FIELDS = (
        NAME,
        Field("chassis", "body", doc="body whose forward speed is controlled"),
        Field("forward", "unit_vec3", default=(1.0, 0.0, 0.0), doc="chassis forward axis, global at the start"),
        Field("target_speed", "float", "m/s", default=10.0, doc="target forward speed v*"),
        Field("kp", "float", "N·m·s/m", default=1000.0, minimum=0.0, doc="proportional gain"),
        Field("ki", "float", "N·m/m", default=500.0, minimum=0.0, doc="integral gain"),
        Field("max_torque", "float", "N·m", default=3000.0, minimum=0.0, exclusive_min=True,
              doc="saturation of the total drive torque"),
        Field("left_wheel", "body"), Field("left_carrier", "body", doc="body the left wheel turns on"),
        Field("right_wheel", "body"), Field("right_carrier", "body", doc="body the right wheel turns on"),
        Field("axis", "unit_vec3", default=(0.0, 1.0, 0.0),
              doc="wheel spin axis, global at the start (positive torque drives forward)"),
        Field("radius", "float", "m", default=0.3, minimum=0.0, exclusive_min=True, doc="wheel rolling radius"),
    )

    def check(self):
        for side in ("left", "right"):
            if self.values[f"{side}_wheel"] == self.values[f"{side}_carrier"]:
                raise ModelError(self.problem(f"{side}_carrier", f"must differ from {side}_wheel", self.name))
        if self.left_wheel == self.right_wheel:
            raise ModelError(self.problem("right_wheel", "must differ from left_wheel", self.name))


def check_motion_at_start(element, field):
    """Raise ModelError naming ``field`` of ``element`` (a prescribed motion: a driver's expression,
    the default of an input that replaces one) unless the motion, its rate and its acceleration are
    finite at t = 0, where every run starts (``1/t``, ``log(t)``, ``sqrt(t)`` are not)."""
    from ..expressions import time_function
    fn = time_function(element.values[field])
    for what, value in (("value", fn.value(0.0)), ("first derivative", fn.d1(0.0)), ("second derivative", fn.d2(0.0))):
        if not math.isfinite(value):
            raise ModelError(element.problem(field, f"must be finite at t = 0, where a run starts; its {what} there "
                                                    f"is {value}", element.name))


# The contact law's fields (solver.contact.laws.ContactLaw), one declaration for the contact
# element and the contact group.
CONTACT_LAW_FIELDS = (
    Field("stiffness", "float", minimum=0.0, exclusive_min=True, doc="k of k δ^e (N/m^e)"),
    Field("exponent", "float", default=1.5, minimum=1.0, doc="e of k δ^e (1.5: Hertz)"),
    Field("damping", "float", default=0.0, minimum=0.0,
          doc="impact: c_max (N·s/m); hunt_crossley: λ of λ δ^e δ̇ (N·s/m^(e+1))"),
    Field("damping_law", "enum", choices=("impact", "hunt_crossley"), default="impact",
          doc="impact: damping ramped in by STEP over penetration_depth; hunt_crossley: damping·δ^e"),
    Field("penetration_depth", "float", "m", default=1e-4, minimum=0.0, exclusive_min=True,
          doc="impact: penetration at which the full damping acts"),
    *stick_slip_fields(("static_friction", 0.0), ("dynamic_friction", 0.0), ("stiction_velocity", 1e-3),
                       ("friction_velocity", 1e-2)),
)


def check_contact_law(element):
    """The contact law's check across its fields: friction_velocity > stiction_velocity."""
    if element.friction_velocity <= element.stiction_velocity:
        raise ModelError(element.problem("friction_velocity", f"must be > stiction_velocity ({element.friction_velocity:g}"
                                         f" <= {element.stiction_velocity:g})", element.name))


class Contact(Element):
    """Compliant contact between the geometry of body_i and body_j (:mod:`solver.contact`): at each
    contact point of penetration δ > 0 a normal force f_n = max(0, k δ^e + c(δ) δ̇) and a
    regularized Coulomb friction force with stiction, −μ(|v_t|) f_n v_t/|v_t|, act on body_j (their
    opposite on body_i).  c(δ) = damping·STEP(δ; 0, penetration_depth) ("impact", the Adams
    IMPACT function) or damping·δ^e ("hunt_crossley", Hunt & Crossley 1975).  ``geometry_i``,
    ``geometry_j`` (body axes) replace the body's own geometry; shape none = the body's own."""
    KIND = "contact"
    COLLECTION = "forces"
    LABEL = "Contact"
    GLYPH = None
    NAME_PREFIX = "contact"
    # a new contact: the selected body on a ground plane through the origin, normal +y (the default
    # gravity's up; the property editor changes it)
    NEW = {"body_i": "@ground", "body_j": "@body", "stiffness": 1e6, "damping": 1e3,
           "geometry_i": {"shape": "plane", "point": [0.0, 0.0, 0.0], "normal": [0.0, 1.0, 0.0]}}
    FIELDS = (
        NAME,
        Field("body_i", "body"), Field("body_j", "body", doc="the contact force is reported on body_j"),
        Field("geometry_i", "geometry", default={"shape": "none"},
              doc="contact shape on body_i, body axes (none = body_i's own geometry)"),
        Field("geometry_j", "geometry", default={"shape": "none"},
              doc="contact shape on body_j, body axes (none = body_j's own geometry)"),
        *CONTACT_LAW_FIELDS,
    )

    def check(self):
        if self.body_i == self.body_j:
            raise ModelError(self.problem("body_j", "must differ from body_i", self.name))
        check_contact_law(self)

    def shape(self, side, bodies):
        """The contact geometry of side "i" or "j": its own field, else the body's geometry (None
        for ground without one)."""
        own = self.values[f"geometry_{side}"]
        if own["shape"] != "none":
            return own
        body = bodies.get(self.values[f"body_{side}"])
        return None if body is None else body.geometry


class ContactGroup(Element):
    """Compliant contact between every pair of a set of bodies (MuJoCo's "all bodies collide"), each
    touching with its own geometry, by one law (the fields of :class:`Contact`).  No pair is stored:
    the broad phase finds the pairs whose bounding spheres overlap at each evaluation, so a group of
    n bodies costs O(n) memory whatever its n(n − 1)/2 pairs (docs/contact.md).  A pair (a, b),
    a listed before b, acts as a contact element with body_i = a and body_j = b."""
    KIND = "contact_group"
    COLLECTION = "forces"
    LABEL = "Contact group"
    GLYPH = None
    NAME_PREFIX = "contacts"
    NEW = {"bodies": "@shaped", "stiffness": 1e6, "damping": 1e3}     # every body with a finite shape
    FIELDS = (
        NAME,
        Field("bodies", "bodies", doc="the bodies that touch each other (names, at least 2)"),
        *CONTACT_LAW_FIELDS,
    )

    def check(self):
        check_contact_law(self)


class Driver(Element):
    """Prescribed joint coordinate as a function of t (expression or table {"t":…, "values":…}).
    The coordinate is measured from the initial configuration (zero there)."""
    KIND = "driver"
    COLLECTION = "drivers"
    FIELDS = (
        NAME,
        Field("joint", "joint"),
        Field("expression", "function", "m or rad", doc="coordinate as a function of t"),
        Field("coordinate", "enum", choices=DRIVER_COORDINATES, default="default",
              doc="which joint coordinate (default: the joint's first)"),
    )

    def check(self):
        check_motion_at_start(self, "expression")


class Coupler(Element):
    """A coupler constraint between the coordinates of two joints (gear pair, rack-and-pinion, belt,
    URDF ``<mimic>``, MJCF ``<equality joint>``): the algebraic row

        θ_j − ratio·θ_i − offset = 0,   or with ``coefficients`` [c_0, c_1, …]:  θ_j − Σ c_k θ_i^k = 0,

    θ_i, θ_j the joint coordinates a driver measures (zero at the assembly configuration; angles
    unwrapped).  It is a driver row θ_j − f = 0 whose f is the polynomial of θ_i instead of a
    function of t (:class:`solver.formulations.rows.DriverRow` with a ``source``).  Its multiplier
    is the generalized force the coupler applies along θ_j (the gear's tooth torque on joint_j's
    body, the rack force): ``Results.coupler_force``; along θ_i it applies −p'(θ_i) times that."""
    KIND = "coupler"
    COLLECTION = "couplers"
    LABEL = "Coupler"
    # the selected (or last) joint follows the joint with a coordinate before it
    NEW = {"joint_i": "@other_joint", "joint_j": "@joint"}
    FIELDS = (
        NAME,
        Field("joint_i", "joint", doc="leading joint: its coordinate θ_i drives the other"),
        Field("joint_j", "joint", doc="following joint: θ_j = ratio·θ_i + offset"),
        Field("ratio", "float", default=1.0,
              doc="dθ_j/dθ_i (a gear pair: −r_i/r_j; rack-and-pinion: the pinion radius)"),
        Field("offset", "float", "m or rad", default=0.0, doc="θ_j when θ_i = 0"),
        Field("coefficients", "polynomial", default=None,
              doc="c_0, c_1, …: θ_j = Σ c_k θ_i^k in place of ratio and offset (empty: linear)"),
        Field("coordinate_i", "enum", choices=DRIVER_COORDINATES, default="default",
              doc="which coordinate of joint_i (default: its first)"),
        Field("coordinate_j", "enum", choices=DRIVER_COORDINATES, default="default",
              doc="which coordinate of joint_j (default: its first)"),
    )

    def check(self):
        if self.joint_i == self.joint_j:
            raise ModelError(self.problem("joint_j", f"must differ from joint_i ('{self.joint_i}'): a coupler "
                                                     "relates the coordinates of two joints", self.name))
        if self.coefficients is not None and (self.ratio != 1.0 or self.offset != 0.0):
            raise ModelError(self.problem("coefficients", "give either coefficients or ratio and offset "
                                          f"(ratio {self.ratio:g}, offset {self.offset:g})", self.name))

    def polynomial(self) -> tuple[float, ...]:
        """(c_0, c_1, …) of θ_j = Σ c_k θ_i^k: ``coefficients``, else (offset, ratio)."""
        return tuple(self.coefficients) if self.coefficients is not None else (self.offset, self.ratio)


# Size of a flexible body: beam elements (800 took 89 s and 2.4 GB for 0.01 s) and modes kept, also of
# a modes file (solver.flexible.modes_file: E2 alone is 72·k² bytes).
MAX_BEAM_ELEMENTS = 200
MAX_MODES = 200


class FlexibleBody(Element):
    """A straight flexible beam (floating frame of reference, modal coordinates; Kim & Yoo (1997)).

    Euler–Bernoulli beam elements between ``start`` and ``end`` (global, initial configuration);
    body frame at the midpoint with x along the beam and z along ``z_axis`` (made perpendicular to
    x): the section's I_z governs bending in the x–y plane.  Joints attach at the FE node nearest
    their origin (:mod:`solver.flexible.joints`), force elements at the node nearest their point
    (:mod:`solver.flexible.loads`).  Modes (:mod:`solver.flexible.modal`): by default Craig–Bampton
    with those nodes as interface, accurate for how the body is attached (an attached beam's
    frequencies within 1e-3 of Euler–Bernoulli, docs/formulations.md); ``interface="free"`` keeps
    free–free modes, too stiff when attached (a clamped beam +63 % with 2 modes)."""
    KIND = "flexible_body"
    COLLECTION = "flexible_bodies"
    FIELDS = (
        NAME,
        Field("start", "vec3", "m", doc="first end of the beam axis, global"),
        Field("end", "vec3", "m", doc="second end of the beam axis, global"),
        Field("z_axis", "unit_vec3", default=(0.0, 0.0, 1.0), doc="section z axis (bending about it: Iz)"),
        Field("area", "float", "m²", doc="section area", minimum=0.0, exclusive_min=True),
        Field("Iy", "float", "m⁴", doc="second moment about the section y axis", minimum=0.0, exclusive_min=True),
        Field("Iz", "float", "m⁴", doc="second moment about the section z axis", minimum=0.0, exclusive_min=True),
        Field("J", "float", "m⁴", doc="torsion constant", minimum=0.0, exclusive_min=True),
        Field("cy", "float", "m", default=0.0, minimum=0.0, doc="extreme fibre distance along y (stress)"),
        Field("cz", "float", "m", default=0.0, minimum=0.0, doc="extreme fibre distance along z (stress)"),
        Field("ct", "float", "m", default=0.0, minimum=0.0, doc="torsion stress radius"),
        Field("density", "float", "kg/m³", minimum=0.0, exclusive_min=True),
        Field("youngs", "float", "Pa", doc="Young's modulus", minimum=0.0, exclusive_min=True),
        Field("poisson", "float", default=0.3, minimum=-0.99, maximum=0.49, doc="Poisson's ratio"),
        Field("elements", "int", default=10, minimum=1, maximum=MAX_BEAM_ELEMENTS, doc="number of beam elements"),
        Field("modes", "int", default=2, minimum=0, maximum=MAX_MODES,
              doc="free–free: elastic modes kept; Craig–Bampton: fixed-interface modes (plus 6 per "
                  "interface node − 6 constraint modes)"),
        Field("damping_ratio", "float", default=0.0, minimum=0.0, doc="modal damping ratio ζ"),
        Field("interface", "enum", choices=("free", "craig_bampton"), default="craig_bampton",
              doc="craig_bampton: constraint modes of the joint and force nodes + fixed-interface modes "
                  "(free–free when nothing attaches); free: free–free modes (stiff when attached)"),
        Field("velocity", "vec3", "m/s", default=(0.0, 0.0, 0.0), doc="initial velocity of the midpoint"),
        Field("angular_velocity", "vec3", "rad/s", default=(0.0, 0.0, 0.0), doc="initial angular velocity"),
        Field("modes_file", "str", default="",
              doc="externally computed modes (.npz, docs/file-format.md): used instead of the beam's own "
                  "section, material, elements, modes and interface; empty = the beam's"),
    )

    base_dir = ""        # the project file's folder (set by Model): relative modes_file paths start there

    @property
    def modes_file(self):
        """The modes file.  In a model read from a project file (``base_dir`` set) the path must stay
        in the project file's folder and is taken from there (never from the working directory);
        ModelError naming the field otherwise (:func:`solver.model.paths.confined`).  A model built
        in a script may name any file."""
        path = self.values["modes_file"]
        if not (path and self.base_dir):
            return path
        return confined(self.base_dir, path, f"flexible_bodies.{self.name}.modes_file")

    def check(self):
        import numpy as np
        d = np.subtract(self.end, self.start)
        if np.linalg.norm(d) < 1e-9:
            raise ModelError(self.problem("end", "must differ from start", self.name))
        if np.linalg.norm(np.cross(d, self.z_axis)) < 1e-6 * np.linalg.norm(d):
            raise ModelError(self.problem("z_axis", "must not be parallel to the beam", self.name))


INTEGRATORS = ("auto", "adams", "rk", "rk45", "dop853", "bdf", "radau", "galpha")
FORMULATIONS = ("auto", "cartesian", "relative")
PARTITIONINGS = ("lu", "qr", "svd", "hybrid")
CONSTRAINT_FORMS = ("conventional", "parametric")
REACTION_METHODS = ("nonrecursive", "newton-euler")
DISPLAY_UNITS = ("SI", "mm-kg-s", "mm-t-s")   # GUI display only: app/units.py
DISPLAY_ANGLES = ("rad", "deg")


# Output rows of a run (t_end / output_step + 1): at most MAX_OUTPUT_ROWS kept in memory (a pendulum's
# row is ≈ 1.2 kB: 10⁶ rows took 1.2 GB), at most MAX_STREAMED_ROWS when the results stream to an HDF5
# file (simulate(results_path=...), mbs run --out): the output times alone are 8 bytes a row.
MAX_OUTPUT_ROWS = 200_000
MAX_STREAMED_ROWS = 10_000_000
CODEGEN_CHOICES = ("auto", "on", "off")
PLANAR_CHOICES = ("off", "auto", "xy", "yz", "zx")     # solver.formulations.planar


class Settings(Element):
    """Solver settings saved with the project; simulate() arguments override them."""
    KIND = "settings"
    FIELDS = (
        Field("name", "name", default="settings"),
        Field("t_end", "float", "s", default=1.0, minimum=0.0, exclusive_min=True),
        Field("output_step", "float", "s", default=0.01, minimum=0.0, exclusive_min=True),
        Field("formulation", "enum", choices=FORMULATIONS, default="auto",
              doc="auto: relative (recursive joint coordinates) unless the model has flexible bodies or uses "
                  "the parametric joint form or generalized-α, which need the Cartesian formulation"),
        Field("partitioning", "enum", choices=PARTITIONINGS, default="qr"),
        Field("integrator", "enum", choices=INTEGRATORS, default="auto",
              doc="auto: Dormand–Prince 8(5,3) (DOP853) stepped in C when the run uses generated kernels and nothing in "
                  "its right-hand side needs Python (switching to BDF when the model is stiff), else adams (LSODA); "
                  "rk45: Dormand–Prince 5(4), adams: LSODA's Adams–Moulton (switching to BDF when stiff) and bdf: "
                  "variable-order BDF, in C where they can (docs/codegen.md)"),
        Field("constraints", "enum", choices=CONSTRAINT_FORMS, default="conventional",
              doc="constraint form of the Cartesian formulation"),
        Field("reactions", "enum", choices=REACTION_METHODS, default="nonrecursive",
              doc="reaction-force method of the relative formulation"),
        Field("rtol", "float", default=1e-8, minimum=0.0, exclusive_min=True, maximum=0.1),
        Field("atol", "float", default=1e-10, minimum=0.0, exclusive_min=True),
        Field("max_step", "optional_float", "s", default=None, minimum=0.0, exclusive_min=True),
        Field("codegen", "enum", choices=CODEGEN_CHOICES, default="auto",
              doc="generated C kernels: auto = when a C compiler is found and the model is supported"),
        Field("planar", "enum", choices=PLANAR_CHOICES, default="off",
              doc="planar joint forms: off = 3-D joints; xy/yz/zx = the model moves in that plane (each joint "
                  "keeps its in-plane equations: no redundant out-of-plane constraints, out-of-plane reactions "
                  "zero); auto = the plane the model is planar in, else 3-D", extra=OMIT_AT_DEFAULT),
        Field("display_units", "enum", choices=DISPLAY_UNITS, default="SI",
              doc="units the GUI shows and reads numbers in (files stay SI)", extra=OMIT_AT_DEFAULT),
        Field("display_angles", "enum", choices=DISPLAY_ANGLES, default="rad",
              doc="angle unit the GUI shows and reads (files stay in rad)", extra=OMIT_AT_DEFAULT),
        Field("max_steps", "int", default=10_000_000, minimum=1, advanced=True,
              doc="integrator steps after which a run stops as failed (kind 'limit'), its results so far kept",
              extra=OMIT_AT_DEFAULT),
        Field("max_wall_time", "optional_float", "s", default=None, minimum=0.0, exclusive_min=True,
              advanced=True, doc="wall time after which a run stops as failed (kind 'limit'), its results so "
                                 "far kept; None = no limit", extra=OMIT_AT_DEFAULT),
    )

    def check(self):
        """At most MAX_STREAMED_ROWS output rows (checked before anything is allocated; simulate()
        allows MAX_OUTPUT_ROWS of them in memory: :meth:`rows_in_memory_problem`)."""
        rows = self.output_rows()
        if rows > MAX_STREAMED_ROWS:
            raise ModelError(self.problem("output_step", f"t_end / output_step gives {rows:.3g} output rows "
                                          f"(t_end {self.t_end:g} s, output_step {self.output_step:g} s), more "
                                          f"than {MAX_STREAMED_ROWS}; use a larger output_step or a shorter t_end",
                                          self.name))

    def output_rows(self) -> float:
        """The number of output rows a run makes (a float: it may be astronomically large)."""
        return self.t_end / self.output_step + 1.0

    def rows_in_memory_problem(self):
        """The message for a run whose results stay in memory, when its rows exceed MAX_OUTPUT_ROWS
        (else None)."""
        rows = self.output_rows()
        if rows <= MAX_OUTPUT_ROWS:
            return None
        return (f"t_end / output_step gives {rows:.3g} output rows (t_end {self.t_end:g} s, output_step "
                f"{self.output_step:g} s), more than the {MAX_OUTPUT_ROWS} kept in memory; use a larger "
                f"output_step, or stream the results to a file (mbs run --out FILE.h5, simulate(results_path="
                f"...)) for up to {MAX_STREAMED_ROWS}")



# The force element kinds (the file's "type"): each class holds its fields (file schema, validation, the
# GUI's editor), LABEL (menus) and GLYPH (how the viewport draws it: spring, spiral, bushing, arrow,
# torque, or None) with the GUI's declarations of Element (NEW, NAME_PREFIX, GLYPH_FIELDS, …);
# solver.forces.EVALUATORS holds how each is evaluated.
FORCE_CLASSES = {c.KIND: c for c in (SpringDamper, LinearActuator, RotationalSpringDamper, JointActuator, Bushing,
                                       AppliedForce, AppliedTorque, Road, Tire, SpeedControl, JointFriction, Contact,
                                       ContactGroup)}
FORCE_TYPES = tuple(FORCE_CLASSES)
class ModelInput(Element):
    """A value set from outside a run — by ``simulate(inputs=…)``, or by the importer of an exported
    FMU — in place of the time function of its ``target``: ``drivers.NAME.motion`` (a driver's
    coordinate, m or rad), ``forces.NAME.force`` (a spring-damper's or linear actuator's tension, N; a joint actuator's
    generalized force, N or N·m),
    ``forces.NAME.force.x|y|z`` (an applied force component, N) or ``forces.NAME.torque.x|y|z``
    (an applied torque component, N·m).  ``default``: its value when none is given."""
    KIND = "input"
    COLLECTION = "inputs"
    FIELDS = (
        NAME,
        Field("target", "str", doc="drivers.NAME.motion, forces.NAME.force, forces.NAME.force.x|y|z "
                                   "or forces.NAME.torque.x|y|z"),
        Field("default", "function", default=0.0, doc="value when no input is given (number, expression or table)"),
    )

    def check(self):
        parts = self.target.split(".")
        ok = (len(parts) == 3 and parts[0] == "drivers" and parts[2] == "motion") or (
            parts[:1] == ["forces"] and (parts[2:] == ["force"] or (len(parts) == 4 and parts[2] in ("force", "torque")
                                                                   and parts[3] in ("x", "y", "z"))))
        if not ok:
            raise ModelError(self.problem("target", f"must be drivers.NAME.motion, forces.NAME.force, "
                                                    f"forces.NAME.force.x|y|z or forces.NAME.torque.x|y|z; "
                                                    f"got {show_value(self.target)}", self.name))
        if parts[0] == "drivers":
            check_motion_at_start(self, "default")


class ModelOutput(Element):
    """A quantity of a run the model declares as an output (results, CSV, FMU): a path of
    ``solver.output_paths`` such as ``bodies.NAME.position.x``, ``joints.NAME.reaction_force.y``,
    ``joints.NAME.rotation`` or ``drivers.NAME.force``."""
    KIND = "output"
    COLLECTION = "outputs"
    FIELDS = (NAME, Field("quantity", "str", doc="a named output of a run (solver.output_paths)"))


class Measure(Element):
    """A user measure between two markers (either may be "ground"): ``distance`` (m), ``angle`` of
    marker_j about axis x, y or z of marker_i (rad) or relative ``velocity`` of marker_j (component
    x, y, z or magnitude, m/s) — :func:`solver.outputs.measure`; a declared output names it as
    ``measures.NAME``."""
    KIND = "measure"
    COLLECTION = "measures"
    FIELDS = (
        NAME,
        Field("kind", "enum", choices=("distance", "angle", "velocity"), default="distance"),
        Field("marker_i", "str", doc="reference marker (or ground)"),
        Field("marker_j", "str", doc="measured marker (or ground)"),
        Field("axis", "enum", choices=("", "x", "y", "z", "magnitude"), default="",
              doc="angle: x, y or z of marker_i; velocity: x, y, z or magnitude; distance: none"),
    )

    def check(self):
        allowed = {"distance": ("",), "angle": ("x", "y", "z"), "velocity": ("x", "y", "z", "magnitude")}[self.kind]
        if self.axis not in allowed:
            raise ModelError(self.problem("axis", f"a {self.kind} takes {', '.join(repr(a) for a in allowed)}; "
                                                  f"got {self.axis!r}", self.name))
        if self.marker_i == self.marker_j:
            raise ModelError(self.problem("marker_j", "must differ from marker_i", self.name))


ELEMENT_CLASSES = {"bodies": Body, "flexible_bodies": FlexibleBody, "markers": Marker, "joints": Joint,
                   "drivers": Driver, "couplers": Coupler, "measures": Measure, "inputs": ModelInput, "outputs": ModelOutput}
