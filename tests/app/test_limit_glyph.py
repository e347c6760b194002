"""Joint limits in the GUI: the viewport's limit glyph (an arc for a rotation, a ticked segment for a
translation, drawn in body_i's frame) follows the limit fields, undo and body_i's motion; Model ▸ Add
Limit sets stops as one undo step and is disabled, with its reason, for what it cannot limit."""
from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtWidgets import QMenu

import solver
from app import commands
from app.editing import LIMIT_ROTATION, LIMIT_TRANSLATION
from app.viewport.limit_glyphs import ARC_RADIUS, OFFSET, REACH, limit_lines

from conftest import pendulum_model


def _angles(points, origin=(0.0, 0.0, 0.0)):
    """Angles about +z of the pendulum's arc points, measured from −y (the bob hangs along −y at
    θ = 0), right-handed: a point at angle θ is at (sin θ, −cos θ)."""
    d = np.asarray(points) - origin
    return np.arctan2(d[:, 0], -d[:, 1])


def _glyph(window):
    vp = window.viewport
    vp.flush()
    return vp.scene.limit_lines("pivot")


def test_arc_from_lower_to_upper_follows_edits_undo_and_body_i(window, qtbot):
    m = pendulum_model()
    m.set_field("pivot", "lower_limit", -0.3)
    m.set_field("pivot", "upper_limit", 0.8)
    window.document.set_model(m)
    g = window.viewport.scene.glyph
    arc, tick_low, tick_high = _glyph(window)
    # the arc: radius ARC_RADIUS·g in the plane z = 0, from −0.3 to 0.8 rad about +z from the bob's side
    assert np.allclose(np.linalg.norm(arc[:, :2], axis=1), ARC_RADIUS * g, rtol=1e-12)
    assert np.allclose(arc[:, 2], 0.0, atol=1e-12)
    theta = _angles(arc)
    assert theta[0] == pytest.approx(-0.3, abs=1e-12) and theta[-1] == pytest.approx(0.8, abs=1e-12)
    assert np.all(np.diff(theta) > 0) and np.diff(theta).max() <= np.radians(3.0) + 1e-12
    assert np.allclose(_angles(tick_low), -0.3) and np.allclose(_angles(tick_high), 0.8)

    # an edit of the field redraws it; undo and redo follow
    window.document.select("pivot")
    assert window.properties.commit("upper_limit", 1.2)          # as typed in the property editor
    assert _angles(_glyph(window)[0])[-1] == pytest.approx(1.2, abs=1e-12)
    window.document.undo_stack.undo()
    assert _angles(_glyph(window)[0])[-1] == pytest.approx(0.8, abs=1e-12)
    window.document.undo_stack.redo()
    assert _angles(_glyph(window)[0])[-1] == pytest.approx(1.2, abs=1e-12)

    # stops off, or no limits: no glyph
    window.document.push(_set(m, "pivot", "stops", False))
    assert _glyph(window) == []
    window.document.undo_stack.undo()
    assert len(_glyph(window)) == 3

    # ground is body_i: the arc stays while the bob swings (it moves with body_i only)
    before = _glyph(window)[0]
    c, s = np.cos(0.5), np.sin(0.5)
    window.viewport.set_body_poses({"bob": ((0.5 * s, -0.5 * c, 0.0), [[c, -s, 0], [s, c, 0], [0, 0, 1]])})
    assert np.array_equal(_glyph(window)[0], before)


def test_arc_sign_is_the_solvers_rotation():
    """Independent of the glyph's formula: the solver driven to θ = 0.8 puts the bob at the arc's upper
    end (its joint coordinate is right-handed about the axis, body_j relative to body_i)."""
    m = pendulum_model()
    m.add_driver("turn", joint="pivot", expression="0.8*t")
    res = solver.simulate(m, t_end=1.0, output_step=0.5)
    bob = res.body_position("bob")[-1]
    assert _angles(bob[None])[0] == pytest.approx(0.8, abs=1e-6)


def test_translation_segment_and_moving_body_i(window):
    """A prismatic joint between two moving bodies: a segment of true length beside the axis, ticks
    at the limits; it moves with body_i."""
    m = solver.Model(name="slider", gravity=(0.0, -9.81, 0.0))
    for name, y in (("base", 0.0), ("carriage", 0.0)):
        m.add_body(name, mass=1.0, inertia=(0.01, 0.01, 0.01), position=(0.0, y, 0.0),
                   geometry={"shape": "box", "size": [0.2, 0.1, 0.1]})
    m.add_joint("pin", "revolute", "ground", "base", origin=(0.0, 0.0, 0.0), axis=(0.0, 0.0, 1.0))
    m.add_joint("pivot", "prismatic", "base", "carriage", origin=(0.0, 0.0, 0.0), axis=(1.0, 0.0, 0.0),
                lower_limit=-0.05, upper_limit=0.2)
    window.document.set_model(m)
    g = window.viewport.scene.glyph
    segment, *ticks = _glyph(window)
    axis = np.array([1.0, 0.0, 0.0])
    assert segment @ axis == pytest.approx([-0.05, 0.2], abs=1e-12)
    side = segment - np.outer(segment @ axis, axis)
    assert np.allclose(np.linalg.norm(side, axis=1), OFFSET * g, rtol=1e-12)
    # a cross of two ticks normal to the axis at each limit, through the segment
    assert np.concatenate([t @ axis for t in ticks]) == pytest.approx([-0.05] * 4 + [0.2] * 4, abs=1e-12)
    for tick in ticks:
        assert (tick[1] - tick[0]) @ axis == pytest.approx(0.0, abs=1e-15)
        assert np.allclose(tick.mean(axis=0) - np.outer(tick.mean(axis=0) @ axis, axis), side[0], atol=1e-12)
    # playing (solids merged into one mesh), base turned by 90° about z: the segment turns with it
    # (now along +y), its actor drawn and moved by base's matrix
    window.viewport.set_animating(True)
    window.viewport.set_body_poses({"base": ((0.0, 0.0, 0.0), [[0, -1, 0], [1, 0, 0], [0, 0, 1]])})
    moved = _glyph(window)[0]
    assert moved[:, 1] == pytest.approx([-0.05, 0.2], abs=1e-12)
    actor = window.viewport.scene.limits["pivot"].actor
    assert actor.GetVisibility() and actor.GetUserMatrix().GetElement(1, 0) == pytest.approx(1.0)
    window.viewport.set_animating(False)


