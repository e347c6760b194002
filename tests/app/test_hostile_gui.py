"""Hostile folders in the GUI (issue 20): a recovery file that is a planted link or a folder is never
written through, offered or removed; a results file beside the project that points at other files is
not loaded (so the next Save cannot copy them into it); the application keeps running."""
from __future__ import annotations

import os

import h5py
import numpy as np

import solver
from app import autosave


def _project(tmp_path):
    m = solver.Model(name="pendulum", gravity=(0, -9.81, 0))
    m.add_body("bob", mass=1.0, inertia=(1e-3, 1e-3, 1e-3), position=(1, 0, 0))
    m.add_joint("pivot", "revolute", "ground", "bob", origin=(0, 0, 0), axis=(0, 0, 1))
    path = tmp_path / "p.mbs.json"
    m.save(path)
    return path


def _edit(window):
    window.document.select("bob")
    window.properties.editor("mass").spin.setValue(2.5)
    assert window.document.modified


def test_a_recovery_link_is_not_written_through(window, answers, tmp_path):
    path = _project(tmp_path)
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    os.symlink(victim, str(path) + autosave.SUFFIX)
    assert window.load(str(path))
    _edit(window)
    assert window.autosave.save_now() is False                # refused and logged, no exception
    assert victim.read_text() == "keep me\n"
    assert window.save()                                       # a clean save drops the link itself
    assert victim.read_text() == "keep me\n" and not os.path.lexists(str(path) + autosave.SUFFIX)
    assert solver.load_model(path).bodies["bob"].mass == 2.5


def test_a_folder_where_the_recovery_file_should_be(window, answers, tmp_path):
    path = _project(tmp_path)
    folder = tmp_path / ("p.mbs.json" + autosave.SUFFIX)
    folder.mkdir()
    (folder / "inside").write_text("x")
    n = len(answers.asked)
    assert window.load(str(path)) and len(answers.asked) == n     # nothing offered
    _edit(window)
    assert window.autosave.save_now() is False
    assert window.save() and answers.errors == []                 # no traceback, no error dialog
    assert folder.is_dir() and (folder / "inside").read_text() == "x"
    window.autosave.discard()


def test_a_results_file_with_external_storage_is_not_loaded_or_saved_again(window, answers, tmp_path):
    path = _project(tmp_path)
    h5 = tmp_path / "p.h5"
    solver.simulate(solver.load_model(path), t_end=0.02).save(h5)
    secret = tmp_path / "secret.bin"
    secret.write_bytes(np.full(64, 42.0).tobytes())
    with h5py.File(h5, "r+") as f:                 # 't' now reads the secret file
        n = f["t"].shape[0]
        del f["t"]
        f.create_dataset("t", shape=(n,), dtype=float, external=[(str(secret), 0, 8 * n)])
    before = h5.read_bytes()
    assert window.load(str(path)) and answers.errors == []
    assert window.simulation.results is None
    _edit(window)
    assert window.save()
    assert h5.read_bytes() == before               # not rewritten with the secret's bytes


def test_messages_show_file_text_as_plain_escaped_text(qtbot, monkeypatch):
    """A problem naming an element of a hostile file (HTML, an escape sequence, a bidirectional
    override) is shown as plain text with its control characters escaped (solver.shown_text), in
    the text and in the lines below it."""
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QMessageBox
    from app import dialogs
    shown = []
    monkeypatch.setattr(QMessageBox, "exec", lambda box: shown.append(box) or 0)
    hostile = "joints.<img src='/etc/passwd'>\x1b[2J\u202eevil: must be > 0"
    dialogs.show_error(None, "Cannot run", [hostile])
    dialogs.show_error(None, "Cannot run", [hostile, "second"])
    first, second = shown
    escaped = "joints.<img src='/etc/passwd'>\\x1b[2J\\u202eevil: must be > 0"
    assert first.textFormat() == Qt.TextFormat.PlainText and first.text() == escaped
    assert second.informativeText().splitlines()[0] == escaped and escaped in second.detailedText()
    from PySide6.QtWidgets import QLabel
    assert all(label.textFormat() == Qt.TextFormat.PlainText for label in second.findChildren(QLabel) if label.text())
