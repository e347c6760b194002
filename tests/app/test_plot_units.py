"""Plots: round-off below 1e-9 of the run's scale is drawn as zero (the data keep it), every axis
has its unit (the driver torque's too), CSV headers carry units (plot export and Results.to_csv),
and moving the mouse over a plot reads its curves out at that time."""
import csv
from pathlib import Path

import numpy as np
import pytest

import solver
from app.plots import NOISE_FLOOR, noise_floor

SAMPLES = Path(__file__).resolve().parents[2] / "sample_models"


@pytest.fixture(scope="module")
def crank_results():
    return solver.simulate(solver.load_model(str(SAMPLES / "slider_crank.mbs.json")), t_end=0.2)


@pytest.fixture(scope="module")
def fourbar_results():
    return solver.simulate(solver.load_model(str(SAMPLES / "fourbar.mbs.json")), t_end=0.2)


def _show(window, sample, results, *names):
    assert window.load(str(SAMPLES / sample))
    window.simulation.set_results(results)
    for name in names:
        window.document.select(name)
        window.plots.pin()
    return window.plots


def test_noise_floor_function():
    y = np.array([1e-12, -3e-10, 2e-9, -5.0, 0.0])
    np.testing.assert_array_equal(noise_floor(y, 1.0), [0.0, 0.0, 2e-9, -5.0, 0.0])
    np.testing.assert_array_equal(noise_floor(y, 0.0), y)


@pytest.mark.slow
def test_round_off_torques_of_a_planar_model_are_drawn_as_zero(window, crank_results):
    r = crank_results
    plots = _show(window, "slider_crank.mbs.json", r, "crank_pin")
    # The run's scales, computed here from the results: forces, and torques with the forces' moment arm.
    F_scale = max(np.linalg.norm(r.joint_reaction(j)[0], axis=1).max() for j in r.joint_names)
    p = np.concatenate([r.body_position(b) for b in r.body_names])
    L = np.linalg.norm(p.max(axis=0) - p.min(axis=0))
    T_max = max(np.linalg.norm(r.joint_reaction(j)[1], axis=1).max() for j in r.joint_names)
    assert plots.scale("force") == pytest.approx(F_scale, rel=1e-15)
    assert plots.scale("torque") == pytest.approx(max(T_max, F_scale * L), rel=1e-15)
    assert 0 < T_max < 1e-10 < NOISE_FLOOR * plots.scale("torque")        # every torque is round-off
    F, T = r.joint_reaction("crank_pin")
    for i, axis in enumerate("xyz"):
        assert np.array_equal(plots.curve_data(f"crank_pin T{axis}")[1], T[:, i])    # the data keep it
        assert not np.any(plots.drawn_data(f"crank_pin T{axis}")[1])                  # drawn as zero
    assert np.array_equal(plots.drawn_data("crank_pin Fx")[1], F[:, 0])              # real forces stay
    assert np.abs(T[:, 2]).max() > 0


@pytest.mark.slow
def test_every_axis_has_its_unit(window, fourbar_results):
    r = fourbar_results
    plots = _show(window, "fourbar.mbs.json", r, "A", "crank_drive", "crank")
    units = {key: plot.getAxis("left").labelUnits or plot.getAxis("left").labelText
             for key, plot in plots.rows.items()}
    assert units == {"force": "N", "torque": "N·m", "driver N·m": "N·m", "position": "m", "velocity": "m/s",
                     "acceleration": "m/s²"}
    assert plots.rows["driver N·m"].titleLabel.text == "Driving torque"
    assert np.array_equal(plots.curve_data("crank_drive")[1], r.driver_force("crank_drive"))
    for panel in (window.energy, window.diagnostics):
        for key, plot in panel.rows.items():
            axis = plot.getAxis("left")
            assert key == "partition" or axis.labelUnits or axis.labelText, (panel.title, key)
            assert plot.getAxis("bottom").labelUnits == "s"


@pytest.mark.slow
def test_csv_headers_have_units(window, fourbar_results, tmp_path):
    plots = _show(window, "fourbar.mbs.json", fourbar_results, "A", "crank_drive")
    plots.export_csv(str(tmp_path / "p.csv"))
    with open(tmp_path / "p.csv", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    header = rows[0]
    assert header[0] == "t [s]" and "A Fx [N]" in header and "A Tz [N·m]" in header
    assert "crank_drive [N·m]" in header and len(rows) == 1 + len(fourbar_results.t)
    column = header.index("A Tz [N·m]")
    np.testing.assert_array_equal([float(row[column]) for row in rows[1:]], fourbar_results.joint_reaction("A")[1][:, 2])
    written = fourbar_results.to_csv(tmp_path / "solver")
    headers = {Path(p).name: open(p, encoding="utf-8").readline().strip() for p in written}
    assert headers["joint_A.csv"].startswith("t [s],F_x [N],F_y [N],F_z [N],T_x [N·m]")
    assert headers["body_crank.csv"].startswith("t [s],r_x [m]") and "a_z [m/s²]" in headers["body_crank.csv"]
    assert headers["energy.csv"].startswith("t [s],kinetic [J]")
    assert headers["drivers.csv"] == "t [s],crank_drive [N or N·m]"


@pytest.mark.slow
def test_cursor_read_out_follows_the_mouse(window, qtbot, fourbar_results):
    r = fourbar_results
    plots = _show(window, "fourbar.mbs.json", r, "A")
    window.plot_dock.show()
    plots.show()
    qtbot.waitExposed(plots.graphics)
    plot = plots.rows["force"]

    def settled():                                    # layout, axis widths and auto-range settle
        before = (plot.vb.sceneBoundingRect(), plot.vb.viewRange())
        qtbot.wait(50)
        return before == (plot.vb.sceneBoundingRect(), plot.vb.viewRange())
    qtbot.waitUntil(settled, timeout=5000)
    t = 0.1234
    y_mid = float(np.mean(plot.vb.viewRange()[1]))
    from PySide6.QtCore import QPointF
    scene_pos = plot.vb.mapViewToScene(QPointF(t, y_mid))
    qtbot.mouseMove(plots.graphics.viewport(), plots.graphics.mapFromScene(scene_pos))
    text = plots.readout.text()
    assert text.startswith("t = ")
    shown_t = float(text.split("t = ")[1].split(" s")[0])
    assert shown_t == pytest.approx(t, abs=2 * (plot.vb.viewRange()[0][1] - plot.vb.viewRange()[0][0])
                                    / plot.vb.width())                              # within 2 pixels
    Fx = np.interp(shown_t, r.t, r.joint_reaction("A")[0][:, 0])
    shown_Fx = float(text.split("A Fx = ")[1].split(" N")[0])
    assert shown_Fx == pytest.approx(Fx, rel=1e-5, abs=1e-5 * abs(Fx) + 1e-12) and "A |F| = " in text
    assert "A Fz = 0 N" in text                        # round-off, drawn (and read out) as zero
