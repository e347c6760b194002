"""solver/analysis/heap.py: with glibc's thresholds raised, blocks of a few MB freed together are
reused by the next allocations instead of being faulted in afresh (glibc's own adaptive thresholds
hand four freed 8 MB blocks back to the system and fault all 2,000 pages in again every time: what
every run's post-processing temporaries did)."""
from __future__ import annotations

import resource

import numpy as np
import pytest

from solver.analysis.heap import keep_freed_memory


def test_freed_blocks_are_reused_without_page_faults():
    if not keep_freed_memory():
        pytest.skip("no glibc mallopt")
    assert keep_freed_memory()                          # once per process, the same answer
    pages = 4 * 2**20 * 8 // resource.getpagesize()
    faults = []
    for _ in range(3):
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        blocks = [np.ones(2**20) for _ in range(4)]     # 4 × 8 MB, written: every page touched
        faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
        del blocks
    assert faults[-1] < 0.1 * pages
