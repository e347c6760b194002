"""File ▸ Export ▸ FMU…: the open model becomes an FMU that FMPy runs; a model that cannot be
exported is reported naming the element and writes nothing."""
from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np
import pytest

from app import dialogs

fmpy = pytest.importorskip("fmpy")

SLIDER_CRANK = Path(__file__).resolve().parents[2] / "sample_models" / "slider_crank.mbs.json"


@pytest.mark.slow
def test_export_fmu_writes_an_fmu_that_runs(window, answers, monkeypatch, tmp_path):
    assert window.load(str(SLIDER_CRANK))
    window.document.model.set_field("piston", "mass", 3.0)         # unsaved edits are exported too
    asked = []
    def save_file_path(parent, title, suggestion="", file_filter=""):
        asked.append(suggestion)
        return str(tmp_path / "sc")
    monkeypatch.setattr(dialogs, "save_file_path", save_file_path)
    assert window.actions["export_fmu"].isEnabled()
    window.actions["export_fmu"].trigger()
    assert not answers.errors
    assert asked and asked[0].endswith("slider_crank.fmu")
    path = tmp_path / "sc.fmu"
    assert "modelDescription.xml" in zipfile.ZipFile(path).namelist()
    md = fmpy.read_model_description(str(path))
    assert next(v for v in md.modelVariables if v.name == "bodies.piston.mass").start == "3.0"
    r = fmpy.simulate_fmu(str(path), stop_time=0.2, output_interval=0.01, output=["bodies.piston.position.x"])
    assert np.ptp(r["bodies.piston.position.x"]) > 1e-3


def test_a_model_that_cannot_be_exported_is_reported(window, answers, monkeypatch, tmp_path):
    assert window.load(str(SLIDER_CRANK))
    window.document.model.add_rotational_spring_damper("R1", "crank_pin", stiffness=1.0)
    monkeypatch.setattr(dialogs, "save_file_path",
                        lambda parent, title, suggestion="", file_filter="": str(tmp_path / "x.fmu"))
    window.actions["export_fmu"].trigger()
    assert answers.errors and answers.errors[0][0] == "Cannot export x.fmu"
    assert "forces.R1" in answers.errors[0][1][0]
    assert not (tmp_path / "x.fmu").exists()
