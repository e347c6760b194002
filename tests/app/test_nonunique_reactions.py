"""Reactions that are not unique (redundant constraints: the planar four-bar built with four revolute
joints in 3D) are flagged in the plot (warning label, red title, legend mark) and in the tree."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import solver

SAMPLES = Path(__file__).resolve().parents[2] / "sample_models"
FOURBAR = SAMPLES / "fourbar.mbs.json"


@pytest.fixture(scope="module")
def fourbar_results():
    return solver.simulate(solver.load_model(str(FOURBAR)), t_end=0.1)


def legend_texts(plot):
    return [label.text for _, label in plot.legend.items]


@pytest.mark.slow
def test_nonunique_reactions_flagged_in_plot_and_tree(window, fourbar_results):
    res = fourbar_results
    assert window.load(str(FOURBAR))
    window.simulation.set_results(res)
    flagged = res.nonunique_reactions
    assert "B" in flagged                                  # redundant planar loop: every joint
    window.document.select("B")
    plots = window.plots
    assert not plots.warning.isHidden() and "B" in plots.warning.text() and "not unique" in plots.warning.text()
    assert "not unique" in plots.rows["force"].titleLabel.text
    assert "B Fx (not unique)" in legend_texts(plots.rows["force"])
    # The curves are still the solver's (minimum-norm) reactions.
    F, _ = res.joint_reaction("B")
    assert np.array_equal(plots.curve_data("B Fx")[1], F[:, 0])
    tree = window.tree
    for name in window.document.model.joints:
        assert tree.is_marked_nonunique(name) == (name in flagged)
    assert "not unique" in tree.item("B").toolTip(0)


@pytest.mark.slow
def test_unique_reactions_not_flagged(window, fourbar_results, pendulum):
    assert window.load(str(FOURBAR))
    window.simulation.set_results(fourbar_results)
    window.document.set_model(pendulum)                    # a model without redundant constraints
    res = solver.simulate(pendulum, t_end=0.05)
    assert res.nonunique_reactions == []
    window.simulation.set_results(res)
    window.document.select("pivot")
    plots = window.plots
    assert plots.warning.isHidden()
    assert "not unique" not in plots.rows["force"].titleLabel.text
    assert "pivot Fx" in legend_texts(plots.rows["force"])
    assert not window.tree.is_marked_nonunique("pivot")
    assert "not unique" not in window.tree.item("pivot").toolTip(0)
