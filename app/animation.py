"""Playback of a result in the viewport: the :class:`Player` (time, frame, play/pause, speed, loop,
trace of a body point, frame timing) and the :class:`AnimationBar` toolbar (play, frame step, speed
×0.1…×10, loop, timeline slider, trace, screenshot, PNG image-sequence export).

Playback is wall-clock based: each timer tick advances the time by the elapsed wall time × speed and
shows the output frame at or before it, so slow frames skip output points instead of slowing down.
"""
from __future__ import annotations

import os
import time
from collections import deque

import numpy as np
from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import QCheckBox, QComboBox, QLabel, QSlider, QStyle, QToolBar, QToolButton
from vtkmodules.util.numpy_support import numpy_to_vtk, numpy_to_vtkIdTypeArray
from vtkmodules.vtkCommonCore import vtkPoints
from vtkmodules.vtkCommonDataModel import vtkCellArray, vtkPolyData
from vtkmodules.vtkRenderingCore import vtkActor, vtkPolyDataMapper

from . import dialogs
from .log_panel import LOGGER
from .screenshot import array_to_image, grab_window
from .simulation import Trajectory

SPEEDS = (0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0)
TICK_MS = 15  # timer interval; frames are shown as fast as they render, up to ~60/s
TRACE_COLOR = (0.9, 0.2, 0.55)


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
        self.frame_times = deque(maxlen=600)  # s to pose + render each shown frame
        self._timer = QTimer(self)
        self._timer.setInterval(TICK_MS)
        self._timer.timeout.connect(self._tick)
        self._last_tick = 0.0
        self._trace_body = ""
        self._trace_local = np.zeros(3)
        self._trace_actor = None
        self._trace_points = 0

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
        self._rebuild_trace()
        self.trajectory_changed.emit()
        if self.trajectory is None:
            self.index, self.time = 0, 0.0
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
        """Frames per second the viewport can show (from the measured pose+render times)."""
        if not self.frame_times:
            return 0.0
        return 1.0 / float(np.mean(self.frame_times))

    def export_frames(self, folder: str, every: int = 1) -> int:
        """Write frames (every ``every``-th output point) as ``frame_00000.png`` … into ``folder``."""
        if self.trajectory is None:
            return 0
        os.makedirs(folder, exist_ok=True)
        self.pause()
        keep = self.index
        count = 0
        for n, i in enumerate(range(0, self.frames, max(1, int(every)))):
            self.set_frame(i)
            array_to_image(self.viewport.grab_array()).save(os.path.join(folder, f"frame_{n:05d}.png"))
            count += 1
        self.set_frame(keep)
        return count

    # ---- helpers ------------------------------------------------------------------------------
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
        self.viewport.set_body_poses(self.trajectory.poses(index), render)
        self.frame_times.append(time.perf_counter() - start)
        self.frame_changed.emit(index)
        self.time_changed.emit(float(self.trajectory.t[index]))

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
        self.trace.setToolTip("Trace the path of a body's centre of mass")
        self.trace.currentIndexChanged.connect(lambda i: player.set_trace(self.trace.itemData(i) or ""))
        self.addWidget(QLabel(" Trace ", self))
        self.addWidget(self.trace)
        self.addSeparator()
        self.screenshot_button = self._button(style.standardIcon(std.SP_DialogSaveButton),
                                              "Save a screenshot (PNG)", self.save_screenshot)
        self.export_button = self._button(style.standardIcon(std.SP_DirOpenIcon),
                                          "Export the animation as PNG frames", self.export_frames)
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

    def _on_trajectory(self):
        traj = self.player.trajectory
        has = traj is not None
        for w in (self.play_button, self.back_button, self.forward_button, self.slider, self.export_button):
            w.setEnabled(has)
        self.slider.blockSignals(True)
        self.slider.setRange(0, max(len(traj) - 1, 0) if has else 0)
        self.slider.setValue(self.player.index)
        self.slider.blockSignals(False)
        self.time_label.setText(f"t = {traj.t[self.player.index]:.4g} / {traj.t[-1]:.4g} s" if has
                                else "no results")
        current = self.trace.currentData()
        self.trace.blockSignals(True)
        self.trace.clear()
        self.trace.addItem("none", "")
        for body in (traj.positions if has else ()):
            self.trace.addItem(body, body)
        i = self.trace.findData(current) if current else 0
        self.trace.setCurrentIndex(max(i, 0))
        self.trace.blockSignals(False)
