"""Force elements and applied loads, evaluated on body states in global form.

Every formulation hands the same body states (CM position r, rotation A, CM velocity v and angular
velocity ω, all global) and receives per-body wrenches: force at the CM and torque about the CM,
global axes.  Potential energies (springs, preloads) are reported for the energy account.
Gravity is handled by the formulations (it is a body force, m g at the CM).

States may be *stacked*: arrays with a leading axis of N states (r (N, nb, 3), A (N, nb, 3, 3), …,
wrenches (N, nb, 3)), as output post-processing hands them over.  Elements whose class has
``stacked = True`` evaluate any leading axes in one call (vector algebra over the last axes); the
others take one state at a time, in order (:func:`element_loads` loops for them: they may carry a
state between calls, e.g. a wheel's unwrapped spin angle).
"""
from __future__ import annotations

import math

import numpy as np

from .constraints.forms import Values, nearest_branch, scalar
from .contact.element import ContactPair, ContactSet, contact_spec
from .contact.group import ContactGroupMembers, group_spec
from .constraints.joints import COORDINATES, joint_frame
from .errors import ModelError
from .expressions import time_function
from .joint_forces import joint_friction, joint_stops
from .math.namespace import NUMPY_MATH, along, dot
from .math.rotations import cross, matvec, tmatvec
from .model.model import GROUND


class BodyFrames:
    """Global states of all bodies; index −1 is ground (at rest at the origin).  ``angles``: the
    unwrapped angles the integration tracked at these states, {element name: value, or array over
    the leading axes} (:meth:`RotationalSpringDamperForce.rotation` takes the branch nearest it; absent
    or NaN: the element follows its own last angle)."""

    def __init__(self, r, A, v, w, angles=None):
        self.r, self.A, self.v, self.w = r, A, v, w
        self.angles = angles or {}

    def get(self, b):
        if b < 0:
            return np.zeros(3), np.eye(3), np.zeros(3), np.zeros(3)
        return self.r[..., b, :], self.A[..., b, :, :], self.v[..., b, :], self.w[..., b, :]

    def state(self, x):
        """The frames of state x of stacked frames (an index over the leading axes)."""
        return BodyFrames(self.r[x], self.A[x], self.v[x], self.w[x], angle_rows(self.angles, x))


def angle_rows(angles, x):
    """The entries x (an index or slice over the leading axes) of tracked angles {name: array}
    (``BodyFrames.angles``); None stays None."""
    return None if angles is None else {name: np.asarray(a)[x] for name, a in angles.items()}


class Wrenches:
    """Accumulator of per-body force (at the CM) and torque, global axes; ``lead``: leading axes of
    stacked states."""

    def __init__(self, nb, lead=()):
        self.F = np.zeros(tuple(lead) + (nb, 3))
        self.T = np.zeros(tuple(lead) + (nb, 3))

    def at_point(self, b, force, point, frames: BodyFrames):
        """Add ``force`` acting at global ``point`` of body b."""
        if b < 0:
            return
        self.F[..., b, :] += force
        self.T[..., b, :] += cross(point - frames.r[..., b, :], force)

    def torque(self, b, torque):
        if b >= 0:
            self.T[..., b, :] += torque


def _values(fn, t):
    """A time function at a time or at each of stacked times (same shape)."""
    if np.ndim(t) == 0:
        return fn.value(t)
    return np.array([fn.value(float(x)) for x in np.ravel(t)]).reshape(np.shape(t))


def element_loads(elements, t, frames: BodyFrames, nb, potential=False):
    """Wrenches of ``elements`` on one state (t a number) or on stacked states (t with the leading
    shape), and with ``potential`` their potential energy per state (else None).  Elements with
    ``stacked`` take all states in one call; the others run state by state, in order."""
    lead = np.shape(t)
    out = Wrenches(nb, lead)
    energy = np.zeros(lead) if potential else None
    for f in elements:
        if getattr(f, "stacked", False) or not lead:
            f.apply(t, frames, out)
            if potential:
                energy = energy + f.potential(frames)
            continue
        for x in np.ndindex(lead):
            one, single = frames.state(x), Wrenches(nb)
            f.apply(float(t[x]), one, single)
            out.F[x] += single.F
            out.T[x] += single.T
            if potential:
                energy[x] += f.potential(one)
    return out, energy


