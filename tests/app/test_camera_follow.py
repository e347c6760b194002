"""Camera follow: with a body chosen in the animation bar's Follow box, the camera moves with the
body's CM, so the CM stays at the same screen pixel while the animation plays; without, it moves."""
from pathlib import Path

import numpy as np
import pytest

import solver

SLIDER_CRANK = Path(__file__).resolve().parents[2] / "sample_models" / "slider_crank.mbs.json"


@pytest.fixture(scope="module")
def crank_results():
    return solver.simulate(solver.load_model(str(SLIDER_CRANK)), t_end=0.2)


def _pixel(window, frame, body="piston"):
    window.player.set_frame(frame)
    cm = window.viewport.scene.current[body][:3, 3]
    p = window.viewport.project(cm)
    return np.array([p.x(), p.y()])


@pytest.mark.slow
def test_camera_follows_the_chosen_body(window, crank_results):
    assert window.load(str(SLIDER_CRANK))
    window.simulation.set_results(crank_results)
    window.player.pause()
    window.viewport.set_view("front")
    last = len(crank_results.t) - 1
    start = _pixel(window, 0)
    assert np.linalg.norm(_pixel(window, last) - start) > 5          # the piston moves on screen
    bar = window.animation_bar
    bar.follow.setCurrentIndex(bar.follow.findData("piston"))
    assert window.viewport.followed == "piston"
    anchored = _pixel(window, last)
    for frame in (0, 10, 25, last):
        assert np.linalg.norm(_pixel(window, frame) - anchored) <= 1.0
    moved = crank_results.body_position("piston")[last] - crank_results.body_position("piston")[0]
    assert np.linalg.norm(moved) > 0.01
    bar.follow.setCurrentIndex(0)                                      # none: the camera stays
    assert window.viewport.followed == ""
    assert np.linalg.norm(_pixel(window, 0) - anchored) > 5
