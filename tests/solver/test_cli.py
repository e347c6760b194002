"""The ``mbs`` command: exit codes, one-line errors without tracebacks, outputs that load back."""
from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys

import numpy as np
import pytest

import solver
from solver import cli
from solver.model.project_format import project_to_dict

G = 9.81
L = 1.0


# ---- fixtures -------------------------------------------------------------------------------------

BUILD_NOTICE = "mbs: compiling the model…\n"     # stderr of a run whose model is built now (generated kernels)


def stderr_of(capsys):
    """What the command wrote to stderr, less the build notice."""
    return capsys.readouterr().err.replace(BUILD_NOTICE, "")

def pendulum(hanging=False):
    """A point-like bob on a 1 m massless rod, pivot about z at the origin; horizontal at t = 0
    unless ``hanging`` (then it rests and linearizes to f = sqrt(g/L)/2π)."""
    m = solver.Model(name="pendulum", gravity=(0.0, -G, 0.0))
    m.add_body("bob", mass=1.0, inertia=(1e-9, 1e-9, 1e-9), position=(0.0, -L, 0.0) if hanging else (L, 0.0, 0.0),
               geometry={"shape": "sphere", "radius": 0.05})
    m.add_joint("pivot", "revolute", "ground", "bob", origin=(0, 0, 0), axis=(0, 0, 1))
    m.settings.set("t_end", 0.5)
    m.settings.set("output_step", 0.01)
    return m


@pytest.fixture
def model_file(tmp_path):
    path = tmp_path / "pendulum.mbs.json"
    pendulum().save(path)
    return path


def write_json(path, data):
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return path


def one_error_line(err):
    """stderr holds exactly one 'mbs: error:' line and no traceback."""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("mbs: error: "), err
    assert "Traceback" not in err
    return lines[0]


# ---- run ------------------------------------------------------------------------------------------
def test_run_prints_summary_and_writes_h5_and_csv(model_file, tmp_path, capsys):
    out, csv_dir = tmp_path / "out.h5", tmp_path / "csv"
    assert cli.main(["run", str(model_file), "--out", str(out), "--csv", str(csv_dir)]) == 0
    captured = capsys.readouterr()
    # no progress bar when stderr is not a terminal
    assert captured.err.replace(BUILD_NOTICE, "") == ""
    for label in ("steps", "rhs evaluations", "wall time", "real-time factor", "max constraint violation",
                  "energy drift", "partition events"):
        assert label in captured.out
    res = solver.load_results(out)
    np.testing.assert_allclose(res.t, np.linspace(0.0, 0.5, 51), atol=1e-12)
    assert res.body_names == ["bob"] and res.status == "ok"
    # the bob stays on its 1 m circle
    np.testing.assert_allclose(np.linalg.norm(res.body_position("bob"), axis=1), L, atol=1e-6)
    assert {"body_bob.csv", "joint_pivot.csv", "energy.csv"} <= set(os.listdir(csv_dir))
    rows = (csv_dir / "body_bob.csv").read_text(encoding="utf-8").splitlines()
    assert rows[0].startswith("t [s],r_x [m],r_y [m],r_z [m]") and len(rows) == 1 + len(res.t)


def test_run_options_override_saved_settings(model_file, tmp_path, capsys):
    out = tmp_path / "o.h5"
    assert cli.main(["run", str(model_file), "--t-end", "0.2", "--output-step", "0.05", "--integrator", "rk45",
                     "--partitioning", "lu", "--rtol", "1e-8", "--atol", "1e-10", "--max-step", "0.01",
                     "--out", str(out), "--quiet"]) == 0
    assert capsys.readouterr().out == ""
    res = solver.load_results(out)
    np.testing.assert_allclose(res.t, [0.0, 0.05, 0.1, 0.15, 0.2], atol=1e-12)
    assert (res.meta["integrator"], res.meta["partitioning"], res.meta["rtol"]) == ("rk45", "lu", 1e-8)


def test_progress_bar_only_on_a_terminal(model_file, capsys, monkeypatch):
    monkeypatch.setattr(cli, "_isatty", lambda stream: True)
    assert cli.main(["run", str(model_file), "--t-end", "0.1"]) == 0
    err = stderr_of(capsys)
    assert "100.0%" in err and "t = 0.1 / 0.1 s" in err and "wall" in err
    assert cli.main(["run", str(model_file), "--t-end", "0.1", "--quiet"]) == 0
    assert stderr_of(capsys) == ""


# ---- bad input: exit 2, one line, no traceback ----------------------------------------------------
def bad_files(tmp_path):
    good = project_to_dict(pendulum())
    negative = json.loads(json.dumps(good))
    negative["model"]["bodies"][0]["mass"] = -1.0
    newer = dict(good, version=99)
    return {
        "malformed": (write_json(tmp_path / "malformed.mbs.json", '{"format": "mbs-studio-project", "vers'),
                      "invalid JSON"),
        "negative mass": (write_json(tmp_path / "negative.mbs.json", negative), "model.bodies[0].mass"),
        "missing": (tmp_path / "missing.mbs.json", "cannot read"),
        "newer version": (write_json(tmp_path / "newer.mbs.json", newer), "version 99"),
    }


