"""Forward dynamics (and kinematic analysis when DOF = 0) with coordinate partitioning.

``simulate(model, ...)`` is a plain function with progress and cancel hooks; the GUI wraps it in a
worker thread.  The integrated state is y = [z, ż] of the independent coordinates of the current
:class:`~solver.partitioning.partition.Partition`; every right-hand side recovers the dependent
coordinates (Newton on Φ = 0), the velocities (Φ_q q̇ = ν) and the accelerations from the
tangent-space equations, so constraints hold to the Newton tolerance at every output.

Re-partitioning: when the dependent block Φ_q U becomes much worse than the best one possible at
the current configuration (``Partition.quality`` below a fifth of its value at partition time), the
independent coordinates stop describing the motion (‖∂q/∂z‖, ``Partition.amplification``, five
times its value at partition time) or Newton fails, a new partition is made at the last accepted
state and the integrator restarts there; 25 restarts that are not such renewals (failed solves,
hybrid switches) without a clean stretch of 20 steps in between stop the run with a message (a
singular configuration the method cannot pass).  ``partitioning="hybrid"`` (Kim & Yoo (1997), steps 1–14) integrates
with LU and switches to QR when the LU independent set changes repeatedly, the energy of a
conservative model drifts or the step size collapses, and returns to LU after consecutive steady
QR steps (:mod:`solver.analysis.hybrid` decides); each switch is a logged event (time, from, to,
reason), and the integrator restarts after a switch with a step size it suggests.  When the step
size collapses in the Python loop outside an LU hybrid stretch, the run first tries to step over the
round-off band of a singular pass (:mod:`solver.analysis.band_step`, a logged "step over" event)
before it stops with "step collapse".

Integrators: scipy's (``integrator_class``) step in this module's loop; with generated kernels the
default ``"auto"`` (DOP853) and ``"rk45"`` (DOPRI5) step in C over run segments instead
(:mod:`solver.analysis.segments`), with the same re-partitioning, stall and cancel rules.
"""
from __future__ import annotations

import time as _time
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..compile import CompiledModel, compile_model, generic_system, resolve_settings
from ..contact.element import ContactSet
from ..errors import Cancelled, ModelError, Problem, SolverError
from ..forces import Wrenches
from ..model.inputs import with_inputs
from ..model.model import Model
from ..results import Results
from ..integrators import GeneralizedAlpha, integrator_class, limit_step
from ..partitioning.partition import PartitionError, Renewal, independent_rows, position_tolerance
from ..partitioning.choose import build_partition
from .band_step import BAND_AT, BAND_SLACK, Calm, hermite, pass_time, step_over
from .assembly import assemble_positions, consistent_velocities, holding_model
from ..formulations.workspace import initial_state
from ..formulations.branches import (ASSEMBLY_GUARD, ASSEMBLY_RETRIES, BRANCH_SHRINK, AssemblyRefused, BranchRefused, Branches, step_cap,
                                     velocity_jump)
from .equilibrium import starting_at_equilibrium
from .hybrid import HybridSwitch
from .recording import Recorder
from .segments import run_segments, step_loop
from .step_rules import (AMPLIFICATION_GROWTH, CLEAN_STRETCH, JACOBIAN_STEP, REPARTITION_RATIO, STAGE_RETRIES,
                         STALL_FRACTION, STALL_STEPS, STUCK_RESTARTS, Progress, stall_error)
from .threads import single_threaded_blas

IMPLICIT = ("adams", "bdf", "radau")   # integrators that take a Jacobian (LSODA in its stiff mode)


def check_output_rows(settings, streamed):
    """Refuse a run whose output rows exceed what its results can hold (settings.output_step, a
    ModelError) before anything is compiled or allocated: ``Settings`` itself allows
    MAX_STREAMED_ROWS, results kept in memory (not ``streamed``) MAX_OUTPUT_ROWS."""
    problem = None if streamed else settings.rows_in_memory_problem()
    if problem is not None:
        raise ModelError(Problem("solver", None, "output_step", problem))


def _algebra_note(part, compiled):
    """The partition event's note on its algebra: the compiled band algebra (codegen/banded.c) or
    Python's sparse factorizations (partitioning/sparse.py); nothing for the dense algebra."""
    band = getattr(compiled, "band", None)
    if band is not None:
        return f"; band factorization of Φ_q in C (kl = {band.kl}, ku = {band.ku})"
    return "; sparse factorizations of Φ_q" if part.sparse else ""


def run_limit(run, t):
    """Raise SolverError (the partial results kept by Run.execute) when ``run`` has taken more than
    settings.max_steps steps or run longer than settings.max_wall_time (kind "limit"), or when its
    recent rate projects far more than that to reach t_end (kind "crawl": step_rules.Progress)."""
    s, wall = run.s, _time.perf_counter()
    if run.steps > s.max_steps:
        raise SolverError(f"the run reached its step limit ({s.max_steps} steps, settings.max_steps; "
                          f"{run.crawl.describe(t, run.steps, wall)})", time=t, kind="limit")
    if s.max_wall_time is not None and wall - run.wall0 > s.max_wall_time:
        raise SolverError(f"the run reached its wall-time limit ({s.max_wall_time:g} s, settings.max_wall_time; "
                          f"{run.crawl.describe(t, run.steps, wall)})", time=t, kind="limit")
    run.crawl.check(t, run.steps, wall)


def output_times(t_end, step):
    n = int(np.floor(t_end / step + 1e-9))
    times = step * np.arange(n + 1)
    if t_end - times[-1] > 1e-9 * max(1.0, t_end):
        times = np.append(times, t_end)
    return times


