"""Display units: values typed with a unit are converted (pint) to the field's SI unit, values with a
unit that does not fit are refused naming the field, the project's display units (settings) change
what the property editor shows, and the project file stays SI."""
import json
import math
import re
import time

import pytest
from PySide6.QtCore import Qt

import solver
from solver.model.elements import ELEMENT_CLASSES
from app.tree import SETTINGS_ITEM
from app.units import UnitSystem
from real_input import retype


def _type(qtbot, spin, text):
    """Replace a spin box's number by ``text`` and press Enter, as a user does."""
    spin.setFocus()
    spin.selectAll()
    qtbot.keyClicks(spin, text)
    qtbot.keyClick(spin, Qt.Key.Key_Return)


@pytest.mark.slow
def test_50_mm_is_0_05_m(loaded, qtbot):
    w = loaded
    _type(qtbot, w.properties.editor("position").spins[0], "50 mm")
    assert w.document.model.element("bob").position[0] == pytest.approx(0.05, rel=1e-15)
    _type(qtbot, w.properties.editor("position").spins[2], "2 in")
    assert w.document.model.element("bob").position[2] == pytest.approx(2 * 0.0254, rel=1e-15)
    _type(qtbot, w.properties.editor("angular_velocity").spins[2], "30 deg/s")
    assert w.document.model.element("bob").angular_velocity[2] == pytest.approx(math.pi / 6, rel=1e-15)
    _type(qtbot, w.properties.editor("mass").spin, "2500 g")
    assert w.document.model.element("bob").mass == pytest.approx(2.5, rel=1e-15)
    _type(qtbot, w.properties.editor("mass").spin, "0.003 tonne")          # a unit word ending in "e"
    assert w.document.model.element("bob").mass == pytest.approx(3.0, rel=1e-15)
    assert w.document.undo_stack.count() == 3   # the two position edits merge into one step


@pytest.mark.slow
def test_incompatible_unit_is_refused_naming_the_field(loaded, qtbot):
    w = loaded
    before = w.document.model.to_dict()
    _type(qtbot, w.properties.editor("position").spins[0], "50 kg")
    message = w.properties.error("position")
    assert "position x" in message and "'50 kg'" in message and "mass" in message and "length" in message
    assert w.document.model.to_dict() == before and w.document.undo_stack.count() == 0
    _type(qtbot, w.properties.editor("mass").spin, "3 furlongz")
    assert "mass" in w.properties.error("mass") and "unknown unit" in w.properties.error("mass")
    assert w.document.model.to_dict() == before
    start = time.perf_counter()
    _type(qtbot, w.properties.editor("mass").spin, "9**9**9 kg")     # pint alone would compute this for ever
    assert time.perf_counter() - start < 2.0 and "not a number with a unit" in w.properties.error("mass")
    assert w.document.model.to_dict() == before
    _type(qtbot, w.properties.editor("position").spins[0], "7 cm")   # a good value clears the message
    assert w.properties.error("position") == ""
    assert w.document.model.element("bob").position[0] == pytest.approx(0.07, rel=1e-15)


def _set_display(w, units, angles):
    w.document.select(SETTINGS_ITEM)
    w.properties.commit("display_units", units)
    w.properties.commit("display_angles", angles)


@pytest.mark.slow
def test_display_units_are_per_project_and_files_stay_si(loaded, qtbot, answers, tmp_path):
    w = loaded
    _set_display(w, "mm-t-s", "deg")
    w.document.select("bob")
    pos, mass = w.properties.editor("position").spins[1], w.properties.editor("mass").spin
    assert pos.suffix() == " mm" and pos.value() == pytest.approx(-500.0, rel=1e-15)
    assert mass.suffix() == " t" and mass.value() == pytest.approx(0.002, rel=1e-15)
    assert w.properties.editor("angular_velocity").spins[0].suffix() == " deg/s"
    assert w.properties.editor("inertia").spins[0].suffix() == " t·mm²"
    assert w.properties.editor("inertia").spins[0].value() == pytest.approx(0.17 * 1e3, rel=1e-12)
    _type(qtbot, pos, "-250")                   # a plain number is in the display unit
    assert w.document.model.element("bob").position[1] == pytest.approx(-0.25, rel=1e-15)
    _type(qtbot, w.properties.editor("angular_velocity").spins[2], "90")
    assert w.document.model.element("bob").angular_velocity[2] == pytest.approx(math.pi / 2, rel=1e-15)
    answers.save_path = str(tmp_path / "mm.mbs.json")
    assert w.save()
    data = json.loads((tmp_path / "mm.mbs.json").read_text())
    bob = next(b for b in data["model"]["bodies"] if b["name"] == "bob")
    assert bob["position"][1] == pytest.approx(-0.25, rel=1e-15) and bob["mass"] == 2.0
    assert data["solver"]["display_units"] == "mm-t-s" and data["solver"]["display_angles"] == "deg"
    w.document.undo_stack.undo()                # the angular velocity edit
    w.document.undo_stack.undo()                # the position edit
    assert w.document.model.element("bob").position[1] == -0.5


