"""One editor widget per field kind of ``solver.Field`` (float, vec3, enum, body, function, ...).

Every editor is a :class:`FieldEditor`: ``set_value(v)`` shows a stored value without emitting,
``committed(value)`` is emitted with the new value in the model's stored form when the user finishes
an edit, ``refused(message)`` when the typed text cannot be taken (an unknown unit or one that does
not fit the field, a number not finite or out of the field's bounds; the message names the field) —
``refused("")`` when text typed since is fine again (the message is cleared) — and ``set_error(message)`` draws the red border
(the message is shown by the row).  :func:`make_editor` picks the editor from the field declaration;
numbers are shown in the project's display units (:mod:`app.units`: the unit is the spin-box suffix,
the field's bounds become the spin-box limits) and typed with any unit pint knows (``50 mm``).

Editing several elements at once, a value (or a vector component) that differs between them is
:data:`MIXED`: number, choice, text and check-box editors show it as "—" (blank) and give it back
as MIXED until the user enters a value.
"""
from __future__ import annotations

import json
import math
import re

from PySide6.QtCore import QEvent, QObject, QSize, Qt, Signal
from PySide6.QtGui import QColor, QValidator
from PySide6.QtWidgets import (QCheckBox, QColorDialog, QComboBox, QDoubleSpinBox, QFileDialog, QFormLayout,
                               QGridLayout, QHBoxLayout, QLineEdit, QPushButton, QSpinBox,
                               QWidget)

from . import app_settings
from .orientation import MODES, axis_angle_from_quat, euler_from_quat, quat_from_axis_angle, quat_from_euler
from .units import SI, Quantity, UnitProblem, component_units, function_unit_problem, function_value

_BIG = 1e300
_PLAIN = Quantity("", "")
_PARTIAL_NUMBER = re.compile(r"[-+]?\d*\.?\d*(?:[eE][-+]?)?")
MIXED_TEXT = "—"
WIDEST_NUMBER = "-1.91e-07"      # the number a spin box keeps room for (SciSpinBox.minimumSizeHint)
_SPIN_PADDING = 10               # frame and text margins of a spin box without buttons (px)


class _Mixed:
    """The type of :data:`MIXED`."""

    def __repr__(self):
        return "MIXED"


MIXED = _Mixed()   # a value that differs between the elements edited together


class _SafeTyping:
    """What the number boxes (:class:`SciSpinBox`, :class:`IntSpinBox`) share: the whole value
    selected when the box gets the focus (click, Tab) and on a double-click, no wheel edits (the
    panel scrolls), and on Enter or focus out after typing ``refused(problem())`` — "" when the
    typed text is taken.  Call :meth:`_safe_typing` in ``__init__``."""

    def _safe_typing(self):
        self._typed = False            # text typed since the last Enter / focus out
        self._clicks = _SelectOnClick(self)
        self.lineEdit().textEdited.connect(self._on_typed)

    def keyPressEvent(self, event):  # noqa: N802
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self._check_refused()
        super().keyPressEvent(event)

    def focusInEvent(self, event):  # noqa: N802
        super().focusInEvent(event)
        self._clicks.focused_by_click = event.reason() == Qt.FocusReason.MouseFocusReason
        self.selectAll()

    def focusOutEvent(self, event):  # noqa: N802
        self._check_refused()
        super().focusOutEvent(event)

    def wheelEvent(self, event):  # noqa: N802
        event.ignore()                     # a typed number is never changed by the wheel: the panel scrolls

    def _on_typed(self, *_):
        self._typed = True

    def _check_refused(self):
        if not self._typed:
            return
        self._typed = False            # refused text is replaced by the value (QAbstractSpinBox.fixup)
        self.refused.emit(self.problem() or "")


