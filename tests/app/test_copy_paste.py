"""Copy and paste of elements with Ctrl+C / Ctrl+V in the real window: a new name, one undo step,
repeated pastes step along x, pasting into another model, and clear messages when it cannot."""
from PySide6.QtCore import Qt

import solver


def _keys(qtbot, window, key):
    window.tree.setFocus()
    qtbot.keyClick(window.tree, key, Qt.KeyboardModifier.ControlModifier)


def test_copy_paste_a_body(window, qtbot, pendulum):
    doc = window.document
    doc.set_model(pendulum)
    doc.select("bob")
    _keys(qtbot, window, Qt.Key.Key_C)
    _keys(qtbot, window, Qt.Key.Key_V)
    assert list(doc.model.bodies) == ["bob", "bob1"] and doc.selection == "bob1"
    bob, copy = doc.model.bodies["bob"], doc.model.bodies["bob1"]
    assert copy.position == [bob.position[0] + 0.1, *bob.position[1:]]
    assert (copy.mass, copy.inertia, copy.geometry) == (bob.mass, bob.inertia, bob.geometry)
    assert doc.undo_stack.count() == 1 and doc.undo_stack.text(0) == "Add body 'bob1'"
    _keys(qtbot, window, Qt.Key.Key_V)                                   # the next one steps on
    assert doc.model.bodies["bob2"].position[0] == bob.position[0] + 0.2
    doc.undo_stack.undo()
    doc.undo_stack.undo()
    assert list(doc.model.bodies) == ["bob"]
    doc.undo_stack.redo()
    assert list(doc.model.bodies) == ["bob", "bob1"]


def test_paste_into_another_model_and_refusals(window, qtbot, pendulum, answers):
    doc = window.document
    doc.set_model(pendulum)
    window.editing.clipboard = None
    _keys(qtbot, window, Qt.Key.Key_V)
    assert answers.errors[-1] == ("Paste", ["nothing copied: select an element and press Ctrl+C first"])
    doc.select("pivot")
    _keys(qtbot, window, Qt.Key.Key_C)
    doc.select("bob")
    _keys(qtbot, window, Qt.Key.Key_C)
    doc.set_model(solver.Model(name="empty"))                             # New project: the copy stays
    assert window.editing.paste() == "bob1"
    assert doc.model.bodies["bob1"].mass == 2.0
    doc.set_model(solver.Model(name="other"))
    doc.model.add_body("crank", mass=1.0, inertia=(0.1, 0.1, 0.1))
    window.editing.clipboard = [pendulum.joints["pivot"].copy()]         # a joint on 'bob', not here
    assert window.editing.paste() == ""
    title, problems = answers.errors[-1]
    assert title == "Paste 'pivot'" and any("bob" in p for p in problems)
    assert list(doc.model.joints) == [] and doc.undo_stack.count() == 0


def test_ctrl_c_in_a_text_field_copies_text(window, qtbot, pendulum):
    from PySide6.QtWidgets import QApplication
    window.document.set_model(pendulum)
    window.document.select("bob")
    window.editing.clipboard = None
    line = window.properties.editor("name").line
    line.setFocus()
    line.selectAll()
    qtbot.keyClick(line, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    assert window.editing.clipboard is None and QApplication.clipboard().text() == "bob"
    qtbot.keyClick(line, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)
    assert list(window.document.model.bodies) == ["bob"]
