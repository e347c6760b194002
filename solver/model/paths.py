"""A path written inside a received file must stay in that file's folder when read lexically
(the rule :mod:`solver.io.confine` applies, with the links resolved, where the file is read; the
field declarations check it on their own)."""
from __future__ import annotations

import os
import re
from pathlib import PurePosixPath

_DRIVE = re.compile(r"[A-Za-z]:")


def relative_path_problem(path) -> str | None:
    """Why ``path`` is not a relative path that stays in its folder when read lexically, or None."""
    slashed = path.replace("\\", "/")          # a Windows path read on any system
    if os.path.isabs(path) or slashed.startswith("/") or _DRIVE.match(slashed):
        return f"must be a path inside the folder of the file, got the absolute path {path!r}"
    if ".." in PurePosixPath(slashed).parts:
        return f"must be a path inside the folder of the file, got {path!r} (it leaves the folder by '..')"
    return None
