"""Reaction components that are not unique (redundant constraints: planar loops built with 3D joints)
are flagged per component in the plot (legend mark, red title naming the components, warning label
with the solver's sentences) and in the tree (icon, red text, tooltip); the in-plane forces and the
driving torque are unique and carry no mark."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import solver

SAMPLES = Path(__file__).resolve().parents[2] / "sample_models"
FOURBAR = SAMPLES / "fourbar.mbs.json"
SLIDER_CRANK = SAMPLES / "slider_crank.mbs.json"


@pytest.fixture(scope="module")
def fourbar_results():
    return solver.simulate(solver.load_model(str(FOURBAR)), t_end=0.1)


@pytest.fixture(scope="module")
def slider_crank_results():
    return solver.simulate(solver.load_model(str(SLIDER_CRANK)), t_end=0.05)


def legend_texts(plot):
    return [label.text for _, label in plot.legend.items]


@pytest.mark.slow
def test_nonunique_reactions_flagged_in_plot_and_tree(window, fourbar_results):
    """Only the out-of-plane components of the four-bar's joints are marked; the driver is not."""
    res = fourbar_results
    assert window.load(str(FOURBAR))
    window.simulation.set_results(res)
    assert res.nonunique_reactions == ["A", "B", "C", "D"]  # each joint has out-of-plane components
    window.document.select("B")
    plots = window.plots
    text = plots.warning.text()
    assert not plots.warning.isHidden()
    assert "out-of-plane force z and out-of-plane moment x, y of B are not unique" in text
    force, torque = legend_texts(plots.rows["force"]), legend_texts(plots.rows["torque"])
    assert force == ["B Fx", "B Fy", "B Fz (not unique)", "B |F| (not unique)"]
    assert torque == ["B Tx (not unique)", "B Ty (not unique)", "B Tz", "B |T| (not unique)"]
    assert plots.rows["force"].titleLabel.text.endswith("not unique: B Fz")
    assert plots.rows["torque"].titleLabel.text.endswith("not unique: B Tx, Ty")
    # The curves are still the solver's (minimum-norm) reactions.
    F, _ = res.joint_reaction("B")
    assert np.array_equal(plots.curve_data("B Fx")[1], F[:, 0])
    # The driver's torque is unique: no mark on its curve or plot.
    window.document.select("crank_drive")
    assert plots.warning.isHidden()
    assert legend_texts(plots.rows["driver N·m"]) == ["crank_drive"]
    assert "not unique" not in plots.rows["driver N·m"].titleLabel.text
    tree = window.tree
    for name in list(window.document.model.joints) + list(window.document.model.drivers):
        assert tree.is_marked_nonunique(name) == (name in res.nonunique_reactions)
    assert "out-of-plane force z and out-of-plane moment x, y of B are not unique" in tree.item("B").toolTip(0)
    assert "not unique" not in tree.item("crank_drive").toolTip(0)


@pytest.mark.slow
def test_unique_reactions_not_flagged(window, fourbar_results, pendulum):
    assert window.load(str(FOURBAR))
    window.simulation.set_results(fourbar_results)
    window.document.set_model(pendulum)                    # a model without redundant constraints
    res = solver.simulate(pendulum, t_end=0.05)
    assert res.nonunique_reactions == [] and res.nonunique_components == {}
    window.simulation.set_results(res)
    window.document.select("pivot")
    plots = window.plots
    assert plots.warning.isHidden()
    assert "not unique" not in plots.rows["force"].titleLabel.text
    assert legend_texts(plots.rows["force"]) == ["pivot Fx", "pivot Fy", "pivot Fz", "pivot |F|"]
    assert not window.tree.is_marked_nonunique("pivot")
    assert "not unique" not in window.tree.item("pivot").toolTip(0)


@pytest.mark.slow
def test_slider_crank_in_joint_axes_flags_the_prismatic_out_of_plane_components(window, slider_crank_results):
    """The prismatic joint's frame has z along the slide (global x), x = global y, y = global z: in
    joint axes its out-of-plane components are force y and moments x, z; in global axes force z and
    moments x, y, like the revolutes'."""
    res = slider_crank_results
    assert window.load(str(SLIDER_CRANK))
    window.simulation.set_results(res)
    window.document.select("cylinder")
    plots = window.plots
    assert legend_texts(plots.rows["force"]) == ["cylinder Fx", "cylinder Fy", "cylinder Fz (not unique)",
                                                 "cylinder |F| (not unique)"]
    plots.set_reaction_frame("joint")
    assert legend_texts(plots.rows["force"]) == ["cylinder Fx", "cylinder Fy (not unique)", "cylinder Fz",
                                                 "cylinder |F| (not unique)"]
    assert legend_texts(plots.rows["torque"]) == ["cylinder Tx (not unique)", "cylinder Ty",
                                                  "cylinder Tz (not unique)", "cylinder |T| (not unique)"]
    assert "out-of-plane force y and out-of-plane moment x, z of cylinder are not unique" in plots.warning.text()


@pytest.mark.slow
def test_a_joint_with_only_unique_components_gets_no_flag(window, qtbot):
    """Slider–crank with a pendulum on the piston: the loop's joints are marked, the hinge is not,
    and the crank pin's in-plane forces carry no mark."""
    from tests.solver.test_nonunique_components import slider_crank_with_pendulum
    model = slider_crank_with_pendulum()
    window.document.set_model(model)
    res = solver.simulate(model, t_end=0.05)
    window.simulation.set_results(res)
    tree = window.tree
    assert [j for j in model.joints if tree.is_marked_nonunique(j)] == ["crank_pin", "crank_rod", "rod_piston",
                                                                        "cylinder"]
    assert "not unique" not in tree.item("hinge").toolTip(0)
    window.document.select("hinge")
    plots = window.plots
    assert plots.warning.isHidden()
    assert legend_texts(plots.rows["force"]) == ["hinge Fx", "hinge Fy", "hinge Fz", "hinge |F|"]
    window.document.select("crank_pin")
    qtbot.wait(1)                          # the reused plot drops the hinge's curves on the next event
    assert legend_texts(plots.rows["force"]) == ["crank_pin Fx", "crank_pin Fy", "crank_pin Fz (not unique)",
                                                 "crank_pin |F| (not unique)"]
