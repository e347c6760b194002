"""Analysis ▸ Linearize: the linearized model's modes (frequency in Hz, damping ratio, "unstable" for
a mode growing in time, ``Linearization.unstable``) in a table, at the model's initial state or,
with "at static equilibrium" checked, at rest at the stable static equilibrium below it
(``solver.linearize(state="equilibrium")``);
selecting a row animates that mode shape in the viewport (q(s) = q₀ + s·amplitude·shape,
s = sin 2πφ, the Cartesian coordinates q = [r, p] per body); flexible bodies are drawn bent, their
floating frame and nodal elastic displacements from ``Linearization.flexible_poses(mode,
s·amplitude)``.  The amplitude makes the largest translation — of a body or of a beam node's
elastic displacement — 10 % of the view's extent."""
from __future__ import annotations

import math
import time

import numpy as np
from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import (QAbstractItemView, QCheckBox, QHBoxLayout, QLabel, QPushButton, QTableWidget,
                               QTableWidgetItem, QVBoxLayout, QWidget)

import solver

from .log_panel import LOGGER
from .simulation import mode_amplitude, mode_poses, real_mode_shape

MODE_PERIOD = 1.5  # s of wall time per animated mode cycle
DAMPING_NOISE = 1e-9  # damping ratios below this are round-off of an undamped mode: shown as 0


