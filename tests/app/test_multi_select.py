"""Several items of one kind selected with real clicks (Ctrl-click, Shift-click in the tree, Ctrl-click
in the viewport) are edited together in the property editor: shared values shown, differing ones
"—" (per vector component), one edit sets every selected element as ONE undo step, the name is
read-only; Delete, Copy and Paste work on the selection."""
from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest

import solver
from app.field_editors import MIXED, MIXED_TEXT

CTRL = Qt.KeyboardModifier.ControlModifier
SHIFT = Qt.KeyboardModifier.ShiftModifier
LEFT = Qt.MouseButton.LeftButton


@pytest.fixture
def three(window):
    m = solver.Model(name="three")
    for k, (mass, x) in enumerate(((1.0, 0.0), (2.0, 1.0), (3.0, 2.0))):
        m.add_body(f"b{k + 1}", mass=mass, inertia=(0.1, 0.1, 0.1), position=(x, 0.5, 0.0),
                   geometry={"shape": "box", "size": [0.4, 0.2, 0.2]})
    m.add_joint("pin", "revolute", "ground", "b1")
    window.document.set_model(m)
    return window


def click_item(tree, name, modifier=Qt.KeyboardModifier.NoModifier):
    item = tree.item(name)
    tree.scrollToItem(item)
    QTest.mouseClick(tree.viewport(), LEFT, modifier, tree.visualItemRect(item).center())


def type_into(qtbot, spin, text):
    line = spin.lineEdit()
    line.selectAll()
    qtbot.keyClicks(line, text)
    qtbot.keyClick(line, Qt.Key.Key_Return)


def test_three_bodies_edited_at_once_and_undone_once(three, qtbot):
    w, doc, tree, props = three, three.document, three.tree, three.properties
    click_item(tree, "b1")
    click_item(tree, "b3", SHIFT)                        # b1..b3
    assert doc.selected == ["b1", "b2", "b3"] and doc.selection == "b3"
    assert props.target.title.startswith("3 bodies selected")
    mass = props.editor("mass")
    assert mass.spin.text() == MIXED_TEXT and mass.value() is MIXED        # 1, 2, 3 kg differ
    position = props.editor("position")
    assert position.spins[0].text() == MIXED_TEXT                          # x differs
    assert position.value()[1:] == [0.5, 0.0]                              # y, z shared
    assert not props.editor("name").isEnabled()

    stack = doc.undo_stack
    type_into(qtbot, mass.spin, "2.5")
    assert [b.mass for b in doc.model.bodies.values()] == [2.5, 2.5, 2.5]
    assert stack.count() == 1 and mass.spin.text() == "2.5 kg"
    type_into(qtbot, position.spins[1], "200 mm")                          # one component only
    assert [b.position for b in doc.model.bodies.values()] == [[0.0, 0.2, 0.0], [1.0, 0.2, 0.0], [2.0, 0.2, 0.0]]
    assert stack.count() == 2
    w.actions["undo"].trigger()                                            # one undo: all three y back
    assert [b.position for b in doc.model.bodies.values()] == [[0.0, 0.5, 0.0], [1.0, 0.5, 0.0], [2.0, 0.5, 0.0]]
    assert [b.mass for b in doc.model.bodies.values()] == [2.5, 2.5, 2.5]
    w.actions["undo"].trigger()                                            # one undo: all three masses back
    assert [b.mass for b in doc.model.bodies.values()] == [1.0, 2.0, 3.0]
    assert props.editor("mass").spin.text() == MIXED_TEXT and stack.index() == 0

    click_item(tree, "b2", CTRL)                         # Ctrl-click takes b2 out
    assert doc.selected == ["b1", "b3"]
    type_into(qtbot, props.editor("mass").spin, "1")                       # b1 already has 1 kg
    assert [b.mass for b in doc.model.bodies.values()] == [1.0, 2.0, 1.0]
    click_item(tree, "pin", CTRL)                        # mixed kinds: nothing to edit together
    assert doc.selected == ["b1", "b3", "pin"] and "one kind" in props.target.title
    assert props.editors == {}
    click_item(tree, "b2")                               # a plain click: one item again
    assert doc.selected == ["b2"] and props.editor("name").isEnabled()


