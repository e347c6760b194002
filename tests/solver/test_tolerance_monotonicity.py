"""Tolerance monotonicity (issue #27, item 4): asking for more accuracy never fails where less
succeeds, and never gives a larger error (bench/tolerance_grid.py prints the whole grid).

The rigid singular four-bar (a rhombus: crank = coupler = rocker = ground = 1 m, hybrid LU/QR
partitioning, LSODA, its saved settings) passes flattened positions where the parallelogram branch
crosses the others: at the first one (t ≈ 0.16 s) B coincides with D, and the "deltoid" branch —
crank at rest, coupler and rocker swinging together about D — meets it.  At rtol 1e-7 a step's
position Newton landed on that branch: the crank stopped dead, the run ended 0.38 m off with status
"ok" (the energy-drift warning only).  branches.velocity_jump refuses such a step (the crank's
velocity jumped by half the velocity scale in one step) and the shorter retry keeps the
velocity-consistent branch.

The flexible singular four-bar stopped with "step collapse" at its flattened passes (t ≈ 0.176 s,
0.973 s) at rtol ≤ 1e-9: within ~1e-5 s of the pass the right-hand side is round-off amplified by
1/σ_min(Φ_q U) (z̈ ~ 6e6 at σ_min 2e-7), the error estimate sees it and the steps fall erratically to
1e-15 s.  The Python step loop now steps over that band (solver.analysis.band_step: fixed RK4 steps
of the pre-collapse size from a state before the band, the pass between the stages, accepted on a
step-doubling error estimate).  At rtol 1e-12 the collapse lasts longer (~1e4 steps) and the band is
wider: the calm reference step is kept for a span of simulated time (band_step.Calm), and the
crossing tries longer steps (Calm.crossing_sizes) until its stages clear the band.

The compiled step loop (DOP853 in segment.c, the default path of the four-bar rows) keeps the stages
of its steps out of the band instead (codegen/band.c): it predicts the pass from σ_min of its last
two accepted steps and places the pass at band_step.crossing_fraction of the crossing step, the
middle of the widest gap between DOP853's stage nodes.  Without it a stage landed within 4e-4 s of
a pass of the row N = 40 at rtol 1e-10 and the run ended 1.7e-6 m off (35× the rtol 1e-9 error).
"""
from pathlib import Path

import numpy as np
import pytest

import solver
from solver.analysis.band_step import (BAND_AT, BAND_LADDER, BAND_MEMORY, RK4_DOUBLING_NODES, Calm, crossing_fraction,
                                       pass_time, step_over)
from solver.formulations.branches import ASSEMBLY_GUARD, velocity_jump

SAMPLE = Path(__file__).resolve().parents[2] / "sample_models" / "fourbar_singular_rigid.mbs.json"
FLEXIBLE = SAMPLE.with_name("fourbar_singular_flexible.mbs.json")


def _final_positions(res):
    return np.array([res.body_position(b) for b in res.body_names])


def _drift(res):
    e = res.energy["total"]
    return float(np.max(np.abs(e - e[0])) / np.max(res.energy["kinetic"]))


def test_velocity_jump_tells_a_branch_change_from_a_resolved_step():
    """A pendulum-like motion q̇ = (cos t, −sin t) sampled at h = 0.01: the change over a step is
    within twice h |q̈| (velocity_jump 0); the crank stopping dead in one step (the deltoid branch)
    jumps by its whole velocity, far beyond ASSEMBLY_GUARD; a motion at rest jumps 0."""
    h, t = 0.01, 0.3
    qd0, a0 = np.array([np.cos(t), -np.sin(t)]), np.array([-np.sin(t), -np.cos(t)])
    qd1 = np.array([np.cos(t + h), -np.sin(t + h)])
    assert velocity_jump(h, qd0, a0, qd1) == 0.0
    stopped = np.array([0.0, qd1[1]])
    assert velocity_jump(h, qd0, a0, stopped) > 2 * ASSEMBLY_GUARD
    assert velocity_jump(h, np.zeros(2), np.zeros(2), np.zeros(2)) == 0.0


def _grid(model, rtols):
    return {rtol: solver.simulate(model, rtol=rtol, atol=rtol / 100) for rtol in rtols}


