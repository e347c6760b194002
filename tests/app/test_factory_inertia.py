"""New-element defaults, unique names, duplication, and mass/inertia from geometry (no Qt needed)."""
import math

import pytest

import solver
from app import factory
from app.inertia import inertia_from_geometry


def test_unique_names_and_defaults():
    m = solver.Model()
    b1 = m.add(factory.new_body(m))
    b2 = m.add(factory.new_body(m))
    assert (b1.name, b2.name) == ("body1", "body2")
    assert b2.position[0] > b1.position[0]
    joint = m.add(factory.new_joint(m, "revolute", "body1"))
    assert (joint.name, joint.body_i, joint.body_j) == ("revolute1", "ground", "body1")
    for kind in solver.FORCE_CLASSES:
        if kind == "speed_control":
            with pytest.raises(solver.ModelError, match="add tires on 2 bodies other than .body1. first"):
                factory.new_force(m, kind, "body1")
            m.add(factory.new_body(m))
            m.add(factory.new_force(m, "tire", "body2"))
            m.add(factory.new_force(m, "tire", "body3"))
        m.add(factory.new_force(m, kind, "revolute1"))
    controller = m.forces["speed_control1"]
    assert (controller.chassis, controller.left_wheel, controller.right_wheel) == ("body1", "body2", "body3")
    assert controller.left_carrier == controller.right_carrier == "body1"
    m.add(factory.new_driver(m, "revolute1"))
    assert m.validate() == []


def test_a_tire_needs_a_road():
    m = solver.Model()
    m.add(factory.new_body(m))
    with pytest.raises(solver.ModelError, match="add a road first"):
        factory.new_force(m, "tire", "body1")


def test_requirements_are_explained():
    m = solver.Model()
    with pytest.raises(solver.ModelError, match="add a body"):
        factory.new_joint(m, "revolute")
    m.add(factory.new_body(m))
    m.add(factory.new_joint(m, "spherical"))
    with pytest.raises(solver.ModelError, match="suitable joint"):
        factory.new_driver(m)


def test_duplicate_gets_new_name():
    m = solver.Model()
    m.add(factory.new_body(m))
    copy = factory.duplicate(m, "body1")
    assert copy.name == "body2" and copy.mass == m.bodies["body1"].mass


def test_inertia_formulas():
    m, (ixx, iyy, izz) = inertia_from_geometry({"shape": "box", "size": [1.0, 2.0, 3.0]}, 10.0)
    assert m == pytest.approx(60.0)
    assert (ixx, iyy, izz) == pytest.approx((60 * 13 / 12, 60 * 10 / 12, 60 * 5 / 12))
    m, moments = inertia_from_geometry({"shape": "cylinder", "radius": 0.5, "length": 2.0, "axis": "x"}, 1.0)
    assert m == pytest.approx(math.pi * 0.5)
    assert moments == pytest.approx([m * 0.125, m * (0.75 + 4) / 12, m * (0.75 + 4) / 12])
    m, moments = inertia_from_geometry({"shape": "sphere", "radius": 1.0}, 3.0 / (4 * math.pi))
    assert m == pytest.approx(1.0) and moments == pytest.approx([0.4] * 3)
    with pytest.raises(ValueError):
        inertia_from_geometry({"shape": "none"}, 1000.0)
