"""The property panel opens wide enough (issue #31, item 9): at the window's default size a body's
3-vectors show every component unclipped in significant digits (−1.91e-7 m is "y -1.91e-07 m",
not a clipped "-1.9100"), the inertia tool's button label is whole and a refusal's message wraps
inside the panel; nothing needs horizontal scrolling."""
from PySide6.QtCore import QPoint, Qt

LEFT = Qt.MouseButton.LeftButton


def _unclipped(spin):
    edit = spin.lineEdit()
    return edit.width() >= edit.fontMetrics().horizontalAdvance(spin.text()) + 2


def test_vectors_buttons_and_messages_fit(window, qtbot, pendulum):
    w = window
    pendulum.bodies["bob"].set("position", [0.123456789, -1.91e-7, 0.0])
    w.document.set_model(pendulum)
    w.document.select("bob")
    qtbot.wait(50)
    position = w.properties.editor("position").spins
    assert position[1].text() == "y -1.91e-07 m"
    assert all(_unclipped(s) for s in position), [s.lineEdit().width() for s in position]
    button = w.properties.inertia_button
    assert button.width() >= button.sizeHint().width()
    mass = w.properties.editor("mass").spin
    qtbot.mouseClick(mass.lineEdit(), LEFT, pos=QPoint(5, mass.lineEdit().height() // 2))
    qtbot.keyClicks(mass, "-5 kg")
    qtbot.keyClick(mass, Qt.Key.Key_Return)
    label = w.properties.errors["mass"]
    assert label.isVisible() and label.text().startswith("mass")
    assert label.mapTo(w.properties.viewport(), label.rect().topRight()).x() <= w.properties.viewport().width()
    assert w.properties.horizontalScrollBar().maximum() == 0
