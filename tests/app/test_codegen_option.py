"""Simulate ▸ Settings… codegen option: a run option of the window (``solver.Settings`` has no codegen
field) passed to ``simulate(..., codegen=True)``; the checkbox is disabled, with the reason, when no
C compiler is found."""
from __future__ import annotations

import pytest

from app import dialogs
from app.run_control import SettingsDialog


@pytest.fixture
def codegen_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("MBS_CODEGEN_CACHE", str(tmp_path / "codegen"))


def test_codegen_option_runs_generated_kernels(window, qtbot, pendulum, monkeypatch, codegen_cache):
    monkeypatch.setattr(dialogs, "show_run_failure", lambda parent, outcome: pytest.fail(outcome.message))
    dialog = SettingsDialog(dict(pendulum.settings.values, codegen=True), window)
    assert dialog.codegen.isEnabled() and dialog.codegen.isChecked()
    assert dialog.values()["codegen"] is True
    dialog.deleteLater()
    window.document.set_model(pendulum)
    monkeypatch.setattr(dialogs, "ask_solver_settings", lambda parent, values: dict(values, codegen=True))
    window.actions["run_settings"].trigger()
    assert window.simulation.codegen is True
    assert not window.document.undo_stack.canUndo()          # a run option, not a model edit
    with qtbot.waitSignal(window.simulation.finished, timeout=60000) as blocker:
        assert window.run_simulation(t_end=0.05)
    outcome = blocker.args[0]
    assert outcome.status == "ok"
    messages = [e["message"] for e in outcome.results.events if e["kind"] == "codegen"]
    assert messages and messages[0].startswith("codegen: compiled kernels")


def test_codegen_checkbox_disabled_without_compiler(window, qtbot, pendulum, monkeypatch):
    monkeypatch.setenv("CC", "no-such-compiler-mbs")
    dialog = SettingsDialog(dict(pendulum.settings.values, codegen=True), window)
    assert not dialog.codegen.isEnabled() and not dialog.codegen.isChecked()
    assert "no C compiler" in dialog.codegen.toolTip()
    dialog.deleteLater()
    window.simulation.codegen = True                         # chosen earlier, compiler gone since
    window.document.set_model(pendulum)
    with qtbot.waitSignal(window.simulation.finished, timeout=30000) as blocker:
        assert window.run_simulation(t_end=0.05)
    assert not [e for e in blocker.args[0].results.events if e["kind"] == "codegen"]
