"""GUI reliability: a bad file shows every problem and leaves the open project untouched; autosave
writes a recovery file on a timer, removes it on a clean save/close and offers it after a crash."""
from __future__ import annotations

import json
import os

import pytest

import solver
from app import app_settings, autosave

SAMPLE_DIR = os.path.join(os.path.dirname(__file__), "..", "..", "sample_models")


@pytest.fixture
def edited(window, tmp_path):
    """The pendulum sample opened from a copy, then edited once (modified, one undo step)."""
    path = tmp_path / "pendulum.mbs.json"
    path.write_bytes(open(os.path.join(SAMPLE_DIR, "pendulum.mbs.json"), "rb").read())
    assert window.load(str(path))
    body = next(iter(window.document.model.bodies))
    window.document.select(body)
    window.properties.editor("mass").spin.setValue(3.5)
    assert window.document.modified and window.document.undo_stack.count() == 1
    return window, path


def bad_file(tmp_path):
    d = json.load(open(os.path.join(SAMPLE_DIR, "fourbar.mbs.json")))
    d["model"]["bodies"][0]["mass"] = -1.0
    d["model"]["joints"][2]["axis"] = [0, 0, 0]
    d["model"]["drivers"][0]["expression"] = "2*pi*t +"
    path = tmp_path / "bad.mbs.json"
    path.write_text(json.dumps(d))
    return path


def test_opening_a_bad_file_lists_its_problems_and_keeps_the_project(edited, answers, tmp_path):
    window, path = edited
    doc = window.document
    before = (doc.model.to_dict(), doc.path, doc.undo_stack.count(), doc.modified, window.windowTitle())
    bad = bad_file(tmp_path)
    assert window.load(str(bad)) is False
    [(title, problems)] = answers.errors
    assert title == "Cannot open bad.mbs.json"
    assert problems[0] == "model.bodies[0].mass: must be > 0, got -1"
    assert problems[1] == "model.joints[2].axis: must be a non-zero 3-vector"
    assert problems[2].startswith("model.drivers[0].expression: ")
    assert len(problems) == 3
    assert (doc.model.to_dict(), doc.path, doc.undo_stack.count(), doc.modified, window.windowTitle()) == before
    doc.undo_stack.undo()                      # the undo history still works on the kept project
    assert doc.model.to_dict() == solver.load_model(path).to_dict()


@pytest.mark.slow
def test_autosave_writes_recovery_and_a_clean_save_removes_it(qtbot, window, tmp_path, monkeypatch):
    app_settings.settings().setValue("autosave_minutes", 0.001)          # 60 ms
    saver = autosave.Autosave(window.document, window)
    path = tmp_path / "pendulum.mbs.json"
    path.write_bytes(open(os.path.join(SAMPLE_DIR, "pendulum.mbs.json"), "rb").read())
    window.load(str(path))
    assert saver.path == str(path) + ".recovery" and saver.timer.interval() == 60
    assert not saver.save_now()                                          # nothing to save yet
    body = next(iter(window.document.model.bodies))
    window.document.select(body)
    window.properties.editor("mass").spin.setValue(4.25)
    qtbot.waitUntil(lambda: os.path.exists(saver.path), timeout=3000)
    assert solver.load_model(saver.path).bodies[body].mass == 4.25
    assert path.read_bytes() == open(os.path.join(SAMPLE_DIR, "pendulum.mbs.json"), "rb").read()
    saver.timer.stop()
    assert window.save()
    assert not os.path.exists(saver.path) and not os.path.exists(saver.path + ".bak")


@pytest.mark.slow
def test_recovery_after_a_crash_is_offered_and_restores(window, answers, tmp_path):
    path = tmp_path / "pendulum.mbs.json"
    path.write_bytes(open(os.path.join(SAMPLE_DIR, "pendulum.mbs.json"), "rb").read())
    crashed = solver.load_model(path)
    body = next(iter(crashed.bodies))
    crashed.set_field(body, "mass", 7.0)
    solver.save_project(crashed, str(path) + ".recovery")                # left behind by a crash
    answers.confirm = True
    assert window.load(str(path))
    assert answers.asked[-1][0] == "Recover unsaved changes"
    doc = window.document
    assert doc.model.bodies[body].mass == 7.0 and doc.modified and doc.path == str(path)
    # declined: the recovery file is dropped and the saved project is what opens
    solver.save_project(crashed, str(path) + ".recovery")
    answers.confirm = False
    answers.save_changes = "discard"
    assert window.open_project(str(path))
    assert doc.model.bodies[body].mass == solver.load_model(path).bodies[body].mass
    assert not doc.modified and not os.path.exists(str(path) + ".recovery")


def test_an_older_recovery_file_is_ignored_and_untitled_projects_recover(window, answers, tmp_path):
    path = tmp_path / "pendulum.mbs.json"
    path.write_bytes(open(os.path.join(SAMPLE_DIR, "pendulum.mbs.json"), "rb").read())
    solver.save_project(solver.load_model(path), str(path) + ".recovery")
    os.utime(str(path) + ".recovery", (1, 1))                           # older than the project
    n = len(answers.asked)
    assert window.load(str(path)) and len(answers.asked) == n
    untitled = autosave.recovery_path("")
    assert untitled == os.path.join(str(tmp_path), "recovery", "untitled.mbs.json")
    os.makedirs(os.path.dirname(untitled))
    solver.save_project(solver.load_model(path), untitled)
    window.document.new()
    assert window.autosave.offer_recovery(window)
    assert window.document.path == "" and window.document.modified
    assert len(window.document.model.bodies) == 1
