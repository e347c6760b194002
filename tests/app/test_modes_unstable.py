"""The modes table flags a growing mode: an inverted pendulum's λ = ±√(m g d / I_O) are both
listed, the +a row reads "unstable" in the Stability column and the panel's note counts it."""
from __future__ import annotations

import numpy as np
import pytest

import solver


@pytest.mark.slow
def test_modes_table_marks_the_unstable_mode(window):
    m = solver.Model(name="inverted", gravity=(0.0, -9.81, 0.0))
    m.add_body("bob", mass=2.0, inertia=(0.17, 0.001, 0.17), position=(0.0, 0.5, 0.0),
               geometry={"shape": "box", "size": [0.05, 1.0, 0.05], "color": [0.3, 0.55, 0.85]})
    m.add_joint("pivot", "revolute", "ground", "bob", origin=(0.0, 0.0, 0.0), axis=(0.0, 0.0, 1.0))
    window.document.set_model(m)
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
