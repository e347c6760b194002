"""Package boundaries: ``app`` uses the solver only through ``import solver``; ``solver`` never
imports the GUI, Qt, VTK or pyqtgraph."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SUBMODULE_IMPORT = re.compile(r"^\s*(from\s+solver\.\S+\s+import|import\s+solver\.)", re.MULTILINE)
GUI_IMPORT = re.compile(r"^\s*(from|import)\s+(app|PySide6|PyQt\d|vtk|vtkmodules|pyqtgraph)\b", re.MULTILINE)


def _sources(package):
    return sorted((ROOT / package).rglob("*.py"))


def test_app_imports_solver_only_through_its_public_api():
    offenders = [f"{p.relative_to(ROOT)}: {m.group(0).strip()}"
                 for p in _sources("app") for m in SUBMODULE_IMPORT.finditer(p.read_text(encoding="utf-8"))]
    assert offenders == []


def test_app_uses_only_names_solver_exports():
    import solver
    used = {m.group(1) for p in _sources("app")
            for m in re.finditer(r"\bsolver\.([A-Za-z_]\w*)", p.read_text(encoding="utf-8"))}
    assert used - set(solver.__all__) == set()


def test_solver_imports_no_gui():
    offenders = [f"{p.relative_to(ROOT)}: {m.group(0).strip()}"
                 for p in _sources("solver") for m in GUI_IMPORT.finditer(p.read_text(encoding="utf-8"))]
    assert offenders == []
