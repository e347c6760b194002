"""A corpus of bad project files through ``mbs validate`` and ``mbs run`` (in-process): exit code 2,
one stderr line per problem for validate and one line for run, never a traceback, nothing on stdout."""
from __future__ import annotations

import json
import os

import pytest

import solver
from solver import cli

SAMPLE_DIR = os.path.join(os.path.dirname(__file__), "..", "..", "sample_models")
FOURBAR = open(os.path.join(SAMPLE_DIR, "fourbar.mbs.json"), "rb").read()
SLIDER = open(os.path.join(SAMPLE_DIR, "slider_crank.mbs.json"), "rb").read()


def edit(raw, change):
    d = json.loads(raw)
    change(d)
    return json.dumps(d).encode()


def body(d, i=0):
    return d["model"]["bodies"][i]


def joint(d, i=0):
    return d["model"]["joints"][i]


CORPUS = {
    "empty": b"",
    "truncated": FOURBAR[: len(FOURBAR) // 2],
    "utf16": FOURBAR.decode().encode("utf-16"),
    "latin1": FOURBAR.decode().replace('"four-bar"', '"Viergelenk-Getriebe \u00e4"').encode("latin-1"),
    "not an object": b"[1, 2, 3]",
    "nan token": FOURBAR.replace(b"0.0,", b"NaN,", 2),
    "1e999": FOURBAR.replace(b'"mass": ', b'"mass": 1e999, "x": ', 1),
    "huge integer": edit(FOURBAR, lambda d: body(d).update(mass=10 ** 400)),
    "newer version": edit(FOURBAR, lambda d: d.update(version=7)),
    "wrong format": edit(FOURBAR, lambda d: d.update(format="urdf")),
    "version as text": edit(FOURBAR, lambda d: d.update(version="1")),
    "model missing": edit(FOURBAR, lambda d: d.pop("model")),
    "negative mass": edit(FOURBAR, lambda d: body(d).update(mass=-2.0)),
    "mass as text": edit(FOURBAR, lambda d: body(d).update(mass="2 kg")),
    "inertia not PD": edit(FOURBAR, lambda d: body(d).update(inertia=[1, 1, 1, 2, 0, 0])),
    "inertia triangle": edit(FOURBAR, lambda d: body(d, 1).update(inertia=[1, 1, 3])),
    "zero axis": edit(FOURBAR, lambda d: joint(d, 2).update(axis=[0, 0, 0])),
    "dangling body": edit(FOURBAR, lambda d: joint(d).update(body_j="crankshaft")),
    "duplicate name": edit(FOURBAR, lambda d: body(d, 2).update(name=body(d, 0)["name"])),
    "reserved name": edit(FOURBAR, lambda d: body(d).update(name="ground")),
    "unknown field": edit(FOURBAR, lambda d: joint(d).update(stiffness=3)),
    "undrivable joint": edit(FOURBAR, lambda d: joint(d).update(type="spherical")),
    "two drivers": edit(FOURBAR, lambda d: d["model"]["drivers"].append(dict(d["model"]["drivers"][0], name="D2"))),
    "driver coordinate": edit(FOURBAR, lambda d: d["model"]["drivers"][0].update(coordinate="translation")),
    "bad expression": edit(FOURBAR, lambda d: d["model"]["drivers"][0].update(expression="2*pi*t +")),
    "unsafe expression": edit(FOURBAR, lambda d: d["model"]["drivers"][0].update(expression="__import__('os')")),
    "huge array": edit(FOURBAR, lambda d: body(d).update(position=[0.0] * 100_000)),
    "bad settings": edit(SLIDER, lambda d: d["solver"].update(rtol=-1, integrator="euler", t_end=0)),
    "many problems": edit(SLIDER, lambda d: [body(d, i).update(mass=-i) for i in range(3)]),
    "no bodies": edit(SLIDER, lambda d: d["model"].update(bodies=[], joints=[])),
}


def problems_of(path):
    """The loader's problems, each as the CLI prints it (prefixed by the file unless it names it)."""
    with pytest.raises(solver.ModelError) as exc:
        solver.load_model(path)
    return [p if p.startswith(str(path)) else f"{path}: {p}" for p in exc.value.problems]


@pytest.fixture
def bad_file(request, tmp_path):
    path = tmp_path / "bad.mbs.json"
    path.write_bytes(CORPUS[request.param])
    return path


def error_lines(err):
    assert "Traceback" not in err
    lines = err.splitlines()
    assert all(line.startswith("mbs: error: ") for line in lines), err
    return lines


@pytest.mark.parametrize("bad_file", sorted(CORPUS), indirect=True)
def test_validate_lists_every_problem_once(bad_file, capsys):
    problems = problems_of(bad_file)
    assert cli.main(["validate", str(bad_file)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    lines = error_lines(err)
    assert len(lines) == len(problems)
    assert lines == [f"mbs: error: {p}" for p in problems]


@pytest.mark.parametrize("bad_file", sorted(CORPUS), indirect=True)
def test_run_refuses_with_one_line(bad_file, tmp_path, capsys):
    problems = problems_of(bad_file)
    out_h5 = tmp_path / "out.h5"
    assert cli.main(["run", str(bad_file), "--out", str(out_h5)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and not out_h5.exists()
    [line] = error_lines(err)
    assert line.startswith(f"mbs: error: {problems[0]}")
    if len(problems) > 1:
        assert line.endswith(f"(and {len(problems) - 1} more problem{'s' * (len(problems) > 2)}; "
                             f"'mbs validate {bad_file}' lists them all)")


def test_corpus_messages(tmp_path, capsys):
    """A few complete lines, as a user sees them."""
    path = tmp_path / "m.mbs.json"
    path.write_bytes(CORPUS["many problems"])
    assert cli.main(["run", str(path)]) == 2
    assert capsys.readouterr().err == (f"mbs: error: {path}: model.bodies[0].mass: must be > 0, got 0 (and 2 more "
                                       f"problems; 'mbs validate {path}' lists them all)\n")
    path.write_bytes(CORPUS["latin1"])
    assert cli.main(["validate", str(path)]) == 2
    assert capsys.readouterr().err == (f"mbs: error: {path}: not UTF-8 text at line 5, column 34 (byte 98, 0xe4); "
                                       "save the file as UTF-8\n")
