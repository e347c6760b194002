"""The 3D viewport widget: the VTK view of the document's model.

Mouse: left-drag rotates, middle-drag (or Shift+left) pans, wheel or right-drag zooms, a left click
without dragging picks the body, joint or force element under the cursor and selects it in the
document (the tree follows); Ctrl+click adds it to the selection or takes it out.  The element under the cursor is tinted and a feature within a few
pixels (:mod:`app.viewport.picking`) is marked by a small ball.  A left drag that starts on the
selected element — one whose kind has global points, its ``location_fields()``: a body, marker,
joint, spring, force… — moves it in the view plane (``moved(name, offset)`` on release; the caller
makes it one undoable Move).  While an interaction mode is set (:meth:`Viewport.set_mode`, e.g. joint
placement) clicks go to the mode as :class:`~app.viewport.picking.Pick` s instead of selecting.  Camera helpers: fit all, standard views (iso, front, top, side),
perspective/parallel projection.  :meth:`Viewport.set_body_poses` moves the bodies (animation).
"""
from __future__ import annotations

import os

import numpy as np
from PySide6.QtCore import QPoint, QTimer, Signal
from PySide6.QtWidgets import QVBoxLayout, QWidget
from vtkmodules.vtkInteractionStyle import vtkInteractorStyleTrackballCamera
from vtkmodules.vtkInteractionWidgets import vtkOrientationMarkerWidget
from vtkmodules.vtkRenderingAnnotation import vtkAxesActor
from vtkmodules.vtkRenderingCore import vtkCellPicker, vtkRenderer

from ..document import Document
from .picking import SNAP_PIXELS, Pick
from .render_window import create_vtk_widget, render_to_array
from .scene import Scene

VIEWS = ("iso", "front", "top", "side")
MULTISAMPLES = 4  # anti-aliasing of still images; off while animating (4× costs ~4× per frame on llvmpipe)
_CLICK_TOLERANCE = 4  # pixels the mouse may move between press and release of a click
_DRAG_PRIORITY = 1.0  # drag observers run before the camera style (priority 0) and can stop it


