"""The editable model: the one source of truth the GUI edits and the solver compiles.

A :class:`Model` holds named elements in collections (bodies, markers, joints, forces, drivers),
gravity and solver settings.  Every change goes through a method that validates it and then
announces it to subscribers (``subscribe(callback)``), so views (tree, viewport) stay in sync.
Names are unique across the whole model; ``"ground"`` is reserved for the fixed global frame.
"""
from __future__ import annotations

import copy
import os
from dataclasses import replace
from itertools import chain

import numpy as np

from ..errors import ModelError, Problem
from ..expression_budget import ExpressionBudget
from .design import Link, Point, derived_fields, derived_values
from .elements import (Body, Marker, Joint, Driver, Coupler, Settings, FORCE_CLASSES, FRICTION_JOINTS, ELEMENT_CLASSES,
                       Element, FlexibleBody, Measure, ModelInput, ModelOutput)
from .fields import MAX_SHOWN, Field, FieldProblem, show_names, show_value
from .sections import Material, Section

GROUND = "ground"
COLLECTIONS = ("points", "bodies", "flexible_bodies", "markers", "joints", "forces", "drivers", "couplers", "measures",
               "inputs", "outputs")
# The project file's lists, in the order they are read (a list's elements may refer to earlier lists'): links
# are bodies of the model kept in their own list, since their file form differs (solver.model.design).
FILE_CLASSES = {"points": Point, "bodies": Body, "links": Link, **ELEMENT_CLASSES}
FILE_LISTS = ("points", "bodies", "links") + COLLECTIONS[2:]


def attaching_kinds() -> list[str]:
    """The element kinds that may attach to a flexible body (their ``ATTACHES_TO_FLEXIBLE``)."""
    return [c.KIND for c in (Joint, *FORCE_CLASSES.values()) if c.ATTACHES_TO_FLEXIBLE]


