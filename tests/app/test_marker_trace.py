"""Trace of a marker: the animation bar's Trace box offers markers; the trace is p = r + A s' with
s' = A₀ᵀ (p₀ − r₀).  A swinging pendulum's markers trace circles about the pivot (z axis) in their
planes z = const, of radius their distance from the axis."""
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import solver


from conftest import pendulum_model


@pytest.fixture(scope="module")
def swing():
    model = pendulum_model()
    # Body axes turned about y: the inertia (Ixx = Izz) and the motion stay, but s' ≠ p₀ − r₀.
    model.set_field("bob", "orientation", Rotation.from_rotvec([0.0, 0.7, 0.0]).as_matrix().tolist())
    model.set_field("bob", "angular_velocity", [0.0, 0.0, 3.0])
    model.set_field("bob", "velocity", [1.5, 0.0, 0.0])        # ω × (r − pivot)
    model.add_marker("tip", "bob", position=(0.0, -1.0, 0.0))
    model.add_marker("corner", "bob", position=(0.025, -1.0, 0.025))
    return model, solver.simulate(model, t_end=1.0)


def test_marker_local_is_in_body_axes(swing):
    model, _ = swing
    body, local = solver.marker_local(model, "corner")
    A0 = Rotation.from_rotvec([0.0, 0.7, 0.0]).as_matrix()
    assert body == "bob"
    assert np.abs(A0 @ local - np.array([0.025, -0.5, 0.025])).max() < 1e-15
    assert np.abs(local - np.array([0.025, -0.5, 0.025])).max() > 0.01     # differs from p₀ − r₀


@pytest.mark.parametrize("marker, z", [("tip", 0.0), ("corner", 0.025)])
def test_marker_trace_is_a_circle_about_the_pivot(window, swing, marker, z):
    model, results = swing
    window.document.set_model(model.copy())
    window.simulation.set_results(results)
    window.player.pause()
    bar = window.animation_bar
    index = bar.trace.findData(marker)
    assert index > 0 and bar.trace.itemText(index) == f"{marker} (marker)"
    bar.trace.setCurrentIndex(index)
    window.player.set_frame(len(results.t) - 1)
    path = window.player.trace_path()
    assert len(path) == len(results.t)
    radius = np.hypot(0.025, 1.0) if marker == "corner" else 1.0
    assert np.abs(np.linalg.norm(path[:, :2], axis=1) - radius).max() < 1e-9
    assert np.abs(path[:, 2] - z).max() < 1e-9
    assert np.abs(path[0] - model.markers[marker].position).max() < 1e-12
    swept = np.ptp(np.unwrap(np.arctan2(path[:, 1], path[:, 0])))
    assert swept > 1.0                                             # it really swings
