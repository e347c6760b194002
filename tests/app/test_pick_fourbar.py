"""Issue 21's "done when": a four-bar built by picking in the viewport in ≤ 25 input actions.

From an empty project, with real key presses and mouse events only (qtbot): three bodies from
Model ▸ Add Body (Ctrl+B), the front view, the middle bar selected and dragged up, four revolute
joints placed by picking (Ctrl+J, first body, second body or empty space for ground, origin snapped
to a bar's end-face centre or, for the rocker's ground pivot, its CM), Run (F5).  Every key press, click and menu action counts one; a drag
counts two (press and release).  The model then has 1 DOF (``solver.check_model``) and moves.
"""
from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt
from real_input import CTRL, Actions

import solver

RISE = 0.3   # m the coupler is dragged up


def place_revolute(act, first, second, origin):
    """Ctrl+J, the first body's CM, the second body's CM (None: empty space = ground), the origin."""
    act.key(Qt.Key.Key_J, CTRL)
    act.click(act.window.document.model.bodies[first].position)
    act.click(QPoint(8, act.widget.height() - 8) if second is None
              else act.window.document.model.bodies[second].position)
    act.click(origin)


@pytest.mark.slow
def test_fourbar_by_picking_in_at_most_25_actions(window, qtbot):
    w, doc = window, window.document
    assert not doc.model.bodies
    act = Actions(w, qtbot)
    for _ in range(3):
        act.key(Qt.Key.Key_B, CTRL)                     # bars 0.5 m long along x, at x = 0, 0.6, 1.2
    assert list(doc.model.bodies) == ["body1", "body2", "body3"]
    act.trigger("view_front")
    w.viewport.render()

    act.click((0.6, 0.0, 0.0))                          # select the coupler, drag it up
    assert doc.selection == "body2"
    act.drag((0.6, 0.0, 0.0), (0.6, RISE, 0.0))
    x, y, z = doc.model.bodies["body2"].position
    pixel = 1.0 / _pixels_per_metre(w.viewport)
    assert abs(x - 0.6) <= pixel and abs(y - RISE) <= pixel and z == pytest.approx(0.0, abs=1e-9)
    w.viewport.render()

    b2 = np.array(doc.model.bodies["body2"].position)
    ends = {"A": (-0.25, 0.0, 0.0), "B": tuple(b2 - (0.25, 0, 0)), "C": tuple(b2 + (0.25, 0, 0)),
            "D": (1.2, 0.0, 0.0)}   # the rocker's CM (an end would make a symmetric trapezoid: at rest)
    place_revolute(act, "body1", None, ends["A"])
    place_revolute(act, "body1", "body2", ends["B"])
    place_revolute(act, "body2", "body3", ends["C"])
    place_revolute(act, "body3", None, ends["D"])
    joints = doc.model.joints
    assert [(j.body_i, j.body_j) for j in joints.values()] == [
        ("body1", "ground"), ("body1", "body2"), ("body2", "body3"), ("body3", "ground")]
    for joint, end in zip(joints.values(), ends.values()):
        assert joint.type == "revolute"
        assert joint.origin == pytest.approx(end, abs=1e-12)    # snapped to the feature
        assert joint.axis == pytest.approx((0.0, 0.0, 1.0), abs=1e-12)  # perpendicular to the screen

    check = solver.check_model(doc.model)
    assert check.dof == 1 and check.assembled

    w.actions["run"].setEnabled(True)
    with qtbot.waitSignal(w.simulation.finished, timeout=60000) as blocker:
        act.key(Qt.Key.Key_F5)
    outcome = blocker.args[0]
    assert outcome.status == "ok", outcome.message
    print(f"four-bar built and run in {act.count} actions")
    assert act.count <= 25

    results = outcome.results
    assert np.abs(results.constraint_violation).max() < 1e-6
    crank = results.body_position("body1")
    assert np.linalg.norm(crank - crank[0], axis=1).max() > 0.01   # it swings under gravity
    # A is fixed: the crank's point at A stays there (rigid-body check of the run)
    R = results.body_rotation("body1")
    a_local = np.array(ends["A"]) - crank[0]
    a_path = crank + np.einsum("tij,j->ti", R.reshape(-1, 3, 3), a_local)
    assert np.abs(a_path - np.array(ends["A"])).max() < 1e-6


def _pixels_per_metre(vp):
    return abs(vp.project((1.0, 0.0, 0.0)).x() - vp.project((0.0, 0.0, 0.0)).x())