class SciSpinBox(_SafeTyping, QDoubleSpinBox):
    """A double spin box that shows and accepts any magnitude (``1e-4``, ``2.5e6``) and steps by
    about a tenth of the value's order of magnitude.

    Its :class:`~app.units.Quantity` gives the unit shown (the suffix) and the SI unit stored:
    :meth:`value` is in the display unit, :meth:`si_value` in SI; text with a unit (``2 in``) is
    converted.  Text that cannot be taken — a unit that does not fit, a number that is not finite
    (``1e400``) or outside the limits (``-5 kg`` for a mass) — is refused: ``refused(message)`` on
    Enter or focus out, naming ``what``, and the previous value stays; typed text that is taken
    emits ``refused("")`` (an earlier message no longer holds).

    Safe to type into: the whole value is selected when the box gets the focus (click, Tab) and on
    a double-click, so a click never leaves the caret inside a number; the mouse wheel never
    changes the value (it scrolls the panel); Enter on an unchanged text keeps the exact value
    (not the 10 digits shown), so it changes nothing."""

    refused = Signal(str)

    def __init__(self, parent=None, quantity: Quantity = _PLAIN, what: str = ""):
        super().__init__(parent)
        self.quantity, self.what = quantity, what
        self._minimum = -_BIG          # the field's lower limit (the range's while not showing "—")
        self._si = None                # (display value, SI value) last shown by set_si_value
        self._safe_typing()
        self.setDecimals(323)
        self.setRange(-_BIG, _BIG)
        self.setKeyboardTracking(False)
        self.setAccelerated(True)
        self.setButtonSymbols(QDoubleSpinBox.ButtonSymbols.NoButtons)
        self.set_quantity(quantity, what)

    def set_quantity(self, quantity: Quantity, what: str):
        """Show values in ``quantity``'s display unit; ``what`` names the value in messages."""
        self.quantity, self.what = quantity, what
        self.setSuffix(f" {quantity.suffix}" if quantity.suffix else "")

    def si_value(self):
        """The value in SI, or MIXED while it shows "—" (:meth:`set_mixed`); exactly the value
        given to :meth:`set_si_value` while that is shown (no round trip through the display unit)."""
        if self.is_mixed():
            return MIXED
        if self._si is not None and self._si[0] == self.value():
            return self._si[1]
        return self.quantity.to_si(self.value())

    def set_si_value(self, value):
        """Show ``value`` (SI), or "—" for MIXED."""
        if value is MIXED:
            return self.set_mixed()
        if self.specialValueText():
            self.setSpecialValueText("")
            self.setMinimum(self._minimum)
        self.setValue(self.quantity.to_display(float(value)))
        self._si = (self.value(), float(value))

    def set_mixed(self):
        """Show "—": the value differs between the elements edited together.  Any value typed then
        differs from the hidden one (the spin box's extra minimum), so it is committed."""
        if not self.specialValueText():
            self._minimum = self.minimum()
            self.setSpecialValueText(MIXED_TEXT)
            self.setMinimum(-_BIG)
        self.setValue(-_BIG)

    def is_mixed(self) -> bool:
        return bool(self.specialValueText()) and self.value() == self.minimum()

    def set_si_range(self, minimum, maximum):
        """Limits in SI (None: unbounded)."""
        lo = -_BIG if minimum is None else self.quantity.to_display(minimum)
        hi = _BIG if maximum is None else self.quantity.to_display(maximum)
        self._minimum = lo
        self.setRange(-_BIG if self.specialValueText() else lo, hi)

    def problem(self) -> str | None:
        """Why the current text cannot be taken (None when it can, or is still being typed): a unit
        that does not fit, a number that is not finite or outside the limits."""
        text = self.text()
        x, problem = self._parse(text)
        if problem or x is None:
            return problem
        if not math.isfinite(x):
            return f"{self.what}: must be a finite number, got {self._unprefixed(text)}"
        unit = f" {self.quantity.suffix}" if self.quantity.suffix else ""
        if x < self.minimum():
            return f"{self.what}: must be >= {self.minimum():.10g}{unit}, got {x:.10g}{unit}"
        if x > self.maximum():
            return f"{self.what}: must be <= {self.maximum():.10g}{unit}, got {x:.10g}{unit}"
        return None

    def minimumSizeHint(self):  # noqa: N802
        """Room for a value of 3 significant digits with its exponent and sign (``-1.91e-07``),
        the prefix and the unit: a layout never clips a small value into a misleading one."""
        hint = super().minimumSizeHint()
        text = f"{self.prefix()}{WIDEST_NUMBER}{self.suffix()}"
        return QSize(max(hint.width(), self.fontMetrics().horizontalAdvance(text) + _SPIN_PADDING), hint.height())

    def sizeHint(self):  # noqa: N802
        return self.minimumSizeHint()

    def textFromValue(self, value):  # noqa: N802  (Qt API name)
        return f"{value:.10g}"

    def valueFromText(self, text):  # noqa: N802
        if text == self.prefix() + self.textFromValue(self.value()) + self.suffix():
            return self.value()            # the text shown, not edited: the exact value, not its 10 digits
        x, _ = self._parse(text)
        return self.value() if x is None else x

    def validate(self, text, pos):
        x, _ = self._parse(text)
        ok = x is not None and math.isfinite(x) and self.minimum() <= x <= self.maximum()
        return (QValidator.State.Acceptable if ok else QValidator.State.Intermediate), text, pos

    def fixup(self, text):
        return self.textFromValue(self.value())

    def stepBy(self, steps):  # noqa: N802
        v = self.value()
        step = 10 ** math.floor(math.log10(abs(v))) / 10 if v else 0.1
        self.setValue(v + steps * step)

    def _unprefixed(self, text):
        """``text`` without the prefix the spin box shows ("x ")."""
        text, prefix = text.strip(), self.prefix().strip()
        return text[len(prefix):].strip() if prefix and text.startswith(prefix) else text

    def _parse(self, text):
        """(value in the display unit or None, problem or None).  The suffix the spin box keeps
        after the typed text ("50 mm m", "0.5 rad deg") is dropped first, when it is a separate
        word; then the text as a whole is read ("50 mm" is 50 mm even when the suffix is " m")."""
        text = text.strip()
        if self.specialValueText() and text in (self.specialValueText(), ""):
            return self.minimum(), None      # still "—" (or emptied): nothing entered
        text, suffix = self._unprefixed(text), self.suffix().strip()
        bodies = ([text[: -len(suffix)].strip()] if suffix and text.endswith(" " + suffix) else []) + [text]
        problem = None
        for body in bodies:
            try:
                return self.quantity.parse(body, self.what), None
            except UnitProblem as exc:
                problem = problem or str(exc)
        if _PARTIAL_NUMBER.fullmatch(text):
            return None, None      # a number still being typed ("", "-", "1e")
        return None, problem


