"""A run's fixed costs kept per compiled system (solver.formulations.workspace.initial_state): the
start state is evaluated once per compiled system, and an edit of the model — a new compilation —
never finds the old start."""
import numpy as np
import pytest

import solver
from solver.formulations import workspace


def pendulum(omega=0.0):
    """A rod on a pin at the origin, horizontal, with angular velocity ``omega`` about z."""
    m = solver.Model(name="pendulum", gravity=(0.0, -9.81, 0.0))
    m.add_body("rod", mass=1.0, inertia=(1e-4, 1 / 12, 1 / 12), position=(0.5, 0, 0),
               velocity=(0.0, 0.5 * omega, 0.0), angular_velocity=(0.0, 0.0, omega))
    m.add_joint("pin", "revolute", "ground", "rod", origin=(0, 0, 0), axis=(0, 0, 1))
    m.settings.set("t_end", 0.05)
    m.settings.set("output_step", 0.05)
    return m


@pytest.mark.parametrize("formulation", ["relative", "cartesian"])
def test_the_start_is_kept_per_compiled_system_and_an_edit_starts_anew(formulation):
    model = pendulum()
    compiled = solver.compile_model(model, formulation=formulation)
    first = solver.simulate(compiled)
    kept = workspace._STARTS[compiled.system]
    assert not kept[0].flags.writeable and not kept[1].flags.writeable    # a run works on its own copy
    fresh = compiled.system.workspace().initial_state()                   # the same as evaluated afresh
    assert all(np.array_equal(a, b) for a, b in zip(kept[:2], fresh[:2])) and kept[2] == fresh[2]
    again = solver.simulate(compiled)                                      # the kept start: the same run
    assert np.array_equal(first.coordinates, again.coordinates)
    assert workspace._STARTS[compiled.system] is kept

    model.bodies["rod"].set("angular_velocity", [0.0, 0.0, 2.0])           # an edit: ω0 = 2 rad/s …
    model.bodies["rod"].set("velocity", [0.0, 1.0, 0.0])
    edited = solver.simulate(model, formulation=formulation)
    assert edited.body_angular_velocity("rod")[0, 2] == pytest.approx(2.0, rel=1e-9)   # … is the new start
    assert first.body_angular_velocity("rod")[0, 2] == 0.0
    # the edited model's run against energy: ½ I_O ω² − m g y_cm constant (I_O = m L²/3 + the rod's 1e-4 … about z: 1/12 + 1/4)
    I_O, y = 1 / 12 + 0.25, edited.body_position("rod")[:, 1]
    w = edited.body_angular_velocity("rod")[:, 2]
    energy = 0.5 * I_O * w ** 2 + 9.81 * y
    assert energy[-1] == pytest.approx(energy[0], abs=1e-6)
