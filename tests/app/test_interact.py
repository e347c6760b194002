"""Simulate ▸ Interact through the real widgets: the toggle starts a session, a mouse drag on a body
in the viewport pulls it toward the cursor, Pause stops time, Step advances one frame, Keep as
Results makes the session the window's results, which plot like any run's."""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest

import solver
from app.interact import FRAME

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