class Viewport(QWidget):
    """Signals: ``picked(name)`` after a click picked an element ("" for empty space), preceded by
    ``picked_part(name, part)`` when it picked a part of one (a contact group's arrow:
    :meth:`Scene.pick_of`);
    ``pause_requested()`` before a click while animating is picked (the player pauses, so the
    separate actors are pickable at the frame shown); ``moved(name, offset)`` after the selected
    element was dragged by ``offset`` (3,) in the view plane; ``hovered(Pick)`` when what is
    under the cursor changes."""

    picked = Signal(str)
    picked_part = Signal(str, object)
    pause_requested = Signal()
    moved = Signal(str, object)
    hovered = Signal(object)

    def __init__(self, document: Document, parent=None):
        super().__init__(parent)
        self.document = document
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.vtk_widget = create_vtk_widget(self)
        layout.addWidget(self.vtk_widget)
        self.renderer = vtkRenderer()
        self.renderer.GradientBackgroundOn()
        self.renderer.SetBackground(0.72, 0.77, 0.85)
        self.renderer.SetBackground2(0.95, 0.96, 0.98)
        self.render_window = self.vtk_widget.GetRenderWindow()
        self.render_window.AddRenderer(self.renderer)
        self.render_window.SetMultiSamples(MULTISAMPLES)
        self.interactor = self.render_window.GetInteractor()
        self.interactor.SetInteractorStyle(vtkInteractorStyleTrackballCamera())
        for event, callback in (("LeftButtonPressEvent", self._on_press),
                                ("LeftButtonReleaseEvent", self._on_release)):
            # Passive: still called while the camera style has grabbed the mouse focus.
            tag = self.interactor.AddObserver(event, callback)
            self.interactor.GetCommand(tag).SetPassiveObserver(True)
        self._drag_tags = {event: self.interactor.AddObserver(event, callback, _DRAG_PRIORITY)
                           for event, callback in (("LeftButtonPressEvent", self._on_drag_press),
                                                   ("MouseMoveEvent", self._on_mouse_move),
                                                   ("LeftButtonReleaseEvent", self._on_drag_release))}
        self._press = None
        self._drag = None            # (element, grab point, its display depth, offset so far)
        self._hover = Pick("", "", None, None)
        self.mode = None             # an interaction mode: clicked(Pick) gets the clicks
        self.grabber = None          # Interact: grab(body, point) → bool, pull(target), release()
        self._pull_depth = None      # display depth of the grabbed point while a body is pulled
        self._render_pending = False
        self._rebuild_pending = False
        self._closed = False
        self._animating = False
        self._followed = ""          # body the camera follows ("" = none)
        self._added_bodies = []      # bodies added since the last check that they are in view
        self._follow_anchor = None   # its CM when the camera was last moved with it
        self.picker = vtkCellPicker()
        self.picker.SetTolerance(0.002)
        self.overlay = vtkRenderer()         # drawn over the model, same camera: the contact arrows
        self.overlay.SetLayer(1)
        self.overlay.InteractiveOff()
        self.overlay.SetActiveCamera(self.renderer.GetActiveCamera())
        self.render_window.SetNumberOfLayers(max(self.render_window.GetNumberOfLayers(), 2))
        self.render_window.AddRenderer(self.overlay)
        self.scene = Scene(self.renderer)
        self.vtk_widget.Initialize()
        self.triad = vtkOrientationMarkerWidget()
        self.triad.SetOrientationMarker(vtkAxesActor())
        self.triad.SetInteractor(self.interactor)
        self.triad.SetViewport(0.0, 0.0, 0.16, 0.22)
        self.triad.SetEnabled(True)
        self.triad.InteractiveOff()
        self.picked.connect(document.select)
        document.model_replaced.connect(self._on_model_replaced)
        document.model_event.connect(self._on_model_event)
        document.selection_changed.connect(self._on_selection)
        document.selected_changed.connect(self._on_selection)
        self._on_model_replaced()

    # ---- public API ---------------------------------------------------------------------------
    def render(self):
        """Render now."""
        self._render_pending = False
        self.render_window.Render()

    def request_render(self):
        """Render once control returns to the event loop (many changes, one render)."""
        if not self._render_pending:
            self._render_pending = True
            QTimer.singleShot(0, self._deferred_render)

    def request_rebuild(self):
        """Rebuild the scene once control returns to the event loop (or at the next :meth:`flush`)."""
        if not self._rebuild_pending:
            self._rebuild_pending = True
            self.request_render()

    def flush(self):
        """Apply a pending rebuild now (the public queries call this first)."""
        if self._rebuild_pending:
            fit = not self.scene.items
            self.rebuild()
            if fit and self.scene.items:
                self.fit_all()

    def actor(self, name: str):
        """The VTK actor drawing element ``name`` (None if it has none)."""
        self.flush()
        return self.scene.actor(name)

    def rebuild(self):
        """Rebuild the scene from the model now (keeps the camera)."""
        self._rebuild_pending = False
        folder = os.path.dirname(self.document.path) if self.document.path else ""
        self.scene.build(self.document.model, folder)
        self.scene.highlight(self.document.selected)
        self.scene.set_animating(self._animating)
        self._follow_anchor = self._body_position(self._followed)   # the scene is back at its initial poses
        self.renderer.ResetCameraClippingRange()
        self.request_render()

    def fit_all(self):
        self.flush()
        self.renderer.ResetCamera(self.scene.model_bounds())
        self.request_render()

    def set_view(self, name: str):
        """Standard view: 'iso', 'front', 'top' or 'side' (relative to gravity's up direction)."""
        up, front, side = self._view_axes()
        direction, view_up = {"iso": (front + side + up, up), "front": (front, up), "top": (up, -front),
                              "side": (side, up)}[name]
        camera = self.renderer.GetActiveCamera()
        focal = np.array(camera.GetFocalPoint())
        camera.SetPosition(*(focal + direction / np.linalg.norm(direction)))
        camera.SetViewUp(*view_up)
        self.fit_all()

    def set_parallel(self, parallel: bool):
        """Parallel (orthographic) or perspective projection."""
        self.renderer.GetActiveCamera().SetParallelProjection(parallel)
        self.fit_all()

    def set_show_frames(self, show: bool):
        self.scene.set_show_frames(show)
        self.request_render()

    def set_body_poses(self, poses: dict, render: bool = True, beams=None, scale: float = 1.0):
        """Move bodies: ``{body name: (position (3,), rotation (3, 3))}`` in global coordinates, and
        deform flexible ``beams`` (see :meth:`Scene.set_beams`, ``scale`` = deformation scale factor);
        render now (animation frames) or, with ``render=False``, at the next event-loop turn."""
        self.flush()
        self.scene.set_body_poses(poses)
        if beams:
            self.scene.set_beams(beams, scale)
        self._follow_camera()
        self.renderer.ResetCameraClippingRange(self.scene.clipping_bounds())
        if render:
            self.render()
        else:
            self.request_render()

    def set_animating(self, animating: bool):
        """Fast frames while animating (one merged mesh, no multisampling); full quality and
        pickable actors again when it stops."""
        self.flush()
        self._animating = bool(animating)
        self.scene.set_animating(animating)
        samples = 0 if animating else MULTISAMPLES
        if self.render_window.GetMultiSamples() != samples:
            self.render_window.SetMultiSamples(samples)
        if not animating:
            self.request_render()

    def reset_poses(self):
        self.scene.reset_poses()
        self._follow_camera()
        self.request_render()

    def follow(self, body: str):
        """Move the camera with ``body``'s CM (the view direction and distance stay); "" = stop.
        The camera first centres on the body where it is now, so a body already out of view comes
        back into it."""
        self._followed = body or ""
        position = self._body_position(self._followed)
        if position is not None:
            camera = self.renderer.GetActiveCamera()
            shift = position - np.array(camera.GetFocalPoint())
            camera.SetFocalPoint(*position)
            camera.SetPosition(*(np.array(camera.GetPosition()) + shift))
            self.renderer.ResetCameraClippingRange(self.scene.clipping_bounds())
            self.request_render()
        self._follow_anchor = position

    @property
    def followed(self) -> str:
        return self._followed

    def pick(self, x: int, y: int) -> Pick:
        """What is under widget pixel (x, y) (Qt coordinates, origin top left): the element and
        body hit, the surface point hit, snapped to the nearest feature within ``SNAP_PIXELS``."""
        self.flush()
        return self._pick_display(*self._to_vtk(x, y))

    def set_grabber(self, grabber):
        """Interact mode: a left press on a body calls ``grabber.grab(body, point)`` (True: it is
        grabbed), each mouse move ``grabber.pull(target)`` — the mouse ray's point in the plane
        through the grab point facing the camera — and the release ``grabber.release()``; the camera
        does not see those presses.  None: back to selecting and dragging elements."""
        self.grabber = grabber
        self._pull_depth = None

    def set_mode(self, mode):
        """Send clicks to ``mode.clicked(pick)`` instead of selecting (None: back to selecting)."""
        self.mode = mode

    def project(self, point) -> QPoint:
        """Widget pixel (Qt coordinates) where the world ``point`` appears."""
        self.flush()
        self.renderer.SetWorldPoint(*point, 1.0)
        self.renderer.WorldToDisplay()
        dx, dy, _ = self.renderer.GetDisplayPoint()
        scale = self._pixel_ratio()
        return QPoint(int(round(dx / scale)), int(round(self.vtk_widget.height() - 1 - dy / scale)))

    def grab_array(self) -> np.ndarray:
        """The rendered image as an (h, w, 3) uint8 array, top row first."""
        self.flush()
        return render_to_array(self.render_window)

    def shutdown(self):
        """Release the VTK objects (call before the window is destroyed)."""
        self._closed = True
        self.triad.SetEnabled(False)
        self.scene.clear()
        self.render_window.Finalize()
        self.vtk_widget.close()

    # ---- helpers ------------------------------------------------------------------------------
    def _body_position(self, body):
        pose = self.scene.current.get(body) if body else None
        return None if pose is None else np.array(pose[:3, 3], float)

    def _follow_camera(self):
        """Shift camera position and focal point by the followed body's displacement since the last
        frame."""
        position = self._body_position(self._followed)
        if position is None or self._follow_anchor is None:
            return
        shift = position - self._follow_anchor
        if shift.any():
            camera = self.renderer.GetActiveCamera()
            camera.SetFocalPoint(*(np.array(camera.GetFocalPoint()) + shift))
            camera.SetPosition(*(np.array(camera.GetPosition()) + shift))
            self._follow_anchor = position

    def _view_axes(self):
        g = np.asarray(self.document.model.gravity, float)
        up = -g / np.linalg.norm(g) if np.linalg.norm(g) > 0 else np.array([0.0, 1.0, 0.0])
        front = np.array([0.0, 0.0, 1.0]) if abs(up[2]) < 0.9 else np.array([0.0, -1.0, 0.0])
        front = front - (front @ up) * up
        front /= np.linalg.norm(front)
        return up, front, np.cross(up, front)

    def _pixel_ratio(self):
        return self.vtk_widget._getPixelRatio()

    def _to_vtk(self, x, y):
        scale = self._pixel_ratio()
        return int(round(x * scale)), int(round((self.vtk_widget.height() - y - 1) * scale))

    def _pick_display(self, x, y) -> Pick:
        """:meth:`pick` at VTK display pixel (x, y) (origin bottom left)."""
        hit = self.picker.Pick(x, y, 0.0, self.overlay) or self.picker.Pick(x, y, 0.0, self.renderer)
        element, part = self.scene.pick_of(self.picker.GetViewProp(), self.picker.GetCellId()) if hit else ("", ())
        point = tuple(map(float, self.picker.GetPickPosition())) if element else None
        feature = self.scene.snapper.nearest(self.renderer, (x, y), SNAP_PIXELS * self._pixel_ratio(),
                                             self.scene.motion())
        if feature is not None:
            point = feature.point
            if not element:
                element = feature.element
        body = self.scene.body_of(element) if element else ""
        return Pick(element, body, point, feature, part)

    def _display_depth(self, point) -> float:
        self.renderer.SetWorldPoint(*point, 1.0)
        self.renderer.WorldToDisplay()
        return self.renderer.GetDisplayPoint()[2]

    def _display_to_world(self, x, y, depth) -> np.ndarray:
        self.renderer.SetDisplayPoint(float(x), float(y), depth)
        self.renderer.DisplayToWorld()
        w = np.array(self.renderer.GetWorldPoint(), float)
        return w[:3] / w[3]

    def _on_press(self, *_):
        self._press = self.interactor.GetEventPosition()

    def _on_release(self, *_):
        if self._press is None:
            return
        x, y = self.interactor.GetEventPosition()
        moved = abs(x - self._press[0]) + abs(y - self._press[1])
        self._press = None
        if moved <= _CLICK_TOLERANCE:
            if self._animating:
                self.pause_requested.emit()
            self.flush()
            pick = self._pick_display(x, y)
            if self.mode is not None:
                self.mode.clicked(pick)
            else:   # a design point snapped to is selected rather than the joint glyph drawn around it
                element = pick.feature.element if pick.feature is not None and pick.feature.kind == "point" \
                    else pick.element
                if self.interactor.GetControlKey() and element:
                    self.document.toggle(element)
                else:
                    if pick.part and element == pick.element:
                        self.picked_part.emit(element, pick.part)
                    self.picked.emit(element)

    def _abort(self, event):
        self.interactor.GetCommand(self._drag_tags[event]).SetAbortFlag(1)

    def _on_drag_press(self, *_):
        """Start dragging when the press is on the selected element (of a kind with global points),
        or on its snapped
        feature (a marker inside a body: its origin) — the camera style does not see the press
        then, so it does not rotate."""
        if self.grabber is not None:
            self._grab_press()
            return
        selected = self.document.selection
        if self._animating or self.mode is not None or selected not in self.document.model:
            return
        element = self.document.model.element(selected)
        if all(element.values[f] is None for f in element.location_fields()):    # nothing Move could move
            return
        self.flush()
        x, y = self.interactor.GetEventPosition()
        pick = self._pick_display(x, y)
        if selected not in (pick.element, pick.feature.element if pick.feature is not None else ""):
            return
        if pick.feature is not None and pick.feature.kind == "point" and pick.feature.element != selected:
            return       # a design point there: the click selects it (a joint on it follows it anyway)
        grab = np.array(pick.point, float)
        self._drag = (selected, grab, self._display_depth(grab), np.zeros(3), (x, y))
        self._press = None
        self._abort("LeftButtonPressEvent")

    def _grab_press(self):
        self.flush()
        x, y = self.interactor.GetEventPosition()
        pick = self._pick_display(x, y)
        if pick.point is not None and self.grabber.grab(pick.body, np.array(pick.point, float)):
            self._pull_depth = self._display_depth(pick.point)
            self._press = None
            self._abort("LeftButtonPressEvent")

    def _on_mouse_move(self, *_):
        x, y = self.interactor.GetEventPosition()
        if self._pull_depth is not None:
            self.grabber.pull(self._display_to_world(x, y, self._pull_depth))
            self._abort("MouseMoveEvent")
            return
        if self._drag is not None:
            name, grab, depth, _, start = self._drag
            offset = self._display_to_world(x, y, depth) - grab
            self._drag = (name, grab, depth, offset, start)
            self._preview_drag(name, offset)
            self._abort("MouseMoveEvent")
            return
        if self._animating or self._press is not None:
            return
        self.flush()
        pick = self._pick_display(x, y)
        if (pick.element, pick.feature) != (self._hover.element, self._hover.feature):
            self._hover = pick
            self.scene.hover(pick.element)
            self.scene.show_snap(pick.feature.point if pick.feature is not None else None)
            self.hovered.emit(pick)
            self.request_render()

    def _on_drag_release(self, *_):
        if self._pull_depth is not None:
            self._pull_depth = None
            self.grabber.release()
            self._abort("LeftButtonReleaseEvent")
            return
        if self._drag is None:
            return
        name, _, _, offset, start = self._drag
        self._drag = None
        self._abort("LeftButtonReleaseEvent")
        x, y = self.interactor.GetEventPosition()
        if abs(x - start[0]) + abs(y - start[1]) > _CLICK_TOLERANCE and offset.any():
            self.moved.emit(name, offset)
        self.request_rebuild()    # the model moved it (or refused): draw what the model says

    def _preview_drag(self, name, offset):
        """Draw the dragged body (with what it carries) or another element shifted by ``offset``."""
        if name in self.document.model.bodies:
            X = self.scene.initial[name]
            self.scene.set_body_poses({name: (X[:3, 3] + offset, X[:3, :3])})
        else:
            self.scene.actor(name).SetPosition(*offset)
        self.render()

    def _on_model_replaced(self):
        self.rebuild()
        self.set_view("iso")

    def _on_model_event(self, event, collection, name, detail):
        if collection != "settings":
            self.request_rebuild()
        if event == "added" and collection == "bodies":
            if not self._added_bodies:
                QTimer.singleShot(0, self, self._show_added_bodies)
            self._added_bodies.append(name)

    def _show_added_bodies(self):
        """Refit the view when a body just added is not inside it."""
        names, self._added_bodies = self._added_bodies, []
        if self._closed:
            return
        self.flush()
        inside = self.vtk_widget.rect().adjusted(8, 8, -8, -8)
        positions = [p for p in map(self._body_position, names) if p is not None]
        if any(not inside.contains(self.project(p)) for p in positions):
            self.fit_all()

    def _on_selection(self, *_):
        self.scene.highlight(self.document.selected)
        self.request_render()

    def _deferred_render(self):
        if self._render_pending and not self._closed:
            self.flush()
            self.render()
