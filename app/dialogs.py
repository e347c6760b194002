"""Every question the application asks the user, in one place (tests replace these functions)."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QComboBox, QDialog, QDialogButtonBox, QFileDialog, QFormLayout, QHBoxLayout,
                               QMessageBox)

import solver

FILE_FILTER = "MBS Studio projects (*.mbs.json);;JSON files (*.json);;All files (*)"


def ask_save_changes(parent, what: str) -> str:
    """'save', 'discard' or 'cancel' for unsaved changes in ``what``."""
    buttons = QMessageBox.StandardButton
    answer = QMessageBox.question(parent, "Unsaved changes", f"Save the changes to {what}?",
                                  buttons.Save | buttons.Discard | buttons.Cancel, buttons.Save)
    return {buttons.Save: "save", buttons.Discard: "discard"}.get(answer, "cancel")


def confirm(parent, title: str, text: str) -> bool:
    """A yes/no question (default no)."""
    buttons = QMessageBox.StandardButton
    return QMessageBox.question(parent, title, text, buttons.Yes | buttons.No, buttons.No) == buttons.Yes


def confirm_delete(parent, name: str, dependents: list[str]) -> bool:
    """Ask before a delete that cascades to ``dependents``."""
    return confirm(parent, "Delete", f"Deleting '{name}' also deletes the elements that depend on it:\n\n  "
                   + "\n  ".join(dependents) + "\n\nDelete them all?")


def _accepted(dialog, form) -> bool:
    """Add OK / Cancel to ``form`` and run ``dialog``; True when it was accepted."""
    buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
    buttons.accepted.connect(dialog.accept)
    buttons.rejected.connect(dialog.reject)
    form.addRow(buttons)
    return dialog.exec() == QDialog.DialogCode.Accepted


def ask_offset(parent, name: str):
    """A translation (dx, dy, dz) in m for moving ``name``, or None if cancelled."""
    from .field_editors import SciSpinBox
    from .units import SI
    dialog = QDialog(parent)
    dialog.setWindowTitle(f"Move '{name}'")
    form = QFormLayout(dialog)
    spins = []
    for axis in "xyz":
        spin = SciSpinBox(dialog, SI.quantity("m"), f"d{axis}")
        form.addRow(f"d{axis}", spin)
        spins.append(spin)
    if not _accepted(dialog, form):
        return None
    return [s.value() for s in spins]


def ask_rotation(parent, name: str, pivots: dict):
    """(axis (3,), angle in rad, pivot (3,)) for rotating body ``name``, or None if cancelled.
    ``pivots``: {label: global point} offered in a combo (the first, the body's CM, is the default);
    choosing one fills the pivot's x, y, z, which may also be typed.  The angle is entered in degrees."""
    from .field_editors import SciSpinBox
    from .units import SI, UnitSystem
    dialog = QDialog(parent)
    dialog.setWindowTitle(f"Rotate '{name}'")
    form = QFormLayout(dialog)

    def row(label, quantity, values):
        box = QHBoxLayout()
        spins = []
        for axis, value in zip("xyz", values):
            spin = SciSpinBox(dialog, quantity, f"{label} {axis}")
            spin.setValue(float(value))
            box.addWidget(spin)
            spins.append(spin)
        form.addRow(label, box)
        return spins

    axis = row("axis", SI.quantity(""), (0.0, 0.0, 1.0))
    angle = SciSpinBox(dialog, UnitSystem("SI", "deg").quantity("rad"), "angle")
    form.addRow("angle", angle)
    combo = QComboBox(dialog)
    for label, point in pivots.items():
        combo.addItem(label, list(point))
    form.addRow("pivot at", combo)
    pivot = row("pivot", SI.quantity("m"), next(iter(pivots.values()), (0.0, 0.0, 0.0)))
    combo.currentIndexChanged.connect(
        lambda i: [s.setValue(float(v)) for s, v in zip(pivot, combo.itemData(i))])
    if not _accepted(dialog, form):
        return None
    return [s.value() for s in axis], angle.si_value(), [s.si_value() for s in pivot]


def message_box(icon, title: str, text: str, parent) -> QMessageBox:
    """A message box that shows its texts as plain text (never as HTML: a name from a file such as
    ``<img src=…>`` is shown, not rendered), each through :func:`solver.shown_text` (control and
    bidirectional characters as escapes); :func:`set_lines` adds the lines below it."""
    box = QMessageBox(icon, title, solver.shown_text(text), QMessageBox.StandardButton.Ok, parent)
    box.setTextFormat(Qt.TextFormat.PlainText)
    return box


def set_lines(box: QMessageBox, lines, detailed=False):
    """``lines`` (each shown through solver.shown_text) as the box's informative (or detailed) text."""
    text = "\n".join(solver.shown_text(line) for line in lines)
    if detailed:
        box.setDetailedText(text)
    else:
        box.setInformativeText(text)


def show_error(parent, title: str, problems: list[str]):
    box = message_box(QMessageBox.Icon.Warning, title, problems[0] if len(problems) == 1 else
                      f"{len(problems)} problems:", parent)
    if len(problems) > 1:
        set_lines(box, problems, detailed=True)
        set_lines(box, problems[:10])
    box.exec()


def show_report(parent, title: str, summary: str, lines: list[str], warning: bool = False,
                action: str | None = None) -> bool:
    """A report (e.g. Check Model): ``summary`` as the text, ``lines`` below it; ``action``: the
    text of a button that does what the report suggests.  True when that button was pressed."""
    icon = QMessageBox.Icon.Warning if warning else QMessageBox.Icon.Information
    box = message_box(icon, title, summary, parent)
    set_lines(box, [part for line in lines for part in (line, "")][:-1])
    button = box.addButton(action, QMessageBox.ButtonRole.AcceptRole) if action else None
    box.exec()
    return button is not None and box.clickedButton() is button


def open_path(parent, folder: str = "") -> str:
    return QFileDialog.getOpenFileName(parent, "Open project", folder, FILE_FILTER)[0]


def save_path(parent, suggestion: str = "") -> str:
    path = QFileDialog.getSaveFileName(parent, "Save project as", suggestion, FILE_FILTER)[0]
    if path and not path.endswith(".json"):
        path += ".mbs.json"
    return path


def show_run_failure(parent, outcome):
    """A failed (or crashed) run: message, time, elements involved, a suggestion; ``outcome`` is an
    :class:`app.simulation.RunOutcome` (its partial results are already kept).  A traceback is
    never shown here (it is in the log)."""
    n = len(outcome.results.t) if outcome.has_results else 0
    when = "?" if outcome.time is None else f"{outcome.time:.4g} s"
    lines = [f"Time of failure: {when}",
             f"Involved: {', '.join(outcome.elements) or 'not known'}",
             f"Results kept: {n} output points" + (f" (up to t = {outcome.results.t[-1]:.4g} s)" if n else ""),
             "", outcome.suggestion]
    box = message_box(QMessageBox.Icon.Critical, "Simulation failed", outcome.message, parent)
    if outcome.details:
        lines.append("The technical details are in the Log panel.")
    set_lines(box, lines)
    box.exec()


def ask_solver_settings(parent, values: dict):
    """The Simulate ▸ Solver Settings… dialog: new settings values, or None if cancelled."""
    from .run_control import SettingsDialog
    dialog = SettingsDialog(values, parent)
    if dialog.exec() != QDialog.DialogCode.Accepted:
        return None
    return dialog.values()


def open_file_path(parent, title: str, folder: str = "", file_filter: str = "All files (*)") -> str:
    return QFileDialog.getOpenFileName(parent, title, folder, file_filter)[0]


def save_file_path(parent, title: str, suggestion: str = "", file_filter: str = "All files (*)") -> str:
    return QFileDialog.getSaveFileName(parent, title, suggestion, file_filter)[0]


def folder_path(parent, title: str, folder: str = "") -> str:
    return QFileDialog.getExistingDirectory(parent, title, folder)


def ask_flexible_beam(parent, suggestion: dict):
    """Model ▸ Add Flexible Beam…: the FlexibleBody field values (:class:`app.beam_dialog.BeamDialog`),
    or None if cancelled; ``suggestion`` gives the "start" and "end" points shown first.  A bad
    section dimension is reported and the dialog stays open."""
    from .beam_dialog import BeamDialog
    import solver
    dialog = BeamDialog(suggestion, parent)
    while dialog.exec() == QDialog.DialogCode.Accepted:
        try:
            return dialog.values()
        except solver.ModelError as exc:
            show_error(parent, "Add flexible beam", exc.problems)
    return None
