"""Autosave and crash recovery of the open project.

Every N minutes (``autosave_minutes`` in the app settings, default 2) a modified project is written
to a recovery file: ``<project>.recovery`` next to a saved project, or ``untitled.mbs.json`` in the
per-user recovery folder for a project that has no file yet.  A clean save or close removes it; a
recovery file still there when a project is opened (and newer than the project file) means the
application did not close cleanly, and the user is offered to restore it (``dialogs.confirm``).
The recovery file is written like a project (``solver.save_project``: atomic, never through a link); only a
regular file at the recovery path is offered or removed (a planted link or folder is left alone).
"""
from __future__ import annotations

import os
import stat

from PySide6.QtCore import QObject, QStandardPaths, QTimer

import solver

from . import app_settings, dialogs
from .log_panel import LOGGER

DEFAULT_MINUTES = 2.0
SUFFIX = ".recovery"
UNTITLED = "untitled.mbs.json"


def recovery_folder() -> str:
    """Per-user folder for recovery files of unsaved projects (beside the settings file when
    ``MBS_STUDIO_SETTINGS`` points to one, as in the tests)."""
    custom = os.environ.get("MBS_STUDIO_SETTINGS")
    base = (os.path.dirname(os.path.abspath(custom)) if custom else
            QStandardPaths.writableLocation(QStandardPaths.StandardLocation.AppDataLocation))
    return os.path.join(base, "recovery")


def recovery_path(project_path: str) -> str:
    return project_path + SUFFIX if project_path else os.path.join(recovery_folder(), UNTITLED)


class Autosave(QObject):
    """Writes the document's recovery file on a timer and offers it back after a crash."""

    def __init__(self, document, parent=None):
        super().__init__(parent)
        self.document = document
        minutes = float(app_settings.settings().value("autosave_minutes", DEFAULT_MINUTES))
        self.timer = QTimer(self)
        self.timer.setInterval(max(1, round(minutes * 60_000)))
        self.timer.timeout.connect(self.save_now)
        self.timer.start()
        # A restored project is marked modified with QUndoStack.resetClean(); Qt 6 keeps that mark
        # through QUndoStack.clear(), so a project opened later must be made clean explicitly.
        document.model_replaced.connect(document.undo_stack.setClean)

    # ---- public API ---------------------------------------------------------------------------
    @property
    def path(self) -> str:
        return recovery_path(self.document.path)

    def save_now(self) -> bool:
        """Write the recovery file if the project has unsaved changes; never raises."""
        if not self.document.modified:
            return False
        try:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            solver.save_project(self.document.model, self.path)
        except (OSError, solver.ModelError) as exc:
            LOGGER.warning("Autosave to %s failed: %s", self.path, exc)
            return False
        return True

    def discard(self, path=None):
        """After a clean save or close: the recovery file (and its backup) are not needed."""
        path = path or self.path
        for path in (path, path + ".bak"):
            if _is_file(path) or os.path.islink(path):      # a link is removed, not followed
                os.remove(path)

    def offer_recovery(self, parent) -> bool:
        """If a recovery file newer than the project exists, ask to restore it; a restored model
        replaces the open one and is marked modified (it is not saved until the user saves)."""
        path, project = self.path, self.document.path
        if not _is_file(path) or (project and os.path.exists(project)
                                        and os.path.getmtime(path) < os.path.getmtime(project)):
            return False
        name = os.path.basename(project) if project else "an unsaved project"
        if not dialogs.confirm(parent, "Recover unsaved changes",
                               f"MBS Studio did not close cleanly. Restore the automatically saved "
                               f"changes to {name}?"):
            self.discard()
            return False
        try:
            model = solver.load_model(path)
        except solver.ModelError as exc:
            LOGGER.error("Cannot read the recovery file %s: %s", path, exc)
            return False
        self.document.set_model(model, project)
        self.document.undo_stack.resetClean()
        LOGGER.info("Restored unsaved changes from %s", path)
        return True


def _is_file(path) -> bool:
    """A regular file is at ``path`` (not a link, folder or other special file)."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False
