"""Mechanism templates: parametrised models built from design points and links
(:mod:`solver.model.design`), the GUI's File ▸ New from Template.

:data:`TEMPLATES` maps a template's key to a :class:`Template`: its label, its parameters declared
as :class:`~solver.model.fields.Field` (bounds, units, defaults: validation and the GUI's dialog
follow from them) and the function that builds the model.  ``build_template(key, **parameters)``
checks the parameters (a ModelError names ``template 'four_bar'.coupler``) and builds.

Assembly positions are closed-form circle intersections: the point at distance r₁ from P₁ and r₂
from P₂ (in the x–y plane, to the left of P₁→P₂) is P₁ + a u + h n with d = |P₂ − P₁|,
a = (r₁² − r₂² + d²)/(2d), h = √(r₁² − a²), u = (P₂ − P₁)/d, n = u rotated by +90°.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..errors import ModelError, Problem
from .fields import Field, FieldProblem
from .model import Model

_LENGTH = {"unit": "m", "minimum": 0.0, "exclusive_min": True}


def _length(name, default, doc):
    return Field(name, "float", default=default, doc=doc, **_LENGTH)


_SECTION = (_length("width", 0.02, "link section width (in the mechanism's plane)"),
            _length("height", 0.01, "link section height (across the plane)"),
            Field("density", "float", "kg/m³", default=7850.0, minimum=0.0, exclusive_min=True,
                  doc="link material density"))


@dataclass(frozen=True)
class Template:
    label: str
    doc: str
    fields: tuple
    build: Callable[..., Model]


def _problem(key, field, message):
    return ModelError(Problem(f"template '{key}'", None, field, message))


def circle_point(p1, r1, p2, r2, key, field):
    """The intersection of circles (P₁, r₁) and (P₂, r₂) left of P₁→P₂ (module docstring)."""
    p1, p2 = np.asarray(p1, float), np.asarray(p2, float)
    d = float(np.linalg.norm(p2 - p1))
    a = (r1 ** 2 - r2 ** 2 + d ** 2) / (2.0 * d) if d > 0 else math.inf
    if not r1 ** 2 - a ** 2 > 0.0:
        raise _problem(key, field, f"the links do not close: no point at {r1:g} m and {r2:g} m from points "
                                   f"{d:g} m apart")
    u = (p2 - p1) / d
    n = np.array([-u[1], u[0], 0.0])
    return p1 + a * u + math.sqrt(r1 ** 2 - a ** 2) * n


def _links(m, chain, section):
    for name, pi, pj in chain:
        m.add_link(name, pi, pj, **section)


def _revolutes(m, joints):
    """Revolutes about z: (name, body_i, body_j, design point) each."""
    for name, i, j, at in joints:
        m.add_joint(name, "revolute", i, j, at_point=at)


def four_bar(ground, crank, coupler, rocker, crank_angle, speed, width, height, density):
    """Ground pivots A (origin) and D (ground along x), crank A–B at ``crank_angle``, coupler B–C,
    rocker D–C (C left of B→D: the open branch), revolutes about z, the crank driven at ``speed``."""
    m = Model("four_bar")
    b = crank * np.array([math.cos(crank_angle), math.sin(crank_angle), 0.0])
    c = circle_point(b, coupler, (ground, 0.0, 0.0), rocker, "four_bar", "coupler")
    for name, p in (("A", (0, 0, 0)), ("B", b), ("C", c), ("D", (ground, 0, 0))):
        m.add_point(name, p)
    section = {"width": width, "height": height, "density": density}
    _links(m, (("crank", "A", "B"), ("coupler", "B", "C"), ("rocker", "D", "C")), section)
    _revolutes(m, (("pivot_A", "ground", "crank", "A"), ("pin_B", "crank", "coupler", "B"),
                   ("pin_C", "coupler", "rocker", "C"), ("pivot_D", "ground", "rocker", "D")))
    m.add_driver("crank_speed", "pivot_A", expression=f"{speed!r}*t")
    return m


def slider_crank(crank, rod, offset, crank_angle, speed, slider_length, width, height, density):
    """Crank A–B at ``crank_angle``, connecting rod B–C, slider C–S on a prismatic joint along x at
    height ``offset``; the crank driven at ``speed``."""
    m = Model("slider_crank")
    b = crank * np.array([math.cos(crank_angle), math.sin(crank_angle), 0.0])
    if not rod > abs(b[1] - offset):
        raise _problem("slider_crank", "rod", f"must be longer than the crank pin's distance to the slide "
                                              f"({abs(b[1] - offset):g} m); got {rod:g}")
    c = np.array([b[0] + math.sqrt(rod ** 2 - (b[1] - offset) ** 2), offset, 0.0])
    for name, p in (("A", (0, 0, 0)), ("B", b), ("C", c), ("S", c + (slider_length, 0, 0))):
        m.add_point(name, p)
    section = {"width": width, "height": height, "density": density}
    _links(m, (("crank", "A", "B"), ("rod", "B", "C")), section)
    m.add_link("slider", "C", "S", width=3 * width, height=3 * height, density=density)
    _revolutes(m, (("pivot_A", "ground", "crank", "A"), ("pin_B", "crank", "rod", "B"),
                   ("pin_C", "rod", "slider", "C")))
    m.add_joint("slide", "prismatic", "ground", "slider", at_point="C", axis=(1.0, 0.0, 0.0))
    m.add_driver("crank_speed", "pivot_A", expression=f"{speed!r}*t")
    return m


def pendulum_chain(links, length, angle, width, height, density):
    """``links`` links of ``length`` in a straight line from the origin at ``angle`` from the
    downward vertical, revolutes about z, falling under gravity."""
    m = Model("pendulum_chain")
    direction = np.array([math.sin(angle), -math.cos(angle), 0.0])
    for k in range(links + 1):
        m.add_point(f"P{k}", k * length * direction)
    section = {"width": width, "height": height, "density": density}
    _links(m, [(f"link{k}", f"P{k - 1}", f"P{k}") for k in range(1, links + 1)], section)
    _revolutes(m, [(f"pin{k}", "ground" if k == 1 else f"link{k - 1}", f"link{k}", f"P{k - 1}")
                   for k in range(1, links + 1)])
    return m


def double_wishbone(lower_arm, upper_arm, inner_spacing, upright, stiffness, damping, width, height, density):
    """Front view of a double-wishbone corner (x outboard, y up): lower arm L0–L1 and upper arm
    U0–U1 on revolutes to the chassis (ground) at L0 = origin and U0 = (0, ``inner_spacing``), the
    upright L1–U1 of length ``upright`` on revolutes to both arms; a spring-damper from the chassis
    above the lower arm's middle to it, its free length the initial one."""
    m = Model("double_wishbone")
    l0, u0 = np.zeros(3), np.array([0.0, inner_spacing, 0.0])
    l1 = np.array([lower_arm, 0.0, 0.0])
    u1 = circle_point(u0, upper_arm, l1, upright, "double_wishbone", "upright")
    for name, p in (("L0", l0), ("L1", l1), ("U0", u0), ("U1", u1)):
        m.add_point(name, p)
    section = {"width": width, "height": height, "density": density}
    _links(m, (("lower_arm", "L0", "L1"), ("upper_arm", "U0", "U1"), ("upright", "L1", "U1")), section)
    _revolutes(m, (("lower_pivot", "ground", "lower_arm", "L0"), ("upper_pivot", "ground", "upper_arm", "U0"),
                   ("lower_pin", "lower_arm", "upright", "L1"), ("upper_pin", "upper_arm", "upright", "U1")))
    seat = l1 / 2.0
    m.add_spring_damper("spring", "ground", "lower_arm", point_i=seat + (0.0, inner_spacing, 0.0), point_j=seat,
                        stiffness=stiffness, damping=damping)
    return m


