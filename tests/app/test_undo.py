"""Every edit type is one undoable step: add, delete (with its cascade), rename, property change
(consecutive edits of a field merge), move, model attributes and solver settings."""
import pytest

from app.tree import MODEL_ITEM, SETTINGS_ITEM


def _snapshot(model):
    return model.to_dict(), model.settings.to_dict()


def _check_undo_redo(window, action):
    """Run ``action``; it must push exactly one command; undo restores, redo re-applies."""
    doc = window.document
    stack = doc.undo_stack
    before, index = _snapshot(doc.model), stack.index()
    action()
    after = _snapshot(doc.model)
    assert after != before
    assert stack.index() == index + 1
    window.actions["undo"].trigger()
    assert _snapshot(doc.model) == before
    window.actions["redo"].trigger()
    assert _snapshot(doc.model) == after


@pytest.fixture
def loaded(window, pendulum):
    window.document.set_model(pendulum)
    return window


@pytest.mark.slow
def test_add_each_element_type(loaded):
    w = loaded
    w.document.select("bob")
    _check_undo_redo(w, lambda: w.actions["add_body"].trigger())
    for t in ("revolute", "prismatic", "spherical", "universal", "distance", "fixed", "planar", "screw",
              "cylindrical", "revolute_spherical"):
        w.document.select("bob")
        _check_undo_redo(w, lambda t=t: _add_joint_typed(w, t))
    for kind in ("spring_damper", "bushing", "force", "torque", "rotational_spring_damper"):
        w.document.select("pivot")
        _check_undo_redo(w, lambda k=kind: w.actions[f"add_force_{k}"].trigger())
    w.document.select("bob")
    _check_undo_redo(w, lambda: w.actions["add_marker"].trigger())
    w.document.select("body1")
    _check_undo_redo(w, lambda: w.actions["duplicate"].trigger())
    assert w.tree.item("body2") is not None  # the duplicate of body1
    assert w.tree.item("revolute_spherical1") is not None


def _add_joint_typed(window, joint_type):
    """Model ▸ Add Joint ▸ <type> enters picking; Enter adds it at the selected body for typed coordinates."""
    window.actions[f"add_joint_{joint_type}"].trigger()
    assert window.placement.joint_type == joint_type
    window.actions["place_typed"].trigger()


def test_add_driver(loaded):
    loaded.document.select("pivot")
    _check_undo_redo(loaded, lambda: loaded.actions["add_driver"].trigger())
    assert loaded.document.model.drivers["driver1"].joint == "pivot"


def test_delete_cascades_after_confirmation(loaded, answers):
    w = loaded
    w.document.model.add_spring_damper("spring", "ground", "bob", point_i=(0.5, 0, 0), point_j=(0, -1, 0))
    w.document.select("bob")
    answers.confirm = False
    w.actions["delete"].trigger()
    assert "bob" in w.document.model and w.document.undo_stack.count() == 0
    title, text = answers.asked[-1]
    assert "pivot" in text and "spring" in text
    answers.confirm = True
    _check_undo_redo(w, lambda: w.actions["delete"].trigger())
    assert "bob" not in w.document.model and not w.document.model.joints
    w.actions["undo"].trigger()
    model = w.document.model
    assert list(model.bodies) == ["bob"] and list(model.joints) == ["pivot"] and list(model.forces) == ["spring"]
    assert w.tree.item("pivot") is not None and w.viewport.actor("spring") is not None


def test_rename_updates_references(loaded):
    w = loaded
    _check_undo_redo(w, lambda: w.editing.rename("bob", "link"))
    assert w.document.model.joints["pivot"].body_j == "link"
    assert w.tree.item("link") is not None and w.tree.item("bob") is None


def test_property_edits_merge_per_field(loaded):
    w = loaded
    doc, stack = w.document, w.document.undo_stack
    doc.select("bob")
    mass = w.properties.editor("mass").spin
    mass.setValue(3.0)
    mass.setValue(4.0)
    mass.setValue(5.0)
    assert stack.count() == 1 and doc.model.bodies["bob"].mass == 5.0
    w.properties.editor("position").spins[0].setValue(0.25)
    assert stack.count() == 2
    stack.undo()
    assert doc.model.bodies["bob"].position == [0.0, -0.5, 0.0]
    stack.undo()
    assert doc.model.bodies["bob"].mass == 2.0
    assert w.properties.editor("mass").spin.value() == 2.0  # the editor follows the model
    stack.redo()
    assert doc.model.bodies["bob"].mass == 5.0
    _check_undo_redo(w, lambda: w.properties.editor("velocity").spins[2].setValue(1.5))


@pytest.mark.slow
def test_joint_type_change_rebuilds_form(loaded):
    w = loaded
    w.document.select("pivot")
    assert "axis2" not in w.properties.editors
    combo = w.properties.editor("type").combo
    _check_undo_redo(w, lambda: (combo.setCurrentText("universal"), combo.activated.emit(combo.currentIndex())))
    assert "axis2" in w.properties.editors


def test_move(loaded):
    w = loaded
    w.document.select("bob")
    _check_undo_redo(w, lambda: w.actions["move"].trigger())  # the scripted dialog answers dy = 0.5
    assert w.document.model.bodies["bob"].position == [0.0, 0.0, 0.0]
    w.document.select("pivot")
    _check_undo_redo(w, lambda: w.editing.move([1.0, 0.0, 0.0]))
    assert w.document.model.joints["pivot"].origin == [1.0, 0.0, 0.0]


def test_inertia_from_geometry_is_one_step(loaded):
    w = loaded
    w.document.select("bob")
    _check_undo_redo(w, lambda: w.properties.compute_inertia(2000.0))
    assert w.document.model.bodies["bob"].mass == pytest.approx(2000.0 * 0.05 * 1.0 * 0.05)


def test_model_and_settings(loaded):
    w = loaded
    w.document.select(MODEL_ITEM)
    _check_undo_redo(w, lambda: w.properties.editor("gravity").spins[2].setValue(-1.0))
    assert list(w.document.model.gravity) == [0.0, -9.81, -1.0]
    w.document.select(SETTINGS_ITEM)
    _check_undo_redo(w, lambda: w.properties.editor("t_end").spin.setValue(5.0))
    combo = w.properties.editor("integrator").combo
    _check_undo_redo(w, lambda: (combo.setCurrentText("bdf"), combo.activated.emit(combo.currentIndex())))
    assert w.document.model.settings.integrator == "bdf"


def test_history_view_and_clean_state(loaded):
    w = loaded
    w.actions["history"].trigger()
    assert w.history_dock.isVisible()
    w.editing.add_body()
    assert w.history.model().rowCount() == 2  # the empty state and one command
    assert w.windowTitle().startswith("untitled*")
    w.actions["undo"].trigger()
    assert w.windowTitle().startswith("untitled —")