def element_potential(elements, frames: BodyFrames, lead=()):
    """The potential energy of ``elements`` per state (``lead``: the shape of the stacked states'
    leading axes, () for one state), as :func:`element_loads` sums it (element by element, state by
    state for the elements without ``stacked``: a rotational spring's branch follows the states as
    there), without the loads (output rows whose loads compiled code wrote:
    :meth:`solver.codegen.output.CompiledOutput.rows`)."""
    energy = np.zeros(lead)
    for f in elements:
        if getattr(f, "stacked", False) or not lead:
            energy = energy + f.potential(frames)
            continue
        for x in np.ndindex(lead):
            energy[x] += f.potential(frames.state(x))
    return energy


def _local(index, name, init, point):
    """Frame index and frame offset of a global point (None: the frame origin) at the initial
    configuration.  ``index`` maps a body name to its frame index, or (a flexible body) to a
    function of the point that adds an attachment frame there and returns its index
    (:mod:`solver.flexible.loads`)."""
    b = index[name] if name != GROUND else -1
    if callable(b):
        b = b(point)
    if point is None:
        return b, np.zeros(3)
    r0, A0 = init[b] if b >= 0 else (np.zeros(3), np.eye(3))
    return b, A0.T @ (np.asarray(point, dtype=float) - r0)


APART = 1e-12      # m: a line element whose ends are closer has no line of action (and no force)


def spring_damper_tension(length, rate, k, c, l0, preload, f):
    """Tension T = k (L − l0) + c L̇ + preload + f(t) of a line element of length L (rate L̇)."""
    return k * (length - l0) + c * rate + preload + f


def line_length(d, m=NUMPY_MATH):
    """L = |d| = √(dᵀd) of the line d = P_j − P_i of a line element (numbers, stacked, or sympy)."""
    return m.sqrt(dot(d, d))


def spring_damper_force(d, dv, k, c, l0, preload, f, m=NUMPY_MATH):
    """Force T d/L on end i (−T d/L on end j) of a spring-damper between points P_i and P_j,
    d = P_j − P_i, dv = V_j − V_i, L = :func:`line_length`, L̇ = dᵀdv/L, T by
    :func:`spring_damper_tension`; zero when L < APART.  Written once for numbers (stacked states
    (…, 3); coincident ends give a 0/0 that the gate drops) and for the code generator's sympy
    vectors (``m``: :mod:`solver.math.namespace`)."""
    length = line_length(d, m)
    tension = spring_damper_tension(length, dot(d, dv) / length, k, c, l0, preload, f)
    return along(m.gate(length >= APART, tension / length), d)


class SpringDamperForce:
    """Tension T = k (l − l0) + c l̇ + preload + f(t) along the line from point_i to point_j
    (:func:`spring_damper_force`); potential ½ k (l − l0)² + preload (l − l0).  Stacked states: yes."""

    stacked = True

    def __init__(self, e, index, init, stiffness=0.0, damping=0.0, free_length=None, preload=0.0):
        """Between ``e``'s point_i on body_i and point_j on body_j, with tension ``e.force`` (t) and
        the given spring constants (a spring-damper passes its own; a linear actuator none)."""
        self.name = e.name
        self.bi, self.si = _local(index, e.body_i, init, e.point_i)
        self.bj, self.sj = _local(index, e.body_j, init, e.point_j)
        self.k, self.c, self.preload = stiffness, damping, preload
        self.f = time_function(e.force)
        self.l0 = float(line_length(np.subtract(e.point_j, e.point_i))) if free_length is None else free_length

    def _ends(self, frames, velocity=True):
        """(P_i, P_j, V_j − V_i): the end points and their relative velocity (None without ``velocity``)."""
        ri, Ai, vi, wi = frames.get(self.bi)
        rj, Aj, vj, wj = frames.get(self.bj)
        Pi, Pj = ri + Ai @ self.si, rj + Aj @ self.sj
        if not velocity:
            return Pi, Pj, None
        Vi, Vj = vi + cross(wi, Pi - ri), vj + cross(wj, Pj - rj)
        return Pi, Pj, Vj - Vi

    def apply(self, t, frames, out: Wrenches):
        Pi, Pj, dv = self._ends(frames)
        with np.errstate(divide="ignore", invalid="ignore"):       # coincident ends: gated out
            force = spring_damper_force(Pj - Pi, dv, self.k, self.c, self.l0, self.preload, _values(self.f, t))
        out.at_point(self.bj, -force, Pj, frames)
        out.at_point(self.bi, force, Pi, frames)

    def potential(self, frames):
        Pi, Pj, _ = self._ends(frames, velocity=False)
        x = line_length(Pj - Pi) - self.l0
        return 0.5 * self.k * x * x + self.preload * x

    def conserves_energy(self):
        """Its work is in the potential: no damping and no actuator force."""
        return self.c == 0.0 and self.conservative_at_rest()

    def conservative_at_rest(self):
        """At rest (no damping force) its load is −∂V/∂q unless an actuator force acts."""
        return getattr(self.f, "is_constant", False) and self.f.value(0.0) == 0.0