class Model:
    """A multibody model (the public contract: README tour, tests/test_public_contract.py).

    >>> m = Model(name="pendulum", gravity=(0, -9.81, 0))
    >>> m.add_body("bob", mass=1.0, inertia=(1e-3, 1e-3, 1e-3), position=(0, -1, 0))
    >>> m.add_joint("pivot", "revolute", "ground", "bob", origin=(0, 0, 0), axis=(0, 0, 1))
    """

    GRAVITY_FIELD = Field("gravity", "vec3", "m/s²", default=(0.0, -9.81, 0.0))

    def __init__(self, name="model", gravity=(0.0, -9.81, 0.0)):
        self._name = _coerce(Field("name", "name"), name, "model") if isinstance(name, str) and name.strip() \
            else "model"
        self._gravity = _coerce(self.GRAVITY_FIELD, gravity, "model")
        self._collections = {c: {} for c in COLLECTIONS}
        self.settings = Settings()
        self.view = {}
        self._base_dir = ""
        self._subscribers = []

    # ---- public API: properties ---------------------------------------------------------------
    @property
    def name(self):
        return self._name

    @name.setter
    def name(self, value):
        self._name = _coerce(Field("name", "name"), value, "model")
        self._emit("changed", "model", None, "name")

    @property
    def base_dir(self) -> str:
        """The folder of the project file the model was read from or saved to ("" for none):
        relative paths in the model (a flexible body's modes_file) are taken from there."""
        return self._base_dir

    @base_dir.setter
    def base_dir(self, folder):
        self._base_dir = os.fspath(folder)
        for fb in self._collections["flexible_bodies"].values():
            fb.base_dir = self._base_dir

    @property
    def gravity(self):
        return np.array(self._gravity)

    @gravity.setter
    def gravity(self, value):
        self._gravity = _coerce(self.GRAVITY_FIELD, value, "model")
        self._emit("changed", "model", None, "gravity")

    @property
    def points(self):
        """Design points (:class:`~solver.model.design.Point`), name → point."""
        return dict(self._collections["points"])

    @property
    def bodies(self):
        """Rigid bodies, links (:class:`~solver.model.design.Link`, derived from design points) included."""
        return dict(self._collections["bodies"])

    @property
    def flexible_bodies(self):
        return dict(self._collections["flexible_bodies"])

    @property
    def markers(self):
        return dict(self._collections["markers"])

    @property
    def joints(self):
        return dict(self._collections["joints"])

    @property
    def forces(self):
        return dict(self._collections["forces"])

    @property
    def drivers(self):
        return dict(self._collections["drivers"])

    @property
    def couplers(self):
        return dict(self._collections["couplers"])

    @property
    def measures(self):
        return dict(self._collections["measures"])

    @property
    def inputs(self):
        return dict(self._collections["inputs"])

    @property
    def outputs(self):
        return dict(self._collections["outputs"])

    def elements(self):
        """All elements in collection order."""
        for c in COLLECTIONS:
            yield from self._collections[c].values()

    def element(self, name) -> Element:
        for c in COLLECTIONS:
            if name in self._collections[c]:
                return self._collections[c][name]
        raise ModelError(f"no element named '{name}' (elements: {show_names((e.name for e in self.elements()), sum(map(len, self._collections.values())))})")

    def __contains__(self, name):
        return any(name in self._collections[c] for c in COLLECTIONS)

    # ---- public API: building -----------------------------------------------------------------
    def add_body(self, name, mass, inertia, position=(0.0, 0.0, 0.0), orientation=None,
                 velocity=(0.0, 0.0, 0.0), angular_velocity=(0.0, 0.0, 0.0), geometry=None):
        return self.add(Body(name=name, mass=mass, inertia=inertia, position=position,
                             orientation=orientation, velocity=velocity,
                             angular_velocity=angular_velocity, geometry=geometry))

    def add_flexible_beam(self, name, start, end, section, material, elements=10, modes=2,
                          damping_ratio=0.0, z_axis=(0.0, 0.0, 1.0), interface="craig_bampton",
                          velocity=(0.0, 0.0, 0.0), angular_velocity=(0.0, 0.0, 0.0), modes_file=""):
        """A flexible beam body (:class:`~solver.model.elements.FlexibleBody`).  section:
        {"area", "Iy", "Iz", "J"[, "cy", "cz", "ct"]} or a rectangle {"height" (along y), "width"
        (along z)}; material: {"density", "youngs"[, "poisson"]}; modes_file: a .npz of externally
        computed modes used instead (:mod:`solver.flexible.modes_file`)."""
        sec = Section.from_dict(section, f"flexible_body '{name}'.section")
        mat = Material.from_dict(material, f"flexible_body '{name}'.material")
        return self.add(FlexibleBody(
            name=name, start=start, end=end, z_axis=z_axis, area=sec.area, Iy=sec.Iy, Iz=sec.Iz, J=sec.J,
            cy=sec.cy, cz=sec.cz, ct=sec.ct, density=mat.density, youngs=mat.youngs, poisson=mat.poisson,
            elements=elements, modes=modes, damping_ratio=damping_ratio, interface=interface,
            velocity=velocity, angular_velocity=angular_velocity, modes_file=modes_file))

    def add_point(self, name, position):
        """A design point (:class:`~solver.model.design.Point`) that links and joints may refer to."""
        return self.add(Point(name=name, position=position))

    def add_link(self, name, point_i, point_j, **fields):
        """A rigid link between two design points (:class:`~solver.model.design.Link`; fields
        section rectangle|round, width, height, wall, density, z_axis, velocity, angular_velocity):
        pose, mass, inertia and geometry follow its points and section."""
        return self.add(Link(name=name, point_i=point_i, point_j=point_j, **fields))

    def add_marker(self, name, body, position=(0.0, 0.0, 0.0), orientation=None):
        return self.add(Marker(name=name, body=body, position=position, orientation=orientation))

    def add_joint(self, name, type, body_i, body_j, origin=(0.0, 0.0, 0.0), axis=(0.0, 0.0, 1.0),
                  **options):
        """options: axis2 (universal), pitch (screw, m/rev), origin2 and length (links)."""
        return self.add(Joint(name=name, type=type, body_i=body_i, body_j=body_j, origin=origin,
                              axis=axis, **options))

    def add_spring_damper(self, name, body_i, body_j, point_i=(0.0, 0.0, 0.0), point_j=(0.0, 0.0, 0.0),
                          stiffness=0.0, damping=0.0, free_length=None, preload=0.0, force=0.0):
        return self.add(FORCE_CLASSES["spring_damper"](
            name=name, body_i=body_i, body_j=body_j, point_i=point_i, point_j=point_j,
            stiffness=stiffness, damping=damping, free_length=free_length, preload=preload, force=force))

    def add_rotational_spring_damper(self, name, joint, stiffness=0.0, damping=0.0, free_angle=0.0,
                                     preload=0.0):
        return self.add(FORCE_CLASSES["rotational_spring_damper"](
            name=name, joint=joint, stiffness=stiffness, damping=damping, free_angle=free_angle,
            preload=preload))

    def add_joint_actuator(self, name, joint, force=0.0, gain=1.0, coordinate="default"):
        """A generalized force gain·``force`` (t) along a joint coordinate
        (:class:`~solver.model.elements.JointActuator`: N·m on a rotation, N on a translation)."""
        return self.add(FORCE_CLASSES["joint_actuator"](name=name, joint=joint, force=force, gain=gain,
                                                        coordinate=coordinate))

    def add_joint_friction(self, name, joint, **fields):
        """Friction in a revolute, prismatic, cylindrical or spherical joint
        (:class:`~solver.model.elements.JointFriction`; fields static_coefficient,
        dynamic_coefficient, stiction_velocity, transition_velocity, viscous, preload, radius,
        moment_arm, reaction_load)."""
        return self.add(FORCE_CLASSES["joint_friction"](name=name, joint=joint, **fields))

    def add_bushing(self, name, body_i, body_j, origin=(0.0, 0.0, 0.0), stiffness=(0.0,) * 6,
                    damping=(0.0,) * 6):
        return self.add(FORCE_CLASSES["bushing"](name=name, body_i=body_i, body_j=body_j, origin=origin,
                                                 stiffness=stiffness, damping=damping))

    def add_force(self, name, body, force=(0.0, 0.0, 0.0), point=None):
        return self.add(FORCE_CLASSES["force"](name=name, body=body, force=force, point=point))

    def add_torque(self, name, body, torque=(0.0, 0.0, 0.0), point=None):
        """point: on a flexible body, the torque acts at the node nearest it (None: the midpoint)."""
        return self.add(FORCE_CLASSES["torque"](name=name, body=body, torque=torque, point=point))

    def add_road(self, name, **fields):
        """A road surface for tires (:class:`~solver.model.elements.Road`): fields height,
        profile (flat, half_sine, step, table), start, obstacle_height, obstacle_length, table."""
        return self.add(FORCE_CLASSES["road"](name=name, **fields))

    def add_tire(self, name, body, road, **fields):
        """A tire on wheel ``body`` rolling on ``road`` (:class:`~solver.model.elements.Tire`;
        fields axis, radius, stiffness, damping, Magic Formula parameters …)."""
        return self.add(FORCE_CLASSES["tire"](name=name, body=body, road=road, **fields))

    def add_speed_control(self, name, chassis, left_wheel, left_carrier, right_wheel, right_carrier, **fields):
        """PI speed control driving one axle (:class:`~solver.model.elements.SpeedControl`;
        fields forward, target_speed, kp, ki, max_torque, axis, radius)."""
        return self.add(FORCE_CLASSES["speed_control"](
            name=name, chassis=chassis, left_wheel=left_wheel, left_carrier=left_carrier,
            right_wheel=right_wheel, right_carrier=right_carrier, **fields))

    def add_contact(self, name, body_i, body_j, stiffness, damping=0.0, exponent=1.5, friction=(0.0, 0.0),
                    geometry_i=None, geometry_j=None, **fields):
        """Compliant contact between the geometry of two bodies (:class:`~solver.model.elements.Contact`,
        docs/contact.md); ``friction``: (static, dynamic) Coulomb coefficients; ``geometry_i``,
        ``geometry_j``: contact shapes in body axes (None = the body's own geometry); fields
        damping_law, penetration_depth, stiction_velocity, friction_velocity."""
        if not isinstance(friction, (list, tuple, np.ndarray)) or len(friction) != 2:
            raise ModelError(FORCE_CLASSES["contact"].problem(
                "static_friction", f"friction must be (static, dynamic); got {show_value(friction)}", name))
        return self.add(FORCE_CLASSES["contact"](
            name=name, body_i=body_i, body_j=body_j, stiffness=stiffness, damping=damping, exponent=exponent,
            static_friction=friction[0], dynamic_friction=friction[1], geometry_i=geometry_i,
            geometry_j=geometry_j, **fields))

    def add_contact_group(self, name, bodies, stiffness, damping=0.0, exponent=1.5, friction=(0.0, 0.0), **fields):
        """Compliant contact between every pair of ``bodies``, each touching with its own geometry, by
        one law (:class:`~solver.model.elements.ContactGroup`, docs/contact.md; the law's fields as in
        :meth:`add_contact`)."""
        if not isinstance(friction, (list, tuple, np.ndarray)) or len(friction) != 2:
            raise ModelError(FORCE_CLASSES["contact_group"].problem(
                "static_friction", f"friction must be (static, dynamic); got {show_value(friction)}", name))
        return self.add(FORCE_CLASSES["contact_group"](
            name=name, bodies=bodies, stiffness=stiffness, damping=damping, exponent=exponent,
            static_friction=friction[0], dynamic_friction=friction[1], **fields))

    def add_input(self, name, target, default=0.0):
        """Declare an input (:class:`~solver.model.elements.ModelInput`): ``target`` is replaced by
        the value ``simulate(inputs={name: …})`` or an FMU's importer gives, else by ``default``."""
        return self.add(ModelInput(name=name, target=target, default=default))

    def add_measure(self, name, kind, marker_i, marker_j, axis=""):
        """Declare a measure between two markers (:class:`~solver.model.elements.Measure`)."""
        return self.add(Measure(name=name, kind=kind, marker_i=marker_i, marker_j=marker_j, axis=axis))

    def add_output(self, name, quantity):
        """Declare an output: ``quantity`` is a path of ``solver.output_paths(model)``."""
        return self.add(ModelOutput(name=name, quantity=quantity))

    def add_driver(self, name, joint, expression=None, coordinate="default", table=None):
        """Prescribe a joint coordinate: ``expression`` (text of t or number) or ``table``
        ({"t": [...], "values": [...]}, a cubic spline)."""
        if (expression is None) == (table is None):
            raise ModelError(Driver.problem("expression", "give exactly one of expression or table", name))
        return self.add(Driver(name=name, joint=joint, expression=expression if table is None else table,
                               coordinate=coordinate))

    def add_coupler(self, name, joint_i, joint_j, ratio=1.0, offset=0.0, coefficients=None,
                    coordinate_i="default", coordinate_j="default"):
        """Couple two joint coordinates: θ_j = ratio·θ_i + offset, or θ_j = Σ c_k θ_i^k with
        ``coefficients`` (c_0, c_1, …) — :class:`~solver.model.elements.Coupler`."""
        return self.add(Coupler(name=name, joint_i=joint_i, joint_j=joint_j, ratio=ratio, offset=offset,
                                coefficients=coefficients, coordinate_i=coordinate_i, coordinate_j=coordinate_j))

    # ---- public API: editing (used by the GUI's undo commands) --------------------------------
    def add(self, element: Element, index=None):
        """Add an element after checking its name and references; returns it."""
        problems = self._check_name(element.name, element.KIND) + self._check_references(element)
        if not problems and isinstance(element, Coupler):     # (a driver's coordinate is checked by validate)
            problems = self._check_coordinates(element)
        if problems:
            raise ModelError(problems)
        element.values.update(derived_values(element, self._collections["points"]))
        coll = self._collections[_collection_of(element)]
        if isinstance(element, FlexibleBody):
            element.base_dir = self._base_dir
        if index is None or index >= len(coll):
            coll[element.name] = element
        else:
            items = list(coll.items())
            items.insert(index, (element.name, element))
            coll.clear()
            coll.update(items)
        self._emit("added", _collection_of(element), element.name)
        return element

    def index_of(self, name) -> int:
        e = self.element(name)
        return list(self._collections[_collection_of(e)]).index(name)

    def remove(self, name, cascade=False):
        """Remove an element; with ``cascade`` also everything that depends on it (returned first,
        in removal order, as (element, index) pairs so an undo can re-add them in reverse)."""
        target = self.element(name)
        deps = self.dependents(name)
        if deps and not cascade:
            raise ModelError(Problem("", name, None, f"{target.KIND} '{name}' is used by {', '.join(deps)}; "
                                                     "remove those first"))
        removed = []
        for dep in deps:
            if dep in self:
                removed += self.remove(dep, cascade=True)
        coll = self._collections[_collection_of(target)]
        index = list(coll).index(name)
        del coll[name]
        removed.append((target, index))
        self._emit("removed", _collection_of(target), name)
        return removed

    def dependents(self, name) -> list[str]:
        """Names of elements that refer to ``name`` (directly or through a dependent)."""
        out = []
        frontier = [name]
        while frontier:
            n = frontier.pop()
            for e in self.elements():
                if n in e.references() and e.name not in out and e.name != name:
                    out.append(e.name)
                    frontier.append(e.name)
        return out

    def set_field(self, name, field_name, value):
        """Validate and set one field of an element; returns the old value."""
        e = self.element(name)
        if field_name == "name":
            self.rename(name, value)
            return name
        if field_name in derived_fields(e):
            raise ModelError(e.problem(field_name, "follows its design points (move the points"
                                       + (", or clear at_point)" if isinstance(e, Joint) else ")"), e.name))
        old = e.set(field_name, value)
        problems = self._check_references(e)
        if not problems:
            problems = self._check_coordinates(e)
        for user in self.elements():      # e.g. a driven joint made spherical: its driver breaks
            if not problems and e.name in user.references():
                problems = self._check_references(user) + self._check_coordinates(user)
        followers = []
        if not problems:
            try:
                followers = self._follow(e)
            except ModelError as exc:     # said at the point moved, naming the element that refuses it
                problems = [e.problem(field_name, str(p), e.name) for p in exc.details] if isinstance(e, Point) \
                    else exc.details
        if problems:
            e.values[field_name] = old
            self._follow(e)
            raise ModelError(problems)
        self._emit("changed", _collection_of(e), name, field_name)
        for user, fields in followers:
            for f in fields:
                self._emit("changed", _collection_of(user), user.name, f)
        return old

    def _follow(self, e):
        """Re-derive ``e`` and, for a design point, every element on it (solver.model.design);
        returns the (element, changed fields) pairs (``e`` too: a joint's origin when its at_point
        changes).  A problem leaves them as they were."""
        points = self._collections["points"]
        users = [e] + ([u for u in self.elements() if e.name in u.references()] if isinstance(e, Point) else [])
        derived = [(u, derived_values(u, points)) for u in users]      # raises before any change
        changed = []
        for u, values in derived:
            fields = [f for f, v in values.items() if u.values.get(f) != v]
            u.values.update(values)
            if fields:
                changed.append((u, fields))
        return changed

    def rename(self, old, new):
        """Rename an element and every reference to it."""
        e = self.element(old)
        new = _coerce(Field("name", "name"), new, f"{e.KIND} '{old}'", old)
        if new == old:
            return
        problems = self._check_name(new, e.KIND)
        if problems:      # labelled with the element being renamed, not the name it would get
            raise ModelError([replace(p, path=f"{e.KIND} '{old}'", element=old) for p in problems])
        coll = self._collections[_collection_of(e)]
        items = [(new if k == old else k, v) for k, v in coll.items()]
        e.values["name"] = new
        coll.clear()
        coll.update(items)
        for other in self.elements():
            for f in other.FIELDS:
                if (f.kind in ("body", "joint") or "reference" in f.extra) and other.values[f.name] == old:
                    other.values[f.name] = new
                elif f.kind == "bodies" and old in other.values[f.name]:
                    other.values[f.name] = [new if x == old else x for x in other.values[f.name]]
        self._emit("renamed", _collection_of(e), new, old)

    def subscribe(self, callback):
        """callback(event, collection, name, detail) with event in added/removed/changed/renamed."""
        self._subscribers.append(callback)

    def unsubscribe(self, callback):
        if callback in self._subscribers:
            self._subscribers.remove(callback)

    # ---- validation ---------------------------------------------------------------------------
    def validate(self) -> list[str]:
        """All problems across elements (references, driver coordinates, topology basics)."""
        return [str(p) for p in self.validate_details()]

    def validate_details(self) -> list[Problem]:
        """The problems of :meth:`validate` as :class:`~solver.errors.Problem` objects (element
        and field as data)."""
        problems = []
        for e in self.elements():
            refs = self._check_references(e)
            problems += refs or self._check_coordinates(e)
        seen = {}
        prescribed = [(d, "joint", d.joint, self._driver_coordinate(d)) for d in self.drivers.values()]
        prescribed += [(c, "joint_j", c.joint_j, self._coordinate_of(c.joint_j, c.coordinate_j))
                       for c in self.couplers.values()]
        for e, field, joint, coordinate in prescribed:
            key = (joint, coordinate)
            if key in seen:
                verb = "driven" if isinstance(seen[key], Driver) else "coupled"
                problems.append(e.problem(field, f"coordinate {coordinate} of joint '{joint}' is "
                                                 f"already {verb} by '{seen[key].name}'", e.name))
            seen[key] = e
        if not self._collections["bodies"] and not self._collections["flexible_bodies"]:
            problems.append(Problem("model", None, "bodies", "the model has no bodies"))
        return problems

    def check(self):
        """Raise ModelError with every problem, if any."""
        problems = self.validate_details()
        if problems:
            raise ModelError(problems)

    def driver_coordinate(self, driver_name) -> str:
        """The joint coordinate a driver prescribes (resolving 'default')."""
        return self._driver_coordinate(self.element(driver_name))

    # ---- copying, comparison, files -----------------------------------------------------------
    def copy(self):
        """A deep copy without subscribers (what a run compiles)."""
        new = Model(self._name, self._gravity)
        for c in COLLECTIONS:
            new._collections[c] = {k: v.copy() for k, v in self._collections[c].items()}
        new.settings = self.settings.copy()
        new.view = copy.deepcopy(self.view)
        new.base_dir = self._base_dir
        return new

    def to_dict(self) -> dict:
        """The model part of the project file (plain JSON types): the lists always written, then
        those written only when they have elements (a file without design points stays as it was)."""
        lists = {c: [e.to_dict() for e in self._collections[c].values()] for c in COLLECTIONS}
        bodies = self._collections["bodies"].values()
        lists["links"] = [e.to_dict() for e in bodies if isinstance(e, Link)]
        lists["bodies"] = [e.to_dict() for e in bodies if not isinstance(e, Link)]
        lists["forces"] = [dict(type=e.KIND, **e.to_dict()) for e in self._collections["forces"].values()]
        always = ("bodies", "markers", "joints", "forces", "drivers")
        optional = ("points", "links", "flexible_bodies", "couplers", "measures", "inputs", "outputs")
        return {"name": self._name, "gravity": list(self._gravity)} | {c: lists[c] for c in always} \
            | {c: lists[c] for c in optional if lists[c]}

    def __eq__(self, other):
        return (isinstance(other, Model) and self.to_dict() == other.to_dict()
                and self.settings == other.settings and self.view == other.view)

    def save(self, path):
        """Save as a project file (atomic, never through a link; the previous file is kept as
        ``.bak``); relative paths in the model (modes files) start at its folder from now on."""
        from ..io.files import atomic_write
        from .project_format import project_to_text
        path = os.fspath(path)
        atomic_write(path, project_to_text(self).encode("utf-8"))
        self.base_dir = os.path.dirname(os.path.abspath(path))

    # ---- helpers ------------------------------------------------------------------------------
    def _emit(self, event, collection, name, detail=None):
        for cb in list(self._subscribers):
            cb(event, collection, name, detail)

    def _check_name(self, name, kind):
        if name == GROUND:
            return [Problem(f"{kind} '{name}'", name, "name", "'ground' is reserved for the fixed frame")]
        if name in self:
            return [Problem(f"{kind} '{name}'", name, "name", f"an element named '{name}' already exists")]
        return []

    def _check_references(self, e: Element):
        problems = []
        for f in e.FIELDS:
            ref = e.values.get(f.name)
            if f.kind == "body":
                ground_ok = f.name in ("body_i", "body_j")
                if (ref == GROUND and ground_ok) or ref in self._collections["bodies"]:
                    continue
                if ref in self._collections["flexible_bodies"]:
                    if e.ATTACHES_TO_FLEXIBLE:     # at FE nodes (solver.flexible.joints, .loads)
                        continue
                    problems.append(e.problem(f.name, f"'{ref}' is a flexible body; only {', '.join(attaching_kinds())} "
                                                      "elements can attach to flexible bodies", e.name))
                    continue
                bodies = self._collections["bodies"]
                names = show_names(chain([GROUND] * ground_ok, bodies), len(bodies) + ground_ok)
                problems.append(e.problem(f.name, f"no body named '{ref}' (bodies: {names})", e.name))
            elif f.kind == "bodies":           # a contact group's members: rigid bodies, each with a shape
                bodies = self._collections["bodies"]
                for k, member in enumerate(ref):
                    if member not in bodies:
                        problems.append(e.problem(f.name, f"[{k}] no body named '{member}' (bodies: {show_names(bodies)})",
                                                  e.name))
                    elif (bodies[member].geometry or {"shape": "none"})["shape"] in ("none", "plane"):
                        problems.append(e.problem(f.name, f"[{k}] body '{member}' has no finite geometry: give it "
                                                  "one (its contact shape; a plane touches through contact elements)",
                                                  e.name))
                    if len(problems) >= MAX_SHOWN:
                        break
            elif "reference" in f.extra:       # an element of a given kind (a tire's road, a link's point)
                kind = f.extra["reference"]
                if ref == "" and f.extra.get("optional"):
                    continue
                pool = self._collections["points" if kind == "point" else "forces"]
                target = pool.get(ref)
                if target is None or target.KIND != kind:
                    names = show_names(n for n, x in pool.items() if x.KIND == kind)
                    problems.append(e.problem(f.name, f"no {kind} named '{ref}' ({kind}s: {names})", e.name))
            elif f.kind == "joint":
                if ref not in self._collections["joints"]:
                    problems.append(e.problem(f.name, f"no joint named '{ref}' "
                                                      f"(joints: {show_names(self._collections['joints'])})", e.name))
        if e.KIND == "joint_friction" and not problems and self._collections["joints"][e.joint].type not in FRICTION_JOINTS:
            problems.append(e.problem("joint", f"joint '{e.joint}' is {self._collections['joints'][e.joint].type}; "
                                      f"friction acts in {', '.join(FRICTION_JOINTS)} joints", e.name))
        if e.KIND == "rotational_spring_damper" and not problems:
            joint = self._collections["joints"][e.joint]
            if "rotation" not in joint.coordinates():
                problems.append(e.problem("joint", f"joint '{e.joint}' is {joint.type}, which has no rotation coordinate",
                                          e.name))
        if e.KIND == "contact" and not problems:
            for side in ("i", "j"):
                shape = e.shape(side, self._collections["bodies"])
                if shape is None or shape["shape"] == "none":
                    problems.append(e.problem(f"geometry_{side}", f"'{e.values['body_' + side]}' has no geometry: "
                                              "give a contact shape here or on the body", e.name))
        return problems

    def _driver_coordinate(self, d: Driver):
        return self._coordinate_of(d.joint, d.coordinate)

    def coupler_coordinates(self, coupler_name) -> tuple[str, str]:
        """The joint coordinates (of joint_i, of joint_j) a coupler relates (resolving 'default')."""
        c = self.element(coupler_name)
        return self._coordinate_of(c.joint_i, c.coordinate_i), self._coordinate_of(c.joint_j, c.coordinate_j)

    def _coordinate_of(self, joint_name, coordinate):
        """A joint's coordinate named ``coordinate`` ('default': its first)."""
        joint = self._collections["joints"].get(joint_name)
        if joint is None:
            return coordinate
        coords = joint.coordinates()
        return coords[0] if coordinate == "default" and coords else coordinate

    def _check_coordinates(self, e: Element):
        """The problems of the joint coordinates a driver prescribes, a joint actuator pushes or a
        coupler relates: the joint has one (a spherical joint has none), of that name."""
        actuated = e.KIND == "joint_actuator"
        pairs = ((("joint", "coordinate"),) if isinstance(e, Driver) or actuated
                 else (("joint_i", "coordinate_i"), ("joint_j", "coordinate_j")) if isinstance(e, Coupler) else ())
        what = "driven" if isinstance(e, Driver) else "actuated" if actuated else "coupled"
        for joint_field, coordinate_field in pairs:
            name = e.values[joint_field]
            joint = self._collections["joints"].get(name)
            if joint is None:
                continue
            coords = joint.coordinates()
            if not coords:
                return [e.problem(joint_field, f"a {joint.type} joint has no coordinate that can be {what}", e.name)]
            c = self._coordinate_of(name, e.values[coordinate_field])
            if c not in coords:
                return [e.problem(coordinate_field, f"joint '{name}' ({joint.type}) has coordinates "
                                                    f"{', '.join(coords)}; got {c}", e.name)]
        return []


