"""``export_fmu``: a model → an FMI 2.0 Co-Simulation FMU for Linux x86-64 (docs/fmu.md).

The shared library holds the model's generated kernels (Cartesian formulation, conventional joints),
the runtime C (``reduced.c``, ``dopri.c``: :func:`solver.codegen.build.runtime_source`), the layout of
:mod:`solver.fmu.source` and ``fmu.c`` (integrator and FMI API), compiled in one translation unit against the FMI 2.0 headers shipped in
``solver/fmu/fmi2`` (2-clause BSD, Modelica Association).  The start state is the model's state
assembled here at t = 0 (positions by Newton, velocities projected as ``simulate`` does) and the
independent constraint rows are chosen here (rank-revealing QR, as ``simulate``).
"""
from __future__ import annotations

import hashlib
import math
import re
import tempfile
import uuid
import zipfile
from pathlib import Path

import numpy as np

from ..analysis.assembly import assemble_positions, consistent_velocities
from ..formulations.branches import Branches
from ..codegen.build import CodegenUnavailable, _run_compilers, building, compiler, runtime_source
from ..codegen.flexible import unsupported_forces
from ..formulations.cartesian import CartesianSystem
from ..io.files import atomic_write
from ..compile import compile_model
from ..errors import ModelError, SolverError
from ..partitioning.partition import independent_rows
from .description import model_description
from .source import layout_source
from .variables import fmu_variables

HERE = Path(__file__).parent
FMU_C = HERE / "fmu.c"
HEADERS = HERE / "fmi2"
CFLAGS = ("-O2", "-shared", "-fPIC", "-fvisibility=hidden")     # only the fmi2 functions are exported


