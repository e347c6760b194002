"""Undoable edits of the model: every change the GUI makes is one of these ``QUndoCommand``s.

Commands call the model's editing methods (``add``, ``remove``, ``rename``, ``set_field``) and never
touch the views: the tree, property editor and viewport update from the model's notifications.

A command is *applied* once before it is pushed (:meth:`Document.push`), so a ``ModelError`` from the
model's validation reaches the caller and nothing enters the stack; the first ``redo()`` that
``QUndoStack.push`` makes is then skipped.
"""
from __future__ import annotations

import copy

from PySide6.QtGui import QUndoCommand

import solver

# ids for QUndoCommand.mergeWith: consecutive edits of one field merge into one step.
_SET_FIELD_ID = 1001
_SET_MODEL_ID = 1002
_SET_SETTING_ID = 1003


class ModelCommand(QUndoCommand):
    """Base class: ``apply()`` does the edit (may raise ``solver.ModelError``), ``revert()`` undoes it."""

    def __init__(self, model: solver.Model, text: str):
        super().__init__(text)
        self.model = model
        self._skip_redo = False

    def apply(self):
        raise NotImplementedError

    def revert(self):
        raise NotImplementedError

    def mark_applied(self):
        """Called by the document after a successful ``apply()``, just before the push."""
        self._skip_redo = True

    def redo(self):
        if self._skip_redo:
            self._skip_redo = False
            return
        self.apply()

    def undo(self):
        self.revert()


class AddElements(ModelCommand):
    """Add elements (copies of the given ones) in one step, each at ``index`` of its collection (None = end)."""

    def __init__(self, model, elements, text, index=None):
        super().__init__(model, text)
        self.elements = [e.copy() for e in elements]
        self.index = index

    def apply(self):
        added = []
        try:
            for element in self.elements:
                self.model.add(element.copy(), self.index)
                added.append(element.name)
        except solver.ModelError:
            for name in reversed(added):
                self.model.remove(name)
            raise

    def revert(self):
        for element in reversed(self.elements):
            self.model.remove(element.name)


class AddElement(AddElements):
    """Add one element (a copy of the given one) at ``index`` of its collection (None = end)."""

    def __init__(self, model, element, index=None, text=None):
        super().__init__(model, [element], text or f"Add {element.KIND.replace('_', ' ')} '{element.name}'", index)
        self.element = self.elements[0]


class RemoveElement(ModelCommand):
    """Remove elements (a name or a list of names) and, in the same step, every element that depends
    on them."""

    def __init__(self, model, names):
        names = [names] if isinstance(names, str) else list(names)
        deps = [d for n in names for d in model.dependents(n) if d not in names]
        deps = list(dict.fromkeys(deps))
        suffix = f" (and {len(deps)} dependent{'s' * (len(deps) > 1)})" if deps else ""
        super().__init__(model, "Delete " + ", ".join(f"'{n}'" for n in names) + suffix)
        self.names = names
        self.removed = []

    def apply(self):
        self.removed = []
        for name in self.names:
            if name in self.model:          # not already gone as a dependent of an earlier one
                self.removed += self.model.remove(name, cascade=True)

    def revert(self):
        for element, index in reversed(self.removed):
            self.model.add(element, index)
        self.removed = []


class RenameElement(ModelCommand):
    """Rename an element; the model updates every reference to it."""

    def __init__(self, model, old, new):
        super().__init__(model, f"Rename '{old}' to '{new}'")
        self.old, self.new = old, new

    def apply(self):
        self.model.rename(self.old, self.new)
        self.new = self.model.element(self.new.strip()).name

    def revert(self):
        self.model.rename(self.new, self.old)


class SetField(ModelCommand):
    """Set one field of an element; consecutive edits of the same field merge."""

    def __init__(self, model, name, field, value):
        super().__init__(model, f"Set {name}.{field}")
        self.name, self.field = name, field
        self.value = copy.deepcopy(value)
        self.old = None

    def apply(self):
        self.old = self.model.set_field(self.name, self.field, self.value)

    def revert(self):
        self.model.set_field(self.name, self.field, self.old)

    def id(self):
        return _SET_FIELD_ID

    def mergeWith(self, other):  # noqa: N802  (Qt API name)
        if not (isinstance(other, SetField) and (other.name, other.field) == (self.name, self.field)):
            return False
        self.value = other.value
        return True


class SetFields(ModelCommand):
    """Set several fields in one step, e.g. a move (positions) or mass and inertia from geometry."""

    def __init__(self, model, changes, text):
        """changes: list of (element name, field, value)."""
        super().__init__(model, text)
        self.changes = [(n, f, copy.deepcopy(v)) for n, f, v in changes]
        self.olds = []

    def apply(self):
        self.olds = []
        try:
            for name, field, value in self.changes:
                self.olds.append((name, field, self.model.set_field(name, field, value)))
        except solver.ModelError:
            self.revert()
            raise

    def revert(self):
        for name, field, old in reversed(self.olds):
            self.model.set_field(name, field, old)
        self.olds = []


class SetModelAttribute(ModelCommand):
    """Set the model's ``name`` or ``gravity``; consecutive edits of one attribute merge."""

    def __init__(self, model, attribute, value):
        super().__init__(model, f"Set model {attribute}")
        self.attribute = attribute
        self.value = copy.deepcopy(value)
        self.old = None

    def apply(self):
        old = getattr(self.model, self.attribute)
        setattr(self.model, self.attribute, self.value)
        self.old = old.tolist() if hasattr(old, "tolist") else old

    def revert(self):
        setattr(self.model, self.attribute, self.old)

    def id(self):
        return _SET_MODEL_ID

    def mergeWith(self, other):  # noqa: N802
        if not (isinstance(other, SetModelAttribute) and other.attribute == self.attribute):
            return False
        self.value = other.value
        return True


class SetSetting(ModelCommand):
    """Set one solver setting saved with the project.  Settings send no model notification, so
    ``notify(field)`` is called after each change (the document re-announces it)."""

    def __init__(self, model, field, value, notify):
        super().__init__(model, f"Set solver {field}")
        self.field = field
        self.value = copy.deepcopy(value)
        self.old = None
        self._notify = notify

    def apply(self):
        self.old = self.model.settings.set(self.field, self.value)
        self._notify(self.field)

    def revert(self):
        self.model.settings.set(self.field, self.old)
        self._notify(self.field)

    def id(self):
        return _SET_SETTING_ID

    def mergeWith(self, other):  # noqa: N802
        if not (isinstance(other, SetSetting) and other.field == self.field):
            return False
        self.value = other.value
        return True


class ReplaceElement(ModelCommand):
    """Replace an element (one without dependents, e.g. a measure) by ``element`` of the same name at
    the same place, so fields that are only valid together (a measure's kind and axis) change at once."""

    def __init__(self, model, element, text=None):
        super().__init__(model, text or f"Edit {element.KIND.replace('_', ' ')} '{element.name}'")
        self.element = element.copy()
        self.old = None
        self.index = None

    def apply(self):
        name = self.element.name
        self.old, self.index = self.model.element(name), self.model.index_of(name)
        self.model.remove(name)
        try:
            self.model.add(self.element.copy(), self.index)
        except solver.ModelError:
            self.model.add(self.old, self.index)
            raise

    def revert(self):
        self.model.remove(self.element.name)
        self.model.add(self.old, self.index)
