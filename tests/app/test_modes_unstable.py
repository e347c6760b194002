"""The modes table flags a growing mode: an inverted pendulum's λ = ±√(m g d / I_O) are both
listed, the +a row reads "unstable" in the Stability column and the panel's note counts it; with
"at static equilibrium" checked the same pendulum is linearized hanging: one stable swing."""
from __future__ import annotations

import numpy as np
import pytest

import solver


def inverted():
    m = solver.Model(name="inverted", gravity=(0.0, -9.81, 0.0))
    m.add_body("bob", mass=2.0, inertia=(0.17, 0.001, 0.17), position=(0.0, 0.5, 0.0),
               geometry={"shape": "box", "size": [0.05, 1.0, 0.05], "color": [0.3, 0.55, 0.85]})
    m.add_joint("pivot", "revolute", "ground", "bob", origin=(0.0, 0.0, 0.0), axis=(0.0, 0.0, 1.0))
    return m


@pytest.mark.slow
def test_modes_table_marks_the_unstable_mode(window):
    window.document.set_model(inverted())
    window.actions["linearize"].trigger()
    modes = window.modes
    lin = modes.linearization
    a = np.sqrt(2.0 * 9.81 * 0.5 / (0.17 + 2.0 * 0.25))
    assert np.allclose(np.sort(lin.eigenvalues.real), [-a, a], rtol=1e-6)
    assert modes.table.rowCount() == 2
    assert modes.table.horizontalHeaderItem(3).text() == "Stability"
    marks = [modes.table.item(row, 3).text() for row in range(2)]
    zetas = [float(modes.table.item(row, 2).text()) for row in range(2)]
    assert sorted(zip(zetas, marks)) == [(-1.0, "unstable"), (1.0, "")]
    assert marks == ["unstable" if u else "" for u in lin.unstable]
    assert "1 unstable" in modes.info.text()
    assert float(modes.table.item(0, 1).text()) == pytest.approx(a / (2 * np.pi), rel=1e-5)


@pytest.mark.slow
def test_modes_at_the_static_equilibrium(window):
    window.document.set_model(inverted())
    modes = window.modes
    modes.at_equilibrium.setChecked(True)
    window.actions["linearize"].trigger()
    lin = modes.linearization
    w = np.sqrt(2.0 * 9.81 * 0.5 / (0.17 + 2.0 * 0.25))
    assert modes.table.rowCount() == 1 and not lin.unstable.any()
    assert float(modes.table.item(0, 1).text()) == pytest.approx(w / (2 * np.pi), rel=1e-5)
    assert "static equilibrium" in modes.info.text()
    assert np.allclose(lin.body_positions[0], (0.0, -0.5, 0.0), atol=1e-9)
