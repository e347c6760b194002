"""Run segments of a dynamic analysis in compiled code (:mod:`solver.codegen.segment`).

When the model runs on generated kernels and nothing in its right-hand side needs Python (no
interpreted force elements; driver motions and force inputs compiled as C), the integrators
``"auto"`` and ``"rk"`` (alias ``"dop853"``; Dormand–Prince 8(5,3), DOP853), ``"rk45"`` (Dormand–Prince
5(4)), ``"adams"`` (variable-order Adams–Moulton, LSODA's non-stiff method: Petzold 1983) and ``"bdf"``
(variable-order BDF/NDF, Shampine & Reichelt 1997, as scipy's BDF) step inside C (dopri.c: Hairer's
step-size control and dense output; adams.c: LSODA's Nordsieck history, functional iteration, step,
order and switch rules; bdf.c: Newton with the LU of I − cJ, the Jacobian by differences of the
compiled right-hand side): one call advances the active partition
over many steps and output points.  Python only stores the rows, records the steps, reports
progress, checks cancel between calls and acts on what stopped a call exactly as ``Run._dynamic``
does in its own loop: a failed solve re-partitions (or is diagnosed by the generic path), a
partition that degraded re-partitions (``Partition.degraded``), a stalled step size
stops the run.  Near a singular pass the compiled loop places its steps so that no stage lands in
the pass's round-off band (codegen/band.c with the thresholds of :mod:`solver.analysis.band_step`;
the Python loop steps over the band once its step size has collapsed).  The multistep methods (BDF,
Adams) take no such rule (BAND_METHODS): their stages all lie at the step's end and their steps grow
only after q + 1 equal ones, so a step placed short before a pass made BDF creep towards it
(segment.c segment_start_bdf); they cross the passes as scipy's BDF and LSODA do in the Python loop.

Where the compiled loop does not apply, ``"rk45"``, ``"rk"``, ``"adams"`` and ``"bdf"`` are scipy's RK45,
DOP853, LSODA and BDF (the same methods) in the Python loop and ``"auto"`` is LSODA (``"adams"``);
``partitioning="hybrid"`` (its switch looks at every step) and sparse partitions (no compiled reduction)
use the Python loop.  Only ``"auto"`` and ``"adams"`` switch when the model is stiff (below).

Stiffness: on ``"auto"`` the compiled loop watches Hairer's estimate h·ρ of every accepted step
(dopri.c, dp_stiffness); when the step size is held at DOP853's stability boundary
(h·ρ just past it on many steps: step_rules.STIFF_*), the loop goes on from the accepted state with
BDF (bdf.c) and the call returns SEG_STIFF: :func:`run_segments` records the switch as an event
(:func:`stiff_event`) and calls again; later partitions of the run (re-partitions) start on BDF.  Models
with contact and joint stops switch too (issue #28).  BDF's steps keep the contact step cap
(ContactSet.step_cap, contact.c cc_step_cap: conservative advancement, applied by segment.c to every
accepted step and to BDF's first), so BDF steps over no engagement: the Geneva wheel indexes on
"auto" after its switch (tests/solver/test_contact_tunnelling.py).  The measurements behind the rule
(switched runs of geneva, box_on_ramp and the 10-sphere pile beside DOP853 to the end, errors of the
order of DOP853's own) are in docs/performance.md, "Contact and joint stops on auto".

On ``"adams"`` the compiled loop applies LSODA's own test (adams.c, Petzold 1983): after every accepted
step past the first 20, at orders ≤ 5, the step BDF could take with the same error against the step
Adams can take (its error and its stability region, h L ≤ σ(q) with L the corrector's Lipschitz
estimate); one step with a ratio ≥ 5 (step_rules.ADAMS_SWITCH) switches to bdf.c by the same
machinery (SEG_STIFF, the event names the ratio).  LSODA also switches back when the model turns
non-stiff; the compiled loop does not (as "auto").
"""
from __future__ import annotations

import contextlib
import functools

import numpy as np

from ..errors import SolverError
from ..partitioning.conditioning import tracked_conditioning
from ..partitioning.partition import PartitionError
from .band_step import BAND_CLEAR, BAND_PARTITIONS, BAND_TRIES, crossing_fraction
from .step_rules import (ADAMS_SWITCH, AMPLIFICATION_GROWTH, JACOBIAN_STEP, REPARTITION_RATIO, STAGE_RETRIES,
                         STALL_FRACTION, STIFF_BAND, STIFF_BOUNDARY, STIFF_INTEGRATOR, STIFF_RESET, STIFF_STEPS,
                         stall_error)

BAND_METHODS = ("dop853", "dopri5")      # the compiled methods that take the singular-pass rule (band.c)


