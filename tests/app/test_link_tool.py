"""Issue 31's four-bar (pivots 400 mm apart, crank 100, coupler 350, rocker 300, a constant-speed
crank) built with the link tool from an empty project in ≤ 20 input actions, through real key
presses and clicks (qtbot), then run and compared with Freudenstein's closed form.

Counted: every key press and click is one action; a field typed (its keystrokes) is one.  The
flow: L, the crank's end typed, Enter (start at the origin, revolute to ground: the defaults); L,
the coupler's end typed, Enter (start at the crank's end, revolute to 'crank'); L, the rocker's
ground pivot typed, Tab and Down (the end's joint: revolute to ground), Enter; the first joint
clicked in the tree, the driver tool (its expression field then has the keyboard), the expression
typed, Enter; F5.
"""
from __future__ import annotations

import math
import os
import sys

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt
from real_input import Actions

import solver
from app.screenshot import grab_window
from solver.model.templates import circle_point

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
from tools.freudenstein import angle_error, rocker_angle  # noqa: E402

LEFT = Qt.MouseButton.LeftButton
D = (0.4, 0.0, 0.0)
B = (0.0, 0.1, 0.0)                                          # crank up: θ2 = 90°
C = tuple(circle_point(B, 0.35, D, 0.3, "test", "C"))       # the open branch


class Counted(Actions):
    def press(self, widget, key):
        self.qtbot.keyClick(widget, key)
        self.count += 1

    def type(self, widget, text):
        """A field typed: its keystrokes count as one action."""
        self.qtbot.keyClicks(widget, text)
        self.count += 1

    def click_widget(self, widget, pos=None):
        self.qtbot.mouseClick(widget, LEFT, pos=widget.rect().center() if pos is None else pos)
        self.count += 1


def _link(act, qtbot, w, end_text, end_joint=None, screenshot=None):
    """L, the end's coordinates typed, (Tab to the end's joint, Down to ``end_joint``), Enter;
    ``screenshot``: a path where the filled dialog is saved before Enter."""
    act.key(Qt.Key.Key_L)
    dialog = w.link_dialog
    line = dialog.ends["end"].point          # an editable list of the points
    assert dialog.focusWidget() is line      # the keyboard's widget of the dialog
    act.type(line, end_text)
    if end_joint is not None:
        act.press(line, Qt.Key.Key_Tab)
        assert dialog.focusWidget() is dialog.ends["end"].joint
        act.press(dialog.ends["end"].joint, Qt.Key.Key_Down)
        assert dialog.ends["end"].joint.currentText() == end_joint
    if screenshot is not None:
        assert dialog.grab().save(str(screenshot))
    act.press(dialog.focusWidget(), Qt.Key.Key_Return)
    assert not dialog.isVisible(), dialog.message.text()
    return dialog.added


@pytest.mark.slow
def test_fourbar_with_the_link_tool_in_at_most_20_actions(window, qtbot, screenshots_dir):
    w, doc = window, window.document
    w.activateWindow()
    act = Counted(w, qtbot)
    crank = _link(act, qtbot, w, "0, 100 mm")
    coupler = _link(act, qtbot, w, f"{C[0] * 1000:.6f}, {C[1] * 1000:.6f} mm")
    rocker = _link(act, qtbot, w, "400, 0 mm", end_joint="revolute to ground",
                   screenshot=screenshots_dir / "link_tool.png")
    m = doc.model
    assert [crank, coupler, rocker] == ["link1", "link2", "link3"]
    assert list(m.points) == ["point1", "point2", "point3", "point4"]
    assert [(j.body_i, j.body_j, j.at_point) for j in m.joints.values()] == [
        ("ground", "link1", "point1"), ("link1", "link2", "point2"), ("link2", "link3", "point3"),
        ("ground", "link3", "point4")]
    lengths = [m.bodies[n].length for n in ("link1", "link2", "link3")]
    assert lengths == pytest.approx([0.1, 0.35, 0.3], abs=2e-9)      # C typed to 1e-9 m

    act.click_widget(w.tree.viewport(), w.tree.visualItemRect(w.tree.item("revolute1")).center())
    assert doc.selection == "revolute1"
    act.trigger("add_driver")
    assert doc.selection == "driver1" and m.drivers["driver1"].joint == "revolute1"
    line = w.properties.editor("expression").lines[0]
    assert w.properties.focusWidget() is line and line.selectedText() == "0"    # the motion is typed next
    act.type(line, "2*pi*t")
    act.press(line, Qt.Key.Key_Return)
    assert m.drivers["driver1"].expression == "2*pi*t"
    w.viewport.set_view("front")
    assert grab_window(w, w.viewport).save(str(screenshots_dir / "link_tool_fourbar.png"))
    with qtbot.waitSignal(w.simulation.finished, timeout=120_000):
        act.key(Qt.Key.Key_F5)
    print(f"four-bar with the link tool: {act.count} input actions")
    assert act.count <= 20

    r = w.simulation.results
    assert r.status == "ok"
    R2, R4 = r.body_rotation("link1"), r.body_rotation("link3")
    theta2 = np.arctan2(R2[:, 1, 0], R2[:, 0, 0])
    assert np.unwrap(theta2) == pytest.approx(math.pi / 2 + 2 * math.pi * r.t, abs=1e-7)   # +2πt: counter-clockwise
    theta4 = np.arctan2(-R4[:, 1, 0], -R4[:, 0, 0])                 # link3 runs from C to D: θ4 is of D→C
    exact = rocker_angle(theta2, *lengths, 0.4, theta4[0])
    pick = np.searchsorted(r.t, [0.1, 0.35, 0.6, 0.85])
    assert angle_error(theta4[pick], exact[pick]) < 1e-6


