"""Bad input that used to be reported as an internal error (issue 20, items 6 and 7): each case is a
file built here; ``mbs`` exits 2 with one line naming the field, never 3 or a traceback, and the
hygiene rules hold (printable names, duplicate keys refused, constants finite)."""
from __future__ import annotations

import json
import os

import pytest

import solver
from solver.cli import main
from solver.model.fields import shown_text
from solver.model.project_format import project_to_dict


def base():
    m = solver.Model(name="pendulum", gravity=(0, -9.81, 0))
    m.add_body("bob", mass=1.0, inertia=(1e-3, 1e-3, 1e-3), position=(1, 0, 0))
    m.add_joint("pivot", "revolute", "ground", "bob", origin=(0, 0, 0), axis=(0, 0, 1))
    m.add_spring_damper("S", "ground", "bob", point_i=(0, 1, 0), stiffness=10.0)
    m.settings.set("t_end", 0.05)
    return project_to_dict(m)


def rename_bob(d, name):
    d["model"]["bodies"][0]["name"] = name
    d["model"]["joints"][0]["body_j"] = name
    d["model"]["forces"][0]["body_j"] = name


def nested(depth):
    value = 1.0
    for _ in range(depth):
        value = [value]
    return value


PROJECT_CASES = {
    "name with slash": (lambda d: d["model"].__setitem__("name", "a/b"),
                        "model.name: must not contain quotes, slashes"),
    "field nested 900 deep": (lambda d: d["model"]["bodies"][0].__setitem__("mass", nested(900)),
                              "nested too deeply"),
    "force type a list": (lambda d: d["model"]["forces"][0].__setitem__("type", ["spring_damper"]),
                          "model.forces[0].type: must be one of"),
    "position 1e308": (lambda d: d["model"]["bodies"][0].__setitem__("position", [1e308, 0, 0]),
                       "model.bodies[0].position: must be within ±1e+06 m, got 1e+308"),
    "position -1e308": (lambda d: d["model"]["joints"][0].__setitem__("origin", [0, -1e308, 0]),
                        "model.joints[0].origin: must be within ±1e+06 m"),
    "ESC in a name": (lambda d: rename_bob(d, "bob\x1b[2J"),
                      "model.bodies[0].name: must not contain control characters"),
    "NUL in a name": (lambda d: rename_bob(d, "b\x00b"),
                      "model.bodies[0].name: must not contain control characters"),
    "right-to-left override": (lambda d: rename_bob(d, "bob\u202e"),
                               "model.bodies[0].name: must not contain control characters"),
    "1/0": (lambda d: d["model"]["forces"][0].__setitem__("force", "1/0"),
            "model.forces[0].force: invalid expression '1/0': its constant value inf is not finite"),
    "1e999": (lambda d: d["model"]["forces"][0].__setitem__("force", "2*1e999"),
              "its constant value inf is not finite"),
    "0*1e999": (lambda d: d["model"]["forces"][0].__setitem__("force", "sqrt(-1)"),
                "its constant value nan is not finite"),
}


