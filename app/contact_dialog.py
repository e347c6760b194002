"""Model ▸ Add Contact… (issue #28): a contact element between two picked bodies.

The two sides are bodies picked from their lists or clicked in the tree or the viewport (the dialog
does not block the window; a body selected there fills the side whose list last had the keyboard,
body_j first).  Each side's contact shape defaults to its body's own geometry (the element's
``geometry_i/j`` left at "none": the body's shape is the contact shape, docs/contact.md); ground
has none, so a contact with ground gets a plane through the origin facing up (against gravity).
The dialog says what each side's shape is, and refuses — naming the field, the dialog staying
open — a body without a shape or a pair of shapes with no contact law between them
(``solver.contact_pair``).  Stiffness, exponent, damping and the friction coefficients are the
:class:`solver.Contact` fields, edited by their declarations.  The element is added as one
undoable step (:class:`app.commands.AddElements`) and selected.

The "kind" choice "group" adds a contact group instead (:class:`solver.ContactGroup`: every pair of
the checked bodies in contact by the one law, no element per pair, docs/contact.md): the bodies
with a finite shape are listed with check boxes, those selected in the window checked (else all);
a body picked in the window while the dialog is open is checked.  Fewer than two bodies, or two
shapes with no contact law between them, are refused naming ``bodies``.
"""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QFormLayout, QLabel, QListWidget, QListWidgetItem

import solver

from . import commands
from .factory import unique_name
from .field_editors import make_editor
from .tool_dialog import ToolDialog
from .units import UnitSystem

LAW_FIELDS = ("stiffness", "exponent", "damping", "static_friction", "dynamic_friction")
SIDES = ("body_i", "body_j")
KINDS = ("pair", "group")        # a contact element between two bodies, or a contact group


def ground_plane(model: solver.Model) -> dict:
    """The contact shape of ground: a plane through the origin, normal against gravity (+y without it)."""
    g = np.asarray(model.gravity, dtype=float)
    normal = -g / np.linalg.norm(g) if np.linalg.norm(g) > 0.0 else np.array([0.0, 1.0, 0.0])
    return {"shape": "plane", "point": [0.0, 0.0, 0.0], "normal": [float(x) + 0.0 for x in normal]}   # no −0


def side_shape(model: solver.Model, body: str) -> dict | None:
    """The contact shape a side takes: ground's plane, else the body's own geometry (None: none)."""
    if body == solver.GROUND:
        return ground_plane(model)
    geometry = model.bodies[body].geometry
    return None if geometry is None or geometry.get("shape", "none") == "none" else geometry


def describe(shape: dict | None) -> str:
    if shape is None:
        return "no shape"
    if shape["shape"] == "plane":
        return "plane, normal " + ", ".join(f"{x:g}" for x in shape["normal"])
    sizes = {k: shape[k] for k in ("radius", "length", "size", "file") if k in shape}
    return shape["shape"] + "".join(f", {k} {v}" for k, v in sizes.items())