class ModesPanel(QWidget):
    """Signals: ``animating(bool)``."""

    animating = Signal(bool)

    def __init__(self, document, viewport, parent=None):
        super().__init__(parent)
        self.setObjectName("modes")
        self.document, self.viewport = document, viewport
        self.linearization = None
        self.body_names: list[str] = []
        self.mode = -1
        self.amplitude = 0.0
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        row = QHBoxLayout()
        self.info = QLabel("Analysis ▸ Linearize computes the modes at the initial state or at the static "
                           "equilibrium.", self)
        self.at_equilibrium = QCheckBox("at static equilibrium", self)
        self.at_equilibrium.setToolTip("linearize at rest at the stable static equilibrium near the drawn "
                                       "configuration (found first), not at the initial state")
        self.run_button = QPushButton("Linearize", self)
        self.run_button.clicked.connect(self.linearize)
        self.stop_button = QPushButton("Stop mode animation", self)
        self.stop_button.clicked.connect(self.stop_animation)
        row.addWidget(self.info, 1)
        row.addWidget(self.at_equilibrium)
        row.addWidget(self.run_button)
        row.addWidget(self.stop_button)
        layout.addLayout(row)
        self.table = QTableWidget(0, 4, self)
        self.table.setHorizontalHeaderLabels(["Mode", "Frequency [Hz]", "Damping ratio", "Stability"])
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.itemSelectionChanged.connect(self._on_row)
        layout.addWidget(self.table, 1)
        self._timer = QTimer(self)
        self._timer.setInterval(20)
        self._timer.timeout.connect(self._tick)
        self._start = 0.0
        document.model_replaced.connect(self.clear)

    # ---- public API ---------------------------------------------------------------------------
    def linearize(self) -> bool:
        """Linearize the document's model (Cartesian coordinates), at its initial state or at the
        static equilibrium ("at static equilibrium" checked), and list its modes."""
        self.stop_animation()
        model = self.document.model.copy()
        equilibrium = self.at_equilibrium.isChecked()
        try:
            lin = solver.linearize(model, state="equilibrium" if equilibrium else None, formulation="cartesian")
        except (solver.SolverError, solver.ModelError) as exc:
            message = getattr(exc, "message", "") or str(exc)
            LOGGER.error("Linearization failed: %s", message)
            self.info.setText(f"Linearization failed: {message}")
            return False
        self.linearization = lin
        self.body_names = list(model.bodies)  # rigid bodies: the first 7·nb coordinates
        freqs = np.asarray(lin.frequencies_hz, float)
        zetas = np.asarray(lin.damping_ratios, float)
        zetas = np.where(np.abs(zetas) < DAMPING_NOISE, 0.0, zetas)     # an undamped mode's round-off is 0
        unstable = np.asarray(lin.unstable, bool)
        self.table.setRowCount(len(freqs))
        for i, (f, z, bad) in enumerate(zip(freqs, zetas, unstable)):
            for col, text in enumerate((str(i + 1), f"{f:.6g}", f"{z:.4g}", "unstable" if bad else "")):
                self.table.setItem(i, col, QTableWidgetItem(text))
        warning = f", {np.count_nonzero(unstable)} unstable" if unstable.any() else ""
        where = "the static equilibrium" if equilibrium else f"t = {getattr(lin, 't', 0.0) or 0.0:g} s"
        self.info.setText(f"{len(freqs)} mode(s){warning} at {where}; select a row to animate it.")
        LOGGER.info("Linearized: %s", ", ".join(f"{f:.4g} Hz (ζ = {z:.3g}{', unstable' if bad else ''})"
                                                for f, z, bad in zip(freqs, zetas, unstable)))
        if unstable.any():
            LOGGER.warning("Linearization: %d unstable mode(s) (growing in time) at this state",
                           np.count_nonzero(unstable))
        return True

    def clear(self):
        self.stop_animation()
        self.linearization = None
        self.table.setRowCount(0)

    def select_mode(self, index: int):
        self.table.selectRow(index)

    def pose_at(self, s: float) -> dict:
        """Body poses of the selected mode at phase value s ∈ [−1, 1]."""
        lin = self.linearization
        shape = real_mode_shape(np.asarray(lin.mode_shapes)[:, self.mode])
        poses = mode_poses(lin.q, self.amplitude * shape, self.body_names, s)
        poses.update({b: (r, A) for b, (r, A, _) in self.beams_at(s).items()})
        return poses

    def beams_at(self, s: float) -> dict:
        """{flexible body: (r, A, u)} of the selected mode at phase value s (what
        :meth:`app.viewport.scene.Scene.set_beams` draws); {} for a rigid model."""
        return self.linearization.flexible_poses(self.mode, s * self.amplitude)

    def stop_animation(self):
        if self._timer.isActive():
            self._timer.stop()
            self.viewport.set_animating(False)
            self.viewport.reset_poses()
            self.animating.emit(False)

    # ---- helpers ------------------------------------------------------------------------------
    def _on_row(self):
        rows = self.table.selectionModel().selectedRows() if self.table.selectionModel() else []
        if not rows or self.linearization is None:
            return
        self.mode = rows[0].row()
        self.amplitude = self._amplitude(20.0 * self.viewport.scene.glyph)
        self._start = time.perf_counter()
        if not self._timer.isActive():
            self.viewport.set_animating(True)
            self._timer.start()
            self.animating.emit(True)
        self._tick()

    def _amplitude(self, extent: float) -> float:
        """Scale of the selected mode (module docstring): :func:`mode_amplitude` of the rigid
        bodies' and floating frames' coordinates, reduced if a node's elastic displacement is larger."""
        lin = self.linearization
        frames = 7 * (len(self.body_names) + len(lin.flexible_names))
        shape = real_mode_shape(np.asarray(lin.mode_shapes)[:, self.mode])[:frames]
        amplitude = mode_amplitude(shape, extent, frames // 7)
        elastic = max((np.abs(np.real(du[self.mode])).max(initial=0.0) for du in lin.node_modes), default=0.0)
        if elastic > 0:
            amplitude = min(amplitude, 0.1 * extent / elastic) if amplitude > 0 else 0.1 * extent / elastic
        return amplitude

    def show_phase(self, s: float):
        """Draw the selected mode at phase value s ∈ [−1, 1] (bodies moved, beams bent)."""
        self.viewport.set_body_poses(self.pose_at(s), True, self.beams_at(s))

    def _tick(self):
        phase = (time.perf_counter() - self._start) / MODE_PERIOD
        self.show_phase(math.sin(2.0 * math.pi * phase))
