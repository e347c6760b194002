"""sympy for the code generator, imported at its first use.

A run whose kernels are in the cache describes the model (:func:`solver.codegen.derive.describe`,
``parameters``, :func:`solver.codegen.tree.describe_tree`) and loads the library without sympy: its
import (0.3–0.7 s on a 2-core machine) is paid by a build only.  ``sp.<name>`` imports sympy at the
first attribute asked for and then holds each attribute as a plain one."""
from __future__ import annotations

import importlib


class LazyModule:
    """A module imported at the first access to one of its attributes."""

    def __init__(self, name):
        self._name = name

    def __getattr__(self, attr):
        value = getattr(importlib.import_module(self._name), attr)
        setattr(self, attr, value)
        return value


sp = LazyModule("sympy")
