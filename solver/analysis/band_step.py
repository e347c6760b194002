"""Stepping over the round-off band of a singular pass (issue #27, item 4).

Within ~1e-5 s of a flattened pass (σ_min(Φ_q) → 0) the right-hand side of the partitioned ODE
carries round-off amplified by 1/σ_min (the dependent velocities) and more (the accelerations: γ
holds q̇²).  At a tight tolerance (the flexible singular four-bar at rtol ≤ 1e-10) the adaptive
integrator's error estimate then sees that noise: its accepted steps fall erratically to 1e-15 s
and the stall watchdog stops the run, although the motion is smooth there and a looser run crossed
the same pass with steps of 3e-4 s.

When the watchdog fires, the Python step loop (Run._step_over) goes back to the last accepted
state before the collapse and takes fixed steps of the size the integrator used there, H (else
longer ones, up to BAND_LADDER × H: Calm.crossing_sizes), over the band instead: classical RK4 (Kutta 1901), each with the step-doubling (Richardson) error estimate
of Hairer, Nørsett & Wanner (1993), §II.4,

    err = RMS((y_{H/2,H/2} − y_H) / (2⁴ − 1) / (atol + rtol·|y|)),

accepted when err ≤ BAND_SLACK (1000: the estimate is that of the uncorrected result).  A stage inside the band sees the noise (err 1e4 and more: the
estimate refuses it), so the crossing step puts the pass at BAND_AT (else 1 − BAND_AT) of its
length, 1/8 of H from the nearest stage of the full and the half steps; the pass is where σ_min
extrapolates to zero (pass_time), else the stalled time.  Only a collapse that σ_min shows to be
a singular pass is stepped over (runs with the compiled reduction's σ_min estimate).  The more accurate two-half-step result
plus its Richardson correction is kept.  Output points inside come from the cubic Hermite
interpolant of the end states and slopes (error O(H⁴)); the run logs a "step over" event and
applies its branch guard (velocity_jump) to each end state.

The compiled step loop (segment.c with band.c) follows the same rule before the collapse instead
of after it, on QR and SVD partitions (BAND_PARTITIONS): from σ_min of its last two accepted steps it predicts the pass (pass_time's
extrapolation) and places its DOP853/DOPRI5 steps so that the pass falls at the crossing fraction of
a step — the middle of the widest gap between the method's stage nodes (crossing_fraction; for
DOP853 with its dense-output stages 0.467, 0.133 of the step from the nearest stage) — and refuses
any stage within BAND_CLEAR of the step size from the predicted pass.  Both loops place the pass
by the one function, crossing_fraction: BAND_AT is its value for the RK4 step doubling's nodes.
"""
from __future__ import annotations

from collections import deque

import numpy as np

BAND_SLACK = 1000.0   # accept the step over when its error estimate is below this many tolerances: the
                      # estimate bounds the two-half-step result's error, the kept one (Richardson-corrected,
                      # order 5) is far more accurate — the flexible singular four-bar at rtol 1e-11 crossed its
                      # passes at estimates up to ~240 and kept its energy to 2.8e-11 of the kinetic scale
BAND_DROP = 0.1       # a step at least this fraction of the reference step is "calm": the step over starts from
BAND_STATES = 64      # one of the last BAND_STATES calm states.  The reference: the largest step of the last
BAND_MEMORY = 100     # BAND_MEMORY of its own lengths of simulated time — a collapse lasts a fraction of one
                      # however many steps it takes (the flexible four-bar at rtol 1e-12: 5e-5 s in ~10⁴ steps
                      # after steps of 4e-4 s), a motion that slows down for good gets a new reference
BAND_LOOKBACK = 4     # the step size: the last calm step's, else the largest of the last BAND_LOOKBACK, else
BAND_LADDER = 16      # that doubled up to BAND_LADDER times it (Calm.crossing_sizes)
RK4_DOUBLING_NODES = (0.0, 0.25, 0.5, 0.75, 1.0)     # stages of the full step (0, ½, 1) and the two half steps
BAND_CLEAR = 0.02     # the compiled loop: no stage within this fraction of the step size (when the pass was
                      # first predicted) from the predicted pass; below the DOP853 gap of its shortest crossing
                      # step (0.133 · at/(1 + at) = 0.042 of a step: band.c) with room for the prediction's error
BAND_TRIES = 4        # stage refusals in a row before the compiled loop drops its prediction of a pass
BAND_PARTITIONS = ("qr", "svd")   # the compiled loop's rule acts on tangent-space partitions only: there
                      # σ_min(Φ_q U) → 0 means Φ_q itself is singular; an LU block's σ_min also falls where its
                      # dependent set is merely bad (the renewal rule's case), and placing a step across that
                      # point put the rigid singular four-bar (partitioning "lu", DOP853 in C) on another
                      # branch at its first pass (energy off by 1.6e-2 of its scale; 2.9e-6 without the rule)