@pytest.mark.parametrize("case", ["malformed", "negative mass", "missing", "newer version"])
@pytest.mark.parametrize("command", ["run", "validate", "linearize"])
def test_bad_model_file_exits_2_with_one_line(tmp_path, capsys, command, case):
    path, expected = bad_files(tmp_path)[case]
    assert cli.main([command, str(path), *(["--out", str(tmp_path / "x.h5")] if command == "run" else [])]) == 2
    err = stderr_of(capsys)
    if command == "validate":    # validate lists every problem the loader reports, one per line
        assert "Traceback" not in err and all(x.startswith("mbs: error: ") for x in err.strip().splitlines())
        line = err.splitlines()[0]
    else:
        line = one_error_line(err)
    assert expected in line and str(path) in line
    assert not (tmp_path / "x.h5").exists()


def test_validate_lists_every_problem(tmp_path, capsys):
    data = project_to_dict(pendulum())
    data["model"]["bodies"][0]["mass"] = -1.0
    data["model"]["joints"][0]["axis"] = [0, 0, 0]
    path = write_json(tmp_path / "two.mbs.json", data)
    assert cli.main(["validate", str(path)]) == 2
    lines = stderr_of(capsys).strip().splitlines()
    assert any("model.bodies[0].mass" in x for x in lines)
    assert any("model.joints[0].axis: must be a non-zero 3-vector" in x for x in lines)
    assert all(x.startswith("mbs: error: ") for x in lines)
    # run reports the same in one line and points to validate
    assert cli.main(["run", str(path)]) == 2
    assert "mbs validate" in one_error_line(stderr_of(capsys))


@pytest.mark.parametrize("option", [["--t-end", "-1"], ["--rtol", "nan"], ["--output-step", "0"],
                                    ["--integrator", "euler"], ["--formulation", "magic"], ["--t-end", "soon"],
                                    ["--bogus"], ["--out", "/no/such/folder/x.h5"]])
def test_bad_option_exits_2_with_one_line(model_file, capsys, option):
    assert cli.main(["run", str(model_file), *option]) == 2
    one_error_line(stderr_of(capsys))


@pytest.mark.parametrize("argv", [[], ["frobnicate"], ["run"]])
def test_usage_errors_exit_2(argv, capsys):
    assert cli.main(argv) == 2
    one_error_line(stderr_of(capsys))


def test_version(capsys):
    assert cli.main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"mbs {solver.__version__}"


# ---- validate, info, linearize --------------------------------------------------------------------
def test_validate_ok(model_file, capsys):
    assert cli.main(["validate", str(model_file)]) == 0
    out = capsys.readouterr().out.strip()
    assert out.startswith("ok: 1 body, 1 joint") and "1 degree of freedom" in out


def test_info_on_results(model_file, tmp_path, capsys):
    out = tmp_path / "out.h5"
    assert cli.main(["run", str(model_file), "--out", str(out), "--quiet"]) == 0
    assert cli.main(["info", str(out)]) == 0
    text = capsys.readouterr().out
    for expected in ("pendulum", "status", "time span", "0 .. 0.5 s, 51 output points", "bob", "pivot",
                     "drivers", "events", "QR partition"):
        assert expected in text


def test_info_on_files_that_are_not_results(model_file, tmp_path, capsys):
    import h5py
    with h5py.File(tmp_path / "broken.h5", "w") as f:     # claims to be results, meta is not JSON
        f.attrs["format"] = "mbs-studio-results"
        f.attrs["version"] = 1
        f.attrs["meta"] = "{not json"
    for path in (model_file, tmp_path / "missing.h5", tmp_path / "broken.h5", tmp_path):
        assert cli.main(["info", str(path)]) == 2
        assert str(path) in one_error_line(stderr_of(capsys))


def test_linearize_pendulum_frequency(tmp_path, capsys):
    path = tmp_path / "hanging.mbs.json"
    pendulum(hanging=True).save(path)
    assert cli.main(["linearize", str(path)]) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines() if line.strip().startswith("1 ")]
    assert len(rows) == 1
    f = float(rows[0][1])
    assert f == pytest.approx(math.sqrt(G / L) / (2 * math.pi), rel=1e-5)
    assert len(rows[0][1].replace("0.", "", 1)) >= 6          # printed with plenty of digits
    assert float(rows[0][2]) == pytest.approx(0.0, abs=1e-6)


def test_linearize_at_the_equilibrium_below_a_horizontal_pendulum(model_file, capsys):
    """--equilibrium: the horizontal pendulum is linearized hanging, f = sqrt(g/L)/2π, the heading
    names the stable equilibrium and how it was found; --nearest needs --equilibrium."""
    assert cli.main(["linearize", str(model_file), "--equilibrium"]) == 0
    out = capsys.readouterr().out
    assert "at the stable static equilibrium (descent, " in out
    rows = [line.split() for line in out.splitlines() if line.strip().startswith("1 ")]
    assert len(rows) == 1 and float(rows[0][1]) == pytest.approx(math.sqrt(G / L) / (2 * math.pi), rel=1e-5)
    assert cli.main(["linearize", str(model_file), "--nearest"]) == 2
    assert "--nearest: only with --equilibrium" in capsys.readouterr().err


