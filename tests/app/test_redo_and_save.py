"""Keyboard redo (Ctrl+Shift+Z and Ctrl+Y) and the first save of an untitled model, which names
the model after its file without making the results stale (issue #31, items 6 and 7)."""
import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QAction

CTRL = Qt.KeyboardModifier.ControlModifier
SHIFT = Qt.KeyboardModifier.ShiftModifier


@pytest.mark.parametrize("modifiers, key", [(CTRL | SHIFT, Qt.Key.Key_Z), (CTRL, Qt.Key.Key_Y)])
def test_keyboard_redo(window, qtbot, modifiers, key):
    w = window
    w.viewport.vtk_widget.setFocus()
    messages = []
    w.statusBar().messageChanged.connect(messages.append)
    qtbot.keyClick(w, Qt.Key.Key_B, CTRL)
    assert list(w.document.model.bodies) == ["body1"]
    w.viewport.vtk_widget.setFocus()
    qtbot.keyClick(w, Qt.Key.Key_Z, CTRL)
    assert not w.document.model.bodies
    qtbot.keyClick(w, key, modifiers)
    assert list(w.document.model.bodies) == ["body1"]
    assert not any("Ambiguous" in m for m in messages)


def test_first_save_keeps_results_current(window, qtbot, pendulum, answers, tmp_path):
    w = window
    pendulum.name = "untitled"
    w.document.set_model(pendulum)
    with qtbot.waitSignal(w.simulation.finished, timeout=20000):
        assert w.run_simulation(t_end=0.05)
    answers.save_path = str(tmp_path / "swing.mbs.json")
    assert w.save()
    assert w.document.model.name == "swing" and not w.document.modified
    assert not w.simulation.stale
    w.document.select("bob")
    w.properties.commit("mass", 3.0)                # a real edit still makes them stale
    assert w.simulation.stale


def test_no_key_is_bound_twice(window):
    """Every shortcut of the window's actions is unique (a key bound twice never fires)."""
    keys = [k.toString() for a in window.findChildren(QAction) for k in a.shortcuts() if not k.isEmpty()]
    assert len(keys) == len(set(keys)), sorted(k for k in keys if keys.count(k) > 1)
    assert {"Ctrl+Shift+Z", "Ctrl+Y"} <= {k.toString() for k in window.actions["redo"].shortcuts()}
