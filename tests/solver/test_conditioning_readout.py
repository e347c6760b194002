"""The conditioning read-out of the compiled step loop (solver/partitioning/conditioning.py): exact
σ_min / σ_max of Φ_q[rows] where the run nears a singular configuration, carried along the solves'
σ_min estimates elsewhere — checked against a fresh SVD at every output point of a run through
singular positions, and the rule that picks the exact rows."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import solver
from solver.codegen.build import compiler_path
from solver.partitioning.choose import build_partition
from solver.partitioning.conditioning import TRACK_FACTOR, exact_rows

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tools.fourbar_row import exact_angle  # noqa: E402
from tools.scale_models import fourbar_row  # noqa: E402

needs_compiler = pytest.mark.skipif(not compiler_path(), reason="no C compiler")


def test_exact_rows_at_the_start_the_dips_and_factor_moves():
    est = np.array([1.0, 0.9, 0.6, 0.45, 0.2, 0.05, 0.01, 0.04, 0.3, 0.5, 0.55, 0.6, 0.62, 0.61])
    exact = exact_rows(est)
    assert exact[0]                                     # the first row of a call
    assert exact[5] and exact[6] and exact[7]           # the dip (a local minimum) and its neighbours
    assert exact[3] and exact[4]                        # 0.45 is below 1/2 of 1.0; 0.2 below 1/2 of 0.45
    assert exact[8]                                     # up by more than TRACK_FACTOR from the dip
    assert exact[-1]                                    # still falling at the last row
    assert not exact[1] and not exact[2] and not exact[10]
    assert exact_rows(np.array([1.0, 0.0, np.nan, 1.0])).tolist() == [True, True, True, True]
    assert exact_rows(np.zeros(0)).tolist() == []


@needs_compiler
def test_the_read_out_through_singular_positions_equals_the_svd_where_it_matters():
    """Four-bar row N = 3, relative formulation, compiled loop, 4 s (two horizontal passes, where
    Φ_q turns singular): the smallest values and every value below 1/5 of the run's median are
    the exact SVD ones (round-off); the others lie within TRACK_FACTOR of it."""
    theta, _ = exact_angle(3, np.array([0.0, 4.0]))
    assert theta[1] - theta[0] > 2 * np.pi              # at least two passes
    compiled = solver.compile_model(fourbar_row(3), codegen="on")
    res = solver.simulate(compiled, t_end=4.0, output_step=0.01)
    assert res.status == "ok"
    assert "step loop in C" in " ".join(e["message"] for e in res.events)
    system = compiled.system.workspace()
    rows = build_partition("qr", system, res.coordinates[0], 0.0).rows      # the independent rows
    exact = []
    for t, q in zip(res.t, res.coordinates):
        sv = np.linalg.svd(system.constraints(q, t).jac[rows], compute_uv=False)
        exact.append(sv[-1] / sv[0])
    exact, got = np.array(exact), np.asarray(res.conditioning)
    assert exact.min() < 0.03 * np.median(exact)        # the passes are near singular
    # the passes: local minima of the exact read-out well below its median
    inner = (exact[1:-1] <= exact[:-2]) & (exact[1:-1] <= exact[2:]) & (exact[1:-1] < 0.2 * np.median(exact))
    passes = np.flatnonzero(inner) + 1
    assert len(passes) >= 2
    np.testing.assert_allclose(got[passes], exact[passes], rtol=1e-8)
    assert np.argmin(got) == np.argmin(exact)
    ratio = got / exact
    assert np.all((ratio >= 1 / TRACK_FACTOR) & (ratio <= TRACK_FACTOR))


def test_a_run_through_a_singular_configuration_warns_with_its_time_and_conditioning():
    """Fuzz seed 1124's open warning: nothing told a user that a run passed so near a singular
    configuration that its result depends on rtol.  Four-bar row N = 1 (default path), output rows
    every pass time t_p (the first horizontal pass, from the exact motion): the row at t_p reads a
    conditioning of round-off (measured 3.7e-9), below CONDITIONING_WARNING, and the run's events hold
    one warning naming that time and value; the same run with rows at 0.95 t_p steps (their smallest
    conditioning 0.15) has none."""
    from solver.analysis.recording import CONDITIONING_WARNING
    from tools.fourbar_row import pass_times
    tp = float(pass_times(1, 2.0)[0])

    def warnings(output_step):
        res = solver.simulate(fourbar_row(1), t_end=2 * output_step, output_step=output_step)
        assert res.status == "ok"
        return res, [e for e in res.events if e["kind"] == "warning" and "singular configuration" in e["message"]]

    res, [event] = warnings(tp)
    k = int(np.argmin(res.conditioning))
    assert res.conditioning[k] < CONDITIONING_WARNING and event["time"] == pytest.approx(tp, abs=1e-9)
    assert f"{res.conditioning[k]:.2g}" in event["message"] and f"t = {tp:.6g} s" in event["message"]
    res, none = warnings(0.95 * tp)
    assert not none and np.min(res.conditioning) > CONDITIONING_WARNING


def test_rows_written_in_place_by_the_compiled_loop_warn_too():
    """The compiled loop writes longer runs' rows straight into the recorder's buffer
    (Recorder.commit_rows), which did not follow their conditioning: the four-bar row N = 1 with rows
    every t_p / 100 to 1 s (143 rows, one on the first pass t_p, conditioning 3.2e-9) had no warning
    (with t_p / 60, 86 rows, it had: not written in place).  Now it warns, naming t_p."""
    from tools.fourbar_row import pass_times
    tp = float(pass_times(1, 2.0)[0])
    res = solver.simulate(fourbar_row(1), t_end=1.0, output_step=tp / 100)
    events = [e for e in res.events if e["kind"] == "warning" and "singular configuration" in e["message"]]
    assert len(events) == 1 and events[0]["time"] == pytest.approx(tp, abs=1e-9)
