"""Freed memory kept for the next run instead of handed back to the operating system (glibc only).

A run's output rows are post-processed over all points at once (``postprocess_batch``): arrays of
0.1–10 MB that live for a moment.  glibc's malloc maps such blocks with mmap (above a threshold it
adapts as blocks are freed) and trims the top of its heap when more than a threshold is free, so
every run faults its temporaries' pages in afresh: 1,458 page faults, about 5 of the 20 ms CPU of the
free-falling arm's default run (bench/peers.py, 501 output points).  Raising both thresholds
(mallopt(3): M_MMAP_THRESHOLD to its 64-bit maximum of 32 MB, M_TRIM_THRESHOLD to 128 MB) lets the
process reuse what it freed: no page faults from the second run on.  The cost is memory the process
keeps after a large run (at most the trim threshold above what it uses).  Elsewhere (no glibc) nothing
changes.
"""
from __future__ import annotations

import ctypes

M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3      # mallopt parameters (malloc.h)
MMAP_THRESHOLD = 32 * 2**20                      # glibc's largest (DEFAULT_MMAP_THRESHOLD_MAX, 64-bit)
TRIM_THRESHOLD = 128 * 2**20
_applied = []


def keep_freed_memory() -> bool:
    """Set the thresholds once per process; True when glibc's mallopt accepted them."""
    if not _applied:
        _applied.append(_set())
    return _applied[0]


def _set() -> bool:
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError, TypeError):      # no C library of the process, or no mallopt
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD))
