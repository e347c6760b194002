"""Result plots (pyqtgraph) in bottom docks: the selection plot (a joint's reaction force and torque,
a driver's driving force, a body's position/velocity/acceleration; pinned selections overlaid), the
energy panel, the modal-coordinates panel (flexible bodies) and the diagnostics panel.

Every plot has a vertical time cursor that follows the animation (:meth:`TimePlots.set_cursor`);
a click in a plot emits ``time_clicked(t)`` (the window moves the animation there).  Results of a
model edited since the run are *stale* (:meth:`TimePlots.set_stale`): a banner says so and the
plots are greyed until the next run.  Each panel
exports to PNG, SVG (Qt's SVG generator; pyqtgraph's own SVG exporter fails with this Qt) and CSV.

Every vertical axis carries its unit, and so does every column of the CSV export.  Moving the mouse
over a plot shows a read-out of its curves at that time.  The selection plot draws values below
``NOISE_FLOOR`` times the run's scale of that quantity (the largest magnitude over all joints,
drivers or bodies and the whole run) as zero, so round-off (1e-15 N·m in a planar model's
out-of-plane torque) is not auto-scaled into spikes; the data and the CSV keep the computed values.
"""
from __future__ import annotations

import csv

import numpy as np
import pyqtgraph as pg
import pyqtgraph.exporters  # noqa: F401  (registers pg.exporters)
from PySide6.QtCore import QRect, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QMenu, QPushButton, QToolButton, QVBoxLayout, QWidget

from . import dialogs
from .log_panel import LOGGER

pg.setConfigOptions(antialias=True, background="w", foreground="k")

COMPONENT_COLORS = {"x": (214, 39, 40), "y": (44, 160, 44), "z": (31, 119, 180), "mag": (30, 30, 30)}
SERIES_COLORS = [(31, 119, 180), (214, 39, 40), (44, 160, 44), (148, 103, 189), (255, 127, 14),
                 (140, 86, 75), (227, 119, 194), (23, 190, 207)]
STYLES = [Qt.PenStyle.SolidLine, Qt.PenStyle.DashLine, Qt.PenStyle.DotLine, Qt.PenStyle.DashDotLine]
PARTITION_LEVELS = {"lu": 0, "qr": 1, "svd": 2, "kinematic": 3}
CURSOR_PEN = pg.mkPen((230, 120, 0), width=1.5)
WARNING_COLOR = "#b00020"
NOISE_FLOOR = 1e-9      # relative to the run's scale of a quantity: smaller values are drawn as zero
STALE_OPACITY = 0.35
STALE_TEXT = "⚠ The model changed after this run: these results are out of date. Run again (F5)."
NONUNIQUE = "not unique"   # legend/title mark of reaction components redundant constraints leave undetermined


