"""Test-wide set-up, before any QApplication or solver run exists:
- Qt runs headless when there is no screen;
- runs take the path users run: settings say codegen "auto", so a model is compiled to generated
  kernels (and stepped in the compiled loop) wherever a C compiler is found.  A test about the
  generic path asks for it (``codegen="off"``, or the ``generic_path`` fixture for a whole test);
- the codegen cache is one folder of this test session (shared by its workers: a structure built
  once is loaded by every later test), never the user's."""
import os
import tempfile

import pytest

if not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("MBS_CODEGEN_CACHE", tempfile.mkdtemp(prefix="mbs-codegen-cache-"))
GENERIC = "off"              # the value of $MBS_CODEGEN that turns the settings' "auto" into the generic path


@pytest.fixture
def generic_path(monkeypatch):
    """Runs of this test whose settings say codegen "auto" take the generic (interpreted) path
    (the process variable solver.compile.codegen_choice reads, set to GENERIC)."""
    monkeypatch.setenv("MBS_CODEGEN", GENERIC)
