"""Two fixed bugs: the tree and the selection stay in step after a click on empty viewport (the same
item clicked again shows its properties and plots), and an invalid edit still on screen blocks Run
with a message that names the field and puts the cursor in it."""
import numpy as np
from PySide6.QtCore import QPoint, Qt
from real_input import refused_driver_expression


def _click_item(qtbot, tree, name):
    item = tree.item(name)
    tree.scrollToItem(item)
    qtbot.mouseClick(tree.viewport(), Qt.MouseButton.LeftButton, pos=tree.visualItemRect(item).center())


def test_reselecting_after_clicking_empty_viewport(window, qtbot, pendulum):
    w = window
    w.document.set_model(pendulum)
    with qtbot.waitSignal(w.simulation.results_changed, timeout=20000):
        assert w.run_simulation(t_end=0.1)
    _click_item(qtbot, w.tree, "pivot")
    assert w.document.selection == "pivot" and w.properties.target.element.name == "pivot"
    vp = w.viewport
    vp.render()
    qtbot.mouseClick(vp.vtk_widget, Qt.MouseButton.LeftButton, pos=QPoint(3, 3))   # empty space
    assert w.document.selection == "" and w.properties.target is None
    assert w.tree.currentItem() is None
    _click_item(qtbot, w.tree, "pivot")                                              # the same item
    assert w.document.selection == "pivot" and w.properties.target.element.name == "pivot"
    F, _ = w.simulation.results.joint_reaction("pivot")
    assert np.array_equal(w.plots.curve_data("pivot Fy")[1], F[:, 1])


def test_invalid_expression_blocks_run_and_selects_the_field(window, qtbot, pendulum, answers):
    w = window
    line = refused_driver_expression(qtbot, w, pendulum, "swing")
    assert w.document.model.element("swing").expression == "0.5*sin(t)"      # the model kept the old one
    assert w.properties.error("expression")
    w.actions["run"].trigger()
    assert not w.simulation.running
    title, problems = answers.errors[-1]
    assert title == "Cannot run" and "Driver 'swing'" in problems[0] and "expression" in problems[0]
    assert line.selectedText() == "0.5*sin(t"                                   # the field, selected
    line.selectAll()
    qtbot.keyClicks(line, "0.5*sin(2*t)")                                       # typed, not yet entered
    with qtbot.waitSignal(w.simulation.finished, timeout=20000):
        w.actions["run"].trigger()                                               # committed, then run
    assert w.document.model.element("swing").expression == "0.5*sin(2*t)"
    assert len(answers.errors) == 1


def test_live_invalid_text_blocks_run_without_enter(window, qtbot, pendulum, answers):
    pendulum.add_driver("swing", "pivot", expression="0")
    window.document.set_model(pendulum)
    window.document.select("swing")
    line = window.properties.editor("expression").lines[0]
    line.selectAll()
    qtbot.keyClicks(line, "2*)")
    window.actions["run"].trigger()
    assert not window.simulation.running and answers.errors[-1][0] == "Cannot run"
    assert window.document.model.element("swing").expression == "0"
