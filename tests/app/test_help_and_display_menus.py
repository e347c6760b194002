"""Help ▸ Documentation (F1) opens the user guide; View ▸ Display Units sets the display units and
angles as an undoable setting; the modes table shows an undamped mode's damping as 0, not round-off
(issue #31, item 12)."""
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QDesktopServices

from app import menus


def test_f1_opens_the_user_guide(window, qtbot, monkeypatch):
    opened = []
    monkeypatch.setattr(QDesktopServices, "openUrl", lambda url: opened.append(url) or True)
    window.viewport.vtk_widget.setFocus()
    qtbot.keyClick(window, Qt.Key.Key_F1)
    [url] = opened
    assert url.isLocalFile() and Path(url.toLocalFile()).name == "gui.md" and Path(url.toLocalFile()).exists()
    assert menus.MOUSE_HELP      # the viewport controls stay under Help too
    assert window.actions["mouse_help"].text() == "&Viewport Controls"


def test_display_units_from_the_view_menu(loaded):
    w = loaded
    view = next(a.menu() for a in w.menuBar().actions() if a.text() == "&View")
    units = next(a.menu() for a in view.actions() if a.text() == "Display &Units")
    assert [a.text() for a in units.actions() if not a.isSeparator()] == ["SI", "mm-kg-s", "mm-t-s", "rad", "deg"]
    assert w.actions["display_units_SI"].isChecked() and w.actions["display_angles_rad"].isChecked()
    w.actions["display_units_mm-kg-s"].trigger()
    w.actions["display_angles_deg"].trigger()
    settings = w.document.model.settings
    assert (settings.display_units, settings.display_angles) == ("mm-kg-s", "deg")
    assert w.properties.editor("position").spins[1].text() == "y -500 mm"
    w.document.undo_stack.undo()
    w.document.undo_stack.undo()
    assert settings.display_units == "SI" and w.actions["display_units_SI"].isChecked()


def test_undamped_modes_show_zero_damping(window):
    """The four-bar with an undamped spring: ζ = 4.7e-15 of round-off is shown as 0."""
    assert window.load(str(Path(__file__).resolve().parents[2] / "sample_models" / "fourbar_spring.mbs.json"))
    window.actions["linearize"].trigger()
    table = window.modes.table
    assert table.rowCount() >= 1 and all(table.item(i, 2).text() == "0" for i in range(table.rowCount()))
