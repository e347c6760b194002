"""Screenshots of GUI part 2 (docs/screenshots/ through tools/screenshots.sh): a run in progress, the reaction plot of a clicked
joint, the energy and diagnostics panels (slider–crank sample)."""
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt

from app import dialogs
from app.screenshot import grab_window

ROOT = Path(__file__).resolve().parents[2]
SLIDER_CRANK = ROOT / "sample_models" / "slider_crank.mbs.json"


def save(window, folder, name):
    image = grab_window(window, window.viewport)
    assert image.save(str(folder / name))
    return image


def show_dock(window, qtbot, dock, height=330):
    dock.show()
    dock.raise_()
    window.resizeDocks([dock], [height], Qt.Orientation.Vertical)
    qtbot.wait(80)


@pytest.mark.slow
def test_run_screenshots(window, qtbot, monkeypatch, screenshots_dir):
    monkeypatch.setattr(dialogs, "show_run_failure", lambda parent, outcome: None)
    window.resize(1280, 860)
    assert window.load(str(SLIDER_CRANK))
    window.viewport.set_view("front")
    progress = []
    window.simulation.progress.connect(lambda t, t_end, wall: progress.append(t))
    assert window.run_simulation(t_end=20.0)
    qtbot.waitUntil(lambda: bool(progress) and progress[-1] > 0.45, timeout=15000)
    image = save(window, screenshots_dir, "run_in_progress.png")
    status = window.simulation.status
    assert status.isVisible() and status.bar.value() > 0 and "real time" in status.label.text()
    corner = status.bar.mapTo(window, QPoint(2, status.bar.height() // 2))
    assert image.pixelColor(corner.x(), corner.y()).isValid()
    with qtbot.waitSignal(window.simulation.results_changed, timeout=5000):
        window.simulation.stop()
    results = window.simulation.results
    assert results.t[-1] > 0.45

    window.player.seek(0.3)
    show_dock(window, qtbot, window.plot_dock)
    window.tree.setCurrentItem(window.tree.item("crank_rod"))
    assert "crank_rod Fx" in window.plots.curves
    F, _ = results.joint_reaction("crank_rod")
    assert np.allclose(window.plots.curve_data("crank_rod Fx")[1], F[:, 0])
    save(window, screenshots_dir, "reaction_plot.png")

    show_dock(window, qtbot, window.energy_dock)
    assert window.energy.curves
    save(window, screenshots_dir, "energy_panel.png")

    show_dock(window, qtbot, window.diagnostics_dock, 420)
    save(window, screenshots_dir, "diagnostics_panel.png")
