"""Named outputs: one naming scheme for every scalar a run can report, with its unit, and its
time history from a run's Results (declared model outputs, FMU outputs, the GUI's custom plots).

An output is named by a path ``<collection>.<element>.<quantity>[.<component>]``:

==========  ==========================================  ==========  =========================
collection  quantity                                    components  unit
==========  ==========================================  ==========  =========================
bodies      position (CM), velocity, acceleration       x, y, z     m, m/s, m/s²
bodies      angular_velocity, angular_acceleration      x, y, z     rad/s, rad/s²
joints      reaction_force, reaction_torque (on body_j  x, y, z     N, N·m
            from body_i at the joint origin)
joints      a joint coordinate: rotation, translation,  —           rad or m
            x, y (``JOINT_KINDS[type].coordinates``)
joints      stop_force: the stops' generalized force    —           N or N·m
            along the limited coordinate; stop_power:               W
            the power the stops dissipate (limited joints)
drivers     force (generalized actuator force)          —           N or N·m
couplers    force (generalized force along joint_j's    —           N or N·m
            coordinate: Results.coupler_force)
forces      friction_power: the power a joint friction  —           W
            dissipates (its normal load from the
            recorded joint reaction)
forces      contact_force: a contact element's force    x, y, z     N
            on body_j (``Results.contact_force``)
forces      contact_force.MEMBER: a contact group's     x, y, z     N
            total force on its body MEMBER from the
            others (``Results.contact_force(NAME,
            member=MEMBER)``)
==========  ==========================================  ==========  =========================

A contact group's path has one part more than the others, its member between quantity and component:
``forces.GROUP.contact_force.MEMBER.x`` (three paths per member: a group of n bodies offers 3 n).

Vector components are in global axes.  A joint coordinate is measured as the solver's drivers
measure it (:meth:`solver.constraints.joints.CartesianJoint.coordinate`: zero at the initial
configuration, rotations unwrapped continuously over the run) from the bodies' recorded poses, so
it is the same in both formulations; a rotation's branch at each output point is the one nearest the
previous point's angle advanced by the recorded rate (a joint may turn more than π between points).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .constraints.joints import CartesianJoint
from .constraints.primitives import BodyState
from .errors import ModelError
from .joint_forces import JointFriction, JointStop
from .math.rotations import quat_from_matrix, rotation_matrix
from .model.fields import show_names
from .model.model import GROUND

AXES = ("x", "y", "z")
BODY_QUANTITIES = {"position": ("m", "body_position"), "velocity": ("m/s", "body_velocity"),
                   "acceleration": ("m/s²", "body_acceleration"),
                   "angular_velocity": ("rad/s", "body_angular_velocity"),
                   "angular_acceleration": ("rad/s²", "body_angular_acceleration")}
REACTIONS = {"reaction_force": ("N", 0), "reaction_torque": ("N·m", 1)}
COORDINATE_UNITS = {"rotation": "rad", "translation": "m", "x": "m", "y": "m"}
STOP_QUANTITIES = {"stop_force": 0, "stop_power": 1}      # JointStop.load: (F, P, …)
KIND = {"bodies": "body", "joints": "joint", "drivers": "driver", "couplers": "coupler", "forces": "force element"}


@dataclass(frozen=True)
class Output:
    """One named output: ``path`` (module docstring), its ``unit``, and where it comes from
    (``member``: a contact group's body)."""
    path: str
    unit: str
    collection: str
    element: str
    quantity: str
    component: int | None = None
    member: str | None = None

    def evaluate(self, results, model) -> np.ndarray:
        """The output's time history (N,) in ``results`` of a run of ``model``."""
        if self.collection == "bodies":
            return np.asarray(getattr(results, BODY_QUANTITIES[self.quantity][1])(self.element))[:, self.component]
        if self.collection == "drivers":
            return np.asarray(results.driver_force(self.element))
        if self.collection == "couplers":
            return np.asarray(results.coupler_force(self.element))
        if self.collection == "forces" and self.quantity == "contact_force":
            return np.asarray(results.contact_force(self.element, member=self.member))[:, self.component]
        if self.collection == "forces":
            return _friction_power(results, model, self.element)
        if self.quantity in REACTIONS:
            return np.asarray(results.joint_reaction(self.element)[REACTIONS[self.quantity][1]])[:, self.component]
        if self.quantity in STOP_QUANTITIES:
            return _stop_load(results, model, self.element)[:, STOP_QUANTITIES[self.quantity]]
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
            coordinate = joint.stop_coordinate()
            if coordinate is not None:
                out += [Output(f"joints.{name}.stop_force", "N·m" if coordinate == "rotation" else "N", "joints", name,
                               "stop_force"), Output(f"joints.{name}.stop_power", "W", "joints", name, "stop_power")]
    for name in model.drivers:
        unit = "N·m" if model.driver_coordinate(name) == "rotation" else "N"
        out.append(Output(f"drivers.{name}.force", unit, "drivers", name, "force"))
    for name in model.couplers:
        unit = "N·m" if model.coupler_coordinates(name)[1] == "rotation" else "N"
        out.append(Output(f"couplers.{name}.force", unit, "couplers", name, "force"))
    for name, e in model.forces.items():
        if e.KIND == "joint_friction":
            out.append(Output(f"forces.{name}.friction_power", "W", "forces", name, "friction_power"))
        elif e.KIND == "contact":
            out += [Output(f"forces.{name}.contact_force.{a}", "N", "forces", name, "contact_force", k)
                    for k, a in enumerate(AXES)]
        elif e.KIND == "contact_group":
            out += [Output(f"forces.{name}.contact_force.{member}.{a}", "N", "forces", name, "contact_force", k, member)
                    for member in e.bodies for k, a in enumerate(AXES)]
    return out


def output(model, path) -> Output:
    """The output named ``path``; a ModelError names what is wrong with the path and lists the
    valid choices at that level."""
    parts = path.split(".") if isinstance(path, str) else []
    if len(parts) < 3 or parts[0] not in KIND:
        raise ModelError(f"output {path!r}: must be bodies.NAME.QUANTITY.x|y|z, joints.NAME.QUANTITY[.x|y|z], "
                         "drivers.NAME.force, couplers.NAME.force, forces.NAME.friction_power, "
                         "forces.NAME.contact_force.x|y|z or forces.GROUP.contact_force.MEMBER.x|y|z")
    collection, element = parts[0], parts[1]
    names = list(getattr(model, collection))
    if element not in names:
        raise ModelError(f"output {path!r}: no {KIND[collection]} named {element!r} "
                         f"(the model's {collection}: {show_names(names)})")
    offered = [o for o in output_paths(model) if o.collection == collection and o.element == element]
    for o in offered:
        if o.path == path:
            return o
    choices = sorted({o.path.split(".", 2)[2] for o in offered})
    raise ModelError(f"output {path!r}: {KIND[collection]} '{element}' offers {show_names(choices)}")


# ---- helpers ----------------------------------------------------------------------------------
MEASURE_UNITS = {"distance": "m", "angle": "rad", "velocity": "m/s"}
MEASURE_AXES = {"distance": ("",), "angle": ("x", "y", "z"), "velocity": ("x", "y", "z", "magnitude")}


def measure(results, model, kind, marker_i, marker_j, axis="") -> np.ndarray:
    """The time history (N,) of a measure between marker ``marker_i`` (the reference) and marker
    ``marker_j`` (either may be "ground": the global origin and axes) in ``results`` of a run of
    ``model``.  Markers are given globally at the initial configuration, so each keeps
    s' = A₀ᵀ(p₀ − r₀) and A'ₘ = A₀ᵀ Aₘ₀ on its body and is at p = r + A s', Aₘ = A A'ₘ.

    - ``distance``: |p_j − p_i| (m);
    - ``angle`` about axis a of marker i (x, y or z): with (a, b, c) cyclic and u = A_iᵀ (b axis of
      marker j), θ = atan2(u_c, u_b), unwrapped over the run (rad);
    - ``velocity``: ṗ_j − ṗ_i, ṗ = v + ω × (A s'), global component x, y, z or its magnitude (m/s).
    A bad kind, axis or marker is a ModelError."""
    if kind not in MEASURE_UNITS:
        raise ModelError(f"measure kind must be one of {', '.join(MEASURE_UNITS)}; got {kind!r}")
    if axis not in MEASURE_AXES[kind]:
        raise ModelError(f"a {kind} measure takes axis " + (", ".join(MEASURE_AXES[kind]) if kind != "distance"
                                                              else "'' (none)") + f"; got {axis!r}")
    pi, Ai, vi = _marker_motion(results, model, marker_i)
    pj, Aj, vj = _marker_motion(results, model, marker_j)
    if kind == "distance":
        return np.linalg.norm(pj - pi, axis=1)
    if kind == "velocity":
        dv = vj - vi
        return np.linalg.norm(dv, axis=1) if axis == "magnitude" else dv[:, "xyz".index(axis)]
    a = "xyz".index(axis)
    b, c = (a + 1) % 3, (a + 2) % 3
    u = np.einsum("nki,nk->ni", Ai, Aj[:, :, b])     # A_iᵀ times marker j's b axis
    return np.unwrap(np.arctan2(u[:, c], u[:, b]))


def marker_local(model, name):
    """(body, s') of marker ``name``: its body and its position in body axes from the model's initial
    configuration, s' = A₀ᵀ (p₀ − r₀); the marker is then at p = r + A s'."""
    if name not in model.markers:
        raise ModelError(f"no marker named '{name}'")
    m = model.markers[name]
    body = model.bodies[m.body]
    A0 = rotation_matrix(np.asarray(body.orientation, float))
    return m.body, A0.T @ (np.asarray(m.position, float) - np.asarray(body.position, float))


def _marker_motion(results, model, marker):
    """(p (N, 3), A (N, 3, 3), ṗ (N, 3)) of a marker over a run (see :func:`measure`)."""
    n = len(results.t)
    if marker == GROUND:
        return np.zeros((n, 3)), np.tile(np.eye(3), (n, 1, 1)), np.zeros((n, 3))
    if marker not in model.markers:
        raise ModelError(f"no marker named '{marker}'")
    m = model.markers[marker]
    Am0 = rotation_matrix(np.asarray(m.orientation, float))
    if m.body not in results.body_names:
        raise ModelError(f"marker '{marker}' is on '{m.body}', which has no rigid-body results")
    A0 = rotation_matrix(np.asarray(model.bodies[m.body].orientation, float))
    _, local = marker_local(model, marker)
    r, A = np.asarray(results.body_position(m.body), float), np.asarray(results.body_rotation(m.body), float)
    v, w = np.asarray(results.body_velocity(m.body), float), np.asarray(results.body_angular_velocity(m.body), float)
    arm = A @ local
    return r + arm, A @ (A0.T @ Am0), v + np.cross(w, arm)


def declared_outputs(model, results) -> dict:
    """{declared output name: (unit, time history)} of ``model.outputs`` in ``results``
    (:class:`~solver.model.elements.ModelOutput`: a named output of the run, or ``measures.NAME`` of
    a declared :class:`~solver.model.elements.Measure`); a quantity that is neither is a ModelError
    naming the declared output."""
    out, problems = {}, []
    for name, e in model.outputs.items():
        try:
            if e.quantity.startswith("measures."):
                mname = e.quantity.split(".", 1)[1]
                if mname not in model.measures:
                    raise ModelError(f"no measure named '{mname}'")
                md = model.measures[mname]
                out[name] = (MEASURE_UNITS[md.kind], measure(results, model, md.kind, md.marker_i, md.marker_j, md.axis))
            else:
                o = output(model, e.quantity)
                out[name] = (o.unit, o.evaluate(results, model))
        except ModelError as exc:
            problems += [f"outputs '{name}'.quantity: {p}" for p in exc.problems]
    if problems:
        raise ModelError(problems)
    return out


def _on_flexible(model, joint):
    return joint.body_i in model.flexible_bodies or joint.body_j in model.flexible_bodies


def _initial(model, body):
    """(r0, A0) of a body at the initial configuration (ground: the origin)."""
    if body == GROUND:
        return np.zeros(3), np.eye(3)
    b = model.bodies[body]
    return np.asarray(b.position, dtype=float), rotation_matrix(np.asarray(b.orientation, dtype=float))


class _RecordedFrames:
    """Body frames (r, A, v, ω) of output point k (a slice: stacked points) of a run, by the joint's
    end index (0 = body_i, 1 = body_j; −1 ground), as :mod:`solver.joint_forces` reads them."""

    def __init__(self, results, bodies):
        self.data = [None if b == GROUND else [np.asarray(getter(b), dtype=float) for getter in (
            results.body_position, results.body_rotation, results.body_velocity, results.body_angular_velocity)]
            for b in bodies]
        self.k = 0

    def get(self, b):
        if b < 0:
            return np.zeros(3), np.eye(3), np.zeros(3), np.zeros(3)
        return tuple(a[self.k] for a in self.data[b])


def _stop_load(results, model, name):
    """(N, 2): the stops' generalized force along the limited coordinate and the power they
    dissipate at every output point, from the recorded body states (in time order: rotations
    unwrap as in the run)."""
    joint = model.joints[name]
    ends = (joint.body_i, joint.body_j)
    frames = _RecordedFrames(results, ends)
    stop = JointStop(joint, *(-1 if b == GROUND else k for k, b in enumerate(ends)),
                     *(_initial(model, b) for b in ends))
    out = np.empty((len(results.t), 2))
    for k in range(len(out)):
        frames.k = k
        out[k] = stop.load(frames)[:2]
    return out


def _friction_power(results, model, name):
    """(N,): the power joint friction ``name`` dissipated at every output point, its normal load
    from the recorded reaction of its joint (in joint axes)."""
    e = model.forces[name]
    joint = model.joints[e.joint]
    ends = (joint.body_i, joint.body_j)
    frames = _RecordedFrames(results, ends)
    frames.k = slice(None)
    friction = JointFriction(e, joint, *(-1 if b == GROUND else k for k, b in enumerate(ends)),
                             *(_initial(model, b) for b in ends))
    if e.reaction_load:
        friction.normal = friction.normal_load(*(np.asarray(x, dtype=float)
                                                 for x in results.joint_reaction(e.joint, frame="joint")))
    return friction.power(frames)


def _joint_coordinate(results, model, name, coordinate):
    """A joint coordinate at every output point from the recorded body poses (module docstring)."""
    joint = model.joints[name]
    cj = CartesianJoint(joint, _initial(model, joint.body_i), _initial(model, joint.body_j))

    def states(body):
        if body == GROUND:
            return [BodyState(None)] * len(results.t)
        r, A = np.asarray(results.body_position(body)), np.asarray(results.body_rotation(body))
        return [BodyState(0, np.concatenate([r[k], quat_from_matrix(A[k])])) for k in range(len(r))]

    # in time order: each angle on the branch nearest the previous one advanced by the trapezoid of its
    # rate ż_iᵀ(ω_j − ω_i) over the output step (a joint may turn more than π between output points:
    # fuzz seed 2033; the prediction's error, (Δt³/12)·|θ⃛|, stays far below π)
    rate = _rotation_rate(results, joint, cj) if coordinate == "rotation" else None
    t, values = np.asarray(results.t, dtype=float), []
    for k, (Si, Sj) in enumerate(zip(states(joint.body_i), states(joint.body_j))):
        if rate is not None and k:
            cj.angle = values[-1] + 0.5 * (t[k] - t[k - 1]) * (rate[k - 1] + rate[k])
        values.append(cj.coordinate(coordinate, Si, Sj, 0).val)
    return np.array(values, dtype=float)


def _rotation_rate(results, joint, cj):
    """(N,): the rate of a joint's rotation about its axis, ż_iᵀ(ω_j − ω_i) with ż_i = A_i C_i e_z
    (global axes), from the recorded rotations and angular velocities."""
    frames = _RecordedFrames(results, (joint.body_i, joint.body_j))
    frames.k = slice(None)
    (_, A_i, _, w_i), (_, _, _, w_j) = frames.get(-1 if joint.body_i == GROUND else 0), frames.get(1)
    return np.sum((A_i @ cj.C_i[:, 2]) * (w_j - w_i), axis=-1)
