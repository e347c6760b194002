"""Modules imported at their first use: :class:`LazyModule`, and ``sla``, scipy.linalg.

scipy 1.17's ``import scipy.linalg`` costs ≈ 0.15–0.2 s of CPU (its array-API layer clones numpy,
importing numpy.testing, numpy.f2py and numpy.ma), which a build paid although only a run that
factors a partition needs it (the partitions, the self-stress states, flexible modes, generalized-α):
a build imports no scipy and an open tree's run stepped in C none at all (issue #32 item 5).  sympy is
the code generator's (solver.codegen.symbolic)."""
from __future__ import annotations

import importlib


class LazyModule:
    """A module imported at the first access to one of its attributes; each attribute is then held as
    a plain one (later uses are an attribute read)."""

    def __init__(self, name):
        self._name = name

    def __getattr__(self, attr):
        value = getattr(importlib.import_module(self._name), attr)
        setattr(self, attr, value)
        return value


sla = LazyModule("scipy.linalg")
