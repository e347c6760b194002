"""Generated kernels in the GUI: the model's ``codegen`` setting (default "auto") decides; a run that
builds them shows "compiling the model…" in the status bar first; without a C compiler the run takes
the generic path and says why, and the settings dialog's tooltip names the reason."""
from __future__ import annotations

import pytest

from app import dialogs
from app.run_control import SettingsDialog


@pytest.fixture
def codegen_auto(tmp_path, monkeypatch):
    """The product's default: "auto" really builds (the suite turns it off elsewhere), in a fresh cache."""
    monkeypatch.setenv("MBS_CODEGEN_CACHE", str(tmp_path / "codegen"))
    monkeypatch.delenv("MBS_CODEGEN", raising=False)


@pytest.mark.slow
def test_default_run_builds_and_uses_generated_kernels(window, qtbot, pendulum, monkeypatch, codegen_auto):
    monkeypatch.setattr(dialogs, "show_run_failure", lambda parent, outcome: pytest.fail(outcome.message))
    assert pendulum.settings.codegen == "auto"
    window.document.set_model(pendulum)
    phases = []
    monkeypatch.setattr(window.simulation.status, "show_phase", lambda text: phases.append(text))
    with qtbot.waitSignal(window.simulation.finished, timeout=60000) as blocker:
        assert window.run_simulation(t_end=0.05)
    outcome = blocker.args[0]
    assert outcome.status == "ok"
    assert phases == ["compiling the model…"]
    messages = [e["message"] for e in outcome.results.events if e["kind"] == "codegen"]
    assert len(messages) == 1 and messages[0].startswith("codegen: compiled kernels generated")


def test_codegen_setting_is_an_undoable_saved_edit(window, pendulum, monkeypatch):
    window.document.set_model(pendulum)
    monkeypatch.setattr(dialogs, "ask_solver_settings", lambda parent, values: dict(values, codegen="off"))
    window.actions["run_settings"].trigger()
    assert window.document.model.settings.codegen == "off"
    window.document.undo_stack.undo()
    assert window.document.model.settings.codegen == "auto"


def test_without_compiler_the_run_takes_the_generic_path_and_says_why(window, qtbot, pendulum, monkeypatch,
                                                                      codegen_auto):
    monkeypatch.setenv("CC", "no-such-compiler-mbs")
    dialog = SettingsDialog(dict(pendulum.settings.values), window)
    assert dialog.values()["codegen"] == "auto"
    assert "No C compiler found" in dialog.editors["codegen"].toolTip()
    dialog.deleteLater()
    window.document.set_model(pendulum)
    with qtbot.waitSignal(window.simulation.finished, timeout=30000) as blocker:
        assert window.run_simulation(t_end=0.05)
    outcome = blocker.args[0]
    assert outcome.status == "ok"
    messages = [e["message"] for e in outcome.results.events if e["kind"] == "codegen"]
    assert messages == ["codegen unavailable, generic path used: no C compiler: 'no-such-compiler-mbs' was not "
                        "found (set CC to a C compiler)"]
