"""MP4 export of the animation (imageio-ffmpeg, frames from the VTK render window): the file has one
frame per 1/fps s of (speed-scaled) simulated time and the size of the viewport image."""
from __future__ import annotations

import numpy as np
import pytest

import solver

imageio_ffmpeg = pytest.importorskip("imageio_ffmpeg")


@pytest.mark.slow
def test_export_mp4_has_expected_frames(window, pendulum, tmp_path):
    res = solver.simulate(pendulum, t_end=0.5, output_step=0.01)
    window.document.set_model(pendulum)
    window.simulation.set_results(res)
    player = window.player
    assert window.animation_bar.video_button.isEnabled()
    player.set_frame(7)
    player.set_speed(2.0)
    indices = player.video_frames(30.0)
    assert len(indices) == 8                                   # 0.5 s at ×2 is 0.25 s of video at 30/s
    assert indices == [int(np.floor(k * 2.0 / 30.0 / 0.01 + 1e-9)) for k in range(8)]
    player.set_speed(1.0)
    path = tmp_path / "clip.mp4"
    count = player.export_video(str(path), fps=30.0)
    assert count == 16 and path.stat().st_size > 0             # 0.5 s × 30 frames/s + the first
    frames, seconds = imageio_ffmpeg.count_frames_and_secs(str(path))
    assert frames == 16 and seconds == pytest.approx(16 / 30.0, abs=0.05)
    reader = imageio_ffmpeg.read_frames(str(path))
    meta = next(reader)
    h, w, _ = window.viewport.grab_array().shape
    assert meta["size"] == (w // 16 * 16, h // 16 * 16)
    first = np.frombuffer(next(reader), np.uint8).reshape(meta["size"][1], meta["size"][0], 3)
    reader.close()
    assert first.std() > 5                                     # a rendered scene, not a blank frame
    assert player.index == 7                                   # the shown frame is restored
