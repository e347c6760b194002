"""Test-wide set-up: run Qt headless when there is no screen (before any QApplication exists)."""
import os

if not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
