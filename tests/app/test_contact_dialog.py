"""Model ▸ Add Contact… (app/contact_dialog.py) with real widgets: the selected body is body_j, ground
body_i with a plane facing up (against gravity), each body touching with its own shape; a body
picked in the window fills the side whose list had the keyboard; a body without a shape and a pair
of shapes without a contact law are refused in the dialog naming the field; OK adds one undoable
contact and selects it."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialogButtonBox

import solver

LEFT = Qt.MouseButton.LeftButton


def model():
    m = solver.Model(name="drop", gravity=(0.0, 0.0, -9.81))
    m.add_body("ball", mass=0.5, inertia=(5e-4,) * 3, position=(0.0, 0.0, 0.2),
               geometry={"shape": "sphere", "radius": 0.05})
    m.add_body("crate", mass=1.0, inertia=(1e-3,) * 3, position=(0.5, 0.0, 0.2),
               geometry={"shape": "box", "size": [0.1, 0.1, 0.1]})
    m.add_body("bin", mass=1.0, inertia=(1e-3,) * 3, position=(1.0, 0.0, 0.2),
               geometry={"shape": "box", "size": [0.1, 0.1, 0.1]})
    m.add_body("bare", mass=1.0, inertia=(1e-3,) * 3, position=(1.5, 0.0, 0.2))
    return m


def ok(qtbot, dialog):
    qtbot.mouseClick(dialog.buttons.button(QDialogButtonBox.StandardButton.Ok), LEFT)


def test_add_contact_picks_two_bodies_with_their_own_shapes(qtbot, window):
    doc = window.document
    doc.set_model(model())
    doc.select("ball")
    window.actions["add_contact"].trigger()
    dialog = window.contact_dialog
    assert dialog.side["body_i"].currentText() == solver.GROUND and dialog.side["body_j"].currentText() == "ball"
    assert dialog.shape_label["body_i"].text() == "ground: plane, normal 0, 0, 1"
    assert dialog.shape_label["body_j"].text() == "its own: sphere, radius 0.05"
    ok(qtbot, dialog)
    contact = doc.model.forces["contact1"]
    assert (contact.body_i, contact.body_j) == (solver.GROUND, "ball")
    assert contact.geometry_i["shape"] == "plane" and list(contact.geometry_i["normal"]) == [0.0, 0.0, 1.0]
    assert contact.geometry_j == {"shape": "none"}                       # the ball's own sphere
    assert contact.stiffness == solver.Contact.NEW["stiffness"] and doc.selection == "contact1"
    doc.undo_stack.undo()
    assert "contact1" not in doc.model.forces


def test_a_body_picked_in_the_window_fills_the_focused_side_and_bad_pairs_are_refused(qtbot, window):
    doc = window.document
    doc.set_model(model())
    window.actions["add_contact"].trigger()
    dialog = window.contact_dialog
    dialog.side["body_j"].setFocus()
    qtbot.waitUntil(lambda: dialog.target == "body_j")
    doc.select("bare")                                                   # as a click in the tree does
    assert dialog.side["body_j"].currentText() == "bare"
    ok(qtbot, dialog)
    assert dialog.isVisible() and not doc.model.forces
    assert dialog.message.text().startswith("forces 'contact1'.body_j: body 'bare' has no shape")
    dialog.side["body_i"].setFocus()
    qtbot.waitUntil(lambda: dialog.target == "body_i")
    doc.select("crate")
    dialog.side["body_j"].setCurrentText("bin")
    ok(qtbot, dialog)
    assert "no contact between a box and a box" in dialog.message.text() and not doc.model.forces
    dialog.side["body_j"].setCurrentText("ball")                        # box–sphere has a closed form
    ok(qtbot, dialog)
    contact = doc.model.forces["contact1"]
    assert (contact.body_i, contact.body_j) == ("crate", "ball") and not dialog.isVisible()
    assert contact.geometry_i == {"shape": "none"} and contact.geometry_j == {"shape": "none"}


def test_the_group_kind_adds_one_contact_group_of_the_checked_bodies(qtbot, window):
    doc = window.document
    m = model()
    m.add_body("marble", mass=0.1, inertia=(1e-5,) * 3, position=(2.0, 0.0, 0.2),
               geometry={"shape": "sphere", "radius": 0.02})
    doc.set_model(m)
    doc.select("ball")
    window.actions["add_contact"].trigger()
    dialog = window.contact_dialog
    dialog.kind.setCurrentText("group")
    assert dialog.members.isVisibleTo(dialog) and not dialog.side["body_i"].isVisibleTo(dialog)
    assert dialog.checked() == ["ball", "crate", "bin", "marble"]           # "bare" has no shape to touch with
    ok(qtbot, dialog)                                                        # two boxes: no contact law
    assert dialog.isVisible() and not doc.model.forces
    assert dialog.message.text().startswith("forces 'contacts1'.bodies: 'crate' (box) and 'bin' (box)")
    for k in range(dialog.members.count()):
        dialog.members.item(k).setCheckState(Qt.CheckState.Unchecked)
    doc.select("marble")                                                     # a pick checks the body
    assert dialog.checked() == ["marble"]
    ok(qtbot, dialog)
    assert "at least 2 bodies" in dialog.message.text() and not doc.model.forces
    doc.select("crate")
    doc.select("ball")
    ok(qtbot, dialog)
    group = doc.model.forces["contacts1"]
    assert group.KIND == "contact_group" and group.bodies == ["ball", "crate", "marble"] and not dialog.isVisible()
    assert group.stiffness == solver.ContactGroup.NEW["stiffness"] and doc.selection == "contacts1"
    doc.undo_stack.undo()
    assert "contacts1" not in doc.model.forces
