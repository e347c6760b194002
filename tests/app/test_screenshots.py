"""Render each sample model in the viewport, check that real geometry shows (not a blank or noisy
image) and write window screenshots, 3D view included (to docs/screenshots/ through tools/screenshots.sh)."""

import numpy as np
import pytest
from PySide6.QtCore import QPoint

from app.resources import sample_files
from app.screenshot import grab_window



def geometry_fraction(viewport) -> float:
    """Fraction of viewport pixels that change when the model's actors are hidden."""
    with_model = viewport.grab_array().astype(int)
    actors = [item.actor for item in viewport.scene.items.values()]
    for actor in actors:
        actor.VisibilityOff()
    background = viewport.grab_array().astype(int)
    for actor in actors:
        actor.VisibilityOn()
    viewport.render()
    return float((np.abs(with_model - background).max(axis=2) > 24).mean())


def test_pendulum_renders_real_pixels(window, pendulum):
    window.document.set_model(pendulum)
    image = window.viewport.grab_array()
    assert image.shape[:2] == (window.viewport.vtk_widget.height(), window.viewport.vtk_widget.width())
    assert 0.003 < geometry_fraction(window.viewport) < 0.6
    # The background is a smooth gradient, not noise: neighbouring rows differ little in the corner.
    corner = image[:40, :40].astype(int)
    assert np.abs(np.diff(corner, axis=0)).max() < 12


@pytest.mark.slow
@pytest.mark.parametrize("path", sample_files(), ids=lambda p: p.name)
def test_sample_screenshot(window, path, screenshots_dir):
    assert window.load(str(path)), f"cannot open {path}"
    window.viewport.set_view("iso")
    fraction = geometry_fraction(window.viewport)
    assert 0.003 < fraction < 0.7, f"{path.name}: geometry covers {fraction:.1%} of the view"
    out = screenshots_dir / (path.name.removesuffix(".mbs.json") + ".png")
    image = grab_window(window, window.viewport)
    assert image.save(str(out))
    # The composited window shows the 3D view, not the black area QWidget.grab leaves there.
    vtk = window.viewport.vtk_widget
    corner = vtk.mapTo(window, QPoint(5, 5))
    assert image.pixelColor(corner.x(), corner.y()).lightness() > 100


def test_samples_exist_or_skip():
    if not sample_files():
        pytest.skip("no sample models in sample_models/")