def _collection_of(e: Element) -> str:
    return e.COLLECTION


def _coerce(field: Field, value, path, element=None):
    """``field.coerce(value)``; a problem is reported at ``path`` (the element's or "model")."""
    try:
        return field.coerce(value)
    except FieldProblem as p:
        raise ModelError(Problem(path, element, field.name, str(p))) from None


def element_from_dict(collection, data, path):
    """Build an element of ``collection`` from its file form; raises ModelError with ``path``."""
    if not isinstance(data, dict):
        raise ModelError(Problem(path, None, None, f"must be an object, got {type(data).__name__}"))
    data = dict(data)
    if collection == "forces":
        kind = data.pop("type", None)
        if not isinstance(kind, str) or kind not in FORCE_CLASSES:
            raise ModelError(Problem(path, _name_in(data), "type",
                                     f"must be one of {', '.join(FORCE_CLASSES)}; got {show_value(kind)}"))
        cls = FORCE_CLASSES[kind]
    else:
        cls = FILE_CLASSES[collection]
    try:
        return cls(**{str(k): v for k, v in data.items()})
    except ModelError as exc:
        # Locate the problems of "kind 'name'" at the file path "collection[i]".
        prefix = cls.problem(None, "", data.get("name")).path
        raise ModelError([_relabel(p, prefix, path) for p in exc.details]) from None


