"""File ▸ Import… (MuJoCo MJCF): dm_control's cart-pole and gymnasium's hopper become saved projects
that open in the window, their geoms drawn in the viewport, and run; a refused MJCF file is reported
with MuJoCo's message and changes nothing."""
from __future__ import annotations

import os

import numpy as np
import pytest

from app import dialogs
from app.viewport.shapes import body_shape
from conftest import run_in_window


@pytest.mark.slow
def test_dm_control_cartpole_opens_and_runs(window, qtbot, answers, monkeypatch, tmp_path):
    import dm_control
    source = os.path.join(os.path.dirname(dm_control.__file__), "suite", "cartpole.xml")
    monkeypatch.setattr(dialogs, "open_file_path", lambda parent, title, folder="", file_filter="": source)
    monkeypatch.setattr(dialogs, "folder_path", lambda *a, **k: pytest.fail("no package folder for MJCF"))
    answers.save_path = str(tmp_path / "cartpole.mbs.json")
    window.actions["import_urdf"].trigger()
    assert not answers.errors
    doc = window.document
    assert doc.path == answers.save_path and not doc.modified
    assert list(doc.model.bodies) == ["cart", "pole_1"]
    assert doc.model.joints["slider"].type == "prismatic" and doc.model.joints["hinge_1"].type == "revolute"
    geometry = doc.model.bodies["pole_1"].geometry
    assert geometry["file"] == "cartpole_meshes/pole_1.stl"
    # the pole's capsule (0.045 m radius, 1 m between the cap centres, the CM at its middle) is drawn
    shape = body_shape(geometry, np.eye(4), 0.01, folder=str(tmp_path))
    xmin, xmax, ymin, ymax, zmin, zmax = shape.GetBounds()
    assert np.isclose(zmax - zmin, 1.09, atol=1e-3) and np.isclose(xmax - xmin, 0.09, atol=1e-3)
    outcome = run_in_window(window, qtbot)
    assert outcome.status == "ok" and len(outcome.results.t) > 1


def test_refused_mjcf_is_reported_and_changes_nothing(window, answers, monkeypatch, tmp_path, pendulum):
    window.document.set_model(pendulum)
    bad = tmp_path / "bad.xml"
    bad.write_text("<mujoco><worldbody><body><joint type='spring'/><geom size='0.1'/></body></worldbody></mujoco>")
    monkeypatch.setattr(dialogs, "open_file_path", lambda parent, title, folder="", file_filter="": str(bad))
    answers.save_changes = "discard"
    answers.save_path = str(tmp_path / "bad.mbs.json")
    window.actions["import_urdf"].trigger()
    (title, problems), = answers.errors
    assert title == "Cannot import bad.xml" and "MuJoCo cannot read it" in problems[0] and "spring" in problems[0]
    assert not (tmp_path / "bad.mbs.json").exists()


@pytest.mark.slow
def test_gymnasium_hopper_opens_and_runs(window, qtbot, answers, monkeypatch, tmp_path):
    """A gymnasium model through the same path: its hinges keep MuJoCo's armature (1) and their
    limits as stops with MuJoCo's soft-limit reference (solver/io/mjcf_soft.py), its motors are
    inputs, its body meshes are drawn; the window runs it."""
    import gymnasium
    source = os.path.join(os.path.dirname(gymnasium.__file__), "envs", "mujoco", "assets", "hopper.xml")
    monkeypatch.setattr(dialogs, "open_file_path", lambda parent, title, folder="", file_filter="": source)
    answers.save_path = str(tmp_path / "hopper.mbs.json")
    window.actions["import_urdf"].trigger()
    assert not answers.errors
    doc = window.document
    assert doc.path == answers.save_path and not doc.modified
    thigh = doc.model.joints["thigh_joint"]
    assert thigh.armature == 1.0 and thigh.stops and thigh.upper_limit == 0.0
    assert thigh.stop_stiffness < 1e5        # mass-normalized (m/τ²), not the default stop
    assert list(doc.model.inputs) == ["actuator0", "actuator1", "actuator2"]
    assert doc.model.bodies["foot"].geometry["file"] == "hopper_meshes/foot.stl"
    outcome = run_in_window(window, qtbot)
    assert outcome.status == "ok" and len(outcome.results.t) > 1