def test_driver_expression_with_units_and_deg(window, pendulum, qtbot):
    pendulum.add_driver("swing", "pivot", expression="0")
    window.document.set_model(pendulum)
    window.document.select("swing")
    line = window.properties.editor("expression").lines[0]
    for text, expected in (("30 deg", math.pi / 6), ("30*deg*sin(t)", "30*deg*sin(t)")):
        line.selectAll()
        qtbot.keyClicks(line, text)
        qtbot.keyClick(line, Qt.Key.Key_Return)
        value = window.document.model.element("swing").expression
        assert value == (pytest.approx(expected, rel=1e-15) if isinstance(expected, float) else expected)
    assert window.properties.error("expression") == ""
    assert window.properties.editor("expression").field.unit == "rad"     # the driven coordinate's unit
    line.selectAll()
    qtbot.keyClicks(line, "50 mm")                # a length for a rotation: left to the expression check
    qtbot.keyClick(line, Qt.Key.Key_Return)
    assert window.document.model.element("swing").expression == "30*deg*sin(t)"
    assert window.properties.error("expression") == ("expression: '50 mm' is a length, which cannot be "
                                                     "converted to rad")


def test_prismatic_driver_reads_lengths(window, qtbot):
    m = solver.Model(name="slider")
    m.add_body("block", mass=1.0, inertia=(0.1, 0.1, 0.1))
    m.add_joint("rail", "prismatic", "ground", "block", axis=(1.0, 0.0, 0.0))
    m.add_driver("push", "rail", expression="0")
    window.document.set_model(m)
    window.document.select("push")
    retype(qtbot, window.properties.editor("expression").lines[0], "25 mm")
    assert window.document.model.element("push").expression == pytest.approx(0.025, rel=1e-15)


def test_every_field_unit_converts_in_every_system():
    """Each declared unit has a display unit in every system; factors match hand-derived ones."""
    units = {f.unit for cls in (*ELEMENT_CLASSES.values(),
                                *solver.FORCE_CLASSES.values(), solver.Settings)
             for f in cls.FIELDS if f.unit}
    for system in ("SI", "mm-kg-s", "mm-t-s"):
        for angles in ("rad", "deg"):
            u = UnitSystem(system, angles)
            for unit in units:
                for piece in re.split(r", | or ", unit):
                    assert u.quantity(piece).factor > 0
    mm_deg = UnitSystem("mm-kg-s", "deg")
    assert mm_deg.display("N·m/rad") == "N·mm/deg"
    assert mm_deg.quantity("N·m/rad").factor == pytest.approx(1e-3 * 180 / math.pi, rel=1e-14)
    t = UnitSystem("mm-t-s", "rad")
    assert t.display("kg/m³") == "t/mm³" and t.quantity("kg/m³").factor == pytest.approx(1e3 * 1e9, rel=1e-14)
    assert t.display("Pa") == "MPa" and t.quantity("Pa").factor == pytest.approx(1e6, rel=1e-14)
    assert t.quantity("m/rev").factor == pytest.approx(1e-3, rel=1e-14)


@pytest.mark.parametrize("joint_type, typed, expected", [("revolute", "30 deg", math.pi / 6),
                                                          ("prismatic", "25 mm", 0.025)])
@pytest.mark.slow
def test_joint_limits_read_the_unit_of_the_joint_coordinate(window, qtbot, joint_type, typed, expected):
    """A limit field is declared "m or rad": the editor takes the one of the joint's coordinate."""
    m = solver.Model(name="limits")
    m.add_body("link", mass=1.0, inertia=(0.1, 0.1, 0.1))
    m.add_joint("j", joint_type, "ground", "link", axis=(0.0, 0.0, 1.0))
    window.document.set_model(m)
    window.document.select("j")
    editor = window.properties.editor("upper_limit")
    editor.auto.setChecked(False)
    editor.spin.lineEdit().selectAll()
    qtbot.keyClicks(editor.spin.lineEdit(), typed)
    qtbot.keyClick(editor.spin.lineEdit(), Qt.Key.Key_Return)
    assert window.document.model.element("j").upper_limit == pytest.approx(expected, rel=1e-15)
