"""Every joint kind of ``solver.JOINT_KINDS`` is in Model ▸ Add Joint (and Add Joint by Picking) with
its label and icon, and is drawn by the parts its ``glyph`` names."""
from __future__ import annotations

import pytest

import solver
from app.resources import RESOURCES
from app.viewport import shapes


def _joint(kind):
    return solver.Joint(name="j", type=kind, body_i="ground", body_j="b", origin=(0.0, 0.0, 0.0),
                        origin2=(0.5, 0.0, 0.0), axis=(0.0, 0.0, 1.0), axis2=(1.0, 0.0, 0.0))


@pytest.mark.parametrize("kind", solver.JOINT_TYPES)
def test_every_kind_has_a_glyph_and_an_icon_file(kind):
    entry = solver.JOINT_KINDS[kind]
    assert set(entry.glyph) <= set(shapes.GLYPH_PARTS)
    assert shapes.joint_glyph(_joint(kind), 0.05).GetNumberOfPoints() > 0
    assert (RESOURCES / "icons" / f"{entry.icon}.svg").exists()


def test_menus_list_every_kind_by_its_label(window):
    for kind, entry in solver.JOINT_KINDS.items():
        assert window.actions[f"add_joint_{kind}"].text() == entry.label
        assert window.actions[f"pick_joint_{kind}"].text() == entry.label
