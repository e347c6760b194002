"""File ▸ Import… (MuJoCo MJCF): dm_control's cart-pole becomes a saved project that opens in the
window, its geoms drawn in the viewport, and runs; a refused MJCF file is reported with MuJoCo's
message and changes nothing."""
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
