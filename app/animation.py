"""Playback of a result in the viewport: the :class:`Player` (time, frame, play/pause, speed, loop,
trace of a body point (a CM or a marker), deformation scale of flexible bodies, their colouring by nodal stress, frame
timing) and the :class:`AnimationBar` toolbar (play, frame step, speed ×0.1…×10, loop, timeline slider,
trace, camera follow of a body, deformation scale, stress colouring, screenshot, PNG image-sequence and MP4
export).

Playback is wall-clock based: each timer tick advances the time by the elapsed wall time × speed and
shows the output frame at or before it, so slow frames skip output points instead of slowing down.
"""
from __future__ import annotations

import importlib.util
import os
import time
from collections import deque

import numpy as np
from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import (QAbstractSpinBox, QCheckBox, QComboBox, QDoubleSpinBox, QLabel, QSlider, QStyle,
                               QToolBar, QToolButton)
from vtkmodules.util.numpy_support import numpy_to_vtk, numpy_to_vtkIdTypeArray
from vtkmodules.vtkCommonCore import vtkPoints
from vtkmodules.vtkCommonDataModel import vtkCellArray, vtkPolyData
from vtkmodules.vtkRenderingCore import vtkActor, vtkPolyDataMapper

import solver

from . import dialogs
from .contact_arrows import ContactArrows
from .log_panel import LOGGER
from .resources import icon
from .screenshot import array_to_image, grab_window
from .simulation import Trajectory

SPEEDS = (0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0)
TICK_MS = 15  # timer interval; frames are shown as fast as they render, up to ~60/s
TRACE_COLOR = (0.9, 0.2, 0.55)
VIDEO_FPS = 30.0
# Stress measures the flexible beams can be coloured by (app.simulation.stress_measure), with labels.
STRESS_KINDS = {"none": "none", "axial": "axial σ", "bending": "bending |σ|", "torsion": "torsion τ",
                "combined": "combined |σ|"}
STRESS_TIP = ("Colour flexible bodies by nodal stress (MPa, one colour scale over the whole run):\n"
              "axial σ — axial stress, tension > 0\n"
              "bending |σ| — |σ_bend,y| + |σ_bend,z|, largest bending fibre stress\n"
              "torsion τ — torsional shear stress at the torsion radius\n"
              "combined |σ| — |σ_axial| + |σ_bend,y| + |σ_bend,z|, peak normal stress\n"
              "(the sums are exact where the extreme fibres of both axes meet, e.g. a rectangle's "
              "corner, and an upper bound otherwise)")


def video_export_available() -> bool:
    """True when the MP4 writer (the ``imageio-ffmpeg`` package) can be imported."""
    return importlib.util.find_spec("imageio_ffmpeg") is not None


