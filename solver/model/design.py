"""Design points and the elements on them (Adams View's parametric points, 2024 user guide "Design
points"): a :class:`Point` is a named global position; a :class:`Link` is a rigid body derived from
two points and a cross-section; a joint's ``at_point`` puts its origin on a point.  Moving a point
moves every link end and joint origin on it: :func:`derived_values` is the one place where a
reference to a point becomes positions, mass properties and geometry (called by
:class:`~solver.model.model.Model` on every add and edit, so a compiled model sees plain values).

A link's body axes: x from ``point_i`` to ``point_j`` (length L), z the component of ``z_axis``
across x (the height direction of a rectangle), y = z × x; its CM at the midpoint.  For a prismatic
bar of density ρ, length L and cross-section S (centroid at the axis), with the section's second
moments I_y = ∫z² dS and I_z = ∫y² dS (any handbook, e.g. Gere & Goodno (2012), App. D):

    m = ρ A L,   I_xx = ρ L (I_y + I_z),   I_yy = ρ L I_y + m L²/12,   I_zz = ρ L I_z + m L²/12

Rectangle w × h (w along y, h along z): A = w h, I_y = w h³/12, I_z = h w³/12.  Round of
diameter d = width: A = π d²/4, I_y = I_z = π d⁴/64.  A wall t > 0 makes the section hollow (box,
tube): the inner rectangle (w − 2t) × (h − 2t) or circle d − 2t is subtracted.
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import ModelError
from .elements import NAME, Body, Element, plain_copy
from .fields import REQUIRED, Field

SECTIONS = ("rectangle", "round")
LINK_DERIVED = ("mass", "inertia", "position", "orientation", "geometry")


def point_reference(name, doc, optional=False) -> Field:
    """A field naming a design point ("" = none, when ``optional``)."""
    return Field(name, "str", default="" if optional else REQUIRED,
                 doc=doc, extra={"reference": "point", "optional": optional, "omit_default": optional})


class Point(Element):
    """A design point: a named global position that link ends and joint origins refer to."""
    KIND = "point"
    COLLECTION = "points"
    LABEL = "Design point"
    NAME_PREFIX = "point"
    FIELDS = (
        NAME,
        Field("position", "vec3", "m", default=(0.0, 0.0, 0.0), doc="global position"),
    )


class Link(Body):
    """A rigid link between two design points with a bar, tube or box cross-section of a
    material density; its pose, mass, inertia and display geometry are derived (module docstring)
    and follow every change of its points or section."""
    KIND = "link"
    COLLECTION = "bodies"
    NAME_PREFIX = "link"
    FIELDS = (
        NAME,
        point_reference("point_i", "design point of the link's first end"),
        point_reference("point_j", "design point of the link's second end"),
        Field("section", "enum", choices=SECTIONS, default="rectangle",
              doc="cross-section: rectangle (bar; box with a wall) or round (rod; tube with a wall)"),
        Field("width", "float", "m", default=0.02, minimum=0.0, exclusive_min=True,
              doc="section width along body y (round: the diameter)"),
        Field("height", "float", "m", default=0.01, minimum=0.0, exclusive_min=True,
              doc="section height along body z (rectangle only)"),
        Field("wall", "float", "m", default=0.0, minimum=0.0, doc="wall thickness (0 = solid)"),
        Field("density", "float", "kg/m³", default=7850.0, minimum=0.0, exclusive_min=True,
              doc="material density"),
        Field("z_axis", "unit_vec3", default=(0.0, 0.0, 1.0),
              doc="direction of the section's height (body z), taken across the link"),
        Field("color", "vec3", default=(0.30, 0.55, 0.85), doc="display colour (red, green, blue in [0, 1])"),
        Field("velocity", "vec3", "m/s", default=(0.0, 0.0, 0.0), doc="initial CM velocity, global"),
        Field("angular_velocity", "vec3", "rad/s", default=(0.0, 0.0, 0.0),
              doc="initial angular velocity, global"),
    )

    def check(self):
        if min(self.color) < 0.0 or max(self.color) > 1.0:
            raise ModelError(self.problem("color", f"components must be in [0, 1]; got {self.color}", self.name))
        if self.point_i == self.point_j:
            raise ModelError(self.problem("point_j", f"must differ from point_i ('{self.point_i}')", self.name))
        inner = self.width if self.section == "round" else min(self.width, self.height)
        if self.wall > 0.0 and not 2.0 * self.wall < inner:
            raise ModelError(self.problem("wall", f"must be less than half the section ({inner:g} m); "
                                                  f"got {self.wall:g}", self.name))

    def to_dict(self) -> dict:
        """The file form: its declared fields only (the derived ones follow from them)."""
        return {f.name: plain_copy(self.values[f.name]) for f in self.FIELDS}

    @property
    def length(self) -> float:
        """The distance between its points (as derived)."""
        geometry = self.values["geometry"]
        return geometry["size"][0] if geometry["shape"] == "box" else geometry["length"]

    def section_moments(self):
        """(A, I_y, I_z) of the cross-section (module docstring)."""
        w, h, t = self.width, self.height, self.wall

        def solid(w, h):
            if self.section == "round":
                return math.pi * w ** 2 / 4.0, math.pi * w ** 4 / 64.0, math.pi * w ** 4 / 64.0
            return w * h, w * h ** 3 / 12.0, h * w ** 3 / 12.0

        outer = np.array(solid(w, h))
        return tuple(outer - np.array(solid(w - 2 * t, h - 2 * t)) if t > 0.0 else outer)

    def derive(self, start, end) -> dict:
        """Pose, mass, inertia and geometry of the link between ``start`` and ``end`` (global)."""
        start, end = np.asarray(start, float), np.asarray(end, float)
        length = float(np.linalg.norm(end - start))
        if not length > 1e-9:
            raise ModelError(self.problem("point_j", f"point '{self.point_j}' is at point '{self.point_i}': "
                                                     "a link needs a length", self.name))
        ex = (end - start) / length
        z = np.asarray(self.z_axis, float)
        ez = z - (z @ ex) * ex
        if np.linalg.norm(ez) < 1e-6:          # z_axis along the link: the global axis most across it
            axis = np.eye(3)[int(np.argmin(np.abs(ex)))]
            ez = axis - (axis @ ex) * ex
        ez /= np.linalg.norm(ez)
        R = np.column_stack([ex, np.cross(ez, ex), ez])
        area, i_y, i_z = self.section_moments()
        rho = self.density
        mass = rho * area * length
        inertia = [rho * length * (i_y + i_z), rho * length * i_y + mass * length ** 2 / 12.0,
                   rho * length * i_z + mass * length ** 2 / 12.0]
        geometry = ({"shape": "cylinder", "radius": self.width / 2.0, "length": length, "axis": "x"}
                    if self.section == "round" else {"shape": "box", "size": [length, self.width, self.height]})
        geometry["color"] = list(self.color)
        values = {"mass": mass, "inertia": inertia, "position": ((start + end) / 2.0).tolist(),
                  "orientation": R.tolist(), "geometry": geometry}
        return {k: Body.field(k).coerce(v) for k, v in values.items()}       # the stored forms of a body


def derived_fields(element) -> tuple[str, ...]:
    """The fields of ``element`` that follow design points (not edited directly)."""
    if isinstance(element, Link):
        return LINK_DERIVED
    if element.values.get("at_point"):
        return ("origin",)
    return ()


def derived_values(element, points) -> dict:
    """Field → value of what ``element`` derives from the design points ``points`` (name →
    Point): a link's pose, mass properties and geometry, a joint's origin on its ``at_point``;
    {} for an element on no point."""
    if isinstance(element, Link):
        return element.derive(points[element.point_i].position, points[element.point_j].position)
    if element.values.get("at_point"):
        return {"origin": list(points[element.at_point].position)}
    return {}