class RotationalSpringDamperForce:
    """Torque on body_j about the joint axis τ = −k (θ − θ0) − c θ̇ − preload (−τ on body_i);
    potential ½ k (θ − θ0)² + preload θ.  θ is the joint's rotation coordinate (``COORDINATES``,
    atan2(y_iᵀx_j, x_iᵀx_j)), unwrapped to be continuous: within a step loop nearest its prediction
    (solver.formulations.branches), at an output point nearest the angle the integration tracked
    there when the frames carry it (``BodyFrames.angles``: the relative formulation's joint
    coordinate, the Cartesian step loop's accepted angle), never re-unwrapped from one output row to
    the next (a joint turning more than π between output points would lose turns: fuzz seed 2033)."""

    def __init__(self, e, joint, index, init):
        self.name, self.joint = e.name, joint.name
        self.k, self.c, self.theta0, self.preload = e.stiffness, e.damping, e.free_angle, e.preload
        C = joint_frame(joint)
        self.bi = _local(index, joint.body_i, init, joint.origin)[0]
        self.bj = _local(index, joint.body_j, init, joint.origin)[0]
        Ai0 = init[self.bi][1] if self.bi >= 0 else np.eye(3)
        Aj0 = init[self.bj][1] if self.bj >= 0 else np.eye(3)
        self.Ci, self.Cj = Ai0.T @ C, Aj0.T @ C
        self.angle = 0.0         # the last unwrapped θ, the reference of the next (solver.formulations.branches)

    def reset(self):
        """Forget the last angle (a new run starts at the model's configuration)."""
        self.angle = 0.0

    def rotation(self, frames):
        """(θ unwrapped nearest ``self.angle``, the joint axis z_i, global)."""
        Ai, Aj = frames.get(self.bi)[1], frames.get(self.bj)[1]
        Fi, xj = Ai @ self.Ci, Aj @ self.Cj[:, 0]
        raw = scalar(COORDINATES["rotation"], {"xi": Fi[:, 0], "yi": Fi[:, 1], "xj": xj}, Values, None)
        tracked = frames.angles.get(self.name)
        tracked = math.nan if tracked is None else float(tracked)
        self.angle = nearest_branch(raw, tracked if math.isfinite(tracked) else self.angle)
        return self.angle, Fi[:, 2]

    def apply(self, t, frames, out: Wrenches):
        theta, z = self.rotation(frames)
        rate = float(z @ (frames.get(self.bj)[3] - frames.get(self.bi)[3]))
        tau = -self.k * (theta - self.theta0) - self.c * rate - self.preload
        out.torque(self.bj, tau * z)
        out.torque(self.bi, -tau * z)

    def potential(self, frames):
        x = self.rotation(frames)[0] - self.theta0
        return 0.5 * self.k * x * x + self.preload * (x + self.theta0)

    def conserves_energy(self):
        return self.c == 0.0

    def conservative_at_rest(self):
        """At rest (no damping torque) its torque is −∂V/∂θ."""
        return True


