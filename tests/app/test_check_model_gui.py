"""Simulate ▸ Check Model (Ctrl+K) in the real window: the model's problems by field, else the
solver's check — Grübler count vs rank DOF, redundant constraints in joint terms, over-driving —
in the report, the status bar and the log."""
from __future__ import annotations

from pathlib import Path

import pytest

from app import dialogs

SAMPLES = Path(__file__).resolve().parents[2] / "sample_models"
pytestmark = pytest.mark.slow          # a real window each: about 1 s per test


@pytest.fixture
def reports(monkeypatch):
    shown = []
    monkeypatch.setattr(dialogs, "show_report", lambda parent, title, summary, lines, warning=False, action=None:
                        shown.append((title, summary, list(lines), warning)))
    return shown


def test_slider_crank_sample_report(window, reports, answers, caplog):
    assert window.load(str(SAMPLES / "slider_crank.mbs.json"))
    window.actions["check"].trigger()
    [(title, summary, lines, warning)] = reports
    assert title == "Model check" and not warning and answers.errors == []
    assert summary == "DOF 1 (Grübler -2), 3 redundant constraint equations"
    assert "Grübler (Kutzbach) count: 18 body freedoms (3 moving bodies) − 20 joint equations = -2." in lines
    assert ("Degrees of freedom from the rank of the constraint Jacobian at the initial configuration: 1 for "
            "the mechanism itself.") in lines
    assert any(line.startswith("3 redundant constraint equations (Grübler -2 vs mobility 1): the joints crank_pin, "
                               "crank_rod, rod_piston, cylinder over-constrain their loop") for line in lines)
    assert "Out-of-plane force z and out-of-plane moment x, y of crank_pin are not unique." in lines
    assert window.statusBar().currentMessage() == f"Model check: {summary}"
    assert f"Model check: {summary}" in caplog.text


def test_an_over_driven_model_is_flagged(window, reports):
    assert window.load(str(SAMPLES / "fourbar.mbs.json"))
    window.document.model.add_driver("rocker_drive", "D", "0")
    window.actions["check"].trigger()
    [(_, summary, lines, warning)] = reports
    assert warning
    assert summary == "DOF 0 (Grübler -4), 3 redundant constraint equations, over-driven: crank_drive, rocker_drive"
    assert lines[0].startswith("Over-driven: crank_drive, rocker_drive")


def test_an_under_driven_model_names_the_free_joints(window, reports, pendulum):
    """The pendulum with a second link on an elbow and its pivot driven: 12 − 10 − 1 = 1 DOF left."""
    window.document.set_model(pendulum)
    model = window.document.model
    model.add_body("lower", mass=1.0, inertia=(1e-3, 1e-3, 1e-3), position=(0.0, -1.5, 0.0))
    model.add_joint("elbow", "revolute", "bob", "lower", origin=(0.0, -1.0, 0.0))
    model.add_driver("swing", "pivot", "0.1*t")
    window.actions["check"].trigger()
    [(_, summary, lines, warning)] = reports
    assert not warning                                       # a note, not a problem
    assert summary == "DOF 1 (Grübler 1), under-driven: elbow still free"
    assert lines[0].startswith("Under-driven: with its drivers the model keeps 1 degree of freedom (joints still "
                               "moving: elbow)")


def test_an_invalid_model_lists_its_problems_by_field(window, reports, answers):
    window.document.set_model(window.document.model.__class__(name="empty"))
    window.actions["check"].trigger()
    assert reports == []
    [(title, problems)] = answers.errors
    assert title == "Model check" and problems == ["model.bodies: the model has no bodies"]
