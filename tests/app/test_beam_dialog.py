"""Model ▸ Add Flexible Beam…: section properties from the closed forms, the real dialog's values,
the beam added as one undoable step (in the model and drawn in the viewport), and a run of it."""
from __future__ import annotations

import math

import numpy as np
import pytest

import solver
from app import dialogs
from app.beam_dialog import BeamDialog, section_properties


def _close(a, b):
    return abs(a - b) <= 1e-12 * abs(b)


def test_rectangle_section_closed_form():
    b, h = 0.03, 0.01                                    # width along z, height along y
    s = section_properties("rectangle", b=b, h=h)
    a, c = max(b, h), min(b, h)
    beta = 1 / 3 - 0.21 * (c / a) * (1 - (c / a) ** 4 / 12)   # Roark, Table 10.7 case 4
    expected = {"area": b * h, "Iz": b * h ** 3 / 12, "Iy": h * b ** 3 / 12, "J": beta * a * c ** 3,
                "cy": h / 2, "cz": b / 2, "ct": c}
    assert all(_close(s[k], v) for k, v in expected.items()), (s, expected)
    # Roark's J within 0.5 % of the exact series (Timoshenko & Goodier) for b/h = 3.
    series = a * c ** 3 / 3 * (1 - 192 / math.pi ** 5 * c / a * sum(
        math.tanh(n * math.pi * a / (2 * c)) / n ** 5 for n in range(1, 200, 2)))
    assert abs(s["J"] / series - 1) < 5e-3


def test_circle_and_tube_sections_closed_form():
    d = 0.02
    s = section_properties("circle", d=d)
    for k, v in {"area": math.pi * d ** 2 / 4, "Iy": math.pi * d ** 4 / 64, "Iz": math.pi * d ** 4 / 64,
                 "J": math.pi * d ** 4 / 32, "cy": d / 2, "cz": d / 2, "ct": d / 2}.items():
        assert _close(s[k], v), k
    D, t = 0.05, 0.004
    tube = section_properties("tube", D=D, t=t)
    solid_outer, solid_inner = section_properties("circle", d=D), section_properties("circle", d=D - 2 * t)
    for k in ("area", "Iy", "Iz", "J"):                  # tube = outer disc − inner disc
        assert _close(tube[k], solid_outer[k] - solid_inner[k]), k
    assert _close(tube["J"], math.pi * (D ** 4 - (D - 2 * t) ** 4) / 32)
    assert section_properties("tube", D=D, t=D / 2)["area"] == pytest.approx(solid_outer["area"], rel=1e-12)
    with pytest.raises(solver.ModelError, match="section.t"):
        section_properties("tube", D=D, t=0.03)
    with pytest.raises(solver.ModelError, match="section.d"):
        section_properties("circle", d=0.0)


def test_real_dialog_values(qtbot):
    dialog = BeamDialog({"start": [0.0, 0.5, 0.0], "end": [1.0, 0.5, 0.0]})
    qtbot.addWidget(dialog)
    dialog.points["end"][1].set_si_value(1.5)
    dialog.section.setCurrentText("tube")
    dialog.dimensions[("tube", "D")].set_si_value(0.04)
    dialog.dimensions[("tube", "t")].set_si_value(0.002)
    dialog.material.setCurrentText("aluminium")
    dialog.elements.setValue(6)
    dialog.modes.setValue(3)
    v = dialog.values()
    assert v["start"] == [0.0, 0.5, 0.0] and v["end"] == [1.0, 1.5, 0.0] and v["z_axis"] == [0.0, 0.0, 1.0]
    assert (v["density"], v["youngs"], v["poisson"]) == (2700.0, 70e9, 0.33)
    assert (v["elements"], v["modes"]) == (6, 3)
    assert _close(v["J"], math.pi * (0.04 ** 4 - 0.036 ** 4) / 32)
    dialog.material.setCurrentText("custom")
    assert not dialog.material_fields["youngs"].isReadOnly()
    dialog.material_fields["youngs"].set_si_value(1e9)
    assert dialog.values()["youngs"] == 1e9
    dialog.section.setCurrentText("rectangle")
    for spin, value in zip(dialog.points["end"], (0.0, 0.5, 2.0)):
        spin.set_si_value(value)               # along global z: the section z becomes global y
    v = dialog.values()
    assert v["z_axis"] == [0.0, 1.0, 0.0] and _close(v["area"], 0.02 * 0.02)


def _scripted_beam(monkeypatch, asked):
    def answer(parent, suggestion):
        asked.append(suggestion)
        return {"start": suggestion["start"], "end": suggestion["end"], "z_axis": [0.0, 0.0, 1.0],
                **section_properties("circle", d=0.02), "density": 7850.0, "youngs": 210e9, "poisson": 0.3,
                "elements": 4, "modes": 2}
    monkeypatch.setattr(dialogs, "ask_flexible_beam", answer)


def test_add_flexible_beam_one_undo_step(loaded, monkeypatch):
    w, asked = loaded, []
    _scripted_beam(monkeypatch, asked)
    before, index = w.document.model.to_dict(), w.document.undo_stack.index()
    w.actions["add_flexible_beam"].trigger()
    assert asked == [{"start": [0.0, -0.5, 0.0], "end": [1.0, -0.5, 0.0]}]   # from the selected "bob"
    model = w.document.model
    assert list(model.flexible_bodies) == ["beam1"] and w.document.selection == "beam1"
    beam = model.flexible_bodies["beam1"]
    assert beam.elements == 4 and _close(beam.J, math.pi * 0.02 ** 4 / 32)
    assert w.document.undo_stack.index() == index + 1
    assert w.viewport.actor("beam1") is not None              # drawn (flushes the pending rebuild)
    nodes = w.viewport.scene.beam_points("beam1")              # a tube through 5 nodes, start to end
    assert np.allclose(nodes, np.linspace([0.0, -0.5, 0.0], [1.0, -0.5, 0.0], 5), atol=1e-12)
    w.actions["undo"].trigger()
    assert w.document.model.to_dict() == before and w.viewport.actor("beam1") is None
    assert "beam1" not in w.viewport.scene.beams


def test_cancelled_beam_adds_nothing(loaded, monkeypatch):
    monkeypatch.setattr(dialogs, "ask_flexible_beam", lambda parent, suggestion: None)
    index = loaded.document.undo_stack.index()
    assert loaded.editing.add_flexible_beam() == ""
    assert loaded.document.undo_stack.index() == index and not loaded.document.model.flexible_bodies


def test_created_beam_runs(window, monkeypatch):
    _scripted_beam(monkeypatch, [])
    window.document.set_model(solver.Model(name="beam", gravity=(0.0, -9.81, 0.0)))
    name = window.editing.add_flexible_beam()
    assert window.editing.add_joint_at("revolute", "ground", name, (0.0, 0.0, 0.0), (0.0, 0.0, 1.0))
    results = solver.simulate(window.document.model, t_end=0.05, codegen=False)
    assert results.status == "ok"
    tip = results.node_displacement(name, 4)
    assert np.all(np.isfinite(tip)) and np.abs(tip[-1]).max() > 0.0   # gravity bends it