JOINT_AXES = {"rotation": 2, "translation": 2, "x": 0, "y": 1}   # coordinate → its axis: column of the joint frame


def joint_actuator_wrench(force, axis, rotation):
    """(force at body_j's joint point, torque) on body_j of a joint actuator with generalized force
    ``force`` along a joint coordinate whose axis is ``axis`` (global, fixed in body_i): the torque
    F z about the axis of a rotation, the force F a along that of a translation; body_i takes both
    negated at the same point.  Their virtual power is F q̇: θ̇ = zᵀ(ω_j − ω_i) (z_i ∥ z_j, the joint
    holds), and for x = aᵀ(P_j − P_i), ẋ = aᵀ(V_j(P_j) − V_i(P_j)) (the power of F a on body_j and of
    −F a on body_i, both at P_j; Haug (1989) §11.4's generalized force of a point load).  Written
    once for numbers (stacked: F (…), a (…, 3)) and the code generator's sympy vectors."""
    load = along(force, axis)
    zero = 0.0 * load
    return (zero, load) if rotation else (load, zero)


class JointActuatorForce:
    """A joint actuator (:class:`~solver.model.elements.JointActuator`): the generalized force
    gain·f(t) along a joint coordinate as the wrench :func:`joint_actuator_wrench`; no potential.
    Stacked states: yes."""

    stacked = True

    def __init__(self, e, joint, index, init):
        self.name = e.name
        coordinate = joint.coordinates()[0] if e.coordinate == "default" else e.coordinate
        self.rotation = coordinate == "rotation"
        self.bi = _local(index, joint.body_i, init, joint.origin)[0]
        self.bj, self.sj = _local(index, joint.body_j, init, joint.origin)
        Ai0 = init[self.bi][1] if self.bi >= 0 else np.eye(3)
        self.axis_i = Ai0.T @ joint_frame(joint)[:, JOINT_AXES[coordinate]]   # in body_i's axes
        self.f, self.gain = time_function(e.force), e.gain

    def apply(self, t, frames, out: Wrenches):
        Ai = frames.get(self.bi)[1]
        rj, Aj = frames.get(self.bj)[:2]
        Pj = rj + matvec(Aj, self.sj)
        force, torque = joint_actuator_wrench(self.gain * _values(self.f, t), matvec(Ai, self.axis_i), self.rotation)
        for b, sign in ((self.bj, 1.0), (self.bi, -1.0)):
            out.at_point(b, sign * force, Pj, frames)
            out.torque(b, sign * torque)

    def potential(self, frames):
        return 0.0

    def conserves_energy(self):
        """Its work (∫ F q̇ dt) is not in a potential."""
        return False


def bushing_deflection(Pi, Vi, Fi, wi, Pj, Vj, Fj, wj):
    """(δ, δ̇, θ, θ̇) of a bushing from its ends (point P, its velocity V, axes F, ω; global): the
    displacement δ = F_iᵀ(P_j − P_i) and small rotation θ = vee(skew part of F_iᵀF_j) of body j's
    bushing frame in body i's, δ̇ = F_iᵀ(V_j − V_i) − (F_iᵀω_i) × δ, θ̇ = F_iᵀ(ω_j − ω_i).  Written
    once for numbers (one state or stacked states) and for the code generator's sympy arrays."""
    R = np.swapaxes(Fi, -1, -2) @ Fj
    theta = 0.5 * np.stack([R[..., 2, 1] - R[..., 1, 2], R[..., 0, 2] - R[..., 2, 0], R[..., 1, 0] - R[..., 0, 1]],
                           axis=-1)
    delta = tmatvec(Fi, Pj - Pi)
    ddelta = tmatvec(Fi, Vj - Vi) - cross(tmatvec(Fi, wi), delta)
    return delta, ddelta, theta, tmatvec(Fi, wj - wi)


