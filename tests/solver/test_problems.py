"""Structured problems: a ModelError carries each problem as a :class:`solver.Problem` (``details``:
path, element, field, message) beside its text (``problems``), made where validation happens
(field coercion, element checks, references, Model.validate, model_from_dict, project files)."""
from __future__ import annotations

import json
import pickle

import pytest

import solver
from solver import ModelError, Problem


def _project(tmp_path, model, settings=None):
    path = tmp_path / "bad.mbs.json"
    path.write_text(json.dumps({"format": "mbs-studio-project", "version": 1, "model": model,
                                "solver": settings or {}}), encoding="utf-8")
    return path


def _base():
    return {"name": "m", "gravity": [0, -9.81, 0],
            "bodies": [{"name": "bob", "mass": 1.0, "inertia": [1, 1, 1]},
                       {"name": "heavy", "mass": -2.0, "inertia": [1, 1, 1]}],
            "joints": [{"name": "pivot", "type": "revolute", "body_i": "ground", "body_j": "bob",
                        "axis": [0, 0, 0]}],
            "forces": [{"type": "spring_damper", "name": "spring", "body_i": "bob", "body_j": "nobody"}]}


def test_a_file_with_three_problems_gives_three_problems_with_element_and_field(tmp_path):
    with pytest.raises(ModelError) as info:
        solver.load_model(_project(tmp_path, _base()))
    details = info.value.details
    assert [(p.path, p.element, p.field) for p in details] == [
        ("model.bodies[1]", "heavy", "mass"),
        ("model.joints[0]", "pivot", "axis"),
        ("model.forces[0]", "spring", "body_j")]
    assert details[0].message == "must be > 0, got -2"
    assert details[1].message == "must be a non-zero 3-vector"
    assert details[2].message == "no body named 'nobody' (bodies: ground, bob)"
    # the text is the same problems, one string each, as before
    assert info.value.problems == [str(p) for p in details] == [
        "model.bodies[1].mass: must be > 0, got -2",
        "model.joints[0].axis: must be a non-zero 3-vector",
        "model.forces[0].body_j: no body named 'nobody' (bodies: ground, bob)"]


def test_model_level_problems_in_a_file_name_the_element_and_its_file_path(tmp_path):
    data = _base()
    data["bodies"].pop()
    data["joints"][0]["axis"] = [0, 0, 1]
    data["forces"] = []
    data["drivers"] = [{"name": "drive", "joint": "pivot", "expression": "t", "coordinate": "translation"}]
    with pytest.raises(ModelError) as info:
        solver.load_model(_project(tmp_path, data, {"t_end": -1.0}))
    assert info.value.details == [
        Problem("model.drivers[0]", "drive", "coordinate",
                "joint 'pivot' (revolute) has coordinates rotation; got translation"),
        Problem("solver", None, "t_end", "must be > 0, got -1")]
    assert info.value.problems == [
        "model.drivers[0].coordinate: joint 'pivot' (revolute) has coordinates rotation; got translation",
        "solver.t_end: must be > 0, got -1"]

def test_an_element_check_names_its_field():
    m = solver.Model()
    m.add_body("a", mass=1.0, inertia=(1, 1, 1))
    with pytest.raises(ModelError) as info:
        m.add_joint("j", "revolute", "a", "a")
    assert info.value.details == [Problem("joint 'j'", "j", "body_j", "must differ from body_i ('a')")]
    assert info.value.problems == ["joint 'j'.body_j: must differ from body_i ('a')"]


def test_set_field_rename_and_validate_give_problems():
    m = solver.Model()
    m.add_body("a", mass=1.0, inertia=(1, 1, 1))
    m.add_body("b", mass=1.0, inertia=(1, 1, 1))
    m.add_joint("j", "revolute", "ground", "a")
    with pytest.raises(ModelError) as info:
        m.set_field("a", "mass", 0.0)
    assert info.value.details == [Problem("body 'a'", "a", "mass", "must be > 0, got 0")]
    with pytest.raises(ModelError) as info:
        m.rename("a", "b")           # labelled with the element renamed, not the name it would get
    assert info.value.details == [Problem("body 'a'", "a", "name", "an element named 'b' already exists")]
    with pytest.raises(ModelError) as info:
        m.gravity = (0, float("nan"), 0)
    assert info.value.details == [Problem("model", None, "gravity", "must be finite, got nan")]
    with pytest.raises(ModelError) as info:
        m.settings.set("rtol", 1.0)          # the settings are not a model element
    assert info.value.details == [Problem("settings 'settings'", None, "rtol", "must be <= 0.1, got 1")]
    m.add_driver("d1", "j", "t")
    m.add_driver("d2", "j", "2*t")
    [p] = m.validate_details()
    assert (p.element, p.field) == ("d2", "joint") and m.validate() == [str(p)]
    with pytest.raises(ModelError) as info:
        m.check()
    assert info.value.details == [p]


def test_text_only_problems_stay_text_and_errors_pickle_with_their_details():
    exc = ModelError(["plain text", Problem("joint 'j'", "j", "axis", "bad")])
    assert exc.problems == ["plain text", "joint 'j'.axis: bad"]
    assert exc.details[0] == Problem("", None, None, "plain text")
    back = pickle.loads(pickle.dumps(exc))
    assert type(back) is ModelError and back.details == exc.details and str(back) == str(exc)
    assert ModelError("one").problems == ["one"]
