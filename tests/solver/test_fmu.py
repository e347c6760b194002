"""FMU export (solver.fmu, docs/fmu.md) checked with FMPy, the peer FMI library: the exported
slider–crank, RRC arm and car equal ``solver.simulate`` (tight tolerances) to 1e-6 relative in
positions and reactions, an input-driven run equals the solver run with the same torque table, a
parameter set through FMI acts as the same project edit, FMPy's validation finds no problem, and
the time functions written as C equal the solver's."""
import ctypes
import subprocess
from pathlib import Path

import numpy as np
import pytest

fmpy = pytest.importorskip("fmpy")
from fmpy import extract  # noqa: E402
from fmpy.fmi2 import FMU2Slave  # noqa: E402
from fmpy.validation import validate_fmu  # noqa: E402

import solver  # noqa: E402
from solver.cli import main  # noqa: E402
from solver.codegen.build import compiler  # noqa: E402
from solver.codegen.timefunctions import PRELUDE, c_time_function  # noqa: E402
from solver.expressions import time_function  # noqa: E402
from solver.fmu import export_fmu  # noqa: E402
from solver.outputs import output  # noqa: E402

SAMPLES = Path(__file__).resolve().parents[2] / "sample_models"
RTOL = 1e-6          # FMU against the solver, relative to the largest value of the element's vector
FMU_TOL = 1e-10      # the FMU integrator's tolerance (fmi2SetupExperiment)
REFERENCE = dict(rtol=1e-12, atol=1e-14, integrator="adams", formulation="cartesian", codegen=True)


pytestmark = pytest.mark.usefixtures("module_codegen_cache")


def slider_crank():
    return solver.load_model(SAMPLES / "slider_crank.mbs.json")


def outputs_of(fmu_path, prefix=("bodies", "joints", "drivers"), quantities=("position", "reaction_force",
                                                                             "reaction_torque", "force")):
    md = fmpy.read_model_description(str(fmu_path))
    return [v.name for v in md.modelVariables
            if v.causality == "output" and v.name.split(".")[0] in prefix and v.name.split(".")[2] in quantities]


def worst_error(model, res, fmu_result, names):
    """max over ``names`` of |FMU − solver| / scale: for body quantities the largest |value| of that
    body's vector (all components), for reactions the largest reaction force of the model (torques
    per metre: a planar mechanism's reaction torques are round-off), for driver forces the largest
    driver force (a locked joint's is round-off)."""
    ref = {n: output(model, n).evaluate(res, model) for n in names}
    reaction = max([np.max(np.abs(v)) for n, v in ref.items() if ".reaction_force." in n] or [0.0])
    driver = max([np.max(np.abs(v)) for n, v in ref.items() if n.startswith("drivers.")] or [0.0])
    worst, where = 0.0, ""
    for n in names:
        if ".reaction_" in n or n.startswith("drivers."):
            scale = reaction if ".reaction_" in n else driver
        else:
            stem = n.rsplit(".", 1)[0] if n.startswith("bodies.") else n
            scale = max(np.max(np.abs(v)) for m, v in ref.items() if m.startswith(stem))
        err = np.max(np.abs(ref[n] - fmu_result[n])) / max(scale, 1e-9)
        if err > worst:
            worst, where = err, n
    return worst, where


def simulate_fmu(path, t_end, step, **options):
    return fmpy.simulate_fmu(str(path), stop_time=t_end, output_interval=step, relative_tolerance=FMU_TOL,
                             output=outputs_of(path), **options)


@pytest.fixture(scope="module")
def slider_crank_fmu(tmp_path_factory):
    return export_fmu(slider_crank(), tmp_path_factory.mktemp("fmu") / "slider_crank.fmu", step=0.01)


# ---- time functions as C ---------------------------------------------------------------------------
EXPRESSIONS = ["0.3*sin(2*pi*t) + t^2", "step(t, 0.2, 0, 0.8, 1.5)", "abs(t - 0.5) + sign(t - 0.3)",
               "min(t, 0.4) * max(cos(t), 0.5)", "atan2(t - 0.5, 0.3) + exp(-t) * log(1 + t)",
               "sqrt(1 + t) / cosh(t) + tanh(t) - log10(2 + t) + atan(t) + asin(t / 2) + acos(t / 3)",
               "pow(1 + t, 1.5) - tan(t / 2) + sinh(t)", 2.5]