class Player(QObject):
    """Signals: ``frame_changed(index)``, ``time_changed(t)``, ``playing_changed(bool)``,
    ``trajectory_changed()``."""

    frame_changed = Signal(int)
    time_changed = Signal(float)
    playing_changed = Signal(bool)
    trajectory_changed = Signal()

    def __init__(self, viewport, parent=None):
        super().__init__(parent)
        self.viewport = viewport
        self.trajectory: Trajectory | None = None
        self.index = 0
        self.time = 0.0
        self.speed = 1.0
        self.loop = True
        self.deformation_scale = 1.0
        self.stress_kind = "none"
        self._stress_range = (0.0, 0.0)
        self.frame_times = deque(maxlen=600)  # s to pose + render each shown frame
        self._timer = QTimer(self)
        self._timer.setInterval(TICK_MS)
        self._timer.timeout.connect(self._tick)
        self._last_tick = 0.0
        self._trace_body = ""
        self._trace_local = np.zeros(3)
        self._trace_actor = None
        self._trace_points = 0
        self.contact_arrows = None

    # ---- public API ---------------------------------------------------------------------------
    @property
    def playing(self) -> bool:
        return self._timer.isActive()

    @property
    def frames(self) -> int:
        return len(self.trajectory) if self.trajectory is not None else 0

    def set_results(self, results):
        """Show ``results`` (None: back to the model's initial configuration)."""
        self.pause()
        self.trajectory = Trajectory(results) if results is not None and len(results.t) else None
        self.index, self.time = 0, float(self.trajectory.t[0]) if self.trajectory is not None else 0.0
        self._rebuild_trace()
        self._rebuild_contact_arrows(results)
        self._measure_stress()
        self.trajectory_changed.emit()
        if self.trajectory is None:
            self.viewport.scene.set_beam_scalars(None)
            self.viewport.reset_poses()
            return
        self._show(0, float(self.trajectory.t[0]), render=False)

    def play(self):
        if self.trajectory is None or self.playing:
            return
        if self.index >= self.frames - 1:
            self.set_frame(0)
        self._last_tick = time.perf_counter()
        self.viewport.set_animating(True)
        self._timer.start()
        self.playing_changed.emit(True)

    def pause(self):
        if self.playing:
            self._timer.stop()
            self.viewport.set_animating(False)
            self.playing_changed.emit(False)

    def toggle(self):
        self.pause() if self.playing else self.play()

    def set_speed(self, speed: float):
        self.speed = float(min(max(speed, SPEEDS[0]), SPEEDS[-1]))

    def set_loop(self, loop: bool):
        self.loop = bool(loop)

    def set_deformation_scale(self, scale: float):
        """Draw flexible bodies' elastic displacements ``scale`` times enlarged (current frame redrawn)."""
        self.deformation_scale = max(float(scale), 0.0)
        if self.trajectory is not None:
            self._show(self.index, self.time)

    def set_stress_kind(self, kind: str):
        """Colour flexible bodies by the nodal stress measure ``kind`` (a key of ``STRESS_KINDS``;
        "none": their body colour), over the fixed range of the whole run (current frame redrawn)."""
        if kind not in STRESS_KINDS:
            raise ValueError(f"unknown stress measure {kind!r}")
        self.stress_kind = kind
        self._measure_stress()
        if self.trajectory is not None:  # without results the beams are uncoloured already
            self._show(self.index, self.time)

    def stress_range(self) -> tuple[float, float]:
        """(min, max) MPa of the chosen stress measure over the run (the colour scale)."""
        return self._stress_range

    def step(self, frames: int = 1):
        """Show the frame ``frames`` output points later (earlier if negative)."""
        self.pause()
        self.set_frame(self.index + frames)

    def seek(self, t: float):
        """Show the frame at (or just before) time ``t``."""
        if self.trajectory is not None:
            self._show(self.trajectory.index(t), float(t))

    def set_frame(self, index: int):
        if self.trajectory is not None:
            index = min(max(int(index), 0), self.frames - 1)
            self._show(index, float(self.trajectory.t[index]))

    def set_trace(self, body: str, local=(0.0, 0.0, 0.0)):
        """Draw the path of a point of ``body`` (body coordinates) up to the current frame; "" = off."""
        self._trace_body = body or ""
        self._trace_local = np.asarray(local, float)
        self._rebuild_trace()
        self._update_trace()
        self.viewport.request_render()

    def trace_path(self) -> np.ndarray:
        """The points of the trace drawn now, (n, 3)."""
        if self._trace_actor is None:
            return np.zeros((0, 3))
        path = self.trajectory.point_path(self._trace_body, self._trace_local)
        return path[: self.index + 1]

    def fps(self) -> float:
        """Frames per second the viewport can show: 1 / the median pose+render time of the recent
        frames (the median ignores a stray slow frame, e.g. another process taking the CPU)."""
        if not self.frame_times:
            return 0.0
        return 1.0 / float(np.median(self.frame_times))

    def export_frames(self, folder: str, every: int = 1) -> int:
        """Write frames (every ``every``-th output point) as ``frame_00000.png`` … into ``folder``."""
        if self.trajectory is None:
            return 0
        os.makedirs(folder, exist_ok=True)
        count = 0
        for n, image in enumerate(self._images(range(0, self.frames, max(1, int(every))))):
            array_to_image(image).save(os.path.join(folder, f"frame_{n:05d}.png"))
            count += 1
        return count

    def video_frames(self, fps: float) -> list[int]:
        """Output indices shown by a video at ``fps`` frames/s playing at the current speed: frame k
        shows the output at or before t₀ + k·speed/fps (as the live playback would)."""
        if self.trajectory is None:
            return []
        t = self.trajectory.t
        count = int(np.floor((t[-1] - t[0]) * fps / self.speed + 1e-9)) + 1
        return [self.trajectory.index(t[0] + k * self.speed / fps) for k in range(count)]

    def export_video(self, path: str, fps: float = VIDEO_FPS) -> int:
        """Write the animation as an H.264 MP4 (imageio-ffmpeg's bundled ffmpeg) at ``fps`` frames/s
        and the current playback speed; returns the number of frames.  Images are cropped to a
        multiple of 16 pixels (the codec's macro-block size), so no frame is rescaled."""
        import imageio_ffmpeg
        indices = self.video_frames(fps)
        if not indices:
            return 0
        writer = None
        try:
            for image in self._images(indices):
                h, w = (image.shape[0] // 16) * 16, (image.shape[1] // 16) * 16
                if writer is None:
                    writer = imageio_ffmpeg.write_frames(path, (w, h), fps=fps, macro_block_size=16)
                    writer.send(None)  # start ffmpeg
                writer.send(np.ascontiguousarray(image[:h, :w]))
        finally:
            if writer is not None:
                writer.close()
        return len(indices)

    # ---- helpers ------------------------------------------------------------------------------
    def _images(self, indices):
        """Rendered images (h, w, 3) of the output ``indices``; the shown frame is restored after."""
        self.pause()
        keep = self.index
        try:
            for i in indices:
                self.set_frame(i)
                yield self.viewport.grab_array()
        finally:
            self.set_frame(keep)

    def _tick(self):
        now = time.perf_counter()
        dt, self._last_tick = now - self._last_tick, now
        t = self.time + dt * self.speed
        t_end = float(self.trajectory.t[-1])
        if t > t_end:
            if self.loop and t_end > self.trajectory.t[0]:
                t = float(self.trajectory.t[0])
            else:
                self._show(self.frames - 1, t_end)
                self.pause()
                return
        self._show(self.trajectory.index(t), t)

    def _show(self, index, t, render=True):
        start = time.perf_counter()
        self.index, self.time = index, t
        self._update_trace()
        if self.contact_arrows is not None:
            self.contact_arrows.show(index)
        self.viewport.flush()  # a pending scene rebuild would drop the colours set next
        self._update_stress()
        self.viewport.set_body_poses(self.trajectory.poses(index), render, self.trajectory.beams(index),
                                     self.deformation_scale)
        self.frame_times.append(time.perf_counter() - start)
        self.frame_changed.emit(index)
        self.time_changed.emit(float(self.trajectory.t[index]))

    def _measure_stress(self):
        colored = self.trajectory is not None and self.stress_kind != "none"
        self._stress_range = self.trajectory.stress_range(self.stress_kind) if colored else (0.0, 0.0)

    def _update_stress(self):
        scene = self.viewport.scene
        if self.stress_kind == "none" or not self.trajectory.stresses:
            scene.set_beam_scalars(None)
            return
        scene.set_beam_scalars(self.trajectory.stress(self.index, self.stress_kind), self._stress_range,
                               f"{self.stress_kind}\n[MPa]")  # ASCII: VTK's fonts lack σ

    def _rebuild_contact_arrows(self, results):
        """The arrows of the run's contact forces (app/contact_arrows.py), sized by the model's extent."""
        if self.contact_arrows is not None:
            self.contact_arrows.remove()
            self.contact_arrows = None
        if self.trajectory is None or not (results.contact_names or results.contact_group_names):
            return
        bounds = self.viewport.scene.model_bounds()
        extent = float(np.linalg.norm(np.subtract(bounds[1::2], bounds[0::2])))
        self.contact_arrows = ContactArrows(self.viewport.overlay, self.viewport.scene, results, extent)

    def _rebuild_trace(self):
        renderer = self.viewport.renderer
        if self._trace_actor is not None:
            renderer.RemoveActor(self._trace_actor)
            self._trace_actor = None
        if self.trajectory is None or self._trace_body not in self.trajectory.positions:
            return
        path = self.trajectory.point_path(self._trace_body, self._trace_local)
        points = vtkPoints()
        points.SetData(numpy_to_vtk(np.ascontiguousarray(path), deep=True))
        data = vtkPolyData()
        data.SetPoints(points)
        mapper = vtkPolyDataMapper()
        mapper.SetInputData(data)
        actor = vtkActor()
        actor.SetMapper(mapper)
        actor.SetPickable(False)
        actor.GetProperty().SetColor(*TRACE_COLOR)
        actor.GetProperty().SetLineWidth(2.5)
        actor.GetProperty().SetLighting(False)
        renderer.AddActor(actor)
        self._trace_actor = actor
        self._trace_data = data

    def _update_trace(self):
        if self._trace_actor is None:
            return
        n = self.index + 1
        ids = np.concatenate([[n], np.arange(n)]).astype(np.int64)
        cells = vtkCellArray()
        cells.ImportLegacyFormat(numpy_to_vtkIdTypeArray(ids, deep=True))
        self._trace_data.SetLines(cells)
        self._trace_data.Modified()


def leaving_body(traj, model, bounds) -> str:
    """The body a new run should be followed by: the heaviest of those whose CM travels farther
    than the model's extent (the diagonal of its drawn ``bounds``), so it would leave a view fitted to
    the model; "" when none does."""
    extent = float(np.linalg.norm(np.subtract(bounds[1::2], bounds[0::2])))
    far = [b for b, p in traj.positions.items()
           if b in model.bodies and len(p) and np.linalg.norm(p - p[0], axis=1).max() > extent]
    return max(far, key=lambda b: model.bodies[b].mass, default="")


def _fill_bodies(combo, bodies, markers=()):
    """'none', ``bodies`` and ``markers`` ("name (marker)") in a combo box, keeping its choice when it
    is still there."""
    current = combo.currentData()
    combo.blockSignals(True)
    combo.clear()
    combo.addItem("none", "")
    for body in bodies:
        combo.addItem(body, body)
    for marker in markers:
        combo.addItem(f"{marker} (marker)", marker)
    i = combo.findData(current) if current else 0
    combo.setCurrentIndex(max(i, 0))
    combo.blockSignals(False)


class AnimationBar(QToolBar):
    """The animation toolbar of the main window (bottom)."""

    def __init__(self, window, player: Player):
        super().__init__("Animation", window)
        self.setObjectName("animationToolbar")
        self.window, self.player = window, player
        style, std = window.style(), QStyle.StandardPixmap
        self.play_button = self._button(style.standardIcon(std.SP_MediaPlay), "Play / pause (Space)",
                                        player.toggle)
        self.back_button = self._button(style.standardIcon(std.SP_MediaSeekBackward), "Previous frame",
                                        lambda: player.step(-1))
        self.forward_button = self._button(style.standardIcon(std.SP_MediaSeekForward), "Next frame",
                                           lambda: player.step(1))
        self.speed = QComboBox(self)
        self.speed.setToolTip("Playback speed")
        for s in SPEEDS:
            self.speed.addItem(f"×{s:g}", s)
        self.speed.setCurrentIndex(SPEEDS.index(1.0))
        self.speed.currentIndexChanged.connect(lambda i: player.set_speed(self.speed.itemData(i)))
        self.addWidget(self.speed)
        self.loop = QCheckBox("Loop", self)
        self.loop.setChecked(player.loop)
        self.loop.toggled.connect(player.set_loop)
        self.addWidget(self.loop)
        self.slider = QSlider(Qt.Orientation.Horizontal, self)
        self.slider.setMinimumWidth(240)
        self.slider.setToolTip("Timeline: drag to scrub")
        self.slider.valueChanged.connect(self._on_slider)
        self.addWidget(self.slider)
        self.time_label = QLabel("no results", self)
        self.time_label.setMinimumWidth(120)
        self.addWidget(self.time_label)
        self.addSeparator()
        self.trace = QComboBox(self)
        self.trace.setToolTip("Trace the path of a body's centre of mass or of a marker")
        self.trace.currentIndexChanged.connect(self._on_trace)
        self.addWidget(QLabel(" Trace ", self))
        self.addWidget(self.trace)
        self.follow = QComboBox(self)
        self.follow.setToolTip("Move the camera with a body (its centre of mass) while the animation plays")
        self.follow.currentIndexChanged.connect(lambda i: window.viewport.follow(self.follow.itemData(i) or ""))
        self.addWidget(QLabel(" Follow ", self))
        self.addWidget(self.follow)
        self.deformation = QDoubleSpinBox(self)
        self.deformation.setRange(0.0, 1e6)
        self.deformation.setDecimals(1)
        self.deformation.setStepType(QAbstractSpinBox.StepType.AdaptiveDecimalStepType)
        self.deformation.setValue(player.deformation_scale)
        self.deformation.setPrefix("×")
        self.deformation.setToolTip("Deformation scale factor of flexible bodies (elastic displacements "
                                    "drawn this many times enlarged)")
        self.deformation.valueChanged.connect(player.set_deformation_scale)
        self.addWidget(QLabel(" Deformation ", self))
        self.addWidget(self.deformation)
        self.stress = QComboBox(self)
        for kind, label in STRESS_KINDS.items():
            self.stress.addItem(label, kind)
        self.stress.setToolTip(STRESS_TIP)
        self.stress.currentIndexChanged.connect(lambda i: player.set_stress_kind(self.stress.itemData(i)))
        self.addWidget(QLabel(" Stress ", self))
        self.addWidget(self.stress)
        self.addSeparator()
        self.screenshot_button = self._button(style.standardIcon(std.SP_DialogSaveButton),
                                              "Save a screenshot (PNG)", self.save_screenshot)
        self.export_button = self._button(style.standardIcon(std.SP_DirOpenIcon),
                                          "Export the animation as PNG frames", self.export_frames)
        self.video_button = self._button(icon("video"),
                                         "Export the animation as an MP4 video (30 frames/s, at the playback "
                                         "speed)" if video_export_available() else
                                         "MP4 export unavailable: install the imageio-ffmpeg package",
                                         self.export_video)
        player.frame_changed.connect(self._on_frame)
        player.playing_changed.connect(self._on_playing)
        player.trajectory_changed.connect(self._on_trajectory)
        self._on_trajectory()

    def save_screenshot(self, path: str = ""):
        path = path or dialogs.save_file_path(self.window, "Save screenshot", "screenshot.png", "PNG images (*.png)")
        if path:
            grab_window(self.window, self.window.viewport).save(path)
            LOGGER.info("Screenshot saved to %s", path)
        return path

    def export_frames(self):
        folder = dialogs.folder_path(self.window, "Export animation frames (PNG)")
        if folder:
            count = self.player.export_frames(folder)
            LOGGER.info("%d animation frames written to %s", count, folder)

    def export_video(self):
        path = dialogs.save_file_path(self.window, "Export animation (MP4)", "animation.mp4", "MP4 videos (*.mp4)")
        if not path:
            return
        try:
            count = self.player.export_video(path)
        except (OSError, RuntimeError) as exc:
            LOGGER.error("Cannot write %s: %s", path, exc)
            return
        LOGGER.info("%d animation frames written to %s (%g frames/s)", count, path, VIDEO_FPS)

    # ---- helpers ------------------------------------------------------------------------------
    def _button(self, icon, tip, slot):
        button = QToolButton(self)
        button.setIcon(icon)
        button.setToolTip(tip)
        button.clicked.connect(slot)
        self.addWidget(button)
        return button

    def _on_slider(self, value):
        if value != self.player.index:
            self.player.set_frame(value)

    def _on_frame(self, index):
        self.slider.blockSignals(True)
        self.slider.setValue(index)
        self.slider.blockSignals(False)
        traj = self.player.trajectory
        if traj is not None:
            self.time_label.setText(f"t = {traj.t[index]:.4g} / {traj.t[-1]:.4g} s")

    def _on_playing(self, playing):
        pixmap = QStyle.StandardPixmap.SP_MediaPause if playing else QStyle.StandardPixmap.SP_MediaPlay
        self.play_button.setIcon(self.window.style().standardIcon(pixmap))

    def _on_trace(self, i):
        name = self.trace.itemData(i) or ""
        model = self.window.document.model
        if name in model.markers:
            self.player.set_trace(*solver.marker_local(model, name))
        else:
            self.player.set_trace(name)

    def _on_trajectory(self):
        traj = self.player.trajectory
        has = traj is not None
        for w in (self.play_button, self.back_button, self.forward_button, self.slider, self.export_button):
            w.setEnabled(has)
        self.video_button.setEnabled(has and video_export_available())
        self.deformation.setEnabled(has and bool(traj.frames))
        self.stress.setEnabled(has and bool(traj.frames))
        self.slider.blockSignals(True)
        self.slider.setRange(0, max(len(traj) - 1, 0) if has else 0)
        self.slider.setValue(self.player.index)
        self.slider.blockSignals(False)
        self.time_label.setText(f"t = {traj.t[self.player.index]:.4g} / {traj.t[-1]:.4g} s" if has
                                else "no results")
        bodies = list(traj.positions) if has else []
        markers = [m for m, e in self.window.document.model.markers.items() if e.body in bodies]
        _fill_bodies(self.trace, bodies, markers)
        _fill_bodies(self.follow, bodies)
        if has and not self.follow.currentData():       # a car driving away: followed from the start
            leaving = leaving_body(traj, self.window.document.model, self.window.viewport.scene.model_bounds())
            self.follow.blockSignals(True)
            self.follow.setCurrentIndex(max(self.follow.findData(leaving), 0) if leaving else 0)
            self.follow.blockSignals(False)
        self.window.viewport.follow(self.follow.currentData() or "")