def test_moving_a_point_moves_its_links_and_joints_and_undoes(window, qtbot):
    w, doc = window, window.document
    doc.set_model(solver.build_template("four_bar"))
    doc.select("B")
    editor = w.properties.editor("position")
    spin = editor.spins[1]
    spin.selectAll()
    qtbot.keyClicks(spin, "0.12")
    qtbot.keyClick(spin, Qt.Key.Key_Return)
    m = doc.model
    assert m.joints["pin_B"].origin == pytest.approx([0.0, 0.12, 0.0])
    assert m.bodies["crank"].geometry["size"][0] == pytest.approx(0.12)
    assert w.viewport.scene.actor("B") is not None
    w.actions["undo"].trigger()
    assert m.joints["pin_B"].origin == pytest.approx([0.0, 0.1, 0.0])
    assert m.bodies["crank"].mass == pytest.approx(7850 * 0.02 * 0.01 * 0.1)
    doc.select("crank")
    assert w.properties.inertia_button is None                      # a link's mass follows its section
    assert "mass 0.157 kg" in w.properties.derived.text()
    m.set_field("crank", "width", 0.04)
    assert "mass 0.314 kg" in w.properties.derived.text() and m.bodies["crank"].inertia[2] == pytest.approx(
        7850 * 0.1 * 0.04 * 0.01 * (0.1 ** 2 + 0.04 ** 2) / 12)
    combo = w.properties.editor("point_j").combo
    assert [combo.itemText(i) for i in range(combo.count())] == ["A", "B", "C", "D"]


def test_new_from_template_builds_the_model_and_refuses_a_bad_parameter(window, qtbot):
    w = window
    dialog = w.new_from_template()
    dialog.choice.setCurrentIndex(list(solver.TEMPLATES).index("slider_crank"))
    dialog.editors["rod"].set_value(0.01)
    dialog.accept()
    assert dialog.isVisible() and "template 'slider_crank'.rod" in dialog.message.text()
    dialog.editors["rod"].set_value(0.25)
    dialog.accept()
    assert not dialog.isVisible()
    m = w.document.model
    assert m.name == "slider_crank" and m.bodies["rod"].geometry["size"][0] == pytest.approx(0.25)
    assert w.tree.item("A") is not None and w.tree.item("slide") is not None


