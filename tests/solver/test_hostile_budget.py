"""Work amplification by small files (issue 30, item 2): a whole-file budget of expression cost,
output rows counted before anything is allocated, flexible bodies and modes files bounded, and a
run's steps and wall time limited by settings (exit 3, partial results kept)."""
from __future__ import annotations

import json
import os
import time
import zipfile

import numpy as np
import pytest

import solver
from solver.cli import main
from solver.expression_budget import MAX_MODEL_EXPRESSION_NODES
from solver.expressions import parse_expression
from solver.flexible.modes_file import export_modes
from solver.formulations.cartesian import CartesianSystem
from solver.model.project_format import project_to_dict

from test_hostile_limits import beam, pendulum, write_npz_headers

HEAVY = "*".join(["exp(t)"] * 10)           # it and its first two derivatives: 1671 nodes (its third: 12071)


def project_with_forces(tmp_path, expressions):
    data = project_to_dict(pendulum())
    data["model"]["forces"] = [{"type": "linear_actuator", "name": f"f{i}", "body_i": "ground", "body_j": "bob",
                                "force": text} for i, text in enumerate(expressions)]
    path = tmp_path / "m.mbs.json"
    path.write_text(json.dumps(data))
    return path


def heavy(i):
    """Distinct heavy expressions (so that no parse is shared)."""
    return HEAVY + f"+{i}"


def test_the_expressions_of_a_file_share_one_budget(tmp_path, capsys):
    cost = parse_expression(heavy(0)).cost
    fits = MAX_MODEL_EXPRESSION_NODES // cost
    assert main(["validate", str(project_with_forces(tmp_path, [heavy(i) for i in range(fits)]))]) == 0
    capsys.readouterr()
    path = project_with_forces(tmp_path, [heavy(i) for i in range(150)])
    assert os.path.getsize(path) < 30_000
    start = time.process_time()
    assert main(["validate", str(path)]) == 2          # was 200 s and 1.5 GB
    elapsed = time.process_time() - start
    lines = capsys.readouterr().err.splitlines()
    assert lines[0].endswith(f"model.forces[{fits}].force: the model's expressions together are too complex: "
                             f"more than {MAX_MODEL_EXPRESSION_NODES} nodes with their first two derivatives "
                             "written out (the limit per file; simplify them or use tables "
                             "{'t': [...], 'values': [...]})")
    assert elapsed < 10.0
    # the budget is per file: the model API and another file are not charged
    model = solver.load_model(project_with_forces(tmp_path, [heavy(i) for i in range(fits)]))
    model.add_force("extra", "bob", force=(heavy(999), 0.0, 0.0))


def test_a_shared_subtree_is_compiled_once():
    e = parse_expression(HEAVY)
    t = 0.3
    assert e.value(t) == pytest.approx(np.exp(10 * t), rel=1e-12)
    assert e.d1(t) == pytest.approx(10 * np.exp(10 * t), rel=1e-12)
    assert e.d2(t) == pytest.approx(100 * np.exp(10 * t), rel=1e-12)
    assert e.derivative()._text is None and "exp(t)*exp(t)" in e.derivative().text    # formatted when asked
    assert parse_expression(HEAVY) is e                      # parsed once, checked and compiled from it


# ---- output rows ----------------------------------------------------------------------------------
@pytest.mark.parametrize("settings, rows", [({"output_step": 1e-300}, "1e+300"),
                                            ({"t_end": 1e9}, "1e+11")])