def simulate(model: Model | CompiledModel, t_end: float | None = None, output_step: float | None = None,
             formulation: str | None = None, partitioning: str | None = None, integrator: str | None = None,
             rtol: float | None = None, atol: float | None = None, max_step: float | None = None,
             constraints: str | None = None, reactions: str | None = None,
             progress: Callable[[float, float], None] | None = None, cancel: Callable[[], bool] | None = None,
             hold: Sequence[str] = (), on_event: Callable[[dict], None] | None = None,
             codegen: bool | str | None = None, results_path: str | None = None,
             initial: str = "model", inputs: dict | None = None) -> Results:
    """Run a model (a :class:`~solver.model.model.Model`, or a :class:`~solver.compile.CompiledModel`
    to run again without compiling); returns :class:`solver.results.Results`.

    Arguments not given come from the model's settings.  ``codegen`` (True/False/"auto"/"on"/"off",
    default the setting, itself "auto") chooses generated C kernels (:mod:`solver.compile`; an
    event of kind "codegen" says whether they or the generic path ran, and why).  ``hold``: joints
    that keep their drawn relative position while the model is assembled (see
    :mod:`solver.analysis.assembly`; needs a Model).  ``on_event(event)`` receives each solver
    event (dict: time, kind, message) as it happens, "compiling the model…" included.
    ``progress(t, t_end)`` is called after each output point; ``cancel()`` returning True stops the
    run — or the build before it — (raises :class:`Cancelled` carrying the partial results).
    ``results_path``: stream the output points into this HDF5 file as the run goes
    (:mod:`solver.analysis.recording`; memory stays bounded) and return Results that read from it;
    the file appears when the run ends, also a failed or cancelled one.  ``initial="equilibrium"``
    starts at rest from the static equilibrium near the model's configuration
    (:func:`solver.analysis.equilibrium.static_equilibrium`; an event of kind "equilibrium" gives
    its residual) instead of ``"model"``, the drawn state with the bodies' initial velocities.
    ``inputs``: {declared input name: value} (:mod:`solver.model.inputs`; a number, an expression of
    t, a table or a callable f(t)); declared inputs not given take their defaults (needs a Model).
    Raises ModelError for bad input and SolverError (with ``.results``, None when the equilibrium
    is not found) when the run fails."""
    if initial not in ("model", "equilibrium"):
        raise ModelError(f"simulate: initial must be 'model' or 'equilibrium'; got {initial!r}")
    if initial == "equilibrium" and hold:
        raise ModelError("simulate: hold and initial='equilibrium' cannot be combined (the equilibrium "
                         "decides every joint's position)")
    if hold and isinstance(model, CompiledModel):
        raise ModelError("simulate: hold needs the Model (the held joints are assembled from it), not a "
                         "CompiledModel")
    if inputs and isinstance(model, CompiledModel):
        raise ModelError("simulate: inputs need the Model (they replace time functions before it is "
                         "compiled), not a CompiledModel")
    overrides: dict[str, Any] = dict(
        t_end=t_end, output_step=output_step, formulation=formulation, partitioning=partitioning,
        integrator=integrator, rtol=rtol, atol=atol, max_step=max_step, constraints=constraints, reactions=reactions)
    if not isinstance(model, CompiledModel):
        check_output_rows(resolve_settings(model, **overrides), results_path is not None)
        model = with_inputs(model, inputs, t_end=t_end if t_end is not None else model.settings.t_end)
    mine = not isinstance(model, CompiledModel)     # compiled for this call (maybe shared: claim below)
    if isinstance(model, CompiledModel):
        compiled, settings = model, model.run_settings(codegen=codegen, **overrides)
        check_output_rows(settings, results_path is not None)
    else:
        compiled = compile_model(model, codegen=codegen, on_event=on_event, cancel=cancel, **overrides)
        settings = compiled.settings
    system, start = compiled.system, None      # the run and the equilibrium evaluate workspaces of it
    if initial == "equilibrium":
        start, eq = starting_at_equilibrium(system)
        equilibrium_note = (f"started at the static equilibrium ({eq.method}, {eq.iterations} iterations, "
                            f"max |NᵀQ| = {eq.residual:.3g})")
    holding = generic_system(holding_model(model, hold), settings) if hold else None
    claim = system.claim() if mine else None
    try:
        run = Run(system, settings, progress, cancel, holding, on_event, results_path, start=start,
                  owned=claim is not None, borrowed=claim is None)
        try:
            for message in compiled.notices:
                run.rec.event(0.0, "codegen", message)
            if start is not None:
                run.rec.event(0.0, "equilibrium", equilibrium_note)
            with single_threaded_blas(scipy=run.factors()):
                return run.execute()
        finally:
            if claim is None:        # the next run of this compiled system takes the workspace again
                system.give_back_workspace(run.system, run.cache)
    finally:
        if claim is not None:
            claim.release()


