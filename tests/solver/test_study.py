"""Parameter studies (solver.study): paths, designs, templates, responses, the serial executor, a
real dask LocalCluster (2 worker processes) and the ``mbs study`` command."""
from __future__ import annotations

import csv
import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

import solver
from solver import cli
from solver.study import Parameter, Response, Study, apply_edit, load_study, run_study

SAMPLE = Path(__file__).resolve().parents[2] / "sample_models" / "slider_crank.mbs.json"
T_END = 0.05
RESPONSES = [Response("max_reaction_force", "crank_pin"), Response("peak_acceleration", "piston"),
             Response("final_energy_error"), Response("first_frequency")]
GRID = [Parameter("bodies.crank.mass", values=(0.45, 0.55, -1.0)),
        Parameter("bodies.crank.angular_velocity[2]", values=(10.0, 15.0, 20.0))]
NEGATIVE_MASS = "body 'crank'.mass: must be > 0, got -1"


@pytest.fixture(scope="module")
def crank():
    return solver.load_model(SAMPLE)


def grid_study(model, **kw):
    return Study(model, GRID, RESPONSES, fixed={"settings.t_end": T_END}, **kw)


def direct(model, mass, omega):
    """One variant the long way: edit a copy, simulate, linearize."""
    m = model.copy()
    m.set_field("crank", "mass", mass)
    m.set_field("crank", "angular_velocity", [0.0, 0.0, omega])
    m.settings.set("t_end", T_END)
    res = solver.simulate(m)
    return {"max_reaction_force(crank_pin)": float(np.max(np.linalg.norm(res.joint_reaction("crank_pin")[0], axis=1))),
            "peak_acceleration(piston)": float(np.max(np.linalg.norm(res.body_acceleration("piston"), axis=1))),
            "final_energy_error": float(abs(res.energy["total"][-1] - res.energy["total"][0])),
            "first_frequency": float(solver.linearize(m).frequencies_hz[0])}


# ---- definitions (no runs) ------------------------------------------------------------------------
def test_grid_zip_and_sampled_designs(crank):
    study = grid_study(crank)
    assert [tuple(v.values()) for v in study.variants()][:4] == [(0.45, 10.0), (0.45, 15.0), (0.45, 20.0),
                                                                (0.55, 10.0)]
    assert len(study.variants()) == 9
    assert study.edits(study.variants()[1]) == [("settings.t_end", T_END), ("bodies.crank.mass", 0.45),
                                                ("bodies.crank.angular_velocity[2]", 15.0)]
    zipped = Study(crank, GRID, RESPONSES, design="zip")
    assert [tuple(v.values()) for v in zipped.variants()] == [(0.45, 10.0), (0.55, 15.0), (-1.0, 20.0)]

    lhs = [Parameter("bodies.piston.mass", distribution=("uniform", 1.0, 3.0)),
           Parameter("settings.rtol", distribution=("normal", 1e-6, 1e-7))]
    a = Study(crank, lhs, RESPONSES, design="lhs", samples=8, seed=3).variants()
    assert a == Study(crank, lhs, RESPONSES, design="lhs", samples=8, seed=3).variants()
    strata = sorted(int((v["bodies.piston.mass"] - 1.0) / 2.0 * 8) for v in a)
    assert strata == list(range(8))                       # one sample in each eighth of [1, 3]
    mc = Study(crank, lhs, RESPONSES, design="monte_carlo", samples=200, seed=1).variants()
    rtol = np.array([v["settings.rtol"] for v in mc])
    assert abs(rtol.mean() - 1e-6) < 3e-8 and abs(rtol.std() - 1e-7) < 2e-8
    assert mc[0] != Study(crank, lhs, RESPONSES, design="monte_carlo", samples=200, seed=2).variants()[0]


def test_bad_definitions_list_every_problem(crank):
    with pytest.raises(solver.ModelError) as exc:
        Study(crank, [Parameter("bodies.crank.colour", values=(1,)), Parameter("bodies.wheel.mass", values=(1,)),
                      Parameter("omega", values=(1.0,)), Parameter("forces.x", values=())],
              [Response("max_reaction_force", "hinge")], templates={"bodies.crank.mass": "{omega}"})
    assert exc.value.problems == [
        "parameters[0].path: body: no field 'colour' (valid: name, mass, inertia, position, orientation, "
        "velocity, angular_velocity, geometry)",
        "parameters[1].path: 'bodies.wheel.mass': no element named 'wheel' in bodies (crank, rod, piston)",
        "parameters[3].path: 'forces.x': no element named '' in forces (none)",
        "parameters[3].values: must be a non-empty list (grid and zip designs)",
        "templates.bodies.crank.mass: 'bodies.crank.mass' is a float field; templates fill expression fields",
        "responses[0].target: max_reaction_force needs one of the model's joints (crank_pin, crank_rod, "
        "rod_piston, cylinder); got 'hinge'"]
    with pytest.raises(solver.ModelError, match="omega: a constant .* must appear as {omega} in a template"):
        Study(crank, [Parameter("omega", values=(1.0,))], RESPONSES)


