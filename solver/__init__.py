"""MBS Studio solver: a multibody dynamics code usable on its own (no Qt, no VTK).

Public API (see ``docs/architecture.md``; checked by ``tests/test_public_contract.py``)::

    m = solver.Model(...); m.add_body(...); m.add_joint(...)
    res = solver.simulate(m, t_end=1.0)
    lin = solver.linearize(m)
"""
from .errors import MBSError, ModelError, Problem, ExpressionError, SolverError, Cancelled, FAILURE_KINDS
from .model import (Model, GROUND, Body, Marker, Joint, SpringDamper, RotationalSpringDamper, Bushing,
                    AppliedForce, AppliedTorque, Driver, Settings, JOINT_TYPES, JOINT_KINDS,
                    JointKind, FORCE_CLASSES, FORCE_TYPES, Field, inertia_matrix, Point, Link, TEMPLATES,
                    Template, build_template)
from .io.project import load_project as load_model, save_project

__version__ = "0.1.0"

__all__ = ["MBSError", "ModelError", "Problem", "ExpressionError", "SolverError", "Cancelled", "FAILURE_KINDS", "Model", "GROUND",
           "Body", "Marker", "Joint", "SpringDamper", "RotationalSpringDamper", "Bushing", "AppliedForce",
           "AppliedTorque", "Driver", "Settings", "JOINT_TYPES", "JOINT_KINDS", "JointKind",
           "FORCE_CLASSES", "FORCE_TYPES", "Field", "inertia_matrix", "load_model", "save_project",
           "Point", "Link", "TEMPLATES", "Template", "build_template",
           "__version__"]

from .compile import CompiledModel, compile_model  # noqa: E402
from .analysis.dynamics import simulate  # noqa: E402


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


from .results import Results, load_results  # noqa: E402

__all__ += ["CompiledModel", "compile_model", "simulate", "codegen_compiler", "export_fmu", "Results", "load_results"]
from .analysis.interactive import InteractiveRun, PULL_FREQUENCY  # noqa: E402  (Interact mode: pull while it runs)

__all__ += ["InteractiveRun", "PULL_FREQUENCY"]
from .analysis.linearize import linearize, Linearization  # noqa: E402

__all__ += ["linearize", "Linearization"]
from .analysis.equilibrium import static_equilibrium, Equilibrium  # noqa: E402
from .analysis.frequency import dominant_frequency  # noqa: E402

__all__ += ["static_equilibrium", "Equilibrium", "dominant_frequency"]
from .analysis.checks import check_model, ModelCheck  # noqa: E402  (Check Model: DOF, redundancy, driving)

__all__ += ["check_model", "ModelCheck"]
from . import study  # noqa: E402  (solver.study: parameter studies on Dask, docs/studies.md)

__all__ += ["study"]
from . import vehicle  # noqa: E402  (solver.vehicle: road, tire, speed control, the CAE-TC car; docs/vehicle.md)
from .vehicle import evaluators as _vehicle_evaluators  # noqa: E402,F401  (registers the vehicle force kinds)
from .model.elements import Road, Tire, SpeedControl  # noqa: E402

__all__ += ["vehicle", "Road", "Tire", "SpeedControl"]
from .io.urdf import import_urdf, read_urdf, urdf_needs_package_dir  # noqa: E402  (docs/import.md)

__all__ += ["import_urdf", "read_urdf", "urdf_needs_package_dir"]
from .io.mjcf import import_mjcf, is_mjcf, read_mjcf  # noqa: E402  (docs/import.md; needs the mujoco package)

__all__ += ["import_mjcf", "is_mjcf", "read_mjcf"]
from .model.sections import Material, Section  # noqa: E402  (flexible beam cross-sections and materials)
from .model.elements import FlexibleBody, LinearActuator, Measure, ModelInput, ModelOutput  # noqa: E402

__all__ += ["Material", "Section", "FlexibleBody", "LinearActuator", "Measure", "ModelInput", "ModelOutput"]
from .model.elements import FRICTION_JOINTS, JointFriction  # noqa: E402  (joint friction, docs/formulations.md)

__all__ += ["FRICTION_JOINTS", "JointFriction"]
from .outputs import (Output, declared_outputs, marker_local, measure, output, output_paths,  # noqa: E402
                      MEASURE_AXES, MEASURE_UNITS)           # (named outputs of a run)

__all__ += ["Output", "declared_outputs", "marker_local", "measure", "output", "output_paths", "MEASURE_AXES",
            "MEASURE_UNITS"]
from .io.confine import MAX_MESH_BYTES, checked_mesh, confined  # noqa: E402  (paths a file names stay in its folder)
from .io.files import open_regular  # noqa: E402

__all__ += ["MAX_MESH_BYTES", "checked_mesh", "confined", "open_regular"]
from .model.fields import shown_text  # noqa: E402  (text from a file, shown on a terminal or in the GUI)

__all__ += ["shown_text"]