class Run:
    """State of one run: its workspace of the system, the active partition, the recorder and the
    integrator."""

    python_loop = ()     # integrators this kind of run steps in the Python loop even where the C loop applies

    def __init__(self, system, settings, progress=None, cancel=None, holding=None, on_event=None,
                 results_path=None, start=None, owned=False, borrowed=False):
        """system: a compiled system; the run evaluates its own workspace of it
        (:meth:`~solver.formulations.system.MechanicalSystem.workspace`), so it starts from the
        model's configuration and never changes ``system`` — unless ``owned`` (the caller holds the
        system's :meth:`~solver.formulations.system.MechanicalSystem.claim` for this run): then the
        system itself, its run state reset (``own_workspace``); ``borrowed``: a workspace a finished
        run gave back, else a new one (``borrow_workspace``: the caller gives it back when the run
        ends, with ``cache``, the objects bound to it: the compiled output's tables and buffers);
        holding: the same system with held
        joints prescribed, used only to assemble (a workspace of it too); results_path: the HDF5
        file the recorder streams into (None: results in memory); start: the initial state
        (q, q̇, t) when it is not the system's own (``initial_state()``)."""
        self.compiled_system = system      # the compiled system the workspace is of
        self.cache = {}          # objects bound to the workspace, kept with it (borrowed)
        if owned:
            self.system = system = system.own_workspace()
        elif borrowed:
            self.system, self.cache = system.borrow_workspace()
            system = self.system
        else:
            self.system = system = system.workspace()
        self.start = start
        self.holding = None if holding is None else holding.workspace()
        self.s = settings
        self.progress = progress
        self.cancel = cancel
        self.meta = {"model_name": getattr(system, "model_name", ""), "formulation": settings.formulation,
                     "partitioning": settings.partitioning, "integrator": settings.integrator,
                     "rtol": settings.rtol, "atol": settings.atol, "t_end": settings.t_end,
                     "output_step": settings.output_step}
        self.times = output_times(settings.t_end, settings.output_step)     # execute()'s output points
        self.rec = Recorder(system, self.meta, on_event, path=results_path, rows=len(self.times))
        if getattr(system, "kernels", None) is not None:     # rows stored one at a time post-processed in C
            from ..codegen.output import row_output
            output = row_output(system, self.cache)
            self.rec.post_rows = None if output is None else output.states
        self.rhs_count = 0
        self.t_eval = 0.0        # the time of the last right-hand-side evaluation (a failed stage's)
        self.steps = 0
        self.wall0 = _time.perf_counter()      # set again when execute() starts …
        self.crawl = Progress(settings, self.wall0)    # … and so is the crawl rule's start
        self._switch = None      # pending hybrid switch: (method, reason)
        self.q_last = None       # the last consistent positions (Newton start, diagnostics) …
        self._rate_last = None   # … and (q̇, t) there, or None: the Newton start is extrapolated
        self._compiled = None    # the active partition's compiled reduced equations, if the system has them
        self.branches = Branches(system)   # the unwrapped angles' accepted values and rates
        self.newton_tol = position_tolerance(settings.atol)   # the dynamic run's position Newton bound
        self.last_step = None    # the Python loop's last accepted step size (a continued run starts with it)
        self.switched = False    # "auto" switched to BDF in the compiled loop (segments.run_segments)
        self._loop = None        # step_loop(self) as factors() found it, for the next _dynamic
        self._contact = next((f for f in system.force_elements if isinstance(f, ContactSet)), None)

    def factors(self):
        """Whether the run may factor matrices in Python (scipy.linalg: partitions of constraint rows,
        the Python step loop's integrators): False for an open tree stepped in C
        (threads.single_threaded_blas)."""
        self._loop = step_loop(self)
        return bool(self.system.m) or self._loop[1] is None

    # ---- public API -----------------------------------------------------------------------------
    def execute(self):
        self.wall0 = wall0 = _time.perf_counter()
        self.crawl = Progress(self.s, wall0)
        try:
            part, q, qd, t0 = self.begin()
            times = self.times
            if part.dof == 0:
                self._kinematic(part, q, times)
            elif self.s.integrator == "galpha":
                self._dynamic_index3(part, q, qd, times)
            else:
                self._dynamic(part, q, qd, times)
        except (SolverError, Cancelled) as exc:
            self._finish(wall0)
            exc.results = self.rec.build("cancelled" if isinstance(exc, Cancelled) else "failed", str(exc))
            raise
        except BaseException:
            self.rec.discard()
            raise
        self._finish(wall0)
        return self.rec.build()

    def begin(self):
        """The consistent start state and its partition: (part, q, q̇, t0) — assembled (the held
        joints first), consistent velocities, the angles' branches started."""
        q, qd, t0 = initial_state(self.compiled_system, self.system) if self.start is None else self.start
        q, qd = np.array(q, dtype=float), np.array(qd, dtype=float)
        if self.holding is not None:
            q = assemble_positions(self.holding, q, t0)
        q = assemble_positions(self.system, q, t0)
        qd = consistent_velocities(self.system, q, qd, t0)
        self.branches.start(self.system, t0, q, qd)
        method = "lu" if self.s.partitioning == "hybrid" else self.s.partitioning
        return self._partition(method, q, t0, "initial"), q, qd, t0

    # ---- analyses -------------------------------------------------------------------------------
    def _kinematic(self, part, q, times):
        """DOF = 0: positions, velocities, accelerations and forces at each output time."""
        self.rec.event(times[0], "analysis", "kinematic analysis (no degrees of freedom)")
        empty = np.zeros(0)
        for t in times:
            self.branches.predict(t)
            try:
                q, ev = part.positions(self.system, empty, t, q)
            except PartitionError as exc:
                part = self._partition(part.method, q, t, str(exc))
                try:
                    q, ev = part.positions(self.system, empty, t, q)
                except PartitionError as exc2:
                    raise SolverError(f"kinematic analysis failed: {exc2}", time=t, kind="locked",
                                      elements=self._worst_owners(q, t)) from None
            qd = part.velocities(ev.jac, ev.nu, empty)
            self._record(part, t, q, qd, "kinematic")
            self.branches.accept(t)
            self._check_cancel(t)

    def _dynamic(self, part, q, qd, times, record_start=True):
        """Integrate from the consistent state (times[0], q, q̇) through the output points ``times``
        (times[0] recorded unless ``record_start`` is False: a continued run recorded it already).
        Returns the partition and the state (part, t, q, q̇) it ended with, at times[-1]."""
        # compiled None: every step in Python (the choice factors() made for this call, else made again: an
        # interactive run's later chunks may have loads evaluated in Python)
        choice, self._loop = self._loop, None
        integrator, compiled, note = choice or step_loop(self)
        if compiled is not None and self._compiled is None and part.sparse:   # solved in Python: the Python loop
            note = f"step loop in Python ({integrator}): sparse factorizations of Φ_q (no compiled reduction)"
        if note is not None and not any(e["message"] == note for e in self.rec.events):
            self.rec.event(times[0], "integrator", note)
        max_step = self.s.max_step or np.inf
        t = times[0]
        # q̈ at the last accepted state (velocity_jump) for the Python loop, its row recorded unless a continued
        # run has it — by the compiled solve when there is one, as every other row of the run (an open tree's
        # run in C then never imports scipy.linalg: 0.15–0.2 s of a first run); the compiled step loop solves
        # and writes the start row itself (segment.c write_start_row) and needs no q̈ (accel: None until the
        # Python loop takes over) — unless a force element holds an unwrapped angle (the row hands it over
        # with Branches.tracked) or the start is the end
        accel, next_out = None, 1
        if compiled is not None and self._compiled is not None and len(times) > 1 and not self.rec.angle_names:
            next_out = 0 if record_start else 1
        elif self._compiled is not None:
            accel = self._record_output(part, t, np.concatenate([part.z_of(q), part.zd_of(qd)]), store=record_start)
        else:
            accel = self._record(part, t, q, qd, part.method, store=record_start)[0]
        refused = 0              # steps from the last accepted state refused for a velocity jump
        stage_failures = 0       # steps from the last accepted state whose stage solve failed (STAGE_RETRIES)
        hybrid = HybridSwitch(self.system, self.s.rtol) if self.s.partitioning == "hybrid" else None
        # after a hybrid switch: HybridSwitch.restart_step; a continued run: its last step (within times)
        first_step = min(self.last_step, times[-1] - t) if self.last_step and times[-1] > t else None
        restarts = 0             # restarts (not renewals) since the last clean stretch of CLEAN_STRETCH steps
        clean = 0
        window = deque(maxlen=STALL_STEPS)   # times of the last accepted steps (stall watchdog)
        calm = Calm()                        # the states a step over may start from (band_step)
        ring = [np.zeros(STALL_STEPS), 0, 0]  # the same for the compiled loop: (times, count, position)
        while next_out < len(times):
            self._remember(t, q, qd)
            if compiled is not None and self._compiled is not None:
                restart, t, q, qd, next_out, stepped = run_segments(self, part, compiled, t, q, qd, times,
                                                                    next_out, ring)
                clean += stepped
                if clean >= CLEAN_STRETCH:
                    restarts = 0
                if restart is None:
                    break
                restarts, clean = self._restarted(part, hybrid, restarts, clean, restart, q, t)
                part = self._partition(part.method, q, t, restart)
                continue
            y0 = np.concatenate([part.z_of(q), part.zd_of(qd)])
            if accel is None:           # after compiled segments: q̈ at the state the Python loop starts from
                accel = self._record_output(part, t, y0, store=False)
            ode = self._integrator(integrator, part, t, y0, times[-1], min(max_step, self._travel_cap(q, qd)),
                                   first_step)
            restart = None
            first_step = None
            while ode.status == "running" and restart is None:
                try:
                    msg = ode.step()
                    if ode.status == "failed":
                        raise SolverError(f"integration failed: {msg}", time=ode.t, kind="integration",
                                          elements=self._worst_owners(self.q_last, ode.t))
                    # the step's end first: its angles' branch decides whether the step stands
                    q_new, qd_new, jac = self._state(part, ode.t, ode.y)
                    jump = velocity_jump(ode.t - t, qd, accel, qd_new)
                    if jump > ASSEMBLY_GUARD and refused < ASSEMBLY_RETRIES:
                        refused += 1
                        raise AssemblyRefused(f"the velocities jumped {jump:.2g} of their scale over the step to "
                                              f"t = {ode.t:.6g} s (an assembly branch crossed at a singular "
                                              "configuration)", ode.t)
                    c = self._compiled          # its estimates at the step's end (before the output points')
                    estimates = (None, None, None) if c is None else (c.sigma_min, c.amplification, c.row_sigma_min())
                except PartitionError as exc:
                    # (q, t): still the last accepted state; a velocity jump's retries are bounded by
                    # ASSEMBLY_RETRIES, not counted towards the stuck partition's restarts
                    restart = Renewal(exc) if isinstance(exc, AssemblyRefused) else str(exc)
                    # retried shorter: a refused angle, and (STAGE_RETRIES times from one accepted
                    # state, as the compiled loop) a solve that failed inside a step — a restart with
                    # the integrator's own first step would try the same step again (fuzz seed 1124)
                    inside = ode.t <= t
                    if isinstance(exc, BranchRefused) or (inside and stage_failures < STAGE_RETRIES):
                        stage_failures += inside and not isinstance(exc, BranchRefused)
                        # the step reached at least the failed evaluation (LSODA reports no more); a
                        # solver that failed inside its step may know the step (h_abs)
                        reach = (exc.time if isinstance(exc, BranchRefused) else self.t_eval) - t
                        tried = max(reach, getattr(ode, "h_abs", 0.0) if inside else 0.0)
                        first_step = BRANCH_SHRINK * tried if tried > 0 else None
                    break
                h = ode.t - ode.t_old
                limit_step(ode, min(max_step, step_cap(h, self.branches.accept(ode.t)),
                                     self._travel_cap(q_new, qd_new)), h)
                reached = ode.t + 1e-12 * max(1.0, abs(ode.t))
                # the interpolant only for steps holding output points (DOP853 spends 3 evaluations on it)
                dense = ode.dense_output() if next_out < len(times) and times[next_out] <= reached else None
                try:
                    while dense is not None and next_out < len(times) and times[next_out] <= reached:
                        tout = times[next_out]
                        self._record_output(part, tout, dense(tout))
                        next_out += 1
                        self._check_cancel(tout)
                except PartitionError as exc:      # the step's output points: redo it from the last state
                    restart = f"at the output point t = {tout:.6g} s: {exc}"
                    break
                self.steps += 1
                clean += 1
                if clean >= CLEAN_STRETCH:
                    restarts = 0
                self.rec.step(ode.t, h)
                accel = (qd_new - qd) / h if h > 0 else accel
                refused = stage_failures = 0
                self.last_step = h
                t, q, qd = ode.t, q_new, qd_new
                self._remember(t, q, qd)       # the next step's Newton starts from its start, not an output point
                self._check_cancel(t)
                window.append(t)
                calm.add(h, t, q, qd, accel, estimates[0])
                if len(window) == STALL_STEPS and t - window[0] < STALL_FRACTION * self.s.t_end:
                    if not (hybrid is not None and part.method == "lu"):
                        span = t - window[0]
                        over = self._step_over(part, calm, t, max_step, times, next_out)
                        if over is None:
                            raise stall_error(self, t, span)
                        t, q, qd, accel, next_out = over
                        first_step = min(calm.states[-1][0], times[-1] - t) if times[-1] > t else None
                        restart = Renewal("stepped over a singular band")
                    else:
                        self._switch = hybrid.collapsed("the step size collapsed")
                        restart = "hybrid switch"
                    window.clear()
                renew = part.degraded(jac, REPARTITION_RATIO, AMPLIFICATION_GROWTH, *estimates)
                if renew is not None:
                    restart = renew
                if hybrid is not None and self._switch is None:
                    switch = hybrid.check(part, t, h, q, qd, jac, restart is not None)
                    if switch is not None:
                        self._switch, restart = switch, "hybrid switch"
                        first_step = min(hybrid.restart_step, times[-1] - t) if times[-1] > t else None
            if restart is None:
                break
            restarts, clean = self._restarted(part, hybrid, restarts, clean, restart, q, t)
            method = part.method
            switch = self._switch
            if switch is not None:
                self.rec.event(t, "switch", f"{part.method} -> {switch[0]}: {switch[1]}")
                method = switch[0]
                self._switch = None
            part = self._partition(method, q, t, restart)
            # the velocities the new partition integrates from (its V ż, ẇ solved): velocity_jump
            # measures the next step against them, not against a q̇ the new independent set represents
            # poorly (a coordinate stationary there: ż ≈ 0 times a large ∂q/∂z)
            ev = self.system.constraints(q, t, level=1)
            qd = part.velocities(ev.jac, ev.nu, part.zd_of(qd))
            if hybrid is not None:
                hybrid.started(method, switch is not None)
        return part, t, q, qd

    def _step_over(self, part, calm, t_stall, max_step, times, next_out):
        """Checked fixed steps over the round-off band of a singular pass (:mod:`solver.analysis.band_step`)
        from an accepted state before the step size collapsed at ``t_stall``.  ``calm`` (band_step.Calm)
        holds (h, t, q, q̇, q̈, σ_min) of the last steps taken at the step size of before the collapse.
        Only where σ_min extrapolates to 0 near t_stall (band_step.pass_time).  The crossing step, of
        one of Calm.crossing_sizes (shortest first), puts that pass (else t_stall)
        at the fraction BAND_AT, else 1 − BAND_AT, of it (between the RK4 stages); the steps before
        it fill the gap from the latest calm state before it with no output point recorded after it.
        Their output points recorded: (t, q, q̇, q̈ estimate, next output index) at the end, or None
        when every placement is refused (an error estimate above BAND_SLACK tolerances, a velocity
        jump, a failed solve)."""
        sizes, calm = (calm.crossing_sizes() if calm.states else None), calm.states
        if not calm:
            return None
        t_pass = pass_time(calm, t_stall)
        if t_pass is None:
            return None
        b = self.branches
        saved = (b.angle.copy(), b.rate.copy(), b.t)
        for h in sizes:
            for center in dict.fromkeys((t_pass, t_stall)):
                for at in (BAND_AT, 1.0 - BAND_AT):
                    crossed = self._cross(part, calm, center - at * h, h, max_step, times, next_out)
                    if crossed is not None:
                        return crossed
                    b.angle[:], b.rate[:], b.t = saved
        return None

    def _cross(self, part, calm, t_cross, h, max_step, times, next_out):
        """_step_over's steps for one placement: the crossing step [t_cross, t_cross + h]."""
        start = next((r for r in reversed(calm) if r[1] <= t_cross), None)
        if start is None or (next_out > 0 and times[next_out - 1] > start[1]) or t_cross + h > times[-1]:
            return None
        _, t, q, qd, accel, _ = start
        n = int(np.ceil((t_cross - t) / h - 1e-9))
        ends = [*(t + (t_cross - t) * k / n for k in range(1, n + 1)), t_cross + h]
        y = np.concatenate([part.z_of(q), part.zd_of(qd)])
        pieces, worst, f1 = [], 0.0, None
        try:
            for t1 in ends:
                if t1 - t > max_step:
                    return None
                y1, f1, f0, err = step_over(lambda tt, yy: self._rhs(part, tt, yy), t, y, t1 - t,
                                            self.s.rtol, self.s.atol, f_start=f1)
                q1, qd1, _ = self._state(part, t1, y1)
                if not err <= BAND_SLACK or velocity_jump(t1 - t, qd, accel, qd1) > ASSEMBLY_GUARD:
                    return None
                self.branches.accept(t1)
                pieces.append((t1, hermite(t, y, f0, t1, y1, f1)))
                worst = max(worst, err)
                accel, t, y, q, qd = (qd1 - qd) / (t1 - t), t1, y1, q1, qd1
        except PartitionError:
            return None
        for t1, interpolant in pieces:
            while next_out < len(times) and times[next_out] <= t1 + 1e-12 * max(1.0, abs(t1)):
                self._record_output(part, times[next_out], interpolant(times[next_out]))
                next_out += 1
            self.steps += 1
            self.rec.step(t1, h)
        self.rec.event(start[1], "step over", f"stepped over the round-off band of a singular configuration: "
                       f"{len(ends)} RK4 step(s) of {h:.3g} s to t = {t:.6g} s (error estimate up to {worst:.2g} "
                       "of the tolerance) after the step size collapsed to noise")
        self._remember(t, q, qd)
        return t, q, qd, accel, next_out

    def _restarted(self, part, hybrid, restarts, clean, reason, q, t):
        """(restarts, clean steps) after one more restart for ``reason``; too many in a row stop the
        run (or, hybrid on LU, ask for the switch to QR).  A :class:`Renewal` of a degraded
        partition came after accepted steps: it changes neither count."""
        if isinstance(reason, Renewal):
            return restarts, clean
        restarts += 1
        if restarts > STUCK_RESTARTS:
            if not (hybrid is not None and part.method == "lu"):
                raise SolverError(f"{part.method.upper()} partitioning cannot get past this configuration "
                                  f"({STUCK_RESTARTS} re-partitions in a row; last: {reason}); the mechanism "
                                  "is probably at a singular (e.g. flattened) position — try "
                                  "partitioning='qr' or 'hybrid'", time=t, kind="singular",
                                  elements=self._worst_owners(q, t))
            self._switch = hybrid.collapsed("repeated re-partitions near a singular configuration")
            restarts = 0
        return restarts, 0

    def _integrator(self, integrator, part, t, y0, t_end, max_step, first_step):
        """A new scipy integrator of the partition's ODE y = (z, ż) from (t, y0) to t_end."""
        jacobian = {"jac": lambda tt, y: self._jacobian(part, tt, y)} if integrator in IMPLICIT else {}
        return integrator_class(integrator)(lambda tt, y: self._rhs(part, tt, y), t, y0, t_end,
                                            rtol=self.s.rtol, atol=self.s.atol, max_step=max_step,
                                            first_step=first_step, **jacobian)

    def _dynamic_index3(self, part, q, qd, times):
        """Generalized-α on the full index-3 DAE (no partitioned ODE); outputs as usual."""
        t = times[0]
        qdd, lam = self._record(part, t, q, qd, part.method)
        h = self.s.max_step or min(1e-3, self.s.output_step)
        rows = part.rows
        lam_rows, *_ = np.linalg.lstsq(self.system.constraints(q, t).jac[rows].T,
                                       self.system.forces(q, qd, t) - self.system.mass(q) @ qdd, rcond=None)
        ga = GeneralizedAlpha(self.system, q, qd, qdd, lam_rows, t, h, rows, tol=max(1e-13, 1e-4 * self.s.rtol))
        for tout in times[1:]:
            while ga.t < tout - 1e-12 * max(1.0, tout):
                t_old = ga.t
                if not ga.step(min(tout, ga.t + h)):
                    raise SolverError("generalized-α Newton iterations do not converge even with a tiny step",
                                      time=ga.t, kind="step_collapse", elements=self._worst_owners(ga.q, ga.t))
                self.steps += 1
                self.rec.step(ga.t, ga.t - t_old)
            self._record(part, tout, ga.q, ga.consistent_velocities(), part.method)
            self._check_cancel(tout)
        self.rhs_count = ga.newton_iterations

    # ---- helpers --------------------------------------------------------------------------------
    def _rhs(self, part, t, y):
        self.rhs_count += 1
        self.t_eval = t
        f = part.dof
        if self._compiled is not None and self._solve_compiled(t, y, 2):
            return np.concatenate([y[f:], self._compiled.zdd])
        q, qd, _ = self._state(part, t, y)
        ev = self.system.constraints(q, t, qd, level=2)
        M = self.system.mass(q)
        Q = self._forces(q, qd, t)
        _, zdd, _ = self._accelerations(part, q, t, M, Q, ev)
        if not np.all(np.isfinite(zdd)):
            raise PartitionError("non-finite forces/accelerations")
        return np.concatenate([y[f:], zdd])

    def _forces(self, q, qd, t):
        """Q(q, q̇, t); NaN/inf (a force expression at a pole, a state that blew up) stops the run
        naming the force elements whose wrench is not finite."""
        Q = self.system.forces(q, qd, t)
        if np.all(np.isfinite(Q)):
            return Q
        frames, bad = self.system.force_frames(q, qd), []
        for element in self.system.force_elements:
            w = Wrenches(len(frames.r))
            element.apply(t, frames, w)
            if not (np.all(np.isfinite(w.F)) and np.all(np.isfinite(w.T))):
                bad.append(element.name)
        raise SolverError("non-finite forces/accelerations (NaN or inf in the applied forces)", time=t, elements=bad,
                          kind="diverged")

    def _accelerations(self, part, q, t, M, Q, ev):
        """part.accelerations; a singular reduced mass matrix NᵀMN stops the run naming the bodies
        that move in its null direction (e.g. a body with negligible inertia about a free axis)."""
        try:
            return part.accelerations(M, Q, ev.jac, ev.gamma)
        except np.linalg.LinAlgError:
            Jr = ev.jac[part.rows]
            N = part.V - part.U @ np.linalg.lstsq(Jr @ part.U, Jr @ part.V, rcond=None)[0]
            mode = np.linalg.eigh(N.T @ M @ N)[1][:, 0]
            frames = self.system.frames(q, N @ mode)
            speed = np.linalg.norm(frames.v, axis=1) + np.linalg.norm(frames.w, axis=1)
            raise SolverError("the mass matrix is singular: a free motion of the mechanism has (almost) no "
                              "mass or inertia — check the masses and inertias of these bodies", time=t, kind="mass",
                              elements=[b for b, v in zip(self.system.body_names, speed) if v > 0.1 * speed.max()]) from None

    def _jacobian(self, part, t, y):
        """∂f/∂y of the right-hand side by forward differences, steps h_k = JACOBIAN_STEP·max(1, |y_k|).
        scipy's own estimate (num_jac) starts from steps of √ε·atol on components near zero (1e-16
        for velocities at rest with atol 1e-8); on long chains in relative coordinates, whose
        Jacobians have large entries, its columns are then round-off and Newton stalls: 0.05 s of a
        50-link chain took BDF 8299 steps with it, 92 with this one (Radau 3458 → 75)."""
        f0 = self._rhs(part, t, y)
        J = np.empty((len(y), len(y)))
        for k in range(len(y)):
            yk = y.copy()
            yk[k] += JACOBIAN_STEP * max(1.0, abs(y[k]))
            J[:, k] = (self._rhs(part, t, yk) - f0) / (yk[k] - y[k])
        return J

    def _state(self, part, t, y):
        """Consistent (q, q̇, Φ_q) from the independent state y = [z, ż]."""
        f = part.dof
        if self._compiled is not None:
            self._solve_compiled(t, y, 1)
            return self.q_last, self._rate_last[0], self._compiled.jac_copy()
        self.branches.predict(t)
        q, ev = part.positions(self.system, y[:f], t, self._guess(t), tol=self.newton_tol)
        self._remember(t, q, part.velocities(ev.jac, ev.nu, y[f:]))
        self._check_branches(t)
        return q, self._rate_last[0], ev.jac

    def _solve_compiled(self, t, y, level):
        """The compiled solve at (t, y) (CompiledReduction.solve: False when the accelerations are not
        finite), its angles unwrapped against their prediction (:mod:`solver.formulations.branches`: raises
        BranchRefused when one departs too far); the solved state is remembered."""
        self.branches.predict(t)
        solved = self._compiled.solve(t, y, self._guess(t), level)
        self._remember(t, self._compiled.q.copy(), self._compiled.qd.copy())
        self._check_branches(t, level)
        return solved

    def _check_branches(self, t, level=1):
        """Branches.check after a solve at t (the state just remembered); below level 2 the force
        elements that unwrap an angle are evaluated first (a level-2 solve evaluated them)."""
        if self.branches.in_forces and level < 2:
            self.system.forces(self.q_last, self._rate_last[0], t)
        self.branches.check(t)

    def _guess(self, t):
        """Newton start for the positions at t: the last consistent q moved along its q̇ (a
        first-order predictor: one or two iterations instead of three or four)."""
        if self._rate_last is None:
            return self.q_last
        qd, t_last = self._rate_last
        return self.q_last + (t - t_last) * qd

    def _travel_cap(self, q, qd):
        """The largest next step from (q, q̇) that cannot carry a contact shape through another
        (:meth:`solver.contact.element.ContactSet.step_cap`); inf without contact elements."""
        if self._contact is None:
            return np.inf
        return self._contact.step_cap(self.system.frames(q, qd))

    def _remember(self, t, q, qd):
        self.q_last = q
        self._rate_last = (qd, t)

    def _record_output(self, part, t, y, store=True):
        """Record the output point at t of the integrated state y = [z, ż] (unless ``store`` is False);
        returns its q̈."""
        c = self._compiled
        if c is not None and self._solve_compiled(t, y, c.MULTIPLIERS if store else 2):
            qdd = c.qdd.copy()
            if store:             # λ from the solve; Φ_q only where the conditioning is not from C (no M: λ is given)
                conditioning = c.conditioning
                self._store(part, t, self.q_last, self._rate_last[0], qdd, c.phi,
                            c.jac if conditioning is None else None, None, c.Q, part.method, c.lam.copy(), conditioning)
            return qdd
        q, qd, _ = self._state(part, t, y)
        return self._record(part, t, q, qd, part.method, store=store)[0]

    def _record(self, part, t, q, qd, method, store=True):
        """(q̈, λ) at the consistent state (t, q, q̇); its row handed to the recorder when ``store``
        (else λ is None)."""
        self.branches.predict(t)
        ev = self.system.constraints(q, t, qd, level=2)
        M = self.system.mass(q)
        Q = self._forces(q, qd, t)
        qdd, _, _ = self._accelerations(part, q, t, M, Q, ev)
        return qdd, (self._store(part, t, q, qd, qdd, ev.phi, ev.jac, M, Q, method) if store else None)

    def _store(self, part, t, q, qd, qdd, phi, jac, M, Q, method, lam=None, conditioning=None):
        """Multipliers and conditioning (unless given), constraint violation of a consistent state;
        hand it to the recorder.  Returns λ."""
        if lam is None:
            lam = part.multipliers(jac, M, qdd, Q)
        if conditioning is None:
            conditioning = part.singularity(jac)
        violation = float(np.max(np.abs(phi))) if phi.size else 0.0
        self.rec.add(t, q, qd, qdd, lam, violation, conditioning, method, self.branches.tracked())
        if self.progress is not None:
            self.progress(t, self.s.t_end)
        return lam

    def _partition(self, method, q, t, reason):
        try:
            part = self._built_partition(method, q, t)
        except (np.linalg.LinAlgError, ValueError) as exc:
            raise SolverError(f"cannot partition the coordinates ({exc})", time=t, kind="singular",
                              elements=self._worst_owners(q, t)) from None
        # a sparse partition (many constraint rows) is solved in C by the band algebra where it applies,
        # else in Python (SuperLU: compiled_reduction is None)
        self._compiled = self._reduction(part) if part.dof else None
        self.rec.event(t, "partition", f"{method.upper()} partition, {part.dof} independent coordinates ({reason})"
                       + _algebra_note(part, self._compiled))
        if len(part.redundant) and not self.meta.get("redundant"):
            self.meta["redundant"] = [f"{self.system.equations[k].owner}: {self.system.equations[k].text}"
                                      for k in part.redundant]
            self.rec.event(t, "redundant", f"{len(part.redundant)} redundant constraint equation(s): "
                           + "; ".join(self.meta["redundant"]) + " — their reactions use minimum-norm multipliers")
            # which reaction components that leaves non-unique: the recorder, at the next output point
        self.q_last, self._rate_last = q, None
        return part

    def _built_partition(self, method, q, t):
        """build_partition at (q, t): the one a run on this workspace built at the same (method, q, t)
        when it has no constraint rows (an open tree without Euler parameters: U empty, V = I, nothing
        in it changes during a run) — every run of such a compiled model starts there (≈ 0.07 ms of the
        arm's run) — else a new one."""
        key = (method, q.tobytes(), float(t))
        kept = self.cache.get("partition")
        if kept is not None and kept[0] == key:
            return kept[1]
        part = build_partition(method, self.system, q, t)
        if not len(part.rows) and not len(part.redundant):
            self.cache["partition"] = (key, part)
        return part

    def _reduction(self, part):
        """The compiled reduction of ``part`` (None on the generic path): the one a run on this workspace
        made last (``Run.cache``) when it was for the same partition — the start of every run of a
        compiled model is — else a new one (≈ 0.1 ms of the arm's run).  Not kept with contact.c's
        elements or the band algebra, which hold state of a run of their own."""
        key = (part.method, part.sparse, part.q_ref.tobytes(), np.asarray(part.rows).tobytes(),   # (U follows from these)
               _matrix_bytes(part.V), self.newton_tol)
        kept = self.cache.get("reduction")
        if kept is not None and kept[0] == key:
            return kept[1]
        reduction = self.system.compiled_reduction(part, self.newton_tol)
        if reduction is not None and reduction.contact is None and reduction.band is None:
            self.cache["reduction"] = (key, reduction)
        return reduction

    def _worst_owners(self, q, t):
        """Elements owning the constraint rows that are violated or nearly dependent at q."""
        try:
            ev = self.system.constraints(q, t)
        except Exception:   # noqa: BLE001 — diagnosis only, never hides the original failure
            return ()
        if ev.phi.size == 0:
            return ()
        bad = list(np.nonzero(~np.isfinite(ev.phi) | (np.abs(ev.phi) > 1e-6))[0])
        if not bad and np.all(np.isfinite(ev.jac)):
            _, redundant = independent_rows(ev.jac, tol=1e-6)
            bad = list(redundant)
        return tuple(sorted({self.system.equations[k].owner for k in bad
                             if self.system.equations[k].kind != "normalization"}))

    def _check_cancel(self, t):
        """Stop the run when ``cancel()`` asks (Cancelled) or it reached settings.max_steps or
        max_wall_time (SolverError of kind "limit"); called between steps and output points."""
        if self.cancel is not None and self.cancel():
            raise Cancelled(time=t)
        run_limit(self, t)

    def _finish(self, wall0):
        self.rec.complete()               # post-processing of the last output rows belongs to the run
        self.meta["wall_time"] = _time.perf_counter() - wall0
        self.meta["steps"] = self.steps
        self.meta["rhs_evaluations"] = self.rhs_count


def _matrix_bytes(a):
    """The entries of a dense or scipy.sparse compressed matrix (a block partition's U, V) as bytes."""
    if hasattr(a, "indptr"):
        return b"|".join(np.ascontiguousarray(x).tobytes() for x in (a.data, a.indices, a.indptr))
    return a.tobytes()
