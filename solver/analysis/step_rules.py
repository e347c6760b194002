"""The rules both step loops of a dynamic run follow — the Python loop of
:class:`solver.analysis.dynamics.Run` and the compiled one of :mod:`solver.analysis.segments`:
when to re-partition, when a partition is stuck, when the step size has collapsed, when a run
crawls too slowly to finish within its bounds (:class:`Progress`)."""
from __future__ import annotations

from collections import deque

from ..errors import SolverError

REPARTITION_RATIO = 0.2      # re-partition when the partition quality drops below this fraction …
AMPLIFICATION_GROWTH = 1 / REPARTITION_RATIO   # … or ‖∂q/∂z‖ grows by this factor (Partition.degraded)
STUCK_RESTARTS = 25          # restarts without 20 clean steps in between: the partition cannot go on
CLEAN_STRETCH = 20
STALL_STEPS = 300            # this many steps advancing less than STALL_FRACTION·t_end: stalled
STALL_FRACTION = 1e-6
STAGE_RETRIES = 4            # both loops: a stage whose position Newton fails, or (compiled loop) whose forces,
                             # accelerations or error estimate are not finite (an explicit trial stage of a long
                             # step into a stiff stop runs away: a recoverable right-hand-side failure, as CVODE's;
                             # Hindmarsh et al. (2005)), retries the step this many times shorter (BRANCH_SHRINK) —
                             # the compiled loop before re-partitioning, the Python loop as the first step of its
                             # restarted integrator (each one of the STUCK_RESTARTS) — a plain restart keeps the
                             # step size DOP853 chose (compiled loop), or takes the scipy integrator's own first
                             # step, the same every time (Python loop), and 25 of them at one state end the run
                             # (fuzz seeds 1047, 1124)
CRAWL_MIN_STEPS = 1000       # the crawl rule (Progress) projects a run's cost from its last steps: checkpoints
CRAWL_WINDOW = 4             # every CRAWL_MIN_STEPS steps, the last CRAWL_WINDOW of them kept; it starts once
CRAWL_MIN_FRACTION = 0.05    # the run has used this fraction of the bound it projects (a steady rate, not the
CRAWL_FACTOR = 2.0           # start-up), and stops a run whose projection exceeds a bound this many times
STIFF_BOUNDARY = {"dop853": 6.1, "dopri5": 3.25}   # "auto" in C: h·ρ (dopri.c, dp_stiffness) past the method's
STIFF_BAND = 1.25            # stability boundary, below STIFF_BAND times it, on STIFF_STEPS accepted steps (a run
STIFF_STEPS = 15             # of STIFF_RESET steps outside the band starting the count again; Hairer's DOP853
STIFF_RESET = 6              # counts) → the model is stiff and the run goes on with STIFF_INTEGRATOR (bdf.c in the
STIFF_INTEGRATOR = "bdf"     # same compiled loop; Hairer & Wanner, Solving ODE II (1996), §IV.2).  The band:
                             # a step held by a damped stiff mode keeps h·ρ just past the boundary (the cars: 6.39
                             # on 99 % of steps); accepted steps far past it (10–500) come from non-smooth forces
                             # (stops, contact) or oscillating modes where BDF is no better (rrc_arm_case2: Hairer's
                             # bare "> 6.1" switched it and took 16.6 s instead of 1.6 s).  Only "auto" switches
ADAMS_SWITCH = 5.0           # "adams" in C: LSODA's switch test (adams.c: the step BDF could take at least RATIO = 5
                             # times Adams' on one step, Petzold (1983)) → the run goes on with STIFF_INTEGRATOR
JACOBIAN_STEP = 1e-7         # relative forward-difference step of the implicit integrators' Jacobian, both loops
                             # (Run._jacobian, bdf.c bdf_jacobian): h_k = JACOBIAN_STEP·max(1, |y_k|)
BATCH_WALL_TIME = 300.0      # settings.max_wall_time of the CLI batch commands (mbs run, mbs study) when the
                             # project sets none; the GUI has none (its runs show progress and are cancelled)


def stall_error(run, t, span):
    """The SolverError of a collapsed step size: STALL_STEPS steps advanced only ``span`` up to t."""
    return SolverError(f"the step size collapsed ({STALL_STEPS} steps advanced only {span:.3g} s); the mechanism "
                       "is probably at a singular configuration or the model is too stiff for this integrator — "
                       "try partitioning='qr', 'hybrid' or integrator='bdf'", time=t, kind="step_collapse",
                       elements=run._worst_owners(run.q_last, t))


