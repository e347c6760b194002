"""The open project: one :class:`solver.Model`, its file path, its undo stack and the selection.

The document turns the model's change notifications into a Qt signal (``model_event``) that the
views listen to, and knows whether the project has unsaved changes (the undo stack's clean state).
"""
from __future__ import annotations

import os

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QUndoStack

import solver

from .commands import ModelCommand


class Document(QObject):
    """Signals: ``model_replaced`` (new/open/revert), ``model_event(event, collection, name, detail)``,
    ``modified_changed(bool)``, ``path_changed(str)``, ``selection_changed(str)`` ("" = nothing)."""

    model_replaced = Signal()
    model_event = Signal(str, str, str, object)
    modified_changed = Signal(bool)
    path_changed = Signal(str)
    selection_changed = Signal(str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.undo_stack = QUndoStack(self)
        self.undo_stack.cleanChanged.connect(self._on_clean_changed)
        self.model = None
        self.path = ""
        self.selection = ""
        self.set_model(solver.Model(name="untitled"), "")

    # ---- public API ---------------------------------------------------------------------------
    @property
    def modified(self) -> bool:
        return not self.undo_stack.isClean()

    def new(self):
        """Replace the project with an empty model."""
        self.set_model(solver.Model(name="untitled"), "")

    def open(self, path):
        """Load a project file; raises solver.ModelError (the current project is then kept)."""
        model = solver.load_model(path)
        self.set_model(model, os.path.abspath(path))

    def save(self, path=None):
        """Save to ``path`` (or the current path); marks the project clean."""
        path = os.path.abspath(path or self.path)
        if not path:
            raise ValueError("no file name to save to")
        self.model.save(path)
        if path != self.path:
            self.path = path
            self.path_changed.emit(path)
        self.undo_stack.setClean()

    def revert(self):
        """Reload the project from its file, dropping unsaved changes."""
        if self.path:
            self.open(self.path)

    def push(self, command: ModelCommand):
        """Apply ``command`` and put it on the undo stack; a ``solver.ModelError`` from the model
        propagates and leaves both the model and the stack unchanged."""
        command.apply()
        command.mark_applied()
        self.undo_stack.push(command)

    def select(self, name: str):
        """Make ``name`` (an element name, "" for none) the shared selection."""
        name = name or ""
        if name != self.selection:
            self.selection = name
            self.selection_changed.emit(name)

    def notify_settings(self, field):
        """Announce a solver-settings change (the model sends none for settings)."""
        self.model_event.emit("changed", "settings", "settings", field)

    def set_model(self, model: solver.Model, path: str = ""):
        """Make ``model`` the project (e.g. one built in code); clears the undo history."""
        if self.model is not None:
            self.model.unsubscribe(self._on_model_event)
        self.undo_stack.clear()
        self.model = model
        model.subscribe(self._on_model_event)
        self.path = path
        self.selection = ""
        self.model_replaced.emit()
        self.path_changed.emit(path)
        self.selection_changed.emit("")
        self.modified_changed.emit(False)

    # ---- helpers ------------------------------------------------------------------------------
    def _on_clean_changed(self, clean):
        self.modified_changed.emit(not clean)

    def _on_model_event(self, event, collection, name, detail):
        if event == "removed" and name == self.selection:
            self.select("")
        elif event == "renamed" and detail == self.selection:
            self.selection = name
        self.model_event.emit(event, collection, name or "", detail)
        if event == "renamed" and name == self.selection:
            self.selection_changed.emit(name)
