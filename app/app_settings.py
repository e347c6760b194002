"""Persistent preferences (window geometry, dock layout, recent files, play after a run, the
orientation editor's form) in QSettings.

``MBS_STUDIO_SETTINGS`` names an INI file to use instead of the user's settings (tests set it so
they never touch the real preferences).
"""
from __future__ import annotations

import os

from PySide6.QtCore import QSettings

ORGANIZATION = "MBS Studio"
APPLICATION = "mbs-studio"
MAX_RECENT = 8


def settings() -> QSettings:
    path = os.environ.get("MBS_STUDIO_SETTINGS")
    if path:
        return QSettings(path, QSettings.Format.IniFormat)
    return QSettings(QSettings.Format.IniFormat, QSettings.Scope.UserScope, ORGANIZATION, APPLICATION)


def recent_files() -> list[str]:
    value = settings().value("recent_files", [])
    if isinstance(value, str):
        value = [value]
    return [str(v) for v in value or [] if v]


def add_recent_file(path: str) -> list[str]:
    """Put ``path`` first in the recent-files list and return the list."""
    files = [path] + [f for f in recent_files() if f != path]
    files = files[:MAX_RECENT]
    settings().setValue("recent_files", files)
    return files


def clear_recent_files():
    settings().setValue("recent_files", [])


def autoplay() -> bool:
    """Play the animation when a run ends (default on)."""
    return settings().value("autoplay_after_run", True, type=bool)


def set_autoplay(on: bool):
    settings().setValue("autoplay_after_run", bool(on))
