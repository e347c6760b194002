"""Analysis ▸ Parameter Study…: pick parameters (model paths) and responses, run the study in the
background (serially, on a local Dask cluster or on an existing scheduler) with progress and
cancel, and look at the results as a table, a response-vs-parameter plot and parallel coordinates.

Values of a parameter are typed as text (:func:`parameter_from_text`): ``0.5, 1, 2`` (a list),
``0.5:2:4`` (4 values from 0.5 to 2), expressions or choices as words (``adams, rk``); for the
Latin hypercube and Monte-Carlo designs ``low, high`` (uniform) or ``normal mean, std``.  The
study itself is :mod:`solver.study`; this module only collects the choices and shows results.
"""
from __future__ import annotations

import threading

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QCoreApplication, QEvent, QObject, Qt, QThread, Signal, Slot
from PySide6.QtWidgets import (QAbstractItemView, QComboBox, QDialog, QFormLayout, QHBoxLayout, QLabel,
                               QLineEdit, QListWidget, QListWidgetItem, QProgressBar, QPushButton, QSpinBox,
                               QSplitter, QTableWidget, QTableWidgetItem, QTabWidget, QVBoxLayout, QWidget)

import solver

from . import dialogs
from .field_editors import SciSpinBox
from .units import SI
from .log_panel import LOGGER

EXECUTORS = (("Serial (this process)", "serial"), ("Local Dask cluster", "local"), ("Dask scheduler", "scheduler"))
LINE_PEN = pg.mkPen((31, 119, 180, 160), width=1.5)
AXIS_PEN = pg.mkPen((120, 120, 120), width=1)


def parameter_from_text(path: str, text: str, sampled: bool) -> solver.study.Parameter:
    """The Parameter typed in the table (see the module docstring); raises ModelError."""
    text = text.strip()
    where = f"'{path}' values"
    if sampled:
        kind, _, rest = text.partition(" ") if text.startswith("normal") else ("uniform", "", text)
        numbers = _numbers(rest, where)
        if len(numbers) != 2:
            raise solver.ModelError(f"{where}: give 'low, high' or 'normal mean, std'; got {text!r}")
        return solver.study.Parameter(path, distribution=(kind, *numbers))
    if text.count(":") == 2:
        start, stop, num = _numbers(text.replace(":", ","), where)
        if num != int(num) or num < 1:
            raise solver.ModelError(f"{where}: 'start:stop:num' needs a whole num >= 1; got {text!r}")
        return solver.study.Parameter(path, values=tuple(np.linspace(start, stop, int(num)).tolist()))
    items = [t.strip() for t in text.split(",") if t.strip()]
    if not items:
        raise solver.ModelError(f"{where}: type values such as '0.5, 1, 2' or '0.5:2:4'")
    return solver.study.Parameter(path, values=tuple(_number_or_text(t) for t in items))


class StudyWorker(QObject):
    """Runs one study in its thread.  Signals: ``progress(done, total)``, ``done(result)`` with a
    :class:`solver.study.StudyResults` or the exception that stopped it (a :class:`solver.ModelError`
    for a bad executor or an unreachable scheduler)."""

    progress = Signal(int, int)
    done = Signal(object)

    def __init__(self, study, executor, workers):
        super().__init__()
        self.study, self.executor, self.workers = study, executor, workers
        self.cancel_event = threading.Event()

    @Slot()
    def run(self):
        try:
            result = solver.study.run_study(self.study, executor=self.executor, workers=self.workers,
                                            progress=lambda done, total, _: self.progress.emit(done, total),
                                            cancel=self.cancel_event.is_set)
        except Exception as exc:  # noqa: BLE001 — shown in the dialog, never lost in the thread
            result = exc
        self.moveToThread(QCoreApplication.instance().thread())
        self.done.emit(result)


