"""Which branch an unwrapped angle is on: the one rule of every step loop (the Python loop of
:class:`solver.analysis.dynamics.Run`, the compiled loop of ``codegen/segment.c`` and the FMU's
``fmu/fmu.c``, which read the same thresholds).

A joint rotation, a screw's turn or a rotational spring's angle is θ = atan2(y, x) + 2πk: the
evaluators return the raw angle in (−π, π] and add the 2πk nearest a *reference* (``holder.angle``,
:meth:`solver.constraints.joints.CartesianJoint.unwrap`).  Where the branch enters the equations (a
screw's Φ = d − p θ, a rotation driver's Φ = θ − f(t), a spring's torque −k(θ − θ0)), a wrong k is
a wrong answer that no error estimate sees: a screw closing a loop moves its nut one thread lead.
So the reference never follows trial evaluations (stages of steps that may be rejected, long steps
the integrator tries first); it is a prediction from the last *accepted* state:

    θ_ref(t) = θ_acc + θ̇_acc (t − t_acc),

θ̇_acc the secant over the last accepted step, (θ_acc − θ_prev)/(t_acc − t_prev) — at the start of
a run a central difference along q̇ (:meth:`Branches.start`).  An evaluation whose unwrapped angle
departs from its prediction by more than ``BRANCH_GUARD`` refuses the step (the step loops retry it
at a quarter of its size: ``BRANCH_SHRINK``); a departure of more than π would have picked the
wrong branch, and one beyond the guard is the sign that the step is too long to tell.  After an
accepted step with departure δ, the next step is at most h √(BRANCH_GUARD / (2 δ)): the departure
grows as h² (the prediction is exact to first order), so the next one stays near half the guard,
well inside the range (guard, 2π − guard) where a refusal is certain.
"""
from __future__ import annotations

import math

import numpy as np

from ..partitioning.partition import PartitionError

BRANCH_GUARD = 0.25 * math.pi      # largest departure of an unwrapped angle from its prediction (rad)
BRANCH_SHRINK = 0.25               # a refused step is retried this much shorter
FD_STEP = 1e-7                     # the start's central difference: q ± ε q̇ with ε = FD_STEP / max|q̇|
ASSEMBLY_GUARD = 0.25              # largest jump of q̇ over a step, relative to its scale (velocity_jump) …
ASSEMBLY_RETRIES = 2               # … refused this many times from one accepted state, then accepted


class BranchRefused(PartitionError):
    """An evaluation's unwrapped angle departed from its prediction by more than BRANCH_GUARD: the step
    loops retry the step shorter (a PartitionError, so that every place that restarts from the last
    accepted state on a failed solve does so here too).  ``time``: the refused evaluation's time, so
    the step tried was at least ``time`` − the last accepted time, even when the refusal came from
    inside a solver's step that reports neither its trial time nor its step (LSODA: fuzz seed 1142)."""

    def __init__(self, message, time):
        super().__init__(message)
        self.time = time


class AssemblyRefused(BranchRefused):
    """A step's velocities jumped more than ASSEMBLY_GUARD (:func:`velocity_jump`): retried shorter,
    at most ASSEMBLY_RETRIES times from one accepted state."""


def angle_holders(system) -> list:
    """The objects of the run state of ``system`` that hold an unwrapped angle (a float attribute
    ``angle``: joints, joints on flexible bodies, rotational spring-dampers), in a fixed order —
    not the force elements whose angle is a coordinate of q (``system.coordinate_angles()``: the
    relative formulation's springs on tree joints).  Those have no branch to choose, and the
    compiled loop, which evaluates them in C from their column of q, never advances a holder's
    accepted angle: held here, the first evaluation in Python after a compiled stretch (a partition
    renewal's check at the accepted state) compared the joint's angle with its value at the start
    and refused it (fuzz seed 2059: 1.72 rad at t = 0.234 s ended a default run)."""
    names = system.coordinate_angles()
    integrated = {id(f) for f in system.force_elements if f.name in names}
    return [obj for obj in system.run_state() if isinstance(getattr(obj, "angle", None), float)
            and id(obj) not in integrated]


def force_angle_holders(system) -> list:
    """The force elements of ``system`` that hold an unwrapped angle (rotational spring-dampers), in
    the order of :func:`angle_holders`: their angles at an output point go with its row
    (:meth:`Branches.tracked`, ``BodyFrames.angles``)."""
    forces = {id(f) for f in system.force_elements}
    return [h for h in angle_holders(system) if id(h) in forces]


