"""Build a pendulum from an empty project with the tree actions and the property editor, save it,
reopen it and compare with the same model built in code."""
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractItemView, QApplication, QLineEdit

import solver
from app.factory import PALETTE
from app.inertia import inertia_from_geometry
from app.tree import MODEL_ITEM


def _type(qtbot, line_edit, text):
    line_edit.selectAll()
    qtbot.keyClicks(line_edit, text)
    qtbot.keyClick(line_edit, Qt.Key.Key_Return)


def expected_pendulum():
    geometry = {"shape": "box", "size": [0.05, 1.0, 0.05], "color": list(PALETTE[0])}
    mass, inertia = inertia_from_geometry(geometry, 1000.0)
    m = solver.Model(name="pendulum", gravity=(0.0, -9.81, 0.0))
    m.add_body("bob", mass=mass, inertia=inertia, position=(0.0, -0.5, 0.0), geometry=geometry)
    m.add_joint("pivot", "revolute", "ground", "bob", origin=(0.0, 0.0, 0.0), axis=(0.0, 0.0, 1.0))
    return m


@pytest.mark.slow
def test_build_save_reopen_pendulum(window, qtbot, answers, tmp_path):
    doc, props, tree = window.document, window.properties, window.tree
    assert window.windowTitle().startswith("untitled —")

    # Model name through the property editor of the tree's model item.
    tree.setCurrentItem(tree.item(MODEL_ITEM))
    assert doc.selection == MODEL_ITEM
    _type(qtbot, props.editor("name").line, "pendulum")
    assert doc.model.name == "pendulum"
    assert window.windowTitle().startswith("untitled* —")

    # A body from the Model menu action; edit it in the property editor.
    window.actions["add_body"].trigger()
    assert doc.selection == "body1" and tree.currentItem() is tree.item("body1")
    _type(qtbot, props.editor("name").line, "bob")
    assert list(doc.model.bodies) == ["bob"] and doc.selection == "bob"
    geometry = props.editor("geometry")
    for spin, value in zip(geometry.size, (0.05, 1.0, 0.05)):
        spin.setValue(value)
    props.editor("position").spins[1].setValue(-0.5)
    props.density.setValue(1000.0)
    qtbot.mouseClick(props.inertia_button, Qt.MouseButton.LeftButton)

    # A revolute joint from the tree's context-menu action, renamed in the tree (F2).
    window.actions["add_joint_revolute"].trigger()       # picking mode; Enter: type the coordinates
    qtbot.keyClick(window, Qt.Key.Key_Return)
    assert doc.selection == "revolute1"
    joint = doc.model.joints["revolute1"]
    assert (joint.body_i, joint.body_j) == ("ground", "bob")
    props.editor("origin").spins[1].setValue(0.0)
    tree.setFocus()
    qtbot.keyClick(tree, Qt.Key.Key_F2)
    assert tree.state() == QAbstractItemView.State.EditingState
    name_editor = QApplication.focusWidget()
    assert isinstance(name_editor, QLineEdit) and name_editor.text() == "revolute1"
    _type(qtbot, name_editor, "pivot")
    qtbot.waitUntil(lambda: "pivot" in doc.model.joints, timeout=2000)
    assert doc.selection == "pivot"

    # Save As, then reopen and compare.
    answers.save_path = str(tmp_path / "pendulum.mbs.json")
    assert window.actions["save_as"].trigger() is None
    assert window.windowTitle() == "pendulum.mbs.json — MBS Studio"
    window.actions["new"].trigger()
    assert len(doc.model.bodies) == 0
    answers.open_path = answers.save_path
    window.actions["open"].trigger()
    assert doc.model == expected_pendulum()
    assert doc.path == answers.save_path
    assert tree.item("bob") is not None and tree.item("pivot") is not None
    assert window.viewport.actor("pivot") is not None
