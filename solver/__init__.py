"""MBS Studio solver: a multibody dynamics code usable on its own (no Qt, no VTK).

Public API (see ``docs/architecture.md``; checked by ``tests/test_public_contract.py``)::

    m = solver.Model(...); m.add_body(...); m.add_joint(...)
    res = solver.simulate(m, t_end=1.0)
    lin = solver.linearize(m)
"""
from __future__ import annotations

import importlib

from .errors import MBSError, ModelError, Problem, ExpressionError, SolverError, Cancelled, FAILURE_KINDS

__version__ = "0.1.0"

#: The public names and the submodule each comes from (``name`` or ``(name, attribute)``), imported at
#: first use (PEP 562 ``__getattr__``): ``import solver`` costs what solver.errors does, and a program
#: pays for numpy, scipy, h5py or sympy only when it uses what needs them (issue #32: first runs).
_PUBLIC = {
    ".model": ("Model", "GROUND", "Body", "Marker", "Joint", "SpringDamper", "RotationalSpringDamper", "Bushing",
               "AppliedForce", "AppliedTorque", "Driver", "Coupler", "Settings", "JOINT_TYPES", "JOINT_KINDS", "JointKind",
               "FORCE_CLASSES", "FORCE_TYPES", "Field", "inertia_matrix", "Point", "Link", "TEMPLATES",
               "Template", "build_template"),
    ".io.project": (("load_model", "load_project"), "save_project"),
    ".compile": ("CompiledModel", "compile_model"),
    ".analysis.dynamics": ("simulate",),
    ".results": ("Results", "load_results"),
    ".analysis.linearize": ("linearize", "Linearization"),
    ".analysis.interactive": ("InteractiveRun", "PULL_FREQUENCY"),   # Interact mode: pull while it runs
    ".analysis.equilibrium": ("static_equilibrium", "Equilibrium"),
    ".analysis.frequency": ("dominant_frequency",),
    ".analysis.checks": ("check_model", "ModelCheck"),       # Check Model: DOF, redundancy, driving
    ".model.elements": ("Road", "Tire", "SpeedControl", "FlexibleBody", "LinearActuator", "Measure", "ModelInput",
                        "ModelOutput", "FRICTION_JOINTS", "JointFriction", "Contact", "ContactGroup"),
    ".contact.geometry": (("contact_pair", "pair_function"),),     # the contact law of two shape kinds, or a ModelError
    ".contact.group": ("group_queries",),          # the contact laws of a contact group's shape kinds, or a ModelError
    ".io.urdf": ("import_urdf", "read_urdf", "urdf_needs_package_dir"),       # docs/import.md
    ".io.mjcf": ("import_mjcf", "is_mjcf", "read_mjcf"),     # docs/import.md (needs the mujoco package)
    ".model.sections": ("Material", "Section"),               # flexible beam cross-sections and materials
    ".outputs": ("Output", "declared_outputs", "marker_local", "measure", "output", "output_paths", "MEASURE_AXES",
                 "MEASURE_UNITS"),                             # named outputs of a run
    ".io.confine": ("MAX_MESH_BYTES", "checked_mesh", "confined"),   # paths a file names stay in its folder
    ".io.files": ("open_regular",),
    ".model.fields": ("shown_text",),                          # text from a file, shown on a terminal or in the GUI
}
_SUBMODULES = ("study", "vehicle")     # solver.study (parameter studies on Dask, docs/studies.md), solver.vehicle
_WHERE = {(n if isinstance(n, str) else n[0]): (module, n if isinstance(n, str) else n[1])
          for module, names in _PUBLIC.items() for n in names}

#: What runs import at their first use (the run loop; scipy's integrators, root finder and splines), which
#: preload() imports at once.
RUN_MODULES = (".analysis.dynamics", ".analysis.linearize", "scipy.integrate", "scipy.optimize", "scipy.interpolate")

__all__ = ["MBSError", "ModelError", "Problem", "ExpressionError", "SolverError", "Cancelled", "FAILURE_KINDS",
           *_WHERE, "export_fmu", "codegen_compiler", "preload", *_SUBMODULES, "__version__"]


def __getattr__(name):
    """A public name imported at its first use (and kept: later lookups do not come here)."""
    if name in _SUBMODULES:
        value = importlib.import_module(f".{name}", __name__)
    elif name in _WHERE:
        module, attribute = _WHERE[name]
        value = getattr(importlib.import_module(module, __name__), attribute)
    else:
        raise AttributeError(f"module 'solver' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))


def preload():
    """Import now what runs import at their first use (RUN_MODULES).  An interactive program calls it
    on its main thread at start: a run's worker thread then never imports for a fraction of a second
    while holding the interpreter, which the event loop waits for (with the imports in the worker,
    a 0.25 s run of the slider–crank let the GUI's 10 ms timer tick twice)."""
    for module in RUN_MODULES:
        importlib.import_module(module, __name__)


def export_fmu(model, path, **options):
    """Write ``model`` as an FMI 2.0 Co-Simulation FMU (:func:`solver.fmu.export_fmu`, docs/fmu.md;
    imported on use: it needs sympy and a C compiler)."""
    from .fmu import export_fmu as export
    return export(model, path, **options)


def codegen_compiler() -> str:
    """Path of the C compiler generated kernels use (``$CC``, else ``cc``); "" when there is none
    and runs fall back to the generic path (:mod:`solver.codegen`, imported on use)."""
    from .codegen.build import compiler_path
    return compiler_path()


from .vehicle import evaluators as _vehicle_evaluators  # noqa: E402,F401  (registers the vehicle force kinds)
