"""Check Model and failed runs (issue #31, items 5 and 8): Check Model refuses, as Run does, a
field showing an edit the model refused; a failed run selects the elements it names; a crashed run
(an unexpected exception such as running out of memory) shows no traceback."""
from __future__ import annotations

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication, QMessageBox

import solver
from app import dialogs
from test_run import locking_fourbar, run_and_wait
from real_input import refused_driver_expression


def test_check_model_refuses_a_refused_expression(window, qtbot, pendulum, answers, monkeypatch):
    reports = []
    monkeypatch.setattr(dialogs, "show_report", lambda *args, **kw: reports.append(args))
    w = window
    line = refused_driver_expression(qtbot, w, pendulum, "driver1")
    w.viewport.vtk_widget.setFocus()
    qtbot.keyClick(w, Qt.Key.Key_K, Qt.KeyboardModifier.ControlModifier)
    assert not reports                                  # no "fine" report
    title, problems = answers.errors[-1]
    assert title == "Model check" and "Driver 'driver1'" in problems[0] and "expression" in problems[0]
    assert line.hasFocus() and line.selectedText() == "0.5*sin(t"


def test_a_failed_run_selects_the_elements_it_names(window, qtbot, monkeypatch):
    failures = []
    monkeypatch.setattr(dialogs, "show_run_failure", lambda parent, outcome: failures.append(
        (outcome, window.document.selection)))
    window.document.set_model(locking_fourbar())
    window.document.select("")
    assert run_and_wait(window, qtbot, t_end=1.0).status == "failed"
    [(outcome, selected)] = failures
    assert "rocker_drive" in outcome.elements and selected == outcome.elements[0]   # selected before the dialog
    assert window.properties.target.element.name == selected


def test_a_crashed_run_shows_no_traceback(window, qtbot, pendulum, monkeypatch):
    def out_of_memory(*args, **kw):
        raise MemoryError("Unable to allocate 745. GiB for an array with shape (100000000001, 1000)")
    monkeypatch.setattr(solver, "simulate", out_of_memory)
    window.document.set_model(pendulum)
    shown = []

    def read_and_close():
        box = QApplication.activeModalWidget()
        if not isinstance(box, QMessageBox):
            QTimer.singleShot(50, read_and_close)
            return
        shown.append((box.text(), box.informativeText(), box.detailedText()))
        box.accept()

    QTimer.singleShot(50, read_and_close)
    outcome = run_and_wait(window, qtbot)
    qtbot.waitUntil(lambda: bool(shown), timeout=5000)
    [(text, informative, detailed)] = shown
    assert outcome.status == "error" and "Traceback" in outcome.details      # kept for the log
    assert detailed == "" and "Traceback" not in text + informative
    assert "memory" in informative and "Log panel" in informative

