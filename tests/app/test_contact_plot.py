"""A contact element's force in the selection plot: clicking it in the model tree plots
``Results.contact_force`` (its components and magnitude, global axes), like a joint's reaction."""
from pathlib import Path

import numpy as np

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
