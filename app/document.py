"""The open project: one :class:`solver.Model`, its file path, its undo stack and the selection.

The selection is a list of names (:attr:`Document.selected`, several after Ctrl/Shift-clicks in the
tree or Ctrl-clicks in the viewport) and its current item (:attr:`Document.selection`, the one last
clicked, "" for none): views showing one element follow the current item, the property editor edits
the whole list (:mod:`app.properties`), Delete/Copy work on it (:mod:`app.editing`).

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
    ``modified_changed(bool)``, ``path_changed(str)``, ``selection_changed(str)`` (the current item,
    "" = nothing), ``selected_changed(list)`` (the selected names)."""

    model_replaced = Signal()
    model_event = Signal(str, str, str, object)
    modified_changed = Signal(bool)
    path_changed = Signal(str)
    selection_changed = Signal(str)
    selected_changed = Signal(list)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.undo_stack = QUndoStack(self)
        self.undo_stack.cleanChanged.connect(self._on_clean_changed)
        self.model = None
        self.path = ""
        self.selection = ""
        self.selected: list[str] = []
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
        self.select_many([name] if name else [])

    def select_many(self, names, current: str = ""):
        """Select ``names`` (in order, duplicates dropped) with ``current`` (one of them; default the
        last) as the current item."""
        names = list(dict.fromkeys(n for n in names if n))
        current = current if current in names else (names[-1] if names else "")
        changed = names != self.selected
        self.selected = names
        if current != self.selection:
            self.selection = current
            self.selection_changed.emit(current)
        if changed:
            self.selected_changed.emit(list(names))

    def toggle(self, name: str):
        """Add ``name`` to the selection (as the current item) or take it out (Ctrl-click)."""
        if name in self.selected:
            self.select_many([n for n in self.selected if n != name], self.selection)
        elif name:
            self.select_many(self.selected + [name], name)

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
        self.selection, self.selected = "", []
        self.model_replaced.emit()
        self.path_changed.emit(path)
        self.selection_changed.emit("")
        self.selected_changed.emit([])
        self.modified_changed.emit(False)

    # ---- helpers ------------------------------------------------------------------------------
    def _on_clean_changed(self, clean):
        self.modified_changed.emit(not clean)

    def _on_model_event(self, event, collection, name, detail):
        if event == "removed" and name in self.selected:
            self.select_many([n for n in self.selected if n != name],
                             self.selection if self.selection != name else "")
        elif event == "renamed" and detail in self.selected:
            self.selected = [name if n == detail else n for n in self.selected]
            if detail == self.selection:
                self.selection = name
        self.model_event.emit(event, collection, name or "", detail)
        if event == "renamed" and name == self.selection:
            self.selection_changed.emit(name)
