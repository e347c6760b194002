"""Running the solver from the GUI: a thin Qt worker around :func:`app.simulation.run_simulation` on a
``QThread``, the controller behind Simulate ▸ Run / Stop, the run progress shown in the status bar,
the results that belong to the project (saved as ``<project>.h5`` beside it, reloaded with it), and
the Simulate ▸ Solver Settings… dialog (its edits are undoable ``SetSetting`` commands; "codegen" is a saved
setting like the others: generated C kernels on "auto" whenever a C compiler is found).  A run that
builds its kernels first shows "compiling the model…" in the status bar; Stop cancels the build.

Threading: the model is copied in :func:`run_simulation` before the solver compiles it, so edits
during a run cannot reach it; the solver calls ``progress``/``cancel`` from the worker thread;
progress and solver events reach the GUI through queued signals (progress throttled to ~30 per
second), Stop sets a ``threading.Event`` that the solver polls at every integration step.
"""
from __future__ import annotations

import logging
import os
import threading
import time

import numpy as np
from PySide6.QtCore import QCoreApplication, QObject, QThread, QTimer, Signal, Slot
from PySide6.QtWidgets import (QDialog, QDialogButtonBox, QFormLayout, QLabel, QProgressBar,
                               QWidget, QHBoxLayout)

import solver

from . import commands, dialogs
from .field_editors import make_editor
from .log_panel import LOGGER
from .simulation import (NEAR_SINGULAR, RunOutcome, load_project_results, results_path,
                         run_simulation)

_PROGRESS_INTERVAL = 0.03  # s of wall time between progress signals
_DISPLAY_SETTINGS = ("display_units", "display_angles")
_POSTPROCESSING = ("measures", "outputs")   # computed from the results afterwards: their edits keep them current
_TITLE_MARGIN = 260        # px beside a dialog's title for the window frame's icon and buttons   # how numbers are shown: results stay valid


class SimulationWorker(QObject):
    """Runs one simulation in its thread.  Signals: ``progress(t, t_end, wall)``, ``event(dict)`` (a
    solver event as it happens), ``done(outcome)``."""

    progress = Signal(float, float, float)
    event = Signal(object)
    done = Signal(object)

    def __init__(self, model, overrides=None):
        super().__init__()
        self.model = model
        self.overrides = dict(overrides or {})
        self.cancel_event = threading.Event()
        self._last_emit = 0.0
        self._start = 0.0

    @Slot()
    def run(self):
        self._start = time.perf_counter()
        outcome = run_simulation(self.model, progress=self._progress, cancel=self.cancel_event.is_set,
                                 on_event=self.event.emit, **self.overrides)
        # Hand the worker back to the GUI thread so it is deleted there.
        self.moveToThread(QCoreApplication.instance().thread())
        self.done.emit(outcome)

    def _progress(self, t, t_end):
        now = time.perf_counter()
        if now - self._last_emit >= _PROGRESS_INTERVAL or t >= t_end:
            self._last_emit = now
            self.progress.emit(float(t), float(t_end), now - self._start)


class RunStatus(QWidget):
    """Status-bar widget: a progress bar of simulated time and 't / wall / real-time factor'."""

    def __init__(self, parent=None):
        super().__init__(parent)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.bar = QProgressBar(self)
        self.bar.setRange(0, 1000)
        self.bar.setFixedWidth(180)
        self.bar.setTextVisible(True)
        self.label = QLabel(self)
        layout.addWidget(self.bar)
        layout.addWidget(self.label)
        self.hide()

    def show_progress(self, t, t_end, wall):
        self.show()
        self.end_phase()
        self.bar.setValue(int(1000 * t / t_end) if t_end > 0 else 0)
        self.bar.setFormat(f"{100 * t / t_end:.0f} %" if t_end > 0 else "")
        rtf = t / wall if wall > 0 else 0.0
        self.label.setText(f"t = {t:.4g} / {t_end:.4g} s · wall {wall:.1f} s · ×{rtf:.2g} real time")

    def show_phase(self, text):
        """A phase before the integration starts (e.g. "compiling the model…"): a busy bar and the text."""
        self.show()
        self.bar.setRange(0, 0)
        self.label.setText(text)

    def end_phase(self):
        self.bar.setRange(0, 1000)

    def on_event(self, event):
        """Solver events during a run: a build shows as its own phase until the first progress."""
        if event.get("kind") == "codegen" and event.get("message") == "compiling the model…":
            self.show_phase("compiling the model…")


