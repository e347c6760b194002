"""Model ▸ Add Coupler (solver.Coupler's declarations: NEW, LABEL): on two geared shafts, with the
second joint selected, the menu couples it to the joint before it; it is listed in the tree, its
coefficients are typed into the property editor (a bad list refused naming the field), it runs
(θ2 = −2 θ1), and undo takes the edit and the coupler back."""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt

import solver
from real_input import retype


def two_shafts():
    m = solver.Model(name="gears", gravity=(0.0, 0.0, 0.0))
    for k, x in enumerate((0.0, 1.0)):
        m.add_body(f"shaft{k}", mass=1.0, inertia=(0.5, 0.5, 1.0), position=(x, 0.0, 0.0),
                   geometry={"shape": "cylinder", "radius": 0.2, "length": 0.05})
        m.add_joint(f"axle{k}", "revolute", "ground", f"shaft{k}", origin=(x, 0.0, 0.0), axis=(0.0, 0.0, 1.0))
    m.add_torque("drive", "shaft0", torque=(0.0, 0.0, 1.0))
    return m


def test_a_coupler_from_the_menu_relates_the_selected_joint_and_runs(window, qtbot):
    window.document.set_model(two_shafts())
    assert window.actions["add_coupler"].text() == "Add &Coupler"
    window.document.select("axle1")
    window.actions["add_coupler"].trigger()
    model = window.document.model
    [name] = model.couplers
    coupler = model.couplers[name]
    assert name == "coupler1" and (coupler.joint_i, coupler.joint_j) == ("axle0", "axle1")
    assert window.tree.findItems(name, Qt.MatchFlag.MatchExactly | Qt.MatchFlag.MatchRecursive, 0)
    window.document.select(name)
    line = window.properties.editor("coefficients").line
    retype(qtbot, line, "0, x")                           # refused, naming the field; the model keeps its own
    assert "must be numbers" in window.properties.error("coefficients")
    assert model.couplers[name].coefficients is None
    retype(qtbot, line, "0, -2")                          # θ_j = 0 − 2 θ_i
    assert model.couplers[name].coefficients == [0.0, -2.0]
    result = solver.simulate(model, t_end=0.5, output_step=0.25, codegen=False)
    assert result.status == "ok"
    w = [result.body_angular_velocity(f"shaft{k}")[:, 2] for k in (0, 1)]
    assert np.allclose(w[1], -2.0 * w[0], atol=1e-8) and w[0][-1] > 0.0
    window.document.undo_stack.undo()
    assert model.couplers[name].coefficients is None
    window.document.undo_stack.undo()
    assert name not in window.document.model.couplers
