"""solver.check_model: Grübler count, rank-based DOF, redundant constraints in joint terms, over- and
under-driving — numbers checked against hand counts (docstrings)."""
from __future__ import annotations

import numpy as np
import pytest

import solver
from test_nonunique_components import OUT_OF_PLANE_REVOLUTE, driven_slider_crank, sample, spatial_fourbar
from test_reliability_solver import bricard


def test_slider_crank_sample():
    """3 moving bodies: 18 freedoms; 3 revolutes (5 equations each) + 1 prismatic (5): 20 equations.
    Grübler 18 − 20 = −2.  The loop is planar, so it moves with 1 DOF: rank Φ_q = 17 of the 20 joint
    rows (+ 3 normalization rows of the 21 coordinates): DOF = 21 − 20 = 1, 3 redundant equations —
    the out-of-plane force and the two out-of-plane moments the planar loop carries twice."""
    c = solver.check_model(sample("slider_crank"))
    assert (c.bodies, c.freedoms, sum(c.joint_equations.values())) == (3, 18, 20)
    assert c.joint_equations == {"crank_pin": 5, "crank_rod": 5, "rod_piston": 5, "cylinder": 5}
    assert (c.grubler, c.grubler_mobility, c.dof, c.mobility, c.redundant) == (-2, -2, 1, 1, 3)
    assert c.mobility == c.grubler_mobility + c.redundant
    assert len(c.redundant_equations) == 3
    assert c.redundant_joints == ["crank_pin", "crank_rod", "rod_piston", "cylinder"]
    assert c.nonunique_components["crank_pin"] == OUT_OF_PLANE_REVOLUTE
    # drawn at dead centre (crank along the slide): the piston is momentarily at rest
    assert c.overdriven == [] and not c.underdriven and c.moving_joints == ["crank_pin", "crank_rod", "rod_piston"]
    assert c.ok and c.assembled
    assert "Grübler (Kutzbach) count: 18 body freedoms (3 moving bodies) − 20 joint equations = -2." in c.messages
    assert ("Out-of-plane force z and out-of-plane moment x, y of crank_pin are not unique." in c.messages)
    assert c.messages[-1] == "No drivers: a dynamic run in 1 degree of freedom."
    # the run's partition agrees: one independent coordinate
    res = solver.simulate(sample("slider_crank"), t_end=0.01)
    assert any(e["message"].startswith("QR partition, 1 independent coordinates") for e in res.events)


def test_driven_slider_crank_is_fully_driven():
    """One driver more: Grübler 18 − 20 − 1 = −3, DOF 0 (kinematic), mobility still 1."""
    c = solver.check_model(driven_slider_crank())
    assert (c.grubler, c.grubler_mobility, c.dof, c.mobility, c.redundant) == (-3, -2, 0, 1, 3)
    assert c.overdriven == [] and not c.underdriven and c.moving_joints == []
    assert "crank_drive" not in c.nonunique_components
    assert c.messages[-1] == "Fully driven: a kinematic analysis (the drivers fix every degree of freedom)."


def test_fourbar_of_revolutes():
    """The four-bar sample without its driver: 4 revolutes, 20 equations on 3 bodies: Grübler −2 in
    3D; rank DOF 1; 3 redundant equations, all four joints in the loop."""
    m = sample("fourbar")
    m.remove("crank_drive")
    c = solver.check_model(m)
    assert (c.grubler, c.dof, c.mobility, c.redundant) == (-2, 1, 1, 3)
    assert c.redundant_joints == ["A", "B", "C", "D"]
    assert c.nonunique_components == {j: OUT_OF_PLANE_REVOLUTE for j in "ABCD"}


def test_spatial_fourbar_has_no_redundancy():
    """RSUR: 18 − (5 + 3 + 4 + 5) = 1 = rank DOF; nothing redundant."""
    c = solver.check_model(spatial_fourbar())
    assert (c.grubler, c.dof, c.mobility, c.redundant) == (1, 1, 1, 0)
    assert c.redundant_joints == [] and c.nonunique_components == {} and c.ok


def test_two_drivers_on_a_one_dof_mechanism_are_over_driven():
    """The four-bar sample (crank driven) with its rocker driven too: 1 DOF for 2 drivers — each
    driver's row depends on the joints and the other driver.  Grübler 18 − 20 − 2 = −4."""
    m = sample("fourbar")
    m.add_driver("rocker_drive", "D", "0")
    c = solver.check_model(m)
    assert c.grubler == -4 and c.dof == 0 and c.mobility == 1
    assert c.overdriven == ["crank_drive", "rocker_drive"] and not c.ok
    assert c.messages[0].startswith("Over-driven: crank_drive, rocker_drive — each of these drivers depends")
    # with the extra self-stress through the drivers, their forces are not unique either
    assert c.nonunique_components["rocker_drive"] == ["driver force"]


