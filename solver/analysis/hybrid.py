"""Hybrid LU↔QR coordinate partitioning: when to switch (Kim & Yoo (1997), Kim & Yoo 1997, §3, steps 1–14).

The run integrates with LU partitioning (cheap, independent coordinates a subset of q) and switches
to QR (the constraint tangent space, robust at singular configurations) when one of the paper's
step-3 criteria fires at an accepted step:

  (a) the LU independent set changed again within ``CHANGE_WINDOW`` steps (a re-partition
      following a re-partition: the dependent block keeps degrading);
  (b) the total energy E = T + V_gravity + V_springs + U_strain of a conservative model has moved
      by more than ``ENERGY_FACTOR · rtol`` of the energy scale (the largest Σ|energy terms| seen)
      since the first step of the LU stretch;
  (c) the step size collapsed: h < ``COLLAPSE`` × the median of the last steps (a sudden drop), or,
      ``GRACE`` steps after a (re)start, the median of the last ``WINDOW`` steps is below
      ``DECLINE`` × the largest such median of this LU stretch (the paper's "step size drops
      markedly", gradually) or below ``SLOW`` × QR's step size at the last QR→LU return (LU needing
      much smaller steps than QR did: the return did not pay).

It returns to LU (paper's step 13) after ``return_steps`` consecutive steady QR steps (no step-size
reduction), when a trial LU partition at that state is well conditioned.
``return_steps`` starts at ``RETURN_STEPS`` (the paper's 5) and doubles (up to ``RETURN_MAX``)
whenever an LU stretch ends within ``SHORT_STRETCH`` steps or by criterion (c)'s slow-step test —
a return that did not pay is not retried at once (no LU↔QR ping-pong) — and is reset after an LU
stretch that lasted.  Steps count as steady only once QR's step is back to ``SLOW`` × the largest
LU step median before the switch (the paper's "at the maximum step size").  After a switch the
integrator restarts with ``restart_step``: the last step (going to QR: LU's last, small step — a
large first step at a bifurcation point could land on the other branch; back to LU: QR's largest
recent step).

Conservative (criterion (b) applies): no drivers (rheonomic constraints do work), and every force
element has its work in the energy account — springs and rotational springs without damping or a
time-function force, bushings without damping and with isotropic rotational stiffness (forces.bushing_potential)
— and flexible bodies without modal damping.
Applied loads, tires and controllers are not conservative here (their work is not in V).
"""
from __future__ import annotations

import statistics
from collections import deque

import numpy as np

from ..partitioning.partition import Partition, independent_rows

WINDOW = 10            # steps in the step-size medians of criterion (c)
CHANGE_WINDOW = 20     # (a): two LU re-partitions within this many steps
COLLAPSE = 0.01        # (c) sudden: h below this fraction of the recent median
SLOW = 0.4             # (c) sustained: median LU step below this fraction of QR's step at the return …
DECLINE = 0.1          # … or below this fraction of the largest median of the LU stretch
GRACE = 30             # steps after a (re)start before (c)'s sustained test (the integrator's ramp-up)
ENERGY_FACTOR = 1e3    # (b): energy change above ENERGY_FACTOR · rtol of the energy scale
ENERGY_STRIDE = 5      # (b) is evaluated every this many steps, and at every step that shrank
RETURN_STEPS = 5       # paper's step 13: consecutive steady QR steps before trying LU again
RETURN_MAX = 640
SHORT_STRETCH = 100    # an LU stretch shorter than this (steps) did not pay for its return


def energy_conserved(system) -> bool:
    """True when the model's total mechanical energy should stay constant (module docstring)."""
    if getattr(system, "driver_names", None):
        return False
    if not all(f.conserves_energy() for f in getattr(system, "force_elements", ())):
        return False
    return not any(np.any(fb.body.C_aa) for fb in getattr(system, "flex", ()))


def total_energy(system, q, qd, t):
    """(E, Σ|terms|) of a consistent state: kinetic + gravity + spring + strain energy, from the
    formulation's own energy account (``system.energy``, the numbers the results report)."""
    e = system.energy(q, qd, t)
    return float(np.sum(e)), float(np.sum(np.abs(e)))