TABLES = [{"t": [0.0, 1.0], "values": [1.0, -2.0]}, {"t": [0.0, 0.5, 1.0], "values": [0.0, 2.0, -1.0]},
          {"t": [0.0, 0.2, 0.45, 0.7, 1.0], "values": [0.0, 1.0, 0.5, -0.3, 2.0]}]


def test_time_functions_written_as_c_equal_the_solver(tmp_path):
    """f, ḟ, f̈ of expressions (every function of the language) and of linear and spline tables
    (outside their range too) from the generated C equal solver.expressions to 1e-12."""
    fns = [time_function(spec) for spec in EXPRESSIONS + TABLES]
    source = "#include <math.h>\n" + PRELUDE + "".join(c_time_function(fn, f"tf{k}") for k, fn in enumerate(fns))
    source += "void eval(int k, double t, double *v)\n{\n    switch (k) {\n"
    source += "".join(f"    case {k}: tf{k}(t, v); break;\n" for k in range(len(fns))) + "    }\n}\n"
    (tmp_path / "tf.c").write_text(source)
    subprocess.run([compiler(), "-O2", "-shared", "-fPIC", "-o", str(tmp_path / "tf.so"), str(tmp_path / "tf.c"),
                    "-lm"], check=True)
    lib = ctypes.CDLL(str(tmp_path / "tf.so"))
    v = (ctypes.c_double * 3)()
    for k, fn in enumerate(fns):
        for t in np.linspace(-0.3, 1.3, 161):
            lib.eval(k, ctypes.c_double(t), v)
            expected = [fn.value(t), fn.d1(t), fn.d2(t)]
            np.testing.assert_allclose(list(v), expected, rtol=1e-12, atol=1e-12, err_msg=f"{fns[k]!r} at t = {t}")


# ---- slider–crank ---------------------------------------------------------------------------------
def test_slider_crank_fmu_equals_the_solver(slider_crank_fmu):
    model = slider_crank()
    res = solver.simulate(model, t_end=2.0, output_step=0.01, **REFERENCE)
    r = simulate_fmu(slider_crank_fmu, 2.0, 0.01)
    np.testing.assert_allclose(r["time"], res.t, atol=1e-12)
    names = outputs_of(slider_crank_fmu)
    assert len(names) == 3 * 3 + 4 * 6            # positions of 3 bodies, reactions of 4 joints
    err, where = worst_error(model, res, r, names)
    assert err < RTOL, where


def test_a_planar_model_exports_with_its_planar_forms(tmp_path):
    """settings.planar = "xy": the FMU holds the planar joint forms' kernels (and the bodies' plane
    constraints) and equals the solver's planar run as the 3-D one does (1.8e-8 measured)."""
    model = slider_crank()
    model.settings.set("planar", "xy")
    path = export_fmu(model, tmp_path / "planar.fmu", step=0.01)
    res = solver.simulate(model, t_end=1.0, output_step=0.01, **REFERENCE)
    assert res.nonunique_components == {}                   # the planar forms: no redundant rows
    err, where = worst_error(model, res, simulate_fmu(path, 1.0, 0.01), outputs_of(path))
    assert err < RTOL, where


def test_fmpy_validation_reports_no_problem(slider_crank_fmu):
    assert validate_fmu(str(slider_crank_fmu)) == []
    md = fmpy.read_model_description(str(slider_crank_fmu))
    units = {v.name: v.unit for v in md.modelVariables}
    assert units["bodies.piston.position.x"] == "m" and units["joints.crank_pin.reaction_torque.z"] == "N·m"
    assert units["bodies.crank.mass"] == "kg"
    assert md.coSimulation.canInterpolateInputs and md.defaultExperiment.stepSize == "0.01"


