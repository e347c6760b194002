"""GUI part 2 — results: clicking a joint glyph plots its reactions (equal to
``Results.joint_reaction``), body and driver plots, pins, the time cursor and clicks in plots,
the animation (slider, play, frame step, trace, frames export, frame rate), plot exports, the
energy and diagnostics panels and the modes of Analysis ▸ Linearize."""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QPointF, Qt

import solver
from app import dialogs
from app.plots import LOG_FLOOR
from app.simulation import quaternion_matrix
from app.viewport.transforms import pose

SAMPLES = Path(__file__).resolve().parents[2] / "sample_models"
SLIDER_CRANK = SAMPLES / "slider_crank.mbs.json"
FOURBAR = SAMPLES / "fourbar.mbs.json"


@pytest.fixture(scope="module")
def crank_results():
    return solver.simulate(solver.load_model(str(SLIDER_CRANK)), t_end=0.2)


@pytest.fixture(scope="module")
def fourbar_results():
    return solver.simulate(solver.load_model(str(FOURBAR)), t_end=0.2)


def with_results(window, path, results):
    assert window.load(str(path))
    window.simulation.set_results(results)
    return results


def assert_pose(window, body, results, i):
    """The body's actor is where the results put the body at output ``i``."""
    scene = window.viewport.scene
    m = window.viewport.actor(body).GetUserMatrix()
    move = np.array([[m.GetElement(r, c) for c in range(4)] for r in range(4)])
    X = move @ scene.initial[body]
    assert np.allclose(X[:3, 3], results.body_position(body)[i], atol=1e-9)
    assert np.allclose(X[:3, :3], results.body_rotation(body)[i], atol=1e-9)


@pytest.mark.slow
def test_click_joint_glyph_plots_its_reactions(window, qtbot, monkeypatch):
    monkeypatch.setattr(dialogs, "show_run_failure", lambda parent, outcome: pytest.fail(outcome.message))
    assert window.load(str(SLIDER_CRANK))
    with qtbot.waitSignal(window.simulation.results_changed, timeout=20000):
        window.run_simulation(t_end=0.2)
    results = window.simulation.results
    assert results is not None and len(results.t) == 41
    window.player.pause()          # it plays after the run; the glyph is picked at its initial position
    window.player.set_frame(0)
    vp = window.viewport
    vp.set_view("front")
    vp.render()
    joint = "crank_rod"
    pos = vp.project(window.document.model.joints[joint].origin)
    assert vp.vtk_widget.rect().contains(pos)
    qtbot.mouseClick(vp.vtk_widget, Qt.MouseButton.LeftButton, pos=pos)
    assert window.document.selection == joint
    plots = window.plots
    F, T = results.joint_reaction(joint)
    for i, axis in enumerate("xyz"):
        x, y = plots.curve_data(f"{joint} F{axis}")
        assert np.array_equal(x, results.t) and np.allclose(y, F[:, i], rtol=0, atol=0)
        assert np.allclose(plots.curve_data(f"{joint} T{axis}")[1], T[:, i], rtol=0, atol=0)
    assert np.allclose(plots.curve_data(f"{joint} |F|")[1], np.linalg.norm(F, axis=1))
    # Joint axes.
    plots.set_reaction_frame("joint")
    Fj, Tj = results.joint_reaction(joint, frame="joint")
    assert np.allclose(plots.curve_data(f"{joint} Fy")[1], Fj[:, 1], rtol=0, atol=0)
    assert np.allclose(plots.curve_data(f"{joint} Tz")[1], Tj[:, 2], rtol=0, atol=0)


@pytest.mark.slow
def test_body_plots_pins_and_overlay(window, crank_results):
    r = with_results(window, SLIDER_CRANK, crank_results)
    window.tree.setCurrentItem(window.tree.item("piston"))
    plots = window.plots
    assert np.allclose(plots.curve_data("piston rx")[1], r.body_position("piston")[:, 0])
    assert np.allclose(plots.curve_data("piston vx")[1], r.body_velocity("piston")[:, 0])
    assert np.allclose(plots.curve_data("piston ax")[1], r.body_acceleration("piston")[:, 0])
    plots.pin()
    window.tree.setCurrentItem(window.tree.item("cylinder"))
    assert plots.shown() == ["piston", "cylinder"]
    assert "piston rx" in plots.curves and "cylinder Fx" in plots.curves  # overlaid
    window.document.select("")  # pinned curves stay
    assert "piston rx" in plots.curves and "cylinder Fx" not in plots.curves
    plots.clear_pins()
    assert plots.curves == {}