def test_edits_go_through_the_validated_setters(crank):
    m = crank.copy()
    apply_edit(m, "bodies.crank.angular_velocity[2]", 12.5)
    apply_edit(m, "model.gravity[1]", -1.62)
    apply_edit(m, "settings.integrator", "rk")
    assert m.bodies["crank"].angular_velocity == [0.0, 0.0, 12.5]
    assert m.gravity.tolist() == [0.0, -1.62, 0.0] and m.settings.integrator == "rk"
    with pytest.raises(solver.ModelError, match=NEGATIVE_MASS):
        apply_edit(m, "bodies.crank.mass", -1.0)
    assert m.bodies["crank"].mass == crank.bodies["crank"].mass


# ---- runs -----------------------------------------------------------------------------------------
def test_template_constants_and_custom_responses(crank):
    """A driver expression "{omega}*t" varied by its constant equals writing the numbers in; a
    custom response is any function of (results, model)."""
    m = crank.copy()
    m.add_driver("D1", joint="crank_pin", expression="15*t")
    study = Study(m, [Parameter("omega", values=(10.0, 20.0))],
                  [Response("max_driver_force", "D1"), Response(name="crank speed", function=_final_crank_speed)],
                  fixed={"settings.t_end": T_END}, templates={"drivers.D1.expression": "{omega}*t"})
    assert study.edits({"omega": 10.0})[-1] == ("drivers.D1.expression", "10.0*t")
    res = run_study(study, executor="serial")
    expected = []
    for omega in (10.0, 20.0):
        v = m.copy()
        v.set_field("D1", "expression", f"{omega}*t")
        expected.append(float(np.max(np.abs(solver.simulate(v, t_end=T_END).driver_force("D1")))))
    assert res.response("max_driver_force(D1)").tolist() == expected
    assert expected[1] > expected[0] > 0.0
    assert res.response("crank speed") == pytest.approx([10.0, 20.0], rel=1e-9)


def _final_crank_speed(results, model):
    return results.body_angular_velocity("crank")[-1, 2]


def test_model_only_responses_need_no_run(crank, tmp_path):
    study = Study(crank, [Parameter("bodies.piston.mass", values=(1.0, 4.0))], [Response("first_frequency")],
                  results_dir=tmp_path)
    res = run_study(study, executor="serial")
    assert os.listdir(tmp_path) == []
    for v, mass in zip(res.variants, (1.0, 4.0)):
        edited = crank.copy()
        edited.set_field("piston", "mass", mass)
        assert v.responses == {"first_frequency": float(solver.linearize(edited).frequencies_hz[0])}


@pytest.mark.slow
def test_local_cluster_grid_equals_serial_runs(crank, tmp_path):
    """3×3 grid on a LocalCluster of 2 worker processes, reached by its scheduler address (as an
    existing cluster would be): bit-identical to the serial runs and to direct simulate calls; the
    negative-mass variants fail with the model's message, the others complete."""
    from distributed import LocalCluster
    study = grid_study(crank, results_dir=tmp_path / "runs")
    seen = []
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        par = run_study(study, executor=cluster.scheduler_address,
                        progress=lambda done, total, o: seen.append((done, total)))
    ser = run_study(grid_study(crank), executor="serial")
    assert seen == [(k, 9) for k in range(1, 10)]
    assert par.counts() == {"ok": 6, "failed": 3, "cancelled": 0}
    for p, s in zip(par.variants, ser.variants):
        assert (p.index, p.values, p.status, p.responses, p.message) == (s.index, s.values, s.status, s.responses,
                                                                        s.message)
    ok = [v for v in par.variants if v.status == "ok"]
    assert [v.index for v in ok] == [0, 1, 2, 3, 4, 5]
    for v in par.variants[6:]:
        assert (v.status, v.message, v.responses, v.results_file) == ("failed", NEGATIVE_MASS, {}, None)
    for v in (ok[0], ok[-1]):
        assert v.responses == direct(crank, *v.values.values())
    assert sorted(os.listdir(tmp_path / "runs")) == [f"variant-{v.index:04d}.h5" for v in ok]
    saved = solver.load_results(ok[0].results_file)
    assert saved.t[-1] == T_END and len(saved.t) == 11


