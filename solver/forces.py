"""Force elements and applied loads, evaluated on body states in global form.

Every formulation hands the same body states (CM position r, rotation A, CM velocity v and angular
velocity ω, all global) and receives per-body wrenches: force at the CM and torque about the CM,
global axes.  Potential energies (springs, preloads) are reported for the energy account.
Gravity is handled by the formulations (it is a body force, m g at the CM).
"""
from __future__ import annotations

import numpy as np

from . import vehicle
from .constraints.joints import joint_frame
from .expressions import time_function
from .math.rotations import cross
from .model.model import GROUND


class BodyFrames:
    """Global states of all bodies; index −1 is ground (at rest at the origin)."""

    def __init__(self, r, A, v, w):
        self.r, self.A, self.v, self.w = r, A, v, w

    def get(self, b):
        if b < 0:
            return np.zeros(3), np.eye(3), np.zeros(3), np.zeros(3)
        return self.r[b], self.A[b], self.v[b], self.w[b]


class Wrenches:
    """Accumulator of per-body force (at the CM) and torque, global axes."""

    def __init__(self, nb):
        self.F = np.zeros((nb, 3))
        self.T = np.zeros((nb, 3))

    def at_point(self, b, force, point, frames: BodyFrames):
        """Add ``force`` acting at global ``point`` of body b."""
        if b < 0:
            return
        self.F[b] += force
        self.T[b] += cross(point - frames.r[b], force)

    def torque(self, b, torque):
        if b >= 0:
            self.T[b] += torque


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


class SpringDamperForce:
    """Tension T = k (l − l0) + c l̇ + preload + f(t) along the line from point_i to point_j;
    potential ½ k (l − l0)² + preload (l − l0)."""

    def __init__(self, e, index, init):
        self.name = e.name
        self.bi, self.si = _local(index, e.body_i, init, e.point_i)
        self.bj, self.sj = _local(index, e.body_j, init, e.point_j)
        self.k, self.c, self.preload = e.stiffness, e.damping, e.preload
        self.f = time_function(e.force)
        l0 = e.free_length
        self.l0 = float(np.linalg.norm(np.subtract(e.point_j, e.point_i))) if l0 is None else l0

    def _geometry(self, frames):
        ri, Ai, vi, wi = frames.get(self.bi)
        rj, Aj, vj, wj = frames.get(self.bj)
        Pi, Pj = ri + Ai @ self.si, rj + Aj @ self.sj
        Vi, Vj = vi + cross(wi, Pi - ri), vj + cross(wj, Pj - rj)
        d = Pj - Pi
        length = float(np.linalg.norm(d))
        return Pi, Pj, d, length, Vj - Vi

    def apply(self, t, frames, out: Wrenches):
        Pi, Pj, d, length, dv = self._geometry(frames)
        if length < 1e-12:
            return
        u = d / length
        tension = self.k * (length - self.l0) + self.c * float(u @ dv) + self.preload + self.f.value(t)
        out.at_point(self.bj, -tension * u, Pj, frames)
        out.at_point(self.bi, tension * u, Pi, frames)

    def potential(self, frames):
        length = self._geometry(frames)[3]
        x = length - self.l0
        return 0.5 * self.k * x * x + self.preload * x


class RotationalSpringDamperForce:
    """Torque on body_j about the joint axis τ = −k (θ − θ0) − c θ̇ − preload (−τ on body_i);
    potential ½ k (θ − θ0)² + preload θ.  θ is the joint's rotation coordinate (continuous)."""

    def __init__(self, e, joint, index, init):
        self.name = e.name
        self.k, self.c, self.theta0, self.preload = e.stiffness, e.damping, e.free_angle, e.preload
        C = joint_frame(joint)
        self.bi = _local(index, joint.body_i, init, joint.origin)[0]
        self.bj = _local(index, joint.body_j, init, joint.origin)[0]
        Ai0 = init[self.bi][1] if self.bi >= 0 else np.eye(3)
        Aj0 = init[self.bj][1] if self.bj >= 0 else np.eye(3)
        self.Ci, self.Cj = Ai0.T @ C, Aj0.T @ C
        self.theta = 0.0

    def angle(self, frames):
        Ai, Aj = frames.get(self.bi)[1], frames.get(self.bj)[1]
        Fi, xj = Ai @ self.Ci, Aj @ self.Cj[:, 0]
        raw = np.arctan2(Fi[:, 1] @ xj, Fi[:, 0] @ xj)
        self.theta = raw + 2 * np.pi * round((self.theta - raw) / (2 * np.pi))
        return self.theta, Fi[:, 2]

    def apply(self, t, frames, out: Wrenches):
        theta, z = self.angle(frames)
        rate = float(z @ (frames.get(self.bj)[3] - frames.get(self.bi)[3]))
        tau = -self.k * (theta - self.theta0) - self.c * rate - self.preload
        out.torque(self.bj, tau * z)
        out.torque(self.bi, -tau * z)

    def potential(self, frames):
        x = self.angle(frames)[0] - self.theta0
        return 0.5 * self.k * x * x + self.preload * (x + self.theta0)