def test_driver_plot(window, fourbar_results):
    r = with_results(window, FOURBAR, fourbar_results)
    window.document.select("crank_drive")
    x, y = window.plots.curve_data("crank_drive")
    assert np.array_equal(x, r.t) and np.allclose(y, r.driver_force("crank_drive"))


def test_slider_places_bodies_and_moves_cursors(window, qtbot, crank_results):
    r = with_results(window, SLIDER_CRANK, crank_results)
    bar, player = window.animation_bar, window.player
    assert bar.slider.maximum() == len(r.t) - 1
    i = 23
    bar.slider.setValue(i)
    assert player.index == i and player.time == pytest.approx(r.t[i])
    for body in r.body_names:
        assert_pose(window, body, r, i)
    for panel in (window.plots, window.energy, window.diagnostics):
        assert all(c.value() == pytest.approx(r.t[i]) for c in panel.cursors)
    # Frame steps and seeking by time.
    bar.forward_button.click()
    assert player.index == i + 1
    bar.back_button.click()
    bar.back_button.click()
    assert player.index == i - 1
    player.seek(0.1 + 1e-4)
    assert player.index == int(np.searchsorted(r.t, 0.1 + 1e-4) - 1)
    assert_pose(window, "rod", r, player.index)


def test_click_in_a_plot_moves_the_animation(window, qtbot, crank_results):
    r = with_results(window, SLIDER_CRANK, crank_results)
    window.energy_dock.show()
    window.energy_dock.raise_()
    window.resizeDocks([window.energy_dock], [320], Qt.Orientation.Vertical)
    qtbot.wait(50)
    panel = window.energy
    plot = panel.plots[0]
    plot.setXRange(0.0, 0.2, padding=0)
    qtbot.wait(50)
    scene_pos = plot.vb.mapViewToScene(QPointF(0.15, float(np.mean(plot.vb.viewRange()[1]))))
    widget_pos = panel.graphics.mapFromScene(scene_pos)
    qtbot.mouseClick(panel.graphics.viewport(), Qt.MouseButton.LeftButton, pos=widget_pos)
    assert window.player.time == pytest.approx(0.15, abs=0.01)
    assert_pose(window, "crank", r, window.player.index)


@pytest.mark.slow
def test_play_loop_speed_and_frame_rate(window, qtbot, crank_results):
    r = with_results(window, SLIDER_CRANK, crank_results)
    player, bar = window.player, window.animation_bar
    bar.speed.setCurrentIndex(bar.speed.findData(0.5))
    assert player.speed == 0.5
    player.frame_times.clear()
    bar.play_button.click()
    assert player.playing
    qtbot.wait(600)
    assert 0 < player.index
    bar.play_button.click()
    assert not player.playing
    fps = player.fps()          # measured and shown, not asserted: a frame rate is a speed, not a test
    print(f"slider-crank playback: {fps:.0f} frames/s ({1e3 / fps:.1f} ms per frame)")
    assert fps > 0
    # Without loop, playback stops at the end (the timeout bounds a hang, on any machine load).
    bar.loop.setChecked(False)
    bar.speed.setCurrentIndex(bar.speed.findData(10.0))
    player.play()
    qtbot.waitUntil(lambda: not player.playing, timeout=30000)
    assert player.index == len(r.t) - 1


@pytest.mark.slow
def test_trace_screenshot_and_frame_export(window, tmp_path, crank_results, monkeypatch):
    r = with_results(window, SLIDER_CRANK, crank_results)
    bar, player = window.animation_bar, window.player
    bar.trace.setCurrentIndex(bar.trace.findData("rod"))
    player.set_frame(10)
    assert np.allclose(player.trace_path(), r.body_position("rod")[:11])
    shot = tmp_path / "shot.png"
    monkeypatch.setattr(dialogs, "save_file_path", lambda *a, **k: str(shot))
    bar.screenshot_button.click()
    assert shot.exists() and shot.stat().st_size > 1000
    count = player.export_frames(str(tmp_path / "frames"), every=10)
    assert count == 5 and len(os.listdir(tmp_path / "frames")) == 5
    assert player.index == 10


