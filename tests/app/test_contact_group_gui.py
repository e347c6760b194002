"""A contact group's forces in the GUI (app/contact_arrows.py, app/contact_group_choice.py): during
playback one arrow per touching pair of its members at the pair's contact point along its force
(``Results.contact_pairs``), none while apart, the largest MAX_ARROWS when more touch; picked in the
model tree, the selection plot shows the total contact force on a member, or the force on it from
one other member, equal to ``Results.contact_force``; a click on a pair's arrow in the viewport
plots the force it draws.

The scene: two spheres resting on a floor 2 cm apart and a third dropped from 2 cm above the
groove between them: apart at first, then it touches both, bounces off and lands again."""
import numpy as np
import pytest
from PySide6.QtCore import Qt

import solver
from app import contact_arrows

R = 0.05
LAW = dict(stiffness=1e6, damping=50.0, exponent=1.5, friction=(0.3, 0.3))


def stack() -> solver.Model:
    m = solver.Model(name="stack", gravity=(0, -9.81, 0))
    drop = R + np.sqrt((2 * R) ** 2 - (R + 0.01) ** 2) + 0.02       # 2 cm above touching both
    for name, position in (("left", (-R - 0.01, R, 0.0)), ("right", (R + 0.01, R, 0.0)), ("top", (0.0, drop, 0.0))):
        m.add_body(name, mass=0.5, inertia=(5e-4,) * 3, position=position, geometry={"shape": "sphere", "radius": R})
        m.add_contact(f"floor_{name}", "ground", name, **LAW,
                      geometry_i={"shape": "plane", "point": (0, 0, 0), "normal": (0, 1, 0)})
    m.add_contact_group("balls", ["left", "right", "top"], **LAW)
    return m


def expected_arrows(results, k):
    """The contacts with a force at output ``k``: the floor contacts and the group's pairs."""
    pairs = [("left", "right"), ("left", "top"), ("right", "top")]
    return sum(np.any(results.contact_force(f"floor_{b}")[k] != 0) for b in ("left", "right", "top")) + \
        sum(np.any(results.contact_force("balls", pair=p)[k] != 0) for p in pairs)


@pytest.fixture(scope="module")
def run():
    model = stack()
    results = solver.simulate(model, t_end=0.15, output_step=5e-3)
    assert results.status == "ok"
    return model, results


def test_a_groups_touching_pairs_are_arrows_during_playback(window, run, monkeypatch):
    model, results = run
    window.document.set_model(model)
    window.simulation.set_results(results)
    arrows = window.player.contact_arrows
    assert arrows is not None and arrows.actor is not None
    pairs = results.contact_pairs("balls")
    assert pairs.bodies == ("left", "right", "top")
    top = results.body_position("top")
    touching = sorted(set(pairs.index[np.linalg.norm(pairs.force, axis=1) > 0].tolist()))
    assert touching and touching[0] > 0
    apart = [k for k in range(touching[0], len(results.t)) if k not in touching]
    assert apart and apart[0] < touching[-1]                 # the top ball bounces off and lands again
    for k in range(len(results.t)):                          # one arrow per contact with a force
        window.player.set_frame(k)
        assert arrows.data.GetNumberOfPoints() == expected_arrows(results, k)
    for k in (0, apart[0]):                                  # the balls apart: only the floor contacts'
        assert not np.any(results.contact_force("balls")[k])
    k = touching[-1]
    window.player.set_frame(k)
    drawn = arrows.data
    P = np.array([drawn.GetPoint(i) for i in range(drawn.GetNumberOfPoints())])
    F = np.array([drawn.GetPointData().GetVectors().GetTuple3(i) for i in range(len(P))])
    for other in ("left", "right"):
        force = results.contact_force("balls", pair=(other, "top"))[k]
        if not np.any(force):
            continue
        point = results.contact_point("balls", pair=(other, "top"))[k]
        # equal spheres: the contact point is the middle of the centres (closed form), up to the
        # half penetration's round-off
        assert np.allclose(point, (results.body_position(other)[k] + top[k]) / 2, rtol=0, atol=1e-12)
        drawn_here = np.flatnonzero(np.linalg.norm(P - point, axis=1) <= 1e-12)
        assert len(drawn_here) == 1
        assert np.allclose(F[drawn_here[0]], force, rtol=0, atol=1e-9 * np.linalg.norm(force))
        # along the centre line up to friction: |F_t| ≤ μ F_n
        n = (top[k] - results.body_position(other)[k]) / np.linalg.norm(top[k] - results.body_position(other)[k])
        assert force @ n > 0 and np.linalg.norm(force - (force @ n) * n) <= 0.3 * (force @ n) * (1 + 1e-9)
    assert len(P) == expected_arrows(results, k)
    largest = max(np.max(np.linalg.norm(pairs.force, axis=1)),
                  *(np.max(np.linalg.norm(results.contact_force(f"floor_{b}"), axis=1)) for b in ("left", "right", "top")))
    bounds = window.viewport.scene.model_bounds()
    extent = np.linalg.norm(np.subtract(bounds[1::2], bounds[0::2]))
    assert arrows.scale * largest == pytest.approx(0.25 * extent, rel=1e-2)
    monkeypatch.setattr(contact_arrows, "MAX_ARROWS", 2)   # bounded: the two largest forces
    window.player.set_frame(0)
    window.player.set_frame(k)
    kept = np.array([arrows.data.GetPointData().GetVectors().GetTuple3(i) for i in range(2)])
    assert arrows.data.GetNumberOfPoints() == 2
    assert np.allclose(np.sort(np.linalg.norm(kept, axis=1)), np.sort(np.linalg.norm(F, axis=1))[-2:])