def test_a_parameter_set_through_fmi_acts_as_the_project_edit(slider_crank_fmu):
    model = slider_crank()
    model.set_field("piston", "mass", 3.5)
    res = solver.simulate(model, t_end=1.0, output_step=0.01, **REFERENCE)
    r = simulate_fmu(slider_crank_fmu, 1.0, 0.01, start_values={"bodies.piston.mass": 3.5})
    err, where = worst_error(model, res, r, outputs_of(slider_crank_fmu))
    assert err < RTOL, where
    base = simulate_fmu(slider_crank_fmu, 1.0, 0.01)
    assert np.max(np.abs(base["bodies.piston.position.x"] - r["bodies.piston.position.x"])) > 1e-3


# ---- an input-driven run ----------------------------------------------------------------------------
TORQUE = {"t": [0.0, 0.4, 1.0], "values": [0.0, 3.0, -2.0]}     # piecewise linear (N·m)


def run_slave(path, t_end, step, input_name, signal):
    """The FMU stepped through FMPy's FMI 2.0 wrapper (FMU2Slave), the input set at each
    communication point t (and in initialization mode) to ``signal(t)`` = (value, first derivative,
    second derivative), the derivatives through fmi2SetRealInputDerivatives (orders 1 and 2).  → {output name: array}.
    (``fmpy.simulate_fmu(set_input_derivatives=True)`` cannot be used: FMPy 0.3.32 sizes its
    derivative buffer wrongly and takes left-hand slopes at the signal's points.)"""
    md = fmpy.read_model_description(str(path))
    vr = {v.name: v.valueReference for v in md.modelVariables}
    names = outputs_of(path)
    slave = FMU2Slave(guid=md.guid, unzipDirectory=extract(str(path)),
                      modelIdentifier=md.coSimulation.modelIdentifier, instanceName="driven")
    slave.instantiate()
    slave.setupExperiment(tolerance=FMU_TOL, startTime=0.0)

    def apply(t):
        value, d1, d2 = signal(t)
        slave.setReal([vr[input_name]], [value])
        slave.setRealInputDerivatives([vr[input_name]] * 2, [1, 2], [d1, d2])
    slave.enterInitializationMode()
    apply(0.0)
    slave.exitInitializationMode()
    rows = []
    times = np.round(np.arange(0.0, t_end + step / 2, step), 12)
    for k, t in enumerate(times):
        rows.append(slave.getReal([vr[n] for n in names]))
        if k == len(times) - 1:
            break
        apply(t)
        slave.doStep(currentCommunicationPoint=t, communicationStepSize=times[k + 1] - t)
    slave.terminate()
    slave.freeInstance()
    values = np.array(rows)
    return {n: values[:, k] for k, n in enumerate(names)}


def table_signal(table):
    """Value and right-hand slope of a piecewise-linear table (exact for first-order interpolation)."""
    t_table, v_table = np.asarray(table["t"]), np.asarray(table["values"])

    def signal(t):
        piece = min(np.searchsorted(t_table, t, side="right") - 1, len(t_table) - 2)
        slope = (v_table[piece + 1] - v_table[piece]) / (t_table[piece + 1] - t_table[piece])
        return float(np.interp(t, t_table, v_table)), float(slope), 0.0
    return signal


@pytest.mark.slow
def test_torque_input_equals_the_solver_run_with_the_torque_table(tmp_path):
    """The crank torque as an FMI input equals the solver run with the same (piecewise-linear)
    torque table: values and slopes at the communication points make the FMU's first-order input
    interpolation exact.  The input is the model's declared one (``model.add_input``), which
    export_fmu takes when it is given no ``inputs`` (an explicit ``inputs``:
    test_driver_motion_input_equals_the_solver_run)."""
    model = slider_crank()
    model.add_torque("T1", "crank", torque=(0.0, 0.0, 0.0))
    model.add_input("crank_torque", "forces.T1.torque.z")
    path = export_fmu(model, tmp_path / "driven.fmu", step=0.01)
    assert validate_fmu(str(path)) == []
    causality = {v.name: v.causality for v in fmpy.read_model_description(str(path)).modelVariables}
    assert causality["crank_torque"] == "input"
    r = run_slave(path, 1.0, 0.01, "crank_torque", table_signal(TORQUE))
    model.remove("crank_torque")                  # (else the reference run would apply its default)
    model.set_field("T1", "torque", (0.0, 0.0, TORQUE))
    res = solver.simulate(model, t_end=1.0, output_step=0.01, **REFERENCE)
    err, where = worst_error(model, res, r, outputs_of(path))
    assert err < RTOL, where
    free = solver.simulate(slider_crank(), t_end=1.0, output_step=0.01, **REFERENCE)
    assert np.max(np.abs(np.asarray(free.body_position("piston"))[:, 0] - r["bodies.piston.position.x"])) > 1e-3


