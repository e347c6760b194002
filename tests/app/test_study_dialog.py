"""Analysis ▸ Parameter Study…: the dialog driven offscreen with tiny studies on the slider–crank."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

import solver
from app.study_dialog import StudyDialog, parameter_from_text, show_study_dialog

SAMPLE = Path(__file__).resolve().parents[2] / "sample_models" / "slider_crank.mbs.json"
T_END = 0.05
FORCE = "max_reaction_force(crank_pin)"
ACCEL = "peak_acceleration(piston)"
NEGATIVE_MASS = "body 'piston'.mass: must be > 0, got -1"

pytestmark = pytest.mark.gui


@pytest.fixture
def dialog(qtbot, answers):
    d = StudyDialog(SimpleNamespace(model=solver.load_model(SAMPLE)))
    qtbot.addWidget(d)
    d.show()
    d.t_end.setValue(T_END)
    yield d
    d.shutdown()


def run_and_wait(qtbot, dialog, executor="serial", timeout=60000):
    dialog.executor.setCurrentIndex(dialog.executor.findData(executor))
    with qtbot.waitSignal(dialog.finished_study, timeout=timeout) as blocker:
        dialog.run_button.click()
    return blocker.args[0]


def test_values_typed_as_text():
    P = solver.study.Parameter
    assert parameter_from_text("bodies.a.mass", "0.5, 1, 2", False) == P("bodies.a.mass", values=(0.5, 1.0, 2.0))
    assert parameter_from_text("p", "1:2:3", False).values == (1.0, 1.5, 2.0)
    assert parameter_from_text("settings.integrator", "adams, rk", False).values == ("adams", "rk")
    assert parameter_from_text("p", "1, 3", True).distribution == ("uniform", 1.0, 3.0)
    assert parameter_from_text("p", "normal 2, 0.1", True).distribution == ("normal", 2.0, 0.1)
    with pytest.raises(solver.ModelError, match="'p' values: give 'low, high'"):
        parameter_from_text("p", "1, 2, 3", True)


def test_grid_study_table_and_plots(qtbot, dialog):
    dialog.add_parameter("bodies.piston.mass", "1, 2.5, -1")
    dialog.set_responses({FORCE, ACCEL})
    res = run_and_wait(qtbot, dialog)
    model = solver.load_model(SAMPLE)
    expected = solver.study.run_study(solver.study.Study(
        model, [solver.study.Parameter("bodies.piston.mass", values=(1.0, 2.5, -1.0))],
        [solver.study.Response("max_reaction_force", "crank_pin"), solver.study.Response("peak_acceleration", "piston")],
        fixed={"settings.t_end": T_END}), executor="serial")
    assert [v.responses for v in res.variants] == [v.responses for v in expected.variants]
    assert dialog.status.text().startswith("3 variants: 2 ok, 1 failed, 0 cancelled")

    t = dialog.table
    header = [t.horizontalHeaderItem(c).text() for c in range(t.columnCount())]
    assert header == ["variant", "status", "bodies.piston.mass", FORCE, ACCEL, "message"]
    assert [[t.item(r, c).text() for c in (1, 2, 5)] for r in range(3)] == [
        ["ok", "1", ""], ["ok", "2.5", ""], ["failed", "-1", NEGATIVE_MASS]]
    assert t.item(0, 3).text() == f"{expected.variants[0].responses[FORCE]:.6g}"

    dialog.y_choice.setCurrentText(ACCEL)
    x, y = dialog.scatter.getData()
    assert x.tolist() == [1.0, 2.5] and y.tolist() == expected.response(ACCEL)[:2].tolist()
    lines = dialog.parallel_plot.listDataItems()
    assert len(lines) == 2                                     # the failed variant has no line
    assert expected.response(ACCEL)[0] == expected.response(ACCEL)[1]     # kinematic: independent of the mass
    assert lines[0].getData()[1].tolist() == [0.0, 0.0, 0.5]             # a constant axis sits in the middle
    assert lines[1].getData()[1].tolist() == [1.0, 1.0, 0.5]


def test_bad_input_is_shown_not_run(qtbot, dialog, answers):
    dialog.add_parameter("bodies.wheel.mass", "1, 2")
    assert not dialog.run()
    assert answers.errors == [("Parameter study", [
        "parameters[0].path: 'bodies.wheel.mass': no element named 'wheel' in bodies (crank, rod, piston)",
        "responses: a study needs at least one response"])]


def test_cancel_stops_the_study(qtbot, dialog):
    dialog.add_parameter("bodies.piston.mass", "1:3:8")
    dialog.set_responses({FORCE})
    dialog.bar.valueChanged.connect(lambda v: v >= 1 and dialog.cancel())
    res = run_and_wait(qtbot, dialog)
    counts = res.counts()
    assert counts["ok"] >= 1 and counts["cancelled"] >= 1 and counts["ok"] + counts["cancelled"] == 8
    assert "cancelled" in dialog.status.text() and dialog.run_button.isEnabled()


@pytest.mark.slow
def test_local_cluster_run_and_menu(qtbot, window):
    """Analysis ▸ Parameter Study… opens the dialog on the window's model; one study on a
    LocalCluster of 1 worker process."""
    window.load(str(SAMPLE))
    window.actions["parameter_study"].trigger()
    dialog = window.findChild(StudyDialog)
    assert dialog.isVisible() and show_study_dialog(window) is dialog
    assert "bodies.piston.mass" in dialog.paths and dialog.responses.count() == 17
    dialog.t_end.setValue(T_END)
    dialog.workers.setValue(1)
    dialog.add_parameter("bodies.crank.mass", "0.5, 0.6")
    dialog.set_responses({FORCE})
    res = run_and_wait(qtbot, dialog, executor="local", timeout=120000)
    assert res.counts() == {"ok": 2, "failed": 0, "cancelled": 0}
    assert dialog.table.rowCount() == 2
