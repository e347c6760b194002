"""The variables of an exported FMU: outputs, tunable parameters and inputs, with units.

Outputs are named as :mod:`solver.outputs` names a run's scalars, and cover what the compiled state
gives directly: ``bodies.NAME.position|velocity|acceleration|angular_velocity.x|y|z``,
``joints.NAME.reaction_force|reaction_torque.x|y|z`` (on body_j from body_i at the joint origin,
global axes) and ``drivers.NAME.force``.  Joint coordinates and angular accelerations are not
offered by the FMU.  :mod:`solver.outputs` names no quantity of a flexible body, so a flexible
body's outputs are named after the run's accessors (:meth:`solver.results.Results.flexible_frame`,
:meth:`~solver.results.Results.modal_coordinates`): ``flexible_bodies.NAME.position.x|y|z`` (the
floating frame's origin), ``.velocity.*`` and ``.angular_velocity.*`` of the frame (global axes),
and ``flexible_bodies.NAME.modal.K`` (column K = 0, 1, … of the modal coordinates; no unit:
mass-normalized modes make them m·√kg, which FMI's integer base-unit exponents cannot state).

Parameters (FMI ``causality="parameter" variability="tunable"``) are entries of the kernels'
parameter vector (:func:`solver.codegen.derive.parameters`): ``bodies.NAME.mass`` and the
generated force kinds' ``tunable`` entries (:class:`solver.codegen.derive.ForceHook`):
``forces.NAME.stiffness`` and ``forces.NAME.damping`` of spring-dampers and tires.

Inputs replace a time function by a value set through FMI: ``forces.NAME.force`` (a spring-damper's
actuator tension), ``forces.NAME.force.x|y|z`` (an applied force), ``forces.NAME.torque.x|y|z`` (an
applied torque) — the kernels' time inputs, :func:`input_slots` — and ``drivers.NAME.motion`` (a
driver's prescribed coordinate; its rate and acceleration are the input's derivatives).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..codegen.derive import BODY_PARAMETERS, generated_elements, hook_of, input_functions
from ..errors import ModelError
from ..model.elements import NAME
from ..model.fields import FieldProblem
from ..outputs import output_paths

#: C codes of the output kinds (fmu.c ``output_value``); parameters and inputs have their own codes
OUTPUT_KINDS = {"position": 1, "velocity": 2, "acceleration": 3, "angular_velocity": 4, "reaction_force": 5,
                "reaction_torque": 6, "force": 7}
VR_PARAMETER, VR_INPUT = 100, 101
#: SI base-unit exponents (kg, m, s, rad) of every unit a variable may have
UNITS = {"kg": (1, 0, 0, 0), "m": (0, 1, 0, 0), "rad": (0, 0, 0, 1), "m/s": (0, 1, -1, 0), "m/s²": (0, 1, -2, 0),
         "rad/s": (0, 0, -1, 1), "N": (1, 1, -2, 0), "N·m": (1, 2, -2, 0), "N/m": (1, 0, -2, 0),
         "N·s/m": (1, 0, -1, 0)}


@dataclass(frozen=True)
class Variable:
    """One FMI variable: ``name``, ``causality`` ("output", "parameter" or "input"), ``unit``, the
    C table entry (``kind``: an OUTPUT_KINDS code, VR_PARAMETER or VR_INPUT; ``a``, ``b``: see
    :func:`fmu_variables`), ``start`` (parameters and inputs), a ``description`` and, for an input,
    the path of the time function it ``replaces``."""
    name: str
    causality: str
    unit: str
    kind: int
    a: int
    b: int = 0
    start: float | None = None
    description: str = ""
    replaces: str = ""


def input_slots(system) -> list[tuple[str, str]]:
    """(path, unit) of every entry of the kernels' time-input vector u, in its order
    (:func:`solver.codegen.derive.input_functions`); "" for entries that cannot be an FMI input
    (a speed controller's target phase): each generated force element's
    :meth:`solver.codegen.derive.ForceHook.input_slots`."""
    slots = [slot for f in system.force_elements for hook in [hook_of(f)] if hook is not None
             for slot in hook.input_slots(f)]
    assert len(slots) == len(input_functions(system))
    return slots


def fmu_variables(model, system, inputs) -> list[Variable]:
    """Outputs, then parameters, then inputs (their value references are their positions).

    C table entries: outputs of bodies ``a`` = coordinate index 7 k + component (angular velocity:
    ``a`` = body, ``b`` = component), reactions ``a`` = joint, ``b`` = component, driver forces
    ``a`` = constraint row (coupler forces the same); parameters ``a`` = index in the parameter vector, ``b`` = 1 when the value
    must be > 0 (else ≥ 0); inputs ``a`` = input number.  ``inputs``: {FMI name: path} (module
    docstring); a ModelError names a bad entry."""
    body = {name: k for k, name in enumerate(system.body_names)}
    joint = {name: k for k, name in enumerate(system.joint_names)}
    row_of = {("drivers", name): d.row for name, d in zip(system.driver_names, system.drivers)}
    row_of.update({("couplers", name): c.row for name, c in zip(system.coupler_names, system.couplers)})
    out = []
    for o in output_paths(model):
        kind = OUTPUT_KINDS.get(o.quantity)
        if kind is None:
            continue
        if o.collection == "bodies":
            k = body[o.element]
            a, b = (k, o.component) if o.quantity == "angular_velocity" else (7 * k + o.component, 0)
        elif o.collection == "joints":
            a, b = joint[o.element], o.component
        else:
            a, b = row_of[o.collection, o.element], 0
        out.append(Variable(o.path, "output", o.unit, kind, a, b))
    out += _flexible_outputs(system)
    out += _parameters(system)
    out += _inputs(model, system, inputs, {v.name for v in out})
    return out


def _flexible_outputs(system):
    """The floating frames' origins, velocities and angular velocities and the modal coordinates of
    the flexible bodies (module docstring): ``a`` = coordinate index, or for angular velocities the
    frame's block and ``b`` the component, as for rigid bodies."""
    out = []
    for fb in system.flex:
        stem = f"flexible_bodies.{fb.name}"
        for quantity, unit in (("position", "m"), ("velocity", "m/s"), ("angular_velocity", "rad/s")):
            out += [Variable(f"{stem}.{quantity}.{axis}", "output", unit, OUTPUT_KINDS[quantity],
                             *((fb.o // 7, c) if quantity == "angular_velocity" else (fb.o + c, 0)),
                             description=f"{quantity.replace('_', ' ')} of the floating frame")
                    for c, axis in enumerate("xyz")]
        out += [Variable(f"{stem}.modal.{k}", "output", "", OUTPUT_KINDS["position"], fb.ao + k,
                         description=f"modal coordinate {k} (mass-normalized mode)") for k in range(fb.k)]
    return out


def _parameters(system):
    from ..codegen.derive import describe
    desc = describe(system)
    par = []
    for k, name in enumerate(system.body_names):
        par.append(Variable(f"bodies.{name}.mass", "parameter", "kg", VR_PARAMETER, BODY_PARAMETERS * k, 1,
                            float(system.mass_values[k]), "mass"))
    for hook, f, entry in generated_elements(system, desc):
        values = hook.parameters(f)
        par += [Variable(f"forces.{f.name}.{field}", "parameter", unit, VR_PARAMETER, entry["par"] + k, int(positive),
                         float(values[k]), description) for field, unit, k, positive, description in hook.tunable]
    return par


def driver_slots(model, system) -> dict:
    """{``drivers.NAME.motion``: (driver index in the kernels' order, unit)}."""
    return {f"drivers.{name}.motion": (d, "rad" if model.driver_coordinate(name) == "rotation" else "m")
            for d, name in enumerate(system.driver_names)}


def _inputs(model, system, inputs, taken):
    fns = input_functions(system)
    where = {path: (unit, fns[k].value(0.0)) for k, (path, unit) in enumerate(input_slots(system)) if path}
    where.update({path: (unit, system._driver_fns[d].value(0.0))
                  for path, (d, unit) in driver_slots(model, system).items()})
    problems, out, used = [], [], set()
    for name, path in inputs.items():
        if not isinstance(name, str) or not name or name in taken:
            problems.append(f"inputs: {name!r} is not a new variable name")
        elif (why := _name_problem(name)) is not None:
            problems.append(f"inputs: {name!r} {why}")
        elif path not in where:
            problems.append(f"inputs.{name}: {path!r} is not an input of this model (choices: "
                            f"{', '.join(where) or 'none: add an applied force, torque, spring-damper or driver'})")
        elif path in used:
            problems.append(f"inputs.{name}: {path!r} is already an input")
        else:
            used.add(path)
            unit, start = where[path]
            out.append(Variable(name, "input", unit, VR_INPUT, len(out), 0, float(start), f"replaces {path}", path))
    if problems:
        raise ModelError(problems)
    return out


def _name_problem(name):
    """Why ``name`` cannot name an FMI variable (the rules of element names: no quotes, slashes,
    control characters or noncharacters, which modelDescription.xml cannot carry), or None."""
    try:
        NAME.coerce(name)
    except FieldProblem as p:
        return str(p)
    return None
