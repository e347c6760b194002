"""Speed control: a PI controller on the chassis forward speed driving one axle's wheels.

The drive torque (total for the axle)::

    u = k_p (v* − v) + k_i e_I,     e_I = ½ Σ_{w = L, R} R sin((v* t − R θ_w)/R),
    T = T_max tanh(u / T_max)

v = (A_c f′)·v_c is the chassis CM velocity along its forward axis f (``forward``, body-fixed).
The integral of the speed error needs no extra state: ∫₀ᵗ (v* − R Ω_w) dτ = v* t − R θ_w, θ_w the
spin angle of wheel w relative to its carrier about the wheel axis since the start.  The body
orientations give θ_w only modulo 2π, so the integral term uses R sin(e/R) of each wheel's
distance error e = v* t − R θ_w: 2π-periodic in θ_w, hence a function of the state alone (no
unwrapping memory, whose branch would depend on the order in which an integrator evaluates
trial states — a step longer than half a wheel turn slipped it by 2πR), equal to
e (1 − e²/6R² + …) for |e| ≪ R, i.e. k_i (v* t − s) with s = R (θ_L + θ_R)/2 the rolled distance,
and bounded by k_i R (built-in anti-windup; an error beyond πR slips a turn, like a phase-locked
loop).  So the integral term holds the *wheel* speed RΩ on average, the proportional term damps
the chassis speed; the two differ by the (small) drive slip.  tanh saturates the torque smoothly
at T_max.
T/2 acts on each wheel about its axis and −T/2 on its carrier (knuckle or axle), so the
controller exerts no net moment on the car.
"""
from __future__ import annotations

import math

import numpy as np


class SpeedControlForce:
    """Evaluator of a speed_control element (see module docstring)."""

    def __init__(self, e, index, init):
        self.name = e.name
        self.c = index[e.chassis]
        self.forward_b = init[self.c][1].T @ np.asarray(e.forward, dtype=float)
        self.v_target, self.kp, self.ki = e.target_speed, e.kp, e.ki
        self.t_max, self.radius = e.max_torque, e.radius
        axis = np.asarray(e.axis, dtype=float)
        self.wheels = [_DrivenWheel(index[w], index[c], axis, init)
                       for w, c in ((e.left_wheel, e.left_carrier), (e.right_wheel, e.right_carrier))]

    def speed(self, frames):
        """Chassis forward speed v (m/s)."""
        _, A, v, _ = frames.get(self.c)
        return float((A @ self.forward_b) @ v)

    def integral_error(self, t, frames):
        """e_I = ½ Σ_w R sin((v* t − R θ_w)/R) (m), ≈ v* t − s (see module docstring)."""
        phase = self.v_target * t / self.radius
        return 0.5 * self.radius * sum(math.sin(phase - w.angle(frames)) for w in self.wheels)

    def torque(self, t, frames):
        """Total drive torque T (N·m) of the axle."""
        u = self.kp * (self.v_target - self.speed(frames)) + self.ki * self.integral_error(t, frames)
        return self.t_max * math.tanh(u / self.t_max)

    def apply(self, t, frames, out):
        half = 0.5 * self.torque(t, frames)
        for w in self.wheels:
            axis = frames.get(w.carrier)[1] @ w.axis_c
            out.torque(w.wheel, half * axis)
            out.torque(w.carrier, -half * axis)

    def potential(self, frames):
        return 0.0

    def conserves_energy(self):
        """A drive torque does work."""
        return False


class _DrivenWheel:
    """A wheel and its carrier: the wheel's spin angle θ ∈ (−π, π] relative to the carrier about
    the axis (global at the initial configuration, fixed in the carrier)."""

    def __init__(self, wheel, carrier, axis, init):
        self.wheel, self.carrier = wheel, carrier
        Aw0, Ac0 = init[wheel][1], init[carrier][1]
        self.axis_c = Ac0.T @ axis
        u = np.cross(axis, [1.0, 0.0, 0.0])
        if np.linalg.norm(u) < 1e-6:
            u = np.cross(axis, [0.0, 1.0, 0.0])
        u /= np.linalg.norm(u)
        self.u_c, self.v_c = Ac0.T @ u, Ac0.T @ np.cross(axis, u)   # reference axes in the carrier
        self.u_w = Aw0.T @ u                                       # the same direction in the wheel

    def angle(self, frames):
        Ac, Aw = frames.get(self.carrier)[1], frames.get(self.wheel)[1]
        uw = Aw @ self.u_w
        return math.atan2(float((Ac @ self.v_c) @ uw), float((Ac @ self.u_c) @ uw))
