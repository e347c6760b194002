"""Model edits the user starts from menus, the toolbar or the tree: add, duplicate, copy and paste,
rename, delete and move elements.  Each becomes one undoable command on the document's stack; a refusal by the
model is reported through ``failed(title, problems)`` and changes nothing.
"""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import QObject, Signal

import solver

from . import commands, dialogs, factory
from .document import Document
from .log_panel import LOGGER
from .orientation import quat_from_axis_angle
from .simulation import quaternion_matrix
from .viewport.transforms import frame_from_axis

LIMIT_ROTATION = np.pi / 2     # rad: Add Limit's stops on a rotation, ±
LIMIT_TRANSLATION = 0.1        # m: Add Limit's stops on a translation, ±


class Editing(QObject):
    """Signals: ``failed(title, problems)`` when the model refuses an edit."""

    failed = Signal(str, list)

    def __init__(self, document: Document, parent_widget=None):
        super().__init__(parent_widget)
        self.document = document
        self.parent_widget = parent_widget
        self.clipboard = None   # the element copy() keeps for paste() (kept across New/Open)

    # ---- public API ---------------------------------------------------------------------------
    def add_body(self) -> str:
        return self._add(lambda m, s: factory.new_body(m), "Add body")

    def add_joint(self, joint_type: str, body: str = "") -> str:
        """A joint from ground to ``body`` (else the selected body) at its CM (:func:`app.factory.new_joint`)."""
        return self._add(lambda m, s: factory.new_joint(m, joint_type, body or s), f"Add {joint_type} joint")

    def add_joint_at(self, joint_type: str, body_i: str, body_j: str, origin, axis, origin2=None,
                     at_point: str = "") -> str:
        """A joint of ``joint_type`` between two bodies (or a body and ground) at a global
        ``origin`` with a global ``axis`` (``origin2``: the second point of a link; ``at_point``: a
        design point the origin follows) — as placed by picking in the viewport; one undoable step."""
        def make(model, _selected):
            options = {} if origin2 is None else {"origin2": [float(c) for c in origin2]}
            if at_point:
                options["at_point"] = at_point
            if "axis2" in solver.JOINT_KINDS[joint_type].fields:   # the second axis perpendicular to the first
                options["axis2"] = frame_from_axis(axis)[:, 0].tolist()
            return solver.Joint(name=factory.unique_name(model, joint_type), type=joint_type, body_i=body_i,
                                body_j=body_j, origin=[float(c) for c in origin],
                                axis=[float(c) for c in axis], **options)
        return self._add(make, f"Add {joint_type} joint")

    def add_force(self, kind: str) -> str:
        return self._add(lambda m, s: factory.new_force(m, kind, s), f"Add {solver.FORCE_CLASSES[kind].LABEL.lower()}")

    def add_coupler(self) -> str:
        return self._add(lambda m, s: factory.new_element(m, solver.Coupler, s), "Add coupler")

    def add_driver(self) -> str:
        return self._add(lambda m, s: factory.new_driver(m, s), "Add driver")

    def add_point(self) -> str:
        return self._add(lambda m, s: factory.new_point(m, s), "Add design point")

    def add_marker(self) -> str:
        return self._add(lambda m, s: factory.new_marker(m, s), "Add marker")

    def add_flexible_beam(self) -> str:
        """Ask for a flexible beam (:func:`app.dialogs.ask_flexible_beam`; first suggested 1 m along x
        from the selected body's position, else from the origin) and add it as one undoable step."""
        model = self.document.model
        selected = model.element(self.document.selection) if self.document.selection in model else None
        start = np.asarray(selected.values["position"] if selected is not None and selected.KIND == "body"
                           else (0.0, 0.0, 0.0), float)
        values = dialogs.ask_flexible_beam(self.parent_widget, {"start": start.tolist(),
                                                                "end": (start + (1.0, 0.0, 0.0)).tolist()})
        if values is None:
            return ""
        return self._add(lambda m, s: solver.FlexibleBody(name=factory.unique_name(m, "beam"), **values),
                         "Add flexible beam")

    def add_limit(self, name: str = "") -> bool:
        """Model ▸ Add Limit: stops on joint ``name`` (else the selected one) — the limits it lacks set to
        ±LIMIT_ROTATION rad (a coordinate limited in rotation) or ±LIMIT_TRANSLATION m, ``stops`` on —
        as one undo step, and select the joint (the property editor shows the fields).  A selection
        that is not a joint of a kind with stops, or a joint whose stops already act, is refused
        through ``failed`` with the reason (:func:`limit_refusal`)."""
        model = self.document.model
        name = name or self.document.selection
        reason = limit_refusal(model, name)
        if reason:
            self.failed.emit("Add limit", [reason])
            return False
        joint = model.joints[name]
        coordinate = joint.coordinates()[0] if joint.limit_coordinate == "default" else joint.limit_coordinate
        bound = LIMIT_ROTATION if coordinate == "rotation" else LIMIT_TRANSLATION
        # a one-sided joint keeps its limit; the other one lies beyond it
        lower = joint.lower_limit if joint.lower_limit is not None else min(-bound, (joint.upper_limit or 0.0) - bound)
        upper = joint.upper_limit if joint.upper_limit is not None else max(bound, lower + bound)
        changes = [(name, f, v) for f, v in (("lower_limit", lower), ("upper_limit", upper))
                   if joint.values[f] is None] + ([(name, "stops", True)] if not joint.stops else [])
        self.document.select(name)
        return self._run(commands.SetFields(model, changes, f"Add limit to '{name}'"), "Add limit")

    def duplicate(self, name: str = "") -> str:
        name = name or self.document.selection
        if name not in self.document.model:
            return ""
        return self._add(lambda m, s: factory.duplicate(m, name), f"Duplicate '{name}'")

    def copy(self, name: str = "") -> bool:
        """Keep copies of elements (``name``, else the selected ones) for :meth:`paste`."""
        model = self.document.model
        names = [name] if name else self.document.selected
        names = [n for n in names if n in model]
        if not names:
            return False
        self.clipboard = [model.element(n).copy() for n in names]
        LOGGER.info("Copied %s", ", ".join(f"'{n}'" for n in names))
        return True

    def paste(self) -> str:
        """Add the copied elements under new names (bodies 0.1 m along x from the last ones pasted;
        references among them follow: a copied joint of a copied body joins the body's copy), one
        undo step, and select them; the name of the last ("" with a message when nothing is copied
        or the model refuses them, e.g. a joint whose bodies this model does not have)."""
        if not self.clipboard:
            self.failed.emit("Paste", ["nothing copied: select an element and press Ctrl+C first"])
            return ""
        model, originals = self.document.model, self.clipboard
        title = f"Paste '{originals[0].name}'" if len(originals) == 1 else f"Paste {len(originals)} elements"
        try:
            copies = factory.copies_of(model, originals)
            text = (f"Add {copies[0].KIND.replace('_', ' ')} '{copies[0].name}'" if len(copies) == 1
                    else f"Paste {', '.join(c.name for c in copies)}")
            self.document.push(commands.AddElements(model, copies, text))
        except solver.ModelError as exc:
            self.failed.emit(title, exc.details)
            return ""
        LOGGER.info("%s: %s", title, ", ".join(c.name for c in copies))
        self.document.select_many([c.name for c in copies])
        self.clipboard = [c.copy() for c in copies]
        return copies[-1].name

    def rename(self, old: str, new: str) -> bool:
        if new.strip() == old:
            return True
        return self._run(commands.RenameElement(self.document.model, old, new), f"Rename '{old}'")

    def delete(self, name: str = "") -> bool:
        """Delete an element (``name``, else the selected ones); if others depend on them, ask first,
        then delete those in the same step."""
        model = self.document.model
        names = [n for n in ([name] if name else self.document.selected) if n in model]
        if not names:
            return False
        dependents = list(dict.fromkeys(d for n in names for d in model.dependents(n) if d not in names))
        label = "', '".join(names)       # shown as 'b2', 'b3'
        if dependents and not dialogs.confirm_delete(self.parent_widget, label, dependents):
            return False
        return self._run(commands.RemoveElement(model, names), f"Delete '{label}'")

    def move(self, offset, name: str = "") -> bool:
        """Translate an element's global points (its kind's ``location_fields()``: a body's position,
        a joint's origin, a spring's two points...) by ``offset``."""
        name = name or self.document.selection
        model = self.document.model
        if name not in model:
            return False
        element = model.element(name)
        changes = []
        for field in element.location_fields():
            value = element.values[field]
            if value is not None:
                changes.append((name, field, (np.asarray(value) + np.asarray(offset, float)).tolist()))
        if not changes:
            self.failed.emit("Move", [f"{element.KIND} '{name}' has no position to move"])
            return False
        return self._run(commands.SetFields(model, changes, f"Move '{name}'"), f"Move '{name}'")

    def rotate(self, axis, angle: float, pivot=None, name: str = "") -> bool:
        """Rotate a body by ``angle`` (rad) about ``axis`` (global) through ``pivot`` (global;
        None = the body's CM), one undo step: r' = p + R (r − p), A' = R A with the axis–angle
        R = exp(angle [n]×) (Rodrigues).  The body's markers and joints stay where they are (as with Move)."""
        name = name or self.document.selection
        model = self.document.model
        if name not in model.bodies:
            self.failed.emit("Rotate", [f"'{name}' is not a body: only bodies can be rotated"])
            return False
        try:
            R = quaternion_matrix(quat_from_axis_angle(axis, angle))
        except ValueError as exc:
            self.failed.emit("Rotate", [f"axis: {exc}"])
            return False
        body = model.bodies[name]
        r = np.asarray(body.position, float)
        p = r if pivot is None else np.asarray(pivot, float)
        changes = [(name, "position", (p + R @ (r - p)).tolist()),
                   (name, "orientation", (R @ quaternion_matrix(body.orientation)).tolist())]
        return self._run(commands.SetFields(model, changes, f"Rotate '{name}'"), f"Rotate '{name}'")

    # ---- helpers ------------------------------------------------------------------------------
    def _add(self, make, title) -> str:
        model = self.document.model
        try:
            element = make(model, self.document.selection)
            self.document.push(commands.AddElement(model, element))
        except solver.ModelError as exc:
            self.failed.emit(title, exc.details)
            return ""
        LOGGER.info("%s: %s", title, element.name)
        self.document.select(element.name)
        return element.name

    def _run(self, command, title) -> bool:
        try:
            self.document.push(command)
        except solver.ModelError as exc:
            self.failed.emit(title, exc.details)
            return False
        LOGGER.info("%s", command.text())
        return True


