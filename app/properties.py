"""The property editor: a form generated from the selected item's field declarations.

The selection is an element (its class's ``FIELDS``; a joint shows only ``used_fields()``), the model
(name, gravity) or the solver settings.  Each edit becomes an undoable command; when the model
refuses it, the field shows the model's message under a red border and the model stays unchanged.
Function fields (expressions of t) are also checked live as the user types.  Numbers are shown and
read in the project's display units (``settings.display_units`` / ``display_angles``, :mod:`app.units`);
text with a unit that does not fit a field is refused with a message naming the field.

Several elements of one kind selected together (:attr:`Document.selected`) are edited at once: a
field whose value is the same for all shows it, one that differs shows "—" (per component of a
vector: ``position`` x may differ while y and z are shared), and an edit sets that field — only the
components entered — on every selected element as one undoable step.  The name, and fields whose
editor cannot show a differing value (functions, orientation, geometry), are read-only while they differ.
"""
from __future__ import annotations

import dataclasses
import os

from PySide6.QtCore import QSize
from PySide6.QtWidgets import (QFormLayout, QHBoxLayout, QLabel, QPushButton, QScrollArea, QStyle, QVBoxLayout,
                               QWidget)

import solver

from . import commands
from .document import Document
from .field_editors import MIXED, MIXED_KINDS, FieldEditor, SciSpinBox, make_editor
from .inertia import SHAPES, body_from_mesh, inertia_from_geometry
from .simulation import driver_coordinate_unit
from .tree import MODEL_ITEM, SETTINGS_ITEM
from .units import UnitSystem

DEFAULT_DENSITY = 7850.0  # kg/m³
_TEXT_KINDS = ("function", "function_vec3", "str", "name")   # refused text stays on screen
_COMPONENT_KINDS = ("vec3", "unit_vec3", "optional_vec3", "vec6", "inertia")   # may differ per component
_FORM_MARGINS = 40        # the page's and the form's margins and the label–field spacing (px)


# ---- what is being edited ---------------------------------------------------------------------

class _ElementTarget:
    """Fields of one model element."""

    def __init__(self, document: Document, name: str):
        self.document = document
        self.model = document.model
        self.element = self.model.element(name)
        self.title = f"{self.element.KIND.replace('_', ' ').capitalize()} '{name}'"

    def fields(self):
        used = self.element.used_fields() if isinstance(self.element, solver.Joint) else None
        fields = [f for f in self.element.FIELDS if used is None or f.name in used]
        if isinstance(self.element, solver.Driver):  # "m or rad": the one of the driven coordinate
            unit = driver_coordinate_unit(self.model, self.element.name)
            fields = [dataclasses.replace(f, unit=unit) if f.name == "expression" and unit else f for f in fields]
        if isinstance(self.element, solver.Joint):   # limits, "m or rad": the one of the joint's first coordinate
            rotation = self.element.coordinates()[:1] == ("rotation",)
            fields = [dataclasses.replace(f, unit=f.unit.split(" or ")[int(rotation)]) if " or " in f.unit else f
                      for f in fields]
        return fields

    def value(self, field):
        return self.element.values[field.name]

    def command(self, field, value):
        if field.name == "name":
            return commands.RenameElement(self.model, self.element.name, value)
        if isinstance(self.element, solver.Measure) and field.name == "kind":
            # kind and axis are only valid together: the new kind with an axis it takes, in one step
            axes = solver.MEASURE_AXES.get(value, ("",))
            axis = self.element.axis if self.element.axis in axes else ("z" if "z" in axes else axes[0])
            return commands.ReplaceElement(self.model, solver.Measure(**{**self.element.values, "kind": value,
                                                                         "axis": axis}))
        return commands.SetField(self.model, self.element.name, field.name, value)

    def validate(self, field, value):
        try:
            self.element.copy().set(field.name, value)
        except solver.ModelError as exc:
            return "; ".join(exc.problems)
        return None

    def reference_names(self, field):
        if field.kind == "joint":
            return list(self.model.joints)
        if "reference" in field.extra:          # a design point, a road: the elements of that kind
            kind = field.extra["reference"]
            return [""] * bool(field.extra.get("optional")) + [e.name for e in self.model.elements() if e.KIND == kind]
        ground = [solver.GROUND] if field.name in ("body_i", "body_j") else []
        return ground + list(self.model.bodies)