@pytest.mark.slow
def test_driver_motion_input_equals_the_solver_run(tmp_path):
    """A driver's motion as an FMI input (value, rate and acceleration at the communication points):
    the four-bar's crank (no degrees of freedom) driven by a quadratic motion, exact within each
    step, equals the solver run with that motion."""
    model = solver.load_model(SAMPLES / "fourbar.mbs.json")
    path = export_fmu(model, tmp_path / "crank.fmu", step=0.01, inputs={"crank_angle": "drivers.crank_drive.motion"})
    assert validate_fmu(str(path)) == []
    units = {v.name: v.unit for v in fmpy.read_model_description(str(path)).modelVariables}
    assert units["crank_angle"] == "rad"
    r = run_slave(path, 1.0, 0.01, "crank_angle", lambda t: (1.5 * t + 2.0 * t * t, 1.5 + 4.0 * t, 4.0))
    model.set_field("crank_drive", "expression", "1.5*t + 2*t^2")
    res = solver.simulate(model, t_end=1.0, output_step=0.01, **REFERENCE)
    err, where = worst_error(model, res, r, outputs_of(path))
    assert err < RTOL, where


# ---- what cannot be exported ------------------------------------------------------------------------
def test_bad_inputs_and_interpreted_forces_are_model_errors(tmp_path):
    model = slider_crank()
    with pytest.raises(solver.ModelError, match=r"export_fmu: step must be a finite number > 0, got 0"):
        export_fmu(model, tmp_path / "a.fmu", step=0)
    with pytest.raises(solver.ModelError, match=r"inputs\.u: 'forces\.T9\.torque\.z' is not an input"):
        export_fmu(model, tmp_path / "a.fmu", inputs={"u": "forces.T9.torque.z"})
    model.add_rotational_spring_damper("R1", "crank_pin", stiffness=1.0)
    with pytest.raises(solver.ModelError, match=r"forces\.R1: .* cannot be in an FMU"):
        export_fmu(model, tmp_path / "b.fmu")
    assert not (tmp_path / "a.fmu").exists() and not (tmp_path / "b.fmu").exists()


@pytest.mark.slow
def test_cli_export_fmu(tmp_path, capsys):
    out = tmp_path / "cli.fmu"
    assert main(["export-fmu", str(SAMPLES / "slider_crank.mbs.json"), "-o", str(out), "--step", "0.005"]) == 0
    assert f"FMU written to {out}" in capsys.readouterr().out
    assert fmpy.read_model_description(str(out)).defaultExperiment.stepSize == "0.005"
    assert main(["export-fmu", str(SAMPLES / "slider_crank.mbs.json"), "-o", str(tmp_path / "b.fmu"),
                 "--input", "u=forces.T9.torque.z"]) == 2
    assert main(["export-fmu", str(SAMPLES / "slider_crank.mbs.json"), "-o", str(tmp_path / "c.fmu"),
                 "--input", "u"]) == 2
    assert main(["export-fmu", str(SAMPLES / "slider_crank.mbs.json"), "-o", str(tmp_path / "d.fmu"),
                 "--rtol", "-1"]) == 2
    err = capsys.readouterr().err
    assert "mbs: error: --rtol: must be > 0, got -1" in err
    assert "mbs: error: inputs.u: 'forces.T9.torque.z' is not an input" in err and "must be NAME=PATH" in err
    assert not (tmp_path / "b.fmu").exists() and not (tmp_path / "c.fmu").exists()


# ---- RRC arm and the car ------------------------------------------------------------------------------
@pytest.mark.slow
def test_rrc_arm_fmu_equals_the_solver(tmp_path):
    """RRC arm case 1 (driven shoulder, locked joints), exported in Cartesian form."""
    model = solver.load_model(SAMPLES / "rrc_arm_case1.mbs.json")
    path = export_fmu(model, tmp_path / "arm.fmu", step=0.01)
    assert validate_fmu(str(path)) == []
    res = solver.simulate(model, t_end=1.0, output_step=0.01, **REFERENCE)
    r = simulate_fmu(path, 1.0, 0.01)
    err, where = worst_error(model, res, r, outputs_of(path))
    assert err < RTOL, where


