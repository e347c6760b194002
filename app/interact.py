"""Simulate ▸ Interact: the model runs in real time (or slow motion) while the user pulls its bodies.

The physics is :class:`solver.InteractiveRun` (chunks of one display frame, a pull whose stiffness
follows the grabbed point's effective inertia, held loads); this module only drives it.  The run
lives in a worker thread (:class:`InteractWorker`, its own QTimer ticking once per display frame:
each tick advances FRAME × the slow-motion factor of simulated time, so a model that computes
faster than real time runs at real time); the GUI sends the pull, the load slider, pause, step and
resume as queued signals that the worker applies between chunks, and gets each frame's body poses,
energies and joint reactions back as a signal.  The viewport sends a press on a body, the mouse
moves and the release here (:meth:`Viewport.set_grabber`): the target is the mouse ray's point in
the plane through the grab point facing the camera.  "Keep as Results" ends the session and makes
it the window's results (plots, animation, save, export like any run).
"""
from __future__ import annotations

import logging
import time
from collections import deque

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QObject, Qt, QThread, QTimer, Signal, Slot
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QPushButton, QSlider, QVBoxLayout, QWidget

import solver

LOGGER = logging.getLogger("mbs.interact")
FRAME = 1.0 / 60.0                       # s of wall time per chunk (one display frame)
SLOW_MOTION = (1.0, 0.5, 0.25, 0.1)      # simulated seconds per wall second
HISTORY = 1200                           # points kept in the live plots (20 s at 60 frames/s)
LOAD_STEPS = 50                          # the load slider's steps each way; full scale = LOAD_WEIGHTS × weight
LOAD_WEIGHTS = 5.0
SPEED_PERCENT = 300                      # the driver speed slider's range: 0 … 300 % of the drivers' motion rate


class InteractWorker(QObject):
    """Owns the InteractiveRun in the worker thread.  ``frame(dict)``: t, poses, live values, the
    real-time factor of the last second; ``failed(str)``; ``done(Results)`` after :meth:`finish`."""

    frame = Signal(object)
    failed = Signal(str)
    done = Signal(object)
    ready = Signal()

    def __init__(self, model):
        super().__init__()
        self.model = model
        self.run = None
        self.timer = None
        self.running = True
        self.factor = 1.0
        self._walls = deque(maxlen=60)

    @Slot()
    def start(self):
        try:
            self.run = solver.InteractiveRun(self.model)
        except solver.MBSError as exc:
            self.failed.emit(str(exc))
            return
        self.timer = QTimer()
        self.timer.setInterval(round(1000 * FRAME))
        self.timer.timeout.connect(self._tick)
        self.timer.start()
        self.ready.emit()
        self._emit(0.0)

    @Slot(bool)
    def set_running(self, running):
        self.running = running

    @Slot(float)
    def set_factor(self, factor):
        self.factor = factor

    @Slot()
    def step_once(self):
        self._advance()

    @Slot(str, object)
    def grab(self, body, point):
        if self.run is not None and body in self.run.body_names:
            self.run.set_pull(body, point, point)

    @Slot(object)
    def pull(self, target):
        if self.run is not None:
            self.run.move_target(target)

    @Slot()
    def release(self):
        if self.run is not None:
            self.run.release()

    @Slot(str, int, float)
    def set_load(self, body, axis, weights):
        """A held force of ``weights`` × the body's weight along global axis ``axis`` at its CM."""
        if self.run is None or body not in self.run.body_names:
            return
        force = np.zeros(3)
        force[axis] = weights * self.run.run.system.mass_values[self.run.body_names.index(body)] * \
            float(np.linalg.norm(self.model.gravity))
        self.run.set_load("slider", body, force)

    @Slot(float)
    def set_speed(self, scale):
        """The drivers' speed scale (InteractiveRun.set_speed), applied at the next chunk."""
        if self.run is not None and self.run.run.system.drivers:
            try:
                self.run.set_speed(scale)
            except solver.MBSError as exc:       # a formulation the warp cannot reach: the run goes on
                LOGGER.warning("Driver speed: %s", exc)

    @Slot()
    def finish(self):
        if self.timer is not None:
            self.timer.stop()
        self.done.emit(self.run.results() if self.run is not None else None)

    def _tick(self):
        if self.running:
            self._advance()

    def _advance(self):
        dt = FRAME * self.factor
        wall = time.perf_counter()
        try:
            self.run.step(dt)
        except (solver.MBSError, np.linalg.LinAlgError) as exc:
            self.timer.stop()
            self.failed.emit(str(exc))
            return
        self._walls.append((dt, time.perf_counter() - wall))
        self._emit(sum(d for d, _ in self._walls) / max(1e-9, sum(w for _, w in self._walls)))

    def _emit(self, speed):
        self.frame.emit({"t": self.run.t, "poses": self.run.poses(), "live": self.run.live(), "speed": speed})


