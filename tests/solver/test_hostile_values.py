"""Values that used to end in a foreign exception or a wrong exit code (issue 30, item 5): drivers not
finite at t = 0, numbers beyond the float range inside expressions, table times too close together,
names XML cannot carry, non-finite command-line options, and the partition's failures escaping the
integrators.  Each is refused at the boundary naming the field (exit 2) or ends as a SolverError."""
from __future__ import annotations

import json

import numpy as np
import pytest

import solver
from solver.cli import main
from solver.codegen.build import compiler_path
from solver.model.project_format import project_to_dict
from solver.partitioning.partition import Partition, PartitionError


def driven():
    m = solver.Model(name="crank", gravity=(0, -9.81, 0))
    m.add_body("bob", mass=1.0, inertia=(1e-3, 1e-3, 1e-3), position=(1, 0, 0))
    m.add_joint("pivot", "revolute", "ground", "bob", origin=(0, 0, 0), axis=(0, 0, 1))
    m.add_spring_damper("S", "ground", "bob", point_i=(0, 1, 0), stiffness=10.0)
    m.add_driver("D", "pivot", expression="t")
    m.settings.set("t_end", 0.05)
    return project_to_dict(m)


def project(tmp_path, change=lambda d: None):
    """The driven model's project file, changed by ``change(data)``; its path."""
    data = driven()
    change(data)
    path = tmp_path / "m.mbs.json"
    path.write_text(json.dumps(data))
    return path


def setter(collection, field, value):
    return lambda d: d["model"][collection][0].__setitem__(field, value)


def rename_bob(name):
    def change(d):
        d["model"]["bodies"][0]["name"] = name
        d["model"]["joints"][0]["body_j"] = name
        d["model"]["forces"][0]["body_j"] = name
    return change


