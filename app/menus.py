"""Actions, menus (File, Edit, Model, Simulate, Analysis, View, Help), the toolbar and the tree's context menu
of the main window.  ``build(window)`` returns the actions by name (tests trigger them)."""
from __future__ import annotations

import logging
import os
from functools import partial

import numpy as np

from PySide6.QtCore import QEvent, Qt, QUrl
from PySide6.QtGui import QAction, QActionGroup, QDesktopServices, QKeyEvent, QKeySequence
from PySide6.QtWidgets import QAbstractSpinBox, QApplication, QLineEdit, QMenu, QMessageBox, QStyle, QToolButton

import solver

from . import app_settings, commands, dialogs, study_dialog
from .editing import LIMIT_ROTATION, LIMIT_TRANSLATION, limit_refusal, limited_kinds, pivot_points
from .log_panel import LOGGER
from .resources import DOCS, icon, sample_files
from .tree import MODEL_ITEM
from .viewport.placement import JointPlacement
from .viewport.viewport import VIEWS

MOUSE_HELP = ("Left drag: rotate · Shift+left or middle drag: pan · wheel or right drag: zoom · "
              "click: select the body, joint or force under the cursor · "
              "left drag on the selected body or marker: move it in the view plane · "
              "Model ▸ Add Joint ▸ <type> (Ctrl+J: revolute): pick two bodies and the origin "
              "(Enter: type the coordinates instead; Esc cancels)")
ADD_LIMIT_TIP = (f"stops on the selected joint ({', '.join(limited_kinds())}): ±{np.degrees(LIMIT_ROTATION):g}° or "
                 f"±{LIMIT_TRANSLATION:g} m from the assembly configuration (edit them in its properties)")


