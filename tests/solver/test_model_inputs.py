"""Inputs and outputs declared in the model: an input replaces its target's time function with the
value a run is given (number, expression, table or callable) or its default; an output names a
quantity of the run.  Checked on a pendulum driven by a torque input, whose run must equal the same
model with the torque written in (exactly: the same time function reaches the solver), and on a
driven crank whose motion is an input."""
from __future__ import annotations

import math

import numpy as np
import pytest

import solver


def pendulum_with_torque_input():
    m = solver.Model(name="torqued", gravity=(0.0, -9.81, 0.0))
    m.add_body("bob", mass=1.0, inertia=(0.01, 0.01, 0.01), position=(0.0, -1.0, 0.0))
    m.add_joint("pivot", "revolute", "ground", "bob", origin=(0.0, 0.0, 0.0), axis=(0.0, 0.0, 1.0))
    m.add_torque("motor", "bob", torque=(0.0, 0.0, 0.0))
    m.add_input("torque", "forces.motor.torque.z", default=0.5)
    m.add_output("angle", "joints.pivot.rotation")
    m.add_output("reaction_y", "joints.pivot.reaction_force.y")
    return m


def written_in(torque):
    m = pendulum_with_torque_input()
    m.remove("torque")
    m.set_field("motor", "torque", [0.0, 0.0, torque])
    return m


RUN = dict(t_end=1.0, output_step=0.05, codegen=False)


@pytest.mark.parametrize("value", [1.5, "2*sin(3*t)", {"t": [0.0, 0.5, 1.0], "values": [0.0, 1.0, 0.5]}])
def test_an_input_value_acts_as_the_same_time_function_written_in(value):
    given = solver.simulate(pendulum_with_torque_input(), inputs={"torque": value}, **RUN)
    reference = solver.simulate(written_in(value), **RUN)
    np.testing.assert_array_equal(given.body_position("bob"), reference.body_position("bob"))


def test_the_default_applies_and_a_callable_is_tabulated():
    model = pendulum_with_torque_input()
    default = solver.simulate(model, **RUN)
    np.testing.assert_array_equal(default.body_position("bob"), solver.simulate(written_in(0.5), **RUN).body_position("bob"))
    called = solver.simulate(model, inputs={"torque": lambda t: 2 * math.sin(3 * t)}, **RUN)
    exact = solver.simulate(written_in("2*sin(3*t)"), **RUN)
    np.testing.assert_allclose(called.body_position("bob"), exact.body_position("bob"), atol=1e-8)


def test_declared_outputs_are_the_named_quantities_of_the_run(tmp_path):
    model = pendulum_with_torque_input()
    model.save(tmp_path / "p.mbs.json")
    back = solver.load_model(tmp_path / "p.mbs.json")
    assert back == model and list(back.inputs) == ["torque"] and list(back.outputs) == ["angle", "reaction_y"]
    res = solver.simulate(back, **RUN)
    out = solver.declared_outputs(back, res)
    r = np.asarray(res.body_position("bob"))
    np.testing.assert_allclose(out["angle"][1], np.unwrap(np.arctan2(r[:, 0], -r[:, 1])), atol=1e-9)
    assert out["angle"][0] == "rad" and out["reaction_y"][0] == "N"
    np.testing.assert_allclose(out["reaction_y"][1], np.asarray(res.joint_reaction("pivot")[0])[:, 1])


def test_a_driver_motion_input():
    m = solver.Model(name="crank", gravity=(0.0, -9.81, 0.0))
    m.add_body("crank", mass=1.0, inertia=(0.01, 0.01, 0.01), position=(0.5, 0.0, 0.0))
    m.add_joint("pivot", "revolute", "ground", "crank", origin=(0.0, 0.0, 0.0), axis=(0.0, 0.0, 1.0))
    m.add_driver("turn", joint="pivot", expression="0")
    m.add_input("angle", "drivers.turn.motion")
    res = solver.simulate(m, inputs={"angle": "pi/2*t"}, **RUN)
    r = np.asarray(res.body_position("crank"))
    np.testing.assert_allclose(np.arctan2(r[:, 1], r[:, 0]), np.pi / 2 * np.asarray(res.t), atol=1e-9)


def test_bad_inputs_and_outputs_are_named():
    model = pendulum_with_torque_input()
    with pytest.raises(solver.ModelError, match="'speed' is not a declared input \\(declared: torque\\)"):
        solver.simulate(model, inputs={"speed": 1.0}, **RUN)
    with pytest.raises(solver.ModelError, match="input 'bad'.target: must be drivers.NAME.motion"):
        model.add_input("bad", "bodies.bob.mass")
    model.add_input("gone", "forces.nothing.force")
    with pytest.raises(solver.ModelError, match="inputs 'gone'.target: .*no force named 'nothing'"):
        solver.simulate(model, **RUN)
    model.remove("gone")
    model.add_output("nonsense", "joints.pivot.colour")
    res = solver.simulate(model, **RUN)
    with pytest.raises(solver.ModelError, match="outputs 'nonsense'.quantity"):
        solver.declared_outputs(model, res)
    with pytest.raises(solver.ModelError, match="inputs need the Model"):
        solver.simulate(solver.compile_model(model, codegen="off"), inputs={"torque": 1.0})


@pytest.mark.sweep          # make test: test_fmu.py::test_torque_input_equals_the_solver_run_with_the_torque_table
def test_an_exported_fmu_takes_the_declared_inputs(tmp_path, monkeypatch):
    fmpy = pytest.importorskip("fmpy")
    monkeypatch.setenv("MBS_CODEGEN_CACHE", str(tmp_path / "cache"))
    path = solver.export_fmu(pendulum_with_torque_input(), tmp_path / "p.fmu")
    variables = {v.name: v for v in fmpy.read_model_description(str(path)).modelVariables}
    assert variables["torque"].causality == "input"


def test_a_declared_measure_is_an_output():
    """A distance measure from the pivot marker to a marker on the bob stays L; an angle about the
    pivot marker's z axis is the pendulum angle (from the bodies' positions)."""
    m = pendulum_with_torque_input()
    m.add_marker("tip", "bob", position=(0.0, -1.0, 0.0))
    m.add_marker("mid", "bob", position=(0.0, -0.5, 0.0))
    m.add_measure("arm", "distance", "ground", "tip")                 # the pivot is at the origin
    m.add_measure("half", "distance", "mid", "tip")
    m.add_measure("swing", "angle", "ground", "tip", axis="z")
    m.add_output("arm_length", "measures.arm")
    m.add_output("half_length", "measures.half")
    m.add_output("swing_angle", "measures.swing")
    res = solver.simulate(m, **RUN)
    out = solver.declared_outputs(m, res)
    assert out["arm_length"][0] == "m" and out["swing_angle"][0] == "rad"
    np.testing.assert_allclose(out["arm_length"][1], 1.0, atol=1e-8)
    np.testing.assert_allclose(out["half_length"][1], 0.5, atol=1e-12)            # two markers on one body
    r = np.asarray(res.body_position("bob"))
    np.testing.assert_allclose(out["swing_angle"][1], np.unwrap(np.arctan2(r[:, 0], -r[:, 1])), atol=1e-8)
    with pytest.raises(solver.ModelError, match="measure 'w'.axis: a distance takes ''"):
        m.add_measure("w", "distance", "mid", "tip", axis="z")
