"""Real input events on the main window, counted (the four-bar-by-picking test counts its actions;
other picking tests reuse them)."""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest

CTRL = Qt.KeyboardModifier.ControlModifier
LEFT = Qt.MouseButton.LeftButton


class Actions:
    """Real input events, counted."""

    def __init__(self, window, qtbot):
        self.window, self.qtbot, self.count = window, qtbot, 0
        self.vp = window.viewport
        self.widget = window.viewport.vtk_widget

    def key(self, key, modifier=Qt.KeyboardModifier.NoModifier):
        self.qtbot.keyClick(self.window, key, modifier)
        self.count += 1

    def trigger(self, name):
        self.window.actions[name].trigger()
        self.count += 1

    def click(self, point):
        """A left click where the world ``point`` appears (or at a widget pixel)."""
        pos = point if isinstance(point, QPoint) else self.vp.project(point)
        assert self.widget.rect().contains(pos)
        self.qtbot.mouseClick(self.widget, LEFT, pos=pos)
        self.count += 1

    def drag(self, start, end):
        """Left press at world point ``start``, move to where ``end`` appears, release."""
        a, b = self.vp.project(start), self.vp.project(end)
        QTest.mousePress(self.widget, LEFT, Qt.KeyboardModifier.NoModifier, a)
        for s in np.linspace(0.0, 1.0, 6)[1:]:
            QTest.mouseMove(self.widget, QPoint(round(a.x() + s * (b.x() - a.x())), round(a.y() + s * (b.y() - a.y()))))
        QTest.mouseRelease(self.widget, LEFT, Qt.KeyboardModifier.NoModifier, b)
        self.count += 2


def retype(qtbot, line, text):
    """Replace the text of line edit ``line`` by typing ``text``, then Enter."""
    line.selectAll()
    qtbot.keyClicks(line, text)
    qtbot.keyClick(line, Qt.Key.Key_Return)


def refused_driver_expression(qtbot, window, pendulum, name):
    """The pendulum with a driver ``name`` open in the property editor, a broken expression typed
    into it (the model refuses it and keeps its own); returns the expression's line edit."""
    pendulum.add_driver(name, "pivot", expression="0.5*sin(t)")
    window.document.set_model(pendulum)
    window.document.select(name)
    line = window.properties.editor("expression").lines[0]
    retype(qtbot, line, "0.5*sin(t")
    return line