def limited_kinds() -> list[str]:
    """The joint kinds with stops: ``"lower_limit"`` among their ``solver.JOINT_KINDS`` fields (revolute,
    prismatic, cylindrical)."""
    return [k for k, kind in solver.JOINT_KINDS.items() if "lower_limit" in kind.fields]


def limit_refusal(model, name: str) -> str:
    """Why Model ▸ Add Limit cannot add stops to element ``name`` ("" when it can): it must be a joint
    of a kind with stops (:func:`limited_kinds`) whose stops do not act yet."""
    kinds = ", ".join(limited_kinds())
    if name not in model.joints:
        return f"select a joint to limit ({kinds})"
    joint = model.joints[name]
    if "lower_limit" not in joint.kind.fields:
        return f"a {joint.type} joint has no limits (only {kinds} joints have stops)"
    if joint.stops and joint.lower_limit is not None and joint.upper_limit is not None:
        return f"joint '{name}' has its limits already: edit lower_limit and upper_limit in its properties"
    return ""


def pivot_points(model, name: str) -> dict:
    """{label: global point} a rotation of body ``name`` may pivot about: its CM first, then every
    marker's position and every joint's origin."""
    points = {f"CM of {name}": list(model.bodies[name].position)}
    points.update({f"marker {m}": list(e.position) for m, e in model.markers.items()})
    points.update({f"joint {j}": list(e.origin) for j, e in model.joints.items()})
    return points