def velocity_jump(h, qd0, a0, qd1) -> float:
    """How much more the velocities changed over a step of length h than its accelerations allow:
    max_i (|q̇1 − q̇0|_i − 2 h |a0|_i) over the step's velocity scale max(‖q̇0‖∞, ‖q̇1‖∞), with a0 the
    accelerations at the step's start (the secant of the step before).

    The assembly branch: at a singular configuration (a flattened four-bar) several solution curves
    of Φ(q) = 0 cross, and the position Newton of a step that crosses one can land on either.  The
    other curve has another tangent, so its velocities differ by O(‖q̇‖) from the incoming ones,
    while the true motion's q̇ is continuous: |q̇1 − q̇0| ≤ h max|q̈| (twice the start's
    accelerations leave room for their change over a resolved step and for the noise of a secant).
    A jump beyond ASSEMBLY_GUARD of the scale refuses the step like an angle's departure
    (BranchRefused): the shorter retry's Newton starts from q0 + h q̇0, O(h²) from the curve the
    velocity follows and O(h) from the other, and keeps the velocity-consistent branch — the
    physical continuation, since a bilateral constraint without impact leaves q̇ continuous.
    0 when nothing moves."""
    scale = max(float(np.max(np.abs(qd0), initial=0.0)), float(np.max(np.abs(qd1), initial=0.0)))
    if scale <= 0.0 or not np.isfinite(scale):
        return 0.0
    return max(0.0, float(np.max(np.abs(qd1 - qd0) - 2.0 * h * np.abs(a0), initial=0.0))) / scale


def step_cap(h, departure):
    """The longest next step after an accepted step of length h whose angles departed ``departure``
    (rad) from their prediction (module docstring); inf when nothing departed."""
    if departure <= 0.0:
        return math.inf
    return h * math.sqrt(BRANCH_GUARD / (2.0 * departure))


class Branches:
    """The accepted angles and their rates of one run (module docstring).  ``angle`` and ``rate``
    (one entry per holder) and ``t`` are what the compiled loop reads and advances in C."""

    def __init__(self, system):
        self.holders = angle_holders(system)
        self.index = {id(h): n for n, h in enumerate(self.holders)}
        self.force_holders = force_angle_holders(system)
        self.in_forces = bool(self.force_holders)     # some unwrap only when forces are evaluated
        n = len(self.holders)
        self.angle, self.rate, self.t = np.zeros(n), np.zeros(n), 0.0

    def __bool__(self):
        return bool(self.holders)

    def start(self, system, t, q, qd):
        """Accept the consistent start (t, q, q̇): its angles and their rates by a central difference
        of the evaluation along q̇."""
        if not self.holders:
            return
        self.predict(t)
        self.evaluate(system, t, q, qd)
        angle = self._read()
        scale = float(np.max(np.abs(qd))) if len(qd) else 0.0
        if scale > 0.0 and np.all(np.isfinite(qd)):
            eps = FD_STEP / scale
            self._write(angle)
            self.evaluate(system, t, q + eps * qd, qd)
            ahead = self._read()
            self._write(angle)
            self.evaluate(system, t, q - eps * qd, qd)
            self.rate = (ahead - self._read()) / (2.0 * eps)
        else:
            self.rate = np.zeros(len(self.holders))
        self.angle, self.t = angle, t
        self._write(angle)

    def evaluate(self, system, t, q, qd):
        """Evaluate what unwraps the holders' angles at (t, q, q̇): the constraints, and the forces
        when a force element holds an angle (a rotational spring-damper)."""
        system.constraints(q, t)
        if self.in_forces:
            system.forces(q, qd, t)

    def predict(self, t):
        """Set every holder's reference to its prediction at t (before an evaluation at t)."""
        if self.holders:
            self._write(self.prediction(t))

    def prediction(self, t):
        return self.angle + self.rate * (t - self.t)

    def departure(self, t):
        """max |θ − θ_ref(t)| of the holders after an evaluation at t."""
        if not self.holders:
            return 0.0
        return float(np.max(np.abs(self._read() - self.prediction(t))))

    def check(self, t):
        """Raise BranchRefused when the evaluation at t departed by more than BRANCH_GUARD."""
        departure = self.departure(t)
        if departure > BRANCH_GUARD:
            raise BranchRefused(f"a joint angle departed {departure:.3g} rad from its prediction at t = {t:.6g} s "
                                "(the step is too long to tell its branch)", t)

    def accept(self, t):
        """The evaluation at t (an accepted step's end) becomes the accepted state; returns the
        departure it had from its prediction."""
        if not self.holders:
            return 0.0
        angle = self._read()
        departure = float(np.max(np.abs(angle - self.prediction(t))))
        if t > self.t:
            self.rate = (angle - self.angle) / (t - self.t)
        self.angle, self.t = angle, t
        return departure

    def tracked(self):
        """{name: θ} of the force elements' angles as the last evaluation unwrapped them (at an output
        point: nearest their prediction there), handed with the output row to its post-processing,
        which must not unwrap them again from row to row (fuzz seed 2033)."""
        return {h.name: h.angle for h in self.force_holders}

    # ---- helpers --------------------------------------------------------------------------------
    def _read(self):
        return np.array([h.angle for h in self.holders])

    def _write(self, values):
        for h, v in zip(self.holders, values.tolist()):
            h.angle = v