TEMPLATES = {
    "four_bar": Template("Four-bar linkage", "crank–rocker four-bar, crank driven at constant speed", (
        _length("ground", 0.4, "distance between the ground pivots A and D"),
        _length("crank", 0.1, "crank length A–B"), _length("coupler", 0.35, "coupler length B–C"),
        _length("rocker", 0.3, "rocker length D–C"),
        Field("crank_angle", "float", "rad", default=math.pi / 2, doc="initial crank angle from x"),
        Field("speed", "float", "rad/s", default=2 * math.pi, doc="crank speed"), *_SECTION), four_bar),
    "slider_crank": Template("Slider–crank", "crank, connecting rod and a slider on a prismatic joint", (
        _length("crank", 0.1, "crank length A–B"), _length("rod", 0.3, "connecting rod length B–C"),
        Field("offset", "float", "m", default=0.0, doc="height of the slide above the crank pivot"),
        Field("crank_angle", "float", "rad", default=math.pi / 4, doc="initial crank angle from x"),
        Field("speed", "float", "rad/s", default=2 * math.pi, doc="crank speed"),
        _length("slider_length", 0.06, "slider length along the slide"), *_SECTION), slider_crank),
    "pendulum_chain": Template("Pendulum chain", "links on revolutes, falling under gravity", (
        Field("links", "int", default=3, minimum=1, maximum=50, doc="number of links"),
        _length("length", 0.3, "length of each link"),
        Field("angle", "float", "rad", default=math.pi / 4, doc="initial angle from the downward vertical"),
        *_SECTION), pendulum_chain),
    "double_wishbone": Template("Double wishbone (front view)", "suspension corner: two arms, upright, spring", (
        _length("lower_arm", 0.35, "lower arm length"), _length("upper_arm", 0.27, "upper arm length"),
        _length("inner_spacing", 0.25, "height of the upper inner pivot above the lower one"),
        _length("upright", 0.26, "upright length between the outer pivots"),
        Field("stiffness", "float", "N/m", default=2.0e4, minimum=0.0, doc="spring stiffness"),
        Field("damping", "float", "N·s/m", default=500.0, minimum=0.0, doc="damper coefficient"),
        *_SECTION), double_wishbone),
}


def build_template(key, **parameters) -> Model:
    """The model of template ``key`` with ``parameters`` (the others at their defaults); a bad
    key or value is a ModelError naming it."""
    if key not in TEMPLATES:
        raise ModelError(Problem("template", None, None, f"no template {key!r} (templates: {', '.join(TEMPLATES)})"))
    template = TEMPLATES[key]
    known = {f.name: f for f in template.fields}
    problems, values = [], {}
    for name in parameters:
        if name not in known:
            problems.append(Problem(f"template '{key}'", None, name, f"unknown parameter (valid: {', '.join(known)})"))
    for name, f in known.items():
        try:
            values[name] = f.coerce(parameters.get(name, f.default_value()))
        except FieldProblem as p:
            problems.append(Problem(f"template '{key}'", None, name, str(p)))
    if problems:
        raise ModelError(problems)
    return template.build(**values)
