"""Fixtures for the GUI tests: isolated settings, scripted dialogs, a main window that is closed
and whose render window is finalized at teardown, and a pendulum model built in code."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

import solver
from app import dialogs


class ScriptedDialogs:
    """Answers for every question the application asks; records the errors it shows."""

    def __init__(self):
        self.save_changes = "discard"
        self.confirm = True
        self.open_path = ""
        self.save_path = ""
        self.errors = []
        self.asked = []

    def install(self, monkeypatch):
        monkeypatch.setattr(dialogs, "ask_save_changes", self._ask_save)
        monkeypatch.setattr(dialogs, "confirm", self._confirm)
        monkeypatch.setattr(dialogs, "confirm_delete",
                            lambda parent, name, deps: self._confirm(parent, "Delete", f"{name}: {deps}"))
        monkeypatch.setattr(dialogs, "show_error", lambda parent, title, problems: self.errors.append(
            (title, list(problems))))
        monkeypatch.setattr(dialogs, "open_path", lambda parent, folder="": self.open_path)
        monkeypatch.setattr(dialogs, "save_path", lambda parent, suggestion="": self.save_path)
        monkeypatch.setattr(dialogs, "ask_offset", lambda parent, name: [0.0, 0.5, 0.0])
        monkeypatch.setattr(dialogs, "ask_flexible_beam", lambda parent, suggestion: None)   # cancelled

    def _ask_save(self, parent, what):
        self.asked.append(("save_changes", what))
        return self.save_changes

    def _confirm(self, parent, title, text):
        self.asked.append((title, text))
        return self.confirm


@pytest.fixture(autouse=True)
def isolated_settings(tmp_path, monkeypatch):
    """Every test gets its own settings file (never the user's preferences)."""
    monkeypatch.setenv("MBS_STUDIO_SETTINGS", str(tmp_path / "settings.ini"))


@pytest.fixture
def answers(monkeypatch):
    scripted = ScriptedDialogs()
    scripted.install(monkeypatch)
    return scripted


@pytest.fixture
def window(qtbot, answers):
    from app.main_window import MainWindow
    from app.resources import style_sheet
    from PySide6.QtCore import QEvent
    from PySide6.QtWidgets import QApplication
    QApplication.instance().setStyleSheet(style_sheet())
    w = MainWindow()
    w.resize(1100, 720)
    w.show()
    qtbot.waitExposed(w)
    yield w
    answers.save_changes = "discard"
    w.close()
    w.deleteLater()
    QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)


def pendulum_model() -> solver.Model:
    """A 1 m box pendulum hanging from a revolute joint at the origin (axis z)."""
    m = solver.Model(name="pendulum", gravity=(0.0, -9.81, 0.0))
    m.add_body("bob", mass=2.0, inertia=(0.17, 0.001, 0.17), position=(0.0, -0.5, 0.0),
               geometry={"shape": "box", "size": [0.05, 1.0, 0.05], "color": [0.3, 0.55, 0.85]})
    m.add_joint("pivot", "revolute", "ground", "bob", origin=(0.0, 0.0, 0.0), axis=(0.0, 0.0, 1.0))
    return m


@pytest.fixture
def pendulum():
    return pendulum_model()


@pytest.fixture(scope="session")
def screenshots_dir(tmp_path_factory) -> Path:
    """Where screenshot tests write their PNGs: a temporary folder, or the folder named by
    ``MBS_SCREENSHOTS`` (``tools/screenshots.sh`` points it at docs/screenshots on purpose)."""
    folder = os.environ.get("MBS_SCREENSHOTS")
    path = Path(folder) if folder else tmp_path_factory.mktemp("screenshots")
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture
def loaded(window, pendulum):
    """The window with the pendulum open and its body "bob" selected in the property editor."""
    window.document.set_model(pendulum)
    window.document.select("bob")
    return window


def run_in_window(window, qtbot, t_end=0.05, timeout=30000):
    """Run the open model from the window (its worker thread) and return the outcome once finished."""
    with qtbot.waitSignal(window.simulation.finished, timeout=timeout) as blocker:
        assert window.run_simulation(t_end=t_end)
    return blocker.args[0]
