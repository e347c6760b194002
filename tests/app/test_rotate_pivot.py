"""Edit ▸ Rotate…: a body's pose rotated about an axis through a pivot, r' = p + R (r − p), A' = R A,
checked against scipy's Rotation and Rodrigues' formula; one undo step that restores the exact fields."""
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from app import dialogs
from app.editing import pivot_points


def _matrix(q):
    w, x, y, z = q
    return Rotation.from_quat([x, y, z, w]).as_matrix()


def _rodrigues(axis, angle):
    n = np.asarray(axis, float) / np.linalg.norm(axis)
    K = np.array([[0, -n[2], n[1]], [n[2], 0, -n[0]], [-n[1], n[0], 0]])
    return np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * K @ K


@pytest.fixture
def tilted(loaded):
    """The pendulum's bob given a non-trivial orientation first (so A' = R A is tested, not just R)."""
    model = loaded.document.model
    model.set_field("bob", "orientation", Rotation.from_rotvec([0.3, -0.2, 0.5]).as_matrix().tolist())
    model.set_field("bob", "position", [0.1, -0.5, 0.2])
    loaded.document.undo_stack.clear()
    return loaded


@pytest.mark.parametrize("pivot", [None, [0.4, 0.3, -0.7]])
def test_rotate_matches_scipy_and_undo_restores(tilted, pivot):
    window = tilted
    model = window.document.model
    before = {f: list(model.element("bob").values[f]) for f in ("position", "orientation")}
    r, A = np.array(before["position"]), _matrix(before["orientation"])
    axis, angle = [1.0, 2.0, -0.5], 1.234
    assert window.editing.rotate(axis, angle, pivot)
    R = Rotation.from_rotvec(angle * np.array(axis) / np.linalg.norm(axis)).as_matrix()
    assert np.abs(R - _rodrigues(axis, angle)).max() < 1e-14
    p = r if pivot is None else np.array(pivot)
    bob = model.element("bob").values
    assert np.abs(np.array(bob["position"]) - (p + R @ (r - p))).max() < 1e-12
    assert np.abs(_matrix(bob["orientation"]) - R @ A).max() < 1e-12
    if pivot is None:                                  # about the CM the CM stays put
        assert np.abs(np.array(bob["position"]) - r).max() == 0.0
    stack = window.document.undo_stack
    assert stack.count() == 1 and stack.undoText() == "Rotate 'bob'"
    stack.undo()
    assert {f: list(model.element("bob").values[f]) for f in before} == before


def test_menu_rotate_uses_the_dialog_and_a_joint_pivot(tilted, monkeypatch):
    window = tilted
    model = window.document.model
    points = pivot_points(model, "bob")
    assert list(points) == ["CM of bob", "joint pivot"]
    assert points["joint pivot"] == [0.0, 0.0, 0.0]
    asked = []
    monkeypatch.setattr(dialogs, "ask_rotation", lambda parent, name, pivots: asked.append(
        (name, pivots)) or ([0.0, 0.0, 1.0], np.pi / 2, pivots["joint pivot"]))
    r = np.array(model.element("bob").values["position"])
    window.actions["rotate"].trigger()
    assert asked == [("bob", points)]
    new = np.array(model.element("bob").values["position"])
    assert np.abs(new - np.array([-r[1], r[0], r[2]])).max() < 1e-12   # 90° about z through the origin


def test_rotate_refuses_a_non_body_and_a_zero_axis(tilted, answers):
    window = tilted
    window.document.select("pivot")
    window.actions["rotate"].trigger()
    assert not window.editing.rotate([0.0, 0.0, 0.0], 1.0, name="bob")
    assert [t for t, _ in answers.errors] == ["Rotate", "Rotate"]
    assert "axis" in answers.errors[1][1][0]
    assert window.document.undo_stack.count() == 0


def test_the_real_dialog_returns_radians_and_the_chosen_pivot(qtbot):
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication, QComboBox, QDialog
    from app.field_editors import SciSpinBox

    def answer():
        dialog = next(w for w in QApplication.topLevelWidgets() if isinstance(w, QDialog) and w.isVisible())
        dialog.findChild(QComboBox).setCurrentIndex(1)       # "joint j": fills the pivot
        spins = dialog.findChildren(SciSpinBox)
        spins[3].setValue(90.0)                              # axis x, y, z, angle (deg), pivot x, y, z
        dialog.accept()

    QTimer.singleShot(0, answer)
    axis, angle, pivot = dialogs.ask_rotation(None, "bob", {"CM of bob": [1, 2, 3], "joint j": [4, 5, 6]})
    assert axis == [0.0, 0.0, 1.0] and pivot == [4.0, 5.0, 6.0]
    assert angle == pytest.approx(np.pi / 2, abs=1e-15)