def stiff_event(h, h_rho, method="dop853"):
    """The event of the switch on a stiff model: "switched to bdf (stiff: …)" with the last step's estimate
    (DOP853: h·ρ; Adams: LSODA's ratio of BDF's step to Adams') and step size."""
    if method == "adams":
        return f"switched to {STIFF_INTEGRATOR} (stiff: BDF's step ≈ {h_rho:.3g}× Adams', h ≈ {h:.3g} s)"
    return f"switched to {STIFF_INTEGRATOR} (stiff: h·ρ ≈ {h_rho:.3g} on {STIFF_STEPS} steps, h ≈ {h:.3g} s)"


def step_loop(run):
    """(integrator to use in the Python loop, (compiled method, address of the compiled time
    functions or None, stiffness test of CompiledSegments or None) or None when every step is in
    Python, an event message or None) for the run's settings and system."""
    from ..codegen.segment import COMPILED, FALLBACK, NAMES, time_library
    name = run.s.integrator
    if name not in COMPILED or name in run.python_loop:
        return FALLBACK.get(name, name), None, None
    system = run.system
    kernels = getattr(system, "kernels", None)
    if kernels is None:
        return FALLBACK[name], None, None           # the generic path (the codegen event says why)
    from ..codegen.contact import split_interpreted
    from ..codegen.derive import CodegenUnavailable
    why = None
    python_forces = split_interpreted(system)[3]
    if python_forces:
        why = "force elements evaluated in Python: " + ", ".join(f.name for f in python_forces)
    elif run.s.partitioning == "hybrid":
        why = "hybrid partitioning checks every step"
    else:
        try:
            time_fn = time_library(system)
        except (TypeError, CodegenUnavailable) as exc:
            why = f"the time functions are not compiled ({exc})"
    if why is not None:
        return FALLBACK[name], None, f"step loop in Python ({FALLBACK[name]}): {why}"
    method = COMPILED[name]
    stiffness = None
    # contact and joint stops switch too: BDF's steps keep the contact step cap (segment.c), so it steps over
    # no engagement, and bdf.c made the switched contact samples faster (module docstring)
    if name == "auto":
        boundary = STIFF_BOUNDARY[method]
        stiffness = (boundary, STIFF_BAND * boundary, STIFF_STEPS, STIFF_RESET)
    elif name == "adams":                  # LSODA's test: one step past the ratio switches (adams.c)
        stiffness = (ADAMS_SWITCH, np.inf, 1, 1)
    return FALLBACK[name], (method, time_fn, stiffness), f"step loop in C ({NAMES[method]})"


