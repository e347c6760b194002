"""Mass properties from a body's STL mesh through the property editor's density tool, against closed
forms: a box (exact) and a cylinder mesh compared with the regular n-gon prism it really is."""
import math

import numpy as np
import pytest
import trimesh
from PySide6.QtCore import Qt

import solver
from app.inertia import mesh_mass_properties
from solver.math.rotations import rotation_matrix
from solver.model.fields import inertia_matrix

DENSITY = 7850.0
SECTIONS = 64


def _project(tmp_path, mesh, orientation=None, scale=1.0, suffix="stl"):
    """A project file next to ``part.stl`` (or .obj) whose body 'part' draws it (relative path)."""
    mesh.export(tmp_path / f"part.{suffix}")
    m = solver.Model(name="meshes")
    m.add_body("part", mass=1.0, inertia=(1.0, 1.0, 1.0), position=(0.3, 0.2, 0.1), orientation=orientation,
               geometry={"shape": "mesh", "file": f"part.{suffix}", "scale": scale})
    m.add_joint("pin", "revolute", "ground", "part", origin=(0.0, 0.0, 0.0))
    path = tmp_path / "meshes.mbs.json"
    m.save(str(path))
    return path


def _apply_tool(window, qtbot, path):
    window.document.open(str(path))
    window.document.select("part")
    props = window.properties
    assert props.inertia_button.isEnabled()
    props.density.set_si_value(DENSITY)
    qtbot.mouseClick(props.inertia_button, Qt.MouseButton.LeftButton)
    return window.document.model.bodies["part"], props


def _principal(body):
    return np.linalg.eigvalsh(inertia_matrix(list(body.inertia)))


def test_box_mesh_mass_cm_and_inertia(window, qtbot, tmp_path):
    a, b, c = 0.2, 0.1, 0.05
    centre = np.array([0.03, -0.02, 0.01])              # mesh origin is not its centre of mass
    box = trimesh.creation.box(extents=(a, b, c))
    box.apply_translation(centre)
    q = [math.cos(0.3), 0.0, 0.0, math.sin(0.3)]       # body turned 0.6 rad about z
    body, props = _apply_tool(window, qtbot, _project(tmp_path, box, orientation=q))
    m = DENSITY * a * b * c
    assert body.mass == pytest.approx(m, rel=1e-6)
    # Body axes = mesh axes: the box's axes, so the tensor is diagonal and equals the closed form.
    expected = np.diag([m * (b * b + c * c) / 12, m * (a * a + c * c) / 12, m * (a * a + b * b) / 12])
    assert np.allclose(inertia_matrix(list(body.inertia)), expected, rtol=1e-6, atol=1e-12 * m)
    # The CM moved onto the mesh's centre; the mesh stays where it was drawn.
    R = rotation_matrix(np.array(q))
    assert body.position == pytest.approx(list(np.array([0.3, 0.2, 0.1]) + R @ centre), rel=1e-6)   # STL stores float32
    assert body.geometry["offset"] == pytest.approx(list(-centre), rel=1e-6)
    assert props.error("inertia") == ""
    # One undoable step restores everything.
    window.document.undo_stack.undo()
    body = window.document.model.bodies["part"]
    assert (body.mass, body.position) == (1.0, [0.3, 0.2, 0.1]) and "offset" not in body.geometry


@pytest.mark.parametrize("suffix", ["stl", "obj"])
def test_cylinder_mesh_against_the_prism_closed_form(window, qtbot, tmp_path, suffix):
    r, length, scale = 0.04, 0.3, 2.0                  # mesh in half size, scaled by 2 in the model
    cylinder = trimesh.creation.cylinder(radius=r / scale, height=length / scale, sections=SECTIONS)
    body, _ = _apply_tool(window, qtbot, _project(tmp_path, cylinder, scale=scale, suffix=suffix))
    # A regular n-gon of circumradius r: area n r² sin(2π/n)/2, polar moment per unit area
    # r² (1 + 2 cos²(π/n))/6 (→ r²/2 of the circle as n → ∞).
    n = SECTIONS
    m = DENSITY * length * n * r * r * math.sin(2 * math.pi / n) / 2
    axial = m * r * r * (1 + 2 * math.cos(math.pi / n) ** 2) / 6
    transverse = axial / 2 + m * length * length / 12
    assert body.mass == pytest.approx(m, rel=1e-6)
    assert _principal(body) == pytest.approx(sorted([axial, transverse, transverse]), rel=1e-6)
    assert body.position == pytest.approx([0.3, 0.2, 0.1], abs=1e-7)   # centred mesh: CM unchanged
    # The tessellation error against the true cylinder is what the prism form accounts for.
    assert m == pytest.approx(DENSITY * math.pi * r * r * length, rel=2e-3)


def test_open_mesh_gets_a_clear_message(window, qtbot, tmp_path):
    box = trimesh.creation.box(extents=(0.1, 0.1, 0.1))
    box.update_faces(np.arange(len(box.faces)) > 1)     # drop one side: two triangles
    body, props = _apply_tool(window, qtbot, _project(tmp_path, box))
    assert body.mass == 1.0                                                 # unchanged
    assert "part.stl" in props.error("inertia") and "not watertight" in props.error("inertia")
    assert window.document.undo_stack.count() == 0
    with pytest.raises(ValueError, match="nope.stl' not found"):
        mesh_mass_properties(str(tmp_path / "nope.stl"), 1.0, DENSITY)


def test_a_mesh_chosen_by_its_absolute_path_is_kept_relative_to_the_project(window, qtbot, tmp_path):
    path = _project(tmp_path, trimesh.creation.box(extents=(0.1, 0.1, 0.1)))
    (tmp_path / "meshes").mkdir()
    trimesh.creation.box(extents=(0.2, 0.1, 0.1)).export(tmp_path / "meshes" / "other.stl")
    window.document.open(str(path))
    window.document.select("part")
    props = window.properties
    assert props.commit("geometry", {"shape": "mesh", "file": str(tmp_path / "meshes" / "other.stl")})
    assert window.document.model.bodies["part"].geometry["file"] == "meshes/other.stl"
    outside = tmp_path.parent / "outside.stl"                 # not in the project's folder: refused
    assert not props.commit("geometry", {"shape": "mesh", "file": str(outside)})
    assert "must be a path inside the folder of the file" in props.error("geometry")
    assert window.document.model.bodies["part"].geometry["file"] == "meshes/other.stl"
