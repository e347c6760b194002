"""The planar option in the real window: Check Model on a planar loop built with 3-D joints offers the
planar joint forms (one undoable step), the solver settings dialog edits the option, and a run of the
slider–crank with it leaves no reaction flagged in the plots or the tree."""
from __future__ import annotations

from pathlib import Path

import pytest

from PySide6.QtCore import Qt

from app import dialogs
from app.run_control import SettingsDialog

SAMPLES = Path(__file__).resolve().parents[2] / "sample_models"
pytestmark = pytest.mark.slow          # a real window each


def test_check_model_offers_the_planar_forms(window, monkeypatch, answers):
    shown = []

    def press_action(parent, title, summary, lines, warning=False, action=None):
        shown.append((summary, action, list(lines)))
        return action is not None
    monkeypatch.setattr(dialogs, "show_report", press_action)
    assert window.load(str(SAMPLES / "slider_crank.mbs.json"))
    window.actions["check"].trigger()
    summary, action, lines = shown[-1]
    assert summary == "DOF 1 (Grübler -2), 3 redundant constraint equations"
    assert action == "Use planar joint forms (xy plane)"
    assert any(line.startswith("The model is planar (in the xy plane): the solver setting planar = 'xy'")
               for line in lines)
    model = window.document.model
    assert model.settings.planar == "xy" and window.document.undo_stack.undoText() == "Set solver planar"
    window.actions["check"].trigger()
    summary, action, lines = shown[-1]
    assert summary == "DOF 1 (Grübler 1)" and action is None
    assert "Grübler (Kutzbach) count in the xy plane: 9 body freedoms (3 moving bodies) − 8 joint equations = 1." \
        in lines
    window.document.undo_stack.undo()
    assert model.settings.planar == "off"
    assert answers.errors == []


def test_settings_dialog_edits_the_option(window, qtbot):
    model = window.document.model
    dialog = SettingsDialog(dict(model.settings.values), window)
    qtbot.addWidget(dialog)
    editor = dialog.editors["planar"]
    assert dialog.values()["planar"] == "off"
    combo = editor.combo
    assert [combo.itemText(k) for k in range(combo.count())] == ["off", "auto", "xy", "yz", "zx"]
    assert "planar joint forms" in editor.toolTip()
    qtbot.keyClick(combo, Qt.Key.Key_Down)                 # the keyboard, as a user picks "auto"
    assert dialog.values()["planar"] == "auto"


def test_planar_run_flags_no_reaction(window, qtbot, monkeypatch):
    monkeypatch.setattr(dialogs, "show_run_failure", lambda parent, outcome: pytest.fail(outcome.message))
    assert window.load(str(SAMPLES / "slider_crank.mbs.json"))
    window.document.model.settings.set("planar", "xy")
    with qtbot.waitSignal(window.simulation.results_changed, timeout=60000):
        assert window.run_simulation(t_end=0.05)
    results = window.simulation.results
    assert results.nonunique_components == {}
    assert any(e["message"].startswith("planar: the model is planar in the xy plane") for e in results.events)
    window.tree.setCurrentItem(window.tree.item("crank_pin"))
    plots = window.plots
    assert plots.warning.isHidden()
    assert [label.text for _, label in plots.rows["force"].legend.items] == [
        "crank_pin Fx", "crank_pin Fy", "crank_pin Fz", "crank_pin |F|"]
    for name in window.document.model.joints:
        assert not window.tree.is_marked_nonunique(name)