@pytest.mark.parametrize("case", sorted(PROJECT_CASES))
def test_bad_projects_exit_2_with_one_line(case, tmp_path, capsys):
    change, message = PROJECT_CASES[case]
    data = base()
    change(data)
    path = tmp_path / "m.mbs.json"
    path.write_text(json.dumps(data))
    out_dir = tmp_path / "csv"
    assert main(["run", str(path), "--csv", str(out_dir), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("mbs: error: ") and message in err, err
    assert "\x1b" not in err and "\x00" not in err and not out_dir.exists()
    assert main(["validate", str(path)]) == 2


def test_duplicate_keys_are_an_error_naming_the_key(tmp_path, capsys):
    text = json.dumps(base(), indent=1).replace('"mass": 1.0', '"mass": 1.0, "mass": 2.0', 1)
    path = tmp_path / "m.mbs.json"
    path.write_text(text)
    with pytest.raises(solver.ModelError, match="duplicate key 'mass'"):
        solver.load_model(path)
    assert main(["validate", str(path)]) == 2
    assert "duplicate key 'mass'" in capsys.readouterr().err


def test_names_with_control_characters_are_refused_by_the_api():
    m = solver.Model()
    for name in ("a\x1b[31m", "a\x00", "a\x7f", "a\u200b"):
        with pytest.raises(solver.ModelError, match="control characters"):
            m.add_body(name, mass=1.0, inertia=(1, 1, 1))
    with pytest.raises(solver.ModelError, match="model.name: must not contain quotes, slashes"):
        solver.Model(name="a/b")
    m.add_body("Körper ✓", mass=1.0, inertia=(1, 1, 1))          # printable Unicode is fine


def test_shown_text_escapes_control_characters():
    assert shown_text("a\x1b[2Jb\x00c\u202ed") == "a\\x1b[2Jb\\x00c\\u202ed"
    assert shown_text("Körper ✓ 1/2") == "Körper ✓ 1/2"


def test_mbs_info_never_prints_raw_escapes(tmp_path, capsys):
    import h5py
    m = solver.Model(name="pendulum", gravity=(0, -9.81, 0))
    m.add_body("bob", mass=1.0, inertia=(1e-3, 1e-3, 1e-3), position=(1, 0, 0))
    m.add_joint("pivot", "revolute", "ground", "bob", origin=(0, 0, 0), axis=(0, 0, 1))
    path = tmp_path / "r.h5"
    solver.simulate(m, t_end=0.02).save(path)
    with h5py.File(path, "r+") as f:
        meta = json.loads(f.attrs["meta"])
        meta["model_name"] = "x\x1b]0;owned\x07"
        meta["events"] = [{"time": 0.0, "kind": "note", "message": "\x1b[2J cleared"}]
        f.attrs["meta"] = json.dumps(meta)
    assert main(["info", str(path)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\\x1b]0;owned\\x07" in out and "\\x1b[2J cleared" in out
    with h5py.File(path, "r+") as f:
        meta["body_names"] = ["../../evil"]
        f.attrs["meta"] = json.dumps(meta)
    assert main(["info", str(path)]) == 2
    assert "meta.body_names: '../../evil' is not a valid name" in capsys.readouterr().err


# ---- study files ----------------------------------------------------------------------------------
def write_study(tmp_path, text_or_data):
    project = tmp_path / "m.mbs.json"
    project.write_text(json.dumps(base()))
    path = tmp_path / "s.json"
    path.write_text(text_or_data if isinstance(text_or_data, str) else json.dumps(text_or_data))
    return path


def study(**over):
    data = {"format": "mbs-studio-study", "version": 1, "model": "m.mbs.json",
            "parameters": [{"path": "bodies.bob.mass", "values": [1.0, 2.0]}],
            "responses": [{"kind": "peak_velocity", "target": "bob"}]}
    data.update(over)
    return data


STUDY_CASES = {
    "deep JSON": ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    "deep parameter": (study(parameters=[{"path": "bodies.bob.mass", "values": nested(500)}]), "nested too deeply"),
    "5000-digit integer": ('{"format": "mbs-studio-study", "version": ' + "9" * 5000 + "}",
                           "version: this program reads version 1; got an integer too large to show"),
    "4000-digit range": (study(parameters=[{"path": "bodies.bob.mass", "range": [0, 1, 10 ** 4000]}]),
                         "parameters[0].range: must be a list of numbers"),
    "4000-digit seed": (study(design={"type": "lhs", "samples": 2, "seed": 10 ** 4000},
                              parameters=[{"path": "bodies.bob.mass", "uniform": [1, 2]}]),
                        "design.seed: must be an integer from 0 to 2**63 - 1; got 10000000"),
    "model a number": (study(model=5), "model: must be the path of a project file"),
    "model with NUL": (study(model="m\x00.mbs.json"), "model: must be the path of a project file"),
    "results_dir a list": (study(results_dir=["x"]), "results_dir: must be the path of a folder"),
    "design a list": (study(design=["grid"]), "design: must be an object"),
    "design type a list": (study(design={"type": ["grid"]}), "design.type: must be one of"),
    "parameters an object": (study(parameters={"a": 1}), "parameters: must be a list"),
    "path a list": (study(parameters=[{"path": ["x"], "values": [1]}]), "parameters[0].path: must be"),
    "response kind a list": (study(responses=[{"kind": ["peak_velocity"]}]), "responses[0]:"),
    "response an unknown key": (study(responses=[{"kind": "peak_velocity", "x" * 5000: 1}]), "responses[0]:"),
    "duplicate key": ('{"format": "mbs-studio-study", "format": "x"}', "duplicate key 'format'"),
    "templates a list": (study(templates=[1]), "templates: must be an object"),
    "not UTF-8": ("\udcff", None),
}


@pytest.mark.parametrize("case", sorted(STUDY_CASES))
def test_bad_study_files_exit_2_with_one_line(case, tmp_path, capsys):
    content, message = STUDY_CASES[case]
    if content == "\udcff":
        path = write_study(tmp_path, "")
        path.write_bytes(b'{"format": "\xff"}')
        message = "not UTF-8"
    else:
        path = write_study(tmp_path, content)
    assert main(["study", str(path), "--serial", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("mbs: error: ") and message in err, err
    assert len(err) < 2000
    assert not os.path.exists(tmp_path / "x")
