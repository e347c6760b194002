"""Results are marked stale (banner, greyed plots) after any model edit, undo or redo, also one
made during the run; a new run clears the mark; the display units are not an edit.  The animation
plays when a run ends (a preference, on by default)."""
import pytest
from PySide6.QtCore import Qt

from app import app_settings
from app.plots import STALE_OPACITY
from app.tree import SETTINGS_ITEM


def _run(window, qtbot):
    with qtbot.waitSignal(window.simulation.finished, timeout=20000):
        assert window.run_simulation(t_end=0.1)
    with qtbot.waitSignal(window.simulation.results_changed, timeout=2000, raising=False):
        pass


def _greyed(panel):
    return not panel.stale_banner.isHidden() and all(p.opacity() == STALE_OPACITY for p in panel.plots)


def _current(panel):
    return panel.stale_banner.isHidden() and all(p.opacity() == 1.0 for p in panel.plots)


@pytest.fixture
def ran(window, qtbot, pendulum):
    window.document.set_model(pendulum)
    window.document.select("pivot")
    _run(window, qtbot)
    return window


@pytest.mark.slow
def test_edit_undo_and_rerun(ran, qtbot):
    w = ran
    panels = (w.plots, w.energy, w.diagnostics)
    assert not w.simulation.stale and all(_current(p) for p in panels) and w.plots.plots
    w.document.select("bob")
    w.properties.commit("mass", 3.0)
    assert w.simulation.stale and all(_greyed(p) for p in panels)
    w.document.select("pivot")                       # plots drawn while stale are greyed too
    assert _greyed(w.plots)
    _run(w, qtbot)
    assert not w.simulation.stale and all(_current(p) for p in panels)
    w.document.undo_stack.undo()
    assert w.simulation.stale and all(_greyed(p) for p in panels)
    _run(w, qtbot)
    w.document.undo_stack.redo()
    assert w.simulation.stale


def test_display_units_are_not_an_edit(ran):
    w = ran
    w.document.select(SETTINGS_ITEM)
    w.properties.commit("display_units", "mm-kg-s")
    assert not w.simulation.stale
    w.properties.commit("t_end", 0.5)
    assert w.simulation.stale


def test_edit_during_the_run_leaves_its_results_stale(window, qtbot, pendulum):
    window.document.set_model(pendulum)
    with qtbot.waitSignal(window.simulation.finished, timeout=20000):
        assert window.run_simulation(t_end=0.1)
        window.document.select("bob")
        window.properties.commit("mass", 3.0)        # before the run's end reaches the window
    assert window.simulation.results is not None and window.simulation.stale


def test_autoplay_after_run_is_a_preference(ran, qtbot):
    w = ran
    assert w.actions["autoplay"].isChecked() and w.player.playing
    w.player.pause()
    w.actions["autoplay"].trigger()                  # off
    assert not app_settings.autoplay()
    _run(w, qtbot)
    assert not w.player.playing



def test_click_while_playing_pauses_and_picks(ran, qtbot):
    w = ran
    w.player.set_frame(0)
    w.player.play()
    assert w.player.playing and w.viewport.scene.merged is not None
    vp = w.viewport
    vp.set_view("front")
    cm = w.viewport.scene.current["bob"][:3, 3]          # where the bob is drawn now
    qtbot.mouseClick(vp.vtk_widget, Qt.MouseButton.LeftButton, pos=vp.project(cm))
    assert not w.player.playing and w.document.selection == "bob"
