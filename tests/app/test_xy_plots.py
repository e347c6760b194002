"""Custom plots: x–y cross plots (a joint reaction against the joint angle) and tiled plots side by
side, checked against quantities computed independently from the run's body motion."""
import csv

import numpy as np
import pytest
from PySide6.QtCore import Qt

import solver

OMEGA0 = 3.0   # rad/s, initial swing of the 1 m pendulum


@pytest.fixture
def swing(pendulum):
    """The conftest pendulum swinging (0.5 m CM, 1 m long, 2 kg) and a 1 s run of it."""
    bob = pendulum.bodies["bob"]
    bob.set("angular_velocity", (0.0, 0.0, OMEGA0))
    bob.set("velocity", (0.5 * OMEGA0, 0.0, 0.0))      # ω × r of the CM 0.5 m below the pivot
    return pendulum, solver.simulate(pendulum, t_end=1.0)


def _window_with(window, swing):
    model, results = swing
    window.document.set_model(model)
    window.simulation.set_results(results)
    return window.custom_plots, results


def test_reaction_against_joint_angle(window, qtbot, swing):
    panel, r = _window_with(window, swing)
    panel.x_choice.setCurrentText("joints.pivot.rotation")
    panel.y_choice.setCurrentText("joints.pivot.reaction_force.y")
    qtbot.mouseClick(panel.new_tile_button, Qt.MouseButton.LeftButton)
    assert len(panel.plots) == 1 and id(panel.plots[0]) in panel.cross
    label = "joints.pivot.reaction_force.y vs joints.pivot.rotation"
    x, y = panel.curve_data(label)
    # Independent: the angle from the CM position, the reaction from Newton on the bob F = m (a − g).
    p, a = r.body_position("bob"), r.body_acceleration("bob")
    theta = np.arctan2(p[:, 0], -p[:, 1])
    assert np.abs(theta).max() > 0.8                                   # it really swings
    np.testing.assert_allclose(x, theta, atol=1e-8)
    np.testing.assert_allclose(y, 2.0 * (a[:, 1] + 9.81), rtol=1e-6, atol=1e-6)
    # Axes: the joint angle in rad along x, the force in N up.
    assert panel.plots[0].getAxis("bottom").labelUnits == "rad"
    assert panel.plots[0].getAxis("left").labelUnits == "N"
    # The animation time is a dot on the curve; the read-out gives (x, y) there.
    window.player.seek(0.5)
    dot_x, dot_y = panel.dots[label].getData()
    assert dot_x[0] == pytest.approx(np.interp(0.5, r.t, theta), abs=1e-8)
    assert dot_y[0] == pytest.approx(np.interp(0.5, r.t, y), rel=1e-9)
    assert label in panel.readout_at(panel.plots[0], 0.5)


def test_tiles_side_by_side_and_csv(window, qtbot, swing, tmp_path):
    panel, r = _window_with(window, swing)
    window.custom_dock.show()
    window.custom_dock.raise_()
    panel.add_tile(["joints.pivot.reaction_force.x", "joints.pivot.reaction_force.y"])
    panel.add_tile(["bodies.bob.velocity.x"], x="joints.pivot.rotation")
    panel.add_curve_to_last("bodies.bob.velocity.y", "joints.pivot.rotation")
    assert [len(ys) for _, ys in panel.tiles] == [2, 2] and len(panel.plots) == 2
    qtbot.waitUntil(lambda: panel.plots[1].sceneBoundingRect().width() > 0)
    left, right = (p.sceneBoundingRect() for p in panel.plots)
    assert left.right() <= right.left() + 1 and abs(left.top() - right.top()) < 1    # side by side
    assert id(panel.plots[0]) not in panel.cross                                       # against time
    path = tmp_path / "custom.csv"
    panel.export_csv(str(path))
    rows = list(csv.reader(path.open(encoding="utf-8")))
    assert rows[0] == ["t [s]", "joints.pivot.reaction_force.x [N]", "joints.pivot.reaction_force.y [N]",
                       "joints.pivot.rotation [rad]", "bodies.bob.velocity.x [m/s]", "bodies.bob.velocity.y [m/s]"]
    table = np.array(rows[1:], float)
    np.testing.assert_array_equal(table[:, 0], r.t)
    np.testing.assert_array_equal(table[:, 1], r.joint_reaction("pivot")[0][:, 0])
    np.testing.assert_array_equal(table[:, 5], r.body_velocity("bob")[:, 1])
    panel.clear_tiles()
    assert panel.plots == []
