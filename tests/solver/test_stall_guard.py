"""The crawl rule (solver.analysis.step_rules.Progress) and the batch commands' default wall-time bound
(issue #32 item 6, issue #30): a run whose recent rate projects far more steps or wall time than its
bounds to reach t_end stops early with kind "crawl", saying why, its results so far kept — in the
compiled step loop and in the Python one."""
from __future__ import annotations

import json

import pytest

import solver
import solver.analysis.dynamics as dynamics
import solver.study as study_module
from solver.analysis import step_rules
from solver.analysis.step_rules import BATCH_WALL_TIME, CRAWL_FACTOR
from solver.cli import main

from test_hostile_limits import pendulum

T_END, OUTPUT_STEP, RTOL = 1e5, 100.0, 1e-10      # a swinging pendulum for a day: ~1e6 steps


def crawling(max_steps=None, max_wall_time=None, codegen="auto"):
    m = pendulum()
    for key, value in (("max_steps", max_steps), ("max_wall_time", max_wall_time)):
        if value is not None:
            m.settings.set(key, value)
    with pytest.raises(solver.SolverError) as exc:
        solver.simulate(m, t_end=T_END, output_step=OUTPUT_STEP, rtol=RTOL, codegen=codegen)
    return exc.value


@pytest.mark.parametrize("codegen", ["auto", "off"])
def test_a_run_projected_beyond_its_step_bound_stops_early_saying_why(monkeypatch, codegen):
    span = 200.0                              # simulated seconds of the reference run
    if codegen == "off":                     # the Python loop: ~1 ms a step, so a shorter window
        monkeypatch.setattr(step_rules, "CRAWL_MIN_STEPS", 150)
    exc = crawling(max_steps=3000, codegen=codegen)
    assert exc.kind == "crawl"
    assert exc.results is not None and exc.results.status == "failed" and len(exc.results) >= 1
    steps = exc.results.meta["steps"]
    assert steps < 3000                       # stopped on the projection, not at the bound
    message = str(exc)
    assert "the run is crawling" in message and f"more than {CRAWL_FACTOR:g} times settings.max_steps (3000)" in message
    assert "rtol 1e-10" in message and f"t_end = {T_END:g} s" in message
    # the rate it quotes is the run's own: steps per simulated second of the same run, measured
    rate = float(message.split("recent rate (")[1].split(" steps per simulated second")[0])
    if codegen == "off":                     # its window: from the start to where it stopped
        span = exc.time
    full = solver.simulate(pendulum(), t_end=span, output_step=span, rtol=RTOL, codegen=codegen)
    assert rate == pytest.approx(full.meta["steps"] / span, rel=0.15)


def test_the_step_projection_stops_only_runs_beyond_the_factor():
    m = pendulum()
    done = solver.simulate(m, t_end=2000.0, output_step=OUTPUT_STEP, rtol=RTOL)
    needed = done.meta["steps"]
    assert needed > 4 * step_rules.CRAWL_MIN_STEPS            # the rule sees a steady rate
    m.settings.set("max_steps", needed + 10)                  # projected within the bound: finishes
    assert solver.simulate(m, t_end=2000.0, output_step=OUTPUT_STEP, rtol=RTOL).meta["steps"] == needed
    m.settings.set("max_steps", int(needed / (1.25 * CRAWL_FACTOR)))    # projected 2.5 × the bound: stopped
    with pytest.raises(solver.SolverError) as exc:
        solver.simulate(m, t_end=2000.0, output_step=OUTPUT_STEP, rtol=RTOL)
    assert exc.value.kind == "crawl" and exc.value.results.meta["steps"] < m.settings.max_steps


def test_a_run_projected_beyond_its_wall_time_stops_long_before_it():
    m = pendulum()
    m.settings.set("max_wall_time", 1.0)      # the compiled loop needs ~60 s here for 10⁶ simulated s
    with pytest.raises(solver.SolverError) as exc:
        solver.simulate(m, t_end=10 * T_END, output_step=100 * OUTPUT_STEP, rtol=RTOL)
    assert exc.value.kind == "crawl"
    assert f"more than {CRAWL_FACTOR:g} times settings.max_wall_time (1 s)" in str(exc.value)
    assert exc.value.results.meta["wall_time"] < 0.5
    assert exc.value.results.status == "failed" and len(exc.value.results) >= 1


# ---- the batch commands' default bound ------------------------------------------------------------
def captured_wall_time(monkeypatch, module, name):
    seen = []

    def fake(model, *args, **kwargs):
        seen.append(getattr(model, "model", model).settings.max_wall_time)
        raise KeyboardInterrupt           # stop here: the command exits 130
    monkeypatch.setattr(module, name, fake)
    return seen


@pytest.mark.parametrize("saved, option, expected", [
    (None, None, BATCH_WALL_TIME), (50.0, None, 50.0), (50.0, "20", 20.0), (None, "none", None), (50.0, "None", None)])
def test_mbs_run_and_study_bound_the_wall_time_by_default(tmp_path, monkeypatch, saved, option, expected):
    m = pendulum()
    if saved is not None:
        m.settings.set("max_wall_time", saved)
    path = tmp_path / "m.mbs.json"
    m.save(path)
    seen = captured_wall_time(monkeypatch, dynamics, "simulate")
    assert main(["run", str(path), "--quiet"] + (["--max-wall-time", option] if option else [])) == 130
    study = tmp_path / "study.json"
    study.write_text(json.dumps({"format": "mbs-studio-study", "version": 1, "model": path.name,
                                 "design": {"type": "grid"},
                                 "parameters": [{"path": "bodies.bob.mass", "values": [1.0]}],
                                 "responses": ["first_frequency"]}))
    ran = captured_wall_time(monkeypatch, study_module, "run_study")
    assert main(["study", str(study), "--serial"] + (["--max-wall-time", option] if option else [])) == 130
    assert seen == ran == [expected]


@pytest.mark.parametrize("value", ["inf", "nan", "0", "-3", "soon"])
def test_a_bad_wall_time_option_is_refused(tmp_path, capsys, value):
    path = tmp_path / "m.mbs.json"
    pendulum().save(path)
    assert main(["run", str(path), "--quiet", "--max-wall-time", value]) == 2
    assert "--max-wall-time" in capsys.readouterr().err



def test_a_start_up_transient_is_not_projected_over_the_run():
    """The rule as numbers: 1000 steps through an impact (1e-7 s each) project 1e8 steps for a 10-s run,
    beyond 2 × max_steps = 2e6, but the run has used less than CRAWL_MIN_FRACTION of max_steps: it goes
    on, and once its recent steps are 1e-3 s it never projects beyond the bound; the same slow rate
    sustained past that fraction stops it."""
    s = solver.Settings()
    s.set("t_end", 10.0)
    s.set("max_steps", 1_000_000)
    rule = step_rules.Progress(s, 0.0)
    t = 0.0
    for steps in range(1, 1001):
        t += 1e-7
        rule.check(t, steps, 1e-3 * steps)                 # a transient: no stop
    for steps in range(1001, 12_001):
        t += 1e-3
        rule.check(t, steps, 1e-3 * steps)                 # the rate recovers: ~1e4 steps in all
    slow = step_rules.Progress(s, 0.0)
    t, stopped = 0.0, None
    for steps in range(1, 60_001):
        t += 1e-7
        try:
            slow.check(t, steps, 1e-3 * steps)
        except solver.SolverError as exc:
            stopped = (steps, exc.kind)
            break
    assert stopped == (int(step_rules.CRAWL_MIN_FRACTION * 1_000_000), "crawl")
