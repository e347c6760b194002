"""Model-specific compiled kernels (Choi & Yoo (2000) §4): sympy derivation → C → system compiler →
ctypes.  See ``docs/codegen.md``.

``codegen_system(model, settings)`` is what the compile step (:mod:`solver.compile`) uses: the
generated system when the formulation is supported (Cartesian with conventional joints, or
relative), else None, with a one-line message for the run's events (kind ``"codegen"``).
"""
from __future__ import annotations

from ..errors import MBSError
from . import force_hooks  # noqa: F401  (registers the generated force kinds with derive.HOOKS)
from .build import building
from .derive import CodegenUnavailable
from .relative import CodegenRelativeSystem
from .segment import COMPILED, prepare_time_library
from .system import CodegenCartesianSystem

__all__ = ["CodegenCartesianSystem", "CodegenRelativeSystem", "CodegenUnavailable", "UNAVAILABLE", "codegen_system"]

UNAVAILABLE = "codegen unavailable, generic path used: "     # how a fallback message starts


def codegen_system(model, settings, plane=None, on_event=None, cancel=None, strict=False):
    """(CodegenCartesianSystem, CodegenRelativeSystem or None, message).  None means: use the
    generic path (the message says why).  A build that is not in the cache first sends
    ``{"kind": "codegen", "message": "compiling the model…"}`` to ``on_event``; ``cancel()``
    returning True stops it (Cancelled); the time functions of the compiled step loop (integrators
    "auto" and "rk45") are compiled in the same build.  Model errors (ModelError) propagate; so does an
    unexpected error of the generator when ``strict``, else it is a fallback (generated kernels
    are chosen automatically: a generator bug must not stop a run the generic path can do).
    ``plane``: the plane of the planar joint forms (:mod:`solver.formulations.planar`), or None."""
    if settings.formulation == "cartesian" and settings.constraints != "conventional":
        return None, (f"{UNAVAILABLE}only the conventional joint form is generated "
                      f"(constraints={settings.constraints!r})")
    try:
        with building(on_event, cancel):
            if settings.formulation == "relative":
                system = CodegenRelativeSystem(model, reactions=settings.reactions, plane=plane)
            else:
                system = CodegenCartesianSystem(model, plane=plane)
            if settings.integrator in COMPILED:         # the compiled step loop's time functions
                prepare_time_library(system)
    except CodegenUnavailable as exc:
        return None, f"{UNAVAILABLE}{exc}"
    except MBSError:
        raise
    except Exception as exc:  # noqa: BLE001  (see the docstring)
        if strict:
            raise
        return None, f"{UNAVAILABLE}internal error of the code generator ({type(exc).__name__}: {exc}); please report it"
    info = system.codegen_info
    if info["cache_hit"]:
        how = f"loaded from the cache in {info['load_s']:.3f} s"
    else:
        how = (f"generated in {info['derive_s']:.2f} s ({info['c_lines']} lines of C) "
               f"and compiled in {info['compile_s']:.2f} s")
    return system, f"codegen: compiled kernels {how} ({info['path']})"