def test_picking_a_group_in_the_tree_plots_a_members_contact_force(window, run):
    model, results = run
    window.document.set_model(model)
    window.simulation.set_results(results)
    window.tree.setCurrentItem(window.tree.item("balls"))
    assert window.document.selection == "balls"
    plots = window.plots
    assert plots.kind("balls") == "contact group"
    total = results.contact_force("balls")
    assert total.shape == (len(results.t), 3, 3)
    loudest = ("left", "right", "top")[int(np.argmax(np.linalg.norm(total, axis=2).max(axis=0)))]
    assert plots.group_choice.isVisibleTo(plots) and plots.group_choice.member.currentData() == loudest
    plots.group_choice.choose("top")
    for i, axis in enumerate("xyz"):
        x, y = plots.curve_data(f"balls on top F{axis}")
        assert np.array_equal(x, results.t) and np.array_equal(y, total[:, 2, i])
    assert np.allclose(plots.curve_data("balls on top |F|")[1], np.linalg.norm(total[:, 2], axis=1))
    offered = [plots.group_choice.partner.itemData(i) for i in range(plots.group_choice.partner.count())]
    assert offered == ["", "left", "right"]
    plots.group_choice.choose("top", "left")     # on top from left: the pair (left, top)'s force on top
    on_top = results.contact_force("balls", pair=("left", "top"))
    assert np.array_equal(plots.curve_data("balls on top from left Fy")[1], on_top[:, 1])
    plots.group_choice.choose("left", "top")     # its opposite on left
    assert np.array_equal(plots.curve_data("balls on left from top Fy")[1], -on_top[:, 1])
    # the total on top is the sum of the pairs' (one evaluation of the group, one per pair)
    pair_sum = on_top + results.contact_force("balls", pair=("right", "top"))
    assert np.allclose(total[:, 2], pair_sum, rtol=0, atol=1e-12 * np.max(np.abs(total)))
    assert plots.group_choice.choice("balls") == ("left", "top")
    window.tree.setCurrentItem(window.tree.item("top"))          # a body: no group boxes
    assert not plots.group_choice.isVisibleTo(plots)


def test_clicking_a_pairs_arrow_plots_that_pairs_force(window, run, qtbot):
    """The arrows are drawn over the model (they start inside the bodies) and a click on one picks
    its contact: a group's arrow selects the group and plots the force it draws."""
    model, results = run
    window.document.set_model(model)
    window.simulation.set_results(results)
    arrows, vp = window.player.contact_arrows, window.viewport
    k = int(np.argmax(np.linalg.norm(results.contact_force("balls", pair=("left", "top")), axis=1)))
    window.player.set_frame(k)
    assert arrows.actor in [a for a in _actors(vp.overlay)]
    row = next(r for r in arrows.shown if arrows.rows["owner"][r] == arrows.names.index("balls")
               and (arrows.rows["a"][r], arrows.rows["b"][r]) == (0, 2))
    tip = arrows.rows["point"][row] + 0.75 * arrows.scale * arrows.rows["force"][row]      # on its cone
    assert vp.pick(vp.project(tip).x(), vp.project(tip).y()).part == ("top", "left")
    qtbot.mouseClick(vp.vtk_widget, Qt.MouseButton.LeftButton, pos=vp.project(tip))
    assert window.document.selection == "balls"
    assert window.plots.group_choice.choice("balls") == ("top", "left")
    on_top = results.contact_force("balls", pair=("left", "top"))
    assert np.array_equal(window.plots.curve_data("balls on top from left Fx")[1], on_top[:, 0])
    assert np.array_equal(on_top[k], arrows.rows["force"][row])
    floor = vp.project(results.contact_point("floor_right")[k] + 0.75 * arrows.scale *
                       results.contact_force("floor_right")[k])
    qtbot.mouseClick(vp.vtk_widget, Qt.MouseButton.LeftButton, pos=floor)      # a contact element's arrow
    assert window.document.selection == "floor_right" and window.plots.kind("floor_right") == "contact"


def test_a_members_force_is_a_custom_plot_quantity(window, run):
    """The custom plots offer the registry's paths of a group (forces.GROUP.contact_force.MEMBER.x|y|z):
    plotted, a member's component is the selection plot's "from all" curve."""
    model, results = run
    window.document.set_model(model)
    window.simulation.set_results(results)
    panel = window.custom_plots
    panel.refresh_choices()
    offered = [panel.y_choice.itemText(i) for i in range(panel.y_choice.count())]
    assert [p for p in offered if p.startswith("forces.balls.")] == \
        [f"forces.balls.contact_force.{b}.{a}" for b in ("left", "right", "top") for a in "xyz"]
    panel.add_tile(["forces.balls.contact_force.top.y"])
    assert np.array_equal(panel.curve_data("forces.balls.contact_force.top.y")[1], results.contact_force("balls")[:, 2, 1])
    window.tree.setCurrentItem(window.tree.item("balls"))
    window.plots.group_choice.choose("top")
    assert np.array_equal(window.plots.curve_data("balls on top Fy")[1],
                          panel.curve_data("forces.balls.contact_force.top.y")[1])


def _actors(renderer):
    actors = renderer.GetActors()
    actors.InitTraversal()
    return [actors.GetNextActor() for _ in range(actors.GetNumberOfItems())]
