"""GUI part 2 — running: the plain run function (no Qt), a background run of the slider–crank sample
with the GUI staying responsive, Stop within 0.2 s keeping partial results, a failing run showing
the failure dialog and keeping results up to the failure, results saved with the project and
reloaded, exports, and the settings dialog as one undoable step."""
from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QTimer

import solver
from app import dialogs
from app.simulation import results_path, run_simulation

SAMPLES = Path(__file__).resolve().parents[2] / "sample_models"
SLIDER_CRANK = SAMPLES / "slider_crank.mbs.json"
FOURBAR = SAMPLES / "fourbar.mbs.json"


class RunDialogs:
    """Scripted answers for the run/results dialogs."""

    def __init__(self, monkeypatch):
        self.failures = []
        self.save_file = ""
        self.folder = ""
        self.settings = None
        monkeypatch.setattr(dialogs, "show_run_failure", lambda parent, outcome: self.failures.append(outcome))
        monkeypatch.setattr(dialogs, "save_file_path", lambda parent, title, suggestion="", file_filter="":
                            self.save_file)
        monkeypatch.setattr(dialogs, "folder_path", lambda parent, title, folder="": self.folder)
        monkeypatch.setattr(dialogs, "ask_solver_settings", lambda parent, values: self._settings(values))

    def _settings(self, values):
        if self.settings is None:
            return None
        return dict(values, **self.settings)


@pytest.fixture
def run_dialogs(monkeypatch):
    return RunDialogs(monkeypatch)


def run_and_wait(window, qtbot, timeout=20000, **overrides):
    """Run, wait for the end and for the views to show the results."""
    with qtbot.waitSignal(window.simulation.finished, timeout=timeout) as blocker:
        assert window.run_simulation(**overrides)
    with qtbot.waitSignal(window.simulation.results_changed, timeout=2000, raising=False):
        pass
    return blocker.args[0]


def locking_fourbar() -> solver.Model:
    """The crank–rocker four-bar driven at the rocker through a full turn: it locks near t = 0.09 s."""
    m = solver.load_model(str(FOURBAR))
    m.remove("crank_drive")
    m.add_driver("rocker_drive", joint="D", expression="2*pi*t")
    return m


# ---- the plain function (no Qt) -------------------------------------------------------------------

def test_run_function_outcomes_without_qt():
    model = solver.load_model(str(SLIDER_CRANK))
    seen = []
    ok = run_simulation(model, progress=lambda t, t_end: seen.append(t), t_end=0.05)
    assert ok.status == "ok" and ok.has_results and ok.results.t[-1] == pytest.approx(0.05)
    assert seen and seen[-1] == pytest.approx(0.05)
    # past SHORT_RUN output points the compiled loop comes back to Python every max_out rows (cancel)
    stopped = run_simulation(model, cancel=lambda: True, t_end=10.0)
    assert stopped.status == "cancelled" and stopped.results is not None and stopped.time < 10.0
    failed = run_simulation(locking_fourbar(), t_end=1.0)
    assert failed.status == "failed" and failed.has_results
    assert "rocker_drive" in failed.elements and 0.0 < failed.time < 1.0
    assert failed.results.t[-1] <= failed.time + 1e-12
    assert "range of motion" in failed.suggestion
    assert model.settings.values["t_end"] == 2.0  # the run worked on a copy


def test_results_path_next_to_project():
    assert results_path("/a/b/slider_crank.mbs.json") == "/a/b/slider_crank.h5"
    assert results_path("/a/x.json") == "/a/x.h5"


# ---- background runs ------------------------------------------------------------------------------

@pytest.mark.slow
def test_run_slider_crank_keeps_gui_responsive(window, qtbot, run_dialogs):
    assert window.load(str(SLIDER_CRANK))
    ticks = []
    timer = QTimer()
    timer.setInterval(10)
    timer.timeout.connect(lambda: ticks.append(time.perf_counter()))
    progress = []
    window.simulation.progress.connect(lambda t, t_end, wall: progress.append(t))
    timer.start()
    outcome = run_and_wait(window, qtbot, t_end=0.25)
    timer.stop()
    assert outcome.status == "ok", outcome.message
    results = window.simulation.results
    assert results is outcome.results and len(results.t) == 51
    assert results.t[-1] == pytest.approx(0.25)
    assert set(results.joint_names) == set(window.document.model.joints)
    assert progress and progress[-1] == pytest.approx(0.25)
    # The event loop kept running: timer ticks all through the run, no gap above 0.25 s.
    assert len(ticks) > 10 * outcome.wall_time
    assert np.diff(ticks).max() < 0.25
    assert window.player.frames == 51 and window.actions["run"].isEnabled()
    assert not window.actions["stop"].isEnabled()
    for panel in (window.energy, window.diagnostics):
        assert panel.curves, panel.title


