"""What the Model menu's non-blocking tool dialogs share (the link tool, the contact picker): a
form with a red message line for refusals and OK/Cancel, and the window's selection followed while
the dialog is open — an element selected in the tree or the viewport is offered to the dialog
(:meth:`ToolDialog.picked`), which fills the field that last had the keyboard (``targets``)."""
from __future__ import annotations

from PySide6.QtWidgets import QApplication, QDialog, QDialogButtonBox, QLabel


class ToolDialog(QDialog):
    """Subclasses build their rows in ``form`` and call :meth:`finish_form`; ``targets`` maps a
    label to the widgets whose focus makes it the target of a selection; :meth:`picked` takes it."""

    targets: dict = {}

    def __init__(self, document, title, parent=None):
        super().__init__(parent)
        self.document = document
        self.setWindowTitle(title)
        self.added = ""
        self.target = ""

    @property
    def model(self):
        return self.document.model

    def finish_form(self, form, message_name):
        """The message line (object name ``message_name``) and the buttons; start following the window."""
        self.message = QLabel("", self)
        self.message.setObjectName(message_name)
        self.message.setWordWrap(True)
        self.message.setStyleSheet("color: #b00020")
        form.addRow(self.message)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        form.addRow(self.buttons)
        QApplication.instance().focusChanged.connect(self._focus_moved)
        self.document.selection_changed.connect(self.picked)
        self.finished.connect(self._disconnect)

    def picked(self, name):
        """An element selected in the window (``self.target`` the field to fill)."""

    def _focus_moved(self, _old, new):
        for label, widgets in self.targets.items():
            if new is not None and new in widgets:
                self.target = label

    def _disconnect(self, *_):
        """Closed: stop following the window; the window has the keyboard again (its shortcuts)."""
        if self.parentWidget() is not None:
            self.parentWidget().activateWindow()
        self.finished.disconnect(self._disconnect)
        QApplication.instance().focusChanged.disconnect(self._focus_moved)
        self.document.selection_changed.disconnect(self.picked)
