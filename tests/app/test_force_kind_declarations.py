"""The GUI follows the force kind registry (issue #31, item 13): a kind registered in
``solver.FORCE_CLASSES`` with its declarations (LABEL, GLYPH, GLYPH_FIELDS, NEW, NAME_PREFIX) is in
Model ▸ Add Force Element, is created on the selected body, edited in the property editor, drawn,
dragged in the viewport and deleted — with no GUI code of its own.  A throw-away kind whose arrow is
drawn from fields named unlike the applied force's, and every registered kind, through real
widgets (menu actions, typed keys, mouse drags in the 3D view)."""
from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest

import solver
from solver.model.elements import NAME, Element
from solver.model.fields import Field

LEFT = Qt.MouseButton.LeftButton


class Pull(Element):
    """A test-only kind: a pull on a body drawn as an arrow from fields of its own names."""
    KIND = "test_pull"
    COLLECTION = "forces"
    LABEL = "Test pull"
    GLYPH = "arrow"
    GLYPH_FIELDS = {"body": "on", "point": "at", "vector": "pull"}
    NAME_PREFIX = "pull"
    NEW = {"pull": [1.0, 0.0, 0.0]}
    FIELDS = (NAME, Field("on", "body"), Field("at", "vec3", "m"),
              Field("pull", "function_vec3", "N", default=(0.0, 0.0, 0.0)),
              Field("gain", "float", minimum=0.0, exclusive_min=True))


@pytest.fixture
def pull_kind(monkeypatch):
    """``test_pull`` registered (before the window builds its menus)."""
    monkeypatch.setitem(solver.FORCE_CLASSES, Pull.KIND, Pull)


@pytest.fixture
def vehicle_ready(pendulum):
    """The pendulum with what every kind needs first: a road and tires on two wheel bodies (with a
    shape: a contact group's bodies)."""
    m = pendulum
    m.add_road("road")
    for name, x in (("w1", 1.0), ("w2", -1.0)):
        m.add_body(name, mass=1.0, inertia=(0.1, 0.1, 0.1), position=(x, -0.5, 0.3),
                   geometry={"shape": "sphere", "radius": 0.3})
        m.add_tire(f"tire_{name}", name, "road")
    return m


def _type_into(qtbot, widget, focus, text):
    """Click ``widget`` (a line edit or a spin box's), select all, type ``text`` and Enter into ``focus``."""
    qtbot.mouseClick(widget, LEFT, pos=QPoint(widget.width() // 2, widget.height() // 2))
    qtbot.keyClick(focus, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClicks(focus, text)
    qtbot.keyClick(focus, Qt.Key.Key_Return)


def _add_edit_draw_drag_delete(w, qtbot, kind):
    """Add a ``kind`` element from the menu on the selected bob; rename it by typing; check it is drawn
    (if it has a glyph) and drag it (if it has global points); delete it with the Delete key; then
    undo back to the model before."""
    model = w.document.model
    before, start = set(model.forces), w.document.undo_stack.index()
    w.document.select("bob")
    w.actions[f"add_force_{kind}"].trigger()
    [name] = set(w.document.model.forces) - before
    cls = solver.FORCE_CLASSES[kind]
    assert model.forces[name].KIND == kind and name.startswith(cls.NAME_PREFIX or kind)
    assert w.document.selection == name and w.properties.target.element is model.forces[name]

    line = w.properties.editor("name").line
    _type_into(qtbot, line, line, f"{kind}_x")
    name = f"{kind}_x"
    assert name in model.forces and w.document.selection == name

    if cls.GLYPH is not None:
        qtbot.waitUntil(lambda: w.viewport.scene.actor(name) is not None, timeout=5000)
        force = model.forces[name]
        if any(force.values[f] is not None for f in force.location_fields()):
            _drag(w, qtbot, name)
    count = w.document.undo_stack.count()
    w.viewport.vtk_widget.setFocus()
    qtbot.keyClick(w, Qt.Key.Key_Delete)
    assert name not in model.forces and w.document.undo_stack.count() == count + 1
    w.document.undo_stack.undo()
    assert name in model.forces
    w.document.undo_stack.setIndex(start)
    assert set(model.forces) == before


def _drag(w, qtbot, name):
    """Drag element ``name`` 30 px up in the front view: its global points move by one offset in the
    screen plane (x-y), as one undoable Move."""
    vp, model = w.viewport, w.document.model
    w.actions["view_front"].trigger()
    vp.flush()
    fields = model.forces[name].location_fields()
    before = {f: model.forces[name].values[f] for f in fields}
    start = _pixel_on(vp, name)
    end = QPoint(start.x(), start.y() - 30)
    widget = vp.vtk_widget
    QTest.mousePress(widget, LEFT, Qt.KeyboardModifier.NoModifier, start)
    for s in np.linspace(0.0, 1.0, 6)[1:]:
        QTest.mouseMove(widget, QPoint(start.x(), round(start.y() - 30 * s)))
    QTest.mouseRelease(widget, LEFT, Qt.KeyboardModifier.NoModifier, end)
    moved = [np.subtract(model.forces[name].values[f], before[f]) for f in fields if before[f] is not None]
    assert moved and all(np.allclose(d, moved[0]) for d in moved)
    assert moved[0][1] > 0.0 and abs(moved[0][2]) < 1e-9 and w.document.undo_stack.undoText().startswith("Move")


def _pixel_on(vp, name):
    """A widget pixel where a click picks element ``name`` (searched over its projected bounds)."""
    b = np.array(vp.scene.actor(name).GetBounds()).reshape(3, 2)
    corners = [vp.project([x, y, z]) for x in b[0] for y in b[1] for z in b[2]]
    xs, ys = [c.x() for c in corners], [c.y() for c in corners]
    for x in np.linspace(min(xs), max(xs), 15).round().astype(int):
        for y in np.linspace(min(ys), max(ys), 15).round().astype(int):
            if vp.pick(int(x), int(y)).element == name:
                return QPoint(int(x), int(y))
    raise AssertionError(f"no pixel picks {name}")


def test_a_new_kind_works_in_the_gui_untouched(pull_kind, window, qtbot, pendulum):
    w = window
    w.document.set_model(pendulum)
    assert w.actions["add_force_test_pull"].text() == "Test pull"
    w.document.select("bob")
    w.actions["add_force_test_pull"].trigger()
    pull = w.document.model.forces["pull1"]
    assert (pull.on, pull.at, pull.pull, pull.gain) == ("bob", [0.0, -0.5, 0.0], [1.0, 0.0, 0.0], 1.0)
    gain = w.properties.editor("gain").spin
    _type_into(qtbot, gain.lineEdit(), gain, "2.5")
    assert pull.gain == 2.5
    qtbot.waitUntil(lambda: w.viewport.scene.actor("pull1") is not None, timeout=5000)
    x0, x1, *_ = w.viewport.scene.actor("pull1").GetBounds()
    assert x0 == pytest.approx(0.0, abs=1e-6) and x1 > 0.0          # an arrow from `at` along `pull`
    _drag(w, qtbot, "pull1")
    _add_edit_draw_drag_delete(w, qtbot, "test_pull")


def test_every_registered_kind(window, qtbot, vehicle_ready, answers):
    w = window
    w.document.set_model(vehicle_ready)
    for kind in solver.FORCE_CLASSES:
        _add_edit_draw_drag_delete(w, qtbot, kind)
    assert not answers.errors
