"""Mode animation of a linearized model with a flexible body: the beam is drawn bent, node k at
r + A (x_k + u_k) with (r, A, u) = ``Linearization.flexible_poses(mode, s·amplitude)``, and its
floating frame carries the joints at the beam."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
FLEXIBLE = ROOT / "sample_models" / "fourbar_singular_flexible.mbs.json"
BEAM = "coupler"


def undeformed_local(model, r0, A0):
    """The beam's nodes evenly spaced from start to end, in the floating frame (r0, A0)."""
    beam = model.flexible_bodies[BEAM]
    n = beam.elements + 1
    start, end = np.asarray(beam.start), np.asarray(beam.end)
    return (start + np.outer(np.arange(n) / (n - 1), end - start) - r0) @ A0


@pytest.mark.slow
def test_mode_animation_bends_the_flexible_beam(window):
    assert window.load(str(FLEXIBLE))
    assert window.linearize()
    modes, scene = window.modes, window.viewport.scene
    lin = modes.linearization
    assert lin.flexible_names == [BEAM]
    r0, A0, u0 = lin.flexible_poses(0, 0.0)[BEAM]
    local = undeformed_local(window.document.model, r0, A0)
    assert np.allclose(scene.beam_points(BEAM), r0 + (local + u0) @ A0.T, rtol=0, atol=1e-9)
    bent = 0
    for mode in range(len(lin.frequencies_hz)):
        modes.select_mode(mode)
        assert modes._timer.isActive() and modes.amplitude > 0
        for s in (0.6, -1.0):
            modes.show_phase(s)
            r, A, u = lin.flexible_poses(mode, s * modes.amplitude)[BEAM]
            drawn = scene.beam_points(BEAM)
            assert np.allclose(drawn, r + (local + u) @ A.T, rtol=0, atol=1e-9)
            X = scene.current[BEAM]                          # joints ride on the floating frame
            assert np.allclose(X[:3, 3], r, atol=1e-12) and np.allclose(X[:3, :3], A, atol=1e-12)
        # Elastic modes bend visibly: the midpoint leaves the chord by > 1 % of the beam length.
        chord = drawn[-1] - drawn[0]
        mid = drawn[len(drawn) // 2] - drawn[0]
        bent += np.linalg.norm(mid - (mid @ chord) / (chord @ chord) * chord) > 0.01 * np.linalg.norm(chord)
    assert bent >= 1
    modes.stop_button.click()
    assert not modes._timer.isActive()
    assert np.allclose(scene.beam_points(BEAM), r0 + local @ A0.T, rtol=0, atol=1e-9)
