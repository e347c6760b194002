"""Result plots (pyqtgraph) in bottom docks: the selection plot (a joint's reaction force and torque,
a driver's driving force, a body's position/velocity/acceleration; pinned selections overlaid), the
energy panel, the modal-coordinates panel (flexible bodies) and the diagnostics panel.

Every plot has a vertical time cursor that follows the animation (:meth:`TimePlots.set_cursor`);
a click in a plot emits ``time_clicked(t)`` (the window moves the animation there).  Results of a
model edited since the run are *stale* (:meth:`TimePlots.set_stale`): a banner says so and the
plots are greyed until the next run.  Each panel
exports to PNG, SVG (Qt's SVG generator; pyqtgraph's own SVG exporter fails with this Qt) and CSV.

Every vertical axis carries its unit, and so does every column of the CSV export.  Values are shown
in the project's display units (:meth:`TimePlots.set_unit_system`, :mod:`app.units`: mm, deg, N·mm,
…) on the axes, in the read-out and in the CSV export; curves are given in SI and converted where
they are drawn (a plot of mixed or dimensionless units stays as given).  Moving the mouse
over a plot shows a read-out of its curves at that time.  The selection plot draws values below
``NOISE_FLOOR`` times the run's scale of that quantity (the largest magnitude over all joints,
drivers or bodies and the whole run) as zero, so round-off (1e-15 N·m in a planar model's
out-of-plane torque) is not auto-scaled into spikes; the data and the CSV keep the computed values.
"""
from __future__ import annotations

import csv
import itertools

import numpy as np
import pyqtgraph as pg
import pyqtgraph.exporters  # noqa: F401  (registers pg.exporters)
from PySide6.QtCore import QRect, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QMenu, QPushButton, QToolButton, QVBoxLayout, QWidget

import solver

from . import commands, dialogs
from .contact_group_choice import ContactGroupChoice, member_force
from .log_panel import LOGGER
from .simulation import MEASURE_AXES, MEASURE_UNITS, model_measures
from .units import SI, Quantity, UnitSystem

pg.setConfigOptions(antialias=True, background="w", foreground="k")

COMPONENT_COLORS = {"x": (214, 39, 40), "y": (44, 160, 44), "z": (31, 119, 180), "mag": (30, 30, 30)}
SERIES_COLORS = [(31, 119, 180), (214, 39, 40), (44, 160, 44), (148, 103, 189), (255, 127, 14),
                 (140, 86, 75), (227, 119, 194), (23, 190, 207)]
