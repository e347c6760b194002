"""Roads are drawn in the viewport of a vehicle model: the surface follows the road's profile (the
half-sine bump of the CAE-TC sample against its closed form, a flat road at its height), reaches
far beyond the car along x, is not pickable, and follows edits of the road."""
import math
from pathlib import Path

import numpy as np
import pytest
from vtkmodules.util.numpy_support import vtk_to_numpy

from app import commands
from app.viewport.scene import ROAD_MARGIN

SAMPLES = Path(__file__).resolve().parents[2] / "sample_models"


def _road_points(window, name="road"):
    window.viewport.flush()
    actor = window.viewport.scene.roads[name]
    assert actor in window.viewport.scene.decor and not actor.GetPickable() and actor.GetVisibility()
    assert window.viewport.renderer.HasViewProp(actor)
    return vtk_to_numpy(actor.GetMapper().GetInput().GetPoints().GetData())


def test_bump_road_follows_its_profile(window):
    assert window.load(str(SAMPLES / "vehicle_cae_tc_bump.mbs.json"))
    road = window.document.model.forces["road"]
    x0, H, L, z0 = road.start, road.obstacle_height, road.obstacle_length, road.height
    p = _road_points(window)
    xi = (p[:, 0] - x0) / L
    expected = z0 + np.where((xi >= 0) & (xi <= 1), H * np.sin(math.pi * np.clip(xi, 0, 1)), 0.0)
    np.testing.assert_allclose(p[:, 2], expected, atol=1e-12)
    assert p[:, 2].max() == pytest.approx(z0 + H, abs=1e-12)               # the crest is a station
    assert np.count_nonzero((xi > 0) & (xi < 1)) >= 2 * 63                  # the bump is resolved
    # Far beyond the car both ways, and wider than the car.
    bodies = np.array([b.position for b in window.document.model.bodies.values()])
    assert p[:, 0].min() <= bodies[:, 0].min() - ROAD_MARGIN + 1e-9
    assert p[:, 0].max() >= bodies[:, 0].max() + ROAD_MARGIN - 1e-9
    assert p[:, 1].min() < bodies[:, 1].min() and p[:, 1].max() > bodies[:, 1].max()
    # The road does not change what Fit All frames (the model's element actors).
    assert window.viewport.scene.model_bounds()[1] < bodies[:, 0].max() + 10.0

    # An edit of the road redraws it: flat at a new height.
    window.document.push(commands.SetFields(window.document.model, [("road", "profile", "flat"),
                                                                     ("road", "height", -0.02)], "flat road"))
    np.testing.assert_array_equal(_road_points(window)[:, 2], -0.02)


def test_models_without_roads_draw_none(window):
    assert window.load(str(SAMPLES / "slider_crank.mbs.json"))
    window.viewport.flush()
    assert window.viewport.scene.roads == {}
