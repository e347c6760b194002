"""Loads a joint applies along its own coordinates: the stops of a limited joint and joint friction.

A joint coordinate q (rotation or translation, zero at the initial configuration) is measured with
the joint's constraint geometry exactly as a driver measures it
(:meth:`solver.constraints.joints.CartesianJoint.coordinate`), with its gradient g over the two bodies'
coordinates (r, p) and its rate q̇ = gᵀ(ṙ, ṗ), ṗ = ½ G(p)ᵀω.  A generalized force F along q does the
virtual work F δq = F gᵀδ(r, p), which is the wrench

    f_b = F g_r,   n_b = ½ F G(p_b) g_p        (force at the CM, torque; global)

on each body b of the joint (δp = ½ G(p)ᵀδπ).  Rotations are unwrapped continuously over a run, so
an evaluator has a run state (``reset``) and takes one state at a time.

The stop force F is :func:`solver.math.impact.stop_load` (Adams IMPACT on each side).

Joint friction (:class:`JointFriction`) acts on the joint's rates: the rotation rate θ̇ = z·(ω_j − ω_i)
about the axis z (revolute, cylindrical), the translation rate ẋ = z·(V_j(P_j) − V_i(P_i)) +
(ω_i × z)·(P_j − P_i) along it (prismatic, cylindrical) or the relative angular velocity ω_j − ω_i
(spherical).  A generalized force Q on θ̇ is the torque Q z on body_j and −Q z on body_i; on ẋ the
force Q z on body_j at P_j and −Q z on body_i at the same point (its virtual power is Q ẋ); on
ω_j − ω_i the torque Q on body_j and −Q on body_i.  The slip velocity of the joint's surfaces is u =
(R θ̇, ẋ) or R (ω_j − ω_i) (R the pin or ball radius); the friction on them is −μ(|u|) S u/|u|
(:mod:`solver.math.friction`), so Q = R f on a rotation rate and f on a translation, minus the
viscous part c·rate.  The normal load S takes the joint reaction N, which depends on the
accelerations and through them on the friction: the relative formulation solves that fixed point
(:meth:`solver.formulations.relative.RelativeSystem.update_friction_loads`) and sets ``normal``.
"""
from __future__ import annotations

import numpy as np

from .constraints.joints import CartesianJoint, joint_frame
from .constraints.primitives import BodyState
from .errors import ModelError
from .math.friction import friction_per_speed
from .math.impact import stop_load
from .math.namespace import dot
from .math.rotations import G_matrix, cross, matvec, quat_from_matrix


def _state(r, A, v, w):
    """BodyState of a body from its CM position, rotation, CM velocity and angular velocity."""
    p = quat_from_matrix(A)
    return BodyState(0, np.concatenate([r, p]), np.concatenate([v, 0.5 * G_matrix(p).T @ w]))


class JointCoordinate:
    """One coordinate of one joint measured on body frames (module docstring).  ``frames.get(b)``
    gives (r, A, v, ω) of body b (−1: ground)."""

    def __init__(self, joint, coordinate, bi, bj, init_i, init_j):
        self.joint = CartesianJoint(joint, init_i, init_j)
        self.coordinate = coordinate
        self.bi, self.bj = bi, bj

    def reset(self):
        """Forget the last angle (a run starts at the model's configuration)."""
        self.joint.reset()

    def _states(self, frames):
        return [BodyState(None) if b < 0 else _state(*frames.get(b)) for b in (self.bi, self.bj)]

    def measure(self, frames):
        """(q, q̇, g, the two BodyStates) at a state."""
        Si, Sj = self._states(frames)
        s = self.joint.coordinate(self.coordinate, Si, Sj, 1)
        return float(s.val), float(s.dot), s.grad, (Si, Sj)

    def apply(self, force, grad, states, frames, out):
        """Add the wrenches of a generalized force ``force`` along the coordinate (module docstring)."""
        for side, b in enumerate((self.bi, self.bj)):
            if b < 0:
                continue
            g = grad[7 * side:7 * side + 7]
            out.at_point(b, force * g[:3], frames.get(b)[0], frames)
            out.torque(b, 0.5 * force * (G_matrix(states[side].p) @ g[3:]))


class JointStop:
    """The stops of a limited joint: a generalized force F = :func:`stop_load` along its limited
    coordinate (``Joint.stop_coordinate``); potential k δ^(e+1)/(e+1); dissipated power
    c(δ) δ̇² (:meth:`load`).  Conserves energy when the stop damping is zero."""

    def __init__(self, joint, bi, bj, init_i, init_j):
        self.name = joint.name
        self.coordinate = JointCoordinate(joint, joint.stop_coordinate(), bi, bj, init_i, init_j)
        self.limits = (joint.lower_limit, joint.upper_limit)
        self.law = (joint.stop_stiffness, joint.stop_exponent, joint.stop_damping, joint.stop_depth,
                    float(joint.stop_push_only))

    def reset(self):
        self.coordinate.reset()

    def load(self, frames):
        """(F along the coordinate, dissipated power, potential, q, q̇, gradient, states) at a state."""
        q, qd, grad, states = self.coordinate.measure(frames)
        F, P, V = stop_load(q, qd, *self.limits, *self.law)
        return F, P, V, grad, states

    def apply(self, t, frames, out):
        F, _, _, grad, states = self.load(frames)
        if F != 0.0:
            self.coordinate.apply(F, grad, states, frames, out)

    def potential(self, frames):
        return self.load(frames)[2]

    def conserves_energy(self):
        return self.law[2] == 0.0


