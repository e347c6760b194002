"""Design points, links and mechanism templates (solver/model/design.py, solver/model/templates.py).

Mass properties of a link are checked against trimesh's integration of the same solid (an
independent formulation: divergence theorem over a triangulated surface); the four-bar and
slider–crank templates run through ``solver.simulate`` with its defaults and are compared with
their closed-form kinematics (Freudenstein's equation; the slider's position).
"""
import json
import math
import os
import sys

import numpy as np
import pytest
import trimesh

import solver
from solver.io.project import project_from_dict
from solver.math.rotations import rotation_matrix
from solver.model.model import model_from_dict
from solver.model.project_format import project_to_dict

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
from tools.freudenstein import angle_error, rocker_angle  # noqa: E402

RHO = 2700.0


def _link(section, width, height, wall, start=(0.0, 0.0, 0.0), end=(0.3, 0.0, 0.0)):
    m = solver.Model()
    m.add_point("P", start)
    m.add_point("Q", end)
    return m.add_link("L", "P", "Q", section=section, width=width, height=height, wall=wall, density=RHO)


def _mesh_properties(meshes):
    """Mass and CM inertia (diagonal) of solids ``meshes`` (body axes, CM at the origin) by trimesh."""
    total = trimesh.util.concatenate(meshes)
    total.density = RHO
    return total.mass, np.diag(total.moment_inertia)


def _along_x(mesh):
    """A trimesh solid made along z turned to lie along x."""
    mesh.apply_transform(trimesh.transformations.rotation_matrix(math.pi / 2, (0, 1, 0)))
    return mesh


@pytest.mark.parametrize("section, width, height, wall, meshes", [
    ("rectangle", 0.04, 0.01, 0.0, lambda L: [trimesh.creation.box((L, 0.04, 0.01))]),
    ("rectangle", 0.04, 0.03, 0.005, lambda L: [
        trimesh.creation.box((L, 0.04, 0.005), trimesh.transformations.translation_matrix((0, 0, s * 0.0125)))
        for s in (-1, 1)] + [
        trimesh.creation.box((L, 0.005, 0.02), trimesh.transformations.translation_matrix((0, s * 0.0175, 0)))
        for s in (-1, 1)]),
    ("round", 0.03, 0.01, 0.0, lambda L: [_along_x(trimesh.creation.cylinder(0.015, L, sections=512))]),
    ("round", 0.03, 0.01, 0.004, lambda L: [_along_x(trimesh.creation.annulus(0.011, 0.015, L, sections=512))]),
])
def test_link_mass_properties_match_the_integrated_solid(section, width, height, wall, meshes):
    link = _link(section, width, height, wall)
    mass, inertia = _mesh_properties(meshes(0.3))
    # a 512-gon's area is below the circle's by (2π/512)²/6 ≈ 2.5e-5 (relative)
    tol = 1e-4 if section == "round" else 1e-9
    assert link.mass == pytest.approx(mass, rel=tol)
    assert link.inertia[:3] == pytest.approx(inertia, rel=tol)
    assert link.inertia[3:] == [0.0, 0.0, 0.0]


def test_link_axes_position_and_geometry_follow_its_points():
    start, end = np.array([0.1, 0.2, 0.0]), np.array([0.1 + 0.3 * math.cos(0.7), 0.2 + 0.3 * math.sin(0.7), 0.0])
    link = _link("rectangle", 0.02, 0.01, 0.0, start, end)
    R = rotation_matrix(np.asarray(link.orientation))
    assert R[:, 0] == pytest.approx((end - start) / 0.3, abs=1e-12)
    assert R[:, 2] == pytest.approx([0, 0, 1], abs=1e-12)
    assert link.position == pytest.approx((start + end) / 2, abs=1e-15)
    assert link.geometry["size"] == pytest.approx([0.3, 0.02, 0.01], rel=1e-12)


def test_moving_a_point_moves_links_and_joints_on_it_and_derived_fields_are_refused():
    m = solver.build_template("four_bar")
    events = []
    m.subscribe(lambda *e: events.append(e[:4]))
    m.set_field("B", "position", [0.0, 0.12, 0.0])
    assert m.joints["pin_B"].origin == [0.0, 0.12, 0.0]
    assert m.bodies["crank"].geometry["size"][0] == pytest.approx(0.12)
    assert m.bodies["coupler"].geometry["size"][0] == pytest.approx(np.linalg.norm(
        np.subtract(m.points["C"].position, [0.0, 0.12, 0.0])))
    assert ("changed", "bodies", "crank", "position") in events and ("changed", "joints", "pin_B", "origin") in events
    with pytest.raises(solver.ModelError, match=r"joint 'pin_B'\.origin: follows its design points"):
        m.set_field("pin_B", "origin", [0, 0, 0])
    with pytest.raises(solver.ModelError, match=r"point 'B'\.position: .*a link needs a length"):
        m.set_field("B", "position", [0.0, 0.0, 0.0])          # onto A: the crank would vanish
    assert m.points["B"].position == [0.0, 0.12, 0.0] and m.joints["pin_B"].origin == [0.0, 0.12, 0.0]
    with pytest.raises(solver.ModelError, match=r"link 'crank'\.point_j: no point named 'Z'"):
        m.set_field("crank", "point_j", "Z")
    m.set_field("pin_B", "at_point", "D")                     # the origin follows another point
    assert m.joints["pin_B"].origin == [0.4, 0.0, 0.0] and ("changed", "joints", "pin_B", "origin") == events[-1]
    m.set_field("pin_B", "at_point", "B")
    m.rename("B", "B2")
    assert m.bodies["crank"].point_j == "B2" and m.joints["pin_B"].at_point == "B2"
    assert set(m.dependents("B2")) == {"crank", "coupler", "pin_B", "pin_C", "pivot_A", "crank_speed"}