def _assert_monotone(runs, slack=3.0, floor=1e-7):
    """Every run completed; the error against the tightest one does not grow as rtol tightens
    (up to ``slack`` × the looser run's error, and the reference's own accuracy ``floor``, m)."""
    rtols = sorted(runs, reverse=True)
    ref = _final_positions(runs[rtols[-1]])
    errors = [float(np.max(np.abs(_final_positions(runs[r]) - ref))) for r in rtols[:-1]]
    for looser, tighter in zip(errors, errors[1:]):
        assert tighter <= max(slack * looser, floor), errors
    return errors


def test_the_rigid_singular_fourbar_keeps_its_branch_at_rtol_1e_7():
    """rtol 1e-6 and 1e-7 against 1e-12 (measured 9.5e-6 and 2.7e-6 m; the 1e-7 run used to end
    0.38 m off), energy kept to 1e-4 of the kinetic scale (measured 4.9e-6, 1.5e-6; it was 0.18)."""
    runs = _grid(solver.load_model(SAMPLE), (1e-6, 1e-7, 1e-12))
    errors = _assert_monotone(runs)
    assert max(errors) < 1e-4
    assert all(_drift(r) < 1e-4 for r in runs.values())
    assert not any("drifted" in e["message"] for r in runs.values() for e in r.events)


@pytest.mark.sweep
def test_the_rigid_singular_fourbar_over_the_whole_grid():
    """rtol 1e-6 … 1e-12: every run completes, errors against 1e-12 non-increasing (measured 9.5e-6,
    2.7e-6, 1.2e-7, 1.2e-8, 1.4e-9, 8.1e-11 m: about rtol × 10 once the position Newton's bound
    follows atol, partition.position_tolerance), energy drift below 1e-4 (measured 4.9e-6 … 6.9e-12)."""
    runs = _grid(solver.load_model(SAMPLE), (1e-6, 1e-7, 1e-8, 1e-9, 1e-10, 1e-11, 1e-12))
    assert max(_assert_monotone(runs)) < 1e-4
    assert all(_drift(r) < 1e-4 for r in runs.values())


@pytest.mark.sweep
def test_the_fourbar_row_over_the_whole_grid():
    """The four-bar row N = 10 (relative formulation, 5 s) against its exact 1-DOF motion at rtol
    1e-6 … 1e-12: every run completes — rtol 1e-12 used to stop ('singular' at t = 0: its position
    Newton asked for atol / 10 = 1e-15, below the model's round-off) — and the error does not grow by
    more than the factor 3 of run-to-run noise as rtol tightens (measured 2.3e-4, 3.1e-5, 4.6e-7,
    2.5e-8, 1.2e-8, 1.6e-8, 1.9e-8 m with the compiled loop's band rule — flat from 1e-10 on at the
    round-off floor of its passes, ROW_FLOOR; before it 4.7e-3, 6.9e-6, 6.4e-7, 2.5e-7, 4.7e-7, 3.5e-8,
    3.8e-9)."""
    from tools.fourbar_row import position_error
    from tools.scale_models import fourbar_row
    model = fourbar_row(10)
    errors = [position_error(solver.simulate(model, rtol=rtol, atol=rtol / 100, t_end=5.0), 10)
              for rtol in (1e-6, 1e-7, 1e-8, 1e-9, 1e-10, 1e-11, 1e-12)]
    for looser, tighter in zip(errors, errors[1:]):
        assert tighter <= 3.0 * looser, errors
    assert errors[-1] < 1e-7


def test_the_step_over_is_rk4_with_a_richardson_estimate():
    """y'' = −y from (1, 0) over h = 0.1: the two-half-step RK4 result with its Richardson
    correction is within h⁶/1000 of (cos h, −sin h) (RK4 error ~ h⁵/120 per step, the correction
    removes its leading term), and its error estimate |y_{h/2,h/2} − y_h| / 15 is the size of
    that leading term (h⁵/(120·16) ≈ 5e-9, 1 = the tolerance 1e-10 here: 20-100)."""
    h = 0.1
    end, f_end, f_start, err = step_over(lambda t, y: np.array([y[1], -y[0]]), 0.0, np.array([1.0, 0.0]), h,
                                         0.0, 1e-10)
    assert np.max(np.abs(end - [np.cos(h), -np.sin(h)])) < h**6 / 1000
    assert np.allclose(f_start, [0.0, -1.0]) and np.allclose(f_end, [end[1], -end[0]])
    assert 5 < err < 500