class _MultiTarget:
    """The fields shared by several elements of one kind (same declaration for all: a joint field
    used by every selected joint, a driver expression in the same unit)."""

    def __init__(self, document: Document, names: list[str]):
        self.document = document
        self.model = document.model
        self.targets = [_ElementTarget(document, n) for n in names]
        self.names = list(names)
        kinds = {t.element.KIND for t in self.targets}
        collection = self.targets[0].element.COLLECTION.replace("_", " ")
        self.title = (f"{len(names)} {collection} selected: {', '.join(names)}" if len(kinds) == 1 else
                      f"{len(names)} items selected ({', '.join(sorted(kinds))}): select items of one kind "
                      "to edit them together")
        self.same_kind = len(kinds) == 1

    def fields(self):
        if not self.same_kind:
            return []
        first, *others = [t.fields() for t in self.targets]
        return [f for f in first if all(f in fields for fields in others)]

    def value(self, field):
        """The shared value, MIXED where the elements differ (per component of a vector)."""
        values = [t.value(field) for t in self.targets]
        if all(v == values[0] for v in values):
            return values[0]
        if field.kind in _COMPONENT_KINDS and all(isinstance(v, list) and len(v) == len(values[0]) for v in values):
            return [c[0] if all(x == c[0] for x in c) else MIXED for c in zip(*values)]
        return MIXED

    def shown_as(self, field):
        """The field as its editor shows it: a differing value whose editor cannot show "—"
        (functions, orientation, geometry) is shown as read-only text "—"."""
        return dataclasses.replace(field, kind="str") if (self.value(field) is MIXED and field.kind not in MIXED_KINDS) \
            else field

    def read_only(self, field) -> bool:
        return field.kind == "name" or self.shown_as(field) is not field

    def command(self, field, value):
        """One step setting ``field`` on every element; MIXED components keep each element's own."""
        changes = []
        for t in self.targets:
            own = t.value(field)
            if isinstance(value, list) and isinstance(own, list):
                new = [o if v is MIXED else v for v, o in zip(value, own)]
            else:
                new = own if value is MIXED else value
            changes.append((t.element.name, field.name, new))
        return commands.SetFields(self.model, changes, f"Set {field.name} of {', '.join(self.names)}")

    def validate(self, field, value):
        return self.targets[0].validate(field, value)

    def reference_names(self, field):
        return self.targets[0].reference_names(field)


class _ModelTarget:
    """The model's name and gravity."""

    title = "Model"

    def __init__(self, document: Document):
        self.model = document.model

    def fields(self):
        return [solver.Field("name", "name", doc="model name"), solver.Model.GRAVITY_FIELD]

    def value(self, field):
        v = getattr(self.model, field.name)
        return v.tolist() if hasattr(v, "tolist") else v

    def command(self, field, value):
        return commands.SetModelAttribute(self.model, field.name, value)

    def validate(self, field, value):
        return None

    def reference_names(self, field):
        return []


class _SettingsTarget:
    """Solver settings saved with the project."""

    title = "Solver settings"

    def __init__(self, document: Document):
        self.document = document
        self.model = document.model

    def fields(self):
        return [f for f in solver.Settings.FIELDS if f.name != "name"]

    def value(self, field):
        return self.model.settings.values[field.name]

    def command(self, field, value):
        return commands.SetSetting(self.model, field.name, value, self.document.notify_settings)

    def validate(self, field, value):
        return None

    def reference_names(self, field):
        return []


# ---- the widget -------------------------------------------------------------------------------

