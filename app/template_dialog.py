"""File ▸ New from Template…: a mechanism from the gallery (``solver.TEMPLATES``: four-bar,
slider–crank, pendulum chain, double wishbone) with its parameters, edited by their declarations
(units, bounds and defaults are the template's ``fields``).  OK builds the model
(``solver.build_template``) and opens it as a new untitled project; a refused parameter is said in
the dialog, which stays open.  The model is made of design points and links: editing a point or a
link's section afterwards moves and resizes what is on it."""
from __future__ import annotations

from PySide6.QtWidgets import QComboBox, QDialog, QDialogButtonBox, QFormLayout, QLabel, QVBoxLayout, QWidget

import solver

from .field_editors import make_editor
from .units import UnitSystem


class TemplateDialog(QDialog):
    """The gallery (opened with ``open()``); ``opened(model)`` is called with the model built."""

    def __init__(self, opened, parent=None):
        super().__init__(parent)
        self.opened = opened
        self.units = UnitSystem(angles="deg")
        self.setWindowTitle("New from template")
        layout = QVBoxLayout(self)
        self.choice = QComboBox(self)
        for key, template in solver.TEMPLATES.items():
            self.choice.addItem(template.label, key)
        layout.addWidget(self.choice)
        self.doc = QLabel(self)
        self.doc.setWordWrap(True)
        layout.addWidget(self.doc)
        self.page = QWidget(self)
        layout.addWidget(self.page)
        self.message = QLabel("", self)
        self.message.setWordWrap(True)
        self.message.setStyleSheet("color: #b00020")
        layout.addWidget(self.message)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.editors = {}
        self.choice.currentIndexChanged.connect(self._show)
        self._show()

    @property
    def key(self) -> str:
        return self.choice.currentData()

    def _show(self, *_):
        template = solver.TEMPLATES[self.key]
        self.doc.setText(template.doc)
        page = QWidget(self)
        form = QFormLayout(page)
        self.editors = {}
        for field in template.fields:
            editor = make_editor(field, parent=page, units=self.units)
            editor.set_value(field.default_value())
            editor.setToolTip(field.doc)
            form.addRow(field.name.replace("_", " "), editor)
            self.editors[field.name] = editor
        self.layout().replaceWidget(self.page, page)
        self.page.deleteLater()
        self.page = page
        self.message.setText("")

    def parameters(self) -> dict:
        return {name: editor.value() for name, editor in self.editors.items()}

    def accept(self):
        try:
            model = solver.build_template(self.key, **self.parameters())
        except solver.ModelError as exc:
            self.message.setText("\n".join(exc.problems))
            return
        super().accept()
        self.opened(model)