@pytest.mark.slow
def test_cancel_stops_remaining_tasks(crank, tmp_path):
    """Cancelling after the first variant on the default executor (a LocalCluster of 2 processes
    started and closed by run_study): the rest are reported cancelled and most never run (no
    results file; a worker may still finish the variant it was running and the one queued on it)."""
    study = Study(crank, [Parameter("bodies.piston.mass", values=tuple(np.linspace(1.0, 3.0, 16).tolist()))],
                  RESPONSES[:1], fixed={"settings.t_end": 0.1}, results_dir=tmp_path)
    done = []
    res = run_study(study, executor="local", workers=2, progress=lambda n, total, o: done.append(o.index),
                    cancel=lambda: bool(done))
    counts = res.counts()
    assert counts["ok"] == len(done) >= 1                  # those reported in the first batch
    assert counts["cancelled"] == 16 - len(done) >= 8 and counts["failed"] == 0
    assert all(v.message == "cancelled" and not v.responses for v in res.variants if v.status == "cancelled")
    assert len(os.listdir(tmp_path)) <= 8


def test_serial_cancel_stops_inside_a_run(crank):
    calls = []
    res = run_study(grid_study(crank), executor="serial", progress=lambda *a: calls.append(a),
                    cancel=lambda: len(calls) >= 2)
    assert [v.status for v in res.variants] == ["ok", "ok"] + ["cancelled"] * 7


# ---- STUDY.json and the mbs command ---------------------------------------------------------------
def write_study(tmp_path, **changes):
    shutil.copy(SAMPLE, tmp_path / SAMPLE.name)          # a study's model is in the study's folder
    data = {"format": "mbs-studio-study", "version": 1, "model": SAMPLE.name,
            "design": {"type": "grid"}, "fixed": {"settings.t_end": T_END},
            "parameters": [{"path": "bodies.crank.mass", "values": [0.55, -1.0]},
                           {"path": "bodies.piston.mass", "range": [1.0, 3.0, 2]}],
            "responses": [{"kind": "max_reaction_force", "target": "crank_pin"}, "first_frequency"]}
    data.update(changes)
    path = tmp_path / "study.json"
    path.write_text(json.dumps(data))
    return path


def test_study_file_round_trip(tmp_path, crank):
    study = load_study(write_study(tmp_path))
    assert study.paths == ["bodies.crank.mass", "bodies.piston.mass"]
    assert [tuple(v.values()) for v in study.variants()] == [(0.55, 1.0), (0.55, 3.0), (-1.0, 1.0), (-1.0, 3.0)]
    again = study.to_dict(model_path=SAMPLE.name)
    assert again["parameters"][1] == {"path": "bodies.piston.mass", "values": [1.0, 3.0]}
    (tmp_path / "again.json").write_text(json.dumps(again))
    assert load_study(tmp_path / "again.json").variants() == study.variants()


def test_mbs_study_command(tmp_path, capsys):
    out = tmp_path / "results.csv"
    assert cli.main(["study", str(write_study(tmp_path)), "--serial", "--out", str(out)]) == 0
    rows = list(csv.DictReader(out.open()))
    assert [(r["status"], r["message"]) for r in rows] == [("ok", ""), ("ok", ""), ("failed", NEGATIVE_MASS),
                                                            ("failed", NEGATIVE_MASS)]
    m = solver.load_model(SAMPLE)
    m.set_field("piston", "mass", 3.0)
    m.set_field("crank", "mass", 0.55)
    assert float(rows[1]["first_frequency"]) == solver.linearize(m).frequencies_hz[0]
    err = capsys.readouterr().err
    assert f"mbs: variant 2 failed: {NEGATIVE_MASS}" in err
    assert "study: 4 variants: 2 ok, 2 failed, 0 cancelled" in err

    bad = write_study(tmp_path, responses=[{"kind": "peak_acceleration", "target": "wheel"}])
    assert cli.main(["study", str(bad), "--serial"]) == 2
    assert capsys.readouterr().err == ("mbs: error: responses[0].target: peak_acceleration needs one of the "
                                       "model's bodies (crank, rod, piston); got 'wheel'\n")
    assert cli.main(["study", str(write_study(tmp_path, parameters=[{"path": "bodies.crank.mass",
                                                                      "values": [-1.0]}])), "--serial"]) == 3


def test_bad_executor_is_refused(crank):
    with pytest.raises(solver.ModelError, match="executor: must be serial, local, a scheduler address"):
        run_study(grid_study(crank), executor="nowhere")
    with pytest.raises(solver.ModelError, match=r"parameters\[0\].path: must be a model path or a constant name"):
        Study(crank, [Parameter(None, values=(1.0,))], RESPONSES)