@pytest.mark.slow
@pytest.mark.sweep        # 8–25 s of CPU: out of make test's 6 minutes (the sweep tier runs it)
def test_car_over_the_bump_fmu_equals_the_solver(tmp_path):
    """The 14-body car (tires, bushing, speed controller) with the half-sine bump moved under its
    front wheels so that 0.7 s covers the front axle's passage (0.1–0.55 s): positions and reactions."""
    model = solver.load_model(SAMPLES / "vehicle_cae_tc_bump.mbs.json")
    model.set_field("road", "start", model.bodies["wheel_fl"].position[0] + 0.5)
    path = export_fmu(model, tmp_path / "car.fmu", step=0.01)
    assert validate_fmu(str(path)) == []
    res = solver.simulate(model, t_end=0.7, output_step=0.01, **dict(REFERENCE, integrator="bdf"))
    r = fmpy.simulate_fmu(str(path), stop_time=0.7, output_interval=0.01, relative_tolerance=1e-9,
                          output=outputs_of(path, prefix=("bodies", "joints")))
    z = np.asarray(res.body_position("chassis"))[:, 2]
    assert np.ptp(z) > 0.05                                  # the bump lifts the car
    err, where = worst_error(model, res, r, outputs_of(path, prefix=("bodies", "joints")))
    assert err < RTOL, where


@pytest.mark.slow
def test_spring_stiffness_through_fmi_acts_as_the_project_edit(tmp_path):
    model = solver.load_model(SAMPLES / "fourbar_spring.mbs.json")
    path = export_fmu(model, tmp_path / "fourbar_spring.fmu", step=0.01)
    r = simulate_fmu(path, 1.0, 0.01, start_values={"forces.spring.stiffness": 2.0e4})
    model.set_field("spring", "stiffness", 2.0e4)
    res = solver.simulate(model, t_end=1.0, output_step=0.01, **REFERENCE)
    err, where = worst_error(model, res, r, outputs_of(path))
    assert err < RTOL, where


@pytest.mark.slow
def test_kinematic_model_follows_its_driver(tmp_path):
    """The four-bar driven at its crank (no degrees of freedom): positions, reactions, driver torque."""
    model = solver.load_model(SAMPLES / "fourbar.mbs.json")
    path = export_fmu(model, tmp_path / "fourbar.fmu", step=0.01)
    r = simulate_fmu(path, 1.0, 0.01)
    res = solver.simulate(model, t_end=1.0, output_step=0.01, **REFERENCE)
    err, where = worst_error(model, res, r, outputs_of(path))
    assert err < RTOL, where


def test_instances_are_independent_and_reset_restarts(slider_crank_fmu):
    """Two instances stepped alternately (one with another piston mass) equal their own runs, and
    fmi2Reset starts an instance again from the start state."""
    md = fmpy.read_model_description(str(slider_crank_fmu))
    vr = {v.name: v.valueReference for v in md.modelVariables}
    folder = extract(str(slider_crank_fmu))
    slaves = [FMU2Slave(guid=md.guid, unzipDirectory=folder, modelIdentifier=md.coSimulation.modelIdentifier,
                        instanceName=name) for name in ("a", "b")]

    def start(slave, mass=None):
        slave.setupExperiment(tolerance=FMU_TOL, startTime=0.0)
        slave.enterInitializationMode()
        if mass is not None:
            slave.setReal([vr["bodies.piston.mass"]], [mass])
        slave.exitInitializationMode()

    for slave, mass in zip(slaves, (None, 3.5)):
        slave.instantiate()
        start(slave, mass)
    x = {0: [], 1: []}
    for k in range(30):
        for n, slave in enumerate(slaves):
            slave.doStep(currentCommunicationPoint=0.01 * k, communicationStepSize=0.01)
            x[n].append(slave.getReal([vr["bodies.piston.position.x"]])[0])
    slaves[0].reset()
    start(slaves[0])
    again = []
    for k in range(30):
        slaves[0].doStep(currentCommunicationPoint=0.01 * k, communicationStepSize=0.01)
        again.append(slaves[0].getReal([vr["bodies.piston.position.x"]])[0])
    for slave in slaves:
        slave.terminate()
        slave.freeInstance()
    alone = simulate_fmu(slider_crank_fmu, 0.3, 0.01, start_values={"bodies.piston.mass": 3.5})
    np.testing.assert_array_equal(again, x[0])
    np.testing.assert_allclose(x[1], alone["bodies.piston.position.x"][1:], rtol=0, atol=1e-14)
    assert np.max(np.abs(np.subtract(x[0], x[1]))) > 1e-4


