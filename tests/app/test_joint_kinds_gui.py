"""Every joint kind of ``solver.JOINT_KINDS`` is in Model ▸ Add Joint (which places it by picking) with
its label and icon, and is drawn by the parts its ``glyph`` names."""
from __future__ import annotations

import pytest

import solver
from app.resources import RESOURCES
from app.viewport import shapes


def _joint(kind):
    return solver.Joint(name="j", type=kind, body_i="ground", body_j="b", origin=(0.0, 0.0, 0.0),
                        origin2=(0.5, 0.0, 0.0), axis=(0.0, 0.0, 1.0), axis2=(1.0, 0.0, 0.0))


@pytest.mark.parametrize("kind", solver.JOINT_TYPES)
def test_every_kind_has_a_glyph_and_an_icon_file(kind):
    entry = solver.JOINT_KINDS[kind]
    assert set(entry.glyph) <= set(shapes.GLYPH_PARTS)
    assert shapes.joint_glyph(_joint(kind), 0.05).GetNumberOfPoints() > 0
    assert (RESOURCES / "icons" / f"{entry.icon}.svg").exists()


def test_menus_list_every_kind_by_its_label(window):
    for kind, entry in solver.JOINT_KINDS.items():
        assert window.actions[f"add_joint_{kind}"].text() == entry.label


def test_inplane_joint_from_the_menu_is_drawn_runs_and_undoes(window, qtbot, pendulum):
    window.document.set_model(pendulum)
    assert window.actions["add_joint_inplane"].text() == "in-plane"
    window.document.select("bob")
    window.actions["add_joint_inplane"].trigger()                      # picking, with bob picked first …
    window.actions["place_typed"].trigger()                            # … Enter: added at bob's CM
    model = window.document.model
    [name] = [n for n, j in model.joints.items() if j.type == "inplane"]
    joint = model.joints[name]
    assert joint.body_j == "bob" and list(joint.origin) == list(model.bodies["bob"].position)
    qtbot.waitUntil(lambda: window.viewport.scene.actor(name) is not None, timeout=5000)   # redrawn after the edit
    assert solver.simulate(model, t_end=0.1, codegen=False).status == "ok"
    window.document.undo_stack.undo()
    assert name not in window.document.model.joints
    window.document.undo_stack.redo()
    assert window.document.model.joints[name].type == "inplane"