@pytest.mark.slow
def test_plot_exports(window, tmp_path, crank_results):
    with_results(window, SLIDER_CRANK, crank_results)
    panel = window.energy
    panel.export_png(str(tmp_path / "e.png"))
    panel.export_svg(str(tmp_path / "e.svg"))
    panel.export_csv(str(tmp_path / "e.csv"))
    assert (tmp_path / "e.png").stat().st_size > 1000
    assert (tmp_path / "e.svg").read_text(encoding="utf-8").lstrip().startswith("<?xml")
    rows = (tmp_path / "e.csv").read_text(encoding="utf-8").splitlines()
    assert rows[0].split(",")[:3] == ["t [s]", "kinetic [J]", "potential [J]"] and len(rows) == 42
    window.diagnostics.export_csv(str(tmp_path / "d.csv"))  # two time axes (outputs, steps)
    assert "step size" in (tmp_path / "d.csv").read_text(encoding="utf-8").splitlines()[0]


@pytest.mark.slow
def test_energy_and_diagnostics_panels(window, crank_results):
    r = with_results(window, SLIDER_CRANK, crank_results)
    e = window.energy
    assert np.allclose(e.curve_data("kinetic")[1], r.energy["kinetic"])
    assert np.allclose(e.curve_data("total")[1], r.energy["total"])
    drift = e.curve_data("drift")[1]
    assert drift[0] == 0 and np.abs(drift).max() < 1e-3
    d = window.diagnostics
    assert np.allclose(d.curve_data("constraint violation")[1], np.maximum(r.constraint_violation, LOG_FLOOR))
    assert np.allclose(d.curve_data("conditioning")[1], r.conditioning)
    assert np.allclose(d.curve_data("step size")[0], r.step_sizes[0])
    assert set(d.curve_data("partition")[1]) <= {0.0, 1.0, 2.0, 3.0}


@pytest.mark.slow
def test_linearize_lists_modes_and_animates_one(window, qtbot, pendulum):
    window.document.set_model(pendulum)  # hanging: f = √(m g d / I_O) / 2π
    window.actions["linearize"].trigger()
    modes = window.modes
    lin = modes.linearization
    assert modes.table.rowCount() == len(lin.frequencies_hz) >= 1
    assert float(modes.table.item(0, 1).text()) == pytest.approx(lin.frequencies_hz[0], rel=1e-5)
    assert lin.frequencies_hz[0] == pytest.approx(np.sqrt(2.0 * 9.81 * 0.5 / (0.17 + 2.0 * 0.25)) / (2 * np.pi),
                                                  rel=1e-6)
    modes.select_mode(0)
    assert modes._timer.isActive()
    # Half a cycle moves the bodies along the mode; s = 0 is the linearization state.
    poses = modes.pose_at(0.0)
    body = modes.body_names[0]
    assert np.allclose(poses[body][0], lin.q[0:3])
    assert np.allclose(poses[body][1], quaternion_matrix(lin.q[3:7]))
    moved = modes.pose_at(1.0)  # a swing about the pivot (linear: tangent, not arc)
    assert abs(moved[body][0][0]) > 0.02
    R = moved[body][1]
    assert np.allclose(R @ R.T, np.eye(3)) and np.allclose(R @ [0.0, -0.5, 0.0], moved[body][0], atol=0.015)  # to first order
    qtbot.wait(60)
    assert window.viewport.actor("bob").GetUserMatrix() is not None
    modes.stop_button.click()
    assert not modes._timer.isActive()
    m = window.viewport.actor("bob").GetUserMatrix()          # back at the initial pose
    assert np.allclose([[m.GetElement(r, c) for c in range(4)] for r in range(4)], np.eye(4))


def test_quaternion_matrix_matches_the_viewport_one():
    from app.viewport.transforms import quat_to_matrix
    q = np.array([0.9, 0.1, -0.3, 0.2])
    R = quaternion_matrix(q)
    assert np.allclose(R, quat_to_matrix(q)) and np.allclose(R @ R.T, np.eye(3))
    assert np.allclose(pose([1, 2, 3], R)[:3, :3], R)
