"""Orientation editing as Euler angles (intrinsic XYZ, ZYX, ZXZ) and axis–angle: conversions checked
against scipy.spatial.transform.Rotation and against rotation matrices composed by hand, and the
property editor setting an exact quaternion in one edit."""
import math

import numpy as np
import pytest
from PySide6.QtCore import Qt
from scipy.spatial.transform import Rotation

from app.orientation import (EULER_SEQUENCES, axis_angle_from_quat, euler_from_quat, quat_from_axis_angle,
                             quat_from_euler)
from app.tree import SETTINGS_ITEM
from solver.math.rotations import rotation_matrix


def _elementary(axis, angle):
    c, s = math.cos(angle), math.sin(angle)
    return {"X": np.array([[1, 0, 0], [0, c, -s], [0, s, c]]),
            "Y": np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]]),
            "Z": np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])}[axis]


def _random_quats(n=40, seed=3):
    q = np.random.default_rng(seed).normal(size=(n, 4))
    q /= np.linalg.norm(q, axis=1)[:, None]
    return q * np.sign(q[:, :1])


@pytest.mark.parametrize("sequence", EULER_SEQUENCES)
def test_euler_round_trip_against_scipy_and_hand_composed_matrices(sequence):
    for q in _random_quats():
        angles = euler_from_quat(q, sequence)
        x, y, z, w = Rotation.from_euler(sequence, angles).as_quat()
        assert abs(np.dot([w, x, y, z], q)) == pytest.approx(1.0, abs=1e-14)   # scipy: same rotation
        back = quat_from_euler(angles, sequence)
        assert back[0] >= 0 and np.allclose(back, q, atol=1e-14)
        composed = _elementary(sequence[0], angles[0]) @ _elementary(sequence[1], angles[1]) \
            @ _elementary(sequence[2], angles[2])                              # intrinsic: R1 R2 R3
        np.testing.assert_allclose(rotation_matrix(np.array(back)), composed, atol=1e-14)


def test_axis_angle_round_trip_and_rodrigues():
    for q in _random_quats(seed=5):
        axis, angle = axis_angle_from_quat(q)
        assert 0.0 <= angle <= math.pi and np.linalg.norm(axis) == pytest.approx(1.0, abs=1e-15)
        np.testing.assert_allclose(Rotation.from_rotvec(np.array(axis) * angle).as_matrix(),
                                   rotation_matrix(np.array(q)), atol=1e-14)
        back = quat_from_axis_angle(axis, angle)
        np.testing.assert_allclose(back, q, atol=1e-14)
        n, K = np.array(axis), np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
        rodrigues = np.eye(3) + math.sin(angle) * K + (1 - math.cos(angle)) * (K @ K)
        np.testing.assert_allclose(rotation_matrix(np.array(back)), rodrigues, atol=1e-14)
        assert np.linalg.norm(n) == pytest.approx(1.0)
    assert axis_angle_from_quat([1.0, 0.0, 0.0, 0.0], (1.0, 0.0, 0.0)) == ([1.0, 0.0, 0.0], 0.0)
    with pytest.raises(ValueError, match="non-zero"):
        quat_from_axis_angle([0.0, 0.0, 0.0], 1.0)


def _type(qtbot, spin, text):
    spin.setFocus()
    spin.selectAll()
    qtbot.keyClicks(spin, text)
    qtbot.keyClick(spin, Qt.Key.Key_Return)


THETA = math.radians(26.57)
EXACT = [math.cos(THETA / 2), 0.0, 0.0, math.sin(THETA / 2)]


@pytest.mark.slow
def test_26_57_deg_about_z_in_one_edit_axis_angle(loaded, qtbot):
    w = loaded
    editor = w.properties.editor("orientation")
    editor.set_mode("axis–angle")
    editor = w.properties.editor("orientation")
    assert [s.si_value() for s in editor.spins[:3]] == [0.0, 0.0, 1.0]      # identity: axis z offered
    _type(qtbot, editor.spins[3], "26.57 deg")
    q = w.document.model.element("bob").orientation
    np.testing.assert_allclose(q, EXACT, rtol=0, atol=2e-16)
    assert w.document.undo_stack.count() == 1
    assert w.properties.editor("orientation").spins[3].si_value() == pytest.approx(THETA, rel=1e-14)


@pytest.mark.slow
@pytest.mark.parametrize("mode, spin", [("Euler ZYX", 0), ("Euler XYZ", 2), ("Euler ZXZ", 0)])
def test_26_57_deg_about_z_in_one_edit_euler(loaded, qtbot, mode, spin):
    w = loaded
    w.properties.editor("orientation").set_mode(mode)
    _type(qtbot, w.properties.editor("orientation").spins[spin], "26.57 deg")
    np.testing.assert_allclose(w.document.model.element("bob").orientation, EXACT, rtol=0, atol=2e-16)


@pytest.mark.slow
def test_angles_in_display_degrees_and_the_mode_is_remembered(loaded, qtbot):
    w = loaded
    w.document.select(SETTINGS_ITEM)
    w.properties.commit("display_angles", "deg")
    w.document.select("bob")
    editor = w.properties.editor("orientation")
    editor.set_mode("Euler XYZ")
    _type(qtbot, editor.spins[0], "30")                     # a plain number in degrees
    _type(qtbot, w.properties.editor("orientation").spins[1], "0.5 rad")
    editor = w.properties.editor("orientation")
    assert editor.spins[0].suffix() == " deg"
    assert [s.value() for s in editor.spins[:3]] == pytest.approx([30.0, math.degrees(0.5), 0.0], rel=1e-12)
    expected = Rotation.from_euler("XYZ", [30.0, math.degrees(0.5), 0.0], degrees=True).as_quat()
    np.testing.assert_allclose(w.document.model.element("bob").orientation, np.roll(expected, 1), atol=1e-15)
    w.document.select("pivot")
    w.document.select("bob")
    assert w.properties.editor("orientation").mode.currentText() == "Euler XYZ"   # remembered


@pytest.mark.slow
def test_zero_axis_is_refused(loaded, qtbot):
    w = loaded
    editor = w.properties.editor("orientation")
    editor.set_mode("axis–angle")
    _type(qtbot, editor.spins[3], "90 deg")
    before = w.document.model.to_dict()
    editor = w.properties.editor("orientation")
    for s in editor.spins[:3]:
        _type(qtbot, s, "0")
    assert "orientation" in w.properties.error("orientation") and "non-zero" in w.properties.error("orientation")
    assert w.document.model.to_dict() == before
