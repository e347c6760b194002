"""Clicking in the viewport at a joint glyph's projected screen position selects the joint in the
tree (and highlights it); clicking empty space clears the selection."""
import pytest
from PySide6.QtCore import QPoint, Qt

from app.viewport.scene import HIGHLIGHT


@pytest.mark.slow
def test_click_on_joint_glyph_selects_it(window, qtbot, pendulum):
    w = window
    w.document.set_model(pendulum)
    vp = w.viewport
    vp.set_view("front")
    vp.render()
    pos = vp.project(pendulum.joints["pivot"].origin)
    assert vp.vtk_widget.rect().contains(pos)
    qtbot.mouseClick(vp.vtk_widget, Qt.MouseButton.LeftButton, pos=pos)
    assert w.document.selection == "pivot"
    assert w.tree.currentItem() is w.tree.item("pivot")
    assert w.properties.target.element.name == "pivot"
    assert vp.actor("pivot").GetProperty().GetColor() == pytest.approx(HIGHLIGHT)

    # A body: the middle of the bob.
    qtbot.mouseClick(vp.vtk_widget, Qt.MouseButton.LeftButton, pos=vp.project((0.0, -0.7, 0.0)))
    assert w.tree.currentItem() is w.tree.item("bob")
    assert vp.actor("pivot").GetProperty().GetColor() != pytest.approx(HIGHLIGHT)

    # Empty space (a corner) clears the selection.
    qtbot.mouseClick(vp.vtk_widget, Qt.MouseButton.LeftButton, pos=QPoint(3, 3))
    assert w.document.selection == ""


@pytest.mark.slow
def test_tree_selection_highlights(window, pendulum):
    window.document.set_model(pendulum)
    window.tree.setCurrentItem(window.tree.item("bob"))
    assert window.viewport.actor("bob").GetProperty().GetColor() == pytest.approx(HIGHLIGHT)


def test_set_body_poses_moves_actors(window, pendulum):
    import numpy as np
    window.document.set_model(pendulum)
    vp = window.viewport
    before = vp.actor("bob").GetBounds()
    c, s = np.cos(np.pi / 2), np.sin(np.pi / 2)
    R = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
    vp.set_body_poses({"bob": (np.array([0.5, 0.0, 0.0]), R)})  # swung up to horizontal
    after = vp.actor("bob").GetBounds()
    assert after[1] - after[0] > 0.9 and before[3] - before[2] > 0.9  # long along x now, along y before
    assert np.allclose(vp.actor("pivot").GetCenter(), (0.0, 0.0, 0.0), atol=1e-9)
    vp.reset_poses()
    assert np.allclose(vp.actor("bob").GetBounds(), before)
