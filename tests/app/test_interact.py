"""Simulate ▸ Interact through the real widgets: the toggle starts a session, a mouse drag on a body
in the viewport pulls it toward the cursor, Pause stops time, Step advances one frame, Keep as
Results makes the session the window's results, which plot like any run's."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest

import solver
from app.interact import FRAME
from app.screenshot import grab_window

ROOT = Path(__file__).resolve().parents[2]

LEFT = Qt.MouseButton.LeftButton
NONE = Qt.KeyboardModifier.NoModifier


def hanging_pendulum():
    """At rest: a 1 kg bob 0.5 m below a revolute about z at the origin (swings in the x–y plane)."""
    m = solver.Model(name="hanging", gravity=(0.0, -9.81, 0.0))
    m.add_body("bob", mass=1.0, inertia=(0.01, 0.01, 0.01), position=(0.0, -0.5, 0.0),
               geometry={"shape": "box", "size": (0.1, 0.1, 0.1)})
    m.add_joint("pivot", "revolute", "ground", "bob", origin=(0.0, 0.0, 0.0), axis=(0.0, 0.0, 1.0))
    return m


def test_interact_drag_pause_step_and_keep(window, qtbot):
    window.document.set_model(hanging_pendulum())
    window.actions["view_front"].trigger()
    interact = window.interact
    with qtbot.waitSignal(interact.started, timeout=60000):
        window.actions["interact"].trigger()
    assert interact.active and window.actions["interact"].isChecked()
    vp, widget = window.viewport, window.viewport.vtk_widget

    # press on the bob, move the mouse 0.25 m to its right (in the view plane), hold while it runs
    start = vp.project((0.0, -0.5, 0.05))
    right = vp.project((0.25, -0.5, 0.05))
    QTest.mousePress(widget, LEFT, NONE, start)
    for s in np.linspace(0.0, 1.0, 6)[1:]:
        QTest.mouseMove(widget, QPoint(round(start.x() + s * (right.x() - start.x())), start.y()))
    t_grab = interact.t
    qtbot.waitUntil(lambda: interact.t > t_grab + 0.6, timeout=60000)     # ≈ 7 time constants 1/ω
    QTest.mouseRelease(widget, LEFT, NONE, right)
    x = interact.poses["bob"][0][0]
    assert 0.05 < x < 0.3          # toward the cursor (+x), not past it

    # pause: time stops; step: one frame
    window.document.select("pivot")
    interact.panel.pause.click()
    qtbot.wait(200)                 # a frame already queued may still arrive
    paused = interact.t
    qtbot.wait(300)
    assert interact.t == paused
    with qtbot.waitSignal(interact.frame_shown, timeout=10000):
        interact.panel.step.click()
    assert abs(interact.t - (paused + FRAME)) < 1e-9
    assert np.isfinite(interact.panel.history["reaction"][-1])     # the selected joint's live reaction
    interact.panel.pause.click()    # resume
    qtbot.waitUntil(lambda: interact.t > paused + 3 * FRAME, timeout=10000)

    with qtbot.waitSignal(interact.ended, timeout=20000) as ended:
        interact.panel.keep.click()
    results = ended.args[0]
    assert not interact.active and not window.actions["interact"].isChecked()
    assert window.simulation.results is results and results.t[-1] >= paused + FRAME
    assert results.meta["interactive"]
    window.document.select("pivot")                 # the kept session plots like any run's
    qtbot.waitUntil(lambda: "pivot Fx" in window.plots.curves, timeout=5000)
    t, fx = window.plots.curve_data("pivot Fx")
    assert len(t) == len(results.t)


def test_interact_ends_when_another_model_opens(window, qtbot):
    window.document.set_model(hanging_pendulum())
    with qtbot.waitSignal(window.interact.started, timeout=60000):
        window.actions["interact"].trigger()
    with qtbot.waitSignal(window.interact.ended, timeout=20000) as ended:
        window.document.set_model(hanging_pendulum())
    assert ended.args[0] is not None and window.simulation.results is None     # not kept
    assert not window.actions["interact"].isChecked()


def driven_crank(omega):
    """A crank driven at θ = ω t about z, carrying a free pendulum (one DOF to interact with)."""
    m = solver.Model(name="crank", gravity=(0.0, -9.81, 0.0))
    m.add_body("crank", mass=1.0, inertia=(1e-2,) * 3, position=(0.2, 0.0, 0.0))
    m.add_joint("pin", "revolute", "ground", "crank", origin=(0.0, 0.0, 0.0), axis=(0.0, 0.0, 1.0))
    m.add_body("bob", mass=0.5, inertia=(1e-3,) * 3, position=(0.4, -0.3, 0.0))
    m.add_joint("hinge", "revolute", "crank", "bob", origin=(0.4, 0.0, 0.0), axis=(0.0, 0.0, 1.0))
    m.add_driver("motor", "pin", expression=f"{omega}*t")
    return m


def test_interact_driver_speed_slider(window, qtbot):
    """The Driver speed slider at 200 %: the crank turns at 2ω from then on (kept results); a model
    without drivers has the slider disabled."""
    omega = 2.0
    window.document.set_model(driven_crank(omega))
    interact = window.interact
    with qtbot.waitSignal(interact.started, timeout=60000):
        window.actions["interact"].trigger()
    assert interact.panel.drive.isEnabled()
    interact.panel.drive.setValue(200)
    assert "2.00" in interact.panel.drive_label.text()
    t_set = interact.t
    qtbot.waitUntil(lambda: interact.t > t_set + 10 * FRAME, timeout=60000)
    with qtbot.waitSignal(interact.ended, timeout=20000) as ended:
        interact.panel.keep.click()
    rate = ended.args[0].body_angular_velocity("crank")[:, 2]
    assert abs(rate[-1] - 2.0 * omega) < 1e-9 and abs(rate[0] - omega) < 1e-9
    window.document.set_model(hanging_pendulum())
    with qtbot.waitSignal(interact.started, timeout=60000):
        window.actions["interact"].trigger()
    assert not interact.panel.drive.isEnabled()
    with qtbot.waitSignal(interact.ended, timeout=20000):
        interact.stop()


@pytest.mark.slow
@pytest.mark.sweep          # not in make test (15-60 s: a compile and 1 s of real-time session); tools/screenshots.sh runs it
def test_interact_screenshot(window, qtbot, screenshots_dir):
    """docs/screenshots/interact.png (tools/screenshots.sh): the double pendulum sample, its lower link
    pulled down and toward the shoulder by the mouse (a target within reach: a stretched arm is a
    singular configuration), the Interact dock with its live plots."""
    window.resize(1280, 860)
    assert window.load(str(ROOT / "sample_models" / "double_pendulum.mbs.json"))
    window.actions["view_front"].trigger()
    interact = window.interact
    with qtbot.waitSignal(interact.started, timeout=60000):
        window.actions["interact"].trigger()
    window.resizeDocks([interact.dock], [330], Qt.Orientation.Vertical)
    body = list(window.document.model.bodies)[-1]
    qtbot.waitUntil(lambda: body in interact.poses, timeout=10000)
    window.document.select(list(window.document.model.joints)[0])
    centre = np.array(interact.poses[body][0])
    vp, widget = window.viewport, window.viewport.vtk_widget
    start, right = vp.project(tuple(centre)), vp.project(tuple(centre + (-0.2, -0.35, 0.0)))
    QTest.mousePress(widget, LEFT, NONE, start)
    for s in np.linspace(0.0, 1.0, 8)[1:]:
        QTest.mouseMove(widget, QPoint(round(start.x() + s * (right.x() - start.x())),
                                       round(start.y() + s * (right.y() - start.y()))))
        qtbot.wait(30)
    t_grab = interact.t
    qtbot.waitUntil(lambda: interact.t > t_grab + 1.0, timeout=60000)
    qtbot.wait(100)
    assert interact.panel.history["total"][-1] < 0.0       # pulled down and settled: no energy gained
    image = grab_window(window, vp)
    assert image.save(str(screenshots_dir / "interact.png"))
    QTest.mouseRelease(widget, LEFT, NONE, right)
    with qtbot.waitSignal(interact.ended, timeout=20000):
        interact.stop()
