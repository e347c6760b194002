"""Flexible beams coloured by nodal stress during playback: the beam polyline's point scalars are
the results' node stresses (``Results.node_stress``, Pa → MPa) of the chosen measure at the shown
frame, over one colour range (the run's min/max), with a scalar bar; "none" restores the body colour."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import solver
from app.animation import STRESS_KINDS
from app.simulation import stress_measure

ROOT = Path(__file__).resolve().parents[2]
FLEXIBLE = ROOT / "sample_models" / "fourbar_singular_flexible.mbs.json"
BEAM = "coupler"


@pytest.fixture(scope="module")
def flexible_results():
    return solver.simulate(solver.load_model(str(FLEXIBLE)), t_end=0.1)


def expected(res, kind):
    """(N, nodes) MPa of measure ``kind``, straight from the per-node results columns."""
    count = next(f["nodes"] for f in res.meta["flexible_bodies"] if f["name"] == BEAM)
    s = np.stack([res.node_stress(BEAM, k) for k in range(count)], axis=1) / 1e6  # (N, nodes, 4)
    ax, by, bz, tor = s[..., 0], s[..., 1], s[..., 2], s[..., 3]
    return {"axial": ax, "bending": np.abs(by) + np.abs(bz), "torsion": tor,
            "combined": np.abs(ax) + np.abs(by) + np.abs(bz)}[kind]


def test_stress_measures_from_components():
    s = np.array([[2e6, -3e6, 4e6, -5e6]])
    assert stress_measure(s, "axial") == pytest.approx([2.0])
    assert stress_measure(s, "bending") == pytest.approx([7.0])
    assert stress_measure(s, "torsion") == pytest.approx([-5.0])
    assert stress_measure(s, "combined") == pytest.approx([9.0])
    with pytest.raises(ValueError):
        stress_measure(s, "von mises")


@pytest.mark.slow
def test_beam_coloured_by_node_stress(window, flexible_results):
    res = flexible_results
    assert window.load(str(FLEXIBLE))
    window.simulation.set_results(res)
    bar, player, scene = window.animation_bar, window.player, window.viewport.scene
    mapper = scene.beams[BEAM].item.actor.GetMapper()
    assert bar.stress.isEnabled() and bar.stress.currentData() == "none"
    assert scene.beam_scalars(BEAM) is None and not mapper.GetScalarVisibility()
    last = len(res.t) - 1
    for kind in ("axial", "bending", "torsion", "combined"):
        bar.stress.setCurrentIndex(bar.stress.findData(kind))
        values = expected(res, kind)
        peak = np.abs(values).max()
        if kind in ("axial", "torsion"):
            # Planar motion with two in-plane bending modes: no axial or torsional mode in the
            # basis, so these are round-off only (still drawn exactly as the results hold them).
            assert peak < 1e-9
        else:  # stress to colour by, different in the two frames shown
            assert peak > 0.1 and np.abs(values[last] - values[7]).max() > 1e-3 * peak
        lut_range = scene.lookup_table.GetTableRange()
        assert lut_range == pytest.approx((values.min(), values.max()), rel=1e-12)
        assert player.stress_range() == pytest.approx(lut_range, rel=1e-12)
        assert mapper.GetScalarVisibility() and mapper.GetLookupTable() is scene.lookup_table
        assert scene.scalar_bar.GetVisibility() and "MPa" in scene.scalar_bar.GetTitle()
        for i in (last, 7):
            bar.slider.setValue(i)
            assert player.index == i
            assert np.allclose(scene.beam_scalars(BEAM), values[i], rtol=1e-9, atol=1e-9 * peak)
    bar.stress.setCurrentIndex(bar.stress.findData("none"))
    assert scene.beam_scalars(BEAM) is None and not mapper.GetScalarVisibility()
    assert not scene.scalar_bar.GetVisibility()
    assert set(STRESS_KINDS) == {"none", "axial", "bending", "torsion", "combined"}


def test_stress_colouring_survives_new_results_and_clears_without(window, flexible_results):
    res = flexible_results
    assert window.load(str(FLEXIBLE))
    window.simulation.set_results(res)
    bar, scene = window.animation_bar, window.viewport.scene
    bar.stress.setCurrentIndex(bar.stress.findData("axial"))
    window.simulation.set_results(res)  # a new run: same choice, frame 0 coloured
    assert np.allclose(scene.beam_scalars(BEAM), expected(res, "axial")[0], atol=1e-9)
    window.simulation.set_results(None)
    assert scene.beam_scalars(BEAM) is None and not scene.scalar_bar.GetVisibility()
    assert not bar.stress.isEnabled()
