"""Invalid input is refused with the model's message, shown at the field (red border), and the
model and the undo stack stay unchanged."""
import pytest
from PySide6.QtCore import Qt


@pytest.fixture
def loaded(window, pendulum):
    pendulum.add_force("push", "bob", force=(0.0, 0.0, 0.0), point=(0.0, -1.0, 0.0))
    window.document.set_model(pendulum)
    return window


def _unchanged(window, before):
    assert window.document.model.to_dict() == before
    assert window.document.undo_stack.count() == 0


def _invalid(editor):
    return any(w.property("invalid") for w in editor.inputs)


def test_zero_mass_is_refused(loaded):
    w = loaded
    w.document.select("bob")
    before = w.document.model.to_dict()
    w.properties.editor("mass").spin.setValue(0.0)
    assert "mass" in w.properties.error("mass") and "> 0" in w.properties.error("mass")
    assert _invalid(w.properties.editor("mass"))
    assert w.properties.editor("mass").spin.value() == 2.0  # the editor shows the model's value again
    _unchanged(w, before)
    w.properties.editor("mass").spin.setValue(3.0)  # a valid edit clears the message
    assert w.properties.error("mass") == "" and not _invalid(w.properties.editor("mass"))


def test_inertia_violating_triangle_inequality(loaded):
    w = loaded
    w.document.select("bob")
    before = w.document.model.to_dict()
    w.properties.editor("inertia").spins[0].setValue(5.0)
    assert "triangle inequality" in w.properties.error("inertia")
    _unchanged(w, before)


@pytest.mark.slow
def test_zero_axis_and_duplicate_name(loaded, qtbot):
    w = loaded
    w.document.select("pivot")
    before = w.document.model.to_dict()
    axis = w.properties.editor("axis")
    axis.spins[2].setValue(0.0)
    assert "non-zero" in w.properties.error("axis")
    line = w.properties.editor("name").line
    line.selectAll()
    qtbot.keyClicks(line, "bob")
    qtbot.keyClick(line, Qt.Key.Key_Return)
    assert "already exists" in w.properties.error("name")
    _unchanged(w, before)


@pytest.mark.slow
def test_expression_live_validation(loaded, qtbot):
    w = loaded
    w.document.select("push")
    before = w.document.model.to_dict()
    editor = w.properties.editor("force")
    editor.lines[1].selectAll()
    qtbot.keyClicks(editor.lines[1], "10*sin(")
    # Live: red border and the parser's message while typing, before anything is committed.
    assert _invalid(editor) and "invalid expression" in w.properties.error("force")
    qtbot.keyClick(editor.lines[1], Qt.Key.Key_Return)
    assert "invalid expression" in w.properties.error("force")
    _unchanged(w, before)
    qtbot.keyClicks(editor.lines[1], "2*t)")
    assert not _invalid(editor)
    qtbot.keyClick(editor.lines[1], Qt.Key.Key_Return)
    assert w.document.model.forces["push"].force == [0.0, "10*sin(2*t)", 0.0]
    assert w.properties.error("force") == ""


@pytest.mark.slow
def test_add_joint_without_bodies_reports(window, answers):
    window.actions["add_joint_revolute"].trigger()
    assert answers.errors and "add a body" in answers.errors[-1][1][0]
    assert window.document.undo_stack.count() == 0


@pytest.mark.slow
def test_bad_project_file_keeps_current_model(window, answers, tmp_path, pendulum):
    window.document.set_model(pendulum)
    bad = tmp_path / "bad.mbs.json"
    bad.write_text('{"format": "mbs-studio-project", "version": 1, "model": {"bodies": [{"name": "b"}]}}')
    assert not window.load(str(bad))
    assert answers.errors and any("mass" in p for p in answers.errors[-1][1])
    assert window.document.model is pendulum
