"""collection_paused(): Python's cyclic garbage collector held off around work that allocates many
small, long-lived objects, whose full collections — each traversing every object of the process —
would otherwise cost as much as the work itself (a kernel derivation's polynomial terms and sympy
nodes: loops_50's Cartesian kernels 0.9 s against 0.3 s; a workspace's walk of a compiled system and
its copy: half of the walk's CPU on the four-bar row at N = 400)."""
from __future__ import annotations

import contextlib
import gc


@contextlib.contextmanager
def collection_paused():
    """The collector disabled inside the block, enabled again after it if it was: nothing is freed
    later than the next collection after the block."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