def build(window) -> dict[str, QAction]:
    """Create every action and menu of ``window`` (a MainWindow)."""
    a: dict[str, QAction] = {}
    doc, edit, vp = window.document, window.editing, window.viewport
    window.placement = JointPlacement(vp, edit, window)

    def act(name, text, slot, shortcut=None, icon_name=None, tip=None, checkable=False):
        action = QAction(text, window)
        if shortcut:
            action.setShortcut(QKeySequence(shortcut))
        if icon_name:
            action.setIcon(icon(icon_name))
        if tip:
            action.setStatusTip(tip)
        action.setCheckable(checkable)
        action.triggered.connect(slot)
        a[name] = action
        return action

    bar = window.menuBar()
    # File
    m = bar.addMenu("&File")
    m.addAction(act("new", "&New", window.new_project, QKeySequence.StandardKey.New))
    m.addAction(act("new_from_template", "New from &Template…", window.new_from_template,
                    tip="a four-bar, slider–crank, pendulum chain or double wishbone from its parameters"))
    m.addAction(act("open", "&Open…", lambda: window.open_project(), QKeySequence.StandardKey.Open))
    samples = m.addMenu("Open &Sample")
    samples.aboutToShow.connect(lambda: _fill_samples(window, samples))
    _fill_samples(window, samples)
    recent = m.addMenu("Open &Recent")
    recent.aboutToShow.connect(lambda: _fill_recent(window, recent))
    a["recent_menu"] = recent.menuAction()
    m.addAction(act("import_urdf", "&Import…", lambda: window.import_urdf(),
                    tip="convert a URDF robot or a MuJoCo MJCF model into a project (docs/import.md)"))
    m.addSeparator()
    m.addAction(act("save", "&Save", window.save, QKeySequence.StandardKey.Save))
    m.addAction(act("save_as", "Save &As…", window.save_as, QKeySequence.StandardKey.SaveAs))
    m.addAction(act("revert", "Re&vert", window.revert, tip="reload the file, dropping unsaved changes"))
    m.addSeparator()
    export = m.addMenu("&Export")
    export.addAction(act("export_hdf5", "Results as &HDF5 File…", lambda: window.simulation.export_hdf5()))
    export.addAction(act("export_csv", "Results as &CSV Folder…", lambda: window.simulation.export_csv()))
    export.addSeparator()
    export.addAction(act("export_fmu", "&FMU…", lambda: window.export_fmu(),
                         tip="the model as an FMI 2.0 co-simulation FMU (docs/fmu.md)"))
    m.addSeparator()
    m.addAction(act("quit", "&Quit", window.close, QKeySequence.StandardKey.Quit))

    # Edit
    m = bar.addMenu("&Edit")
    undo = doc.undo_stack.createUndoAction(window, "&Undo")
    undo.setShortcut(QKeySequence.StandardKey.Undo)
    redo = doc.undo_stack.createRedoAction(window, "&Redo")
    # both usual keys, each once: StandardKey.Redo is Ctrl+Shift+Z on some desktops (the same key
    # twice is an "ambiguous shortcut" that never fires) and Ctrl+Y on others
    redo.setShortcuts([QKeySequence("Ctrl+Shift+Z"), QKeySequence("Ctrl+Y")])
    a["undo"], a["redo"] = undo, redo
    m.addActions([undo, redo])
    m.addSeparator()
    m.addAction(act("copy", "&Copy", lambda: edit.copy(), QKeySequence.StandardKey.Copy))
    m.addAction(act("paste", "&Paste", lambda: edit.paste(), QKeySequence.StandardKey.Paste))
    m.addAction(act("duplicate", "D&uplicate", lambda: edit.duplicate(), "Ctrl+D"))
    m.addAction(act("rename", "Re&name", window.tree.rename_current, "F2"))
    m.addAction(act("delete", "&Delete", lambda: edit.delete(), QKeySequence.StandardKey.Delete))
    m.addAction(act("move", "&Move…", lambda: _move(window), "Ctrl+M", tip="translate the selected element"))
    m.addAction(act("rotate", "R&otate…", lambda: _rotate(window), "Ctrl+Shift+R",
                    tip="rotate the selected body about an axis through a pivot point"))
    m.addSeparator()
    history = window.history_dock.toggleViewAction()
    history.setText("&History")
    history.setShortcut(QKeySequence("Ctrl+H"))
    a["history"] = history
    m.addAction(history)

    # Model
    m = bar.addMenu("&Model")
    m.addAction(act("add_body", "Add &Body", lambda: edit.add_body(), "Ctrl+B", "body"))
    m.addAction(act("add_link", "Add &Link…", window.add_link, "L", "link",
                    tip="a link between two design points (typed or picked), its section and density, "
                        "joints at its ends"))
    m.addAction(act("add_point", "Add Design &Point", lambda: edit.add_point(), icon_name="point",
                    tip="a named point that link ends and joint origins follow"))
    joints = m.addMenu(icon("joint"), "Add &Joint")
    for t, kind in solver.JOINT_KINDS.items():   # every joint kind, placed by picking (factory.new_joint)
        joints.addAction(act(f"add_joint_{t}", kind.label, partial(window.placement.start, t),
                             "Ctrl+J" if t == "revolute" else None, kind.icon,
                             tip="pick the two bodies and the origin in the viewport (Enter: type them)"))
    forces = m.addMenu(icon("spring_damper"), "Add &Force Element")
    for kind, cls in solver.FORCE_CLASSES.items():  # every force kind (factory.new_force places it)
        forces.addAction(act(f"add_force_{kind}", cls.LABEL, partial(edit.add_force, kind),
                             icon_name=cls.ICON or kind))
    m.addAction(act("add_contact", "Add Co&ntact…", window.add_contact, icon_name="contact",
                    tip="a contact between two bodies (picked in the lists, the tree or the viewport); each "
                        "touches with its own shape, ground with a plane facing up"))
    m.addAction(act("add_driver", "Add &Driver", lambda: _add_driver(window), icon_name="driver",
                    tip="prescribe the selected joint's coordinate: type its motion next (e.g. 2*pi*t)"))
    m.addAction(act("add_limit", "Add &Limit", lambda: edit.add_limit(), icon_name="joint",
                    tip=ADD_LIMIT_TIP))
    m.addAction(act("add_coupler", "Add &Coupler", lambda: edit.add_coupler(), icon_name="driver",
                    tip="couple two joint coordinates: θ_j = ratio·θ_i + offset (gears, rack-and-pinion, mimic); "
                        "the selected joint follows the one before it"))
    m.addAction(act("add_marker", "Add &Marker", lambda: edit.add_marker(), icon_name="marker"))
    m.addAction(act("add_flexible_beam", "Add Fle&xible Beam…", lambda: edit.add_flexible_beam(),
                    tip="a beam from its ends, section (rectangle, circle, tube), material and elements"))
    m.addSeparator()
    m.addAction(act("model_properties", "Model &Properties (gravity)", lambda: doc.select(MODEL_ITEM),
                    icon_name="model"))
    a["add_joint_menu"], a["add_force_menu"] = joints.menuAction(), forces.menuAction()
    _limit_action(window, m, a["add_limit"])
    _picking(window, a, act)

    # Simulate
    m = bar.addMenu("&Simulate")
    m.addAction(act("run", "&Run", lambda: window.run_simulation(), "F5",
                    tip="simulate the model in the background"))
    m.addAction(act("stop", "S&top", lambda: window.simulation.stop(), "Shift+F5",
                    tip="stop the run, keeping the results so far"))
    m.addAction(act("run_settings", "Solver &Settings…", lambda: window.simulation.edit_settings(), icon_name="settings",
                    tip="end time, output step, formulation, partitioning, integrator, tolerances, display units"))
    m.addAction(act("interact", "&Interact", lambda on: window.interact.toggle(on), "F6", icon_name="driver", checkable=True,
                    tip="run the model in real time and pull its bodies with the mouse"))
    autoplay = act("autoplay", "&Play After Run", app_settings.set_autoplay, checkable=True,
                   tip="play the animation when a run ends")
    autoplay.setChecked(app_settings.autoplay())
    m.addAction(autoplay)
    m.addSeparator()
    m.addAction(act("check", "&Check Model", lambda: _check(window), "Ctrl+K",
                    tip="list every problem the solver would refuse; count the degrees of freedom (Grübler "
                        "vs rank), redundant constraints, over- and under-driven drivers"))

    # Analysis
    m = bar.addMenu("&Analysis")
    m.addAction(act("linearize", "&Linearize", lambda: window.linearize(),
                    tip="modes (frequency, damping) of the linearized model at its initial state "
                        "or at its static equilibrium (Modes panel)"))
    m.addAction(act("parameter_study", "&Parameter Study…", lambda: study_dialog.show_study_dialog(window),
                    tip="vary model parameters over a grid or samples and compare responses (Dask)"))

    # View
    m = bar.addMenu("&View")
    m.addAction(act("fit", "&Fit All", vp.fit_all, "F"))
    for v in VIEWS:
        m.addAction(act(f"view_{v}", f"{v.capitalize()} View", partial(vp.set_view, v)))
    m.addAction(act("parallel", "&Parallel Projection", vp.set_parallel, "P", checkable=True))
    m.addAction(act("frames", "Body &Frames", vp.set_show_frames, checkable=True))
    _display_units_menu(window, m.addMenu("Display &Units"), a)
    m.addSeparator()
    window.panels_menu = m.addMenu("&Panels")
    for dock in (window.tree_dock, window.properties_dock, window.log_dock, window.history_dock):
        add_dock_toggle(window, dock)

    # Help
    m = bar.addMenu("&Help")
    m.addAction(act("documentation", "&Documentation", lambda: _open_documentation(window), "F1",
                    tip="the user guide (docs/gui.md) and the other documents in docs/"))
    m.addAction(act("mouse_help", "&Viewport Controls", lambda: QMessageBox.information(
        window, "Viewport controls", MOUSE_HELP.replace(" · ", "\n"))))
    m.addAction(act("about", "&About MBS Studio", lambda: QMessageBox.about(
        window, "About MBS Studio", f"MBS Studio {solver.__version__}\nMultibody dynamics modeler.")))

    _toolbar(window, a, joints, forces)
    _tree_menu(window, a, joints, forces)
    return a


