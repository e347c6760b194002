"""Number fields of the property editor are safe to type into (issue #31, items 1–4): a click or
Tab selects the whole value, a double-click too; the mouse wheel never edits the model; Enter in an
unchanged field is no edit; every refused value gets a message, cleared when the field is valid."""
import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QApplication

from app.tree import SETTINGS_ITEM

LEFT = Qt.MouseButton.LeftButton


def _type(qtbot, spin, text):
    """Click in the number field (a double-click when it has the focus already), type ``text``
    and Enter."""
    click = qtbot.mouseDClick if spin.hasFocus() else qtbot.mouseClick
    click(spin.lineEdit(), LEFT, pos=QPoint(spin.lineEdit().width() // 2, spin.lineEdit().height() // 2))
    qtbot.keyClicks(spin, text)
    qtbot.keyClick(spin, Qt.Key.Key_Return)


def _wheel(widget, notches=3):
    """A real wheel event over ``widget`` (up, ``notches`` clicks)."""
    pos = QPointF(widget.width() / 2, widget.height() / 2)
    event = QWheelEvent(pos, QPointF(widget.mapToGlobal(pos.toPoint())), QPoint(), QPoint(0, 120 * notches),
                        Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(widget, event)


@pytest.fixture
def mm(loaded):
    """The pendulum shown in mm-kg-s, bob 100 mm along x, the property editor on the bob."""
    w = loaded
    w.document.model.settings.set("display_units", "mm-kg-s")
    w.document.model.bodies["bob"].set("position", [0.1, -0.5, 0.0])
    w.document.select("")
    w.document.select("bob")
    w.document.undo_stack.clear()
    return w


def test_click_selects_the_whole_value(mm, qtbot):
    w = mm
    x = w.properties.editor("position").spins[0]
    assert x.text() == "x 100 mm"
    qtbot.mouseClick(x.lineEdit(), LEFT, pos=QPoint(x.lineEdit().width() // 2, x.lineEdit().height() // 2))
    assert x.hasFocus() and x.lineEdit().selectedText() == "100"
    qtbot.keyClicks(x, "5")
    qtbot.keyClick(x, Qt.Key.Key_Return)
    assert w.document.model.bodies["bob"].position[0] == pytest.approx(0.005)    # 5 mm, not 0.1005 m


def test_tab_and_double_click_select_the_whole_value(mm, qtbot):
    w = mm
    x, y = w.properties.editor("position").spins[:2]
    y.set_si_value(0.3505)
    x.setFocus()
    qtbot.keyClick(x, Qt.Key.Key_Tab)
    assert y.hasFocus() and y.lineEdit().selectedText() == "350.5"
    edit = y.lineEdit()
    qtbot.mouseClick(edit, LEFT, pos=QPoint(edit.width() - 4, edit.height() // 2))   # caret placed: focused
    assert edit.selectedText() == ""
    qtbot.mouseDClick(edit, LEFT, pos=QPoint(edit.width() // 2, edit.height() // 2))
    assert edit.selectedText() == "350.5"
    qtbot.keyClicks(y, "350 mm")
    qtbot.keyClick(y, Qt.Key.Key_Return)
    assert w.document.model.bodies["bob"].position[1] == pytest.approx(0.35)


def test_wheel_never_edits(loaded, qtbot):
    w = loaded
    mass = w.properties.editor("mass").spin
    _wheel(mass.lineEdit())
    _type(qtbot, mass, "")                         # focused now; the wheel still does nothing
    _wheel(mass.lineEdit())
    assert w.document.model.bodies["bob"].mass == 2.0
    w.document.select("pivot")
    kind = w.properties.editor("type").combo
    _wheel(kind)
    assert w.document.model.joints["pivot"].type == "revolute"
    assert w.document.undo_stack.count() == 0


def test_enter_in_an_unchanged_field_is_no_edit(loaded, qtbot):
    w = loaded
    w.document.model.bodies["bob"].set("mass", 7.70712345678912)
    w.document.select("")
    w.document.select("bob")
    w.document.undo_stack.clear()
    mass = w.properties.editor("mass").spin
    assert mass.text() == "7.707123457 kg"
    _type(qtbot, mass, "")
    mass.clearFocus()
    assert w.document.model.bodies["bob"].mass == 7.70712345678912
    assert w.document.undo_stack.count() == 0 and not w.document.modified


@pytest.mark.parametrize("text, message", [("1e400", "finite"), ("-5 kg", ">= 0 kg")])
def test_refused_number_has_a_message_cleared_when_valid(loaded, qtbot, text, message):
    w = loaded
    mass = w.properties.editor("mass").spin
    _type(qtbot, mass, text)
    assert message in w.properties.error("mass") and w.properties.error("mass").startswith("mass")
    assert w.document.model.bodies["bob"].mass == 2.0
    mass.clearFocus()
    assert mass.value() == 2.0 and message in w.properties.error("mass")
    _type(qtbot, mass, "2")                       # the stored value, valid: the message goes
    assert w.properties.error("mass") == "" and w.document.undo_stack.count() == 0


def test_refused_setting_has_a_message(loaded, qtbot):
    w = loaded
    w.document.select(SETTINGS_ITEM)
    t_end = w.properties.editor("t_end").spin
    _type(qtbot, t_end, "-1")
    assert "t_end" in w.properties.error("t_end") and w.document.model.settings.t_end == 1.0
    _type(qtbot, t_end, "3")
    assert w.properties.error("t_end") == "" and w.document.model.settings.t_end == 3.0


def test_solver_settings_dialog_reports_a_refused_value(window, qtbot):
    from app.run_control import SettingsDialog
    dialog = SettingsDialog(dict(window.document.model.settings.values), window)
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.activateWindow()
    qtbot.waitActive(dialog)
    t_end = dialog.editors["t_end"].spin
    _type(qtbot, t_end, "-1")
    assert dialog.isVisible() and dialog.message.isVisible() and "t_end" in dialog.message.text()
    assert dialog.values()["t_end"] == 1.0                     # Enter did not take the dialog's values
    qtbot.keyClick(t_end, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClicks(t_end, "2")
    qtbot.keyClick(t_end, Qt.Key.Key_Return)
    assert dialog.message.isHidden()
    assert not dialog.isVisible() and dialog.values()["t_end"] == 2.0


def test_integer_field_refusal_has_a_message(window, qtbot, answers):
    w = window
    w.document.model.add_flexible_beam("beam", (0.0, 0.0, 0.0), (1.0, 0.0, 0.0), section={"height": 0.02, "width": 0.02},
                                       material={"density": 7850.0, "youngs": 2.1e11}, elements=4, modes=2)
    w.document.select("")
    w.document.select("beam")
    elements = w.properties.editor("elements").spin
    _wheel(elements)
    _type(qtbot, elements, "0")
    assert "elements: must be an integer from 1" in w.properties.error("elements")
    assert w.document.model.flexible_bodies["beam"].elements == 4 and w.document.undo_stack.count() == 0
    _type(qtbot, elements, "6")
    assert w.properties.error("elements") == "" and w.document.model.flexible_bodies["beam"].elements == 6
