"""The main window: docks (model tree, properties, log, history), the 3D viewport in the centre,
project files (new, open, save, revert, recent, samples, drag-and-drop) and window persistence.
"""
from __future__ import annotations

import os

from PySide6.QtCore import Qt
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QDockWidget, QLabel, QMainWindow, QUndoView

import solver

from . import app_settings, commands, dialogs, menus
from .animation import AnimationBar, Player
from .autosave import Autosave
from .document import Document
from .editing import Editing
from .interact import InteractController
from .log_panel import LOGGER, LogPanel
from .modes import ModesPanel
from .plots import CustomPlots, DiagnosticsPlots, EnergyPlots, ModalPlots, SelectionPlots
from .run_control import SimulationController
from .simulation import driver_unit
from .properties import PropertyEditor
from .tree import ModelTree
from .units import UnitSystem
from .viewport import Viewport

APP_NAME = "MBS Studio"
BOTTOM_SHARE = 0.42   # of the window height for the bottom docks on a first launch (plots ≥ 35 %)


class MainWindow(QMainWindow):
    """The application window around one :class:`Document`."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("MainWindow")
        self.document = Document(self)
        self.autosave = Autosave(self.document, self)
        self.editing = Editing(self.document, self)
        self.editing.failed.connect(self.report_problems)
        self.viewport = Viewport(self.document, self)
        self.setCentralWidget(self.viewport)
        self.tree = ModelTree(self.document)
        self.tree.rename_requested.connect(self.editing.rename)
        self.properties = PropertyEditor(self.document)
        self.log = LogPanel()
        self.history = QUndoView(self.document.undo_stack)
        self.history.setEmptyLabel("<opened>")
        self.tree_dock = self._dock("Model", "modelDock", self.tree, Qt.DockWidgetArea.LeftDockWidgetArea)
        self.properties_dock = self._dock("Properties", "propertiesDock", self.properties,
                                          Qt.DockWidgetArea.RightDockWidgetArea)
        self.log_dock = self._dock("Log", "logDock", self.log, Qt.DockWidgetArea.BottomDockWidgetArea)
        self.history_dock = self._dock("History", "historyDock", self.history,
                                       Qt.DockWidgetArea.RightDockWidgetArea)
        self.history_dock.hide()
        self.counts = QLabel()
        self.statusBar().addPermanentWidget(self.counts)
        self.simulation = SimulationController(self)
        self.statusBar().addPermanentWidget(self.simulation.status)
        self.player = Player(self.viewport, self)
        self.viewport.pause_requested.connect(self.player.pause)
        self._play_next_results = False
        self.actions = menus.build(self)
        self._setup_results()
        self.interact = InteractController(self)
        self.setAcceptDrops(True)
        self.document.path_changed.connect(self._update_title)
        self.document.modified_changed.connect(self._update_title)
        self.document.model_replaced.connect(self._update_status)
        self.document.model_event.connect(self._update_status)
        self.resize(1280, 800)
        self.resizeDocks([self.tree_dock, self.properties_dock], [230, self.properties.sizeHint().width()],
                         Qt.Orientation.Horizontal)
        self._first_layout = not self._restore_layout()
        self._update_title()
        self._update_status()
        self.autosave.offer_recovery(self)        # an unsaved project left by a crash

    # ---- public API: docks --------------------------------------------------------------------
    def add_bottom_dock(self, title: str, object_name: str, widget) -> QDockWidget:
        """A dock in the bottom area, tabbed with the log (for plots and run panels)."""
        dock = self._dock(title, object_name, widget, Qt.DockWidgetArea.BottomDockWidgetArea)
        self.tabifyDockWidget(self.log_dock, dock)
        menus.add_dock_toggle(self, dock)
        return dock

    # ---- public API: running and results -------------------------------------------------------
    def run_simulation(self, **overrides) -> bool:
        """Simulate ▸ Run: start a background run (``overrides`` replace saved settings)."""
        if self.refuse_invalid_edits("Cannot run"):
            return False
        self.player.pause()
        self.modes.stop_animation()
        return self.simulation.run(**overrides)

    def refuse_invalid_edits(self, title: str) -> bool:
        """When a field shows an edit the model refused (so what is on screen is not what a run
        or a check would use): report it under ``title``, put the cursor there and return True."""
        invalid = self.properties.invalid_edits()
        if not invalid:
            return False
        name, message = invalid[0]
        where = self.properties.target.title
        self.report_problems(title, [f"{where}: {name} is not valid (fix or undo it): {message}"])
        self.properties.focus_field(name)
        return True

    def linearize(self):
        """Analysis ▸ Linearize: the modes table (its dock is brought to the front)."""
        self.modes_dock.show()
        self.modes_dock.raise_()
        return self.modes.linearize()

    def add_link(self):
        """Model ▸ Add Link…: the link tool (:class:`app.link_dialog.LinkDialog`, not blocking: design
        points may be clicked in the viewport meanwhile)."""
        from .link_dialog import LinkDialog
        return self._open_tool("link_dialog", LinkDialog)

    def add_contact(self):
        """Model ▸ Add Contact…: the contact picker (:class:`app.contact_dialog.ContactDialog`, not
        blocking: bodies may be clicked in the tree or the viewport meanwhile)."""
        from .contact_dialog import ContactDialog
        return self._open_tool("contact_dialog", ContactDialog)

    def _open_tool(self, attribute, cls):
        """A tool dialog (:class:`app.tool_dialog.ToolDialog`) shown afresh as ``self.<attribute>``."""
        previous = getattr(self, attribute, None)
        if previous is not None:
            if previous.isVisible():
                previous.reject()
            previous.deleteLater()
        dialog = cls(self.document, self)
        setattr(self, attribute, dialog)
        dialog.show()
        return dialog

    # ---- public API: files --------------------------------------------------------------------
    def new_project(self):
        if self.maybe_save():
            self.document.new()
            LOGGER.info("New project")

    def new_from_template(self):
        """File ▸ New from Template…: the gallery (:class:`app.template_dialog.TemplateDialog`); the
        model built opens as a new untitled project (after offering to save changes)."""
        from .template_dialog import TemplateDialog

        def opened(model):
            if self.maybe_save():
                self.document.set_model(model)
                LOGGER.info("New %s from its template", model.name)
        self.template_dialog = TemplateDialog(opened, self)
        self.template_dialog.open()
        return self.template_dialog

    def open_project(self, path: str = "") -> bool:
        """Open ``path`` (ask for one if empty) after offering to save changes."""
        if not self.maybe_save():
            return False
        path = path or dialogs.open_path(self, os.path.dirname(self.document.path))
        return bool(path) and self.load(path)

    def load(self, path: str) -> bool:
        """Open ``path`` without asking about unsaved changes; report problems."""
        try:
            self.document.open(path)
        except solver.ModelError as exc:
            LOGGER.error("Cannot open %s: %s", path, exc)
            self.report_problems(f"Cannot open {os.path.basename(path)}", exc.problems)
            return False
        app_settings.add_recent_file(self.document.path)
        LOGGER.info("Opened %s", self.document.path)
        self.autosave.offer_recovery(self)
        return True

    def import_urdf(self) -> bool:
        """File ▸ Import…: a URDF robot (its package folder asked for when it uses package://
        paths) or a MuJoCo MJCF model (a file whose root element is <mujoco>) converted into a
        project saved where the user says, then opened (docs/import.md)."""
        if not self.maybe_save():
            return False
        source = dialogs.open_file_path(self, "Import a URDF robot or a MuJoCo model",
                                        os.path.dirname(self.document.path),
                                        "Robots and models (*.urdf *.xml);;URDF robots (*.urdf);;"
                                        "MuJoCo MJCF models (*.xml);;All files (*)")
        if not source:
            return False
        title = f"Cannot import {os.path.basename(source)}"
        package_dir = None
        try:
            mjcf = solver.is_mjcf(source)
            if not mjcf and solver.urdf_needs_package_dir(source):
                package_dir = dialogs.folder_path(self, "Folder holding the packages of package:// paths",
                                                  os.path.dirname(source))
                if not package_dir:
                    return False
            out = dialogs.save_path(self, os.path.splitext(source)[0] + ".mbs.json")
            if not out:
                return False
            result = solver.import_mjcf(source, out) if mjcf else solver.import_urdf(source, out,
                                                                                    package_dir=package_dir)
        except solver.ModelError as exc:
            self.report_problems(title, exc.problems)
            return False
        except OSError as exc:
            self.report_problems(title, [f"cannot write ({exc.strerror or exc})"])
            return False
        for note in result.notes:
            LOGGER.info("Import %s: %s", os.path.basename(source), note)
        return self.load(out)

    def export_fmu(self) -> bool:
        """File ▸ Export ▸ FMU…: the open model (unsaved edits included) as an FMI 2.0 co-simulation
        FMU (solver.export_fmu, docs/fmu.md).  Builds in the GUI thread behind a wait cursor (a few
        seconds: the model's C is derived and compiled)."""
        from PySide6.QtWidgets import QApplication
        base = os.path.splitext(os.path.splitext(self.document.path)[0])[0] if self.document.path else ""
        path = dialogs.save_file_path(self, "Export FMU", (base or self.document.model.name or "model") + ".fmu",
                                      "FMI 2.0 co-simulation FMUs (*.fmu)")
        if not path:
            return False
        if not path.endswith(".fmu"):
            path += ".fmu"
        title = f"Cannot export {os.path.basename(path)}"
        QApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
        try:
            solver.export_fmu(self.document.model, path)
        except solver.ModelError as exc:
            self.report_problems(title, exc.problems)
            return False
        except (solver.SolverError, OSError) as exc:
            self.report_problems(title, [str(exc)])
            return False
        finally:
            QApplication.restoreOverrideCursor()
        LOGGER.info("Exported FMU %s", path)
        self.statusBar().showMessage(f"Exported {path}", 4000)
        return True

    def save(self) -> bool:
        if not self.document.path:
            return self.save_as()
        return self._save_to(self.document.path)

    def save_as(self) -> bool:
        """Save under a new file name; an untitled model, or one named after its old file, takes
        the new file's name (one undoable step, undone if the save fails)."""
        suggestion = self.document.path or f"{self.document.model.name}.mbs.json"
        path = dialogs.save_path(self, suggestion)
        if not path:
            return False
        renamed = self._name_after(path)
        if self._save_to(path):
            return True
        if renamed:
            self.document.undo_stack.undo()
        return False

    def revert(self):
        """Reload the file, dropping unsaved changes (after a confirmation)."""
        if not self.document.path:
            return
        if self.document.modified and not dialogs.confirm(self, "Revert", "Discard all unsaved changes?"):
            return
        self.load(self.document.path)

    def maybe_save(self) -> bool:
        """True when it is fine to drop the current project (saved, discarded or unmodified)."""
        if not self.document.modified:
            return True
        answer = dialogs.ask_save_changes(self, self._file_label())
        if answer == "save":
            return self.save()
        if answer == "discard":
            self.autosave.discard()
        return answer == "discard"

    def report_problems(self, title: str, problems: list):
        """Log and show ``problems`` (text, or :class:`solver.Problem` such as a ModelError's
        ``details``); the first Problem naming an element of the model selects it and marks its
        field in the property editor (so problems of a file that failed to open are given as text)."""
        texts = [str(p) for p in problems]
        for text in texts:
            LOGGER.warning("%s: %s", title, text)
        self.statusBar().showMessage(f"{title}: {texts[0]}" if texts else title, 8000)
        for p in problems:
            if isinstance(p, solver.Problem) and self.properties.show_problem(p):
                break
        dialogs.show_error(self, title, texts)

    # ---- Qt events ----------------------------------------------------------------------------
    def closeEvent(self, event):  # noqa: N802  (Qt API name)
        if not self.maybe_save():
            event.ignore()
            return
        self.autosave.timer.stop()
        self.autosave.discard()                   # a clean close: nothing to recover
        settings = app_settings.settings()
        settings.setValue("geometry", self.saveGeometry())
        settings.setValue("window_state", self.saveState())
        self.player.pause()
        self.modes.stop_animation()
        self.simulation.shutdown()
        self.interact.shutdown()
        self.viewport.shutdown()
        self.log.detach()
        event.accept()

    def dragEnterEvent(self, event: QDragEnterEvent):  # noqa: N802
        if _project_urls(event):
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent):  # noqa: N802
        paths = _project_urls(event)
        if paths:
            event.acceptProposedAction()
            self.open_project(paths[0])

    # ---- helpers ------------------------------------------------------------------------------
    def _setup_results(self):
        """Result panels (plot, energy, modal coordinates, diagnostics, modes), the animation bar and
        their wiring."""
        self.plots = SelectionPlots(lambda name: driver_unit(self.document.model, name))
        self.custom_plots = CustomPlots(self.document)
        self.energy = EnergyPlots()
        self.modal = ModalPlots()
        self.diagnostics = DiagnosticsPlots()
        self.modes = ModesPanel(self.document, self.viewport)
        self.plot_dock = self.add_bottom_dock("Plot", "plotDock", self.plots)
        self.custom_dock = self.add_bottom_dock("Custom plots", "customPlotsDock", self.custom_plots)
        self.energy_dock = self.add_bottom_dock("Energy", "energyDock", self.energy)
        self.modal_dock = self.add_bottom_dock("Modal coordinates", "modalDock", self.modal)
        self.diagnostics_dock = self.add_bottom_dock("Diagnostics", "diagnosticsDock", self.diagnostics)
        self.modes_dock = self.add_bottom_dock("Modes", "modesDock", self.modes)
        self.log_dock.raise_()
        self.animation_bar = AnimationBar(self, self.player)
        self.addToolBar(Qt.ToolBarArea.BottomToolBarArea, self.animation_bar)
        sim, player = self.simulation, self.player
        sim.results_changed.connect(player.set_results)
        sim.results_changed.connect(lambda r: self.tree.set_nonunique(r.nonunique_components, r.nonunique_messages)
                                    if r is not None else self.tree.set_nonunique({}))
        sim.results_changed.connect(self._autoplay)
        sim.finished.connect(self._on_run_finished)
        for panel in (self.plots, self.custom_plots, self.energy, self.modal, self.diagnostics):
            sim.stale_changed.connect(panel.set_stale)
            sim.results_changed.connect(panel.set_results)
            player.time_changed.connect(panel.set_cursor)
            panel.time_clicked.connect(player.seek)
        sim.started.connect(self._on_run_state)
        sim.finished.connect(self._on_run_state)
        self.document.selection_changed.connect(self._on_selection_for_plot)
        self.viewport.picked_part.connect(self.plots.group_choice.pick)
        self.document.model_replaced.connect(self._show_units)
        self.document.model_event.connect(lambda _e, collection, _n, detail: collection == "settings" and detail in (
            "display_units", "display_angles") and self._show_units())
        self.document.model_replaced.connect(self.custom_plots.model_changed)
        self.document.model_event.connect(self.custom_plots.model_changed)
        self.modes.animating.connect(lambda on: on and player.pause())
        player.playing_changed.connect(lambda on: on and self.modes.stop_animation())
        self._on_run_state()
        if sim.results is not None:
            sim.results_changed.emit(sim.results)

    def _show_units(self):
        """Plots in the project's display units."""
        units = UnitSystem.of(self.document.model.settings)
        for panel in (self.plots, self.custom_plots, self.energy, self.modal, self.diagnostics):
            panel.set_unit_system(units)

    def _on_run_state(self, *_):
        running = self.simulation.running
        self.actions["run"].setEnabled(not running)
        self.actions["stop"].setEnabled(running)
        has = self.simulation.results is not None
        self.actions["export_hdf5"].setEnabled(has)
        self.actions["export_csv"].setEnabled(has)

    def _on_run_finished(self, outcome):
        self._play_next_results = outcome.has_results and app_settings.autoplay()

    def _autoplay(self, results):
        """Play the results of a run that just ended (preference Simulate ▸ Play After Run)."""
        if self._play_next_results and results is not None:
            self.player.play()
        self._play_next_results = False

    def _on_selection_for_plot(self, name):
        self.plots.show_element(name)
        if self.plots.kind(name):
            self.plot_dock.show()
            self.plot_dock.raise_()

    def _dock(self, title, object_name, widget, area):
        dock = QDockWidget(title, self)
        dock.setObjectName(object_name)
        dock.setWidget(widget)
        self.addDockWidget(area, dock)
        return dock

    def _save_to(self, path) -> bool:
        stale = self.autosave.path
        try:
            self.document.save(path)
        except (OSError, solver.ModelError) as exc:
            self.report_problems("Cannot save", [str(exc)])
            return False
        self.autosave.discard(stale)
        self.autosave.discard()
        app_settings.add_recent_file(self.document.path)
        self.simulation.save_results(self.document.path)
        LOGGER.info("Saved %s", self.document.path)
        self.statusBar().showMessage(f"Saved {self.document.path}", 4000)
        return True

    def _name_after(self, path) -> bool:
        model = self.document.model
        stem = _stem(path)
        if model.name not in ("untitled", _stem(self.document.path)) or not stem or stem == model.name:
            return False
        try:
            self.document.push(commands.SetModelAttribute(model, "name", stem))
        except solver.ModelError:
            return False                           # a file name that is no valid model name: keep the name
        return True

    def _file_label(self):
        return os.path.basename(self.document.path) if self.document.path else "untitled"

    def _update_title(self, *_):
        star = "*" if self.document.modified else ""
        self.setWindowTitle(f"{self._file_label()}{star} — {APP_NAME}")

    def _update_status(self, *_):
        m = self.document.model
        self.counts.setText(f"{len(m.bodies)} bodies · {len(m.joints)} joints · {len(m.forces)} forces · "
                            f"{len(m.drivers)} drivers")

    def _restore_layout(self) -> bool:
        """The user's last window geometry and dock layout; False on a first launch."""
        settings = app_settings.settings()
        geometry, state = settings.value("geometry"), settings.value("window_state")
        if geometry is not None:
            self.restoreGeometry(geometry)
        if state is not None:
            self.restoreState(state)
        return state is not None

    def showEvent(self, event):  # noqa: N802  (Qt API name)
        """On a first launch the bottom docks (plots, energy, log) get BOTTOM_SHARE of the height."""
        super().showEvent(event)
        if self._first_layout:
            self._first_layout = False
            self.resizeDocks([self.log_dock], [int(BOTTOM_SHARE * self.height())], Qt.Orientation.Vertical)


def _stem(path: str) -> str:
    """'crank' for '/a/crank.mbs.json' ('' for no path)."""
    return os.path.basename(path).removesuffix(".json").removesuffix(".mbs") if path else ""


def _project_urls(event) -> list[str]:
    mime = event.mimeData()
    if not mime.hasUrls():
        return []
    return [u.toLocalFile() for u in mime.urls() if u.isLocalFile() and u.toLocalFile().endswith(".json")]