class SimulationController(QObject):
    """Simulate ▸ Run/Stop and the project's results.

    Signals: ``started()``, ``progress(t, t_end, wall)``, ``finished(outcome)`` (a run ended; its
    results are already in :attr:`results`), ``results_changed(results)`` (None = no results; after a
    run it is emitted at the next event-loop turn, so the views redraw after Stop has returned),
    ``stale_changed(bool)``: the results no longer belong to the model (:attr:`stale`: any model
    edit, undo or redo after the run started, except of the model's name (the first Save names it
    after its file), of the display units and of measures and declared outputs, which are computed
    from the results; a new run clears it).
    """

    started = Signal()
    progress = Signal(float, float, float)
    finished = Signal(object)
    results_changed = Signal(object)
    stale_changed = Signal(bool)

    def __init__(self, window):
        super().__init__(window)
        self.window = window
        self.document = window.document
        self.results = None
        self.last_outcome: RunOutcome | None = None
        self.status = RunStatus()
        self._thread: QThread | None = None
        self._worker: SimulationWorker | None = None
        self._stop_requested_at = None
        self.stop_latency = None  # s from stop() to the partial results being in the GUI (last Stop)
        self.stale = False
        self._edits = 0           # model edits so far; compared with the count when a run started
        self._edits_at_start = 0
        self.document.model_replaced.connect(self._on_model_replaced)
        self.document.model_event.connect(self._on_model_edit)
        solver.preload()          # on the GUI thread: a run's worker never stalls the event loop importing

    # ---- public API ---------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self._thread is not None

    def run(self, **overrides) -> bool:
        """Start a run of the document's model (``overrides`` replace saved settings, e.g. t_end).
        Generated kernels follow the model's ``codegen`` setting ("auto": when a C compiler is
        found); a build shows as "compiling the model…" in the status bar and Stop cancels it."""
        if self.running:
            return False
        problems = self.document.model.validate_details()
        if problems:
            self.window.report_problems("Cannot run", problems)
            return False
        # Copied here, on the GUI thread, so no later edit can reach the run.
        self._worker = SimulationWorker(self.document.model.copy(), overrides)
        self._edits_at_start = self._edits
        self._thread = QThread(self)
        self._worker.moveToThread(self._thread)
        self._thread.started.connect(self._worker.run)
        self._worker.progress.connect(self._on_progress)
        self._worker.event.connect(_log_event)
        self._worker.event.connect(self.status.on_event)
        self._worker.done.connect(self._on_done)
        self._stop_requested_at = None
        settings = dict(self.document.model.settings.values, **overrides)
        LOGGER.info("Run started: t_end = %g s, output step %g s, %s / %s / %s%s", settings["t_end"],
                    settings["output_step"], settings["formulation"], settings["partitioning"],
                    settings["integrator"], f" / codegen {settings['codegen']}")
        self.status.show_progress(0.0, float(settings["t_end"]), 0.0)
        self._thread.start()
        self.started.emit()
        return True

    def stop(self):
        """Ask the running solver to stop; its partial results are kept."""
        if self._worker is not None and not self._worker.cancel_event.is_set():
            self._stop_requested_at = time.perf_counter()
            self._worker.cancel_event.set()
            LOGGER.info("Stop requested")

    def wait(self, timeout_ms: int = 30000) -> bool:
        """Block until the worker thread has ended (used at shutdown)."""
        return self._thread is None or self._thread.wait(timeout_ms)

    def shutdown(self):
        """Stop a run and wait for its thread (before the window closes)."""
        if self._thread is not None:
            self.stop()
            self._thread.quit()
            self._thread.wait(10000)

    def set_results(self, results, announce=True):
        self.results = results
        if announce:
            self.results_changed.emit(results)

    def save_results(self, project_path: str):
        """Write the results beside the project (called when the project is saved)."""
        path = results_path(project_path)
        if self.results is None:
            return
        try:
            self.results.save(path)
            LOGGER.info("Results saved to %s", path)
        except (OSError, solver.MBSError, ValueError) as exc:
            LOGGER.error("Cannot save results to %s: %s", path, exc)

    def export_hdf5(self):
        if self.results is None:
            return
        path = dialogs.save_file_path(self.window, "Export results (HDF5)", self._suggestion(".h5"),
                                      "HDF5 files (*.h5 *.hdf5)")
        if path:
            try:
                self.results.save(path)
                LOGGER.info("Results exported to %s", path)
            except (OSError, solver.MBSError, ValueError) as exc:
                self.window.report_problems("Cannot export results", [str(exc)])

    def export_csv(self):
        if self.results is None:
            return
        folder = dialogs.folder_path(self.window, "Export results (CSV folder)",
                                     os.path.dirname(self.document.path))
        if folder:
            try:
                self.results.to_csv(folder)
                LOGGER.info("Results exported as CSV to %s", folder)
            except (OSError, solver.MBSError, ValueError) as exc:
                self.window.report_problems("Cannot export results", [str(exc)])

    def edit_settings(self):
        """Simulate ▸ Solver Settings…: the changed fields become one undoable step."""
        model = self.document.model
        values = dialogs.ask_solver_settings(self.window, dict(model.settings.values))
        if values is None:
            return
        changed = [(f, v) for f, v in values.items() if f != "name" and model.settings.values.get(f) != v]
        if not changed:
            return
        stack = self.document.undo_stack
        stack.beginMacro("Solver settings")
        try:
            for f, v in changed:
                try:
                    self.document.push(commands.SetSetting(model, f, v, self.document.notify_settings))
                except solver.ModelError as exc:
                    self.window.report_problems("Solver settings", list(exc.problems) or [str(exc)])
        finally:
            stack.endMacro()

    # ---- helpers ------------------------------------------------------------------------------
    def _suggestion(self, suffix):
        if self.document.path:
            return results_path(self.document.path).removesuffix(".h5") + suffix
        return f"{self.document.model.name}{suffix}"

    def _on_progress(self, t, t_end, wall):
        self.status.show_progress(t, t_end, wall)
        self.progress.emit(t, t_end, wall)

    def _on_done(self, outcome: RunOutcome):
        if self._stop_requested_at is not None:
            self.stop_latency = time.perf_counter() - self._stop_requested_at
        thread, self._thread, self._worker = self._thread, None, None
        thread.quit()
        thread.wait()
        thread.deleteLater()
        self.last_outcome = outcome
        self.status.hide()
        if outcome.has_results:
            self.set_results(outcome.results, announce=False)
            self._set_stale(self._edits != self._edits_at_start)
            QTimer.singleShot(0, self, lambda r=outcome.results: self._announce(r))
        self._report(outcome)
        self.finished.emit(outcome)

    def _announce(self, results):
        if results is self.results:
            self.results_changed.emit(results)

    def _report(self, outcome: RunOutcome):
        status_bar = self.window.statusBar()
        n = len(outcome.results.t) if outcome.has_results else 0
        if outcome.results is not None:
            _log_singularity(outcome.results)
        if outcome.status == "ok":
            summary = outcome.results.summary()
            t_end = float(outcome.results.t[-1])
            LOGGER.info("Run finished: %d outputs to t = %g s in %.2f s wall (×%.2g real time), "
                        "max |Φ| %.2g, energy drift %.2g", n, t_end, outcome.wall_time,
                        t_end / outcome.wall_time if outcome.wall_time > 0 else float("inf"),
                        summary.get("max_constraint_violation", 0.0),
                        summary.get("energy_drift", 0.0))
            status_bar.showMessage(f"Run finished in {outcome.wall_time:.1f} s", 6000)
        elif outcome.status == "cancelled":
            LOGGER.warning("Run stopped at t = %s s; %d outputs kept", _fmt(outcome.time), n)
            status_bar.showMessage(f"Run stopped at t = {_fmt(outcome.time)} s (partial results kept)", 6000)
        elif outcome.status == "failed":
            LOGGER.error("Run failed at t = %s s in %s: %s (%d outputs kept)", _fmt(outcome.time),
                         ", ".join(outcome.elements) or "?", outcome.message, n)
            status_bar.showMessage(f"Run failed at t = {_fmt(outcome.time)} s", 8000)
            self._select_involved(outcome)
            dialogs.show_run_failure(self.window, outcome)
        elif outcome.status == "invalid":
            self.window.report_problems("Cannot run", outcome.problems or [outcome.message])
        else:
            LOGGER.error("Run crashed: %s\n%s", outcome.message, outcome.details)
            self._select_involved(outcome)
            dialogs.show_run_failure(self.window, outcome)

    def _select_involved(self, outcome: RunOutcome):
        """Select the elements a failed run names (those still in the model), the first current."""
        involved = [name for name in outcome.elements if name in self.document.model]
        if involved:
            self.document.select_many(involved, involved[0])

    def _on_model_edit(self, event, collection, name, detail):
        if collection == "settings" and detail in _DISPLAY_SETTINGS or collection in _POSTPROCESSING \
                or (collection, detail) == ("model", "name"):    # the name (Save As) does not change a run
            return
        self._edits += 1
        if self.results is not None:
            self._set_stale(True)

    def _set_stale(self, stale: bool):
        if stale != self.stale:
            self.stale = stale
            self.stale_changed.emit(stale)

    def _on_model_replaced(self):
        """A new/opened project: drop the results, or load those saved beside it."""
        if self.running:
            self.stop()
        results, reason = (None, "")
        if self.document.path:
            results, reason = load_project_results(self.document.path, self.document.model)
        if reason:
            LOGGER.warning("Results %s", reason)
        elif results is not None:
            LOGGER.info("Results loaded from %s (%d outputs)", results_path(self.document.path), len(results.t))
        self._set_stale(False)
        self.set_results(results)