class ContactDialog(ToolDialog):
    """The form (shown with ``show()``); OK adds the contact or says why not."""

    def __init__(self, document, parent=None):
        super().__init__(document, "Add contact", parent)
        self.units = UnitSystem.of(self.model.settings)
        form = QFormLayout(self)
        self.form = form
        bodies = list(self.model.bodies)
        self.kind = QComboBox(self)
        self.kind.setObjectName("kind")
        self.kind.addItems(KINDS)
        form.addRow("kind", self.kind)
        self.side = {}
        self.shape_label = {}
        for field, choices in (("body_i", [solver.GROUND, *bodies]), ("body_j", bodies)):
            combo = QComboBox(self)
            combo.setObjectName(field)
            combo.addItems(choices)
            combo.currentTextChanged.connect(self._show_shapes)
            self.side[field] = combo
            self.shape_label[field] = QLabel("", self)
            self.shape_label[field].setObjectName(f"{field}_shape")
            form.addRow(field, combo)
            form.addRow("", self.shape_label[field])
        picked = [name for name in document.selected if name in self.model.bodies]
        self.members = QListWidget(self)
        self.members.setObjectName("bodies")
        finite = [b for b in bodies if (side_shape(self.model, b) or {"shape": "plane"})["shape"] != "plane"]
        for name in finite:
            item = QListWidgetItem(f"{name} ({describe(side_shape(self.model, name))})", self.members)
            item.setData(Qt.ItemDataRole.UserRole, name)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            checked = name in picked if len(set(picked) & set(finite)) > 1 else True
            item.setCheckState(Qt.CheckState.Checked if checked else Qt.CheckState.Unchecked)
        form.addRow("bodies", self.members)
        self.kind.currentTextChanged.connect(self._show_kind)
        if picked:                          # a body selected: it is body_j, a second one body_i
            self.side["body_j"].setCurrentText(picked[-1])
            if len(picked) > 1:
                self.side["body_i"].setCurrentText(picked[0])
        self.law = {}
        for name in LAW_FIELDS:
            field = solver.Contact.field(name)
            editor = make_editor(field, parent=self, units=self.units)
            editor.set_value(solver.Contact.NEW.get(name, field.default_value()))
            self.law[name] = editor
            form.addRow(name, editor)
        self.targets = {field: (combo,) for field, combo in self.side.items()}
        self.target = "body_j"            # the side a body selected in the window fills
        self._show_shapes()
        self._show_kind()
        self.finish_form(form, "contactMessage")

    def _show_kind(self, *_):
        """The rows of the kind chosen: the two sides, or the group's bodies."""
        group = self.kind.currentText() == "group"
        for field in SIDES:
            self.form.setRowVisible(self.side[field], not group)
            self.form.setRowVisible(self.shape_label[field], not group)
        self.form.setRowVisible(self.members, group)

    def checked(self) -> list[str]:
        """The bodies checked for a group, in the model's order."""
        items = (self.members.item(k) for k in range(self.members.count()))
        return [item.data(Qt.ItemDataRole.UserRole) for item in items if item.checkState() == Qt.CheckState.Checked]

    def picked(self, name):
        if name not in self.model.bodies:
            return
        if self.kind.currentText() == "group":
            for k in range(self.members.count()):
                if self.members.item(k).data(Qt.ItemDataRole.UserRole) == name:
                    self.members.item(k).setCheckState(Qt.CheckState.Checked)
        else:
            self.side[self.target].setCurrentText(name)

    def _show_shapes(self, *_):
        for field, combo in self.side.items():
            body = combo.currentText()
            if body:
                self.shape_label[field].setText(("ground: " if body == solver.GROUND else "its own: ")
                                                + describe(side_shape(self.model, body)))

    def element(self):
        """The new contact (a Contact, or a ContactGroup); raises solver.ModelError naming the field."""
        if self.kind.currentText() == "group":
            return self.group()
        model, name = self.model, unique_name(self.model, solver.Contact.NAME_PREFIX)
        bodies = {field: combo.currentText() for field, combo in self.side.items()}
        shapes = {}
        for field, body in bodies.items():
            shapes[field] = side_shape(model, body)
            if shapes[field] is None:
                raise solver.ModelError(f"forces '{name}'.{field}: body '{body}' has no shape to touch with "
                                        "(give it a geometry: its contact shape)")
        solver.contact_pair(shapes["body_i"]["shape"], shapes["body_j"]["shape"], f"forces '{name}'")
        values = {field: editor.value() for field, editor in self.law.items()}
        own = {"geometry_i": ground_plane(model)} if bodies["body_i"] == solver.GROUND else {}
        contact = solver.Contact(name=name, **bodies, **own, **values)
        contact.check()
        return contact

    def group(self) -> solver.ContactGroup:
        """The new contact group of the checked bodies; raises solver.ModelError naming ``bodies``."""
        name = unique_name(self.model, solver.ContactGroup.NAME_PREFIX)
        bodies = self.checked()
        solver.group_queries(bodies, [side_shape(self.model, b)["shape"] for b in bodies], f"forces '{name}'")
        values = {field: editor.value() for field, editor in self.law.items()}
        group = solver.ContactGroup(name=name, bodies=bodies, **values)
        group.check()
        return group

    def accept(self):
        try:
            contact = self.element()
            self.document.push(commands.AddElements(self.model, [contact], f"Add contact '{contact.name}'"))
        except solver.ModelError as exc:
            self.message.setText("\n".join(exc.problems))
            return
        self.added = contact.name
        super().accept()
        self.document.select(contact.name)