class InteractPanel(QWidget):
    """The Interact dock: pause/resume, step, slow motion, a load slider on the selected body, the
    drivers' speed slider, live energy and reaction plots, Keep as Results."""

    def __init__(self, parent=None):
        super().__init__(parent)
        layout = QVBoxLayout(self)
        row = QHBoxLayout()
        self.pause = QPushButton("Pause")
        self.pause.setCheckable(True)
        self.step = QPushButton("Step")
        self.step.setEnabled(False)
        self.factor = QComboBox()
        for f in SLOW_MOTION:
            self.factor.addItem("real time" if f == 1.0 else f"×{f:g} (slow motion)", f)
        self.keep = QPushButton("Keep as Results")
        self.status = QLabel("")
        for w in (self.pause, self.step, self.factor, self.keep, self.status):
            row.addWidget(w)
        row.addStretch(1)
        layout.addLayout(row)
        load = QHBoxLayout()
        self.axis = QComboBox()
        self.axis.addItems(["x", "y", "z"])
        self.load = QSlider(Qt.Orientation.Horizontal)
        self.load.setRange(-LOAD_STEPS, LOAD_STEPS)
        self.load_label = QLabel()
        load.addWidget(QLabel("Force on the selected body along"))
        load.addWidget(self.axis)
        load.addWidget(self.load, 1)
        load.addWidget(self.load_label)
        layout.addLayout(load)
        drive = QHBoxLayout()
        self.drive = QSlider(Qt.Orientation.Horizontal)
        self.drive.setRange(0, SPEED_PERCENT)
        self.drive.setValue(100)
        self.drive_label = QLabel()
        drive.addWidget(QLabel("Driver speed"))
        drive.addWidget(self.drive, 1)
        drive.addWidget(self.drive_label)
        layout.addLayout(drive)
        plots = QHBoxLayout()
        self.energy_plot = pg.PlotWidget(title="Energy (J)")
        self.reaction_plot = pg.PlotWidget(title="Reaction |F| (N)")
        for p in (self.energy_plot, self.reaction_plot):
            p.setLabel("bottom", "t", units="s")
            p.addLegend(offset=(5, 5))
            plots.addWidget(p)
        layout.addLayout(plots, 1)
        self.curves = {name: self.energy_plot.plot(pen=pg.mkPen(color, width=2), name=name)
                       for name, color in (("kinetic", "#d62728"), ("potential", "#1f77b4"), ("total", "#222"))}
        self.reaction_curve = self.reaction_plot.plot(pen=pg.mkPen("#2ca02c", width=2), name="")
        self.history = {name: deque(maxlen=HISTORY) for name in ("t", "kinetic", "potential", "total", "reaction")}
        self.joint, self.speed = "", 0.0
        self.load_weights()
        self.drive_scale()

    def drive_scale(self) -> float:
        scale = self.drive.value() / 100.0
        self.drive_label.setText(f"×{scale:.2f} of the drivers' rate")
        return scale

    def load_weights(self) -> float:
        weights = LOAD_WEIGHTS * self.load.value() / LOAD_STEPS
        self.load_label.setText(f"{weights:+.1f} × weight")
        return weights

    def clear(self):
        for d in self.history.values():
            d.clear()
        self.load.setValue(0)
        self.drive.setValue(100)

    def record(self, frame, joint):
        """Append a frame's energies and the reaction magnitude of ``joint`` ("" or unknown: none)."""
        live, h = frame["live"], self.history
        kinetic, gravity, spring, strain = live["energy"]
        h["t"].append(live["t"])
        h["kinetic"].append(kinetic)
        h["potential"].append(gravity + spring + strain)
        h["total"].append(kinetic + gravity + spring + strain)
        force = live["reaction_force"].get(joint)
        h["reaction"].append(float(np.linalg.norm(force)) if force is not None else np.nan)
        self.joint, self.speed = joint, frame["speed"]

    def redraw(self):
        h = self.history
        if not h["t"]:
            return
        t = np.fromiter(h["t"], float)
        for name, curve in self.curves.items():
            curve.setData(t, np.fromiter(h[name], float))
        self.reaction_curve.setData(t, np.fromiter(h["reaction"], float), connect="finite")
        self.reaction_plot.setTitle(f"Reaction |F| of {self.joint} (N)" if self.joint
                                    else "Reaction |F| (select a joint)")
        self.status.setText(f"t = {t[-1]:.2f} s   ×{self.speed:.2f} real time")


