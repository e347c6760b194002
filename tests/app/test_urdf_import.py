"""File ▸ Import… (URDF): the robot becomes a saved project that opens in the window, its mesh
drawn in the viewport; a refused URDF is reported naming the element and changes nothing."""
from __future__ import annotations

import numpy as np
import pytest
import trimesh

from app import dialogs
from app.viewport.shapes import body_shape
from conftest import run_in_window

ARM = """<robot name="two_link">
  <link name="base"/>
  <link name="upper"><inertial><origin xyz="0 0 -0.5"/><mass value="1"/>
    <inertia ixx="0.09" iyy="0.09" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
    <visual><geometry><mesh filename="package://arm_description/meshes/upper.stl"/></geometry>
      <material name="blue"><color rgba="0.2 0.4 0.9 1"/></material></visual></link>
  <link name="lower"><inertial><origin xyz="0 0 -0.5"/><mass value="1"/>
    <inertia ixx="0.09" iyy="0.09" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="upper"/><axis xyz="0 1 0"/>
    <limit lower="-2" upper="2" effort="50" velocity="3"/></joint>
  <joint name="elbow" type="continuous"><parent link="upper"/><child link="lower"/>
    <origin xyz="0 0 -1"/><axis xyz="0 1 0"/></joint>
</robot>
"""


@pytest.fixture
def urdf_files(tmp_path):
    meshes = tmp_path / "ws" / "arm_description" / "meshes"
    meshes.mkdir(parents=True)
    trimesh.creation.box(extents=(0.1, 0.1, 1.0)).export(meshes / "upper.stl")
    urdf = tmp_path / "ws" / "arm_description" / "arm.urdf"
    urdf.write_text(ARM)
    return urdf, tmp_path / "ws"


@pytest.mark.slow
def test_import_opens_the_robot_as_a_project(window, qtbot, answers, monkeypatch, tmp_path, urdf_files):
    urdf, workspace = urdf_files
    asked = []
    monkeypatch.setattr(dialogs, "open_file_path", lambda parent, title, folder="", file_filter="": str(urdf))
    monkeypatch.setattr(dialogs, "folder_path", lambda parent, title, folder="": asked.append(title) or str(workspace))
    answers.save_path = str(tmp_path / "arm.mbs.json")
    window.actions["import_urdf"].trigger()
    assert asked and "package://" in asked[0]
    doc = window.document
    assert doc.path == answers.save_path and not doc.modified
    assert list(doc.model.bodies) == ["upper", "lower"]
    shoulder = doc.model.joints["shoulder"]
    assert (shoulder.type, shoulder.lower_limit, shoulder.upper_limit) == ("revolute", -2.0, 2.0)
    assert doc.model.joints["elbow"].type == "revolute" and doc.model.joints["elbow"].lower_limit is None
    geometry = doc.model.bodies["upper"].geometry
    assert geometry["file"] == "arm_meshes/upper.stl" and np.allclose(geometry["color"], [0.2, 0.4, 0.9])
    # the viewport reads the written mesh (a box of 8 corners), not the fallback ball; the box is centred
    # on the link origin, which is 0.5 m above the CM (the body frame's origin)
    shape = body_shape(geometry, np.eye(4), 0.01, folder=str(tmp_path))
    assert shape.GetNumberOfPoints() < 100
    assert np.allclose(shape.GetBounds(), [-0.05, 0.05, -0.05, 0.05, 0.0, 1.0], atol=1e-6)
    assert not answers.errors
    # the imported model runs (the arm falls under gravity about y)
    outcome = run_in_window(window, qtbot)
    assert outcome.status == "ok" and len(outcome.results.t) > 1


def test_refused_urdf_is_reported_and_changes_nothing(window, answers, monkeypatch, tmp_path, pendulum):
    window.document.set_model(pendulum)
    bad = tmp_path / "bad.urdf"
    bad.write_text(ARM.replace("package://arm_description/meshes/upper.stl", "upper.stl")
                   .replace('<axis xyz="0 1 0"/>\n    <limit', '<axis xyz="0 1"/>\n    <limit'))
    monkeypatch.setattr(dialogs, "open_file_path", lambda parent, title, folder="", file_filter="": str(bad))
    answers.save_changes = "discard"
    answers.save_path = str(tmp_path / "bad.mbs.json")
    window.actions["import_urdf"].trigger()
    assert answers.errors == [("Cannot import bad.urdf", ["joint 'shoulder'.axis.xyz: expected 3 numbers, "
                                                          "got '0 1'"])]
    assert not (tmp_path / "bad.mbs.json").exists()