def add_dock_toggle(window, dock):
    """List ``dock`` in View ▸ Panels."""
    window.panels_menu.addAction(dock.toggleViewAction())


# ---- helpers --------------------------------------------------------------------------------------

def _toolbar(window, a, joints, forces):
    tb = window.addToolBar("Main")
    tb.setObjectName("mainToolbar")
    style, std = window.style(), QStyle.StandardPixmap
    for name, pixmap in (("new", std.SP_FileIcon), ("open", std.SP_DirOpenIcon), ("save", std.SP_DialogSaveButton),
                         ("undo", std.SP_ArrowBack), ("redo", std.SP_ArrowForward), ("delete", std.SP_TrashIcon)):
        a[name].setIcon(style.standardIcon(pixmap))
    tb.addActions([a["new"], a["open"], a["save"]])
    tb.addSeparator()
    tb.addActions([a["undo"], a["redo"]])
    tb.addSeparator()
    tb.addActions([a["add_body"], a["add_link"], a["add_point"]])
    for menu, icon_name, text in ((joints, "joint", "Add joint"), (forces, "spring_damper", "Add force element")):
        button = QToolButton(tb)
        button.setIcon(icon(icon_name))
        button.setToolTip(text)
        button.setMenu(menu)
        button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        tb.addWidget(button)
    tb.addAction(a["add_driver"])
    tb.addAction(a["delete"])
    tb.addSeparator()
    tb.addAction(a["interact"])
    tb.addSeparator()
    tb.addAction(a["fit"])
    for v in VIEWS:
        tb.addAction(a[f"view_{v}"])
    tb.addSeparator()
    a["run"].setIcon(style.standardIcon(std.SP_MediaPlay))
    a["stop"].setIcon(style.standardIcon(std.SP_MediaStop))
    tb.addActions([a["run"], a["stop"]])