class InteractController(QObject):
    """Simulate ▸ Interact (checkable): starts a session of the window's model in a worker thread,
    lets the viewport's drags pull bodies, ends it when unchecked (or with Keep as Results)."""

    to_running = Signal(bool)
    to_factor = Signal(float)
    to_step = Signal()
    to_grab = Signal(str, object)
    to_pull = Signal(object)
    to_release = Signal()
    to_load = Signal(str, int, float)
    to_speed = Signal(float)
    to_finish = Signal()
    started = Signal()
    frame_shown = Signal(float)
    ended = Signal(object)

    def __init__(self, window):
        super().__init__(window)
        self.window = window
        self.panel = InteractPanel()
        self.dock = window.add_bottom_dock("Interact", "interactDock", self.panel)
        self.dock.hide()
        self.worker = self.thread = None
        self.keep = False
        self.frames = 0
        self.t = 0.0
        self.poses = {}          # the last frame's {body: (CM, rotation)}
        self._draw_pending = False
        p = self.panel
        p.pause.toggled.connect(self._pause)
        p.step.clicked.connect(self.to_step)
        p.factor.currentIndexChanged.connect(lambda _: self.to_factor.emit(float(p.factor.currentData())))
        p.keep.clicked.connect(self.keep_results)
        p.load.valueChanged.connect(lambda _: self._send_load())
        p.axis.currentIndexChanged.connect(lambda _: self._send_load())
        p.drive.valueChanged.connect(lambda _: self.to_speed.emit(p.drive_scale()))
        window.document.model_replaced.connect(self.stop)      # another model: the session's bodies are gone

    @property
    def active(self) -> bool:
        return self.worker is not None

    def toggle(self, on: bool):
        if on and not self.active:
            self.start()
        elif not on and self.active:
            self.stop()

    def start(self):
        window = self.window
        if window.simulation.running or window.refuse_invalid_edits("Interact"):
            self._uncheck()
            return
        window.player.pause()           # the session draws the bodies now, not the results' animation
        self.panel.clear()
        self.panel.drive.setEnabled(bool(window.document.model.drivers))
        self.frames, self.keep = 0, False
        self.worker = InteractWorker(window.document.model.copy())
        self.thread = QThread(self)
        self.worker.moveToThread(self.thread)
        for signal, slot in ((self.to_running, self.worker.set_running), (self.to_factor, self.worker.set_factor),
                             (self.to_step, self.worker.step_once), (self.to_grab, self.worker.grab),
                             (self.to_pull, self.worker.pull), (self.to_release, self.worker.release),
                             (self.to_load, self.worker.set_load), (self.to_speed, self.worker.set_speed),
                             (self.to_finish, self.worker.finish)):
            signal.connect(slot)
        self.worker.frame.connect(self._show)
        self.worker.failed.connect(self._failed)
        self.worker.done.connect(self._done)
        self.worker.ready.connect(self.started)
        self.thread.started.connect(self.worker.start)
        self.panel.pause.setChecked(False)
        self.to_factor.emit(float(self.panel.factor.currentData()))
        self.dock.show()
        self.dock.raise_()
        window.viewport.set_grabber(self)
        self.thread.start()
        LOGGER.info("Interact: drag a body with the left mouse button; the camera moves with the others")

    def stop(self):
        """End the session (its results kept when Keep as Results asked)."""
        if self.active:
            self.to_finish.emit()

    def shutdown(self):
        """The window closes: end the worker thread without results."""
        if self.thread is not None:
            self.thread.quit()
            self.thread.wait(10000)
            self.worker = self.thread = None

    def keep_results(self):
        self.keep = True
        self.stop()

    # ---- the viewport's grab (Viewport.set_grabber) ---------------------------------------------------
    def grab(self, body: str, point) -> bool:
        if not body or body not in self.window.document.model.bodies:
            return False
        self.to_grab.emit(body, np.asarray(point, float))
        return True

    def pull(self, target):
        self.to_pull.emit(np.asarray(target, float))

    def release(self):
        self.to_release.emit()

    # ---- worker signals --------------------------------------------------------------------------------
    def _show(self, frame):
        """Each frame's values are recorded; the view and plots are drawn once per event-loop turn
        with the latest (frames that arrive while the GUI draws are not drawn one by one: it never
        falls behind the run)."""
        self.frames += 1
        self.t, self.poses = frame["t"], frame["poses"]
        selection = self.window.document.selection
        self.panel.record(frame, selection if selection in self.window.document.model.joints else "")
        if not self._draw_pending:
            self._draw_pending = True
            QTimer.singleShot(0, self._draw)
        self.frame_shown.emit(self.t)

    def _draw(self):
        self._draw_pending = False
        if self.active:
            self.window.viewport.set_body_poses(self.poses)
            self.panel.redraw()

    def _failed(self, message):
        LOGGER.error("Interact stopped: %s", message)
        self.window.report_problems("Interact", [message])
        self._end()

    def _done(self, results):
        if self.keep and results is not None:
            self.window.simulation.set_results(results)
            LOGGER.info("Interact session kept as results (%.2f s)", results.t[-1])
        self._end()
        self.ended.emit(results)

    def _end(self):
        self.window.viewport.set_grabber(None)
        if self.thread is not None:
            self.thread.quit()
            self.thread.wait(10000)
        self.worker = self.thread = None
        self.window.viewport.reset_poses()
        self._uncheck()

    def _uncheck(self):
        action = self.window.actions.get("interact")
        if action is not None and action.isChecked():
            action.setChecked(False)

    def _pause(self, paused):
        self.panel.pause.setText("Resume" if paused else "Pause")
        self.panel.step.setEnabled(paused)
        self.to_running.emit(not paused)

    def _send_load(self):
        weights = self.panel.load_weights()
        body = self.window.document.selection
        if self.active and body in self.window.document.model.bodies:
            self.to_load.emit(body, self.panel.axis.currentIndex(), weights)