class Progress:
    """The crawl rule.  A run whose recent rate — simulated time per step and per second of wall
    time from the oldest of its last CRAWL_WINDOW checkpoints (one every CRAWL_MIN_STEPS steps) —
    projects more than CRAWL_FACTOR · settings.max_steps steps, or more than CRAWL_FACTOR ·
    settings.max_wall_time of wall time, to reach t_end stops now (SolverError kind "crawl", the
    partial results kept by ``Run.execute``) instead of when it hits the bound:

        steps + (t_end − t) · Δsteps/Δt  > CRAWL_FACTOR · max_steps,   or
        elapsed + (t_end − t) · Δwall/Δt > CRAWL_FACTOR · max_wall_time,

    each once the run has used CRAWL_MIN_FRACTION of that bound (a start-up transient — an impact,
    the first steps of a stiff model — is not projected over the whole run).

    The step-size collapse (STALL_STEPS) catches a run that no longer advances; this rule one that
    advances too slowly to finish: steps held small by the tolerance or by stiffness on an explicit
    integrator (issue #32: the 200-link chain at rtol 1e-12 crawled 467,006 steps for 445 s).  Both
    step loops apply it through ``Run._check_cancel`` (the compiled one between calls of segment.c,
    at most every 200 steps)."""

    def __init__(self, settings, wall0):
        self.s, self.wall0 = settings, wall0
        self.marks = deque([(wall0, 0.0, 0)], maxlen=CRAWL_WINDOW)     # (wall, t, steps)

    def check(self, t, steps, wall):
        """Raise the crawl SolverError when the projection from the oldest checkpoint to (t, steps,
        wall) exceeds a bound; take a checkpoint every CRAWL_MIN_STEPS steps."""
        if steps - self.marks[-1][2] >= CRAWL_MIN_STEPS:
            self.marks.append((wall, t, steps))
        projection = self.projection(t, steps, wall)
        if projection is None:
            return
        s, (need_steps, need_wall, _) = self.s, projection
        if steps >= CRAWL_MIN_FRACTION * s.max_steps and need_steps > CRAWL_FACTOR * s.max_steps:
            bound = f"settings.max_steps ({s.max_steps})"
        elif (s.max_wall_time is not None and wall - self.wall0 >= CRAWL_MIN_FRACTION * s.max_wall_time
              and need_wall > CRAWL_FACTOR * s.max_wall_time):
            bound = f"settings.max_wall_time ({s.max_wall_time:g} s)"
        else:
            return
        raise SolverError(f"the run is crawling: {self.describe(t, steps, wall)}, more than {CRAWL_FACTOR:g} times "
                          f"{bound}; small steps come from the tolerance (rtol {s.rtol:g}, atol {s.atol:g}) or from "
                          f"stiffness on the '{s.integrator}' integrator, costly ones from the model's size — loosen "
                          "rtol/atol, try integrator='bdf' for a stiff model, or raise the bound", time=t, kind="crawl")

    def projection(self, t, steps, wall):
        """(steps, wall time, rate text) the run needs to reach t_end at its recent rate, or None
        before it has CRAWL_MIN_STEPS steps of rate."""
        wall_a, t_a, steps_a = self.marks[0]
        if steps - steps_a < CRAWL_MIN_STEPS or t <= t_a:
            return None
        left = self.s.t_end - t
        per_step, per_second = (t - t_a) / (steps - steps_a), (t - t_a) / max(wall - wall_a, 1e-9)
        rate = (f"{1 / per_step:.3g} steps per simulated second, mean step {per_step:.3g} s, "
                f"{1e3 * per_step / per_second:.3g} ms of wall time per step")
        return steps + left / per_step, wall - self.wall0 + left / per_second, rate

    def describe(self, t, steps, wall):
        """Where the run is and, once it has a rate, what it needs to reach t_end (the crawl and
        limit messages)."""
        projection = self.projection(t, steps, wall)
        if projection is None:
            return f"{steps} steps to t = {t:.6g} s of t_end = {self.s.t_end:g} s"
        need_steps, need_wall, rate = projection
        return (f"at its recent rate ({rate}) it would need about {need_steps:.3g} steps and {need_wall:.3g} s "
                f"to reach t_end = {self.s.t_end:g} s")