def test_pass_time_extrapolates_sigma_min_to_zero():
    """σ_min = 2 (0.5 − t): from (0.3, 0.4) and (0.4, 0.2) the pass is at 0.5; a σ_min that grows,
    no estimate (the generic path), or a pass far beyond the stall: None (no step over)."""
    calm = [(0.1, 0.3, None, None, None, 0.4), (0.1, 0.4, None, None, None, 0.2)]
    assert pass_time(calm, 0.48) == pytest.approx(0.5)
    assert pass_time(calm[::-1], 0.48) is None
    assert pass_time([(0.1, 0.4, None, None, None, None)] * 2, 0.45) is None
    assert pass_time(calm, 0.42) is None


def test_the_flexible_singular_fourbar_passes_at_rtol_1e_10():
    """Its saved settings (hybrid, LSODA, compiled reduction) to t = 0.3 s over the first flattened
    pass (t ≈ 0.176 s): at rtol 1e-10 it used to stop with "step collapse"; it now steps over the
    band (one logged event) and ends within 1e-9 m of the rtol 1e-8 run (measured 2.9e-11), the
    energy of this conservative model kept to 1e-8 of the kinetic scale (measured 1.9e-11)."""
    model = solver.load_model(FLEXIBLE)
    tight = solver.simulate(model, rtol=1e-10, atol=1e-12, t_end=0.3)
    loose = solver.simulate(model, rtol=1e-8, atol=1e-10, t_end=0.3)
    assert [e["kind"] for e in tight.events].count("step over") >= 1
    assert np.max(np.abs(_final_positions(tight)[:, -1] - _final_positions(loose)[:, -1])) < 1e-9
    assert _drift(tight) < 1e-8


@pytest.mark.sweep
def test_the_flexible_singular_fourbar_over_the_grid():
    """rtol 1e-6 … 1e-12 over the whole 2 s: every run completes (1e-9 … 1e-12 used to stop at
    0.176 s or 0.973 s), errors against 1e-12 non-increasing (measured at 1e-9 … 1e-11: 7.9e-10,
    2.2e-10, 1.2e-12 m), energy drift below 1e-6 and below 1e-10 at rtol 1e-12 (measured 4.1e-9,
    3.1e-10, 5.2e-11, 4.8e-12 at 1e-9 … 1e-12)."""
    runs = _grid(solver.load_model(FLEXIBLE), (1e-6, 1e-7, 1e-8, 1e-9, 1e-10, 1e-11, 1e-12))
    assert max(_assert_monotone(runs)) < 1e-6
    assert all(_drift(r) < 1e-6 for r in runs.values())
    assert _drift(runs[1e-12]) < 1e-10


def test_the_calm_reference_outlasts_a_collapse_but_not_a_slower_motion():
    """Steps of 4e-4 s, then 20,000 erratic steps of 1e-9 s (a collapse: 2e-5 s of simulated time,
    far below BAND_MEMORY reference steps): the calm states stay those of before it, and the step
    over tries the last calm size doubled up to BAND_LADDER times it.  A motion that goes on with
    steps of 2e-5 s for longer than BAND_MEMORY × 4e-4 s makes them calm again."""
    calm, t = Calm(), 0.0
    for _ in range(100):
        t += 4e-4
        calm.add(4e-4, t, None, None, None, 1.0)
    for _ in range(20_000):
        t += 1e-9
        calm.add(1e-9, t, None, None, None, 1.0)
    assert calm.states[-1][0] == 4e-4 and calm.states[-1][1] == pytest.approx(100 * 4e-4)
    sizes = calm.crossing_sizes()
    assert sizes[0] == 4e-4 and sizes[-1] == pytest.approx(BAND_LADDER * 4e-4) and len(sizes) == 5
    for _ in range(int(BAND_MEMORY * 4e-4 / 2e-5) + 2):
        t += 2e-5
        calm.add(2e-5, t, None, None, None, 1.0)
    assert calm.states[-1][0] == 2e-5 and calm.states[-1][1] == pytest.approx(t)


def test_the_crossing_fraction_is_the_middle_of_the_widest_gap_between_stages():
    """RK4 with step doubling (nodes 0, ¼, ½, ¾, 1): 3/8, the Python step over's BAND_AT; DOP853 with
    its dense-output stages (read from the compiled tableau): 7/15, between the nodes 1/3 and 0.6,
    2/15 of the step from both; DOPRI5: 0.55, between 0.3 and 0.8."""
    from solver.codegen.build import runtime_library
    from solver.codegen.segment import stage_nodes
    assert crossing_fraction(RK4_DOUBLING_NODES) == BAND_AT == 0.375
    runtime = runtime_library()
    dop853 = stage_nodes(runtime, "dop853")
    assert len(dop853) == 16
    at = crossing_fraction(dop853)
    assert at == pytest.approx(7 / 15, abs=1e-15)
    assert min(abs(at - c) for c in dop853) == pytest.approx(2 / 15, abs=1e-15)
    assert crossing_fraction(stage_nodes(runtime, "dopri5")) == pytest.approx(0.55, abs=1e-15)