def run_segments(run, part, compiled, t, q, qd, times, next_out, window):
    """Integrate the active partition in C (``compiled``: (method, time functions) of
    :func:`step_loop`) from the consistent state (t, q, q̇) with output points ``times[next_out:]``.
    Returns (restart reason or None when the run is done, t, q, q̇ to
    re-partition at, next_out, steps taken).  Once "auto" has switched to BDF (``run.switched``) every
    later partition of the run steps with BDF."""
    from ..codegen.reduced import DYNAMICS_NOT_FINITE
    from ..codegen.segment import (BUDGET, DENSE, END, NOT_FINITE, OUTPUT, QUALITY, STAGE, STALL, STIFF,
                                   TOO_SMALL, CompiledSegments)
    from ..codegen.output import compiled_output
    s, c = run.s, run._compiled
    rows = len(part.rows) > 0
    bound = REPARTITION_RATIO * part.quality_ref if rows else 0.0
    growth_bound = AMPLIFICATION_GROWTH * part.amplification_ref if rows else np.inf
    method, time_fn, stiffness = compiled
    if run.switched:
        method, stiffness = STIFF_INTEGRATOR, None
    band = (_crossing(c.system.kernels.runtime, method), BAND_CLEAR, BAND_TRIES) \
        if part.method in BAND_PARTITIONS and method in BAND_METHODS else None    # BDF, Adams: none (module doc)
    seg = CompiledSegments(c, method, time_fn, times, next_out, s.rtol, s.atol, s.max_step, bound, growth_bound,
                           STALL_FRACTION * s.t_end, window, run.branches, STAGE_RETRIES, stiffness, band,
                           post=compiled_output(c.system) is None, jac_step=JACOBIAN_STEP, cache=run.cache,
                           structure=_structure(c, part, t, method, stiffness))
    seg.start(t, np.concatenate([part.z_of(q), part.zd_of(qd)]), q, qd)
    start, steps = (t, q, qd), 0
    while True:
        # rows post-processed in C go straight into the recorder's buffer when a call's rows fit in it
        seg.write_into(run.rec.reserve(seg.max_out) if seg.output is not None else None)
        first = seg.seg.next_out == 0          # this call writes the run's start row (segment.c write_start_row)
        status = seg.advance()
        run.rhs_count += seg.seg.rhs_count
        _store_rows(run, part, seg, first)
        step_t, step_h = seg.steps()
        run.rec.add_steps(step_t, step_h)
        steps += len(step_t)
        run.steps += len(step_t)
        t_acc, q_acc, qd_acc = seg.accepted() if seg.seg.started else start
        run._remember(t_acc, q_acc, qd_acc)
        done = seg.seg.next_out
        if status in (END, BUDGET):
            run._check_cancel(t_acc)
            if status == END:
                if t_acc > times[-1]:    # a step across a singular pass ended past t_end (segment.c): its last row
                    t_acc, q_acc, qd_acc = seg.last_row()
                    run._remember(t_acc, q_acc, qd_acc)
                return None, t_acc, q_acc, qd_acc, done, steps
            continue
        if status in (STAGE, DENSE):
            problem = c.failure(seg.seg.cg_status)
            if problem is None:            # the generic path diagnoses what the compiled one could not
                try:
                    run._rhs(part, *seg.failed())
                    problem = "the compiled accelerations are not finite"
                except PartitionError as exc:
                    problem = exc
            if status == STAGE:
                return str(problem), t_acc, q_acc, qd_acc, done, steps
            t0, q0, qd0 = seg.step_start()     # the step's output points: redo it from its start
            return f"in the dense output of the step to t = {t_acc:.6g} s: {problem}", t0, q0, qd0, done, steps
        if status == OUTPUT:
            tout, y = seg.failed()
            try:
                run._record_output(part, tout, y)
            except PartitionError as exc:      # the step's output points: redo it from the last state
                if not seg.seg.started:        # the run's start row (segment.c write_start_row): no step yet
                    raise
                t0, q0, qd0 = seg.step_start()
                return f"at the output point t = {tout:.6g} s: {exc}", t0, q0, qd0, done, steps
            seg.seg.next_out += 1
            run._check_cancel(tout)
            continue
        if status == QUALITY:
            _, _, jac = run._state(part, t_acc, seg.y.copy())
            renew = part.degraded(jac, REPARTITION_RATIO, AMPLIFICATION_GROWTH, seg.seg.sigma_acc,
                                  seg.seg.amplification_acc)
            if renew is None:
                continue
            return renew, t_acc, q_acc, qd_acc, done, steps
        if status == STIFF:                    # the loop goes on with BDF from the accepted state
            run.switched = True
            run.rec.event(t_acc, "integrator", stiff_event(seg.seg.stiff_h, seg.seg.stiff_h_rho, method))
            continue
        if status == STALL:
            raise stall_error(run, t_acc, t_acc - window[0][window[2]])
        if seg.seg.cg_status == DYNAMICS_NOT_FINITE:     # the steps shrank on stages with non-finite forces
            with contextlib.suppress(PartitionError):    # (a force with a pole): the generic path names them
                run._rhs(part, *seg.failed())
        message = {TOO_SMALL: "the step size fell to the round-off of t",
                   NOT_FINITE: "the error estimate is not finite (the state blew up)"}[status]
        raise SolverError(f"integration failed: {message}", time=t_acc, kind="integration",
                          elements=run._worst_owners(q_acc, t_acc))


@functools.lru_cache(maxsize=8)
def _crossing(runtime, method):
    """band_step.crossing_fraction of ``method``'s stage nodes in the runtime library (fixed per library
    and method: read once, not per run)."""
    from ..codegen.segment import stage_nodes
    return crossing_fraction(stage_nodes(runtime, method))


def _structure(reduction, part, t, method, stiffness):
    """The clusters of BDF's unknowns (codegen/bdf_structure.py) when the loop may step with BDF and the
    model has contact (its Jacobian's blocks follow the bodies in contact), else None (a dense J)."""
    from ..codegen.bdf_structure import clusters
    contact = reduction.contact
    if (method != STIFF_INTEGRATOR and stiffness is None) or contact is None or not contact.tables.ne + contact.tables.ng:
        return None
    return clusters(reduction.system, part, t)


def _store_rows(run, part, seg, first=False):
    """Hand the output points of the last call to the recorder (as Run._store does one by one); ``first``:
    the call wrote the run's start row first."""
    t, q, qd, qdd, lam, violation, jac, sigma = seg.rows()
    if not len(t):
        return
    # Partition.singularity of each row: in C from COMPILED_ESTIMATE_ROWS rows on the band (the sparse
    # estimates), else exact near singular configurations, carried along the solves' σ_min estimates between them
    # (solver.partitioning.conditioning); the start row on its own, exact, as the call's rows after it
    conditioning = seg.conditioning()
    if conditioning is None and jac is None:
        conditioning = np.ones(len(t))
    elif conditioning is None:
        parts = (slice(0, 1), slice(1, None)) if first and len(t) > 1 else (slice(None),)
        conditioning = np.concatenate([tracked_conditioning(jac[k], sigma[k]) for k in parts])
    end = float(t[-1])
    if seg.in_place:                      # written in the recorder's buffer (its potential energy added here)
        seg.post_rows()
        run.rec.commit_rows(len(t), conditioning, part.method)
    else:
        run.rec.add_rows(t, q, qd, qdd, lam, violation, conditioning, part.method, post=seg.post_rows())
    if run.progress is not None:
        run.progress(end, run.s.t_end)