def crossing_fraction(nodes):
    """Where a step that crosses a singular pass puts it, as a fraction of the step: the middle of the
    widest gap between the method's stage nodes (fractions of the step), of equally wide ones the
    one nearest the middle of the step (the lower on a tie) — as far from every stage as the method allows."""
    c = sorted(set(float(x) for x in nodes) | {0.0, 1.0})
    gaps = [(b - a, -abs((a + b) / 2 - 0.5), -(a + b) / 2) for a, b in zip(c, c[1:])]
    return -max(gaps)[2]


BAND_AT = crossing_fraction(RK4_DOUBLING_NODES)    # 0.375: 1/8 of the step from the nearest stage


class Calm:
    """The calm states of a run's Python loop (BAND_DROP, BAND_MEMORY): ``states`` holds (h, t, q, q̇,
    q̈, σ_min) of the last BAND_STATES steps of at least BAND_DROP × the reference step."""

    def __init__(self):
        self.states = deque(maxlen=BAND_STATES)
        self.ref_t, self.ref_h = -np.inf, 0.0

    def add(self, h, t, q, qd, accel, sigma):
        """After the accepted step of size h ending at (t, q, q̇) with q̈ estimate and σ_min (or None)."""
        if h >= self.ref_h or t - self.ref_t > BAND_MEMORY * self.ref_h:
            self.ref_t, self.ref_h = t, h
        if h >= BAND_DROP * self.ref_h:
            self.states.append((h, t, q, qd, accel, sigma))

    def crossing_sizes(self):
        """The step sizes a step over tries, shortest first: the last calm step's, the largest of the
        last BAND_LOOKBACK, then doubled up to BAND_LADDER times that and at least to the reference step.  The band widens as the tolerance
        tightens (the error estimate sees noise farther from the pass), and only a longer step keeps
        its stages out of it: the flexible four-bar at rtol 1e-12 approaches its first pass with
        steps of 7e-5 s, whose placements are refused (estimates 2e3 … 2e4 tolerances); one of
        3.6e-4 s crosses at 62."""
        last = self.states[-1][0]
        sizes = [last, max(r[0] for r in list(self.states)[-BAND_LOOKBACK:])]
        top = max(self.ref_h, BAND_LADDER * sizes[-1])
        while sizes[-1] * 2 < top:
            sizes.append(sizes[-1] * 2)
        return list(dict.fromkeys([*sizes, top]))


def rk4(rhs, t, y, h, k1=None):
    """One classical Runge–Kutta step of size h from (t, y); k1 = rhs(t, y) when already known."""
    k1 = rhs(t, y) if k1 is None else k1
    k2 = rhs(t + h / 2, y + h / 2 * k1)
    k3 = rhs(t + h / 2, y + h / 2 * k2)
    k4 = rhs(t + h, y + h * k3)
    return y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)


def step_over(rhs, t, y, h, rtol, atol, f_start=None):
    """(y_end, f_end, f_start, err) of one step of size h over a noisy band from (t, y): y_end the two
    half-step RK4 result with its Richardson correction, f_end = rhs(t + h, y_end), err the
    weighted RMS error estimate (1 = the tolerance); f_start = rhs(t, y) unless given (the previous
    step's f_end when steps are chained)."""
    k1 = rhs(t, y) if f_start is None else f_start
    full = rk4(rhs, t, y, h, k1)
    half = rk4(rhs, t, y, h / 2, k1)
    two = rk4(rhs, t + h / 2, half, h / 2)
    diff = (two - full) / 15.0
    scale = atol + rtol * np.maximum(np.abs(y), np.abs(two))
    err = float(np.sqrt(np.mean((diff / scale) ** 2))) if diff.size else 0.0
    end = two + diff
    return end, rhs(t + h, end), k1, err


def hermite(t0, y0, f0, t1, y1, f1):
    """The cubic Hermite interpolant through (t0, y0, y0') and (t1, y1, y1')."""
    h = t1 - t0

    def at(t):
        s = (t - t0) / h
        h00, h10 = (1 + 2 * s) * (1 - s) ** 2, s * (1 - s) ** 2
        h01, h11 = s * s * (3 - 2 * s), s * s * (s - 1)
        return h00 * y0 + h10 * h * f0 + h01 * y1 + h11 * h * f1
    return at


def pass_time(calm, t_stall):
    """The time of the singular pass: σ_min(Φ_q U) extrapolated linearly to 0 from the last two calm
    states (entries (h, t, q, q̇, q̈, σ_min), σ_min None where the run has no estimate), when it
    falls between the last of them and as far past t_stall as t_stall is past it; else None (no
    step over: a collapse that is not a singular pass, or a run without σ_min estimates)."""
    if len(calm) < 2 or calm[-1][5] is None or calm[-2][5] is None:
        return None
    (t1, s1), (t2, s2) = (calm[-2][1], calm[-2][5]), (calm[-1][1], calm[-1][5])
    if not s1 > s2 > 0.0:
        return None
    t_pass = t2 + s2 * (t2 - t1) / (s1 - s2)
    return t_pass if t2 < t_pass < t_stall + (t_stall - t2) else None
