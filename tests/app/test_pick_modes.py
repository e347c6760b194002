"""Interaction in the viewport with real events: hover tint and snap ball, joint placement by
picking (prompts, ground by empty space, axis from a picked cylinder, two-point links, Esc, one
undo step) and dragging the selected marker or body in the view plane (one undo step)."""
from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QEvent, QPoint, QPointF, Qt
from PySide6.QtGui import QMouseEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from real_input import Actions

from app.viewport.scene import HIGHLIGHT, HOVER

LEFT = Qt.MouseButton.LeftButton
CTRL = Qt.KeyboardModifier.ControlModifier


@pytest.fixture
def front(window, pendulum):
    pendulum.add_body("arm", mass=1.0, inertia=(0.1, 0.1, 0.1), position=(0.6, -0.5, 0.0),
                      geometry={"shape": "cylinder", "radius": 0.04, "length": 0.4, "axis": "x"})
    pendulum.add_marker("tag", "bob", position=(0.3, -0.2, 0.0))
    window.document.set_model(pendulum)
    window.viewport.set_view("front")
    window.viewport.render()
    return window


def click(window, point):
    vp = window.viewport
    pos = point if isinstance(point, QPoint) else vp.project(point)
    QTest.mouseClick(vp.vtk_widget, LEFT, Qt.KeyboardModifier.NoModifier, pos)


def hover(widget, pos):
    """A mouse move without buttons, delivered to the VTK widget (QTest.mouseMove goes through the
    top-level window, which does not route it to the widget's own native window)."""
    QApplication.sendEvent(widget, QMouseEvent(QEvent.Type.MouseMove, QPointF(pos), QPointF(widget.mapToGlobal(pos)),
                                               Qt.MouseButton.NoButton, Qt.MouseButton.NoButton,
                                               Qt.KeyboardModifier.NoModifier))


def status(window):
    return window.statusBar().currentMessage()


@pytest.mark.slow
def test_hover_tints_and_marks_the_snapped_feature(front, qtbot):
    vp = front.viewport
    bob = vp.actor("bob").GetProperty()
    hover(vp.vtk_widget, vp.project((0.0, -0.25, 0.0)))      # on the bar, no feature near
    assert bob.GetColor() == pytest.approx(HOVER)
    assert not vp.scene.snap_marker.GetVisibility()
    hover(vp.vtk_widget, vp.project((0.0, -1.0, 0.0)))       # the bar's end-face centre
    assert vp.scene.snap_marker.GetVisibility()
    assert vp.scene.snap_marker.GetPosition() == pytest.approx((0.0, -1.0, 0.0), abs=1e-12)
    hover(vp.vtk_widget, QPoint(3, 3))                        # empty space
    assert bob.GetColor() == pytest.approx((0.3, 0.55, 0.85)) and not vp.scene.snap_marker.GetVisibility()
    front.document.select("bob")                                        # the selection keeps its colour
    hover(vp.vtk_widget, vp.project((0.0, -0.25, 0.0)))
    assert bob.GetColor() == pytest.approx(HIGHLIGHT)


@pytest.mark.slow
def test_joint_by_picking_prompts_and_is_one_undo_step(front, qtbot):
    w, doc = front, front.document
    stack = doc.undo_stack
    qtbot.keyClick(w, Qt.Key.Key_J, CTRL)
    assert "pick the first body = body_i, the base" in status(w)        # the prompt says which is which
    click(w, QPoint(3, 3))                                              # empty space is not a first body
    assert "not ground" in status(w)
    click(w, (0.0, -0.5, 0.0))                                          # bob
    assert "pick the second body" in status(w) and "body_j, moving relative to bob" in status(w)
    click(w, (0.0, -0.25, 0.0))                                         # bob again: refused
    assert "other than bob" in status(w)
    click(w, (0.6, -0.5, 0.0))                                          # arm
    assert "pick the joint origin" in status(w)
    hover(w.viewport.vtk_widget, w.viewport.project((0.4, -0.5, 0.0)))
    assert status(w).endswith("— end centre of arm")
    click(w, (0.4, -0.5, 0.0))                                          # the arm's end centre
    joint = doc.model.joints["revolute1"]
    assert (joint.body_i, joint.body_j) == ("bob", "arm")
    assert joint.origin == pytest.approx((0.4, -0.5, 0.0), abs=1e-12)
    assert joint.axis == pytest.approx((1.0, 0.0, 0.0), abs=1e-12)     # the cylinder's axis, not the view's
    assert status(w) == "" and w.viewport.mode is None
    assert stack.count() == 1
    stack.undo()
    assert "revolute1" not in doc.model.joints
    click(w, (0.0, -0.5, 0.0))                                          # selecting again
    assert doc.selection == "bob"


