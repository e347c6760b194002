"""A path written inside a received file stays in that file's folder: lexically (no absolute path,
no ``..``: :func:`relative_path_problem`, which the field declarations check on their own) and
with the links resolved (:func:`confined`, where the path is used)."""
from __future__ import annotations

import os
import re
from pathlib import PurePosixPath

from ..errors import ModelError

_DRIVE = re.compile(r"[A-Za-z]:")


def relative_path_problem(path) -> str | None:
    """Why ``path`` is not a relative path that stays in its folder when read lexically, or None."""
    slashed = path.replace("\\", "/")          # a Windows path read on any system
    if os.path.isabs(path) or slashed.startswith("/") or _DRIVE.match(slashed):
        return f"must be a path inside the folder of the file, got the absolute path {path!r}"
    if ".." in PurePosixPath(slashed).parts:
        return f"must be a path inside the folder of the file, got {path!r} (it leaves the folder by '..')"
    return None


def confined(base_dir, path, field) -> str:
    """``path`` (from a file in ``base_dir``) joined to ``base_dir``; ModelError naming ``field``
    when it is absolute, leaves the folder by ``..`` or resolves (through links) outside it."""
    problem = relative_path_problem(path)
    full = os.path.join(base_dir, path)
    if problem is None:
        root = os.path.realpath(base_dir)
        if os.path.commonpath([root, os.path.realpath(full)]) != root:
            problem = f"must be a path inside the folder of the file, got {path!r} (a link leads outside it)"
    if problem is not None:
        raise ModelError(f"{field}: {problem}")
    return full
