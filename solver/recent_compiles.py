"""In-process reuse of compiled models: compiling a model whose content has not changed since a
recent compile returns that compilation (its system, notices and generated kernels) instead of
building the system again — Run pressed twice in the GUI, a parameter study that returns to a
value, ``simulate(model)`` in a script loop.

The key is everything a compilation reads: the model's project-file form (``Model.to_dict``: every
element and parameter), the structural settings after resolution (formulation, constraints,
reactions, planar, the codegen choice of this process), the codegen cache folder and compiler
(``$MBS_CODEGEN_CACHE``, ``$CC``), and for each flexible body with a modes file that file's path,
size and modification time (the one input that lives outside the project).  A cached compilation
with generated kernels is reused only while its library is still in the codegen cache folder.
Compiled systems are never written by runs (:meth:`MechanicalSystem.workspace`), so one entry may
serve several runs at once.  The last :data:`CAPACITY` compilations are kept.
"""
from __future__ import annotations

import hashlib
import json
import os
import threading
from collections import OrderedDict

#: compilations kept (least recently used dropped first)
CAPACITY = 4
_ENTRIES: OrderedDict = OrderedDict()
_LOCK = threading.Lock()


def key_of(model, settings, choice) -> str:
    """The reuse key of compiling ``model`` with the resolved ``settings`` and codegen ``choice``."""
    files = []
    for body in model.flexible_bodies.values():
        path = body.modes_file
        try:
            st = os.stat(path) if path else None
        except OSError:
            st = None
        files.append([path, st.st_size if st else None, st.st_mtime_ns if st else None])
    structural = {k: settings.values[k] for k in ("formulation", "constraints", "reactions", "planar")}
    text = json.dumps({"model": model.to_dict(), "settings": structural, "codegen": choice, "files": files,
                       "env": [os.environ.get("MBS_CODEGEN_CACHE", ""), os.environ.get("CC", "")]},
                      sort_keys=True, default=repr)
    return hashlib.sha256(text.encode()).hexdigest()


def recall(key):
    """The compilation stored under ``key``, or None (also when its generated library is gone)."""
    with _LOCK:
        compiled = _ENTRIES.get(key)
        if compiled is None:
            return None
        path = compiled.system.codegen_info.get("path") if compiled.generated else None
        if path is not None and not os.path.exists(path):
            del _ENTRIES[key]
            return None
        _ENTRIES.move_to_end(key)
        return compiled


def remember(key, compiled):
    """Store ``compiled`` under ``key`` (dropping the least recently used beyond CAPACITY)."""
    with _LOCK:
        _ENTRIES[key] = compiled
        _ENTRIES.move_to_end(key)
        while len(_ENTRIES) > CAPACITY:
            _ENTRIES.popitem(last=False)


def forget():
    """Drop every stored compilation."""
    with _LOCK:
        _ENTRIES.clear()
