"""A compiled model carries no state from one run to the next: the continuous joint angles (the
unwrapping memory of rotation drivers and screw joints) and the rotational springs' angles start
again from the model's configuration, so a CompiledModel run twice gives the same results twice —
also after a run that turned a driven crank through several revolutions."""
from __future__ import annotations

import numpy as np
import pytest

import solver


def turning_crank(formulation):
    m = solver.Model(name="turning", gravity=(0.0, -9.81, 0.0))
    m.add_body("crank", mass=1.0, inertia=(0.01, 0.01, 0.01), position=(0.25, 0.0, 0.0))
    m.add_body("arm", mass=0.5, inertia=(0.01, 0.01, 0.01), position=(0.75, 0.0, 0.0))
    m.add_joint("pivot", "revolute", "ground", "crank", origin=(0.0, 0.0, 0.0), axis=(0.0, 0.0, 1.0))
    m.add_joint("elbow", "revolute", "crank", "arm", origin=(0.5, 0.0, 0.0), axis=(0.0, 0.0, 1.0))
    m.add_driver("motor", joint="pivot", expression="2*pi*t")             # three turns in 3 s
    m.add_rotational_spring_damper("wrist", "elbow", stiffness=5.0)
    m.settings.set("formulation", formulation)
    return m


@pytest.mark.parametrize("formulation, codegen", [("cartesian", "off"), ("relative", "off"), ("cartesian", "on")])
def test_a_compiled_model_gives_the_same_run_twice(formulation, codegen, tmp_path, monkeypatch):
    monkeypatch.setenv("MBS_CODEGEN_CACHE", str(tmp_path))
    compiled = solver.compile_model(turning_crank(formulation), codegen=codegen)
    first = solver.simulate(compiled, t_end=3.0, output_step=0.1)
    second = solver.simulate(compiled, t_end=3.0, output_step=0.1)
    assert first.status == second.status == "ok"
    for body in ("crank", "arm"):
        np.testing.assert_allclose(second.body_position(body), first.body_position(body), atol=1e-12)
    np.testing.assert_allclose(second.driver_force("motor"), first.driver_force("motor"), atol=1e-9)
    angle = np.unwrap(np.arctan2(first.body_position("crank")[:, 1], first.body_position("crank")[:, 0]))
    assert angle[-1] - angle[0] == pytest.approx(6 * np.pi, abs=1e-6)    # it did turn three times


def test_editing_the_model_after_compiling_does_not_change_the_compiled_model():
    """A CompiledModel holds its own copy of what it needs: moving a body or changing its initial
    velocity in the editable model afterwards leaves the compiled runs as they were."""
    model = turning_crank("cartesian")
    model.remove("motor")
    compiled = solver.compile_model(model, codegen="off")
    before = solver.simulate(compiled, t_end=0.2, output_step=0.1)
    model.set_field("arm", "velocity", (0.0, 3.0, 0.0))
    model.set_field("crank", "angular_velocity", (0.0, 0.0, 5.0))
    after = solver.simulate(compiled, t_end=0.2, output_step=0.1)
    np.testing.assert_allclose(after.body_position("arm"), before.body_position("arm"), atol=1e-12)
    assert not np.allclose(solver.simulate(model, t_end=0.2, output_step=0.1, codegen=False).body_position("arm"),
                           before.body_position("arm"), atol=1e-6)