class TimePlots(QWidget):
    """Stacked plots over time with a shared time axis, a cursor in each and export.

    ``curves`` maps a label ("crank_pin Fx", "kinetic", …) to its ``PlotDataItem``.
    Signals: ``time_clicked(t)``.
    """

    time_clicked = Signal(float)

    def __init__(self, title: str, parent=None):
        super().__init__(parent)
        self.title = title
        self.setObjectName(title.lower().replace(" ", "_") + "_plots")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.setSpacing(2)
        self.controls = QHBoxLayout()
        layout.addLayout(self.controls)
        self.info = QLabel("Run a simulation to see results.", self)
        self.controls.addWidget(self.info, 1)
        self.export_button = QToolButton(self)
        self.export_button.setText("Export")
        self.export_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        menu = QMenu(self.export_button)
        menu.addAction("PNG image…", lambda: self._export("png"))
        menu.addAction("SVG image…", lambda: self._export("svg"))
        menu.addAction("CSV table…", lambda: self._export("csv"))
        self.export_button.setMenu(menu)
        self.controls.addWidget(self.export_button)
        self.stale = False
        self.stale_banner = QLabel(STALE_TEXT, self)
        self.stale_banner.setObjectName("staleBanner")
        self.stale_banner.setWordWrap(True)
        self.stale_banner.setStyleSheet("background: #fff3cd; color: #664d03; padding: 3px;")
        self.stale_banner.hide()
        layout.addWidget(self.stale_banner)
        self.graphics = pg.GraphicsLayoutWidget(self)
        layout.addWidget(self.graphics, 1)
        self.plots: list[pg.PlotItem] = []
        self.cursors: list[pg.InfiniteLine] = []
        self.curves: dict[str, pg.PlotDataItem] = {}
        self.rows: dict[str, pg.PlotItem] = {}
        self.units: dict[int, str] = {}               # id(plot) → unit of its vertical axis
        self._given: dict[str, tuple] = {}            # label → (x, y) as given (before the noise floor)
        self.columns = 2
        self._stale: dict[str, pg.PlotDataItem] = {}
        self.cursor_time = 0.0
        self.readout = QLabel(self)
        self.readout.setObjectName("cursorReadout")
        self.readout.setWordWrap(True)
        layout.addWidget(self.readout)
        self.graphics.scene().sigMouseClicked.connect(self._on_click)
        self.graphics.scene().sigMouseMoved.connect(self._on_move)

    # ---- public API ---------------------------------------------------------------------------
    def clear_plots(self):
        self._stale = {}
        self.graphics.clear()
        self.plots, self.cursors, self.curves, self.rows, self.units, self._given = [], [], {}, {}, {}, {}
        self.readout.clear()

    def set_rows(self, rows, columns: int = 2):
        """Plots for ``rows`` = [(key, title, unit, log_y)], left to right in ``columns`` columns, then
        top to bottom.  Plots of an unchanged
        layout are kept and only emptied (creating a pyqtgraph plot costs ~50 ms)."""
        self.drop_stale()
        if [r[0] for r in rows] == list(self.rows) and columns == self.columns:
            self._stale, self.curves = self.curves, {}  # reused by add_curve, the rest dropped later
            QTimer.singleShot(0, self.drop_stale)
            return self.rows
        self.clear_plots()
        self.columns = columns
        for key, title, unit, log_y in rows:
            self.rows[key] = self.add_plot(title, unit, log_y)
        return self.rows

    def add_plot(self, title: str, unit: str = "", log_y: bool = False) -> pg.PlotItem:
        """A new plot below the others, time-linked to the first."""
        n = len(self.plots)
        plot = self.graphics.addPlot(row=n // self.columns, col=n % self.columns)
        plot.setTitle(title, size="9pt")
        plot.showGrid(x=True, y=True, alpha=0.25)
        if unit and "," not in unit and unit != "1":
            plot.setLabel("left", units=unit)           # SI prefixes chosen by pyqtgraph (kN, mm)
        elif unit:                                      # dimensionless or mixed: the unit as text
            plot.setLabel("left", unit)
        self.units[id(plot)] = unit
        plot.setLogMode(y=log_y)
        legend = plot.addLegend(offset=(1, 1), labelTextSize="8pt", verSpacing=-8, colCount=4)
        legend.setBrush(pg.mkBrush(255, 255, 255, 200))
        plot.setMenuEnabled(False)
        plot.setOpacity(STALE_OPACITY if self.stale else 1.0)
        if self.plots:
            plot.setXLink(self.plots[0])
        cursor = pg.InfiniteLine(pos=self.cursor_time, angle=90, pen=CURSOR_PEN, movable=False)
        plot.addItem(cursor, ignoreBounds=True)
        self.plots.append(plot)
        self.cursors.append(cursor)
        plot.setLabel("bottom", "time", units="s")
        return plot

    def add_curve(self, plot: pg.PlotItem, label: str, x, y, color,
                  style=Qt.PenStyle.SolidLine, scale=None) -> pg.PlotDataItem:
        """A curve (reused if ``label`` was drawn before); ``scale``: the run's scale of this
        quantity, values below NOISE_FLOOR·scale are drawn as zero."""
        pen = pg.mkPen(color, width=1.6, style=style)
        x, y = np.asarray(x, float), np.asarray(y, float)
        self._given[label] = (x, y)
        if scale is not None:
            y = noise_floor(y, scale)
        item = self._stale.pop(label, None)
        if item is not None and item.getViewBox() is plot.vb:
            item.setData(x, y, pen=pen)
        else:
            if item is not None:
                self._remove(item)
            item = plot.plot(x, y, pen=pen, name=label)
        self.curves[label] = item
        return item

    def drop_stale(self):
        """Remove the curves a refresh did not reuse."""
        for label, item in self._stale.items():
            self._remove(item)
            self._given.pop(label, None)
        self._stale = {}

    def _remove(self, item):
        for plot in self.plots:
            if item in plot.listDataItems():
                plot.removeItem(item)
                plot.legend.removeItem(item)

    def set_stale(self, stale: bool):
        """Mark the results out of date (banner, greyed plots) or current again."""
        self.stale = bool(stale)
        self.stale_banner.setVisible(self.stale)
        for plot in self.plots:
            plot.setOpacity(STALE_OPACITY if self.stale else 1.0)

    def set_cursor(self, t: float):
        self.cursor_time = float(t)
        for cursor in self.cursors:
            cursor.setValue(self.cursor_time)

    def curve_data(self, label: str):
        """(x, y) arrays of a curve, as given (before the noise floor and a log axis)."""
        return self._given[label]

    def drawn_data(self, label: str):
        """(x, y) arrays of a curve as drawn (after the noise floor)."""
        item = self.curves[label]
        return item.xData, item.yData

    def unit_of(self, label: str) -> str:
        """The unit of a curve (of its plot's vertical axis)."""
        item = self.curves[label]
        return next(self.units[id(p)] for p in self.plots if item in p.listDataItems())

    def readout_at(self, plot: pg.PlotItem, t: float) -> str:
        """'t = … s' and each curve of ``plot`` at time ``t`` as drawn (linear between output points)."""
        unit = self.units.get(id(plot), "")
        parts = [f"t = {t:.6g} s"]
        for label, item in self.curves.items():
            if item in plot.listDataItems():
                x, y = item.xData, item.yData
                if x is not None and len(x) and x[0] <= t <= x[-1]:
                    parts.append(f"{label} = {float(np.interp(t, x, y)):.6g}" + (f" {unit}" if unit else ""))
        return " · ".join(parts)

    def export_png(self, path: str):
        exporter = pg.exporters.ImageExporter(self.graphics.scene())
        exporter.parameters()["width"] = max(self.graphics.width(), 800)
        exporter.export(path)

    def export_svg(self, path: str):
        from PySide6.QtSvg import QSvgGenerator
        size = self.graphics.size()
        generator = QSvgGenerator()
        generator.setFileName(path)
        generator.setSize(QSize(size.width(), size.height()))
        generator.setViewBox(QRect(0, 0, size.width(), size.height()))
        generator.setTitle(self.title)
        painter = QPainter(generator)
        self.graphics.render(painter)
        painter.end()
        del painter, generator

    def export_csv(self, path: str):
        """Curves sharing a time axis go in one block of columns (time first); blocks side by side."""
        groups: list[tuple[np.ndarray, list[tuple[str, np.ndarray]]]] = []
        for label in self.curves:
            x, y = self._given[label]
            unit = self.unit_of(label)
            label = f"{label} [{unit}]" if unit else label
            for gx, members in groups:
                if len(gx) == len(x) and np.array_equal(gx, x):
                    members.append((label, y))
                    break
            else:
                groups.append((x, [(label, y)]))
        header, columns = [], []
        for k, (x, members) in enumerate(groups):
            header.append("t [s]" if k == 0 else f"t [s] ({members[0][0]})")
            columns.append(x)
            for label, y in members:
                header.append(label)
                columns.append(y)
        rows = max((len(c) for c in columns), default=0)
        with open(path, "w", newline="", encoding="utf-8") as f:
            writer = csv.writer(f)
            writer.writerow(header)
            for i in range(rows):
                writer.writerow([repr(float(c[i])) if i < len(c) else "" for c in columns])

    # ---- helpers ------------------------------------------------------------------------------
    def _export(self, kind):
        filters = {"png": "PNG images (*.png)", "svg": "SVG images (*.svg)", "csv": "CSV tables (*.csv)"}
        path = dialogs.save_file_path(self, f"Export {self.title}", f"{self.objectName()}.{kind}", filters[kind])
        if not path:
            return
        try:
            getattr(self, f"export_{kind}")(path)
            LOGGER.info("%s plot exported to %s", self.title, path)
        except (OSError, RuntimeError, ValueError) as exc:
            LOGGER.error("Cannot export %s: %s", path, exc)

    def _on_move(self, pos):
        for plot in self.plots:
            if plot.vb.sceneBoundingRect().contains(pos):
                self.readout.setText(self.readout_at(plot, float(plot.vb.mapSceneToView(pos).x())))
                return

    def _on_click(self, event):
        if event.button() != Qt.MouseButton.LeftButton:
            return
        pos = event.scenePos()
        for plot in self.plots:
            if plot.vb.sceneBoundingRect().contains(pos):
                t = plot.vb.mapSceneToView(pos).x()
                self.time_clicked.emit(float(t))
                return


class SelectionPlots(TimePlots):
    """Plots of the selected element: joint → reaction force & torque (global or joint frame) and
    their magnitudes; driver → driving force; body → position, velocity, acceleration.  Pinned
    elements stay and are overlaid (one line style per element).

    Reaction components that are not unique (``Results.nonunique_components_in(frame)``: redundant
    constraints leave them undetermined, the solver shows the minimum-norm multipliers, one of
    infinitely many distributions — e.g. the out-of-plane components of a planar loop built with
    3D joints) get "(not unique)" after their legend entries (and their magnitude's), the red plot
    title names them, and a red warning label above the plots gives the solver's sentences.  Unique
    components — in-plane forces, driving torques — are not marked."""

    def __init__(self, driver_unit=lambda name: "", parent=None):
        """``driver_unit(name)``: "N" or "N·m", the unit of a driver's generalized force."""
        super().__init__("Plot", parent)
        self.driver_unit = driver_unit
        self.results = None
        self._scales: dict[str, float] = {}
        self.selected = ""     # the selection, plotted when it has results (also those of a later run)
        self.current = ""
        self.pinned: list[str] = []
        self.frame = QComboBox(self)
        self.frame.addItem("global axes", "global")
        self.frame.addItem("joint axes", "joint")
        self.frame.setToolTip("Axes of the reaction force and torque components")
        self.frame.currentIndexChanged.connect(lambda _: self.refresh())
        self.pin_button = QPushButton("Pin", self)
        self.pin_button.setToolTip("Keep this element's curves while selecting others (overlay)")
        self.pin_button.clicked.connect(self.pin)
        self.unpin_button = QPushButton("Clear pins", self)
        self.unpin_button.clicked.connect(self.clear_pins)
        for w in (self.frame, self.pin_button, self.unpin_button):
            self.controls.insertWidget(self.controls.count() - 1, w)
        self.warning = QLabel(self)
        self.warning.setObjectName("nonuniqueWarning")
        self.warning.setWordWrap(True)
        self.warning.setStyleSheet(f"color: {WARNING_COLOR}; font-weight: bold;")
        self.warning.hide()
        self.layout().insertWidget(1, self.warning)
        self.refresh()

    # ---- public API ---------------------------------------------------------------------------
    @property
    def reaction_frame(self) -> str:
        return self.frame.currentData()

    def set_reaction_frame(self, frame: str):
        self.frame.setCurrentIndex(self.frame.findData(frame))

    def set_results(self, results):
        self.results = results
        self._scales = {}
        if results is not None:
            self.pinned = [n for n in self.pinned if self.kind(n)]
        self.current = self.selected if self.kind(self.selected) else ""
        self.refresh()

    def show_element(self, name: str):
        """Plot ``name`` (with the pinned ones); names without results are ignored."""
        self.selected = name
        self.current = name if self.kind(name) else ""
        self.refresh()

    def pin(self):
        if self.current and self.current not in self.pinned:
            self.pinned.append(self.current)
            self.refresh()

    def clear_pins(self):
        self.pinned = []
        self.refresh()

    def kind(self, name: str) -> str:
        """'joint', 'driver', 'body' or '' (not in the results)."""
        r = self.results
        if r is None or not name:
            return ""
        if name in r.joint_names:
            return "joint"
        if name in r.driver_names:
            return "driver"
        if name in r.body_names:
            return "body"
        return ""

    def nonunique(self) -> dict[str, list[str]]:
        """{shown joint or driver: its non-unique components} in the plotted axes (only elements
        with at least one)."""
        if self.results is None:
            return {}
        flagged = self.results.nonunique_components_in(self.reaction_frame)
        return {n: flagged[n] for n in self.shown() if n in flagged and self.kind(n) in ("joint", "driver")}

    def flagged_labels(self, name: str) -> set[str]:
        """Curve labels of ``name`` that are not unique ("B Fz", "B |F|", "B Tx", or the driver's name)."""
        comps = self.nonunique().get(name, [])
        if comps and self.kind(name) == "driver":
            return {name}
        labels = set()
        for comp in comps:
            kind, axis = comp.split()
            sym = "F" if kind == "force" else "T"
            labels |= {f"{name} {sym}{axis}", f"{name} |{sym}|"}
        return labels

    def shown(self) -> list[str]:
        names = list(self.pinned)
        if self.current and self.current not in names:
            names.append(self.current)
        return names

    def refresh(self):
        names = self.shown()
        self._show_warning()
        if self.results is None or not names:
            self.clear_plots()
        if self.results is None:
            self.info.setText("Run a simulation to see results.")
            return
        if not names:
            self.info.setText("Click a joint, driver or body (viewport or tree) to plot it.")
            return
        pinned = f" · pinned: {', '.join(self.pinned)}" if self.pinned else ""
        self.info.setText(f"{', '.join(names)}{pinned}")
        kinds = {self.kind(n) for n in names}
        t = self.results.t
        multi = len(names) > 1
        rows = []
        if "joint" in kinds:
            rows += [("force", "Reaction force", "N", False), ("torque", "Reaction torque", "N·m", False)]
        driver_units = sorted({self.driver_unit(n) for n in names if self.kind(n) == "driver"})
        rows += [(f"driver {u}", "Driving torque" if u == "N·m" else "Driving force", u, False) for u in driver_units]
        if "body" in kinds:
            rows += [("position", "Position (CM)", "m", False), ("velocity", "Velocity (CM)", "m/s", False),
                     ("acceleration", "Acceleration (CM)", "m/s²", False)]
        plots = self.set_rows(rows, columns=min(len(rows), 3 if "body" in kinds else 2))
        for key, title, _, _ in rows:
            marked = self._row_flags(key, names)
            mark = f" — {NONUNIQUE}: {'; '.join(marked)}" if marked else ""
            plots[key].setTitle(title + mark, size="9pt", color=WARNING_COLOR if mark else "k")
        for k, name in enumerate(names):
            style = STYLES[k % len(STYLES)]
            kind = self.kind(name)
            if kind == "joint":
                F, T = self.results.joint_reaction(name, frame=self.reaction_frame)
                for key, values, sym in (("force", F, "F"), ("torque", T, "T")):
                    self._components(plots[key], name, sym, t, values, style, multi, k, scale=self.scale(key))
            elif kind == "driver":
                unit = self.driver_unit(name)
                item = self.add_curve(plots[f"driver {unit}"], name, t, self.results.driver_force(name),
                                      SERIES_COLORS[k % len(SERIES_COLORS)], style, scale=self.scale(f"driver {unit}"))
                if name in self.flagged_labels(name):
                    plots[f"driver {unit}"].legend.getLabel(item).setText(f"{name} ({NONUNIQUE})")
            elif kind == "body":
                for key, getter, sym in (("position", self.results.body_position, "r"),
                                         ("velocity", self.results.body_velocity, "v"),
                                         ("acceleration", self.results.body_acceleration, "a")):
                    self._components(plots[key], name, sym, t, getter(name), style, multi, k,
                                     magnitude=key != "position", scale=self.scale(key))

    def scale(self, key: str) -> float:
        """The run's scale of a plotted quantity, over the whole run:

        - "force" (and drivers in N): the largest reaction or driving force F;
        - "torque" (and drivers in N·m): the largest of the reaction and driving torques and F·L,
          L the extent of the bodies' CM paths (so a planar model whose torques are all round-off
          still gets the scale of its forces' moments);
        - "position", "velocity", "acceleration": the largest over all bodies."""
        key = {"driver N": "force", "driver N·m": "torque"}.get(key, key)
        if key not in self._scales:
            r = self.results
            if key in ("force", "torque"):
                unit = "N" if key == "force" else "N·m"
                arrays = [r.joint_reaction(j)[key == "torque"] for j in r.joint_names]
                arrays += [r.driver_force(d) for d in r.driver_names if self.driver_unit(d) == unit]
                extra = self.scale("force") * _extent(r) if key == "torque" else 0.0
            else:
                getter = {"position": r.body_position, "velocity": r.body_velocity,
                          "acceleration": r.body_acceleration}.get(key)
                arrays = [getter(b) for b in r.body_names] if getter else []
                extra = 0.0
            self._scales[key] = max([_largest(a) for a in arrays] + [extra])
        return self._scales[key]

    # ---- helpers ------------------------------------------------------------------------------
    def _row_flags(self, key: str, names) -> list[str]:
        """"B Fz, Fx" per shown element with non-unique components in plot row ``key``."""
        prefix = {"force": "F", "torque": "T"}.get(key)
        out = []
        for name in names:
            labels = self.flagged_labels(name)
            if prefix is None:
                if key.startswith("driver") and name in labels:
                    out.append(name)
                continue
            axes = [a for a in "xyz" if f"{name} {prefix}{a}" in labels]
            if axes:
                out.append(f"{name} " + ", ".join(prefix + a for a in axes))
        return out

    def _show_warning(self):
        flagged = self.nonunique()
        if flagged:
            messages = self.results.nonunique_messages
            sentences = [messages.get(n, f"reactions of {n} are not unique") for n in flagged]
            self.warning.setText(
                "⚠ " + "; ".join(sentences) + ". The model has redundant constraints: the components "
                f"marked \"{NONUNIQUE}\" are the minimum-norm solution, one of infinitely many force "
                "distributions (their resultant on each body is exact); the other components are unique.")
        self.warning.setVisible(bool(flagged))

    def _components(self, plot, name, sym, t, values, style, multi, k, magnitude=True, scale=None):
        values = np.asarray(values, float)
        labels = [(f"{name} {sym}{axis}", values[:, i], COMPONENT_COLORS[axis]) for i, axis in enumerate("xyz")]
        if magnitude:
            labels.append((f"{name} |{sym}|", np.linalg.norm(values, axis=1), COMPONENT_COLORS["mag"]))
        flagged = self.flagged_labels(name)
        for label, y, color in labels:
            item = self.add_curve(plot, label, t, y, color, style, scale=scale)
            plot.legend.getLabel(item).setText(label + (f" ({NONUNIQUE})" if label in flagged else ""))


class EnergyPlots(TimePlots):
    """Kinetic, potential, strain and total energy; the relative change of the total: a numerical
    drift in a conservative model, the work of the drivers in a driven one (labelled so)."""

    def __init__(self, parent=None):
        super().__init__("Energy", parent)
        self.set_results(None)

    def set_results(self, results):
        plots = self.set_rows([("energy", "Energy", "J", False), ("drift", "Relative drift of the total energy", "1",
                                                                     False)])
        if results is None:
            self.info.setText("Run a simulation to see the energy.")
            return
        t, e = results.t, results.energy
        for k, key in enumerate(("kinetic", "potential", "strain", "total")):
            if key in e:
                self.add_curve(plots["energy"], key, t, e[key], SERIES_COLORS[k], width_style(key))
        change = relative_drift(np.asarray(e["total"], float), e)
        driven = bool(results.driver_names)
        label = "driver work" if driven else "drift"
        plots["drift"].setTitle("Work of the drivers: relative change of the total energy" if driven
                                else "Relative drift of the total energy", size="9pt")
        self.add_curve(plots["drift"], label, t, change, SERIES_COLORS[4])
        if not len(change):
            self.info.setText("")
        elif driven:
            self.info.setText(f"the drivers ({', '.join(results.driver_names)}) do work: the total energy changes "
                              f"by up to {np.abs(change).max():.3g} of its scale (not a numerical drift)")
        else:
            self.info.setText(f"max |relative drift of the total| = {np.abs(change).max():.3g}")


class DiagnosticsPlots(TimePlots):
    """Constraint violation, conditioning of the dependent block (warns before singular positions),
    integrator step size and the active partitioning method over time."""

    def __init__(self, parent=None):
        super().__init__("Diagnostics", parent)
        self.set_results(None)

    def set_results(self, results):
        from .simulation import NEAR_SINGULAR
        first = not self.rows
        plots = self.set_rows([("violation", "Constraint violation max |Φ|", "m, rad", True),
                               ("conditioning", "Conditioning σ_min / σ_min(partition)", "1", False),
                               ("step", "Step size", "s", True), ("partition", "Partitioning method", "", False)])
        if first:
            warn = pg.InfiniteLine(pos=NEAR_SINGULAR, angle=0, pen=pg.mkPen((200, 0, 0), style=Qt.PenStyle.DashLine),
                                   label="near-singular", labelOpts={"position": 0.05, "color": (200, 0, 0)})
            plots["conditioning"].addItem(warn, ignoreBounds=True)
            plots["partition"].getAxis("left").setTicks([[(v, k) for k, v in PARTITION_LEVELS.items()]])
            plots["partition"].setYRange(-0.3, 3.3)
        if results is None:
            self.info.setText("Run a simulation to see solver diagnostics.")
            return
        t = results.t
        viol = np.maximum(np.asarray(results.constraint_violation, float), 1e-300)
        self.add_curve(plots["violation"], "constraint violation", t, viol, SERIES_COLORS[0])
        cond = np.asarray(results.conditioning, float)
        self.add_curve(plots["conditioning"], "conditioning", t, cond, SERIES_COLORS[1])
        th, h = results.step_sizes
        if len(th):
            self.add_curve(plots["step"], "step size", th, np.maximum(np.asarray(h, float), 1e-300), SERIES_COLORS[2])
        levels = np.array([PARTITION_LEVELS.get(m, -1) for m in results.partition_method], float)
        self.add_curve(plots["partition"], "partition", t[: len(levels)], levels, SERIES_COLORS[3])
        low = np.flatnonzero(cond < NEAR_SINGULAR)
        self.info.setText(f"near-singular from t = {t[low[0]]:.4g} s (min {cond.min():.2g})" if low.size else
                          f"max |Φ| = {viol.max():.2g} · min conditioning {cond.min():.2g}" if len(cond) else "")


class ModalPlots(TimePlots):
    """Modal coordinates a_k(t) of each flexible body (one plot per body, one curve per mode;
    mass-normalized free–free modes, so a_k is in √kg·m)."""

    def __init__(self, parent=None):
        super().__init__("Modal coordinates", parent)
        self.set_results(None)

    def set_results(self, results):
        bodies = list(results.flexible_body_names) if results is not None else []
        plots = self.set_rows([(b, f"{b}: modal coordinates", "√kg·m", False) for b in bodies], columns=2)
        if results is None:
            self.info.setText("Run a simulation of a model with flexible bodies to see their modal coordinates.")
            return
        if not bodies:
            self.info.setText("The model has no flexible bodies.")
            return
        for b in bodies:
            a = np.asarray(results.modal_coordinates(b), float)
            for k in range(a.shape[1]):
                self.add_curve(plots[b], f"{b} a{k + 1}", results.t, a[:, k], SERIES_COLORS[k % len(SERIES_COLORS)])
        self.info.setText(f"{len(bodies)} flexible bod{'y' if len(bodies) == 1 else 'ies'}: "
                          + ", ".join(f"{b} ({results.modal_coordinates(b).shape[1]} modes)" for b in bodies))


def _largest(values) -> float:
    """The largest magnitude in a history of scalars [t] or of vectors [t, 3]."""
    a = np.asarray(values, float)
    a = np.linalg.norm(a, axis=1) if a.ndim == 2 else np.abs(a)
    return float(a.max(initial=0.0))


def _extent(results) -> float:
    """Diagonal of the box around all bodies' CM positions over the run (m)."""
    points = [np.asarray(results.body_position(b), float) for b in results.body_names]
    if not points:
        return 0.0
    p = np.concatenate(points)
    return float(np.linalg.norm(p.max(axis=0) - p.min(axis=0)))


def noise_floor(values, scale: float) -> np.ndarray:
    """``values`` with entries below NOISE_FLOOR·scale in magnitude set to zero (a copy)."""
    values = np.array(values, float)
    values[np.abs(values) < NOISE_FLOOR * scale] = 0.0
    return values


def relative_drift(total, energy) -> np.ndarray:
    """(E(t) − E(0)) / scale, scale = the largest energy magnitude in the run (never 0)."""
    total = np.asarray(total, float)
    if not len(total):
        return total
    scale = max([abs(total[0])] + [float(np.abs(np.asarray(v, float)).max()) for v in energy.values() if len(v)])
    return (total - total[0]) / (scale if scale > 0 else 1.0)


def width_style(key):
    return Qt.PenStyle.DashLine if key == "total" else Qt.PenStyle.SolidLine