def _row_errors(n, rtols, t_end=5.0):
    from tools.fourbar_row import position_error
    from tools.scale_models import fourbar_row
    model = fourbar_row(n)
    runs = {rtol: solver.simulate(model, rtol=rtol, atol=rtol / 100, t_end=t_end) for rtol in rtols}
    return runs, [position_error(runs[rtol], n) for rtol in rtols]


ROW_FLOOR = 2e-8   # m: the round-off floor of the row's 5 s (each pass leaves ~1e-10 of the kinetic energy, which
                   # this near-separatrix motion turns into ~1e-8 m of phase by 5 s; measured 1.0e-8 for N = 1)


@pytest.mark.numerics
def test_the_compiled_loop_places_the_passes_of_the_fourbar_row_between_its_stages():
    """The four-bar row N = 1 (default path: relative, QR, DOP853 in C) at rtol 1e-9 … 1e-12 against
    its exact motion over 5 s and five singular passes: each pass lies inside a step at a fraction
    of it within DOP853's widest gap between stages, (1/3, 0.6) (measured 0.42 … 0.50 at rtol 1e-10,
    1e-12), and the error does not grow by more than 3× as rtol tightens, down to ROW_FLOOR (measured
    4.3e-8, 2.7e-9, 5.7e-9, 1.0e-8 m; with the stages left where DOP853 puts them: 7.0e-8, 7.0e-9,
    7.8e-8, 1.8e-7).  Energy kept to 1e-9 of the kinetic scale at rtol 1e-12 (measured 1.3e-10; 1.6e-9
    before)."""
    from tools.fourbar_row import pass_times
    rtols = (1e-9, 1e-10, 1e-11, 1e-12)
    runs, errors = _row_errors(1, rtols)
    for looser, tighter in zip(errors, errors[1:]):
        assert tighter <= max(3.0 * looser, ROW_FLOOR), errors
    assert _drift(runs[1e-12]) < 1e-9
    for rtol in (1e-10, 1e-12):
        assert "step loop in C (Dormand–Prince 8(5,3))" in [e["message"] for e in runs[rtol].events]
        ends, sizes = runs[rtol].step_sizes
        for tp in pass_times(1, 5.0):
            k = np.searchsorted(ends, tp)
            assert 1 / 3 + 0.02 < (tp - (ends[k] - sizes[k])) / sizes[k] < 0.6 - 0.02, (rtol, tp)


@pytest.mark.numerics
def test_steps_capped_far_below_the_controllers_still_keep_the_row_on_its_branch():
    """max_step=0.005 caps DOP853 far below its own steps near the passes (0.03 … 0.05 s), so a
    crossing step puts its nearest stages within 7e-4 s of the pass.  The band's width comes from the
    capped step (band.c: from the uncapped proposal every placed attempt was refused, 25 refusals,
    3.7e-5 m).  The row N = 1 at rtol 1e-8 completes within 2e-4 m of the exact motion (measured
    9.2e-7; with the stages left where DOP853 puts them it ended 1.45 m off with status "ok": the loop
    folded at a pass)."""
    from tools.fourbar_row import position_error
    from tools.scale_models import fourbar_row
    res = solver.simulate(fourbar_row(1), rtol=1e-8, atol=1e-10, t_end=5.0, max_step=0.005)
    assert res.status == "ok"
    assert position_error(res, 1) < 2e-4


@pytest.mark.sweep
def test_the_forty_loop_row_is_monotone_on_the_compiled_loop():
    """N = 40 at rtol 1e-6 … 1e-12 over 5 s: every run completes and the error does not grow by more
    than 3× as rtol tightens (measured 1.8e-4, 1.1e-5, 7.7e-7, 3.6e-8, 5.7e-9, 3.8e-9, 6.5e-10 m; rtol
    1e-10 was 1.7e-6 and 1e-12 5.7e-9 before the compiled loop kept its stages out of the band)."""
    _, errors = _row_errors(40, (1e-6, 1e-7, 1e-8, 1e-9, 1e-10, 1e-11, 1e-12))
    for looser, tighter in zip(errors, errors[1:]):
        assert tighter <= 3.0 * looser, errors
    assert errors[-1] < 1e-8