def _name_in(data):
    name = data.get("name") if isinstance(data, dict) else None
    return name if isinstance(name, str) else None


def _relabel(problem: Problem, prefix, path) -> Problem:
    """A problem of the element at ``prefix`` ("kind 'name'") located at ``path`` instead; any
    other problem becomes the message of a problem at ``path``."""
    return problem.at(path) if problem.path == prefix else Problem(path, problem.element, None, str(problem))


def model_from_dict(data, path="model") -> Model:
    """Build and validate a model from its file form, collecting every problem; its expressions
    share one :class:`~solver.expression_budget.ExpressionBudget`.  Floating-point overflow in the
    checks of hostile numbers (an inertia of 1e308) is silent: the check's message says what is wrong."""
    with ExpressionBudget(), np.errstate(all="ignore"):
        return _model_from_dict(data, path)


def _model_from_dict(data, path):
    if not isinstance(data, dict):
        raise ModelError(Problem(path, None, None, "must be an object"))
    problems = []
    known = {"name", "gravity"} | set(COLLECTIONS) | set(FILE_CLASSES)
    for key in data:
        if key not in known:
            problems.append(Problem(path, None, key, f"unknown key (valid: {', '.join(sorted(known))})"))
    name = data.get("name", "model")
    try:
        m = Model(name=name if isinstance(name, str) else "model", gravity=data.get("gravity", (0, -9.81, 0)))
        if not isinstance(name, str):
            problems.append(Problem(path, None, "name", "must be a string"))
    except ModelError as exc:
        problems += [p.at(path) for p in exc.details]
        m = Model()
    failed = set()          # names of elements that did not build: references to them are not re-reported
    paths = {}              # element name -> ("kind 'name'", file path) of every element added
    for coll in FILE_LISTS:
        items = data.get(coll, [])
        if not isinstance(items, list):
            problems.append(Problem(path, None, coll, "must be a list"))
            continue
        for i, item in enumerate(items):
            p = f"{path}.{coll}[{i}]"
            try:
                e = element_from_dict(coll, item, p)
            except ModelError as exc:
                problems += exc.details
                if _name_in(item) is not None:
                    failed.add(item["name"])
                continue
            prefix = e.problem(None, "", e.name).path
            if failed.intersection(e.references()):      # its own name is still checked
                failed.add(e.name)
                problems += [_relabel(x, prefix, p) for x in m._check_name(e.name, e.KIND)]
                continue
            try:
                m.add(e)
                paths[e.name] = (prefix, p)
            except ModelError as exc:
                problems += [_relabel(x, prefix, p) for x in exc.details]
                failed.add(e.name)      # what refers to it is not reported again
    if not problems:
        problems += [_relabel(x, *paths[x.element]) if x.element in paths else x for x in m.validate_details()]
    if problems:
        raise ModelError(problems)
    return m


__all__ = ["Model", "GROUND", "model_from_dict", "element_from_dict", "Body", "Marker", "Joint",
           "Driver", "Coupler", "Settings", "Point", "Link"]
