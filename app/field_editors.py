"""One editor widget per field kind of ``solver.Field`` (float, vec3, enum, body, function, ...).

Every editor is a :class:`FieldEditor`: ``set_value(v)`` shows a stored value without emitting,
``committed(value)`` is emitted with the new value in the model's stored form when the user finishes
an edit, and ``set_error(message)`` draws the red border (the message is shown by the row).
:func:`make_editor` picks the editor from the field declaration; units become spin-box suffixes and
the field's bounds become the spin-box limits.
"""
from __future__ import annotations

import json
import math

from PySide6.QtCore import Signal
from PySide6.QtGui import QColor, QValidator
from PySide6.QtWidgets import (QCheckBox, QColorDialog, QComboBox, QDoubleSpinBox, QFileDialog, QFormLayout,
                               QGridLayout, QHBoxLayout, QLineEdit, QPushButton, QSpinBox,
                               QWidget)

_BIG = 1e300


class SciSpinBox(QDoubleSpinBox):
    """A double spin box that shows and accepts any magnitude (``1e-4``, ``2.5e6``) and steps by
    about a tenth of the value's order of magnitude."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setDecimals(323)
        self.setRange(-_BIG, _BIG)
        self.setKeyboardTracking(False)
        self.setAccelerated(True)
        self.setButtonSymbols(QDoubleSpinBox.ButtonSymbols.NoButtons)
        self.setMinimumWidth(60)

    def textFromValue(self, value):  # noqa: N802  (Qt API name)
        return f"{value:.10g}"

    def valueFromText(self, text):  # noqa: N802
        try:
            return float(self._strip(text))
        except ValueError:
            return self.value()

    def validate(self, text, pos):
        body = self._strip(text)
        try:
            x = float(body)
        except ValueError:
            partial = body in ("", "-", "+", ".", "-.") or body.lower().endswith(("e", "e-", "e+"))
            state = QValidator.State.Intermediate if partial else QValidator.State.Invalid
            return state, text, pos
        ok = math.isfinite(x) and self.minimum() <= x <= self.maximum()
        return (QValidator.State.Acceptable if ok else QValidator.State.Intermediate), text, pos

    def fixup(self, text):
        return self.textFromValue(self.value())

    def stepBy(self, steps):  # noqa: N802
        v = self.value()
        step = 10 ** math.floor(math.log10(abs(v))) / 10 if v else 0.1
        self.setValue(v + steps * step)

    def _strip(self, text):
        text = text.strip()
        prefix, suffix = self.prefix().strip(), self.suffix().strip()
        if prefix and text.startswith(prefix):
            text = text[len(prefix):]
        if suffix and text.endswith(suffix):
            text = text[: -len(suffix)]
        return text.strip()


class FieldEditor(QWidget):
    """Base class of the field editors."""

    committed = Signal(object)

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


def _spin(field, parent, minimum=None, maximum=None):
    s = SciSpinBox(parent)
    lo = field.minimum if minimum is None else minimum
    hi = field.maximum if maximum is None else maximum
    s.setRange(-_BIG if lo is None else lo, _BIG if hi is None else hi)
    if field.unit:
        s.setSuffix(f" {field.unit}")
    return s


class FloatEditor(FieldEditor):
    def __init__(self, field, parent=None):
        super().__init__(field, parent)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.spin = _spin(field, self)
        layout.addWidget(self.spin)
        self.inputs = [self.spin]
        self.spin.valueChanged.connect(self._emit)

    def set_value(self, value):
        with _Blocked(self.spin):
            self.spin.setValue(float(value))

    def value(self):
        return self.spin.value()


class OptionalFloatEditor(FieldEditor):
    """A number or None (shown as the 'auto' check box)."""

    def __init__(self, field, parent=None):
        super().__init__(field, parent)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.auto = QCheckBox("auto", self)
        self.spin = _spin(field, self)
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
                self.spin.setValue(float(value))

    def value(self):
        return None if self.auto.isChecked() else self.spin.value()

    def _on_auto(self, checked):
        self.spin.setEnabled(not checked)
        self._emit()


class IntEditor(FieldEditor):
    def __init__(self, field, parent=None):
        super().__init__(field, parent)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.spin = QSpinBox(self)
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
        self.line.editingFinished.connect(self._finish)

    def set_value(self, value):
        self._shown = "" if value is None else str(value)
        with _Blocked(self.line):
            self.line.setText(self._shown)

    def value(self):
        return self.line.text()

    def _finish(self):
        if self.line.text() != self._shown:
            self._emit()


class VectorEditor(FieldEditor):
    """n numbers (vec3, unit_vec3, vec6, inertia, orientation); ``optional`` adds a 'none' box."""

    def __init__(self, field, labels, optional=False, none_label="none", parent=None):
        super().__init__(field, parent)
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setHorizontalSpacing(3)
        self.none = QCheckBox(none_label, self) if optional else None
        columns = 3 if len(labels) in (3, 6) else len(labels)
        self.spins = []
        for i, label in enumerate(labels):
            s = _spin(field, self)
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
                values = list(value) + [0.0] * (len(self.spins) - len(value))
                for s, v in zip(self.spins, values):
                    s.setValue(float(v))

    def value(self):
        if self.none is not None and self.none.isChecked():
            return None
        return [s.value() for s in self.spins]

    def _on_none(self, checked):
        for s in self.spins:
            s.setEnabled(not checked)
        self._emit()


class ChoiceEditor(FieldEditor):
    """Enums and references (body/joint names): a combo box; ``set_choices`` refills it."""

    def __init__(self, field, choices=(), parent=None):
        super().__init__(field, parent)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.combo = QComboBox(self)
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
            if self.combo.findText(str(value)) < 0:
                self.combo.addItem(str(value))
            self.combo.setCurrentText(str(value))

    def value(self):
        return self.combo.currentText()


class FunctionEditor(FieldEditor):
    """Functions of time: a number, an expression of t or a table ({"t": [...], "values": [...]}),
    one per component (1 or 3).  ``validator(value) -> message | None`` gives live validation."""

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
            line.editingFinished.connect(self._finish)
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
        values = [_parse_function(line.text()) for line in self.lines]
        return values if len(self.lines) > 1 else values[0]

    def _live_check(self, *_):
        self.live_message = self.validator(self.value()) if self.validator else None
        self.set_error(self.live_message)

    def _finish(self):
        if [line.text() for line in self.lines] != self._shown:
            self._emit()


def _function_text(value):
    if isinstance(value, dict):
        return json.dumps(value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value)) if abs(value) < 1e15 else repr(value)
    return str(value)


def _parse_function(text):
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
    return text


_SHAPES = ("none", "box", "cylinder", "sphere", "mesh")


class GeometryEditor(FieldEditor):
    """Display geometry: shape, its dimensions (rows shown per shape), mesh file and colour."""

    def __init__(self, field, parent=None):
        super().__init__(field, parent)
        form = QFormLayout(self)
        form.setContentsMargins(0, 0, 0, 0)
        self.form = form
        self.shape = QComboBox(self)
        self.shape.addItems(_SHAPES)
        self.size = [SciSpinBox(self) for _ in range(3)]
        size_row = QWidget(self)
        h = QHBoxLayout(size_row)
        h.setContentsMargins(0, 0, 0, 0)
        for s, label in zip(self.size, "xyz"):
            s.setRange(0.0, _BIG)
            s.setPrefix(f"{label} ")
            s.setSuffix(" m")
            h.addWidget(s)
        self.radius, self.length, self.scale = (SciSpinBox(self) for _ in range(3))
        for s, suffix in ((self.radius, " m"), (self.length, " m"), (self.scale, "")):
            s.setRange(0.0, _BIG)
            s.setSuffix(suffix)
        self.axis = QComboBox(self)
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
                s.setValue(v)
            self.radius.setValue(value.get("radius", 0.05))
            self.length.setValue(value.get("length", 0.2))
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
            out["size"] = [s.value() for s in self.size]
        elif shape == "cylinder":
            out.update(radius=self.radius.value(), length=self.length.value(), axis=self.axis.currentText())
        elif shape == "sphere":
            out["radius"] = self.radius.value()
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


def make_editor(field, reference_names=(), validator=None, parent=None) -> FieldEditor:
    """The editor for ``field`` (a ``solver.Field``); ``reference_names`` fills body/joint combos;
    ``validator`` checks function values live."""
    kind = field.kind
    if kind == "float":
        return FloatEditor(field, parent)
    if kind == "optional_float":
        return OptionalFloatEditor(field, parent)
    if kind == "int":
        return IntEditor(field, parent)
    if kind == "bool":
        return BoolEditor(field, parent)
    if kind in ("str", "name"):
        return TextEditor(field, parent)
    if kind in ("vec3", "unit_vec3"):
        return VectorEditor(field, ("x", "y", "z"), parent=parent)
    if kind == "optional_vec3":
        return VectorEditor(field, ("x", "y", "z"), optional=True, none_label="none (at the CM)", parent=parent)
    if kind == "vec6":
        return VectorEditor(field, ("x", "y", "z", "rx", "ry", "rz"), parent=parent)
    if kind == "inertia":
        return VectorEditor(field, ("xx", "yy", "zz", "xy", "yz", "zx"), parent=parent)
    if kind == "orientation":
        return VectorEditor(field, ("w", "x", "y", "z"), parent=parent)
    if kind == "enum":
        return ChoiceEditor(field, field.choices, parent)
    if kind in ("body", "joint"):
        return ChoiceEditor(field, reference_names, parent)
    if kind == "function":
        return FunctionEditor(field, 1, validator, parent)
    if kind == "function_vec3":
        return FunctionEditor(field, 3, validator, parent)
    if kind == "geometry":
        return GeometryEditor(field, parent)
    raise ValueError(f"no editor for field kind {kind!r} ({field.name})")
