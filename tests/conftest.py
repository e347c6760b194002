"""Test-wide set-up, before any QApplication or solver run exists:
- Qt runs headless when there is no screen;
- runs whose settings say codegen "auto" take the generic path (``MBS_CODEGEN=off``): the suite
  builds hundreds of tiny models, and a C build per structure would dominate its time. Tests of
  generated kernels ask for them (``codegen="on"``), and tests/solver/test_codegen_default.py
  checks the "auto" default itself with the variable removed;
- the codegen cache is a folder of this test session, never the user's."""
import os
import tempfile

if not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("MBS_CODEGEN", "off")
os.environ.setdefault("MBS_CODEGEN_CACHE", tempfile.mkdtemp(prefix="mbs-codegen-cache-"))
