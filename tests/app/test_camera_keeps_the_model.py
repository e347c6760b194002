"""The camera keeps the model in view (issue #31, item 11): a run whose body drives away is followed
from the start; choosing Follow later brings the body back into view; a body added outside the view
refits it; a joint's glyph stays smaller than the small link it joins, however large the scene."""
import numpy as np
import pytest
from PySide6.QtCore import Qt

import solver


def _in_view(window, point):
    return window.viewport.vtk_widget.rect().contains(window.viewport.project(point))


@pytest.fixture
def cart_results():
    """A cart coasting at 10 m/s for 1 s (10 m) beside a fixed post, no gravity."""
    m = solver.Model(name="cart", gravity=(0.0, 0.0, 0.0))
    m.add_body("post", mass=1.0, inertia=(0.1, 0.1, 0.1), geometry={"shape": "box", "size": [0.2, 1.0, 0.2]})
    m.add_joint("fixed", "fixed", "ground", "post")
    m.add_body("cart", mass=5.0, inertia=(0.1, 0.1, 0.1), position=(0.5, 0.0, 0.0), velocity=(10.0, 0.0, 0.0),
               geometry={"shape": "box", "size": [0.4, 0.2, 0.2]})
    return m, solver.simulate(m, t_end=1.0, output_step=0.05, codegen=False)


@pytest.fixture
def cart_shown(window, cart_results):
    """The cart's model open with its results (paused); the results."""
    model, results = cart_results
    window.document.set_model(model)
    window.simulation.set_results(results)
    window.player.pause()
    return results


def test_a_body_driving_away_is_followed(window, cart_shown):
    results, last = cart_shown, len(cart_shown.t) - 1
    assert window.animation_bar.follow.currentData() == "cart" and window.viewport.followed == "cart"
    window.player.set_frame(last)
    assert _in_view(window, results.body_position("cart")[last])


def test_choosing_follow_late_brings_the_body_back(window, cart_shown):
    results, last = cart_shown, len(cart_shown.t) - 1
    bar = window.animation_bar
    bar.follow.setCurrentIndex(0)                                   # none: the cart drives out of view
    window.player.set_frame(last)
    assert not _in_view(window, results.body_position("cart")[last])
    bar.follow.setCurrentIndex(bar.follow.findData("cart"))
    assert _in_view(window, results.body_position("cart")[last])


def test_a_body_added_out_of_view_refits(window, qtbot, pendulum):
    w = window
    w.document.set_model(pendulum)
    camera = w.viewport.renderer.GetActiveCamera()
    camera.Zoom(6.0)                                                # close up on the bob
    w.viewport.render()
    w.viewport.vtk_widget.setFocus()
    for _ in range(3):
        qtbot.keyClick(w, Qt.Key.Key_B, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: _in_view(w, w.document.model.bodies["body3"].position), timeout=3000)
    assert all(_in_view(w, b.position) for b in w.document.model.bodies.values())


def test_joint_glyphs_stay_smaller_than_small_links(window, pendulum):
    m = pendulum
    m.add_body("plate", mass=100.0, inertia=(100.0, 100.0, 100.0), position=(20.0, 0.0, 0.0),
               geometry={"shape": "box", "size": [40.0, 0.1, 40.0]})
    m.add_body("link", mass=0.01, inertia=(1e-5, 1e-5, 1e-5), position=(0.0, -1.05, 0.0),
               geometry={"shape": "box", "size": [0.01, 0.1, 0.01]})
    m.add_joint("hinge", "revolute", "bob", "link", origin=(0.0, -1.0, 0.0), axis=(0.0, 0.0, 1.0))
    window.document.set_model(m)
    bounds = np.array(window.viewport.scene.actor("hinge").GetBounds()).reshape(3, 2)
    assert np.ptp(bounds, axis=1).max() <= 0.1                       # the link's length