def test_conflicting_drivers_do_not_assemble_and_are_over_driven():
    """Crank at 0 and rocker at 0.1 rad at t = 0: no configuration satisfies both."""
    m = sample("fourbar")
    m.add_driver("rocker_drive", "D", "0.1")
    c = solver.check_model(m)
    assert not c.assembled and c.overdriven == ["crank_drive", "rocker_drive"]
    assert c.messages[0].startswith("the model cannot be assembled") and "rocker_drive" in c.messages[0]
    assert c.messages[0].endswith("— the counts below are at the drawn configuration")


def test_a_driver_repeating_another_is_a_model_error():
    """Two drivers on one joint coordinate are refused by the model check (the field is named)."""
    m = driven_slider_crank()
    m.add_driver("again", "crank_pin", "15*t")
    with pytest.raises(solver.ModelError, match="driver 'again'.joint: coordinate rotation of joint 'crank_pin' "
                                                "is already driven by 'crank_drive'"):
        solver.check_model(m)


def test_under_driven_names_the_joints_that_still_move():
    """A double pendulum (2 DOF) with its first joint driven: DOF 1 left, only the second joint moves."""
    m = solver.Model(name="double", gravity=(0, -9.81, 0))
    m.add_body("upper", mass=1.0, inertia=(1e-3, 0.08, 0.08), position=(0.5, 0, 0))
    m.add_body("lower", mass=1.0, inertia=(1e-3, 0.08, 0.08), position=(1.5, 0, 0))
    m.add_joint("shoulder", "revolute", "ground", "upper", origin=(0, 0, 0))
    m.add_joint("elbow", "revolute", "upper", "lower", origin=(1, 0, 0))
    m.add_driver("swing", "shoulder", "sin(t)")
    c = solver.check_model(m)
    assert (c.grubler, c.dof, c.mobility, c.redundant) == (1, 1, 2, 0)
    assert c.underdriven and c.moving_joints == ["elbow"] and c.ok
    assert c.messages[0].startswith("Under-driven: with its drivers the model keeps 1 degree of freedom "
                                    "(joints still moving: elbow)")


def test_bricard_mechanism():
    """Bricard: 5 bodies, 6 revolutes: Grübler 30 − 30 = 0, yet mobile: rank DOF 1, 1 redundant
    equation shared by all six joints (a spatial loop: no in-plane/out-of-plane words)."""
    c = solver.check_model(bricard())
    assert (c.grubler, c.dof, c.mobility, c.redundant) == (0, 1, 1, 1)
    assert c.redundant_joints == [f"J{k}" for k in range(1, 7)]
    assert not any("plane" in text for text in c.nonunique_messages.values())


def test_a_model_that_does_not_assemble_is_checked_as_drawn():
    m = solver.Model(name="cannot-assemble", gravity=(0, -9.81, 0))
    m.add_body("bar", mass=1.0, inertia=(1e-3, 0.08, 0.08), position=(0.5, 0, 0))
    m.add_joint("pivot", "revolute", "ground", "bar", origin=(0, 0, 0), axis=(0, 0, 1))
    m.add_joint("tie", "distance", "ground", "bar", origin=(0, 0.2, 0), origin2=(1, 0, 0), length=5.0)
    c = solver.check_model(m)
    assert not c.assembled and not c.ok
    assert c.messages[0].startswith("the model cannot be assembled")
    assert c.grubler == 0 and np.isfinite(c.dof)


def test_a_model_without_bodies_is_a_model_error():
    with pytest.raises(solver.ModelError, match="model.bodies: the model has no bodies"):
        solver.check_model(solver.Model(name="empty"))


@pytest.mark.parametrize("formulation", ["cartesian", "relative"])
def test_same_counts_in_both_formulations(formulation):
    """The rank is taken in the coordinates of the model's formulation: 21 Cartesian coordinates
    (20 joint + 3 normalization + 1 driver rows) or 3 relative ones (a tree of three joints, the cut
    joint's 5 rows + 1 driver row) — the same DOF 0, mobility 1 and 3 redundant equations."""
    m = sample("fourbar")
    m.settings.set("formulation", formulation)
    c = solver.check_model(m)
    assert (c.grubler, c.dof, c.mobility, c.redundant) == (-3, 0, 1, 3)
    assert c.redundant_joints == ["A", "B", "C", "D"]
    assert c.nonunique_components == {j: OUT_OF_PLANE_REVOLUTE for j in "ABCD"}
