"""Model ▸ Add Link (L): a link between two design points, as an engineer sketches it.

Each end is an existing design point (its name, picked from the list, or clicked in the viewport:
the dialog does not block the window, and a design point selected there fills the end whose field
last had the keyboard) or typed coordinates
("0.1, 0" or "100, 0, 0 mm": two or three components in display units; a unit typed on the last
one applies to all): a new point is made there unless one already is.  The start is first the end
of the last link, so a chain of links is one typed point each.  Each end may get a joint of the
chosen type (revolute about z by default) on its point: to ground, or to a link that already
ends there ("revolute to 'crank'", the default where there is one; at the start the default is
ground otherwise).  The section (rectangle or round, width, height, wall) and density are the
:class:`solver.Link` fields, edited by their declarations; what was used last is offered next.
Points, link and joints are added as one undoable step (:class:`app.commands.AddElements`); a
refused value is said in the dialog, which stays open.
"""
from __future__ import annotations

import re

import numpy as np
from PySide6.QtWidgets import QComboBox, QFormLayout, QHBoxLayout, QLabel

import solver

from . import commands
from .factory import PALETTE, unique_name
from .field_editors import make_editor
from .tool_dialog import ToolDialog
from .units import UnitProblem, UnitSystem

NO_JOINT, TO_GROUND = "no joint", "to ground"
SECTION_FIELDS = ("section", "width", "height", "wall", "density")
_UNIT_TAIL = re.compile(r"([A-Za-zµ]+)\s*$")      # the unit word ending a component ("100 mm")


def parse_point(text: str, units: UnitSystem, what: str) -> list[float]:
    """Global coordinates (m) of ``text``: 2 or 3 comma-separated components in display units; a
    unit after the last component applies to every component typed without one.  Raises
    solver.ModelError naming ``what``."""
    parts = [p.strip() for p in text.split(",")]
    if len(parts) not in (2, 3) or not all(parts):
        raise solver.ModelError(f"{what}: type a design point's name or its coordinates x, y[, z]; got {text!r}")
    tail = _UNIT_TAIL.search(parts[-1])
    quantity = units.quantity("m")
    values = []
    try:
        for part, axis in zip(parts, "xyz"):
            typed = part if tail is None or _UNIT_TAIL.search(part) else f"{part} {tail.group(1)}"
            values.append(quantity.to_si(quantity.parse(typed, f"{what}.{axis}")))
    except UnitProblem as exc:
        raise solver.ModelError(str(exc)) from None
    return values + [0.0] * (3 - len(values))


def links_at(model: solver.Model, point: str) -> list[str]:
    """The links with an end on design point ``point``, in model order."""
    return [n for n, b in model.bodies.items() if isinstance(b, solver.Link) and point in (b.point_i, b.point_j)]


class _End:
    """One end: the point's text (an editable list of the points) and the joint on it."""

    def __init__(self, dialog, label, text):
        self.dialog, self.label = dialog, label
        self.point = QComboBox(dialog)
        self.point.setEditable(True)
        self.point.addItems(list(dialog.model.points))
        self.point.setCurrentText(text)
        self.point.lineEdit().setObjectName(f"{label}_point")
        self.joint = QComboBox(dialog)
        self.joint.setObjectName(f"{label}_joint")
        self.point.currentTextChanged.connect(self.offer_joints)
        self.offer_joints()

    def resolve(self, model, made):
        """(point name, new Point or None) for the text; ``made``: points this step already makes."""
        text = self.point.currentText().strip()
        if text in model.points:
            return text, None
        xyz = parse_point(text, self.dialog.units, self.label)
        for name, p in [*model.points.items(), *((p.name, p) for p in made)]:
            if np.allclose(p.position, xyz, rtol=0.0, atol=1e-12):
                return name, None
        name = unique_name(model, "point", {p.name for p in made})
        return name, solver.Point(name=name, position=xyz)

    def existing_point(self):
        try:
            return self.resolve(self.dialog.model, [])[0]
        except solver.ModelError:
            return None

    def offer_joints(self, *_):
        point = self.existing_point()
        links = links_at(self.dialog.model, point) if point else []
        kind = self.dialog.joint_type.currentText()
        self.joint.clear()
        self.joint.addItem(NO_JOINT, None)
        self.joint.addItem(f"{kind} {TO_GROUND}", solver.GROUND)
        for name in links:
            self.joint.addItem(f"{kind} to '{name}'", name)
        # the last link on the point; else ground at the start, no joint at the end
        self.joint.setCurrentIndex(len(links) + 1 if links else (1 if self.label == "start" else 0))

    def joined_body(self):
        """ground, a link's name, or None for no joint."""
        return self.joint.currentData()