def _tree_menu(window, a, joints, forces):
    def show(pos):
        menu = QMenu(window.tree)
        menu.addActions([a["add_body"], a["add_link"], a["add_point"]])
        menu.addMenu(joints)
        menu.addMenu(forces)
        menu.addAction(a["add_driver"])
        menu.addAction(a["add_marker"])
        if window.document.selection in window.document.model:
            menu.addSeparator()
            menu.addActions([a["duplicate"], a["rename"], a["move"], a["delete"]])
        if window.document.selection in window.document.model.joints:
            menu.addAction(a["add_limit"])
        menu.exec(window.tree.viewport().mapToGlobal(pos))
    window.tree.customContextMenuRequested.connect(show)


def _picking(window, a, act):
    """Wire the viewport's interaction: joint placement prompts in the status bar, Esc cancels it,
    Enter adds the joint for typed coordinates, a dragged body or marker is moved by one undoable edit."""
    placement, status = window.placement, window.statusBar()
    cancel = act("cancel_mode", "Cancel", placement.cancel, "Esc", tip="leave joint placement")
    typed = act("place_typed", "Type Coordinates", lambda: _enter_while_picking(placement, typed), "Return",
                tip="add the joint without picking and type its coordinates in the property editor")
    for action in (cancel, typed):
        action.setEnabled(False)
        window.addAction(action)
        placement.active_changed.connect(action.setEnabled)
    window.document.model_replaced.connect(placement.cancel)
    placement.prompt.connect(lambda text: status.showMessage(text) if text else status.clearMessage())
    window.viewport.moved.connect(lambda name, offset: window.editing.move(offset, name))


def _limit_action(window, menu, action):
    """Add Limit is enabled while the selection is a joint it can limit; disabled, its tool tip (shown
    over the item: Qt shows no status tip for a disabled one) says why (:func:`app.editing.limit_refusal`),
    and so does the status bar when its ``menu`` opens."""
    document = window.document
    menu.setToolTipsVisible(True)     # only Add Limit has a tool tip of its own
    menu.aboutToShow.connect(lambda: None if action.isEnabled() else window.statusBar().showMessage(action.toolTip()))

    def update(*_):
        reason = limit_refusal(document.model, document.selection)
        action.setEnabled(not reason)
        tip = f"Add Limit: {reason}" if reason else ADD_LIMIT_TIP
        action.setStatusTip(tip)
        action.setToolTip(tip)

    for signal in (document.selection_changed, document.model_event, document.model_replaced):
        signal.connect(update)
    update()


def _enter_while_picking(placement, action):
    """Enter while placing a joint (``action``: its shortcut): a text or number field with the focus
    gets it (its edit is committed as always); elsewhere the joint is added for typed coordinates."""
    focus = QApplication.focusWidget()
    if isinstance(focus, (QLineEdit, QAbstractSpinBox)):
        action.setEnabled(False)                # the forwarded key must not come back here
        try:
            for kind in (QEvent.Type.KeyPress, QEvent.Type.KeyRelease):
                QApplication.sendEvent(focus, QKeyEvent(kind, Qt.Key.Key_Return, Qt.KeyboardModifier.NoModifier))
        finally:
            action.setEnabled(placement.active)
        return
    placement.type_in()