SUBNORMAL = {"t": [0, 5e-324, 1e-323, 1.5e-323], "values": [0, 1, 2, 3]}
TOO_CURVED = {"t": [0, 1e-200, 2e-200, 1], "values": [0, 1e-100, 0, 1]}
TOO_CLOSE = "t[1]: too close to t[0] for the change of value between them (t = 0 and 4.94066e-324"
NONCHARACTER = "must not contain the Unicode noncharacter U+{} (XML, e.g. an FMU's modelDescription.xml"
CASES = {   # (change of the file, message): each through validate, run and export-fmu
    "driver 1/t": (setter("drivers", "expression", "1/t"),
                   "model.drivers[0].expression: must be finite at t = 0, where a run starts; its value there is inf"),
    "driver log(t)": (setter("drivers", "expression", "log(t)"),
                      "model.drivers[0].expression: must be finite at t = 0, where a run starts; its value there is -inf"),
    "driver sqrt(t)": (setter("drivers", "expression", "sqrt(t)"),
                       "model.drivers[0].expression: must be finite at t = 0, where a run starts; its first derivative "
                       "there is inf"),
    "input default 1/t": (lambda d: d["model"].__setitem__("inputs", [{"name": "u", "target": "drivers.D.motion",
                                                                         "default": "1/t"}]),
                          "model.inputs[0].default: must be finite at t = 0, where a run starts; its value there is inf"),
    "driver t+1e999": (setter("drivers", "expression", "t+1e999"),
                       "model.drivers[0].expression: invalid expression 't+1e999': it holds the number inf, which is "
                       "not finite"),
    "driver subnormal table": (setter("drivers", "expression", SUBNORMAL), f"model.drivers[0].expression: {TOO_CLOSE}"),
    "force subnormal table": (setter("forces", "force", SUBNORMAL), f"model.forces[0].force: {TOO_CLOSE}"),
    "force spline too curved": (setter("forces", "force", TOO_CURVED),
                                "model.forces[0].force: t: the times are too close together for a spline"),
    "force t+1e999": (setter("forces", "force", "t+1e999"),
                      "model.forces[0].force: invalid expression 't+1e999': it holds the number inf"),
    "force t*(0*1e999)": (setter("forces", "force", "t*(0*1e999)"), "it holds the number nan, which is not finite"),
    "body name U+FFFE": (rename_bob("bob\ufffe"), "model.bodies[0].name: " + NONCHARACTER.format("FFFE")),
    "body name U+FFFF": (rename_bob("bob\uffff"), "model.bodies[0].name: " + NONCHARACTER.format("FFFF")),
    "body name U+FDD0": (rename_bob("bob\ufdd0"), "model.bodies[0].name: " + NONCHARACTER.format("FDD0")),
    "model name U+FFFF": (lambda d: d["model"].__setitem__("name", "crank\uffff"),
                          "model.name: " + NONCHARACTER.format("FFFF")),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_values_exit_2_naming_the_field(case, tmp_path, capsys):
    change, message = CASES[case]
    path = project(tmp_path, change)
    for argv in (["validate", str(path)], ["run", str(path), "--quiet"],
                 ["export-fmu", str(path), "-o", str(tmp_path / "m.fmu"), "--quiet"]):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.startswith(f"mbs: error: {path}: ") and message in err and "internal error" not in err, err
    assert not (tmp_path / "m.fmu").exists()


def test_a_driver_not_finite_at_t0_is_refused_by_the_api():
    m = solver.Model()
    m.add_body("bob", mass=1.0, inertia=(1, 1, 1))
    m.add_joint("pivot", "revolute", "ground", "bob")
    with pytest.raises(solver.ModelError, match=r"driver 'D'.expression: must be finite at t = 0"):
        m.add_driver("D", "pivot", expression="log(t)")
    m.add_driver("D", "pivot", expression="log(t + 1)")                 # finite at 0: fine
    with pytest.raises(solver.ModelError, match="its second derivative there is inf"):
        m.drivers["D"].set("expression", "t^1.5")
    assert m.drivers["D"].expression == "log(t + 1)"                   # unchanged


OPTION_CASES = {
    "export --rtol inf": (["--rtol", "inf"], "--rtol: must be finite, got inf"),
    "export --atol 1e999": (["--atol", "1e999"], "--atol: must be finite, got inf"),
    "export --step inf": (["--step", "inf"], "--step: must be finite, got inf"),
    "export --step nan": (["--step", "nan"], "--step: must be finite, got nan"),
    "export --rtol 0.5": (["--rtol", "0.5"], "--rtol: must be"),
}


@pytest.mark.parametrize("case", sorted(OPTION_CASES))
def test_non_finite_export_options_exit_2_naming_the_option(case, tmp_path, capsys):
    options, message = OPTION_CASES[case]
    path = project(tmp_path)
    assert main(["export-fmu", str(path), "-o", str(tmp_path / "m.fmu"), *options]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"mbs: error: {message}") and err.count("\n") == 1, err
    assert not (tmp_path / "m.fmu").exists()


def test_export_fmu_api_refuses_a_non_finite_step(tmp_path):
    from solver.fmu import export_fmu
    m = solver.load_model(project(tmp_path))
    with pytest.raises(solver.ModelError, match=r"export_fmu: step must be a finite number > 0, got inf"):
        export_fmu(m, tmp_path / "m.fmu", step=float("inf"))


@pytest.mark.slow
@pytest.mark.skipif(not compiler_path(), reason="no C compiler")
@pytest.mark.parametrize("name, message", [
    ("torque\uffff", r"inputs: 'torque\uffff' must not contain the Unicode noncharacter U+FFFF"),
    ("torque\x01", r"inputs: 'torque\x01' must not contain control characters")])
def test_fmu_input_names_follow_the_name_rules(name, message, tmp_path, capsys):
    path = project(tmp_path)
    argv = ["export-fmu", str(path), "-o", str(tmp_path / "m.fmu"), "--input", f"{name}=forces.S.force", "--quiet"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"mbs: error: {message}") and err.count("\n") == 1, err
    assert not (tmp_path / "m.fmu").exists()


def pendulum_at(x, y):
    """A 1 m pendulum whose pivot is at (x, y, 0), the bob drawn beside it."""
    m = solver.Model(name="far", gravity=(0, -9.81, 0))
    m.add_body("bob", mass=1.0, inertia=(1e-3, 1e-3, 1e-3), position=(x - 1, y, 0))
    m.add_joint("pivot", "revolute", "ground", "bob", origin=(x, y, 0), axis=(0, 0, 1))
    return m


@pytest.mark.parametrize("integrator", ["bdf", "radau", "rk", "adams", "rk45"])
def test_a_model_far_from_the_origin_runs_in_cartesian_coordinates(integrator):
    """Position Newton used to stall at max |Φ| = 1.2e-10 against its 1e-10 (the round-off of 1e6 m):
    a PartitionError out of BDF's first evaluations, 'cannot get past this configuration' from the
    others.  Its bound now includes that round-off (partition.ROUNDOFF): the pendulum drawn a thousand
    kilometres away swings as the one drawn at the origin."""
    far = solver.simulate(pendulum_at(1e6, 1e6), t_end=0.2, integrator=integrator, formulation="cartesian",
                          codegen=False)
    near = solver.simulate(pendulum_at(0, 0), t_end=0.2, integrator=integrator, formulation="cartesian",
                           codegen=False)
    assert far.status == "ok"
    assert np.abs(far.body_position("bob") - (1e6, 1e6, 0) - near.body_position("bob")).max() < 1e-6
    assert near.body_position("bob")[-1, 1] < -0.1                     # it swung


@pytest.mark.parametrize("integrator", ["bdf", "radau", "rk"])
def test_a_partition_failure_before_the_first_step_is_a_solver_error(integrator, monkeypatch):
    """scipy's BDF, Radau and DOP853 evaluate the right-hand side (and the Jacobian) when they are made,
    outside the step loop's handler: a PartitionError there is the run's SolverError, of its kind."""
    m = solver.Model(name="p", gravity=(0, -9.81, 0))
    m.add_body("bob", mass=1.0, inertia=(1e-3, 1e-3, 1e-3), position=(1, 0, 0))
    m.add_joint("pivot", "revolute", "ground", "bob", origin=(0, 0, 0), axis=(0, 0, 1))

    def stalled(self, system, z, t, q_guess, tol=1e-10, max_iter=25):
        raise PartitionError("position Newton did not converge (max |Φ| = 1.16e-10)", kind="locked")

    monkeypatch.setattr(Partition, "positions", stalled)
    with pytest.raises(solver.SolverError) as info:
        solver.simulate(m, t_end=0.05, integrator=integrator, formulation="cartesian", codegen=False)
    assert info.value.kind == "locked" and str(info.value) == "position Newton did not converge (max |Φ| = 1.16e-10)"
    assert info.value.results is not None and info.value.results.status == "failed"
    assert set(solver.FAILURE_KINDS) >= {PartitionError("x").kind, PartitionError("x", kind="singular").kind}