class BushingForce:
    """Linear 6-DOF bushing: relative displacement δ and small rotation θ of body j's bushing frame
    w.r.t. body i's, in body i's bushing axes; force −K_t δ − C_t δ̇ and torque −K_r θ − C_r θ̇ on j."""

    def __init__(self, e, index, init):
        self.name = e.name
        self.bi, self.si = _local(index, e.body_i, init, e.origin)
        self.bj, self.sj = _local(index, e.body_j, init, e.origin)
        Ai0 = init[self.bi][1] if self.bi >= 0 else np.eye(3)
        Aj0 = init[self.bj][1] if self.bj >= 0 else np.eye(3)
        self.Ci, self.Cj = Ai0.T, Aj0.T                # bushing axes = global axes at start
        self.K, self.D = np.asarray(e.stiffness), np.asarray(e.damping)

    def _relative(self, frames):
        ri, Ai, vi, wi = frames.get(self.bi)
        rj, Aj, vj, wj = frames.get(self.bj)
        Pi, Pj = ri + Ai @ self.si, rj + Aj @ self.sj
        Fi, Fj = Ai @ self.Ci, Aj @ self.Cj
        R = Fi.T @ Fj
        theta = 0.5 * np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])
        delta = Fi.T @ (Pj - Pi)
        ddelta = Fi.T @ ((vj + np.cross(wj, Pj - rj)) - (vi + np.cross(wi, Pi - ri))) - np.cross(Fi.T @ wi, delta)
        dtheta = Fi.T @ (wj - wi)
        return Pi, Pj, Fi, delta, ddelta, theta, dtheta

    def apply(self, t, frames, out: Wrenches):
        Pi, Pj, Fi, delta, ddelta, theta, dtheta = self._relative(frames)
        f = Fi @ (-self.K[:3] * delta - self.D[:3] * ddelta)
        n = Fi @ (-self.K[3:] * theta - self.D[3:] * dtheta)
        out.at_point(self.bj, f, Pj, frames)
        out.torque(self.bj, n)
        out.at_point(self.bi, -f, Pj, frames)
        out.torque(self.bi, -n)

    def potential(self, frames):
        _, _, _, delta, _, theta, _ = self._relative(frames)
        return 0.5 * float(self.K[:3] @ delta**2 + self.K[3:] @ theta**2)


class AppliedLoad:
    """Force (at a body point) or torque on a body, global components as functions of t."""

    def __init__(self, e, index, init):
        self.name = e.name
        self.is_torque = e.KIND == "torque"
        self.b, self.s = _local(index, e.body, init, e.point)
        if self.is_torque:
            self.s = np.zeros(3)
        self.f = [time_function(c) for c in (e.torque if self.is_torque else e.force)]

    def apply(self, t, frames, out: Wrenches):
        value = np.array([f.value(t) for f in self.f])
        if self.is_torque:
            out.torque(self.b, value)
        else:
            r, A = frames.r[self.b], frames.A[self.b]
            out.at_point(self.b, value, r + A @ self.s, frames)

    def potential(self, frames):
        return 0.0


def compile_forces(model, index, init):
    """Force evaluators for all force elements of the model.

    index: body name → body index (or, a flexible body, a function of a point adding an attachment
    frame, see ``_local``); init: body index → (r0, A0) initial CM position and rotation."""
    out = []
    for e in model.forces.values():
        if e.KIND == "spring_damper":
            out.append(SpringDamperForce(e, index, init))
        elif e.KIND == "rotational_spring_damper":
            out.append(RotationalSpringDamperForce(e, model.joints[e.joint], index, init))
        elif e.KIND == "bushing":
            out.append(BushingForce(e, index, init))
        elif e.KIND in vehicle.KINDS:
            out += vehicle.compile_vehicle_element(e, model, index, init)
        else:
            out.append(AppliedLoad(e, index, init))
    return out