def test_link_ends_and_a_joint_origin_picked_at_design_points_in_the_viewport(window, qtbot):
    """With the link tool open, design points clicked in the viewport fill the end last typed in;
    a joint placed by picking (Ctrl+J) whose origin snaps to a design point follows that point."""
    w, doc = window, window.document
    m = solver.Model("picked")
    m.add_point("P", (0.0, 0.0, 0.0))
    m.add_point("Q", (0.3, 0.1, 0.0))
    doc.set_model(m)
    w.actions["view_front"].trigger()
    w.viewport.render()
    act = Counted(w, qtbot)
    act.key(Qt.Key.Key_L)
    dialog = w.link_dialog
    dialog.ends["start"].point.setFocus()
    qtbot.waitUntil(lambda: dialog.target == "start", timeout=1000)
    act.click((0.0, 0.0, 0.0))
    dialog.ends["end"].point.setFocus()
    qtbot.waitUntil(lambda: dialog.target == "end", timeout=1000)
    act.click((0.3, 0.1, 0.0))
    assert [e.point.currentText() for e in dialog.ends.values()] == ["P", "Q"]
    act.press(dialog.ends["end"].point, Qt.Key.Key_Return)
    link = doc.model.bodies["link1"]
    assert (link.point_i, link.point_j) == ("P", "Q")
    assert list(doc.model.joints) == ["revolute1"] and doc.model.joints["revolute1"].at_point == "P"
    w.viewport.render()

    act.trigger("add_joint_revolute")                                  # a second pivot at Q, by picking
    act.click(tuple(link.position))
    act.click(QPoint(8, act.widget.height() - 8))                     # empty space: ground
    act.click((0.3, 0.1, 0.0))
    joint = doc.model.joints["revolute2"]
    assert (joint.body_i, joint.body_j, joint.at_point) == ("link1", "ground", "Q")
    w.editing.move([0.05, 0.0, 0.0], "Q")                             # Edit ▸ Move of the point
    assert joint.origin == pytest.approx([0.35, 0.1, 0.0]) and link.length == pytest.approx(math.hypot(0.35, 0.1))
    w.viewport.fit_all()
    w.viewport.render()
    act.click((0.35, 0.1, 0.0))              # the point, not the selected joint drawn around it
    assert doc.selection == "Q"
    act.drag((0.35, 0.1, 0.0), (0.35, 0.15, 0.0))
    pixel = 2.0 * np.linalg.norm(np.subtract(w.viewport.project((0.0, 0.0, 0.0)).toTuple(),
                                             w.viewport.project((0.01, 0.0, 0.0)).toTuple())) ** -1 * 0.01
    assert joint.origin == pytest.approx([0.35, 0.15, 0.0], abs=pixel)
    assert link.length == pytest.approx(np.linalg.norm(doc.model.points["Q"].position))


def test_typed_link_ends_and_refused_values(window, qtbot):
    from app.link_dialog import parse_point
    from app.units import UnitSystem
    si, mm = UnitSystem(), UnitSystem("mm-kg-s")
    assert parse_point("0.1, 0", si, "end") == [0.1, 0.0, 0.0]
    assert parse_point("100, 0, 5 mm", si, "end") == pytest.approx([0.1, 0.0, 0.005])
    assert parse_point("1e-1, 2e1", si, "end") == pytest.approx([0.1, 20.0, 0.0])      # exponents, not units
    assert parse_point("1e-1 m, 2 cm", si, "end") == pytest.approx([0.1, 0.02, 0.0])
    assert parse_point("100, 50", mm, "end") == pytest.approx([0.1, 0.05, 0.0])
    for text, message in (("nowhere", r"end: type a design point's name or its coordinates"),
                          ("1, 2, 3, 4", r"end: type a design point's name"),
                          ("1, 2 kg", r"end\.x: '1 kg' is .*cannot be converted to m"),
                          ("1, 2 zorks", r"end\.x: unknown unit")):
        with pytest.raises(solver.ModelError, match=message):
            parse_point(text, si, "end")

    w, doc = window, window.document
    dialog = w.add_link()
    dialog.ends["end"].point.setCurrentText("0.2, 0")
    dialog.section["wall"].set_value(0.02)                  # more than half the 0.01 m height
    dialog.accept()
    assert dialog.isVisible() and "link 'link1'.wall: must be less than half the section" in dialog.message.text()
    assert not doc.model.bodies and not doc.model.points
    dialog.section["wall"].set_value(0.002)
    dialog.accept()
    assert not dialog.isVisible() and doc.model.bodies["link1"].wall == 0.002
    assert len(doc.model.points) == 2 and list(doc.model.joints) == ["revolute1"]
    w.actions["undo"].trigger()                               # points, link and joint: one step
    assert not doc.model.points and not doc.model.bodies and not doc.model.joints
