"""Flexible bodies in the GUI: the beam drawn deformed during playback (node k at
r + A (x_k + s·u_k) from the results, s the deformation scale factor) and the modal-coordinates
panel (its curves are ``Results.modal_coordinates``)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import Qt

import solver
from app.screenshot import grab_window

ROOT = Path(__file__).resolve().parents[2]
FLEXIBLE = ROOT / "sample_models" / "fourbar_singular_flexible.mbs.json"
BEAM = "coupler"


@pytest.fixture(scope="module")
def flexible_results():
    return solver.simulate(solver.load_model(str(FLEXIBLE)), t_end=0.1)


def expected_nodes(model, results, i, scale):
    """Node points from the results alone: undeformed nodes evenly spaced from start to end (in the
    floating frame of t = 0), then r(t) + A(t) (x_k + scale·u_k(t))."""
    beam = model.flexible_bodies[BEAM]
    r, A = results.flexible_frame(BEAM)
    n = beam.elements + 1
    start, end = np.asarray(beam.start), np.asarray(beam.end)
    undeformed = start + np.outer(np.arange(n) / (n - 1), end - start)
    local = (undeformed - r[0]) @ A[0]
    u = np.array([results.node_displacement(BEAM, k)[i] for k in range(n)])
    return r[i] + (local + scale * u) @ A[i].T


@pytest.mark.slow
def test_flexible_beam_drawn_deformed_with_scale(window, flexible_results):
    res = flexible_results
    assert window.load(str(FLEXIBLE))
    window.simulation.set_results(res)
    model, player, scene = window.document.model, window.player, window.viewport.scene
    assert window.animation_bar.deformation.isEnabled()
    # Undeformed at the start (u = 0 in the initial state) and equal to the model's beam.
    assert np.allclose(scene.beam_points(BEAM), expected_nodes(model, res, 0, 1.0), atol=1e-12)
    i = len(res.t) - 1
    for scale in (1.0, 2000.0):
        window.animation_bar.deformation.setValue(scale)
        player.set_frame(i)
        assert player.deformation_scale == scale
        assert np.allclose(scene.beam_points(BEAM), expected_nodes(model, res, i, scale), rtol=0, atol=1e-12)
    # The scale is visible: the midpoint of the beam bends away from the straight chord.
    drawn = scene.beam_points(BEAM)
    chord = drawn[-1] - drawn[0]
    mid = drawn[len(drawn) // 2] - drawn[0]
    bend = np.linalg.norm(mid - (mid @ chord) / (chord @ chord) * chord)
    assert bend > 1e-3
    # Joints at the beam ride on its floating frame.
    r, A = res.flexible_frame(BEAM)
    X = scene.current[BEAM]
    assert np.allclose(X[:3, 3], r[i]) and np.allclose(X[:3, :3], A[i])
    window.simulation.set_results(None)
    assert np.allclose(scene.beam_points(BEAM), expected_nodes(model, res, 0, 0.0), atol=1e-12)


@pytest.mark.slow
def test_modal_coordinates_panel_curves_equal_results(window, qtbot, flexible_results, screenshots_dir):
    res = flexible_results
    assert window.load(str(FLEXIBLE))
    window.simulation.set_results(res)
    panel = window.modal
    a = res.modal_coordinates(BEAM)
    assert a.shape[1] == 2
    for k in range(a.shape[1]):
        x, y = panel.curve_data(f"{BEAM} a{k + 1}")
        assert np.array_equal(x, res.t) and np.array_equal(y, a[:, k])
    window.player.set_frame(5)
    assert all(c.value() == pytest.approx(res.t[5]) for c in panel.cursors)
    # Screenshot for docs/screenshots: the panel with the beam drawn deformed (×300) at t = 0.06 s.
    window.resize(1280, 860)
    window.viewport.set_view("front")
    window.animation_bar.deformation.setValue(300.0)
    window.player.seek(0.06)
    window.modal_dock.show()
    window.modal_dock.raise_()
    window.resizeDocks([window.modal_dock], [300], Qt.Orientation.Vertical)
    qtbot.wait(80)
    assert grab_window(window, window.viewport).save(str(screenshots_dir / "modal_coordinates_panel.png"))
    # A rigid model: no curves, a clear note.
    window.simulation.set_results(solver.simulate(solver.load_model(str(FLEXIBLE.with_name("pendulum.mbs.json"))),
                                                  t_end=0.05))
    assert panel.curves == {} and "no flexible" in panel.info.text()
