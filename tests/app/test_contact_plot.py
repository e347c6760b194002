"""A contact element's force in the GUI: clicking it in the model tree plots ``Results.contact_force``
(its components and magnitude, global axes), like a joint's reaction; during playback each touching
contact is an arrow at its contact point (app/contact_arrows.py)."""
from pathlib import Path

import numpy as np
import pytest

import solver

BOX_ON_RAMP = Path(__file__).resolve().parents[2] / "sample_models" / "box_on_ramp.mbs.json"


def test_clicking_a_contact_plots_its_force(window):
    results = solver.simulate(solver.load_model(str(BOX_ON_RAMP)), t_end=0.1)
    assert window.load(str(BOX_ON_RAMP))
    window.simulation.set_results(results)
    window.tree.setCurrentItem(window.tree.item("slide"))
    assert window.document.selection == "slide"
    plots = window.plots
    assert plots.kind("slide") == "contact"
    F = results.contact_force("slide")
    # sliding at a steady acceleration on the 30° ramp: normal m g cos θ and friction μ_d of it
    carried = 7.85 * 9.81 * np.cos(np.radians(30)) * np.hypot(1.0, 0.4)
    assert abs(np.linalg.norm(F[-1]) - carried) < 1e-3 * carried
    for i, axis in enumerate("xyz"):
        x, y = plots.curve_data(f"slide F{axis}")
        assert np.array_equal(x, results.t) and np.array_equal(y, F[:, i])
    assert np.allclose(plots.curve_data("slide |F|")[1], np.linalg.norm(F, axis=1))
    assert solver.output(window.document.model, "forces.slide.contact_force.y").evaluate(
        results, window.document.model).tolist() == F[:, 1].tolist()


def test_contact_forces_are_arrows_during_playback(window):
    """One arrow per touching contact at its contact point along its force (the glyph filter's input),
    none while apart; the largest force is drawn a quarter of the model's extent long."""
    model = solver.load_model(str(BOX_ON_RAMP))
    model.set_field("box", "position", tuple(np.add(model.bodies["box"].position, (0.0, 0.02, 0.0))))
    results = solver.simulate(model, t_end=0.2, output_step=0.01)
    assert window.load(str(BOX_ON_RAMP))
    window.simulation.set_results(results)
    arrows = window.player.contact_arrows
    assert arrows is not None and arrows.actor is not None
    assert arrows.actor in [a for a in _actors(window.viewport.overlay)]      # drawn over the model
    F, P = results.contact_force("slide"), results.contact_point("slide")
    apart = int(np.argmax(np.isnan(P[:, 0])))            # the box starts 2 cm up: apart at first
    touching = int(np.argmax(np.isfinite(P[:, 0]) & (np.arange(len(P)) > apart)))
    window.player.set_frame(apart)
    assert arrows.data.GetNumberOfPoints() == 0
    window.player.set_frame(touching)
    drawn = arrows.data
    assert drawn.GetNumberOfPoints() == 1
    assert np.allclose(drawn.GetPoint(0), P[touching], rtol=0, atol=1e-12)
    assert np.allclose(drawn.GetPointData().GetVectors().GetTuple3(0), F[touching], rtol=0, atol=1e-9)
    bounds = window.viewport.scene.model_bounds()         # of the scene as posed now (the box moved since)
    extent = np.linalg.norm(np.subtract(bounds[1::2], bounds[0::2]))
    assert arrows.scale * np.max(np.linalg.norm(F, axis=1)) == pytest.approx(0.25 * extent, rel=1e-2)


def _actors(renderer):
    actors = renderer.GetActors()
    actors.InitTraversal()
    return [actors.GetNextActor() for _ in range(actors.GetNumberOfItems())]
