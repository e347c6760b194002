"""Loads a joint applies along its own coordinates: the stops of a limited joint.

A joint coordinate q (rotation or translation, zero at the initial configuration) is measured with
the joint's constraint geometry exactly as a driver measures it
(:meth:`solver.constraints.joints.CartesianJoint.coordinate`), with its gradient g over the two bodies'
coordinates (r, p) and its rate q̇ = gᵀ(ṙ, ṗ), ṗ = ½ G(p)ᵀω.  A generalized force F along q does the
virtual work F δq = F gᵀδ(r, p), which is the wrench

    f_b = F g_r,   n_b = ½ F G(p_b) g_p        (force at the CM, torque; global)

on each body b of the joint (δp = ½ G(p)ᵀδπ).  Rotations are unwrapped continuously over a run, so
an evaluator has a run state (``reset``) and takes one state at a time.

The stop force F is :func:`solver.math.impact.stop_load` (Adams IMPACT on each side).
"""
from __future__ import annotations

import numpy as np

from .constraints.joints import CartesianJoint
from .constraints.primitives import BodyState
from .errors import ModelError
from .math.impact import stop_load
from .math.rotations import G_matrix, quat_from_matrix


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
        self.law = (joint.stop_stiffness, joint.stop_exponent, joint.stop_damping, joint.stop_depth)

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
