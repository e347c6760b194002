"""Plots in the project's display units: with mm-kg-s and degrees, a body's position is plotted
in mm (1000 × the SI result), a joint angle in degrees, a reaction torque in N·mm; the axis labels,
the cursor read-out and the CSV export (header and values) say and use the same units; switching
back to SI redraws in SI."""
import csv
import math

import numpy as np
import pytest

import solver
from app.tree import SETTINGS_ITEM


@pytest.fixture
def swing(pendulum):
    pendulum.bodies["bob"].set("angular_velocity", (0.0, 0.0, 3.0))
    pendulum.bodies["bob"].set("velocity", (1.5, 0.0, 0.0))
    pendulum.settings.set("display_units", "mm-kg-s")
    pendulum.settings.set("display_angles", "deg")
    return pendulum, solver.simulate(pendulum, t_end=0.5)


def test_plots_readout_and_csv_in_display_units(window, swing, tmp_path):
    model, r = swing
    window.document.set_model(model)
    window.simulation.set_results(r)
    window.document.select("bob")
    plots = window.plots
    p = r.body_position("bob")
    t, x = plots.curve_data("bob rx")
    np.testing.assert_allclose(x, 1000.0 * p[:, 0], rtol=1e-15)
    np.testing.assert_allclose(plots.drawn_data("bob ry")[1], 1000.0 * p[:, 1], rtol=1e-15)
    axis = plots.rows["position"].getAxis("left")
    assert axis.labelUnits == "mm" and not axis.autoSIPrefix
    assert plots.unit_of("bob rx") == "mm" and plots.unit_of("bob vx") == "mm/s"
    assert plots.readout_at(plots.rows["position"], 0.25).count(" mm") == 3
    window.document.select("pivot")
    T = r.joint_reaction("pivot")[1]
    np.testing.assert_allclose(plots.curve_data("pivot Tz")[1], 1000.0 * T[:, 2], rtol=1e-12)
    assert plots.rows["torque"].getAxis("left").labelUnits == "N·mm"
    path = tmp_path / "plot.csv"
    plots.export_csv(str(path))
    rows = list(csv.reader(path.open(encoding="utf-8")))
    assert "pivot Tz [N·mm]" in rows[0] and "pivot Fx [N]" in rows[0]
    k = rows[0].index("pivot Tz [N·mm]")
    np.testing.assert_allclose(np.array(rows[1:], float)[:, k], 1000.0 * T[:, 2], rtol=1e-12)

    panel = window.custom_plots                                # a joint angle in degrees
    panel.add_tile(["joints.pivot.rotation"])
    angle = solver.output(model, "joints.pivot.rotation").evaluate(r, model)
    assert np.ptp(angle) > 0.5
    np.testing.assert_allclose(panel.curve_data("joints.pivot.rotation")[1], np.degrees(angle), rtol=1e-12)
    assert panel.plots[0].getAxis("left").labelUnits == "deg"
    panel.add_tile(["bodies.bob.position.y"], x="bodies.bob.position.x")       # a cross plot in mm
    assert panel.plots[1].getAxis("bottom").labelUnits == "mm"
    panel.set_cursor(0.25)
    readout = panel.readout_at(panel.plots[1], 0.25)
    x_mm, y_mm = (float(np.interp(0.25, r.t, 1000.0 * p[:, i])) for i in (0, 1))
    assert f"= ({x_mm:.6g}, {y_mm:.6g})" in readout
    path = tmp_path / "custom.csv"
    panel.export_csv(str(path))
    rows = list(csv.reader(path.open(encoding="utf-8")))
    assert rows[0] == ["t [s]", "joints.pivot.rotation [deg]", "bodies.bob.position.x [mm]",
                       "bodies.bob.position.y [mm]"]
    values = np.array(rows[1:], float)
    np.testing.assert_allclose(values[:, 1], angle * 180.0 / math.pi, rtol=1e-12)
    np.testing.assert_allclose(values[:, 2], 1000.0 * p[:, 0], rtol=1e-12)

    window.document.select(SETTINGS_ITEM)                      # back to SI: redrawn in SI
    window.properties.commit("display_units", "SI")
    window.properties.commit("display_angles", "rad")
    np.testing.assert_allclose(panel.curve_data("joints.pivot.rotation")[1], angle, rtol=1e-12)
    window.document.select("bob")
    np.testing.assert_allclose(plots.curve_data("bob rx")[1], p[:, 0], rtol=1e-15)
    assert plots.rows["position"].getAxis("left").autoSIPrefix
