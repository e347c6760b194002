#!/usr/bin/env bash
# Redraw the documentation screenshots in docs/screenshots/ from the GUI tests that take them.
# Tests write to a temporary folder; this points them at the docs on purpose.
set -euo pipefail
cd "$(dirname "$0")/.."
MBS_SCREENSHOTS="$PWD/docs/screenshots" QT_QPA_PLATFORM=offscreen .venv/bin/python -m pytest -q -p no:cacheprovider \
  tests/app/test_screenshots.py tests/app/test_run_screenshots.py tests/app/test_flexible_views.py \
  tests/app/test_interact.py "$@"