class StudyDialog(QDialog):
    """The parameter-study window (non-modal).  Signals: ``finished_study(results)``."""

    finished_study = Signal(object)

    def __init__(self, document, parent=None):
        super().__init__(parent)
        self.setObjectName("studyDialog")
        self.setWindowTitle("Parameter study")
        self.document = document
        self.results = None
        self._thread = self._worker = None
        split = QSplitter(Qt.Orientation.Horizontal, self)
        split.addWidget(self._setup_panel())
        split.addWidget(self._results_panel())
        split.setStretchFactor(1, 1)
        split.setSizes([420, 680])
        QVBoxLayout(self).addWidget(split)
        self.resize(1100, 620)
        self.refresh()
        if parent is not None:
            parent.installEventFilter(self)     # the main window closing stops the study first

    # ---- public API -----------------------------------------------------------------------------
    def refresh(self):
        """Offer the paths and responses of the document's current model."""
        model = self.document.model
        self.paths = solver.study.parameter_paths(model)
        self.responses.clear()
        for r in solver.study.response_choices(model):
            item = QListWidgetItem(r.name, self.responses)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Unchecked)
            item.setData(Qt.ItemDataRole.UserRole, r)
        for row in range(self.parameters.rowCount()):
            box, text = self._path_box(row), self._path_box(row).currentText()
            box.clear()
            box.addItems(self.paths)
            box.setCurrentText(text)
        self.t_end.setValue(model.settings.t_end)

    def add_parameter(self, path="", values=""):
        row = self.parameters.rowCount()
        self.parameters.insertRow(row)
        box = QComboBox(self.parameters)
        box.setEditable(True)
        box.addItems(self.paths)
        box.setCurrentText(path)
        self.parameters.setCellWidget(row, 0, box)
        self.parameters.setItem(row, 1, QTableWidgetItem(values))

    def set_responses(self, names):
        for i in range(self.responses.count()):
            item = self.responses.item(i)
            item.setCheckState(Qt.CheckState.Checked if item.text() in names else Qt.CheckState.Unchecked)

    def build_study(self) -> solver.study.Study:
        """The study the dialog describes (on a copy of the current model); raises ModelError."""
        sampled = self.design.currentText() in ("lhs", "monte_carlo")
        problems, parameters = [], []
        for row in range(self.parameters.rowCount()):
            path = self._path_box(row).currentText().strip()
            try:
                parameters.append(parameter_from_text(path, self.parameters.item(row, 1).text(), sampled))
            except solver.ModelError as exc:
                problems += exc.problems
        if problems:
            raise solver.ModelError(problems)
        responses = [self.responses.item(i).data(Qt.ItemDataRole.UserRole) for i in range(self.responses.count())
                     if self.responses.item(i).checkState() == Qt.CheckState.Checked]
        return solver.study.Study(self.document.model, parameters, responses, design=self.design.currentText(),
                                  samples=self.samples.value(), seed=self.seed.value(),
                                  fixed={"settings.t_end": self.t_end.value()})

    @property
    def running(self) -> bool:
        return self._thread is not None

    def run(self) -> bool:
        """Start the study in a background thread; False (and the problems shown) if it is invalid."""
        if self.running:
            return False
        try:
            study = self.build_study()
        except solver.ModelError as exc:
            dialogs.show_error(self, "Parameter study", exc.problems)
            return False
        executor = self.executor.currentData()
        if executor == "scheduler":
            executor = self.address.text().strip()
        self._worker = StudyWorker(study, executor, self.workers.value())
        self._thread = QThread(self)
        self._worker.moveToThread(self._thread)
        self._thread.started.connect(self._worker.run)
        self._worker.progress.connect(self._on_progress)
        self._worker.done.connect(self._on_done)
        n = len(study.variants())
        self.bar.setRange(0, n)
        self.bar.setValue(0)
        self.status.setText(f"running {n} variants ({self.executor.currentText().lower()})…")
        self.run_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        LOGGER.info("Parameter study started: %d variants, %s", n, self.executor.currentText())
        self._thread.start()
        return True

    def cancel(self):
        """Stop the study: variants not finished are reported as cancelled."""
        if self._worker is not None:
            self._worker.cancel_event.set()
            self.status.setText("cancelling…")

    def shutdown(self):
        """Cancel a running study and wait for its thread."""
        self.cancel()
        if self._thread is not None:
            self._thread.quit()
            self._thread.wait(30000)

    def closeEvent(self, event):  # noqa: N802  (Qt API name)
        self.shutdown()
        super().closeEvent(event)

    def eventFilter(self, watched, event):  # noqa: N802
        if watched is self.parent() and event.type() == QEvent.Type.Close:
            self.shutdown()
        return False

    # ---- building -------------------------------------------------------------------------------
    def _setup_panel(self):
        panel = QWidget(self)
        layout = QVBoxLayout(panel)
        self.parameters = QTableWidget(0, 2, panel)
        self.parameters.setHorizontalHeaderLabels(["Parameter (model path)", "Values"])
        self.parameters.horizontalHeader().setStretchLastSection(True)
        self.parameters.setColumnWidth(0, 250)
        self.parameters.setToolTip("values: '0.5, 1, 2', '0.5:2:4' (start:stop:num); lhs / monte_carlo: "
                                   "'low, high' or 'normal mean, std'")
        layout.addWidget(QLabel("Parameters", panel))
        layout.addWidget(self.parameters, 1)
        row = QHBoxLayout()
        for text, slot in (("Add", lambda: self.add_parameter()), ("Remove", self._remove_parameter)):
            button = QPushButton(text, panel)
            button.clicked.connect(slot)
            row.addWidget(button)
        layout.addLayout(row)
        form = QFormLayout()
        self.design = QComboBox(panel)
        self.design.addItems(solver.study.DESIGNS)
        self.samples, self.seed, self.workers = QSpinBox(panel), QSpinBox(panel), QSpinBox(panel)
        self.samples.setRange(1, 100000)
        self.samples.setValue(16)
        self.seed.setRange(0, 2**31 - 1)
        self.workers.setRange(1, 256)
        self.workers.setValue(2)
        self.t_end = SciSpinBox(panel, SI.quantity("s"), "t end")
        self.executor = QComboBox(panel)
        for label, key in EXECUTORS:
            self.executor.addItem(label, key)
        self.address = QLineEdit(panel)
        self.address.setPlaceholderText("tcp://HOST:8786")
        for label, widget in (("Design", self.design), ("Samples (lhs, monte_carlo)", self.samples),
                              ("Seed", self.seed), ("End time per variant", self.t_end), ("Run on", self.executor),
                              ("Local workers", self.workers), ("Scheduler address", self.address)):
            form.addRow(label, widget)
        layout.addLayout(form)
        layout.addWidget(QLabel("Responses", panel))
        self.responses = QListWidget(panel)
        layout.addWidget(self.responses, 1)
        row = QHBoxLayout()
        self.run_button = QPushButton("Run", panel)
        self.run_button.clicked.connect(self.run)
        self.cancel_button = QPushButton("Cancel", panel)
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.cancel)
        self.bar = QProgressBar(panel)
        row.addWidget(self.run_button)
        row.addWidget(self.cancel_button)
        row.addWidget(self.bar, 1)
        layout.addLayout(row)
        self.status = QLabel("", panel)
        self.status.setWordWrap(True)
        layout.addWidget(self.status)
        return panel

    def _results_panel(self):
        tabs = QTabWidget(self)
        self.table = QTableWidget(0, 0, tabs)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        tabs.addTab(self.table, "Table")
        page = QWidget(tabs)
        layout = QVBoxLayout(page)
        row = QHBoxLayout()
        self.x_choice, self.y_choice = QComboBox(page), QComboBox(page)
        for label, box in (("x", self.x_choice), ("y", self.y_choice)):
            row.addWidget(QLabel(label, page))
            row.addWidget(box, 1)
            box.currentIndexChanged.connect(self._plot_response)
        layout.addLayout(row)
        self.response_plot = pg.PlotWidget(page, background="w")
        self.scatter = self.response_plot.plot([], [], pen=None, symbol="o", symbolBrush=(31, 119, 180))
        layout.addWidget(self.response_plot, 1)
        tabs.addTab(page, "Response vs parameter")
        self.parallel_plot = pg.PlotWidget(tabs, background="w")
        self.parallel_plot.hideAxis("bottom")
        self.parallel_plot.getAxis("left").setLabel("each axis scaled from its min to its max")
        tabs.addTab(self.parallel_plot, "Parallel coordinates")
        self.tabs = tabs
        return tabs

    # ---- slots and helpers ----------------------------------------------------------------------
    def _path_box(self, row) -> QComboBox:
        return self.parameters.cellWidget(row, 0)

    def _remove_parameter(self):
        row = self.parameters.currentRow()
        self.parameters.removeRow(row if row >= 0 else self.parameters.rowCount() - 1)

    def _on_progress(self, done, total):
        self.bar.setValue(done)
        self.status.setText(f"{done} of {total} variants done")

    def _on_done(self, result):
        thread, self._thread, self._worker = self._thread, None, None
        thread.quit()
        thread.wait()
        thread.deleteLater()
        self.run_button.setEnabled(True)
        self.cancel_button.setEnabled(False)
        if isinstance(result, Exception):
            self.status.setText("study not run")
            dialogs.show_error(self, "Parameter study", getattr(result, "problems", None)
                               or [f"{type(result).__name__}: {result}"])
            return
        self.results = result
        c = result.counts()
        self.status.setText(f"{len(result.variants)} variants: {c['ok']} ok, {c['failed']} failed, "
                            f"{c['cancelled']} cancelled in {result.wall_time:.3g} s")
        LOGGER.info("Parameter study: %s", self.status.text())
        for v in result.variants:
            if v.status == "failed":
                LOGGER.warning("Variant %d failed: %s", v.index, v.message)
        self._fill_table(result)
        numeric = [p for p in result.parameters if all(_is_number(x) for x in result.parameter(p))]
        for box, names in ((self.x_choice, numeric), (self.y_choice, result.responses)):
            box.blockSignals(True)
            box.clear()
            box.addItems(names)
            box.blockSignals(False)
        self._plot_response()
        self._plot_parallel(numeric)
        self.finished_study.emit(result)

    def _fill_table(self, result):
        header, rows = result.table()
        self.table.clear()
        self.table.setColumnCount(len(header))
        self.table.setRowCount(len(rows))
        self.table.setHorizontalHeaderLabels(header)
        for r, row in enumerate(rows):
            for c, value in enumerate(row):
                self.table.setItem(r, c, QTableWidgetItem(f"{value:.6g}" if isinstance(value, float) else str(value)))
        self.table.resizeColumnsToContents()

    def _plot_response(self):
        if self.results is None or not self.x_choice.currentText() or not self.y_choice.currentText():
            self.scatter.setData([], [])
            return
        x = np.array(self.results.parameter(self.x_choice.currentText()), dtype=float)
        y = self.results.response(self.y_choice.currentText())
        ok = np.isfinite(y)
        self.scatter.setData(x[ok], y[ok])
        self.response_plot.setLabel("bottom", self.x_choice.currentText())
        self.response_plot.setLabel("left", self.y_choice.currentText())

    def _plot_parallel(self, numeric):
        """One line per finished variant across the parameter and response axes, each axis scaled
        to its own min..max."""
        self.parallel_plot.clear()
        res = self.results
        columns = [np.array(res.parameter(p), dtype=float) for p in numeric] + [res.response(r) for r in res.responses]
        names = numeric + res.responses
        data = np.column_stack(columns)
        data = data[np.all(np.isfinite(data), axis=1)]
        if not len(data):
            return
        low, span = data.min(axis=0), np.ptp(data, axis=0)
        scaled = (data - low) / np.where(span > 0, span, 1.0) + np.where(span > 0, 0.0, 0.5)
        axes = np.arange(len(names), dtype=float)
        for line in scaled:
            self.parallel_plot.plot(axes, line, pen=LINE_PEN)
        for k, name in enumerate(names):       # axis lines; labels staggered in two rows
            self.parallel_plot.addItem(pg.InfiniteLine(k, angle=90, pen=AXIS_PEN))
            label = pg.TextItem(f"{name}\n{low[k]:.4g} … {low[k] + span[k]:.4g}", color="k", anchor=(0.5, 0))
            label.setPos(k, -0.03 - 0.16 * (k % 2))
            self.parallel_plot.addItem(label)
        self.parallel_plot.setRange(xRange=(-0.5, len(names) - 0.5), yRange=(-0.35, 1.02), padding=0)


def show_study_dialog(window) -> StudyDialog:
    """Analysis ▸ Parameter Study…: show the window's study dialog (one per main window)."""
    dialog = window.findChild(StudyDialog)
    if dialog is None:
        dialog = StudyDialog(window.document, window)
    elif not dialog.running:
        dialog.refresh()
    dialog.show()
    dialog.raise_()
    return dialog


def _numbers(text, where):
    try:
        return [float(t) for t in text.replace(",", " ").split()]
    except ValueError:
        raise solver.ModelError(f"{where}: must be numbers; got {text!r}") from None


def _number_or_text(text):
    try:
        return float(text)
    except ValueError:
        return text


def _is_number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)