@pytest.mark.slow
def test_distance_link_by_picking_two_points(front, qtbot):
    w, doc = front, front.document
    w.actions["add_joint_distance"].trigger()
    click(w, (0.6, -0.5, 0.0))
    click(w, QPoint(3, 3))                                              # ground
    click(w, (0.8, -0.5, 0.0))
    assert "point on the second body" in status(w)
    click(w, (0.0, 0.0, 0.0))                                           # the pivot's origin
    link = doc.model.joints["distance1"]
    assert (link.body_i, link.body_j) == ("arm", "ground")
    assert link.origin == pytest.approx((0.8, -0.5, 0.0), abs=1e-12)
    assert link.origin2 == pytest.approx((0.0, 0.0, 0.0), abs=1e-12)


@pytest.mark.slow
def test_escape_cancels_joint_placement(front, qtbot):
    w, doc = front, front.document
    qtbot.keyClick(w, Qt.Key.Key_J, CTRL)
    click(w, (0.0, -0.5, 0.0))
    qtbot.keyClick(w, Qt.Key.Key_Escape)
    assert w.viewport.mode is None and status(w) == "" and not w.actions["cancel_mode"].isEnabled()
    assert list(doc.model.joints) == ["pivot"] and doc.undo_stack.count() == 0


def drag(window, start, end):
    vp = window.viewport
    a, b = vp.project(start), vp.project(end)
    QTest.mousePress(vp.vtk_widget, LEFT, Qt.KeyboardModifier.NoModifier, a)
    for s in (0.25, 0.5, 0.75, 1.0):
        hover(vp.vtk_widget, QPoint(round(a.x() + s * (b.x() - a.x())), round(a.y() + s * (b.y() - a.y()))))
    QTest.mouseRelease(vp.vtk_widget, LEFT, Qt.KeyboardModifier.NoModifier, b)


@pytest.mark.slow
def test_drag_selected_marker_in_the_view_plane(front, qtbot):
    w, doc = front, front.document
    vp = w.viewport
    camera = vp.renderer.GetActiveCamera()
    before = camera.GetPosition()
    click(w, (0.3, -0.2, 0.0))
    assert doc.selection == "tag"
    drag(w, (0.3, -0.2, 0.0), (0.5, 0.1, 0.0))
    pixel = 1.0 / abs(vp.project((1.0, 0.0, 0.0)).x() - vp.project((0.0, 0.0, 0.0)).x())
    assert doc.model.markers["tag"].position == pytest.approx((0.5, 0.1, 0.0), abs=pixel)
    assert doc.model.markers["tag"].position[2] == pytest.approx(0.0, abs=1e-9)   # stays in the view plane
    assert camera.GetPosition() == pytest.approx(before)                           # the camera did not turn
    assert doc.undo_stack.count() == 1
    doc.undo_stack.undo()
    assert doc.model.markers["tag"].position == pytest.approx((0.3, -0.2, 0.0))


@pytest.mark.slow
def test_drag_on_an_unselected_body_rotates_the_camera(front, qtbot):
    w, doc = front, front.document
    camera = w.viewport.renderer.GetActiveCamera()
    before = camera.GetPosition()
    drag(w, (0.0, -0.5, 0.0), (0.3, -0.3, 0.0))
    assert doc.model.bodies["bob"].position == pytest.approx((0.0, -0.5, 0.0))
    assert doc.undo_stack.count() == 0
    assert np.linalg.norm(np.subtract(camera.GetPosition(), before)) > 1e-6


@pytest.mark.slow
def test_drag_a_marker_inside_a_body_by_its_origin(front, qtbot):
    """A marker at the bob's CM is hidden in the bar; pressing on its (snapped) origin drags it."""
    w, doc = front, front.document
    doc.model.add_marker("inner", "bob", position=(0.0, -0.5, 0.0))
    w.viewport.render()
    doc.select("inner")
    drag(w, (0.0, -0.5, 0.0), (-0.2, -0.5, 0.0))
    pixel = 1.0 / abs(w.viewport.project((1.0, 0.0, 0.0)).x() - w.viewport.project((0.0, 0.0, 0.0)).x())
    assert doc.model.markers["inner"].position == pytest.approx((-0.2, -0.5, 0.0), abs=pixel)
    assert doc.model.bodies["bob"].position == pytest.approx((0.0, -0.5, 0.0))


