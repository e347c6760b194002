"""The window reports a model's problems from their structure (solver.Problem: element and
field), never from their text: the element a problem names is selected and the message is shown
under the field it names, with the keyboard focus there."""
from __future__ import annotations

import solver
from app.tree import MODEL_ITEM

COORDINATE_PROBLEM = "joint 'pivot' (revolute) has coordinates rotation; got translation"


def _focused(window, field):
    from PySide6.QtWidgets import QApplication
    return QApplication.focusWidget() is window.properties.editor(field).inputs[0]


def test_check_model_selects_the_driver_and_marks_its_field(window, answers, pendulum):
    pendulum.add_driver("drive", "pivot", "t", coordinate="translation")   # wrong for a revolute joint
    window.document.set_model(pendulum)
    window.actions["check"].trigger()
    assert answers.errors == [("Model check", [f"driver 'drive'.coordinate: {COORDINATE_PROBLEM}"])]
    assert window.document.selection == "drive"
    assert window.properties.target.element.name == "drive"
    assert window.properties.error("coordinate") == COORDINATE_PROBLEM
    assert window.properties.error("joint") == ""
    assert _focused(window, "coordinate")


def test_a_refused_rename_marks_the_name_of_the_element_renamed(window, answers, pendulum):
    window.document.set_model(pendulum)
    assert not window.editing.rename("pivot", "bob")
    assert answers.errors == [("Rename 'pivot'", ["joint 'pivot'.name: an element named 'bob' already exists"])]
    assert window.document.selection == "pivot"
    assert window.properties.error("name") == "an element named 'bob' already exists"
    assert _focused(window, "name")


def test_a_model_field_problem_selects_the_model_and_text_selects_nothing(window, answers, pendulum):
    window.document.set_model(pendulum)
    window.document.select("bob")
    window.report_problems("Check", ["bob: a problem given as text only"])
    assert window.document.selection == "bob"          # text is shown, never parsed
    window.report_problems("Check", [solver.Problem("model.joints[4]", "elsewhere", "axis", "not in this model"),
                                     solver.Problem("model", None, "gravity", "must be finite, got nan")])
    assert window.document.selection == MODEL_ITEM
    assert window.properties.error("gravity") == "must be finite, got nan"
    assert answers.errors[-1] == ("Check", ["model.joints[4].axis: not in this model",
                                            "model.gravity: must be finite, got nan"])


def test_run_refuses_an_invalid_model_and_selects_the_problem(window, answers, pendulum):
    pendulum.add_driver("drive", "pivot", "t", coordinate="translation")
    window.document.set_model(pendulum)
    window.document.select("bob")
    assert not window.run_simulation()
    assert answers.errors == [("Cannot run", [f"driver 'drive'.coordinate: {COORDINATE_PROBLEM}"])]
    assert window.document.selection == "drive"
    assert window.properties.error("coordinate") == COORDINATE_PROBLEM