def bushing_loads(Pi, Vi, Fi, wi, Pj, Vj, Fj, wj, K, D):
    """(force f on body j at P_j, torque n on body j) of a linear bushing with stiffnesses K and
    dampings D (translational then rotational, bushing axes): f = F_i(−K_t δ − D_t δ̇),
    n = F_i(−K_r θ − D_r θ̇) (:func:`bushing_deflection`); body i takes −f at P_j and −n."""
    delta, ddelta, theta, dtheta = bushing_deflection(Pi, Vi, Fi, wi, Pj, Vj, Fj, wj)
    return (matvec(Fi, -K[:3] * delta - D[:3] * ddelta), matvec(Fi, -K[3:] * theta - D[3:] * dtheta))


def bushing_potential(Pi, Fi, Pj, Fj, K):
    """Potential of a bushing's springs: ½ δᵀK_t δ + tr(G (I − R)), R = F_iᵀF_j, G = ½ tr(K_r) I − K_r
    (K_r diagonal: Σ_k g_k (1 − R_kk)).  The rotational term is the one whose load is the law's torque
    −K_r θ, θ = vee(skew R) = sin φ u, on every rotation about a fixed axis u (the work
    ∫ (uᵀK_r u) sin φ dφ = (uᵀK_r u)(1 − cos φ) = Σ_k g_k (1 − R_kk)), for any rotation when K_r is
    isotropic (then V = k (1 − cos φ)), and ½ θᵀK_r θ to second order in φ.  The small-rotation
    value ½ θᵀK_r θ itself is not (½ k sin²φ against the work k (1 − cos φ)).  Anisotropic K_r
    has no potential at all: the torque's work around a closed path of rotations is not zero
    (:meth:`BushingForce.conserves_energy`)."""
    delta = tmatvec(Fi, Pj - Pi)
    R = np.swapaxes(Fi, -1, -2) @ Fj
    g = 0.5 * np.sum(K[3:]) - K[3:]
    return 0.5 * (delta ** 2 @ K[:3]) + (1.0 - np.diagonal(R, axis1=-2, axis2=-1)) @ g


class BushingForce:
    """Linear 6-DOF bushing: relative displacement δ and small rotation θ of body j's bushing frame
    w.r.t. body i's, in body i's bushing axes; force −K_t δ − C_t δ̇ and torque −K_r θ − C_r θ̇ on j
    (the small-rotation law of Adams' BUSHING; its energy: :func:`bushing_potential`).
    Stacked states: yes."""

    stacked = True

    def __init__(self, e, index, init):
        self.name = e.name
        self.bi, self.si = _local(index, e.body_i, init, e.origin)
        self.bj, self.sj = _local(index, e.body_j, init, e.origin)
        Ai0 = init[self.bi][1] if self.bi >= 0 else np.eye(3)
        Aj0 = init[self.bj][1] if self.bj >= 0 else np.eye(3)
        self.Ci, self.Cj = Ai0.T, Aj0.T                # bushing axes = global axes at start
        self.K, self.D = np.asarray(e.stiffness), np.asarray(e.damping)

    def _ends(self, frames, velocity=True):
        """(P, V, F, ω) of each end: the bushing point, its velocity (None without ``velocity``), the
        bushing axes and ω."""
        ends = []
        for b, s, C in ((self.bi, self.si, self.Ci), (self.bj, self.sj, self.Cj)):
            r, A, v, w = frames.get(b)
            P = r + A @ s
            ends.append((P, v + cross(w, P - r) if velocity else None, A @ C, w))
        return ends

    def apply(self, t, frames, out: Wrenches):
        (Pi, Vi, Fi, wi), (Pj, Vj, Fj, wj) = self._ends(frames)
        f, n = bushing_loads(Pi, Vi, Fi, wi, Pj, Vj, Fj, wj, self.K, self.D)
        out.at_point(self.bj, f, Pj, frames)
        out.torque(self.bj, n)
        out.at_point(self.bi, -f, Pj, frames)
        out.torque(self.bi, -n)

    def potential(self, frames):
        (Pi, _, Fi, _), (Pj, _, Fj, _) = self._ends(frames, velocity=False)
        return bushing_potential(Pi, Fi, Pj, Fj, self.K)

    def conserves_energy(self):
        """Its work is in the potential: no damping, and isotropic rotational stiffness (the torque
        −K_r θ of anisotropic K_r does work around closed paths: :func:`bushing_potential`)."""
        return not np.any(self.D) and self.conservative_at_rest()

    def conservative_at_rest(self):
        """At rest (no damping load) its load is −∂V/∂q when its rotational stiffness is isotropic."""
        return bool(np.all(self.K[3:] == self.K[3]))