def test_file_round_trip_and_versions():
    m = solver.build_template("slider_crank")
    data = json.loads(json.dumps(project_to_dict(m)))
    assert data["version"] == 2 and "mass" not in data["model"]["links"][0]
    again = project_from_dict(data)
    assert again == m and again.bodies["rod"].inertia == m.bodies["rod"].inertia
    data["version"] = 1
    with pytest.raises(solver.ModelError, match=r"model\.points: needs version 2"):
        project_from_dict(data)
    plain = solver.Model()
    plain.add_body("b", mass=1.0, inertia=(1, 1, 1))
    assert project_to_dict(plain)["version"] == 1 and "points" not in plain.to_dict()
    assert "at_point" not in project_to_dict(plain)["model"]["bodies"][0]
    bad = m.to_dict()
    bad["links"][0]["point_i"] = "nowhere"
    with pytest.raises(solver.ModelError, match=r"model\.links\[0\]\.point_i: no point named 'nowhere'"):
        model_from_dict(bad)


def test_template_parameters_are_validated_by_name():
    with pytest.raises(solver.ModelError, match=r"template 'four_bar'\.coupler: the links do not close"):
        solver.build_template("four_bar", coupler=0.05)
    with pytest.raises(solver.ModelError, match=r"template 'pendulum_chain'\.links: must be"):
        solver.build_template("pendulum_chain", links=0)


def x_axis_angle(results, body):
    R = results.body_rotation(body)
    return np.arctan2(R[:, 1, 0], R[:, 0, 0])


def test_four_bar_template_follows_freudenstein():
    m = solver.build_template("four_bar")
    r = solver.simulate(m, t_end=0.5, output_step=0.05)
    assert r.status == "ok"
    theta2 = x_axis_angle(r, "crank")
    assert np.unwrap(theta2) == pytest.approx(math.pi / 2 + 2 * math.pi * r.t, abs=1e-7)
    theta4 = x_axis_angle(r, "rocker")
    exact = rocker_angle(theta2, 0.1, 0.35, 0.3, 0.4, theta4[0])
    assert angle_error(theta4, exact) < 1e-6


def test_slider_crank_template_follows_its_closed_form():
    m = solver.build_template("slider_crank")
    r = solver.simulate(m, t_end=0.5, output_step=0.05)
    assert r.status == "ok"
    theta = math.pi / 4 + 2 * math.pi * r.t
    x = 0.1 * np.cos(theta) + np.sqrt(0.3 ** 2 - (0.1 * np.sin(theta)) ** 2)
    slider_start = r.body_position("slider")[:, 0] - 0.03       # its CM is half its 0.06 m ahead of C
    assert slider_start == pytest.approx(x, abs=1e-6)


def test_a_bad_file_names_each_bad_field_once():
    """Elements that refer to one that did not load are not reported again (the driver of a joint
    that was refused, the joints of a link that was)."""
    data = solver.build_template("four_bar").to_dict()
    data["links"][1]["width"] = -1
    data["joints"][0]["at_point"] = "Z"
    with pytest.raises(solver.ModelError) as info:
        model_from_dict(data)
    assert info.value.problems == ["model.links[1].width: must be > 0, got -1",
                                   "model.joints[0].at_point: no point named 'Z' (points: A, B, C, D)"]


def test_a_study_varies_design_points_and_link_sections_not_what_follows_them():
    from solver.study.spec import apply_edit, parameter_paths
    m = solver.build_template("four_bar")
    paths = parameter_paths(m)
    assert {"points.B.position[1]", "bodies.crank.width"} <= set(paths)
    assert "joints.pin_B.origin[0]" not in paths and "bodies.crank.mass" not in paths
    apply_edit(m, "points.B.position[1]", 0.11)
    assert m.joints["pin_B"].origin[1] == 0.11 and m.bodies["crank"].geometry["size"][0] == pytest.approx(0.11)


def test_a_link_pendulum_swings_at_the_compound_pendulum_frequency():
    """A link of length L and width w hanging from a pivot at its end: I_pivot = m (L²/3 + w²/12)
    (parallel axes), ω² = m g (L/2) / I_pivot — the link's derived inertia in the linearized dynamics."""
    L, w, h, rho = 0.4, 0.03, 0.01, 7850.0
    m = solver.build_template("pendulum_chain", links=1, angle=0.0, length=L, width=w, height=h, density=rho)
    lin = solver.linearize(m)
    mass = rho * L * w * h
    i_pivot = mass * (L ** 2 / 3 + w ** 2 / 12)
    assert lin.M[0, 0] == pytest.approx(i_pivot, rel=1e-12)
    assert lin.frequencies_hz[0] == pytest.approx(math.sqrt(9.81 * L / 2 * mass / i_pivot) / (2 * math.pi), rel=1e-9)


def test_template_links_have_the_parameter_lengths_and_the_mechanisms_their_mobility():
    m = solver.build_template("double_wishbone", lower_arm=0.36, upper_arm=0.28, inner_spacing=0.24, upright=0.25)
    assert [m.bodies[n].length for n in ("lower_arm", "upper_arm", "upright")] == pytest.approx([0.36, 0.28, 0.25],
                                                                                              rel=1e-12)
    assert solver.check_model(m).dof == 1
    chain = solver.build_template("pendulum_chain", links=4)
    assert solver.check_model(chain).dof == 4
    assert solver.check_model(solver.build_template("slider_crank")).dof == 0     # driven


def test_a_link_in_a_file_holds_only_its_declared_fields():
    data = solver.build_template("four_bar").to_dict()
    data["links"][0]["mass"] = 3.0
    with pytest.raises(solver.ModelError, match=r"model\.links\[0\]: unknown field 'mass'"):
        model_from_dict(data)
