"""Icons and the style sheet in the top-level ``resources/`` folder, and the sample projects."""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from PySide6.QtGui import QIcon

ROOT = Path(__file__).resolve().parent.parent
RESOURCES = ROOT / "resources"
SAMPLES = ROOT / "sample_models"
DOCS = ROOT / "docs"

@lru_cache(maxsize=None)
def icon(name: str) -> QIcon:
    """The icon ``resources/icons/<name>.svg`` (an empty icon if there is none)."""
    path = RESOURCES / "icons" / f"{name}.svg"
    return QIcon(str(path)) if path.exists() else QIcon()


def element_icon(element) -> QIcon:
    """Icon for a model element by its kind (and joint type)."""
    if element.KIND == "joint":
        return icon(element.kind.icon)
    return icon(element.ICON or element.KIND)


def style_sheet() -> str:
    path = RESOURCES / "style.qss"
    return path.read_text(encoding="utf-8") if path.exists() else ""


def sample_files() -> list[Path]:
    """Every project file in ``sample_models/``, sorted by name."""
    return sorted(SAMPLES.glob("*.mbs.json")) if SAMPLES.is_dir() else []
