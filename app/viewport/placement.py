"""Joint placement by picking in the viewport (Model ▸ Add Joint ▸ <type>; Ctrl+J for a revolute).

An interaction mode of :class:`~app.viewport.viewport.Viewport`: the status bar prompts, each click
answers one prompt with a :class:`~app.viewport.picking.Pick` —

1. "pick the first body" (a body, not ground): body_i, the base,
2. "pick the second body (or empty space for ground)": body_j, which the joint's coordinates (and
   a driver's positive sense) measure relative to body_i,
3. "pick the joint origin" (a surface point, snapped to a feature within a few pixels; a design
   point snapped to becomes the joint's ``at_point``: the origin then follows the point),
4. for distance and revolute–spherical links, "pick the point on the second body".

While the mode is on, the prompt names what a click would pick (the snapped feature, else the
body under the cursor).  The joint's axis is the picked feature's axis when it has one (a cylinder's end centre), else the
view direction (perpendicular to the screen, towards the viewer).  The joint is then added as one
undoable command (:meth:`app.editing.Editing.add_joint_at`); Esc (:meth:`cancel`) leaves the mode
without changing the model.  Enter (:meth:`type_in`) leaves it by adding the joint without picking
(:meth:`app.editing.Editing.add_joint`: at the CM of the first picked body, else of the selected
one, from ground) and selects it, so its coordinates are typed in the property editor.
"""
from __future__ import annotations

from PySide6.QtCore import QObject, Signal

import solver

from .picking import Pick, view_axis

FIRST_BODY = ("pick the first body = body_i, the base (the joint's coordinates, and a driver's positive sense, "
              "are those of the second body relative to it)")

class JointPlacement(QObject):
    """Signals: ``prompt(text)`` — what to pick next ("" when the mode ends); ``active_changed(bool)``."""

    prompt = Signal(str)
    active_changed = Signal(bool)

    def __init__(self, viewport, editing, parent=None):
        super().__init__(parent)
        self.viewport = viewport
        self.editing = editing
        self.joint_type = ""
        self.picked: dict = {}
        self._text = ""
        viewport.hovered.connect(self._on_hover)

    @property
    def active(self) -> bool:
        return bool(self.joint_type)

    def start(self, joint_type: str) -> bool:
        """Enter the mode for a joint of ``joint_type`` (the model needs a body first)."""
        if not self.viewport.document.model.bodies:
            self.editing.failed.emit(f"Add {joint_type} joint", [f"add a body before adding a {joint_type} joint"])
            return False
        self.joint_type, self.picked = joint_type, {}
        self.viewport.set_mode(self)
        self.active_changed.emit(True)
        self._ask(FIRST_BODY)
        return True

    def cancel(self):
        """Leave the mode; the model is unchanged."""
        if self.active:
            self._end()

    def type_in(self) -> str:
        """Leave the mode by adding the joint at once, to be placed by typing its coordinates in the
        property editor; the joint's name ("" when the model refuses it, with a message)."""
        if not self.active:
            return ""
        joint_type, body = self.joint_type, self.picked.get("body_i", "")
        self._end()
        return self.editing.add_joint(joint_type, body)

    def clicked(self, pick: Pick):
        """One answer to the current prompt."""
        step = self._step()
        if step == "body_i":
            if pick.body in ("", solver.GROUND):
                return self._ask(f"{FIRST_BODY} (a body, not ground)")
            self.picked["body_i"] = pick.body
            return self._ask(f"pick the second body (or empty space for ground) = body_j, moving relative to "
                             f"{pick.body}")
        if step == "body_j":
            body = pick.body or solver.GROUND
            if body == self.picked["body_i"]:
                return self._ask(f"pick a body other than {body} (or empty space for ground)")
            self.picked["body_j"] = body
            return self._ask("pick the joint origin")
        if pick.point is None:
            return self._ask("pick a point on a body or a feature (snapped within a few pixels)")
        self.picked[step] = pick.point
        if step == "origin":
            self.picked["axis"] = pick.feature.axis if pick.feature is not None and pick.feature.axis \
                else view_axis(self.viewport.renderer)
            self.picked["at_point"] = pick.feature.element if pick.feature is not None and pick.feature.kind == "point" \
                else ""
        if self._step() == "origin2":
            return self._ask("pick the point on the second body")
        p, joint_type = self.picked, self.joint_type
        self._end()
        self.editing.add_joint_at(joint_type, p["body_i"], p["body_j"], p["origin"], p["axis"], p.get("origin2"),
                                  at_point=p["at_point"])

    # ---- helpers --------------------------------------------------------------------------------
    def _step(self) -> str:
        """The next thing to pick ("" when everything is picked)."""
        steps = ["body_i", "body_j", "origin"] + (["origin2"] if solver.JOINT_KINDS[self.joint_type].second_point else [])
        return next((s for s in steps if s not in self.picked), "")

    def _ask(self, text):
        self._text = (f"Add {self.joint_type.replace('_', '-')} joint: {text} "
                      "(Enter: add it and type the coordinates instead; Esc cancels)")
        self.prompt.emit(self._text)

    def _on_hover(self, pick: Pick):
        """The prompt names what a click here would pick: the snapped feature, else the body."""
        if self.active:
            under = pick.feature.label() if pick.feature is not None else pick.body
            self.prompt.emit(f"{self._text} — {under}" if under else self._text)

    def _end(self):
        self.joint_type, self.picked = "", {}
        self.viewport.set_mode(None)
        self.active_changed.emit(False)
        self.prompt.emit("")
