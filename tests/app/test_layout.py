"""Layout and labels: the plots get at least 35 % of the window height on a first launch, one
Solver Settings… action, the settings dialog wide enough for its title, the model name follows
Save As, and the energy panel of a driven model speaks of driver work, not drift."""
import json
from pathlib import Path

import pytest

import solver
from app import dialogs
from app.run_control import SettingsDialog

SAMPLES = Path(__file__).resolve().parents[2] / "sample_models"


@pytest.mark.slow
def test_plots_get_35_percent_of_the_height_on_first_launch(window, qtbot):
    window.plot_dock.show()
    window.plot_dock.raise_()
    qtbot.wait(50)
    share = window.plot_dock.height() / window.height()
    assert share >= 0.35, share
    assert window.plots.graphics.height() >= 0.2 * window.height()


@pytest.mark.slow
def test_one_solver_settings_action_opening_the_dialog(window, monkeypatch):
    simulate_menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "&Simulate")
    texts = [a.text() for a in simulate_menu.actions()]
    assert [t for t in texts if "settings" in t.lower()] == ["Solver &Settings…"]
    asked = []
    monkeypatch.setattr(dialogs, "ask_solver_settings", lambda parent, values: asked.append(values))
    window.actions["run_settings"].trigger()
    assert asked and asked[0]["t_end"] == window.document.model.settings.t_end


def test_settings_dialog_has_room_for_its_title(qtbot):
    dialog = SettingsDialog(dict(solver.Settings().values))
    qtbot.addWidget(dialog)
    dialog.show()
    title = dialog.fontMetrics().horizontalAdvance("Solver settings")
    assert dialog.width() >= title + 200


@pytest.mark.slow
def test_model_name_follows_save_as(window, answers, tmp_path, qtbot):
    window.editing.add_body()
    assert window.document.model.name == "untitled"
    answers.save_path = str(tmp_path / "crank.mbs.json")
    assert window.save_as()
    assert window.document.model.name == "crank"
    assert json.loads((tmp_path / "crank.mbs.json").read_text())["model"]["name"] == "crank"
    assert window.tree.item("/model").text(0) == "Model: crank" and not window.document.modified
    answers.save_path = str(tmp_path / "crank_v2.mbs.json")     # named after its file: follows again
    assert window.save_as() and window.document.model.name == "crank_v2"
    window.document.select("/model")
    window.properties.commit("name", "my crank")                 # a name of the user's: kept
    answers.save_path = str(tmp_path / "other.mbs.json")
    assert window.save_as() and window.document.model.name == "my crank"


@pytest.mark.slow
@pytest.mark.parametrize("sample, driven", [("fourbar.mbs.json", True), ("slider_crank.mbs.json", False)])
def test_energy_panel_names_driver_work(window, sample, driven):
    results = solver.simulate(solver.load_model(str(SAMPLES / sample)), t_end=0.05)
    assert window.load(str(SAMPLES / sample))
    window.simulation.set_results(results)
    energy = window.energy
    assert ("driver work" in energy.curves) == driven and ("drift" in energy.curves) == (not driven)
    title = energy.rows["drift"].titleLabel.text
    assert ("Work of the drivers" in title) == driven and ("drift" in title) == (not driven)
    assert ("do work" in energy.info.text()) == driven
