"""Every force kind of ``solver.FORCE_CLASSES`` is in Model ▸ Add Force Element with its LABEL and
drawn by its GLYPH: the linear actuator (added as one solver class plus one evaluator) is created
from the menu on the selected body, drawn as a coil between its points, runs, and undoes."""
from __future__ import annotations

import solver


def test_linear_actuator_from_the_menu_is_drawn_and_runs(window, qtbot, pendulum):
    window.document.set_model(pendulum)
    labels = {k: window.actions[f"add_force_{k}"].text() for k in solver.FORCE_CLASSES}
    assert labels["linear_actuator"] == "Linear actuator" and labels["spring_damper"] == "Spring-damper"
    window.document.select("bob")
    window.actions["add_force_linear_actuator"].trigger()
    model = window.document.model
    [name] = [n for n, f in model.forces.items() if f.KIND == "linear_actuator"]
    ram = model.forces[name]
    assert ram.body_j == "bob" and list(ram.point_j) == list(model.bodies["bob"].position)
    qtbot.waitUntil(lambda: window.viewport.scene.actor(name) is not None, timeout=5000)   # redrawn after the edit
    assert any(s.item is window.viewport.scene.items[name] for s in window.viewport.scene.springs)
    model.set_field(name, "force", "2*sin(t)")
    result = solver.simulate(model, t_end=0.1, codegen=False)
    assert result.status == "ok"
    window.document.undo_stack.undo()
    window.document.undo_stack.undo()
    assert name not in window.document.model.forces
