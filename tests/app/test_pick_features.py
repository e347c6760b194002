"""Snapping features and the projection used to snap (app/viewport/picking.py), checked against
scipy's rotations and VTK's own WorldToDisplay, and ``Viewport.pick`` at screen coordinates."""
from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPoint
from scipy.spatial.transform import Rotation

import solver
from app.viewport.picking import SNAP_PIXELS, Pick, features, project, view_axis

Q = (np.cos(np.pi / 4), 0.0, 0.0, np.sin(np.pi / 4))     # 90° about z (w, x, y, z)
P = np.array([1.0, 2.0, 3.0])


def rotated_model() -> solver.Model:
    m = solver.Model()
    m.add_body("box", mass=1.0, inertia=(1, 1, 1), position=tuple(P), orientation=Q,
               geometry={"shape": "box", "size": [0.4, 0.2, 0.1], "offset": [0.1, 0.0, 0.0]})
    m.add_body("can", mass=1.0, inertia=(1, 1, 1), position=(0.0, 0.0, 0.0), orientation=Q,
               geometry={"shape": "cylinder", "radius": 0.05, "length": 0.3, "axis": "x"})
    m.add_joint("hinge", "revolute", "box", "can", origin=(0.5, 0.0, 0.0), axis=(0.0, 0.0, 1.0))
    m.add_marker("tip", "can", position=(0.0, 0.15, 0.0))
    return m


def test_box_and_cylinder_features_match_scipy_rotation():
    found = features(rotated_model())
    R = Rotation.from_quat([Q[1], Q[2], Q[3], Q[0]]).as_matrix()   # scipy: (x, y, z, w)
    half, offset = np.array([0.2, 0.1, 0.05]), np.array([0.1, 0.0, 0.0])
    corners = sorted(tuple(np.round(P + R @ (offset + half * s), 12))
                     for s in np.array(np.meshgrid([-1, 1], [-1, 1], [-1, 1])).reshape(3, -1).T)
    assert sorted(tuple(np.round(f.point, 12)) for f in found if f.kind == "corner") == corners
    faces = [f.point for f in found if f.kind == "face" and f.element == "box"]
    assert len(faces) == 6
    assert any(np.allclose(p, P + R @ (offset + [0.2, 0.0, 0.0])) for p in faces)   # (1, 2.3, 3)
    assert any(np.allclose(p, (1.0, 2.3, 3.0)) for p in faces)
    ends = [f for f in found if f.kind == "end"]
    assert sorted(tuple(np.round(f.point, 12)) for f in ends) == [(0.0, -0.15, 0.0), (0.0, 0.15, 0.0)]
    assert all(np.allclose(f.axis, (0.0, 1.0, 0.0)) for f in ends)   # the cylinder's x turned onto y
    kinds = {(f.kind, f.element, f.body) for f in found}
    assert {("cm", "box", "box"), ("joint", "hinge", "can"), ("marker", "tip", "can")} <= kinds


@pytest.mark.slow
def test_projection_matches_vtk_world_to_display(window):
    window.document.set_model(rotated_model())
    vp = window.viewport
    vp.set_view("iso")                                   # perspective, oblique
    vp.render()
    points = np.array([f.point for f in vp.scene.snapper.features])
    xy, _ = project(vp.renderer, points)
    for p, q in zip(points, xy):
        vp.renderer.SetWorldPoint(*p, 1.0)
        vp.renderer.WorldToDisplay()
        assert q == pytest.approx(vp.renderer.GetDisplayPoint()[:2], abs=1e-6)
    vp.set_view("front")
    assert view_axis(vp.renderer) == (0.0, 0.0, 1.0)


@pytest.mark.slow
def test_pick_snaps_to_features_and_hits_surfaces(window, pendulum):
    window.document.set_model(pendulum)
    vp = window.viewport
    vp.set_view("front")
    vp.render()
    corner = vp.project((0.025, -1.0, 0.025))
    pick = vp.pick(corner.x() + 3, corner.y() - 2)       # a few pixels off: snapped
    assert pick.element == "bob" and pick.body == "bob" and pick.feature.kind == "corner"
    assert pick.point[:2] == pytest.approx((0.025, -1.0), abs=1e-12)

    far = vp.project((0.0, -0.25, 0.0))                  # mid-bar: nothing within SNAP_PIXELS
    pick = vp.pick(far.x(), far.y())
    pixel = 1.0 / abs(vp.project((1.0, 0.0, 0.0)).x() - vp.project((0.0, 0.0, 0.0)).x())
    assert pick.feature is None and pick.element == "bob"
    assert pick.point == pytest.approx((0.0, -0.25, 0.025), abs=2 * pixel)   # on the front face

    pivot = vp.project((0.0, 0.0, 0.0))
    pick = vp.pick(pivot.x(), pivot.y())
    assert (pick.element, pick.body, pick.feature.kind) == ("pivot", "bob", "joint")
    assert pick.point == pytest.approx((0.0, 0.0, 0.0), abs=1e-12)

    assert vp.pick(3, 3) == Pick("", "", None, None)
    assert SNAP_PIXELS >= 3


@pytest.mark.slow
def test_pick_follows_the_pose_drawn(window, pendulum):
    """After set_body_poses (a paused animation frame) features are snapped where they are drawn."""
    window.document.set_model(pendulum)
    vp = window.viewport
    vp.set_view("front")
    c, s = 0.0, 1.0
    vp.set_body_poses({"bob": (np.array([0.5, 0.0, 0.0]), np.array([[c, -s, 0], [s, c, 0], [0, 0, 1.0]]))})
    tip = vp.project((1.0, 0.0, 0.0))                    # the bob's far end face centre, swung to +x
    pick = vp.pick(tip.x(), tip.y())
    assert pick.feature.kind == "face" and pick.point == pytest.approx((1.0, 0.0, 0.0), abs=1e-12)
    assert isinstance(tip, QPoint)