class ChoiceBox(QComboBox):
    """A combo box the mouse wheel changes only while it has the keyboard focus (a wheel passing
    over the property panel scrolls it instead of editing the model)."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)

    def wheelEvent(self, event):  # noqa: N802
        if self.hasFocus():
            super().wheelEvent(event)
        else:
            event.ignore()


class IntSpinBox(_SafeTyping, QSpinBox):
    """An integer box as safe to type into as :class:`SciSpinBox`: text that is not an integer
    within the limits is refused with a message naming ``what``."""

    refused = Signal(str)

    def __init__(self, parent=None, what: str = ""):
        super().__init__(parent)
        self.what = what
        self._safe_typing()

    def problem(self) -> str | None:
        """Why the typed text cannot be taken (None when it can, or is still being typed)."""
        text = self.cleanText().strip()
        if text in ("", "-", "+") or self.validate(self.text(), 0)[0] == QValidator.State.Acceptable:
            return None
        return f"{self.what}: must be an integer from {self.minimum()} to {self.maximum()}, got {text}"


class _SelectOnClick(QObject):
    """Clicks in a spin box's text: the click that gives the focus and a double-click select the
    whole value instead of placing the caret or selecting one side of the decimal point."""

    def __init__(self, spin):
        super().__init__(spin)
        self.spin = spin
        self.focused_by_click = False       # the focus came with a press not yet delivered
        spin.lineEdit().installEventFilter(self)

    def eventFilter(self, watched, event):  # noqa: N802
        kind = event.type()
        if kind == QEvent.Type.MouseButtonDblClick or (kind == QEvent.Type.MouseButtonPress and self.focused_by_click):
            self.focused_by_click = False
            self.spin.selectAll()
            return True
        return False


class FieldEditor(QWidget):
    """Base class of the field editors."""

    committed = Signal(object)
    refused = Signal(str)

    def __init__(self, field, parent=None):
        super().__init__(parent)
        self.field = field
        self.inputs: list[QWidget] = []
        self.setToolTip(_tooltip(field))

    def set_value(self, value):
        raise NotImplementedError

    def value(self):
        raise NotImplementedError

    def set_error(self, message: str | None):
        for w in self.inputs:
            w.setProperty("invalid", bool(message))
            w.style().unpolish(w)
            w.style().polish(w)
        self.setToolTip(message or _tooltip(self.field))

    def _emit(self, *_):
        self.committed.emit(self.value())


def _tooltip(field):
    unit = f" [{field.unit}]" if field.unit else ""
    return f"{field.name}{unit}: {field.doc}" if field.doc else f"{field.name}{unit}"


def _spin(editor, quantity, what):
    """A spin box of ``editor``'s field in ``quantity``'s units, its refusals forwarded."""
    field = editor.field
    s = SciSpinBox(editor, quantity, what)
    s.set_si_range(field.minimum, field.maximum)
    s.refused.connect(editor.refused)
    return s


class FloatEditor(FieldEditor):
    def __init__(self, field, units=SI, parent=None):
        super().__init__(field, parent)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.spin = _spin(self, units.quantity(field.unit), field.name)
        layout.addWidget(self.spin)
        self.inputs = [self.spin]
        self.spin.valueChanged.connect(self._emit)

    def set_value(self, value):
        with _Blocked(self.spin):
            self.spin.set_si_value(value)

    def value(self):
        return self.spin.si_value()


class OptionalFloatEditor(FieldEditor):
    """A number or None (shown as the 'auto' check box)."""

    def __init__(self, field, units=SI, parent=None):
        super().__init__(field, parent)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.auto = QCheckBox("auto", self)
        self.spin = _spin(self, units.quantity(field.unit), field.name)
        layout.addWidget(self.auto)
        layout.addWidget(self.spin, 1)
        self.inputs = [self.spin]
        self.auto.toggled.connect(self._on_auto)
        self.spin.valueChanged.connect(self._emit)

    def set_value(self, value):
        with _Blocked(self.auto, self.spin):
            self.auto.setChecked(value is None)
            self.spin.setEnabled(value is not None)
            if value is not None:
                self.spin.set_si_value(value)

    def value(self):
        return None if self.auto.isChecked() else self.spin.si_value()

    def _on_auto(self, checked):
        self.spin.setEnabled(not checked)
        self._emit()


class IntEditor(FieldEditor):
    def __init__(self, field, parent=None):
        super().__init__(field, parent)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.spin = IntSpinBox(self, field.name)
        self.spin.refused.connect(self.refused)
        self.spin.setRange(int(field.minimum) if field.minimum is not None else -2 ** 31,
                           int(field.maximum) if field.maximum is not None else 2 ** 31 - 1)
        self.spin.setKeyboardTracking(False)
        layout.addWidget(self.spin)
        self.inputs = [self.spin]
        self.spin.valueChanged.connect(self._emit)

    def set_value(self, value):
        with _Blocked(self.spin):
            self.spin.setValue(int(value))

    def value(self):
        return self.spin.value()


class BoolEditor(FieldEditor):
    def __init__(self, field, parent=None):
        super().__init__(field, parent)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.box = QCheckBox(self)
        layout.addWidget(self.box)
        self.inputs = [self.box]
        self.box.toggled.connect(self._emit)

    def set_value(self, value):
        with _Blocked(self.box):
            self.box.setTristate(value is MIXED)
            if value is MIXED:
                self.box.setCheckState(Qt.CheckState.PartiallyChecked)
            else:
                self.box.setChecked(bool(value))

    def value(self):
        return self.box.isChecked()


class TextEditor(FieldEditor):
    """Plain text or a name; committed when editing finishes (Enter or focus out) if changed."""

    def __init__(self, field, parent=None):
        super().__init__(field, parent)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.line = QLineEdit(self)
        layout.addWidget(self.line)
        self.inputs = [self.line]
        self._shown = ""
        self.line.editingFinished.connect(self.finish)

    def set_value(self, value):
        self._shown = "" if value is None or value is MIXED else str(value)
        with _Blocked(self.line):
            self.line.setPlaceholderText(MIXED_TEXT if value is MIXED else "")
            self.line.setText(self._shown)

    def value(self):
        return self.line.text()

    def finish(self):
        """Commit the text if it was changed (Enter, focus out, or before a run); the text of the
        model's value again clears an earlier refusal's message."""
        if self.line.text() != self._shown:
            self._emit()
        else:
            self.refused.emit("")


class NamesEditor(TextEditor):
    """A list of names (a contact group's bodies) as one line, names separated by commas."""

    def set_value(self, value):
        super().set_value(", ".join(value) if isinstance(value, list) else value)


class VectorEditor(FieldEditor):
    """n numbers (vec3, unit_vec3, vec6, inertia, orientation); ``optional`` adds a 'none' box."""

    def __init__(self, field, labels, optional=False, none_label="none", units=SI, parent=None):
        super().__init__(field, parent)
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setHorizontalSpacing(3)
        self.none = QCheckBox(none_label, self) if optional else None
        columns = 3 if len(labels) in (3, 6) else len(labels)
        self.spins = []
        for i, (label, unit) in enumerate(zip(labels, component_units(field.unit, len(labels)))):
            s = _spin(self, units.quantity(unit), f"{field.name} {label}")
            s.setPrefix(f"{label} ")
            grid.addWidget(s, i // columns, i % columns)
            s.valueChanged.connect(self._emit)
            self.spins.append(s)
        if self.none is not None:
            grid.addWidget(self.none, (len(labels) - 1) // columns + 1, 0, 1, columns)
            self.none.toggled.connect(self._on_none)
        self.inputs = list(self.spins)

    def set_value(self, value):
        with _Blocked(*self.spins, *([self.none] if self.none else [])):
            if self.none is not None:
                self.none.setChecked(value is None)
            for s in self.spins:
                s.setEnabled(value is not None)
            if value is not None:
                values = [MIXED] * len(self.spins) if value is MIXED else \
                    list(value) + [0.0] * (len(self.spins) - len(value))
                for s, v in zip(self.spins, values):
                    s.set_si_value(v)

    def value(self):
        if self.none is not None and self.none.isChecked():
            return None
        return [s.si_value() for s in self.spins]

    def _on_none(self, checked):
        for s in self.spins:
            s.setEnabled(not checked)
        self._emit()


class OrientationEditor(FieldEditor):
    """An orientation as Euler angles (intrinsic XYZ, ZYX or ZXZ), axis–angle or the quaternion,
    chosen in a combo box (the choice is a remembered preference, :mod:`app.orientation`); angles are
    in the display angle unit and read with a unit ("26.57 deg").  Commits the quaternion
    (w, x, y, z) of the whole edited rotation."""

    def __init__(self, field, units=SI, parent=None):
        super().__init__(field, parent)
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setHorizontalSpacing(3)
        self.angle = units.quantity("rad")
        self.mode = ChoiceBox(self)
        self.mode.addItems(MODES)
        self.mode.setToolTip("Euler sequences are intrinsic (about the rotated axes): XYZ = Rx·Ry·Rz")
        saved = app_settings.settings().value("orientation_mode", MODES[0])
        self.mode.setCurrentText(saved if saved in MODES else MODES[0])
        grid.addWidget(self.mode, 0, 0, 1, 3)
        self.spins = [SciSpinBox(self) for _ in range(4)]
        for i, s in enumerate(self.spins):
            grid.addWidget(s, 1 + i // 3, i % 3)
            s.valueChanged.connect(self._emit)
            s.refused.connect(self.refused)
        self.inputs = list(self.spins)
        self._q = [1.0, 0.0, 0.0, 0.0]
        self._axis = [0.0, 0.0, 1.0]     # shown for the identity in axis–angle mode
        self.mode.currentTextChanged.connect(self._on_mode)
        self._on_mode(self.mode.currentText(), remember=False)

    def set_mode(self, mode: str):
        self.mode.setCurrentText(mode)

    def set_value(self, value):
        self._q = [1.0, 0.0, 0.0, 0.0] if value is None else [float(c) for c in value]
        self._show()

    def value(self):
        """The quaternion of the angles shown; raises ValueError for a zero axis."""
        mode, v = self.mode.currentText(), [s.si_value() for s in self.spins]
        if mode.startswith("Euler"):
            return quat_from_euler(v[:3], mode.split()[1])
        if mode == "axis–angle":
            return quat_from_axis_angle(v[:3], v[3])
        return [v[3], *v[:3]]

    def _emit(self, *_):
        try:
            q = self.value()
        except ValueError as exc:
            self.refused.emit(f"{self.field.name}: {exc}")
            return
        if self.mode.currentText() == "axis–angle":   # keep the typed axis while the angle is 0
            axis = [s.si_value() for s in self.spins[:3]]
            n = sum(c * c for c in axis) ** 0.5
            self._axis = [c / n for c in axis]
        self.committed.emit(q)

    def _on_mode(self, mode, remember=True):
        if remember:
            app_settings.settings().setValue("orientation_mode", mode)
        plain = Quantity("", "")
        if mode.startswith("Euler"):
            axes = mode.split()[1]
            names = [a + "'" * axes[:i].count(a) for i, a in enumerate(axes)]  # ZXZ → Z X Z'
            setup = [(self.angle, n) for n in names] + [None]
        elif mode == "axis–angle":
            setup = [(plain, "axis x"), (plain, "axis y"), (plain, "axis z"), (self.angle, "angle")]
        else:
            setup = [(plain, "x"), (plain, "y"), (plain, "z"), (plain, "w")]
        for s, what in zip(self.spins, setup):
            s.setVisible(what is not None)
            if what is not None:
                s.set_quantity(what[0], f"{self.field.name} {what[1]}")
                s.setPrefix(f"{what[1].split()[-1]} ")
                s.setRange(-_BIG, _BIG)
        self._show()

    def _show(self):
        mode = self.mode.currentText()
        if mode.startswith("Euler"):
            values = euler_from_quat(self._q, mode.split()[1]) + [0.0]
        elif mode == "axis–angle":
            axis, angle = axis_angle_from_quat(self._q, self._axis)
            self._axis = axis
            values = [*axis, angle]
        else:
            values = [*self._q[1:], self._q[0]]
        with _Blocked(*self.spins):
            for s, v in zip(self.spins, values):
                s.set_si_value(v)


class ChoiceEditor(FieldEditor):
    """Enums and references (body/joint names): a combo box; ``set_choices`` refills it."""

    def __init__(self, field, choices=(), parent=None):
        super().__init__(field, parent)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.combo = ChoiceBox(self)
        layout.addWidget(self.combo)
        self.inputs = [self.combo]
        self.set_choices(choices or field.choices)
        self.combo.activated.connect(self._emit)

    def set_choices(self, choices):
        with _Blocked(self.combo):
            current = self.combo.currentText()
            self.combo.clear()
            self.combo.addItems([str(c) for c in choices])
            self.combo.setCurrentText(current)

    def set_value(self, value):
        with _Blocked(self.combo):
            self.combo.setPlaceholderText(MIXED_TEXT)
            if value is MIXED:
                self.combo.setCurrentIndex(-1)
                return
            if self.combo.findText(str(value)) < 0:
                self.combo.addItem(str(value))
            self.combo.setCurrentText(str(value))

    def value(self):
        return self.combo.currentText()


class FunctionEditor(FieldEditor):
    """Functions of time: a number, an expression of t or a table ({"t": [...], "values": [...]}),
    one per component (1 or 3); always in SI (expressions may use ``deg``), a number typed with a
    unit that fits the field ("30 deg", "2 kN") is converted to SI.  ``validator(value) -> message |
    None`` gives live validation."""

    def __init__(self, field, components=1, validator=None, parent=None):
        super().__init__(field, parent)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.validator = validator
        self.lines = []
        for _ in range(components):
            line = QLineEdit(self)
            line.setPlaceholderText("number or f(t)")
            line.textEdited.connect(self._live_check)
            line.editingFinished.connect(self.finish)
            layout.addWidget(line)
            self.lines.append(line)
        self.inputs = list(self.lines)
        self._shown = None
        self.live_message = None

    def set_value(self, value):
        values = value if len(self.lines) > 1 else [value]
        texts = [_function_text(v) for v in values]
        self._shown = texts
        for line, text in zip(self.lines, texts):
            with _Blocked(line):
                line.setText(text)

    def value(self):
        values = [_parse_function(line.text(), self.field.unit) for line in self.lines]
        return values if len(self.lines) > 1 else values[0]

    def _live_check(self, *_):
        self.live_message = self._unit_problem() or (self.validator(self.value()) if self.validator else None)
        self.set_error(self.live_message)

    def finish(self):
        """Commit the texts if they were changed (Enter, focus out, or before a run); a number
        with a unit that does not fit is refused instead."""
        if [line.text() for line in self.lines] != self._shown:
            problem = self._unit_problem()
            if problem:
                self.refused.emit(problem)
            else:
                self._emit()

    def _unit_problem(self):
        return next((p for p in (function_unit_problem(line.text(), self.field.unit, self.field.name)
                                 for line in self.lines) if p), None)


def _function_text(value):
    if isinstance(value, dict):
        return json.dumps(value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value)) if abs(value) < 1e15 else repr(value)
    return str(value)


def _parse_function(text, unit=""):
    text = text.strip()
    try:
        return float(text)
    except ValueError:
        pass
    if text.startswith("{"):
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            return text
    number = function_value(text, unit)
    return text if number is None else number


_SHAPES = ("none", "box", "cylinder", "sphere", "mesh")


class GeometryEditor(FieldEditor):
    """Display geometry: shape, its dimensions (rows shown per shape), mesh file and colour."""

    def __init__(self, field, units=SI, parent=None):
        super().__init__(field, parent)
        form = QFormLayout(self)
        form.setContentsMargins(0, 0, 0, 0)
        self.form = form
        self.shape = ChoiceBox(self)
        self.shape.addItems(_SHAPES)
        length = units.quantity("m")
        self.size = [SciSpinBox(self, length, f"size {label}") for label in "xyz"]
        size_row = QWidget(self)
        h = QHBoxLayout(size_row)
        h.setContentsMargins(0, 0, 0, 0)
        for s, label in zip(self.size, "xyz"):
            s.setPrefix(f"{label} ")
            h.addWidget(s)
        self.radius, self.length = SciSpinBox(self, length, "radius"), SciSpinBox(self, length, "length")
        self.scale = SciSpinBox(self, _PLAIN, "scale")
        for s in (*self.size, self.radius, self.length, self.scale):
            s.setRange(0.0, _BIG)
            s.refused.connect(self.refused)
        self.axis = ChoiceBox(self)
        self.axis.addItems(["x", "y", "z"])
        file_row = QWidget(self)
        h = QHBoxLayout(file_row)
        h.setContentsMargins(0, 0, 0, 0)
        self.file = QLineEdit(self)
        browse = QPushButton("…", self)
        browse.setFixedWidth(28)
        browse.clicked.connect(self._browse)
        h.addWidget(self.file)
        h.addWidget(browse)
        self.color = QPushButton(self)
        self.color.clicked.connect(self._pick_color)
        self._color = None
        self.rows = {"size": size_row, "radius": self.radius, "length": self.length, "axis": self.axis,
                     "file": file_row, "scale": self.scale}
        form.addRow("shape", self.shape)
        for key, widget in self.rows.items():
            form.addRow(key, widget)
        form.addRow("colour", self.color)
        self.inputs = [self.shape, *self.size, self.radius, self.length, self.file, self.scale]
        self.shape.activated.connect(self._on_shape)
        for s in (*self.size, self.radius, self.length, self.scale):
            s.valueChanged.connect(self._emit)
        self.axis.activated.connect(self._emit)
        self.file.editingFinished.connect(self._emit)
        self.set_value({"shape": "none"})

    def set_value(self, value):
        value = value or {"shape": "none"}
        widgets = (self.shape, *self.size, self.radius, self.length, self.scale, self.axis, self.file)
        with _Blocked(*widgets):
            self.shape.setCurrentText(value["shape"])
            for s, v in zip(self.size, value.get("size", [0.1, 0.1, 0.1])):
                s.set_si_value(v)
            self.radius.set_si_value(value.get("radius", 0.05))
            self.length.set_si_value(value.get("length", 0.2))
            self.axis.setCurrentText(value.get("axis", "z"))
            self.file.setText(value.get("file", ""))
            self.scale.setValue(value.get("scale", 1.0))
        self._color = value.get("color")
        self._show_color()
        self._show_rows()

    def value(self):
        shape = self.shape.currentText()
        out = {"shape": shape}
        if shape == "box":
            out["size"] = [s.si_value() for s in self.size]
        elif shape == "cylinder":
            out.update(radius=self.radius.si_value(), length=self.length.si_value(), axis=self.axis.currentText())
        elif shape == "sphere":
            out["radius"] = self.radius.si_value()
        elif shape == "mesh":
            out.update(file=self.file.text(), scale=self.scale.value())
        if self._color is not None and shape != "none":
            out["color"] = list(self._color)
        return out

    def _show_rows(self):
        used = {"box": ("size",), "cylinder": ("radius", "length", "axis"), "sphere": ("radius",),
                "mesh": ("file", "scale"), "none": ()}[self.shape.currentText()]
        for key, widget in self.rows.items():
            self.form.setRowVisible(widget, key in used)

    def _on_shape(self, *_):
        self._show_rows()
        if self.shape.currentText() != "mesh" or self.file.text():
            self._emit()

    def _browse(self):
        path = QFileDialog.getOpenFileName(self, "Mesh file", "", "Meshes (*.stl *.obj);;All files (*)")[0]
        if path:
            self.file.setText(path)
            self._emit()

    def _pick_color(self):
        start = QColor.fromRgbF(*self._color) if self._color else QColor(180, 180, 180)
        color = QColorDialog.getColor(start, self, "Body colour")
        if color.isValid():
            self._color = [round(color.redF(), 4), round(color.greenF(), 4), round(color.blueF(), 4)]
            self._show_color()
            self._emit()

    def _show_color(self):
        if self._color:
            c = QColor.fromRgbF(*self._color)
            self.color.setText(c.name())
            self.color.setStyleSheet(f"background-color: {c.name()}; color: "
                                     f"{'black' if c.lightnessF() > 0.5 else 'white'};")
        else:
            self.color.setText("default")
            self.color.setStyleSheet("")


class _Blocked:
    """Context manager blocking the signals of some widgets."""

    def __init__(self, *widgets):
        self.widgets = widgets

    def __enter__(self):
        self.states = [w.blockSignals(True) for w in self.widgets]

    def __exit__(self, *exc):
        for w, s in zip(self.widgets, self.states):
            w.blockSignals(s)


MIXED_KINDS = ("float", "optional_float", "bool", "str", "vec3", "unit_vec3", "vec6", "inertia", "enum", "body",
               "joint")   # editors that can show a whole value differing between elements


def make_editor(field, reference_names=(), validator=None, parent=None, units=SI) -> FieldEditor:
    """The editor for ``field`` (a ``solver.Field``); ``reference_names`` fills the combos of
    references (bodies, joints, the elements a field's ``extra["reference"]`` names);
    ``validator`` checks function values live; numbers are shown in ``units`` (an
    :class:`app.units.UnitSystem`)."""
    kind = field.kind
    if "reference" in field.extra:          # a design point, a road: one of the elements of that kind
        return ChoiceEditor(field, reference_names, parent)
    if kind == "float":
        return FloatEditor(field, units, parent)
    if kind == "optional_float":
        return OptionalFloatEditor(field, units, parent)
    if kind == "int":
        return IntEditor(field, parent)
    if kind == "bool":
        return BoolEditor(field, parent)
    if kind in ("str", "name", "polynomial"):
        return TextEditor(field, parent)
    if kind == "bodies":
        return NamesEditor(field, parent)
    if kind in ("vec3", "unit_vec3"):
        return VectorEditor(field, ("x", "y", "z"), units=units, parent=parent)
    if kind == "optional_vec3":
        return VectorEditor(field, ("x", "y", "z"), optional=True, none_label="none (at the CM)", units=units,
                            parent=parent)
    if kind == "vec6":
        return VectorEditor(field, ("x", "y", "z", "rx", "ry", "rz"), units=units, parent=parent)
    if kind == "inertia":
        return VectorEditor(field, ("xx", "yy", "zz", "xy", "yz", "zx"), units=units, parent=parent)
    if kind == "orientation":
        return OrientationEditor(field, units, parent)
    if kind == "enum":
        return ChoiceEditor(field, field.choices, parent)
    if kind in ("body", "joint"):
        return ChoiceEditor(field, reference_names, parent)
    if kind == "function":
        return FunctionEditor(field, 1, validator, parent)
    if kind == "function_vec3":
        return FunctionEditor(field, 3, validator, parent)
    if kind == "geometry":
        return GeometryEditor(field, units, parent)
    raise ValueError(f"no editor for field kind {kind!r} ({field.name})")