class HybridSwitch:
    """The switching state of one hybrid run.  The run calls :meth:`started` at each new partition
    and :meth:`check` after each accepted step; ``check`` returns (new method, reason) or None."""

    def __init__(self, system, rtol):
        self.system = system
        self.conservative = energy_conserved(system)
        self.energy_tol = ENERGY_FACTOR * rtol
        self.energy_scale = 0.0
        self.return_steps = RETURN_STEPS
        self.h_qr = None          # QR's step size at the last QR→LU return
        self.restart_step = None  # the integrator's first step after a switch
        self.h_lu = 0.0           # the largest LU step median of the LU stretch before the switch to QR
        self.changes = deque()    # step numbers of LU re-partitions (criterion (a))
        self.n = 0                # accepted steps of the run
        self._stretch("lu")       # a hybrid run starts with LU

    def _stretch(self, method):
        """A new stretch of ``method`` begins."""
        self.method = method
        self.stretch_steps = 0
        self.h_peak = 0.0
        self.steady = 0
        self.e_ref = None
        self._restarted()

    def _restarted(self):
        """The integrator restarts (its first steps are small again)."""
        self.h = deque(maxlen=WINDOW)
        self.since_restart = 0

    def started(self, method, switched):
        """A new partition of ``method``; ``switched``: by a hybrid switch (else a re-partition)."""
        if method == "lu" and not switched and self.method == "lu":
            self.changes.append(self.n)       # same LU stretch, new independent set
            self._restarted()
        else:
            self._stretch(method)

    def check(self, part, t, h, q, qd, jac, repartition):
        """After an accepted step of size h to the consistent state (t, q, q̇) with Jacobian jac.
        ``repartition``: the partition is about to be renewed (Partition.degraded)."""
        self.n += 1
        self.stretch_steps += 1
        self.since_restart += 1
        steady = not self.h or h >= 0.9 * self.h[-1]
        self.h.append(h)
        if part.method == "lu":
            return self._lu_criteria(t, h, q, qd, jac, repartition)
        self.steady = self.steady + 1 if steady and h >= SLOW * self.h_lu else 0
        if self.steady >= self.return_steps and self._lu_good(q, jac):
            self.h_qr = self.restart_step = max(self.h)
            return "lu", (f"{self.steady} consecutive steps without step-size reduction, away from "
                          "singular configurations")
        return None

    def _lu_criteria(self, t, h, q, qd, jac, repartition):
        while self.changes and self.changes[0] < self.n - CHANGE_WINDOW:
            self.changes.popleft()
        if repartition and self.changes:
            return self._to_qr("the LU independent set keeps changing", slow=False)
        shrank = bool(self.h) and h < 0.5 * statistics.median(self.h)
        if self.conservative and (shrank or self.e_ref is None or self.stretch_steps % ENERGY_STRIDE == 0):
            E, scale = total_energy(self.system, q, qd, t)
            self.energy_scale = max(self.energy_scale, scale)
            if self.e_ref is None:
                self.e_ref = E
            change = abs(E - self.e_ref) / self.energy_scale if self.energy_scale > 0 else 0.0
            if change > self.energy_tol:
                return self._to_qr(f"total energy changed by {change:.2g} (relative) during LU", slow=False)
        if len(self.h) == WINDOW:
            median = statistics.median(self.h)
            if h < COLLAPSE * median:
                return self._to_qr(f"step size collapsed to {h:.2g} s", slow=False)
            if self.since_restart >= GRACE:
                self.h_peak = max(self.h_peak, median)
                if self.h_qr is not None and median < SLOW * self.h_qr:
                    return self._to_qr(f"LU steps ({median:.2g} s) below {SLOW:g} × QR's step at the return "
                                       f"({self.h_qr:.2g} s)", slow=True)
                if median < DECLINE * self.h_peak:
                    return self._to_qr(f"LU steps ({median:.2g} s) dropped below {DECLINE:g} × their largest "
                                       f"in this LU stretch ({self.h_peak:.2g} s)", slow=True)
        return None

    def _to_qr(self, reason, slow):
        self.restart_step = self.h[-1] if self.h else None
        self.h_lu = self.h_peak
        if slow or self.stretch_steps < SHORT_STRETCH:
            self.return_steps = min(2 * self.return_steps, RETURN_MAX)
        else:
            self.return_steps = RETURN_STEPS
        return "qr", reason

    def collapsed(self, reason):
        """LU cannot go on (a stall or repeated re-partitions detected by the run): like (c)."""
        return self._to_qr(reason, slow=False)

    @staticmethod
    def _lu_good(q, jac):
        """Away from singular configurations, where an LU partition would be well conditioned."""
        trial = Partition("lu", q, jac, *independent_rows(jac))
        return trial.singularity(jac) > 1e-2 and trial.quality_ref > 0.3
