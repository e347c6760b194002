"""Named outputs: one naming scheme for every scalar a run can report, with its unit, and its
time history from a run's Results (groundwork for named model outputs and FMU outputs, issue 22).

An output is named by a path ``<collection>.<element>.<quantity>[.<component>]``:

==========  ==========================================  ==========  =========================
collection  quantity                                    components  unit
==========  ==========================================  ==========  =========================
bodies      position (CM), velocity, acceleration       x, y, z     m, m/s, m/s²
bodies      angular_velocity, angular_acceleration      x, y, z     rad/s, rad/s²
joints      reaction_force, reaction_torque (on body_j  x, y, z     N, N·m
            from body_i at the joint origin)
joints      a joint coordinate: rotation, translation,  —           rad or m
            x, y (``JOINT_COORDINATES`` of its type)
drivers     force (generalized actuator force)          —           N or N·m
==========  ==========================================  ==========  =========================

Vector components are in global axes.  A joint coordinate is measured as the solver's drivers
measure it (:meth:`solver.constraints.joints.CartesianJoint.coordinate`: zero at the initial
configuration, rotations unwrapped continuously over the run) from the bodies' recorded poses, so
it is the same in both formulations.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .constraints.joints import CartesianJoint
from .constraints.primitives import BodyState
from .errors import ModelError
from .math.rotations import quat_from_matrix, rotation_matrix
from .model.model import GROUND

AXES = ("x", "y", "z")
BODY_QUANTITIES = {"position": ("m", "body_position"), "velocity": ("m/s", "body_velocity"),
                   "acceleration": ("m/s²", "body_acceleration"),
                   "angular_velocity": ("rad/s", "body_angular_velocity"),
                   "angular_acceleration": ("rad/s²", "body_angular_acceleration")}
REACTIONS = {"reaction_force": ("N", 0), "reaction_torque": ("N·m", 1)}
COORDINATE_UNITS = {"rotation": "rad", "translation": "m", "x": "m", "y": "m"}
KIND = {"bodies": "body", "joints": "joint", "drivers": "driver"}


@dataclass(frozen=True)
class Output:
    """One named output: ``path`` (module docstring), its ``unit``, and where it comes from."""
    path: str
    unit: str
    collection: str
    element: str
    quantity: str
    component: int | None = None

    def evaluate(self, results, model) -> np.ndarray:
        """The output's time history (N,) in ``results`` of a run of ``model``."""
        if self.collection == "bodies":
            return np.asarray(getattr(results, BODY_QUANTITIES[self.quantity][1])(self.element))[:, self.component]
        if self.collection == "drivers":
            return np.asarray(results.driver_force(self.element))
        if self.quantity in REACTIONS:
            return np.asarray(results.joint_reaction(self.element)[REACTIONS[self.quantity][1]])[:, self.component]
        return _joint_coordinate(results, model, self.element, self.quantity)


# ---- public API -------------------------------------------------------------------------------
def output_paths(model) -> list[Output]:
    """Every output ``model`` offers, in model order (what a list of outputs to pick from shows)."""
    out = []
    for name in model.bodies:
        for quantity, (unit, _) in BODY_QUANTITIES.items():
            out += [Output(f"bodies.{name}.{quantity}.{a}", unit, "bodies", name, quantity, k) for k, a in enumerate(AXES)]
    for name, joint in model.joints.items():
        for quantity, (unit, _) in REACTIONS.items():
            out += [Output(f"joints.{name}.{quantity}.{a}", unit, "joints", name, quantity, k) for k, a in enumerate(AXES)]
        if not _on_flexible(model, joint):
            out += [Output(f"joints.{name}.{c}", COORDINATE_UNITS[c], "joints", name, c) for c in joint.coordinates()]
    for name in model.drivers:
        unit = "N·m" if model.driver_coordinate(name) == "rotation" else "N"
        out.append(Output(f"drivers.{name}.force", unit, "drivers", name, "force"))
    return out


def output(model, path) -> Output:
    """The output named ``path``; a ModelError names what is wrong with the path and lists the
    valid choices at that level."""
    parts = path.split(".") if isinstance(path, str) else []
    if len(parts) < 3 or parts[0] not in KIND:
        raise ModelError(f"output {path!r}: must be bodies.NAME.QUANTITY.x|y|z, joints.NAME.QUANTITY[.x|y|z] "
                         "or drivers.NAME.force")
    collection, element = parts[0], parts[1]
    names = list(getattr(model, collection))
    if element not in names:
        raise ModelError(f"output {path!r}: no {KIND[collection]} named {element!r} "
                         f"(the model's {collection}: {', '.join(names) or 'none'})")
    offered = [o for o in output_paths(model) if o.collection == collection and o.element == element]
    for o in offered:
        if o.path == path:
            return o
    choices = sorted({o.path.split(".", 2)[2] for o in offered})
    raise ModelError(f"output {path!r}: {KIND[collection]} '{element}' offers {', '.join(choices)}")


# ---- helpers ----------------------------------------------------------------------------------
def declared_outputs(model, results) -> dict:
    """{declared output name: (unit, time history)} of ``model.outputs`` in ``results``
    (:class:`~solver.model.elements.ModelOutput`); a quantity that is not a named output of the
    model is a ModelError naming the declared output."""
    out, problems = {}, []
    for name, e in model.outputs.items():
        try:
            o = output(model, e.quantity)
        except ModelError as exc:
            problems += [f"outputs '{name}'.quantity: {p}" for p in exc.problems]
            continue
        out[name] = (o.unit, o.evaluate(results, model))
    if problems:
        raise ModelError(problems)
    return out


def _on_flexible(model, joint):
    return joint.body_i in model.flexible_bodies or joint.body_j in model.flexible_bodies


def _joint_coordinate(results, model, name, coordinate):
    """A joint coordinate at every output point from the recorded body poses (module docstring)."""
    joint = model.joints[name]

    def initial(body):
        if body == GROUND:
            return np.zeros(3), np.eye(3)
        b = model.bodies[body]
        return np.asarray(b.position, dtype=float), rotation_matrix(np.asarray(b.orientation, dtype=float))

    cj = CartesianJoint(joint, initial(joint.body_i), initial(joint.body_j))

    def states(body):
        if body == GROUND:
            return [BodyState(None)] * len(results.t)
        r, A = np.asarray(results.body_position(body)), np.asarray(results.body_rotation(body))
        return [BodyState(0, np.concatenate([r[k], quat_from_matrix(A[k])])) for k in range(len(r))]

    # in time order: each angle is taken on the branch nearest the previous one
    return np.array([cj.coordinate(coordinate, Si, Sj, 0).val
                     for Si, Sj in zip(states(joint.body_i), states(joint.body_j))], dtype=float)