class PropertyEditor(QScrollArea):
    """Shows and edits the document's selection."""

    def __init__(self, document: Document, parent=None):
        super().__init__(parent)
        self.document = document
        self.setWidgetResizable(True)
        self.target = None
        self.editors: dict[str, FieldEditor] = {}
        self.errors: dict[str, QLabel] = {}
        self.density = None
        self.inertia_button = None
        self.derived = None        # a link's derived length and mass properties (read-only)
        document.selection_changed.connect(self.rebuild)
        document.selected_changed.connect(self._on_selected)
        document.model_replaced.connect(self.rebuild)
        document.model_event.connect(self._on_model_event)
        self.rebuild()

    # ---- public API ---------------------------------------------------------------------------
    def editor(self, field_name: str) -> FieldEditor:
        return self.editors[field_name]

    def error(self, field_name: str) -> str:
        """The message shown under a field ("" when none)."""
        label = self.errors.get(field_name)
        return label.text() if label is not None and not label.isHidden() else ""

    def commit(self, field_name: str, value) -> bool:
        """Apply ``value`` to a field as the editor would; False (and the message shown) if refused.
        The stored value entered again changes nothing (no undo step, results not stale)."""
        field = next(f for f in self.target.fields() if f.name == field_name)
        if field.kind == "geometry":
            value = _relative_mesh(value, self.document.path)
        if _same(value, self.target.value(field)):   # Enter in an unchanged field: no edit
            self._show_error(field.name, "")
            return True
        selected, current = self.document.selected, self.document.selection
        try:
            self.document.push(self.target.command(field, value))
            if self.document.selected != selected and all(n in self.document.model for n in selected):
                self.document.select_many(selected, current)     # an element replaced by the edit
        except solver.ModelError as exc:
            self._show_error(field.name, "\n".join(exc.problems))
            editor = self.editors.get(field.name)
            if editor is not None and field.kind not in _TEXT_KINDS:
                editor.set_value(self.target.value(field))
            return False
        self._show_error(field.name, "")
        return True

    def invalid_edits(self) -> list[tuple[str, str]]:
        """(field, message) of text fields showing an edit the model refused (or that fails the live
        check): what is on screen is not what a run would use.  Pending text edits are committed
        first.  (A refused number is not listed: its editor shows the model's value again.)"""
        for editor in self.editors.values():
            finish = getattr(editor, "finish", None)
            if finish is not None:
                finish()
        return [(name, self.error(name)) for name, editor in self.editors.items()
                if self.error(name) and editor.field.kind in _TEXT_KINDS]

    def focus_field(self, field_name: str):
        """Put the keyboard focus in a field and select its text (to show where a problem is)."""
        editor = self.editors[field_name]
        self.ensureWidgetVisible(editor)
        first = editor.inputs[0]
        first.setFocus()
        if hasattr(first, "selectAll"):
            first.selectAll()

    def show_problem(self, problem: solver.Problem) -> bool:
        """Select the element a problem names (the model for "model.<field>") and show the
        problem's message under the field it names, with the focus there; False when it names
        nothing in the model (e.g. an element that was not added)."""
        model = self.document.model
        if problem.element is not None and problem.element in model:
            item = problem.element
        elif problem.element is None and problem.path == "model":
            item = MODEL_ITEM
        else:
            return False
        self.document.select(item)
        if problem.field in self.editors:
            self._show_error(problem.field, problem.message)
            self.focus_field(problem.field)
        return True

    def compute_inertia(self, density: float) -> bool:
        """Set the selected body's mass and inertia from its geometry and ``density`` (one step); a mesh
        body also gets its CM moved onto the mesh's centre of mass (:func:`app.inertia.body_from_mesh`)."""
        body = self.target.element
        try:
            if body.geometry.get("shape") == "mesh":
                folder = os.path.dirname(self.document.path) if self.document.path else ""
                changes = body_from_mesh(body, density, folder)
            else:
                mass, inertia = inertia_from_geometry(body.geometry, density)
                changes = [("mass", mass), ("inertia", inertia)]
            self.document.push(commands.SetFields(
                self.document.model, [(body.name, field, value) for field, value in changes],
                f"Mass and inertia of '{body.name}' from geometry"))
        except (ValueError, solver.ModelError) as exc:
            self._show_error("inertia", str(exc))
            return False
        self._show_error("inertia", "")
        return True

    def sizeHint(self):  # noqa: N802  (Qt API name)
        """Wide enough for a body's form in the display units — its longest label and its widest
        row, the inertia — with every value unclipped (the main window opens the panel at this width)."""
        probe = make_editor(next(f for f in solver.Body.FIELDS if f.name == "inertia"), units=self.units)
        label = self.fontMetrics().horizontalAdvance("angular velocity")
        scrollbar = self.style().pixelMetric(QStyle.PixelMetric.PM_ScrollBarExtent)
        width = label + probe.minimumSizeHint().width() + scrollbar + _FORM_MARGINS
        probe.deleteLater()
        return QSize(width, super().sizeHint().height())

    @property
    def units(self) -> UnitSystem:
        """The project's display units."""
        return UnitSystem.of(self.document.model.settings)

    def rebuild(self, *_):
        """Regenerate the form for the current selection."""
        self.target = self._make_target(self.document.selection, self.document.selected)
        self.editors, self.errors = {}, {}
        self.inertia_button = self.derived = None
        page = QWidget()
        outer = QVBoxLayout(page)
        title = QLabel(self.target.title if self.target else "Select an item in the model tree", page)
        title.setObjectName("propertyTitle")
        title.setWordWrap(True)
        outer.addWidget(title)
        if self.target is not None:
            form = QFormLayout()
            form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
            for field in self.target.fields():
                form.addRow(_label(field), self._make_row(field, page))
            outer.addLayout(form)
            element = getattr(self.target, "element", None)
            # one body; a link's mass and inertia follow its section and density: shown, not edited
            if isinstance(element, solver.Link):
                self.derived = QLabel(page)
                self.derived.setObjectName("linkDerived")
                self.derived.setWordWrap(True)
                self._show_derived()
                outer.addWidget(self.derived)
            elif isinstance(element, solver.Body):
                outer.addWidget(self._make_inertia_tool(page))
        outer.addStretch(1)
        old = self.takeWidget()
        if old is not None:  # may be inside one of its editors' signals: delete it later
            old.deleteLater()
        self.setWidget(page)

    # ---- helpers ------------------------------------------------------------------------------
    def _make_target(self, selection, selected):
        elements = [n for n in selected if n in self.document.model]
        if len(elements) > 1:
            return _MultiTarget(self.document, elements)
        if selection == MODEL_ITEM:
            return _ModelTarget(self.document)
        if selection == SETTINGS_ITEM:
            return _SettingsTarget(self.document)
        if selection and selection in self.document.model:
            return _ElementTarget(self.document, selection)
        return None

    def _make_row(self, field, parent):
        row = QWidget(parent)
        layout = QVBoxLayout(row)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(1)
        target = self.target
        editor = make_editor(getattr(target, "shown_as", lambda f: f)(field), target.reference_names(field),
                             lambda value, f=field: target.validate(f, value), row, self.units)
        editor.set_value(target.value(field))
        if getattr(target, "read_only", lambda f: False)(field):
            editor.setEnabled(False)
            editor.setToolTip(f"{field.name}: differs between the selected items; edit them one at a time")
        editor.committed.connect(lambda value, name=field.name: self.commit(name, value))
        editor.refused.connect(lambda message, name=field.name: self._show_error(name, message))
        error = QLabel(row)
        error.setObjectName("fieldError")
        error.setWordWrap(True)
        error.hide()
        layout.addWidget(editor)
        layout.addWidget(error)
        self.editors[field.name] = editor
        self.errors[field.name] = error
        if hasattr(editor, "lines"):
            for line in editor.lines:
                line.textEdited.connect(lambda *_, e=editor, n=field.name: self._show_error(n, e.live_message or ""))
        return row

    def _make_inertia_tool(self, parent):
        box = QWidget(parent)
        h = QHBoxLayout(box)
        h.setContentsMargins(0, 6, 0, 0)
        self.density = SciSpinBox(box, self.units.quantity("kg/m³"), "density")
        self.density.set_si_range(1e-6, 1e6)
        self.density.set_si_value(DEFAULT_DENSITY)
        self.density.setToolTip("density of the homogeneous body")
        button = QPushButton("Mass && inertia from geometry", box)
        button.setObjectName("inertiaFromGeometry")
        button.setEnabled(_has_volume(self.target.element.geometry))
        button.setToolTip("compute mass and inertia of a homogeneous box, cylinder, sphere or watertight "
                          "mesh (a mesh body's CM moves to the mesh's centre of mass)")
        button.clicked.connect(lambda: self.compute_inertia(self.density.si_value()))
        self.inertia_button = button
        h.addWidget(QLabel("density", box))
        h.addWidget(self.density, 1)
        h.addWidget(button)
        return box

    def _show_error(self, field_name, message):
        label = self.errors.get(field_name)
        if label is None:
            return
        label.setText(message)
        label.setVisible(bool(message))
        editor = self.editors.get(field_name)
        if editor is not None:
            editor.set_error(message or None)

    def _on_model_event(self, event, collection, name, detail):
        if self.target is None:
            return
        if collection == "settings" and detail in ("display_units", "display_angles"):
            self.rebuild()         # every number is shown in the new units
            return
        if event != "changed" or detail == "type":
            if detail == "type" or not self._target_alive():
                self.rebuild()
            else:  # another element came, went or was renamed: refresh the reference lists
                self._refresh_references()
            return
        if not self._concerns(collection, name):
            return
        for field in self.target.fields():
            if field.name == detail or collection == "model":
                if getattr(self.target, "shown_as", lambda f: f)(field) != self.editors[field.name].field:
                    return self.rebuild()      # several elements' values came to differ or to agree
                self.editors[field.name].set_value(self.target.value(field))
                self._show_error(field.name, "")
        if detail == "geometry" and self.inertia_button is not None:
            self.inertia_button.setEnabled(_has_volume(self.target.element.geometry))
        if self.derived is not None:
            self._show_derived()

    def _show_derived(self):
        """A link's length, mass and inertia (from its points, section and density), in display units."""
        link, units = self.target.element, self.units

        def shown(value, unit):
            q = units.quantity(unit)
            return f"{q.to_display(value):.4g} {q.suffix}"
        inertia = ", ".join(shown(v, "kg·m²") for v in link.inertia[:3])
        self.derived.setText(f"length {shown(link.length, 'm')} · "
                             f"mass {shown(link.mass, 'kg')} · inertia {inertia} (from the points, section "
                             "and density)")

    def _on_selected(self, names):
        """Several items selected, or back to one: the form changes (a change of the current item
        alone is ``selection_changed``)."""
        if len(names) > 1 or isinstance(self.target, _MultiTarget):
            self.rebuild()

    def _target_alive(self):
        if isinstance(self.target, _MultiTarget):
            model = self.document.model
            return all(n in model and model.element(n) is t.element for n, t in zip(self.target.names, self.target.targets))
        if isinstance(self.target, _ElementTarget):
            element = self.target.element
            return element.name in self.document.model and self.document.model.element(element.name) is element
        return True

    def _refresh_references(self):
        for field in self.target.fields():
            if field.kind in ("body", "joint") or "reference" in field.extra:
                editor = self.editors[field.name]
                editor.set_choices(self.target.reference_names(field))
                editor.set_value(self.target.value(field))

    def _concerns(self, collection, name):
        if isinstance(self.target, _MultiTarget):
            return name in self.target.names
        if isinstance(self.target, _ElementTarget):
            return name == self.target.element.name
        if isinstance(self.target, _SettingsTarget):
            return collection == "settings"
        return collection == "model"


def _relative_mesh(geometry, project_path):
    """``geometry`` with a mesh file chosen by its absolute path (the file dialog's) written
    relative to the project's folder when it is inside it; a project file holds only such paths
    (solver.confined), so a mesh elsewhere is refused by the field and must be copied in."""
    file = geometry.get("file") if isinstance(geometry, dict) and geometry.get("shape") == "mesh" else None
    if not isinstance(file, str) or not os.path.isabs(file) or not project_path:
        return geometry
    folder = os.path.dirname(os.path.abspath(project_path))
    if os.path.commonpath([folder, os.path.abspath(file)]) != folder:
        return geometry
    return {**geometry, "file": os.path.relpath(file, folder).replace(os.sep, "/")}


def _same(value, current) -> bool:
    """Is an entered value the stored one (a MIXED component or value is an entry: not the same)?"""
    try:
        return bool(value == current)
    except ValueError:              # arrays of several elements
        return False


def _has_volume(geometry):
    return geometry.get("shape") in SHAPES + ("mesh",)


def _label(field):
    return field.name.replace("_", " ")
