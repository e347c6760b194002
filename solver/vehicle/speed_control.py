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

The spin angle is θ_w = atan2(y_w, x_w) of the wheel's reference direction u (fixed in the wheel)
in its carrier's reference axes, x_w = (A_c u′_c)·u, y_w = (A_c v′_c)·u; with φ = v* t/R the
integral term is evaluated without the angle, sin(φ − θ_w) = (x_w sin φ − y_w cos φ)/ρ_w,
ρ_w = √(x_w² + y_w²), so that the same definition (:func:`speed_control`) gives the numbers and the
code generator's expressions (sin φ and cos φ are its time inputs).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..math.namespace import NUMPY_MATH, along, dot
from ..math.rotations import matvec


@dataclass(frozen=True)
class DrivenWheel:
    """A wheel and its carrier (body indices, −1 ground) with their directions in body frames:
    the spin axis ``axis_c`` and the reference axes ``u_c``, ``v_c`` ⊥ axis fixed in the carrier,
    and ``u_w`` fixed in the wheel (along u_c at the start).  Numbers, or the code generator's."""
    wheel: int
    carrier: int
    axis_c: np.ndarray
    u_c: np.ndarray
    v_c: np.ndarray
    u_w: np.ndarray

    @classmethod
    def at(cls, wheel, carrier, axis, init):
        """The wheel ``wheel`` on ``carrier`` about the global ``axis`` of the initial configuration."""
        Aw0, Ac0 = init[wheel][1], init[carrier][1]
        u = np.cross(axis, [1.0, 0.0, 0.0])
        if np.linalg.norm(u) < 1e-6:
            u = np.cross(axis, [0.0, 1.0, 0.0])
        u /= np.linalg.norm(u)
        return cls(wheel, carrier, Ac0.T @ axis, Ac0.T @ u, Ac0.T @ np.cross(axis, u), Aw0.T @ u)


@dataclass
class ControlState:
    """The controller at one instant (numbers, stacked numbers or sympy expressions)."""
    speed: float           # chassis forward speed v (m/s)
    error: float           # integral term e_I (m)
    torque: float          # total drive torque T (N·m)
    wheel_torques: list    # T/2 a_w on each wheel (−T/2 a_w on its carrier), a_w = A_c a′_w


def speed_control(A, v, forward, wheels, sin_phase, cos_phase, target_speed, kp, ki, max_torque, radius,
                  m=NUMPY_MATH) -> ControlState:
    """The controller of the module docstring on the chassis rotation A and CM velocity v (forward
    axis ``forward`` in the chassis frame) and ``wheels`` [(A_carrier, A_wheel, :class:`DrivenWheel`)],
    at the target phase φ = v* t/R (``sin_phase``, ``cos_phase``).  Written once for numbers (one
    state or stacked states, ``m`` = NUMPY_MATH) and for the code generator's sympy expressions
    (``m`` names the intermediates, :mod:`solver.math.namespace`)."""
    speed = m.let(dot(matvec(A, forward), v))
    error = 0
    for Ac, Aw, w in wheels:
        u = m.vector(matvec(Aw, w.u_w))
        x, y = m.let(dot(matvec(Ac, w.u_c), u)), m.let(dot(matvec(Ac, w.v_c), u))
        error = error + radius / 2 * (x * sin_phase - y * cos_phase) / m.sqrt(x * x + y * y)
    torque = max_torque * m.tanh((kp * (target_speed - speed) + ki * error) / max_torque)
    half = m.let(torque / 2)
    return ControlState(speed, error, torque, [along(half, m.vector(matvec(Ac, w.axis_c))) for Ac, _, w in wheels])


class SpeedControlForce:
    """Evaluator of a speed_control element (:func:`speed_control`).  Stacked states: yes."""

    stacked = True

    def __init__(self, e, index, init):
        self.name = e.name
        self.c = index[e.chassis]
        self.forward_b = init[self.c][1].T @ np.asarray(e.forward, dtype=float)
        self.v_target, self.kp, self.ki = e.target_speed, e.kp, e.ki
        self.t_max, self.radius = e.max_torque, e.radius
        axis = np.asarray(e.axis, dtype=float)
        self.wheels = [DrivenWheel.at(index[w], index[c], axis, init)
                       for w, c in ((e.left_wheel, e.left_carrier), (e.right_wheel, e.right_carrier))]

    def state(self, t, frames) -> ControlState:
        """The controller at time t (a number, or stacked times) on ``frames``."""
        _, A, v, _ = frames.get(self.c)
        phase = self.v_target * t / self.radius
        wheels = [(frames.get(w.carrier)[1], frames.get(w.wheel)[1], w) for w in self.wheels]
        return speed_control(A, v, self.forward_b, wheels, np.sin(phase), np.cos(phase),
                             self.v_target, self.kp, self.ki, self.t_max, self.radius)

    def apply(self, t, frames, out):
        for w, torque in zip(self.wheels, self.state(t, frames).wheel_torques):
            out.torque(w.wheel, torque)
            out.torque(w.carrier, -torque)

    def potential(self, frames):
        return 0.0

    def conserves_energy(self):
        """A drive torque does work."""
        return False
