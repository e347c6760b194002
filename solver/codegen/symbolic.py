"""sympy for the code generator, imported at its first use.

A run whose kernels are in the cache describes the model (:func:`solver.codegen.derive.describe`,
``parameters``, :func:`solver.codegen.tree.describe_tree`) and loads the library without sympy: its
import (0.3–0.7 s on a 2-core machine) is paid by a build only.  ``sp.<name>`` imports sympy at the
first attribute asked for and then holds each attribute as a plain one."""
from __future__ import annotations

from ..math.lazy import LazyModule

sp = LazyModule("sympy")