def joint_stops(model, index, init):
    """A :class:`JointStop` for every joint of ``model`` with a stop (``Joint.stop_coordinate``);
    index: body name → body index; init: body index → (r0, A0).  A stop on a flexible body (its
    index entry a function) is a ModelError naming the joint's lower_limit."""
    out = []
    for j in model.joints.values():
        if j.stop_coordinate() is None:
            continue
        ends = [-1 if name == "ground" else index[name] for name in (j.body_i, j.body_j)]
        if any(callable(b) for b in ends):
            raise ModelError(f"joint '{j.name}'.lower_limit: stops on joints of flexible bodies are not supported")
        out.append(JointStop(j, *ends, *(init[b] if b >= 0 else (np.zeros(3), np.eye(3)) for b in ends)))
    return out


class JointFriction:
    """Friction of a :class:`~solver.model.elements.JointFriction` element in its joint (module
    docstring).  ``normal``: the reaction part N of the normal load (a number, or one per stacked
    state), set by the formulation; None until a formulation that supplies it binds it (0.0 when
    the element takes no reaction load).  Stacked states: yes.  It dissipates −Qᵀ·rates ≥ 0
    (:meth:`power`) and stores no energy."""

    stacked = True

    def __init__(self, e, joint, bi, bj, init_i, init_j):
        self.name, self.joint = e.name, joint.name
        self.bi, self.bj = bi, bj
        C, O = joint_frame(joint), np.asarray(joint.origin, dtype=float)
        (ri, Ai), (rj, Aj) = init_i, init_j
        self.z_i, self.s_i, self.s_j = Ai.T @ C[:, 2], Ai.T @ (O - ri), Aj.T @ (O - rj)
        self.ball = joint.type == "spherical"
        self.rotation = joint.type in ("revolute", "cylindrical")
        self.translation = joint.type in ("prismatic", "cylindrical")
        self.law = (e.static_coefficient, e.dynamic_coefficient, e.stiction_velocity, e.transition_velocity)
        self.c, self.radius, self.arm = e.viscous, e.radius, e.moment_arm
        self.preload = e.preload / e.radius if joint.type in ("revolute", "spherical") else e.preload
        self.scale = np.array([e.radius] * (3 if self.ball else int(self.rotation)) + [1.0] * self.translation)
        self.reaction_load = e.reaction_load
        self.normal = None if e.reaction_load else 0.0

    def reset(self):
        """Forget the last normal load (it is set at every evaluation, so it is run state: each
        workspace of a compiled system has its own)."""
        if self.reaction_load and self.normal is not None:
            self.normal = 0.0

    def rates(self, frames):
        """(z, P_j, rates (…, n)): the axis, the point P_j and the joint rates (module docstring)."""
        ri, Ai, vi, wi = frames.get(self.bi)
        rj, Aj, vj, wj = frames.get(self.bj)
        z = matvec(Ai, self.z_i)
        Pi, Pj = ri + matvec(Ai, self.s_i), rj + matvec(Aj, self.s_j)
        w = wj - wi
        rates = [w] if self.ball else [dot(z, w)[..., None]] if self.rotation else []
        if self.translation:
            rel = vj + cross(wj, Pj - rj) - vi - cross(wi, Pi - ri)
            rates.append((dot(z, rel) + dot(cross(wi, z), Pj - Pi))[..., None])
        return z, Pj, np.concatenate(rates, axis=-1)

    def generalized(self, rates):
        """Q (…, n): the friction's generalized forces on the rates (module docstring)."""
        u = self.scale * rates
        speed = np.sqrt(np.sum(u * u, axis=-1))
        load = np.asarray(self.normal) + self.preload
        f = -(friction_per_speed(speed, *self.law) * load)[..., None] * u
        return self.scale * f - self.c * rates

    def apply(self, t, frames, out):
        if self.normal is None:
            raise ModelError(f"forces '{self.name}'.reaction_load: the normal load from the joint reaction is "
                             "computed in the relative formulation; set formulation='relative' or reaction_load false")
        z, Pj, rates = self.rates(frames)
        Q = self.generalized(rates)
        if self.ball or self.rotation:
            torque = Q if self.ball else Q[..., :1] * z
            out.torque(self.bj, torque)
            out.torque(self.bi, -torque)
        if self.translation:
            force = Q[..., -1:] * z
            out.at_point(self.bj, force, Pj, frames)
            out.at_point(self.bi, -force, Pj, frames)

    def power(self, frames):
        """The power the friction dissipates, −Qᵀ·rates ≥ 0."""
        rates = self.rates(frames)[2]
        return -np.sum(self.generalized(rates) * rates, axis=-1)

    def normal_load(self, force, moment):
        """N from the joint's reaction force and moment on body_j in joint axes (…, 3): |force|
        (spherical) or its part across the axis, plus |moment across the axis|/moment_arm."""
        if self.ball:
            return np.sqrt(np.sum(force * force, axis=-1))
        N = np.hypot(force[..., 0], force[..., 1])
        return N + np.hypot(moment[..., 0], moment[..., 1]) / self.arm if self.arm > 0.0 else N

    def potential(self, frames):
        return 0.0

    def conserves_energy(self):
        return False


def joint_friction(e, model, index, init):
    """The :class:`JointFriction` of element ``e`` (the force-kind builder of ``joint_friction``)."""
    joint = model.joints[e.joint]
    ends = [-1 if name == "ground" else index[name] for name in (joint.body_i, joint.body_j)]
    if any(callable(b) for b in ends):
        raise ModelError(f"forces '{e.name}'.joint: friction in joints of flexible bodies is not supported")
    return [JointFriction(e, joint, *ends, *(init[b] if b >= 0 else (np.zeros(3), np.eye(3)) for b in ends))]