def test_refused_edit_changes_none_of_them(three, qtbot):
    doc, props = three.document, three.properties
    doc.select_many(["b1", "b2"])
    type_into(qtbot, props.editor("mass").spin, "-1")
    assert [b.mass for b in doc.model.bodies.values()] == [1.0, 2.0, 3.0]
    assert props.error("mass") and doc.undo_stack.count() == 0


def test_delete_copy_paste_the_selection(three, qtbot, answers):
    w, doc, tree = three, three.document, three.tree
    click_item(tree, "b1")
    click_item(tree, "pin", CTRL)
    tree.setFocus()
    qtbot.keyClick(tree, Qt.Key.Key_C, CTRL)
    qtbot.keyClick(tree, Qt.Key.Key_V, CTRL)             # the joint follows the copied body
    assert list(doc.model.bodies) == ["b1", "b2", "b3", "b4"] and list(doc.model.joints) == ["pin", "pin1"]
    assert doc.model.joints["pin1"].body_j == "b4" and doc.model.bodies["b4"].position == [0.1, 0.5, 0.0]
    assert doc.selected == ["b4", "pin1"] and doc.undo_stack.count() == 1
    doc.select_many(["b2", "b3", "b4"])
    tree.setFocus()
    qtbot.keyClick(tree, Qt.Key.Key_Delete)              # b4 takes its joint pin1 along (asked first)
    assert list(doc.model.bodies) == ["b1"] and list(doc.model.joints) == ["pin"]
    assert any("pin1" in text for _, text in answers.asked)
    assert doc.undo_stack.count() == 2 and doc.selected == []
    w.actions["undo"].trigger()
    assert list(doc.model.bodies) == ["b1", "b2", "b3", "b4"] and list(doc.model.joints) == ["pin", "pin1"]


@pytest.mark.slow
def test_ctrl_click_in_the_viewport_adds_to_the_selection(three, qtbot):
    w, doc, vp = three, three.document, three.viewport
    vp.set_view("front")
    vp.render()
    widget = vp.vtk_widget
    QTest.mouseClick(widget, LEFT, Qt.KeyboardModifier.NoModifier, vp.project((0.0, 0.5, 0.0)))
    assert doc.selected == ["b1"]
    QTest.mouseClick(widget, LEFT, CTRL, vp.project((2.0, 0.5, 0.0)))
    assert doc.selected == ["b1", "b3"]
    assert {w.tree.item("b1").isSelected(), w.tree.item("b3").isSelected()} == {True}
    assert not w.tree.item("b2").isSelected()
    assert set(vp.scene.selected) == {"b1", "b3"}
    assert w.properties.editor("mass").value() is MIXED
    QTest.mouseClick(widget, LEFT, CTRL, vp.project((0.0, 0.5, 0.0)))      # again: taken out
    assert doc.selected == ["b3"]
    QTest.mouseClick(widget, LEFT, Qt.KeyboardModifier.NoModifier, QPoint(3, 3))
    assert doc.selected == []


def test_fields_that_cannot_show_a_difference_are_read_only(three, qtbot):
    """Differing orientations and joints of different types: no crash, such fields read-only; shared
    fields of two joints of different types (their common fields) stay editable, one step."""
    doc, props, model = three.document, three.properties, three.document.model
    model.bodies["b2"].set("orientation", (0.0, 0.0, 0.0, 1.0))
    model.add_joint("slide", "prismatic", "b1", "b2", origin=(0.0, 1.0, 0.0))
    model.add_force("push", "b2", force=(0.0, "sin(t)", 0.0))
    model.add_force("pull", "b3", force=(1.0, 0.0, 0.0), point=(2.0, 0.5, 0.0))
    doc.select_many(["b1", "b2"])
    assert not props.editor("orientation").isEnabled() and props.editor("geometry").isEnabled()
    doc.select_many(["push", "pull"])
    assert not props.editor("force").isEnabled() and not props.editor("point").isEnabled()
    doc.select_many(["pin", "slide"])
    assert props.editor("type").value() == "" and props.editor("origin").value()[0] == 0.0
    type_into(qtbot, props.editor("origin").spins[2], "0.25")
    assert [j.origin[2] for j in model.joints.values()] == [0.25, 0.25] and doc.undo_stack.count() == 1
