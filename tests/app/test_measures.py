"""User-defined measures between two markers, declared in the Custom plots panel, against the
geometry of a swinging pendulum: the distance from the pivot to a marker at the bob's tip is the
length L = 1 m, the angle is the pendulum angle from the CM positions, and the relative velocity is
the tip's (2 × the CM's); exported to CSV with units.  Measures declared in the panel are model
measures: one undo step, shown in the tree, saved with the project and plotted from the reopened
file, edited in the panel, declared as outputs."""
import csv
import math

import numpy as np
import pytest
from PySide6.QtCore import Qt

import solver

OMEGA0 = 3.0
L = 1.0


@pytest.fixture
def swing(pendulum):
    bob = pendulum.bodies["bob"]
    bob.set("angular_velocity", (0.0, 0.0, OMEGA0))
    bob.set("velocity", (0.5 * OMEGA0, 0.0, 0.0))
    pendulum.add_marker("pin", "bob", position=(0.0, 0.0, 0.0))
    # the tip marker's frame turned 90° about z: the relative angle starts at π/2
    pendulum.add_marker("tip", "bob", position=(0.0, -L, 0.0),
                        orientation=(math.cos(math.pi / 4), 0.0, 0.0, math.sin(math.pi / 4)))
    pendulum.add_marker("mid", "bob", position=(0.0, -0.5 * L, 0.0))
    return pendulum, solver.simulate(pendulum, t_end=1.0)


def _declare(qtbot, panel, kind, marker_i, marker_j, axis=""):
    panel.measure_kind.setCurrentText(kind)
    panel.marker_i.setCurrentText(marker_i)
    panel.marker_j.setCurrentText(marker_j)
    if axis:
        panel.measure_axis.setCurrentText(axis)
    qtbot.mouseClick(panel.measure_button, Qt.MouseButton.LeftButton)
    measures = panel.model().measures
    return list(measures.values())[-1] if measures else None


def test_measures_against_geometry(window, qtbot, swing, tmp_path):
    model, r = swing
    window.document.set_model(model)
    window.simulation.set_results(r)
    panel = window.custom_plots
    p, v = r.body_position("bob"), r.body_velocity("bob")
    theta = np.arctan2(p[:, 0], -p[:, 1])                   # the pendulum angle from the CM
    assert np.ptp(theta) > 1.0

    distance = _declare(qtbot, panel, "distance", "ground", "tip")
    assert (distance.name, distance.kind, distance.marker_i, distance.marker_j, distance.axis) == (
        "measure1", "distance", "ground", "tip", "")
    d = panel.curve_data("measures.measure1")[1]
    np.testing.assert_allclose(d, L, atol=1e-8)                           # constant = L
    assert panel.unit_of("measures.measure1") == "m"
    low, high = panel.plots[0].vb.viewRange()[1]              # round-off is not blown up to full height
    assert (low, high) == pytest.approx((0.9 * L, 1.1 * L), rel=1e-6)

    _declare(qtbot, panel, "angle", "ground", "tip", "z")
    np.testing.assert_allclose(panel.curve_data("measures.measure2")[1], theta + math.pi / 2, atol=1e-8)
    _declare(qtbot, panel, "angle", "pin", "mid", "z")                     # same body: no relative turn
    np.testing.assert_allclose(panel.curve_data("measures.measure3")[1], 0.0, atol=1e-12)

    _declare(qtbot, panel, "velocity", "ground", "tip", "x")
    np.testing.assert_allclose(panel.curve_data("measures.measure4")[1], 2 * v[:, 0], rtol=1e-8, atol=1e-8)
    _declare(qtbot, panel, "velocity", "pin", "tip", "magnitude")           # pin on the same body
    w = r.body_angular_velocity("bob")[:, 2]
    np.testing.assert_allclose(panel.curve_data("measures.measure5")[1], np.abs(w) * L, rtol=1e-8, atol=1e-8)
    assert len(panel.plots) == 5 and len(model.measures) == 5

    # A measure is a quantity like any other: the distance against the angle in a cross plot.
    panel.add_tile(["measures.measure1"], x="measures.measure2")
    assert id(panel.plots[-1]) in panel.cross

    path = tmp_path / "measures.csv"
    panel.export_csv(str(path))
    rows = list(csv.reader(path.open(encoding="utf-8")))
    assert rows[0][:3] == ["t [s]", "measures.measure1 [m]", "measures.measure2 [rad]"]
    assert "measures.measure4 [m/s]" in rows[0]
    np.testing.assert_allclose(np.array(rows[1:], float)[:, 1], L, atol=1e-8)