def test_the_result_does_not_depend_on_the_communication_step(slider_crank_fmu):
    """Internal steps end on the communication points: 0.1 s steps and 0.01 s steps agree at the
    common points to the integration tolerance."""
    fine = simulate_fmu(slider_crank_fmu, 1.0, 0.01)
    coarse = simulate_fmu(slider_crank_fmu, 1.0, 0.1)
    np.testing.assert_allclose(coarse["time"], fine["time"][::10], atol=1e-12)
    for name in ("bodies.piston.position.x", "joints.crank_pin.reaction_force.x"):
        scale = np.max(np.abs(fine[name]))
        assert np.max(np.abs(coarse[name] - fine[name][::10])) < 1e-7 * scale, name


def test_the_fmu_renews_its_partition_by_the_step_loops_rule(slider_crank_fmu):
    """fmu.c keeps a partition while step_rules' renewal rule holds (REPARTITION_RATIO of σ_min(Φ_q U)
    and AMPLIFICATION_GROWTH of ‖∂q/∂z‖, emitted into its source as simulate's loops read them): the
    slider–crank's second makes far fewer partitions than internal steps (it made one per step)
    and still equals the solver (test_slider_crank_fmu_equals_the_solver)."""
    import re
    messages = []
    simulate_fmu(slider_crank_fmu, 1.0, 0.01, debug_logging=True,
                 logger=lambda component, name, status, category, message: messages.append(message.decode()))
    stats = next(m for m in messages if "partitions" in m)
    steps, partitions = int(re.search(r"(\d+) steps", stats)[1]), int(re.search(r"(\d+) partitions", stats)[1])
    assert 1 <= partitions < steps / 3, stats


# The cars in the sweep tier only, which keeps make test within its time budget: the 14-body car's four
# road variants share one model, which test_car_over_the_bump_fmu_equals_the_solver compares in full,
# and the 23-body car has the same element kinds (tires, bushings, speed control).
SAME_CAR = ("vehicle_cae_tc.mbs.json", "vehicle_cae_tc_bump.mbs.json", "vehicle_cae_tc_j_turn.mbs.json",
            "vehicle_cae_tc_lane_change.mbs.json", "vehicle_23body.mbs.json")


@pytest.mark.slow
@pytest.mark.parametrize("sample", [pytest.param(name, marks=pytest.mark.sweep) if name in SAME_CAR else name
                                    for name in sorted(p.name for p in SAMPLES.glob("*.mbs.json"))])
def test_every_sample_exports_and_runs_or_is_refused_by_name(sample, tmp_path):
    """Every sample (the flexible four-bar too: test_fmu_flexible.py) becomes a valid FMU that runs
    0.2 s in FMPy."""
    model = solver.load_model(SAMPLES / sample)
    python = [name for name, f in model.forces.items() if f.KIND in ("contact", "rotational_spring_damper")]
    stops = [name for name, j in model.joints.items() if j.stop_coordinate() is not None]
    if python or stops:                            # not generated as C: refused, each named (the first 3 shown)
        with pytest.raises(solver.ModelError, match=".*".join(f"forces.{n}: " for n in (python + stops)[:3])):
            export_fmu(model, tmp_path / "x.fmu")
        return
    path = export_fmu(model, tmp_path / "x.fmu")
    assert validate_fmu(str(path)) == []
    r = fmpy.simulate_fmu(str(path), stop_time=0.2, output_interval=0.01, output=outputs_of(path)[:3])
    assert len(r) == 21 and all(np.all(np.isfinite(r[n])) for n in r.dtype.names)