def _menu_action(window, menu_text, item_text):
    """The action ``item_text`` of Model ▸ ``menu_text`` as the menu bar holds it."""
    model_menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "&Model")
    submenu = next(a.menu() for a in model_menu.actions() if a.text() == menu_text)
    return next(a for a in submenu.actions() if a.text() == item_text)


@pytest.mark.slow
def test_add_joint_menu_enters_picking_with_its_type(front, qtbot):
    """Model ▸ Add Joint ▸ prismatic starts picking a prismatic joint (no joint added yet); three
    picks place it (four actions: the menu entry and three clicks), one undo step; Esc from the same
    entry adds nothing."""
    w, doc = front, front.document
    act = Actions(w, qtbot)
    _menu_action(w, "Add &Joint", "prismatic").trigger()
    act.count += 1                                                      # the menu entry
    assert w.viewport.mode is w.placement and w.placement.joint_type == "prismatic"
    assert status(w).startswith("Add prismatic joint: pick the first body") and "Enter" in status(w)
    assert list(doc.model.joints) == ["pivot"] and doc.undo_stack.count() == 0
    act.click((0.6, -0.5, 0.0))                                         # arm
    act.click((0.0, -0.5, 0.0))                                         # bob
    act.click((0.8, -0.5, 0.0))                                         # the arm's far end centre
    joint = doc.model.joints["prismatic1"]
    assert (joint.type, joint.body_i, joint.body_j) == ("prismatic", "arm", "bob")
    assert joint.origin == pytest.approx((0.8, -0.5, 0.0), abs=1e-12)
    assert joint.axis == pytest.approx((1.0, 0.0, 0.0), abs=1e-12)     # the cylinder's axis
    assert doc.undo_stack.count() == 1 and w.viewport.mode is None and act.count == 4

    _menu_action(w, "Add &Joint", "spherical").trigger()
    act.click((0.0, -0.5, 0.0))
    act.key(Qt.Key.Key_Escape)
    assert w.viewport.mode is None and status(w) == "" and "spherical1" not in doc.model.joints
    assert doc.undo_stack.count() == 1


@pytest.mark.slow
def test_enter_while_picking_adds_the_joint_for_typed_coordinates(front, qtbot):
    """Enter at the picking prompt adds the joint from ground at the CM of the body picked first
    (one undo step) and selects it: its origin is then typed in the property editor ("50 mm")."""
    w, doc = front, front.document
    qtbot.keyClick(w, Qt.Key.Key_J, CTRL)
    click(w, (0.6, -0.5, 0.0))                                          # arm
    assert "pick the second body" in status(w)
    qtbot.keyClick(w, Qt.Key.Key_Return)
    joint = doc.model.joints["revolute1"]
    assert (joint.body_i, joint.body_j) == ("ground", "arm")
    assert joint.origin == pytest.approx((0.6, -0.5, 0.0))
    assert w.viewport.mode is None and doc.selection == "revolute1" and doc.undo_stack.count() == 1
    assert not w.actions["place_typed"].isEnabled()
    origin = w.properties.editor("origin")
    origin.spins[0].lineEdit().selectAll()
    qtbot.keyClicks(origin.spins[0].lineEdit(), "50 mm")
    qtbot.keyClick(origin.spins[0].lineEdit(), Qt.Key.Key_Return)
    assert doc.model.joints["revolute1"].origin == pytest.approx((0.05, -0.5, 0.0))
    assert w.viewport.mode is None                                      # the Return went to the field


@pytest.mark.slow
def test_enter_in_a_field_while_picking_commits_the_field(front, qtbot):
    """While picking, Enter typed in a property field commits that field (no joint is added and the
    picking goes on); Enter elsewhere adds the joint."""
    w, doc = front, front.document
    doc.select("bob")
    qtbot.keyClick(w, Qt.Key.Key_J, CTRL)
    mass = w.properties.editor("mass").spin
    mass.setFocus()
    mass.lineEdit().selectAll()
    qtbot.keyClicks(mass.lineEdit(), "3")
    qtbot.keyClick(mass.lineEdit(), Qt.Key.Key_Return)
    assert doc.model.bodies["bob"].mass == 3.0
    assert list(doc.model.joints) == ["pivot"] and w.viewport.mode is w.placement
    w.viewport.vtk_widget.setFocus()
    qtbot.keyClick(w.viewport.vtk_widget, Qt.Key.Key_Return)
    assert list(doc.model.joints) == ["pivot", "revolute1"] and w.viewport.mode is None