class AppliedLoad:
    """Force (at a body point) or torque on a body, global components as functions of t.
    Stacked states: yes."""

    stacked = True

    def __init__(self, e, index, init):
        self.name = e.name
        self.is_torque = e.KIND == "torque"
        self.b, self.s = _local(index, e.body, init, e.point)
        if self.is_torque:
            self.s = np.zeros(3)
        self.f = [time_function(c) for c in (e.torque if self.is_torque else e.force)]

    def apply(self, t, frames, out: Wrenches):
        value = np.stack([np.asarray(_values(f, t), dtype=float) for f in self.f], axis=-1)
        if self.is_torque:
            out.torque(self.b, value)
        else:
            r, A = frames.r[..., self.b, :], frames.A[..., self.b, :, :]
            out.at_point(self.b, value, r + A @ self.s, frames)

    def potential(self, frames):
        return 0.0

    def conserves_energy(self):
        """Loads given as functions of t do work that is not in V."""
        return False


EVALUATORS = {}    # force element kind → builder(element, model, index, init) → [evaluator, …]


def evaluator(kind):
    """Register the decorated builder as the evaluator of force elements of ``kind`` (a key of
    ``solver.FORCE_CLASSES``).  An evaluator has ``apply(t, frames, out)``, ``potential(frames)``
    and ``conserves_energy()`` (its work is all in the potential: hybrid partitioning's energy test);
    the code generator generates the evaluator classes that have a hook (solver/codegen/force_hooks.py)
    and leaves the others to Python."""
    def register(build):
        EVALUATORS[kind] = build
        return build
    return register


@evaluator("spring_damper")
def _spring_damper(e, model, index, init):
    return [SpringDamperForce(e, index, init, e.stiffness, e.damping, e.free_length, e.preload)]


@evaluator("linear_actuator")
def _linear_actuator(e, model, index, init):
    return [SpringDamperForce(e, index, init)]


@evaluator("rotational_spring_damper")
def _rotational_spring_damper(e, model, index, init):
    return [RotationalSpringDamperForce(e, model.joints[e.joint], index, init)]


@evaluator("joint_actuator")
def _joint_actuator(e, model, index, init):
    return [JointActuatorForce(e, model.joints[e.joint], index, init)]


@evaluator("bushing")
def _bushing(e, model, index, init):
    return [BushingForce(e, index, init)]


evaluator("joint_friction")(joint_friction)


@evaluator("force")
@evaluator("torque")
def _applied_load(e, model, index, init):
    return [AppliedLoad(e, index, init)]


@evaluator("contact")
@evaluator("contact_group")
def _contact(e, model, index, init):
    """All of the model's contact elements and contact groups in one evaluator (its broad phase),
    built with the first."""
    contacts = [c for c in model.forces.values() if c.KIND in ("contact", "contact_group")]
    if e.name != contacts[0].name:
        return []
    return [ContactSet([ContactPair(contact_spec(c, model), index) for c in contacts if c.KIND == "contact"],
                       [ContactGroupMembers(group_spec(c, model), index) for c in contacts if c.KIND == "contact_group"])]


def compile_forces(model, index, init):
    """Force evaluators for all force elements of the model (:data:`EVALUATORS`).

    index: body name → body index (or, a flexible body, a function of a point adding an attachment
    frame, see ``_local``); init: body index → (r0, A0) initial CM position and rotation.  The
    stops of limited joints (:func:`solver.joint_forces.joint_stops`) come last."""
    out = []
    for e in model.forces.values():
        build = EVALUATORS.get(e.KIND)
        if build is None:
            raise ModelError(f"forces '{e.name}'.type: no evaluator is registered for {e.KIND!r}")
        out += build(e, model, index, init)
    return out + joint_stops(model, index, init)