def _log_event(event):
    """One solver event, logged as it happens during the run."""
    level = logging.WARNING if event.get("kind") in ("switch", "redundant", "warning") else logging.INFO
    LOGGER.log(level, "solver t = %.4g s [%s] %s", event.get("time", 0.0), event.get("kind", ""),
               event.get("message", ""))


def _log_singularity(results):
    """Warn when the run came near a singular configuration."""
    cond = np.asarray(results.conditioning, float)
    low = np.flatnonzero(cond < NEAR_SINGULAR)
    if low.size:
        i = low[0]
        LOGGER.warning("near-singular constraint Jacobian from t = %.4g s (σ_min ratio %.2g, lowest %.2g "
                       "at t = %.4g s)", results.t[i], cond[i], cond.min(), results.t[int(np.argmin(cond))])


def _fmt(t):
    return "?" if t is None else f"{t:.4g}"


class SettingsDialog(QDialog):
    """The solver settings as a form (one editor per ``solver.Settings`` field; codegen's tooltip
    says which C compiler builds the kernels, or that there is none).  A value an editor refuses is
    reported under the form (:attr:`message`) as it is entered, and OK (or Enter) keeps the dialog
    open while it is shown."""

    def __init__(self, values: dict, parent=None):
        super().__init__(parent)
        self.setWindowTitle("Solver settings")
        # Room for the whole title (window managers elide it to the dialog's width) and the frame's buttons.
        self.setMinimumWidth(self.fontMetrics().horizontalAdvance(self.windowTitle()) + _TITLE_MARGIN)
        form = QFormLayout(self)
        self.editors = {}
        for field in solver.Settings.FIELDS:
            if field.name == "name":
                continue
            editor = make_editor(field, parent=self)
            editor.set_value(values.get(field.name, field.default))
            label = field.name.replace("_", " ")
            form.addRow(label, editor)
            editor.refused.connect(self._show_refusal)
            self.editors[field.name] = editor
        compiler = solver.codegen_compiler()
        self.editors["codegen"].setToolTip(
            f"Generated C kernels, compiled by {compiler}: auto = whenever the model is supported (relative "
            "formulation, or Cartesian with conventional joints), on = required, off = generic path"
            if compiler else "No C compiler found (install one, e.g. gcc, or set CC): runs take the generic path")
        self.message = QLabel(self)
        self.message.setObjectName("fieldError")
        self.message.setWordWrap(True)
        self.message.hide()
        form.addRow(self.message)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)

    def accept(self):
        if self.message.isHidden():
            super().accept()

    def _show_refusal(self, message: str):
        self.message.setText(message)
        self.message.setVisible(bool(message))

    def values(self) -> dict:
        return {name: editor.value() for name, editor in self.editors.items()}