# ---- solver failure: exit 3, time and elements named, partial results kept -----------------------
def unassemblable():
    """A distance link of length 1 to a body point 3 m from the spherical joint holding it: no
    configuration satisfies both, so assembly fails before the first output."""
    m = solver.Model(name="impossible")
    m.add_body("b", mass=1.0, inertia=(1, 1, 1), position=(0, -3, 0))
    m.add_joint("link", "distance", "ground", "b", origin=(0, 0, 0), origin2=(0, -3, 0), length=1.0)
    m.add_joint("ball", "spherical", "ground", "b", origin=(0, 0, 0))
    m.settings.set("formulation", "cartesian")     # both joints' equations unsatisfied (relative: only the cut one)
    return m


def jamming():
    """A driven crank tied by a distance link that the motion must stretch: fails after t = 0."""
    m = solver.Model(name="jam")
    m.add_body("arm", mass=1.0, inertia=(1e-3, 1e-3, 1e-3), position=(0.5, 0, 0))
    m.add_joint("pivot", "revolute", "ground", "arm", origin=(0, 0, 0), axis=(0, 0, 1))
    m.add_driver("turn", joint="pivot", expression="t")
    m.add_joint("tie", "distance", "ground", "arm", origin=(1, 1, 0), origin2=(1, 0, 0))
    m.settings.set("t_end", 0.1)
    return m


def test_assembly_failure_exits_3_and_names_elements(tmp_path, capsys):
    path = tmp_path / "impossible.mbs.json"
    unassemblable().save(path)
    out = tmp_path / "out.h5"
    assert cli.main(["run", str(path), "--out", str(out)]) == 3
    err = stderr_of(capsys)
    assert "Traceback" not in err
    first = err.splitlines()[0]
    assert first.startswith("mbs: error: ") and "t = 0 s" in first and "link" in first and "ball" in first
    assert "nothing saved" in err and not out.exists()      # an empty run never overwrites a file


def test_failure_mid_run_saves_partial_results(tmp_path, capsys):
    path = tmp_path / "jam.mbs.json"
    jamming().save(path)
    out = tmp_path / "partial.h5"
    assert cli.main(["run", str(path), "--out", str(out)]) == 3
    err = stderr_of(capsys)
    assert "Traceback" not in err
    first, second = err.strip().splitlines()
    assert first.startswith("mbs: error: simulation failed") and "at t = " in first
    assert str(out) in second
    res = solver.load_results(out)
    assert res.status == "failed" and len(res) >= 1 and res.t[-1] < 0.1


@pytest.mark.usefixtures("generic_path")   # the compiled loop hears Ctrl-C once per call (≤ 100 output points)
def test_ctrl_c_exits_130_and_keeps_partial_results(model_file, tmp_path, capsys, monkeypatch):
    import solver.analysis.dynamics as dynamics
    real = dynamics.simulate

    def interrupted_at_0_2(model, progress=None, **kw):
        def progress_hook(t, t_end):
            if t >= 0.2:
                signal.raise_signal(signal.SIGINT)     # what Ctrl-C sends
        return real(model, progress=progress_hook, **kw)
    monkeypatch.setattr(dynamics, "simulate", interrupted_at_0_2)
    out = tmp_path / "partial.h5"
    handler = signal.getsignal(signal.SIGINT)
    assert cli.main(["run", str(model_file), "--out", str(out)]) == 130
    err = stderr_of(capsys)
    assert "Traceback" not in err and "cancelled" in err and str(out) in err
    res = solver.load_results(out)
    assert res.status == "cancelled" and 0.2 <= res.t[-1] < 0.5
    assert signal.getsignal(signal.SIGINT) is handler      # the previous handler is restored


def test_internal_error_is_one_line_exit_3(model_file, capsys, monkeypatch):
    import solver.analysis.dynamics as dynamics

    def broken(*args, **kw):
        raise RuntimeError("boom")
    monkeypatch.setattr(dynamics, "simulate", broken)
    monkeypatch.delenv("MBS_DEBUG", raising=False)
    assert cli.main(["run", str(model_file)]) == 3
    assert "internal error: RuntimeError: boom" in one_error_line(stderr_of(capsys))
    monkeypatch.setenv("MBS_DEBUG", "1")
    with pytest.raises(RuntimeError):
        cli.main(["run", str(model_file)])


# ---- the installed entry point --------------------------------------------------------------------
@pytest.mark.slow
def test_entry_point_runs_in_a_subprocess(model_file, tmp_path):
    script = os.path.join(os.path.dirname(sys.executable), "mbs")
    command = [script] if os.path.exists(script) else [sys.executable, "-m", "solver"]
    out = tmp_path / "sub.h5"
    proc = subprocess.run(command + ["run", str(model_file), "--t-end", "0.1", "--out", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "real-time factor" in proc.stdout and proc.stderr.replace(BUILD_NOTICE, "") == ""
    assert len(solver.load_results(out)) == 11