@pytest.mark.slow
def test_stop_returns_within_02_s_with_partial_results(window, qtbot, run_dialogs):
    assert window.load(str(SLIDER_CRANK))
    progress = []
    window.simulation.progress.connect(lambda t, t_end, wall: progress.append(t))
    assert window.run_simulation(t_end=500.0)
    assert window.simulation.running and window.actions["stop"].isEnabled()
    window.document.model.bodies["crank"]  # the model stays editable during the run
    qtbot.waitUntil(lambda: bool(progress) and progress[-1] > 0.05, timeout=10000)
    finished = []
    window.simulation.finished.connect(lambda o: finished.append((time.perf_counter(), o)))
    start = time.perf_counter()
    window.simulation.stop()
    qtbot.waitUntil(lambda: bool(finished), timeout=5000)
    latency = finished[0][0] - start
    outcome = finished[0][1]
    assert latency < 0.2, f"Stop took {latency:.3f} s"
    assert window.simulation.stop_latency < 0.2
    assert outcome.status == "cancelled" and not window.simulation.running
    results = window.simulation.results
    assert results is not None and 0.05 <= results.t[-1] < 500.0
    # The views show the partial results right after.
    qtbot.waitUntil(lambda: window.player.frames == len(results.t), timeout=2000)
    shown = time.perf_counter() - start
    assert window.energy.curve_data("total")[0][-1] == results.t[-1]
    print(f"Stop latency {1e3 * latency:.1f} ms to the partial results, {1e3 * shown:.0f} ms until the "
          f"views show them (t = {results.t[-1]:.3f} s)")


@pytest.mark.slow
def test_failed_run_shows_dialog_and_keeps_results(window, qtbot, run_dialogs):
    window.document.set_model(locking_fourbar())
    outcome = run_and_wait(window, qtbot, t_end=1.0)
    assert outcome.status == "failed"
    assert len(run_dialogs.failures) == 1
    shown = run_dialogs.failures[0]
    assert shown.message and shown.time is not None and "rocker_drive" in shown.elements
    assert shown.suggestion
    results = window.simulation.results
    assert results is not None and len(results.t) > 3
    assert results.t[-1] <= shown.time + 1e-12
    assert window.player.frames == len(results.t)


def test_run_refused_for_invalid_model(window, qtbot, run_dialogs, answers):
    m = solver.Model(name="empty")
    window.document.set_model(m)
    window.run_simulation()
    if window.simulation.running:  # the solver accepted it: wait for the outcome
        qtbot.waitSignal(window.simulation.finished, timeout=10000).wait()
    assert answers.errors or window.simulation.last_outcome is not None


# ---- results with the project; exports; settings ------------------------------------------------

@pytest.mark.slow
def test_results_saved_with_project_and_reloaded(window, qtbot, run_dialogs, tmp_path):
    assert window.load(str(SLIDER_CRANK))
    run_and_wait(window, qtbot, t_end=0.1)
    project = tmp_path / "crank.mbs.json"
    assert window._save_to(str(project))
    h5 = tmp_path / "crank.h5"
    assert h5.exists()
    window.document.new()
    assert window.simulation.results is None and window.player.frames == 0
    assert window.load(str(project))
    reloaded = window.simulation.results
    assert reloaded is not None and len(reloaded.t) == 21
    assert window.player.frames == 21 and window.energy.curves
    # Results that do not fit the model are not loaded.
    other = solver.load_model(str(FOURBAR))
    other.save(str(tmp_path / "other.mbs.json"))
    os.replace(h5, tmp_path / "other.h5")
    assert window.load(str(tmp_path / "other.mbs.json"))
    assert window.simulation.results is None


@pytest.mark.slow
def test_export_results_hdf5_and_csv(window, qtbot, run_dialogs, tmp_path):
    assert window.load(str(SLIDER_CRANK))
    run_and_wait(window, qtbot, t_end=0.05)
    run_dialogs.save_file = str(tmp_path / "out.h5")
    window.actions["export_hdf5"].trigger()
    assert len(solver.load_results(str(tmp_path / "out.h5")).t) == 11
    run_dialogs.folder = str(tmp_path / "csv")
    os.makedirs(run_dialogs.folder)
    window.actions["export_csv"].trigger()
    assert any(name.endswith(".csv") for name in os.listdir(run_dialogs.folder))


@pytest.mark.slow
def test_settings_dialog_is_one_undo_step(window, run_dialogs):
    assert window.load(str(SLIDER_CRANK))
    settings = window.document.model.settings.values
    run_dialogs.settings = {"t_end": 0.5, "integrator": "rk45", "rtol": 1e-5}
    window.actions["run_settings"].trigger()
    assert (settings["t_end"], settings["integrator"], settings["rtol"]) == (0.5, "rk45", 1e-5)
    assert window.document.modified
    window.document.undo_stack.undo()
    assert (settings["t_end"], settings["integrator"], settings["rtol"]) == (2.0, "adams", 1e-6)
    run_dialogs.settings = None  # cancelled: nothing changes
    window.actions["run_settings"].trigger()
    assert window.document.undo_stack.index() == 0
