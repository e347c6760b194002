"""Model-specific compiled kernels (Choi & Yoo (2000) §4): sympy derivation → C → system compiler →
ctypes.  See ``docs/codegen.md``.

``codegen_system(model, settings)`` is what ``simulate(..., codegen=True)`` uses: the generated
system when the formulation is supported (Cartesian with conventional joints, or relative), else
None, with a one-line message for the run's events (kind ``"codegen"``).
"""
from __future__ import annotations

from .derive import CodegenUnavailable
from .relative import CodegenRelativeSystem
from .system import CodegenCartesianSystem

__all__ = ["CodegenCartesianSystem", "CodegenRelativeSystem", "CodegenUnavailable", "codegen_system"]


def codegen_system(model, settings):
    """(CodegenCartesianSystem, CodegenRelativeSystem or None, message).  None means: use the
    generic path (the message says why).  Model errors (ModelError) propagate."""
    if settings.formulation == "cartesian" and settings.constraints != "conventional":
        return None, ("codegen unavailable, generic path used: only the conventional joint form is generated "
                      f"(constraints={settings.constraints!r})")
    try:
        if settings.formulation == "relative":
            system = CodegenRelativeSystem(model, reactions=settings.reactions)
        else:
            system = CodegenCartesianSystem(model)
    except CodegenUnavailable as exc:
        return None, f"codegen unavailable, generic path used: {exc}"
    info = system.codegen_info
    if info["cache_hit"]:
        how = f"loaded from the cache in {info['load_s']:.3f} s"
    else:
        how = (f"generated in {info['derive_s']:.2f} s (sympy, {info['subexpressions']} common subexpressions) "
               f"and compiled in {info['compile_s']:.2f} s")
    return system, f"codegen: compiled kernels {how} ({info['path']})"