STYLES = [Qt.PenStyle.SolidLine, Qt.PenStyle.DashLine, Qt.PenStyle.DotLine, Qt.PenStyle.DashDotLine]
PARTITION_LEVELS = {"lu": 0, "qr": 1, "svd": 2, "kinematic": 3}
CURSOR_PEN = pg.mkPen((230, 120, 0), width=1.5)
WARNING_COLOR = "#b00020"
NOISE_FLOOR = 1e-9      # relative to the run's scale of a quantity: smaller values are drawn as zero
LOG_FLOOR = 1e-16       # log plots (constraint violation in m/rad, step size in s) draw smaller values,
                        # exact zeros included, at this round-off level
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
        self.info.setWordWrap(True)     # long info lines wrap instead of widening the panel
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
        self.results = None
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
        self.units: dict[int, str] = {}               # id(plot) → (display) unit of its vertical axis
        self.quantities_of: dict[int, tuple] = {}     # id(plot) → (x, y) Quantity: SI → display
        self.unit_system: UnitSystem = SI
        self.cross: set[int] = set()                  # id(plot) of the plots against another quantity
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
        self.quantities_of = {}
        self.cross = set()
        self.readout.clear()

    def set_rows(self, rows, columns: int = 2):
        """Plots for ``rows`` = [(key, title, unit, log_y)], left to right in ``columns`` columns, then
        top to bottom.  Plots of an unchanged
        layout are kept and only emptied (creating a pyqtgraph plot costs ~50 ms)."""
        self.drop_stale()
        if [r[0] for r in rows] == list(self.rows) and columns == self.columns and all(
                self.units[id(self.rows[key])] == self.display(unit).display for key, _, unit, _ in rows):
            self._stale, self.curves = self.curves, {}  # reused by add_curve, the rest dropped later
            QTimer.singleShot(0, self.drop_stale)
            return self.rows
        self.clear_plots()
        self.columns = columns
        for key, title, unit, log_y in rows:
            self.rows[key] = self.add_plot(title, unit, log_y)
        return self.rows

    def set_unit_system(self, units: UnitSystem):
        """Show values in ``units`` (the project's display units); the plots are redrawn."""
        if (units.system, units.angles) != (self.unit_system.system, self.unit_system.angles):
            self.unit_system = units
            self.set_results(self.results)

    def display(self, si_unit: str) -> Quantity:
        """The display Quantity of an SI unit; a mixed ("m, rad") or dimensionless one stays as it is."""
        if not si_unit or si_unit == "1" or "," in si_unit or "√" in si_unit:
            return Quantity("", si_unit)
        return self.unit_system.quantity(si_unit)

    def add_plot(self, title: str, unit: str = "", log_y: bool = False, x_axis=None) -> pg.PlotItem:
        """A new plot after the others: against time (time-linked to the first such plot, with the
        time cursor) or, with ``x_axis`` = (label, unit), against another quantity (a cross plot).
        Units are SI; the axes show the display units."""
        n = len(self.plots)
        plot = self.graphics.addPlot(row=n // self.columns, col=n % self.columns)
        plot.setTitle(title, size="9pt")
        plot.showGrid(x=True, y=True, alpha=0.25)
        y_quantity = self.display(unit)
        x_quantity = self.display(x_axis[1]) if x_axis is not None else Quantity("", "s")
        self.quantities_of[id(plot)] = (x_quantity, y_quantity)
        _label_axis(plot, "left", "", y_quantity)
        self.units[id(plot)] = y_quantity.display
        plot.setLogMode(y=log_y)
        if log_y:       # decades as they are: no "(x1e+27)" scale factor on the axis
            plot.getAxis("left").enableAutoSIPrefix(False)
        _legend_above(plot)
        plot.setMenuEnabled(False)
        plot.setOpacity(STALE_OPACITY if self.stale else 1.0)
        if x_axis is not None:
            self.plots.append(plot)
            self.cross.add(id(plot))
            _label_axis(plot, "bottom", x_axis[0], x_quantity)
            return plot
        timed = [p for p in self.plots if id(p) not in self.cross]
        if timed:
            plot.setXLink(timed[0])
        cursor = pg.InfiniteLine(pos=self.cursor_time, angle=90, pen=CURSOR_PEN, movable=False)
        plot.addItem(cursor, ignoreBounds=True)
        self.plots.append(plot)
        self.cursors.append(cursor)
        plot.setLabel("bottom", "time", units="s")
        return plot

    def add_curve(self, plot: pg.PlotItem, label: str, x, y, color,
                  style=Qt.PenStyle.SolidLine, scale=None) -> pg.PlotDataItem:
        """A curve (reused if ``label`` was drawn before) of SI values, drawn in the plot's display
        units; ``scale``: the run's scale of this quantity (SI), values below NOISE_FLOOR·scale are
        drawn as zero."""
        pen = pg.mkPen(color, width=1.6, style=style)
        x, y = self.to_display(plot, x, y)
        self._given[label] = (x, y)
        if scale is not None:
            y = noise_floor(y, self.quantities_of[id(plot)][1].to_display(scale))
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

    def to_display(self, plot, x, y):
        """SI arrays ``x``, ``y`` in ``plot``'s display units."""
        qx, qy = self.quantities_of[id(plot)]
        return qx.to_display(np.asarray(x, float)), qy.to_display(np.asarray(y, float))

    def curve_data(self, label: str):
        """(x, y) arrays of a curve in display units, as given (before the noise floor and a log axis)."""
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
        """Read out the plot under the mouse at the mouse's time (a cross plot: at the cursor time)."""
        for plot in self.plots:
            if plot.vb.sceneBoundingRect().contains(pos):
                t = self.cursor_time if id(plot) in self.cross else float(plot.vb.mapSceneToView(pos).x())
                self.readout.setText(self.readout_at(plot, t))
                return

    def _on_click(self, event):
        if event.button() != Qt.MouseButton.LeftButton:
            return
        pos = event.scenePos()
        for plot in self.plots:
            if id(plot) not in self.cross and plot.vb.sceneBoundingRect().contains(pos):
                t = plot.vb.mapSceneToView(pos).x()
                self.time_clicked.emit(float(t))
                return


class SelectionPlots(TimePlots):
    """Plots of the selected element: joint → reaction force & torque (global or joint frame) and
    their magnitudes; driver → driving force; body → position, velocity, acceleration; contact
    element → its contact force on body_j (global axes, ``Results.contact_force``); contact group →
    the contact force on the member chosen in the group's boxes, from all others or one of them
    (:mod:`app.contact_group_choice`).  Pinned elements stay and are overlaid (one line style per
    element).

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
        self.group_choice = ContactGroupChoice(self)
        self.group_choice.changed.connect(self.refresh)
        for w in (self.group_choice, self.frame, self.pin_button, self.unpin_button):
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
        self.group_choice.set_results(results)
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
        """'joint', 'driver', 'body', 'contact', 'contact group' or '' (not in the results)."""
        r = self.results
        if r is None or not name:
            return ""
        if name in r.joint_names:
            return "joint"
        if name in r.driver_names:
            return "driver"
        if name in r.body_names:
            return "body"
        if name in r.contact_names:
            return "contact"
        if name in r.contact_group_names:
            return "contact group"
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
        groups = [n for n in names if self.kind(n) == "contact group"]
        self.group_choice.show_group(self.current if self.current in groups else groups[-1] if groups else "")
        if self.results is None or not names:
            self.clear_plots()
        if self.results is None:
            self.info.setText("Run a simulation to see results.")
            return
        if not names:
            self.info.setText("Click a joint, driver, body, contact or contact group (viewport or tree) to plot it.")
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
        if kinds & {"contact", "contact group"}:
            on = ["body_j"] * ("contact" in kinds) + ["the chosen member"] * ("contact group" in kinds)
            rows += [("contact", f"Contact force (on {', '.join(on)})", "N", False)]
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
            elif kind == "contact":
                self._components(plots["contact"], name, "F", t, self.results.contact_force(name), style, multi, k,
                                 scale=self.scale("contact"))
            elif kind == "contact group":
                member, partner = self.group_choice.choice(name)
                label = f"{name} on {member}" + (f" from {partner}" if partner else "")
                self._components(plots["contact"], label, "F", t, member_force(self.results, name, member, partner),
                                 style, multi, k, scale=self.scale("contact"))

    def scale(self, key: str) -> float:
        """The run's scale of a plotted quantity, over the whole run:

        - "force" (and drivers in N): the largest reaction or driving force F;
        - "torque" (and drivers in N·m): the largest of the reaction and driving torques and F·L,
          L the extent of the bodies' CM paths (so a planar model whose torques are all round-off
          still gets the scale of its forces' moments);
        - "position", "velocity", "acceleration": the largest over all bodies;
        - "contact": the largest contact force (of a pair, or a group's total on a member)."""
        key = {"driver N": "force", "driver N·m": "torque"}.get(key, key)
        if key not in self._scales:
            r = self.results
            if key in ("force", "torque"):
                unit = "N" if key == "force" else "N·m"
                arrays = [r.joint_reaction(j)[key == "torque"] for j in r.joint_names]
                arrays += [r.driver_force(d) for d in r.driver_names if self.driver_unit(d) == unit]
                extra = self.scale("force") * _extent(r) if key == "torque" else 0.0
            elif key == "contact":
                groups = r.contact_group_names
                arrays = [r.contact_pairs(c).force for c in [*r.contact_names, *groups]]
                arrays += [np.reshape(r.contact_force(g), (-1, 3)) for g in groups]
                extra = 0.0
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
        self.results = results
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
        self.results = results
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
        violation = np.asarray(results.constraint_violation, float)
        viol = np.maximum(violation, LOG_FLOOR)
        self.add_curve(plots["violation"], "constraint violation", t, viol, SERIES_COLORS[0])
        cond = np.asarray(results.conditioning, float)
        self.add_curve(plots["conditioning"], "conditioning", t, cond, SERIES_COLORS[1])
        th, h = results.step_sizes
        if len(th):
            self.add_curve(plots["step"], "step size", th, np.maximum(np.asarray(h, float), LOG_FLOOR), SERIES_COLORS[2])
        levels = np.array([PARTITION_LEVELS.get(m, -1) for m in results.partition_method], float)
        self.add_curve(plots["partition"], "partition", t[: len(levels)], levels, SERIES_COLORS[3])
        low = np.flatnonzero(cond < NEAR_SINGULAR)
        self.info.setText(f"near-singular from t = {t[low[0]]:.4g} s (min {cond.min():.2g})" if low.size else
                          f"max |Φ| = {violation.max():.2g} · min conditioning {cond.min():.2g}" if len(cond) else "")


class ModalPlots(TimePlots):
    """Modal coordinates a_k(t) of each flexible body (one plot per body, one curve per mode;
    mass-normalized free–free modes, so a_k is in √kg·m)."""

    def __init__(self, parent=None):
        super().__init__("Modal coordinates", parent)
        self.set_results(None)

    def set_results(self, results):
        self.results = results
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


TIME = "time"          # the x of a plot against time
MAX_TILE_COLUMNS = 3   # custom plots side by side, then a new row
NEW_MEASURE, ADD_MEASURE = "(new)", "Add measure"


class CustomPlots(TimePlots):
    """Plots the user composes: *tiles* side by side (up to MAX_TILE_COLUMNS a row), each showing
    quantities against time or against another quantity — an x–y cross plot, e.g. a joint's reaction
    against its angle — and the model's *measures* between two markers (:class:`solver.Measure`:
    distance, relative angle about an axis, relative velocity), plotted and exported like any other
    quantity.

    A quantity is a named output of the run (:func:`solver.output_paths`, e.g.
    ``joints.pin.reaction_force.x``, ``joints.pin.rotation``) or a measure (``measures.<name>``); its
    path labels its curve ("y vs x" in a cross plot) and its CSV column (with its unit).  A cross plot
    shows the animation time as a dot on each curve and reads its curves out at that time.  A plot
    whose curves are constant up to round-off (below NOISE_FLOOR of their size) is not auto-scaled
    into the round-off.

    The measure row adds a measure to the model or changes the one chosen in its first list (one
    undoable step each): measures are model elements, saved in the project file and shown in the
    tree, the same whether declared here or edited in the property editor.  **Declare output**
    declares the y quantity as a model output (``model.outputs``, one undoable step)."""

    def __init__(self, document, parent=None):
        """``document``: the open project (its model's markers, measures and outputs; edits are pushed
        on its undo stack)."""
        super().__init__("Custom plots", parent)
        self.document = document
        self.results = None
        self.tiles: list[tuple[str, list[str]]] = []       # (x path or TIME, [y paths])
        self.dots: dict[str, pg.ScatterPlotItem] = {}       # cross-plot curve → dot at the cursor time
        self._series: dict[str, tuple] = {}                 # cross-plot curve → (t, x, y)
        self._values: dict[str, tuple] = {}                 # quantity path → (unit, values) of the plots
        self._choices_dirty = False
        self.x_choice, self.y_choice = QComboBox(self), QComboBox(self)
        self.x_choice.setToolTip("horizontal axis: time, or a quantity for an x–y cross plot")
        self.y_choice.setToolTip("quantity to plot")
        self.new_tile_button = new_tile = QPushButton("New plot", self)
        new_tile.setToolTip("a new plot (beside the others) of the quantity against the x choice")
        new_tile.clicked.connect(lambda: self.add_tile([self.y_choice.currentText()], self.x_choice.currentText()))
        self.add_curve_button = add = QPushButton("Add curve", self)
        add.setToolTip("add the quantity to the last plot (a new plot if its x differs)")
        add.clicked.connect(lambda: self.add_curve_to_last(self.y_choice.currentText(), self.x_choice.currentText()))
        clear = QPushButton("Clear", self)
        clear.clicked.connect(self.clear_tiles)
        self.output_button = declare_output = QPushButton("Declare output", self)
        declare_output.setToolTip("declare the y quantity as an output of the model (saved with the project)")
        declare_output.clicked.connect(self._declare_output)
        for w in (QLabel("x", self), self.x_choice, QLabel("y", self), self.y_choice, new_tile, add, clear,
                  declare_output):
            self.controls.insertWidget(self.controls.count() - 1, w)
        row = QHBoxLayout()
        self.measure_choice = QComboBox(self)
        self.measure_choice.setToolTip("a new measure, or the model's measure to change")
        self.measure_choice.currentIndexChanged.connect(self._on_measure_choice)
        self.measure_kind, self.marker_i, self.marker_j, self.measure_axis = (QComboBox(self) for _ in range(4))
        self.measure_kind.addItems(list(MEASURE_UNITS))
        self.measure_kind.currentTextChanged.connect(self._on_measure_kind)
        self.marker_i.setToolTip("reference marker (ground: the global origin and axes)")
        self.measure_axis.setToolTip("angle: about this axis of the reference marker; velocity: global "
                                     "component or magnitude")
        self.measure_button = declare = QPushButton(ADD_MEASURE, self)
        declare.clicked.connect(self._declare_measure)
        for w in (QLabel("Measure", self), self.measure_choice, self.measure_kind, QLabel("from", self), self.marker_i,
                  QLabel("to", self), self.marker_j, self.measure_axis, declare):
            row.addWidget(w)
        row.addStretch(1)
        self.layout().insertLayout(1, row)
        self._on_measure_kind(self.measure_kind.currentText())
        self.set_results(None)

    # ---- public API ---------------------------------------------------------------------------
    def model(self):
        return self.document.model

    def quantities(self) -> dict:
        """{path: quantity} the current model offers: its run outputs, then its measures."""
        offered = {o.path: o for o in solver.output_paths(self.model())}
        offered.update(model_measures(self.model()))
        return offered

    def model_changed(self, event="", collection="", *_):
        """The model was edited or replaced: refill the lists now if the panel shows, else when it
        is shown (a large model offers thousands of quantities); a changed measure is redrawn."""
        self._choices_dirty = not self.isVisible()
        if not self._choices_dirty:
            self.refresh_choices()
        if collection in ("measures", "markers") and self.tiles:
            self.refresh()

    def showEvent(self, event):  # noqa: N802
        super().showEvent(event)
        if self._choices_dirty:
            self.refresh_choices()

    def refresh_choices(self):
        """Refill the quantity, measure and marker lists from the current model (the choices made stay)."""
        self._choices_dirty = False
        paths = list(self.quantities())
        markers = list(self.model().markers)
        for combo, items in ((self.x_choice, [TIME] + paths), (self.y_choice, paths),
                             (self.measure_choice, [NEW_MEASURE] + list(self.model().measures)),
                             (self.marker_i, [solver.GROUND] + markers), (self.marker_j, markers)):
            chosen = combo.currentText()
            combo.blockSignals(True)
            combo.clear()
            combo.addItems(items)
            combo.setCurrentIndex(max(combo.findText(chosen), 0))
            combo.blockSignals(False)
        self.measure_button.setText(ADD_MEASURE if self.measure_choice.currentIndex() <= 0 else "Apply")

    def add_measure(self, kind: str, marker_i: str, marker_j: str, axis: str = "") -> str:
        """Add a measure to the model (named measure1, measure2, …; one undoable step) and plot it
        against time in a new tile; its name.  ValueError names what is wrong (kind, axis, a marker
        the model does not have, the same marker twice)."""
        self._check_markers(marker_i, marker_j)
        model = self.model()
        name = next(f"measure{k}" for k in itertools.count(1) if f"measure{k}" not in model)
        self._push(lambda: commands.AddElement(model, solver.Measure(name=name, kind=kind, marker_i=marker_i,
                                                                     marker_j=marker_j, axis=axis)))
        self.add_tile([f"measures.{name}"])
        return name

    def edit_measure(self, name: str, kind: str, marker_i: str, marker_j: str, axis: str = ""):
        """Change the model's measure ``name`` (one undoable step); ValueError names what is wrong."""
        self._check_markers(marker_i, marker_j)
        self._push(lambda: commands.ReplaceElement(self.model(), solver.Measure(
            name=name, kind=kind, marker_i=marker_i, marker_j=marker_j, axis=axis)))

    def declare_output(self, path: str) -> str:
        """Declare quantity ``path`` a model output (``output1``, …; one undoable step); its name."""
        model = self.model()
        name = next(f"output{k}" for k in itertools.count(1) if f"output{k}" not in model)
        self._push(lambda: commands.AddElement(model, solver.ModelOutput(name=name, quantity=path)))
        return name

    def add_tile(self, ys, x: str = TIME) -> int:
        """A new plot of quantities ``ys`` against ``x`` (TIME or a quantity path); its index."""
        self.tiles.append((x, list(ys)))
        self.refresh()
        return len(self.tiles) - 1

    def add_curve_to_last(self, y: str, x: str = TIME):
        """Add ``y`` to the last plot when that one is against ``x``, else a new plot."""
        if self.tiles and self.tiles[-1][0] == x:
            if y not in self.tiles[-1][1]:
                self.tiles[-1][1].append(y)
            self.refresh()
        else:
            self.add_tile([y], x)

    def clear_tiles(self):
        self.tiles = []
        self.refresh()

    def set_results(self, results):
        self.results = results
        self.refresh_choices()
        self.refresh()

    def refresh(self):
        """Redraw every tile from the results (quantities the model no longer has are named in the
        info line and skipped)."""
        self.clear_plots()
        self.dots, self._series, self._values = {}, {}, {}
        if self.results is None or not self.tiles:
            self.info.setText("Run a simulation to see results." if self.results is None else
                              "Choose y (and x: time or a quantity) and press New plot; or add a measure.")
            return
        self.columns = min(len(self.tiles), MAX_TILE_COLUMNS)
        t = np.asarray(self.results.t, float)
        problems = []
        for x, ys in self.tiles:
            xs = t if x == TIME else self._history(x, problems)
            histories = [(y, self._history(y, problems)) for y in ys]
            histories = [(y, v) for y, v in histories if v is not None]
            if xs is None or not histories:
                continue
            unit = ", ".join(dict.fromkeys(self._values[y][0] for y, _ in histories))
            title = ", ".join(y for y, _ in histories) + ("" if x == TIME else f" vs {x}")
            plot = self.add_plot(title, unit, x_axis=None if x == TIME else (x, self._values[x][0]))
            _hold_constant(plot, [self.to_display(plot, t, v)[1] for _, v in histories])
            for k, (y, values) in enumerate(histories):
                color = SERIES_COLORS[k % len(SERIES_COLORS)]
                label = y if x == TIME else f"{y} vs {x}"
                self.add_curve(plot, label, xs, values, color)
                if x != TIME:
                    self._series[label] = (t, *self._given[label])
                    self.dots[label] = pg.ScatterPlotItem(size=9, brush=pg.mkBrush(*color), pen=CURSOR_PEN)
                    plot.addItem(self.dots[label], ignoreBounds=True)
        self.set_cursor(self.cursor_time)
        self.info.setText("; ".join(problems) or f"{len(self.plots)} plot{'s' * (len(self.plots) != 1)}")

    def set_cursor(self, t: float):
        super().set_cursor(t)
        for label, dot in self.dots.items():
            times, xs, ys = self._series[label]
            dot.setData([float(np.interp(t, times, xs))], [float(np.interp(t, times, ys))])

    def readout_at(self, plot: pg.PlotItem, t: float) -> str:
        """As :meth:`TimePlots.readout_at`; a cross plot gives each curve's (x, y) at time ``t``."""
        if id(plot) not in self.cross:
            return super().readout_at(plot, t)
        parts = [f"t = {t:.6g} s"]
        for label, (times, xs, ys) in self._series.items():
            if self.curves[label] in plot.listDataItems():
                parts.append(f"{label} = ({np.interp(t, times, xs):.6g}, {np.interp(t, times, ys):.6g})")
        return " · ".join(parts)

    def export_csv(self, path: str):
        """One row per output time: ``t [s]``, then each plotted quantity once (x's and y's, in plot
        order) as ``path [unit]``, in the display units."""
        header, columns = ["t [s]"], [np.asarray(self.results.t, float) if self.results is not None else []]
        for name, (unit, values) in self._values.items():
            quantity = self.display(unit)
            header.append(f"{name} [{quantity.display}]")
            columns.append(quantity.to_display(values))
        with open(path, "w", newline="", encoding="utf-8") as f:
            writer = csv.writer(f)
            writer.writerow(header)
            for row in zip(*columns):
                writer.writerow([repr(float(v)) for v in row])

    # ---- helpers ------------------------------------------------------------------------------
    def _history(self, name, problems):
        """The time history of quantity ``name`` (kept for the export); None with a problem noted."""
        if name not in self._values:
            quantity = self.quantities().get(name)
            try:
                if quantity is None:
                    raise ValueError("not in the model")
                values = np.asarray(quantity.evaluate(self.results, self.model()), float)
            except (ValueError, KeyError, IndexError, solver.MBSError) as exc:
                problems.append(f"{name}: {exc}")
                return None
            self._values[name] = (quantity.unit, values)
        return self._values[name][1]

    def _on_measure_kind(self, kind):
        self.measure_axis.clear()
        self.measure_axis.addItems([a for a in MEASURE_AXES[kind] if a])
        self.measure_axis.setEnabled(kind != "distance")
        if kind == "angle":
            self.measure_axis.setCurrentText("z")

    def _check_markers(self, *markers):
        for marker in markers:
            if marker != solver.GROUND and marker not in self.model().markers:
                raise ValueError(f"no marker named '{marker}' (add markers to the model first)")

    def _push(self, make_command):
        """Push the command ``make_command()`` builds; the model's refusal as a ValueError."""
        try:
            self.document.push(make_command())
        except solver.ModelError as exc:
            raise ValueError("; ".join(exc.problems)) from None

    def _on_measure_choice(self, index):
        """Show the chosen measure's definition (a new one keeps the lists as they are)."""
        name = self.measure_choice.currentText()
        self.measure_button.setText(ADD_MEASURE if index <= 0 else "Apply")
        if index > 0 and name in self.model().measures:
            m = self.model().measures[name]
            self.measure_kind.setCurrentText(m.kind)
            self.marker_i.setCurrentText(m.marker_i)
            self.marker_j.setCurrentText(m.marker_j)
            if m.axis:
                self.measure_axis.setCurrentText(m.axis)

    def _declare_measure(self):
        kind = self.measure_kind.currentText()
        definition = (kind, self.marker_i.currentText(), self.marker_j.currentText(),
                      self.measure_axis.currentText() if kind != "distance" else "")
        try:
            if self.measure_choice.currentIndex() > 0:
                self.edit_measure(self.measure_choice.currentText(), *definition)
            else:
                self.add_measure(*definition)
        except ValueError as exc:
            self.info.setText(f"⚠ {exc}")

    def _declare_output(self):
        try:
            name = self.declare_output(self.y_choice.currentText())
        except ValueError as exc:
            self.info.setText(f"⚠ {exc}")
            return
        self.info.setText(f"{self.y_choice.currentText()} declared as output '{name}'")


def _hold_constant(plot, histories):
    """Curves that vary by less than NOISE_FLOOR of their magnitude (a constant distance up to
    round-off) get a fixed vertical range of ±10 % of it instead of an auto-scale into the round-off."""
    y = np.concatenate(histories)
    scale = float(np.abs(y).max(initial=0.0))
    if scale > 0 and np.ptp(y) < NOISE_FLOOR * scale:
        middle = float(y.mean())
        plot.setYRange(middle - 0.1 * scale, middle + 0.1 * scale, padding=0)


def _legend_above(plot):
    """The plot's legend in the row between its title and its view box (where the unused top axis
    was), so it never covers a curve; curves named when added go into it (``plot.legend``)."""
    top = plot.getAxis("top")
    plot.layout.removeItem(top)
    top.hide()
    plot.legend = pg.LegendItem(labelTextSize="8pt", verSpacing=-8, colCount=4)
    plot.layout.addItem(plot.legend, 1, 1)


def _label_axis(plot, side, text, quantity: Quantity):
    """Name an axis and give its (display) unit: SI prefixes chosen by pyqtgraph (kN, mm) for a plain
    SI unit, the display unit as it is otherwise (mm stays mm); a dimensionless or mixed one ("1",
    "m, rad") as text."""
    unit = quantity.display
    if unit and "," not in unit and unit != "1":
        plot.getAxis(side).enableAutoSIPrefix(unit == quantity.si)
        plot.setLabel(side, text or None, units=unit)
    elif text:
        plot.setLabel(side, f"{text} [{unit}]" if unit else text)
    elif unit:
        plot.setLabel(side, unit)


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