def test_output_rows_beyond_any_limit_are_refused_naming_the_field(tmp_path, capsys, settings, rows):
    data = project_to_dict(pendulum())
    data["solver"].update(settings)
    path = tmp_path / "m.mbs.json"
    path.write_text(json.dumps(data))
    start = time.process_time()
    assert main(["validate", str(path)]) == 2
    assert main(["run", str(path), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert f"solver.output_step: t_end / output_step gives {rows} output rows" in err
    assert "more than 10000000" in err and "Traceback" not in err
    assert time.process_time() - start < 5.0


def test_rows_kept_in_memory_are_bounded_and_the_message_says_how_to_stream(tmp_path, capsys):
    path = tmp_path / "m.mbs.json"
    pendulum().save(path)
    start = time.process_time()
    assert main(["run", str(path), "--t-end", "0.01", "--output-step", "1e-8", "--quiet"]) == 2   # was 1.2 GB
    err = capsys.readouterr().err
    assert ("solver.output_step: t_end / output_step gives 1e+06 output rows (t_end 0.01 s, output_step "
            "1e-08 s), more than the 200000 kept in memory; use a larger output_step, or stream the results to "
            "a file (mbs run --out FILE.h5, simulate(results_path=...)) for up to 10000000") in err
    assert time.process_time() - start < 5.0
    # the overrides are checked as a pair: a long run with a coarse output step is fine
    settings = solver.compile.resolve_settings(pendulum(), t_end=1e5, output_step=1.0)
    assert settings.output_rows() == 100_001


# ---- a run's steps and wall time ------------------------------------------------------------------
@pytest.mark.parametrize("limit, value, message", [
    ("max_steps", 40, "the run reached its step limit (40 steps, settings.max_steps; "),
    ("max_wall_time", 0.3, "the run reached its wall-time limit (0.3 s, settings.max_wall_time; ")])
def test_a_run_stops_at_its_step_or_wall_time_limit_keeping_its_results(tmp_path, capsys, limit, value, message):
    m = pendulum()
    m.settings.set(limit, value)
    with pytest.raises(solver.SolverError) as exc:
        solver.simulate(m, t_end=1e4, output_step=1.0, codegen="off")
    assert exc.value.kind == "limit" and message in str(exc.value)
    assert len(exc.value.results) >= 1 and exc.value.results.status == "failed"
    path, out = tmp_path / "m.mbs.json", tmp_path / "r.h5"
    m.settings.set("t_end", 1e4)
    m.settings.set("output_step", 1.0)
    m.save(path)
    assert json.loads(path.read_text())["solver"][limit] == value
    assert main(["run", str(path), "--quiet", "--out", str(out), "--codegen", "off"]) == 3
    err = capsys.readouterr().err
    assert message in err and "partial results up to" in err
    assert len(solver.load_results(out)) >= 1


def test_default_limits_are_not_written_to_files(tmp_path):
    path = tmp_path / "m.mbs.json"
    pendulum().save(path)
    assert not {"max_steps", "max_wall_time"} & set(json.loads(path.read_text())["solver"])


# ---- flexible bodies and modes files --------------------------------------------------------------
def test_beam_elements_are_bounded(tmp_path, capsys):
    data = project_to_dict(beam())
    data["model"]["flexible_bodies"][0]["elements"] = 800        # was 89 s and 2.4 GB for 0.01 s
    path = tmp_path / "m.mbs.json"
    path.write_text(json.dumps(data))
    assert main(["validate", str(path)]) == 2
    assert "model.flexible_bodies[0].elements: must be <= 200, got 800" in capsys.readouterr().err


def good_modes(tmp_path):
    good = tmp_path / "good.npz"
    export_modes(good, CartesianSystem(beam()).flex[0].body)
    return dict(np.load(good))


def test_modes_files_are_bounded_as_converted_by_modes_and_by_members(tmp_path):
    arrays = good_modes(tmp_path)
    path = tmp_path / "bomb.npz"
    n = 8_000_000            # nodes as int8: 48 MB stored, 16 times that once converted to float64
    small = dict(arrays, nodes=np.zeros((n, 3), np.int8), modes=np.zeros((n, 6, 2), np.int8),
                 stress_shapes=np.zeros((n, 4, 2), np.int8))
    write_npz_headers(path, {k: v for k, v in small.items()})
    with pytest.raises(solver.ModelError, match=r"the arrays declare \d+ bytes \(as read and converted"):
        CartesianSystem(beam(str(path)))
    k = 3600
    write_npz_headers(path, dict(arrays, modes=(arrays["nodes"].shape[0], 6, k), frequencies_hz=(k,), S_phi=(3, k),
                                 E1=(3, 3, k), E2=(3, 3, k, k), stress_shapes=(arrays["nodes"].shape[0], 4, k)))
    with pytest.raises(solver.ModelError, match="'modes' declares 3600 modes, more than 200"):
        CartesianSystem(beam(str(path)))
    np.savez(path, **arrays)
    with zipfile.ZipFile(path, "a") as zf:
        for i in range(20_000):
            zf.writestr(f"x{i}.npy", b"")
    start = time.process_time()
    with pytest.raises(solver.ModelError, match=r"the archive declares 20012 members in a \d+-byte directory, more than 32"):
        CartesianSystem(beam(str(path)))
    assert time.process_time() - start < 2.0


def test_mbs_run_takes_the_limits_as_options(tmp_path, capsys):
    path = tmp_path / "m.mbs.json"
    pendulum().save(path)
    assert main(["run", str(path), "--quiet", "--codegen", "off", "--t-end", "1e4", "--output-step", "1",
                 "--max-steps", "30"]) == 3
    assert "the run reached its step limit (30 steps, settings.max_steps; " in capsys.readouterr().err
    assert main(["run", str(path), "--quiet", "--max-steps", "0"]) == 2
    assert main(["run", str(path), "--quiet", "--max-wall-time", "-1"]) == 2
    err = capsys.readouterr().err
    assert "--max-steps: must be >= 1, got 0" in err and "--max-wall-time: must be > 0, got -1" in err