class LinkDialog(ToolDialog):
    """The form (shown with ``show()``: the window stays usable, a design point selected there fills
    the end last typed in); OK adds the link or says why not."""

    last_section: dict = {}        # the section used last (offered next)

    def __init__(self, document, parent=None):
        super().__init__(document, "Add link", parent)
        self.units = UnitSystem.of(self.model.settings)
        form = QFormLayout(self)
        self.joint_type = QComboBox(self)
        self.joint_type.addItems(list(solver.JOINT_KINDS))
        self.joint_type.setCurrentText("revolute")
        links = [b for b in self.model.bodies.values() if isinstance(b, solver.Link)]
        start = links[-1].point_j if links else "0, 0, 0"
        self.ends = {"start": _End(self, "start", start), "end": _End(self, "end", "")}
        for label, end in self.ends.items():
            row = QHBoxLayout()
            row.addWidget(end.point, 2)
            row.addWidget(end.joint, 2)
            form.addRow(label, row)
        self.joint_type.currentTextChanged.connect(lambda *_: [e.offer_joints() for e in self.ends.values()])
        self.axis = make_editor(solver.Joint.field("axis"), parent=self, units=self.units)
        self.axis.set_value([0.0, 0.0, 1.0])
        joint_row = QHBoxLayout()
        joint_row.addWidget(self.joint_type)
        joint_row.addWidget(QLabel("axis", self))
        joint_row.addWidget(self.axis, 1)
        form.addRow("joints", joint_row)
        self.section = {}
        for name in SECTION_FIELDS:
            field = solver.Link.field(name)
            editor = make_editor(field, parent=self, units=self.units)
            editor.set_value(self.last_section.get(name, field.default_value()))
            self.section[name] = editor
            form.addRow(name, editor)
        self.targets = {label: (end.point, end.point.lineEdit()) for label, end in self.ends.items()}
        self.target = "end"               # the end a design point selected in the window fills
        self.finish_form(form, "linkMessage")

    def picked(self, name):
        if name in self.model.points:
            self.ends[self.target].point.setCurrentText(name)

    def showEvent(self, event):  # noqa: N802  (Qt API name)
        """Shown: the end's point has the keyboard (the start is usually the last link's end)."""
        super().showEvent(event)
        self.activateWindow()
        self.ends["end"].point.setFocus()

    def elements(self) -> list:
        """The new points, the link and its joints; raises solver.ModelError naming the field."""
        model, made = self.model, []
        points = {}
        for label, end in self.ends.items():
            name, new = end.resolve(model, made)
            points[label] = name
            made += [new] * (new is not None)
        section = {name: editor.value() for name, editor in self.section.items()}
        link = solver.Link(name=unique_name(model, "link"), point_i=points["start"], point_j=points["end"],
                           color=list(PALETTE[len(model.bodies) % len(PALETTE)]), **section)
        joints, kind = [], self.joint_type.currentText()
        for label, end in self.ends.items():
            other = end.joined_body()
            if other is not None:
                name = unique_name(model, kind, {j.name for j in joints})
                joints.append(solver.Joint(name=name, type=kind, body_i=other, body_j=link.name,
                                           at_point=points[label], axis=self.axis.value()))
        return [*made, link, *joints]

    def accept(self):
        try:
            elements = self.elements()
            link = next(e for e in elements if isinstance(e, solver.Link))
            self.document.push(commands.AddElements(self.model, elements, f"Add link '{link.name}'"))
        except solver.ModelError as exc:
            self.message.setText("\n".join(exc.problems))
            return
        LinkDialog.last_section = {name: editor.value() for name, editor in self.section.items()}
        self.added = link.name
        super().accept()
        self.document.select(link.name)