def test_cylindrical_joint_draws_the_limited_coordinate(window):
    """A cylindrical joint's glyph is an arc while its stops limit the rotation (its first coordinate,
    the default) and a segment when limit_coordinate is translation."""
    m = pendulum_model()
    m.remove("pivot")
    m.add_joint("pivot", "cylindrical", "ground", "bob", origin=(0.0, 0.0, 0.0), axis=(0.0, 0.0, 1.0),
                lower_limit=-0.4, upper_limit=0.4)
    window.document.set_model(m)
    arc = _glyph(window)[0]
    assert len(arc) > 2 and _angles(arc)[[0, -1]] == pytest.approx([-0.4, 0.4], abs=1e-12)
    window.document.push(_set(m, "pivot", "limit_coordinate", "translation"))
    segment = _glyph(window)[0]
    assert len(segment) == 2 and segment[:, 2] == pytest.approx([-0.4, 0.4], abs=1e-12)


def test_add_limit_is_one_undo_step_and_disabled_with_a_reason(window):
    m = pendulum_model()
    m.add_joint("slide", "prismatic", "ground", "bob", origin=(0.0, -1.0, 0.0), axis=(1.0, 0.0, 0.0))
    m.remove("pivot")
    m.add_joint("pivot", "revolute", "ground", "bob", origin=(0.0, 0.0, 0.0), axis=(0.0, 0.0, 1.0))
    m.add_joint("ball", "spherical", "ground", "bob", origin=(0.0, -1.0, 0.0))
    window.document.set_model(m)
    action = window.actions["add_limit"]
    doc = window.document
    assert not action.isEnabled() and "select a joint" in action.toolTip()
    doc.select("ball")
    assert not action.isEnabled() and "spherical joint has no limits" in action.toolTip()
    model_menu = next(w for w in action.associatedObjects() if isinstance(w, QMenu))
    model_menu.popup(window.mapToGlobal(window.rect().center()))          # the Model menu opens: why not
    assert "spherical joint has no limits" in window.statusBar().currentMessage()
    model_menu.hide()
    doc.select("bob")
    assert not action.isEnabled()
    doc.select("pivot")
    assert action.isEnabled()
    assert _glyph(window) == []
    depth = doc.undo_stack.count()
    action.trigger()
    joint = m.joints["pivot"]
    assert (joint.lower_limit, joint.upper_limit) == (-LIMIT_ROTATION, LIMIT_ROTATION)
    assert doc.undo_stack.count() == depth + 1 and doc.selection == "pivot"
    assert window.properties.editor("upper_limit").value() == pytest.approx(LIMIT_ROTATION)
    theta = _angles(_glyph(window)[0])
    assert (theta[0], theta[-1]) == pytest.approx((-np.pi / 2, np.pi / 2), abs=1e-12)
    assert not action.isEnabled() and "has its limits already" in action.toolTip()
    doc.undo_stack.undo()
    assert (joint.lower_limit, joint.upper_limit) == (None, None) and _glyph(window) == []
    assert action.isEnabled()

    doc.select("slide")
    action.trigger()
    slide = m.joints["slide"]
    assert (slide.lower_limit, slide.upper_limit) == (-LIMIT_TRANSLATION, LIMIT_TRANSLATION)
    window.viewport.flush()
    segment = window.viewport.scene.limit_lines("slide")[0]
    assert segment[:, 0] == pytest.approx([-LIMIT_TRANSLATION, LIMIT_TRANSLATION], abs=1e-12)

    # the edit refuses what it cannot limit, naming why (also when called without the menu)
    doc.select("ball")
    assert not window.editing.add_limit()
    assert "spherical joint has no limits" in window.statusBar().currentMessage()


def _set(model, name, field, value):
    """The command the property editor pushes for one field."""
    return commands.SetField(model, name, field, value)


def test_huge_limits_stay_bounded():
    """A limit of 1e9 rad or m draws one turn, or a segment cut at ±REACH·g, not a billion points."""
    m = pendulum_model()
    m.set_field("pivot", "lower_limit", -1e9)
    arc, _ = limit_lines(m.joints["pivot"], (0.0, -0.5, 0.0), 0.05)
    assert len(arc) <= 122 and _angles(arc)[0] == pytest.approx(np.remainder(-1e9 + np.pi, 2 * np.pi) - np.pi)
    m.remove("pivot")
    m.add_joint("pivot", "prismatic", "ground", "bob", axis=(1.0, 0.0, 0.0), upper_limit=1e9)
    segment, *ticks = limit_lines(m.joints["pivot"], (0.0, -0.5, 0.0), 0.05)
    assert segment[:, 0] == pytest.approx([0.0, REACH * 0.05]) and ticks == []