def export_fmu(model, path, step=None, inputs=None, rtol=None, atol=None, on_event=None, cancel=None) -> Path:
    """Write ``model`` as an FMI 2.0 Co-Simulation FMU to ``path`` (a ``.fmu`` zip) and return the path.

    ``step``: the default communication step (the DefaultExperiment's stepSize; default the model's
    output step); the FMU's own Dormand–Prince integrator chooses its internal steps with ``rtol``
    and ``atol`` (default: the model's solver settings; an importer's ``fmi2SetupExperiment``
    tolerance replaces rtol, atol scaled with it).
    ``inputs``: {FMI input name: path}, e.g. ``{"crank_torque": "forces.T1.torque.z"}``
    (:mod:`solver.fmu.variables`); default: the model's declared inputs (``model.inputs``).  ``on_event``/``cancel`` as for :func:`solver.compile_model`.
    Raises ModelError for what cannot be exported (naming the element) and SolverError when the
    model cannot be assembled or the library does not compile."""
    s = model.settings
    step, rtol, atol = (_positive(name, getattr(s, key) if value is None else value) for name, key, value in
                        (("step", "output_step", step), ("rtol", "rtol", rtol), ("atol", "atol", atol)))
    compiled = _compile(model, on_event, cancel)
    system = compiled.system
    if system.interpreted:
        raise ModelError([f"forces.{name}: a {_kind(model, name, f)} is not generated as C, so it cannot be in an FMU"
                          for f in system.interpreted for name in getattr(f, "element_names", [f.name])])
    settings = compiled.settings
    if inputs is not None and not isinstance(inputs, dict):
        raise ModelError(f"export_fmu: inputs must be a dict {{FMI name: path}}, got {type(inputs).__name__}")
    if inputs is None:
        inputs = {name: e.target for name, e in model.inputs.items()}
    variables = fmu_variables(model, system, dict(inputs))
    start = _start_state(system)
    kernels_c = Path(system.kernels.info["path"]).with_suffix(".c").read_text() + runtime_source()
    identifier = _identifier(model.name)
    body = layout_source(model, system, start, variables, "", rtol, atol) + kernels_c + FMU_C.read_text()
    guid = "{" + str(uuid.UUID(hashlib.sha256(body.encode()).hexdigest()[:32])) + "}"
    source = "\n".join([kernels_c, layout_source(model, system, start, variables, guid, rtol, atol), FMU_C.read_text()])
    xml = model_description(model_name=model.name or identifier, identifier=identifier, guid=guid,
                            variables=variables, t_end=settings.t_end, step=step, tolerance=rtol,
                            description=f"MBS Studio model '{model.name}' (Cartesian formulation, generated C)")
    path = Path(path)
    with tempfile.TemporaryDirectory() as tmp:
        c_path, so_path = Path(tmp) / f"{identifier}.c", Path(tmp) / f"{identifier}.so"
        c_path.write_text(source)
        cmd = [compiler(), *CFLAGS, "-I", str(HEADERS), "-o", str(so_path), str(c_path), "-lm"]
        try:
            with building(on_event, cancel):
                _run_compilers([cmd])
        except CodegenUnavailable as exc:
            raise SolverError(f"export_fmu: the FMU library did not compile: {exc}", kind="build") from None
        tmp_fmu = Path(tmp) / "model.fmu"
        with zipfile.ZipFile(tmp_fmu, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr("modelDescription.xml", xml)
            z.write(so_path, f"binaries/linux64/{identifier}.so")
            z.write(HEADERS / "LICENSE.txt", "documentation/licenses/fmi2-headers.txt")
        atomic_write(str(path), tmp_fmu.read_bytes(), keep_backup=False)    # never through a link
    return path


def _compile(model, on_event, cancel):
    """The model compiled with generated kernels (Cartesian, conventional joints).  A flexible model
    the kernels do not cover is refused naming the force elements in the way
    (:func:`solver.codegen.flexible.unsupported_forces`, looked up only then)."""
    try:
        return compile_model(model, formulation="cartesian", constraints="conventional", codegen="on",
                             on_event=on_event, cancel=cancel)
    except ModelError:
        if model.flexible_bodies:
            blocking = unsupported_forces(CartesianSystem(model))
            if blocking:
                raise ModelError([f"forces.{f.name}: a {type(f).__name__} on a flexible body is not generated as C, "
                                  "so it cannot be in an FMU" for f in blocking]) from None
        raise


def _kind(model, name, evaluator) -> str:
    """What force element ``name`` is, for a refusal: its label (a contact group: all its members'
    contacts are one evaluator, ``ContactSet``), else the evaluator's class."""
    element = model.forces.get(name)
    label = getattr(element, "LABEL", None)
    return label.lower() if label else type(evaluator).__name__


def _positive(name, value) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = float("nan")
    if not (number > 0 and math.isfinite(number)):
        raise ModelError(f"export_fmu: {name} must be a finite number > 0, got {value!r}")
    return number


def _identifier(name) -> str:
    """A C identifier from the model name (the FMU's modelIdentifier and library name)."""
    ident = re.sub(r"\W", "_", name or "", flags=re.ASCII).strip("_") or "model"
    return ident if ident[0].isalpha() else f"m_{ident}"


def _start_state(system):
    """(q, q̇, (unwrapped angles, their rates), independent rows, redundant rows, parameters) at
    t = 0: the state ``simulate`` starts from (positions assembled, velocities projected on
    Φ_q q̇ = ν; the angles' branch state as :meth:`solver.formulations.branches.Branches.start` makes it)."""
    q, qd, t0 = system.initial_state()
    q = assemble_positions(system, q, t0)
    qd = consistent_velocities(system, q, np.asarray(qd, dtype=float), t0)
    branches = Branches(system)
    branches.start(system, t0, q, qd)
    ev = system.constraints(q, t0)
    rows, redundant = independent_rows(ev.jac)
    slots = [branches.index[id(cj)] for _, cj, _ in system._angle_rows]
    return q, qd, (branches.angle[slots], branches.rate[slots]), rows, redundant, np.array(system.kernels["par"])