def test_bad_measures_are_explained(window, qtbot, swing):
    model, r = swing
    window.document.set_model(model)
    window.simulation.set_results(r)
    panel = window.custom_plots
    _declare(qtbot, panel, "distance", "tip", "tip")
    assert window.document.model.measures == {} and "must differ" in panel.info.text()
    assert window.document.undo_stack.count() == 0
    with pytest.raises(ValueError, match="no marker named 'nope'"):
        panel.add_measure("distance", "ground", "nope")
    with pytest.raises(ValueError, match="axis"):
        panel.add_measure("angle", "pin", "tip", "w")
    # A marker removed after the measure was declared: the plot says so instead of failing.
    panel.add_measure("distance", "ground", "mid")
    window.document.model.remove("mid")
    panel.refresh()
    assert "measures.measure1" in panel.info.text() and "mid" in panel.info.text()


def test_panel_measures_are_model_measures(window, qtbot, swing, tmp_path, answers):
    """A measure added in the panel is one undo step, appears in the tree, is saved with the project;
    the reopened file plots it (same values) and a run's declared output of it gives the same; an
    edit in the panel (distance → angle about z) is one step that the plot follows."""
    model, r = swing
    doc, panel = window.document, window.custom_plots
    doc.set_model(model)
    window.simulation.set_results(r)
    measure = _declare(qtbot, panel, "distance", "ground", "tip")
    assert doc.model.measures["measure1"] is measure and doc.undo_stack.count() == 1
    assert window.tree.item("measure1") is not None
    assert not window.simulation.stale                        # measures are computed from the results
    d = panel.curve_data("measures.measure1")[1]
    np.testing.assert_allclose(d, L, atol=1e-8)
    window.actions["undo"].trigger()
    assert doc.model.measures == {} and window.tree.item("measure1") is None
    window.actions["redo"].trigger()
    assert window.tree.item("measure1") is not None

    panel.y_choice.setCurrentText("measures.measure1")       # declared as an output of the model
    qtbot.mouseClick(panel.output_button, Qt.MouseButton.LeftButton)
    assert doc.model.outputs["output1"].quantity == "measures.measure1" and doc.undo_stack.count() == 2

    path = tmp_path / "swing.mbs.json"
    answers.save_path = str(path)
    assert window.save_as()
    assert "measure1" in path.read_text()
    window.document.new()
    assert window.load(str(path))
    reopened = window.document.model
    assert list(reopened.measures) == ["measure1"] and window.tree.item("measure1") is not None
    r2 = solver.simulate(reopened, t_end=1.0)
    window.simulation.set_results(r2)
    panel.add_tile(["measures.measure1"])
    np.testing.assert_allclose(panel.curve_data("measures.measure1")[1], L, atol=1e-8)
    unit, values = solver.declared_outputs(reopened, r2)["output1"]
    assert unit == "m"
    np.testing.assert_allclose(values, panel.curve_data("measures.measure1")[1], rtol=0, atol=0)

    panel.refresh_choices()                                   # edit it in the panel: one step
    panel.measure_choice.setCurrentText("measure1")
    assert panel.measure_button.text() == "Apply" and panel.marker_j.currentText() == "tip"
    panel.measure_kind.setCurrentText("angle")
    panel.measure_axis.setCurrentText("z")
    before = window.document.undo_stack.count()
    qtbot.mouseClick(panel.measure_button, Qt.MouseButton.LeftButton)
    edited = window.document.model.measures["measure1"]
    assert (edited.kind, edited.axis) == ("angle", "z") and window.document.undo_stack.count() == before + 1
    p = r2.body_position("bob")
    np.testing.assert_allclose(panel.curve_data("measures.measure1")[1],
                               np.arctan2(p[:, 0], -p[:, 1]) + math.pi / 2, atol=1e-8)
    assert panel.unit_of("measures.measure1") == "rad"
    window.actions["undo"].trigger()
    assert window.document.model.measures["measure1"].kind == "distance"


def test_measure_kind_changed_in_the_property_editor(window, qtbot, swing):
    """In the property editor a measure's kind changes with an axis the new kind takes (one step);
    the measure stays selected."""
    model, r = swing
    model.add_measure("gap", "distance", "ground", "tip")
    window.document.set_model(model)
    window.document.select("gap")
    kind = window.properties.editor("kind").combo
    kind.setFocus()
    qtbot.keyClick(kind, Qt.Key.Key_Down)                       # distance → angle
    gap = window.document.model.measures["gap"]
    assert (gap.kind, gap.axis) == ("angle", "z") and window.document.undo_stack.count() == 1
    assert window.document.selection == "gap" and window.properties.editor("axis").value() == "z"
    window.actions["undo"].trigger()
    assert (window.document.model.measures["gap"].kind, window.document.model.measures["gap"].axis) == ("distance", "")