def _display_units_menu(window, menu, a):
    """View ▸ Display Units: the choices of the settings ``display_units`` and ``display_angles`` (as
    in Solver Settings), checked as the model has them; choosing one is an undoable setting."""
    document = window.document
    for name in ("display_units", "display_angles"):
        field = next(f for f in solver.Settings.FIELDS if f.name == name)
        group = QActionGroup(menu)
        for choice in field.choices:
            action = QAction(choice, menu, checkable=True)
            action.triggered.connect(partial(_set_display, document, name, choice))
            group.addAction(action)
            menu.addAction(action)
            a[f"{name}_{choice}"] = action
        menu.addSeparator()

    def show_current(*_):
        values = document.model.settings.values
        for name in ("display_units", "display_angles"):
            a[f"{name}_{values[name]}"].setChecked(True)

    document.model_replaced.connect(show_current)
    document.model_event.connect(show_current)
    show_current()


def _set_display(document, name, choice):
    if document.model.settings.values[name] != choice:
        document.push(commands.SetSetting(document.model, name, choice, document.notify_settings))


def _open_documentation(window):
    """Help ▸ Documentation: the user guide in the system's viewer (the docs/ folder of the project)."""
    guide = DOCS / "gui.md"
    if not guide.exists():
        window.report_problems("Documentation", [f"the documentation is not installed here ({guide})"])
        return
    QDesktopServices.openUrl(QUrl.fromLocalFile(str(guide)))


def _fill_samples(window, menu):
    menu.clear()
    files = sample_files()
    for path in files:
        menu.addAction(path.name.removesuffix(".mbs.json"), partial(window.open_project, str(path)))
    if not files:
        menu.addAction("(no sample models)").setEnabled(False)


def _fill_recent(window, menu):
    menu.clear()
    files = app_settings.recent_files()
    for path in files:
        action = menu.addAction(os.path.basename(path), partial(window.open_project, path))
        action.setToolTip(path)
    if files:
        menu.addSeparator()
        menu.addAction("Clear list", app_settings.clear_recent_files)
    else:
        menu.addAction("(none)").setEnabled(False)


def _add_driver(window):
    """Add Driver: the new driver's motion is what is typed next (its expression field has the
    keyboard, its text selected)."""
    if window.editing.add_driver():
        window.properties.focus_field("expression")


def _move(window):
    name = window.document.selection
    if name in window.document.model:
        offset = dialogs.ask_offset(window, name)
        if offset is not None:
            window.editing.move(offset)


def _rotate(window):
    name = window.document.selection
    if name not in window.document.model.bodies:
        window.editing.failed.emit("Rotate", ["select a body to rotate"])
        return
    answer = dialogs.ask_rotation(window, name, pivot_points(window.document.model, name))
    if answer is not None:
        window.editing.rotate(*answer)


def _check(window):
    """Check Model: the model's problems by field; else ``solver.check_model`` — Grübler count vs
    rank-based DOF, redundant constraints in joint terms, over- and under-driving — in the log, the
    status bar and a report (docs/gui.md).  A planar model with redundant out-of-plane equations
    gets a button that sets the solver setting ``planar`` to its plane (one undoable step)."""
    if window.refuse_invalid_edits("Model check"):     # as Run: a refused edit on screen is a problem
        return
    problems = window.document.model.validate_details()
    if problems:
        window.report_problems("Model check", problems)
        return
    try:
        check = solver.check_model(window.document.model)
    except solver.MBSError as exc:
        window.report_problems("Model check", [str(exc)])
        return
    summary = check_summary(check)
    level = logging.INFO if check.ok else logging.WARNING
    for line in [summary] + check.messages:
        LOGGER.log(level, "Model check: %s", line)
    window.statusBar().showMessage(f"Model check: {summary}", 8000)
    plane = check.planar_suggestion
    action = f"Use planar joint forms ({plane} plane)" if plane else None
    if dialogs.show_report(window, "Model check", summary, check.messages, warning=not check.ok, action=action):
        document = window.document
        document.push(commands.SetSetting(document.model, "planar", plane, document.notify_settings))
        LOGGER.info("Solver setting planar = %r: the joints are compiled in their planar forms", plane)


def check_summary(check) -> str:
    """One line: "DOF 1 (Grübler −2), 3 redundant constraint equations, over-driven: a, b"."""
    parts = [f"DOF {check.dof} (Grübler {check.grubler})"]
    if check.redundant:
        parts.append(f"{check.redundant} redundant constraint equation{'s' if check.redundant != 1 else ''}")
    if check.overdriven:
        parts.append(f"over-driven: {', '.join(check.overdriven)}")
    if check.underdriven:
        parts.append(f"under-driven: {', '.join(check.moving_joints)} still free")
    if not check.assembled:
        parts.append("does not assemble")
    return ", ".join(parts)
