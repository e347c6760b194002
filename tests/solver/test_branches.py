"""Joint-angle branches (solver/formulations/branches.py): a screw closing a loop over several turns
matches its closed form on every path — both formulations, generated kernels and the generic path,
the compiled step loop and every scipy integrator, the kinematic path with long output steps, the
FMU — where the nut used to end one thread lead off with status "ok" (relative formulation,
generated kernels, DOP853's long steps: the unwrapping reference followed trial stages).

Closed form (no gravity): shaft on a revolute to ground (I about the axis), nut on a prismatic to
ground (mass m), screw between them with lead p_2π = 2π·0.1 m, i.e. z = −p θ, p = 0.1 m/rad;
torque τ on the shaft: θ̈ = τ / (I + m p²), θ = ½ θ̈ t², the nut at z = −p θ.
"""
import math

import numpy as np
import pytest

import solver
from solver.formulations.branches import BRANCH_GUARD, Branches, BranchRefused, step_cap


P = 0.1                  # m/rad
I_AXIS, MASS, TORQUE = 0.01, 1.0, 0.2
ALPHA = TORQUE / (I_AXIS + MASS * P * P)          # 10 rad/s²: θ(1 s) = 5 rad, θ(2 s) = 20 rad (3.2 turns)


def screw_loop(torque=TORQUE, speed=None):
    m = solver.Model(name="screw loop", gravity=(0.0, 0.0, 0.0))
    m.add_body("shaft", mass=1.0, inertia=(0.02, 0.02, I_AXIS), position=(0.0, 0.0, 0.0))
    m.add_body("nut", mass=MASS, inertia=(0.01, 0.01, 0.01), position=(0.0, 0.0, 0.0))
    m.add_joint("bearing", "revolute", "ground", "shaft", origin=(0, 0, 0), axis=(0, 0, 1))
    m.add_joint("guide", "prismatic", "ground", "nut", origin=(0, 0, 0), axis=(0, 0, 1))
    m.add_joint("thread", "screw", "shaft", "nut", origin=(0, 0, 0), axis=(0, 0, 1), pitch=2 * math.pi * P)
    if speed is not None:
        m.add_driver("motor", joint="bearing", expression=f"{speed}*t")
    elif torque:
        m.add_torque("drive", "shaft", torque=(0.0, 0.0, torque))
    return m


def nut_error(res):
    """max over the output points of |z_nut − (−p θ(t))| (m)."""
    theta = 0.5 * ALPHA * res.t ** 2
    return float(np.max(np.abs(res.body_position("nut")[:, 2] + P * theta)))


PATHS = [(f, cg, i) for f in ("relative", "cartesian") for cg in ("on", "off")
         for i in ("auto", "rk45", "adams", "bdf", "dop853")]


@pytest.mark.parametrize("formulation,codegen,integrator", PATHS)
def test_a_screw_loop_follows_its_closed_form_on_every_path(formulation, codegen, integrator):
    """2 s, 3.2 turns, default tolerances, no max_step: error bound 1e-5 m (a thread lead is 0.63 m;
    the integrators' local error at rtol 1e-8 over θ ≤ 20 rad gives ≲ 1e-6 m)."""
    res = solver.simulate(screw_loop(), t_end=2.0, output_step=0.05, formulation=formulation, codegen=codegen,
                          integrator=integrator)
    assert res.status == "ok"
    assert nut_error(res) < 1e-5


def test_the_default_path_takes_long_steps_and_stays_on_the_branch():
    """The default run (generated kernels, compiled DOP853) over 3 s (45 rad, 7 turns) with a single
    output point at the end: the steps are long (θ̈ constant: DOP853 integrates it exactly and its
    step grows until the branch rule caps it)."""
    res = solver.simulate(screw_loop(), t_end=3.0, output_step=3.0)
    assert res.status == "ok"
    assert nut_error(res) < 1e-5
    assert res.body_position("nut")[-1, 2] == pytest.approx(-P * 0.5 * ALPHA * 9.0, abs=1e-5)


@pytest.mark.parametrize("codegen", ["on", "off"])
def test_a_driven_screw_with_long_output_steps_follows_the_driver(codegen):
    """Kinematic (0 DOF): the shaft driven at 12 rad/s, output every 0.4 s (4.8 rad, more than π,
    between evaluations): z = −p·12 t at every output point, to the Newton tolerance."""
    res = solver.simulate(screw_loop(speed=12.0), t_end=2.0, output_step=0.4, codegen=codegen)
    assert res.status == "ok"
    assert np.max(np.abs(res.body_position("nut")[:, 2] + P * 12.0 * res.t)) < 1e-9


def rack_and_pinion(speed=None):
    """The same loop closed by a coupler instead of a screw: the pinion (radius P) on the bearing, the
    rack on a prismatic along x, x = P θ (solver.model.elements.Coupler).  Same θ̈ = τ / (I + m P²)."""
    m = solver.Model(name="rack and pinion", gravity=(0.0, 0.0, 0.0))
    m.add_body("pinion", mass=1.0, inertia=(0.02, 0.02, I_AXIS), position=(0.0, 0.0, 0.0))
    m.add_body("rack", mass=MASS, inertia=(0.01, 0.01, 0.01), position=(0.0, -P, 0.0))
    m.add_joint("bearing", "revolute", "ground", "pinion", origin=(0, 0, 0), axis=(0, 0, 1))
    m.add_joint("guide", "prismatic", "ground", "rack", origin=(0, -P, 0), axis=(1, 0, 0))
    m.add_coupler("mesh", "bearing", "guide", ratio=P)
    if speed is not None:
        m.add_driver("motor", joint="bearing", expression=f"{speed}*t")
    else:
        m.add_torque("drive", "pinion", torque=(0.0, 0.0, TORQUE))
    return m


@pytest.mark.parametrize("formulation,codegen,integrator", [
    *((f, cg, "auto") for f in ("relative", "cartesian") for cg in ("on", "off")), ("relative", "off", "bdf"),
    pytest.param("cartesian", "off", "bdf", marks=pytest.mark.sweep)])     # 4.5 s: the Python loop's short steps
def test_a_rack_and_pinion_loop_follows_its_closed_form_over_turns(formulation, codegen, integrator):
    """2 s (20 rad, 3.2 turns), output every 0.5 s: the rack at x = P θ and the rack force m P θ̈ (the
    coupler force along the prismatic), errors as for the screw."""
    res = solver.simulate(rack_and_pinion(), t_end=2.0, output_step=0.5, formulation=formulation, codegen=codegen,
                          integrator=integrator)
    assert res.status == "ok"
    theta = 0.5 * ALPHA * res.t ** 2
    assert np.max(np.abs(res.body_position("rack")[:, 0] - P * theta)) < 1e-5
    assert np.allclose(res.coupler_force("mesh"), MASS * P * ALPHA, rtol=1e-7)


@pytest.mark.parametrize("formulation", ["relative", "cartesian"])
def test_a_driven_rack_with_long_output_steps_follows_the_driver(formulation):
    """Kinematic: the pinion driven at 12 rad/s, output every 0.4 s (4.8 rad between evaluations):
    x = P·12 t; at constant speed neither the motor nor the teeth carry a load."""
    res = solver.simulate(rack_and_pinion(speed=12.0), t_end=2.0, output_step=0.4, formulation=formulation)
    assert res.status == "ok"
    assert np.max(np.abs(res.body_position("rack")[:, 0] - P * 12.0 * res.t)) < 1e-9
    assert np.allclose(res.coupler_force("mesh"), 0.0, atol=1e-9)
    assert np.allclose(res.driver_force("motor"), 0.0, atol=1e-9)


@pytest.mark.parametrize("formulation", ["relative", "cartesian"])
def test_an_accelerated_rack_loads_the_motor_with_the_reflected_inertia(formulation):
    """The pinion driven at θ = ½ a t² (a = 3 rad/s²): motor torque (I + m P²) a, rack force m P a —
    the motor's force is its own multiplier only, not the teeth's load on the same coordinate."""
    m = rack_and_pinion(speed=0.0)
    m.set_field("motor", "expression", "1.5*t^2")
    res = solver.simulate(m, t_end=1.0, output_step=0.5, formulation=formulation)
    assert np.allclose(res.driver_force("motor"), (I_AXIS + MASS * P * P) * 3.0, rtol=1e-8)
    assert np.allclose(res.coupler_force("mesh"), MASS * P * 3.0, rtol=1e-8)


def test_an_fmu_of_the_screw_loop_follows_its_closed_form(tmp_path):
    fmpy = pytest.importorskip("fmpy")
    from solver.fmu import export_fmu
    path = export_fmu(screw_loop(), tmp_path / "screw.fmu", step=0.1)
    out = fmpy.simulate_fmu(str(path), stop_time=2.0, output_interval=0.1, relative_tolerance=1e-9,
                            output=["bodies.nut.position.z"])
    expected = -P * 0.5 * ALPHA * out["time"] ** 2
    assert np.max(np.abs(out["bodies.nut.position.z"] - expected)) < 1e-5


def test_an_fmu_of_the_rack_and_pinion_follows_its_closed_form(tmp_path):
    """The coupler row in the FMU's generated kernels, its leading angle unwrapped by fmu.c's branch rule."""
    fmpy = pytest.importorskip("fmpy")
    from solver.fmu import export_fmu
    path = export_fmu(rack_and_pinion(), tmp_path / "rack.fmu", step=0.1)
    out = fmpy.simulate_fmu(str(path), stop_time=2.0, output_interval=0.1, relative_tolerance=1e-9,
                            output=["bodies.rack.position.x", "couplers.mesh.force"])
    assert np.max(np.abs(out["bodies.rack.position.x"] - P * 0.5 * ALPHA * out["time"] ** 2)) < 1e-5
    assert np.allclose(out["couplers.mesh.force"], MASS * P * ALPHA, rtol=1e-6)


# ---- the rule itself --------------------------------------------------------------------------------
class _Holder:
    def __init__(self):
        self.angle = 0.0


class _System:
    """A stand-in with one angle holder: its 'evaluation' unwraps atan2 of the rotation θ(q) = q[0]."""

    def __init__(self):
        self.holder = _Holder()
        self.force_elements = []

    def run_state(self):
        return [self.holder]

    def coordinate_angles(self):
        return frozenset()

    def constraints(self, q, t):
        raw = math.atan2(math.sin(q[0]), math.cos(q[0]))
        self.holder.angle = raw + 2 * math.pi * round((self.holder.angle - raw) / (2 * math.pi))


def test_the_prediction_takes_the_branch_a_trial_stage_would_lose():
    """From θ = 3 rad at 10 rad/s (the start's central difference gives the rate), an evaluation
    0.05 s later at θ = 3.5 rad (raw −2.78) is unwrapped to 3.5, not −2.78; one at θ = 6.5 rad
    (departure 3 rad from the prediction 3.5) is refused."""
    system = _System()
    b = Branches(system)
    b.start(system, 0.0, np.array([3.0]), np.array([10.0]))
    assert b.rate[0] == pytest.approx(10.0, rel=1e-6)
    b.predict(0.05)
    system.constraints(np.array([3.5]), 0.05)
    assert system.holder.angle == pytest.approx(3.5)
    b.check(0.05)
    b.predict(0.05)
    system.constraints(np.array([6.5]), 0.05)
    with pytest.raises(BranchRefused):
        b.check(0.05)


def test_the_secant_rate_and_the_step_cap():
    system = _System()
    b = Branches(system)
    b.start(system, 0.0, np.array([0.0]), np.array([0.0]))
    for t, theta in ((0.1, 0.5), (0.2, 1.2)):
        b.predict(t)
        system.constraints(np.array([theta]), t)
        departure = b.accept(t)
    assert b.rate[0] == pytest.approx(7.0)               # (1.2 − 0.5) / 0.1
    assert departure == pytest.approx(0.2)               # prediction 0.5 + 5·0.1 = 1.0
    assert step_cap(0.1, departure) == pytest.approx(0.1 * math.sqrt(BRANCH_GUARD / 0.4))
    assert step_cap(0.1, 0.0) == math.inf


def driven_planar_body():
    """Fuzz seed 1142 minimized: a 10 g body on a planar joint to ground (plane ⟂ y), its rotation
    driven by θ = A (1 − cos w t) − B sin w t, sliding freely in the plane at 10 mm/s, no gravity."""
    m = solver.Model(name="driven planar", gravity=(0.0, 0.0, 0.0))
    m.add_body("b", mass=0.01, inertia=(1.8e-8, 8.8e-9, 1.3e-8), position=(0.0035, 0.0013, 0.0),
               velocity=(0.01, 0.0, 0.0), angular_velocity=(0.0, -0.468 * 5.565, 0.0))
    m.add_joint("j", "planar", "ground", "b", origin=(0.0025, 0.0, 0.0), axis=(0.0, 1.0, 0.0))
    m.add_driver("d", "j", expression="0.516*(1-cos(5.565*t))-0.468*sin(5.565*t)", coordinate="rotation")
    return m


@pytest.mark.parametrize("formulation, integrator, python_loop", [
    ("cartesian", "adams", True), ("relative", "adams", True), ("cartesian", "auto", False),
    ("cartesian", "adams", False)])
def test_a_step_refused_inside_lsoda_is_retried_shorter(formulation, integrator, python_loop, monkeypatch):
    """LSODA ("adams") soon tries a 0.29 s step here (the free sliding is exactly linear) and the
    driven angle departs 0.8 rad from its prediction in it: BranchRefused.  LSODA reports neither
    the step it tried nor a trial time, so the retry took LSODA's own first step again, refused
    again 6e-5 s later, and after 25 re-partitions the Cartesian run stopped ("QR partitioning
    cannot get past this configuration").  The retry now starts at BRANCH_SHRINK × the refused
    evaluation's reach (BranchRefused.time).  Closed form: no in-plane force acts, so the centre of
    mass slides at its initial velocity (bound: 300 rtol × the 3 mm travel) and the driver's torque
    is I_yy θ̈ (bound: 1e3 rtol × the peak torque, as the random-mechanism sweep's).  ``python_loop``:
    "adams" as scipy's LSODA in the Python loop (Run.python_loop), else in C where it can (adams.c, whose
    refused steps segment.c retries shorter as DOP853's)."""
    from solver.analysis.dynamics import Run
    if python_loop:
        monkeypatch.setattr(Run, "python_loop", (integrator,))
    res = solver.simulate(driven_planar_body(), t_end=0.3, formulation=formulation, integrator=integrator)
    t = np.asarray(res.t)
    r0 = np.array([0.0035, 0.0013, 0.0])
    expected = r0 + np.outer(t, [0.01, 0.0, 0.0])
    assert np.max(np.abs(res.body_position("b") - expected)) < 300 * 1e-8 * 0.003
    w = 5.565
    torque = 8.8e-9 * (0.516 * w * w * np.cos(w * t) + 0.468 * w * w * np.sin(w * t))
    peak = np.max(np.abs(torque))
    assert np.max(np.abs(res.driver_force("d") - torque)) < 1e3 * 1e-8 * peak


@pytest.mark.parametrize("formulation", ["cartesian", "relative"])
def test_a_state_that_blew_up_unwraps_to_nan_not_an_exception(formulation):
    """Fuzz seed 1031 (bench/fuzz.py --bodies 3): LSODA evaluated a NaN state and the unwrap's
    round(NaN) raised ValueError out of simulate on three paths (a crash, not a SolverError).  The
    unwrap now gives NaN, as reduced.c's nearbyint: the constraints and forces at a NaN state are
    NaN, which the step loops refuse as not finite (PartitionError) and retry from the last state."""
    from solver.compile import compile_model
    from solver.constraints.forms import nearest_branch
    assert math.isnan(nearest_branch(math.nan, 0.0)) and math.isnan(nearest_branch(0.5, math.inf))
    assert nearest_branch(0.5, 4 * math.pi) == pytest.approx(0.5 + 4 * math.pi)
    m = solver.Model(name="nan state", gravity=(0.0, -9.81, 0.0))
    m.add_body("b", mass=1.0, inertia=(1.0, 1.0, 1.0), position=(1.0, 0.0, 0.0))
    m.add_body("c", mass=1.0, inertia=(1.0, 1.0, 1.0), position=(2.0, 0.0, 0.0))
    m.add_joint("j", "revolute", "ground", "b", axis=(0, 0, 1))
    m.add_joint("k", "planar", "b", "c", axis=(0, 0, 1))
    m.add_driver("d", "k", expression="0.1*t", coordinate="rotation")
    m.add_rotational_spring_damper("s", "j", stiffness=1.0)
    system = compile_model(m, codegen="off", formulation=formulation).system
    q, qd, _ = system.initial_state()
    q = np.full_like(q, np.nan)
    assert not np.all(np.isfinite(system.constraints(q, 0.0).phi))
    assert not np.all(np.isfinite(system.forces(q, qd, 0.0)))


def spring_on_a_screw_beside_a_loop():
    """Fuzz seed 2059 minimized (bench/fuzz.py --cases 1 --seed 2059, drivers, a spring-damper and a
    fourth body removed): two bodies on spherical joints to ground closed by a planar joint (a loop
    whose QR partition degrades and is renewed at t ≈ 0.19 s), a third on a screw off the first,
    turned by a rotational spring-damper's preload (1.5 rad by then), mm scale, no gravity."""
    m = solver.Model(name="seed 2059", gravity=(0.0, 0.0, 0.0))
    m.add_body("b0", mass=100.2, inertia=(3.13e-3, 3.46e-3, 7.34e-4), position=(0.00308, -0.01099, 0.00823),
               orientation=(0.86802601, 0.42414643, 0.21209331, -0.14712949))
    m.add_body("b1", mass=401.6, inertia=(5.08e-3, 6.32e-4, 4.80e-3), position=(-0.00380, -0.00358, 0.00751),
               orientation=(0.52993355, 0.0711631, 0.01248224, -0.84495588))
    m.add_body("b2", mass=175.2, inertia=(3.71e-3, 1.90e-3, 3.47e-3), position=(0.01163, -0.03324, -0.00050),
               orientation=(0.19905028, 0.37007939, -0.7557146, -0.50231035),
               velocity=(-0.00554, -0.00387, -0.00133), angular_velocity=(0.0, 0.0, -0.581))
    m.add_joint("j0", "spherical", "ground", "b0", origin=(-0.000565, -0.01237, 0.00146))
    m.add_joint("j1", "spherical", "ground", "b1", origin=(0.00659, -0.00383, 0.01072))
    m.add_joint("j2", "screw", "b2", "b0", origin=(0.004978, -0.023695, 0.008565), axis=(0, 0, 1), pitch=0.01438)
    m.add_joint("loop0", "planar", "b1", "b0", origin=(-0.00296, -0.01226, 0.00664),
                axis=(-0.73138680, -0.35234108, -0.58389135))
    m.add_rotational_spring_damper("spring", "j2", stiffness=2.82, damping=0.0917, free_angle=0.1177, preload=4.24)
    return m


def test_a_spring_on_a_tree_joint_is_not_a_branch_the_compiled_loop_leaves_behind():
    """Fuzz seed 2059: the default path (relative, generated kernels, DOP853 in C) stopped with
    BranchRefused ("a joint angle departed 1.53 rad from its prediction", 1.72 rad in the seed's
    model) at the partition renewal.  Not a refused step: the relative formulation's spring on a tree
    joint takes θ from its column of q (evaluated in C from it), yet it was held as an unwrapped angle
    whose accepted value the compiled loop never advances, so the renewal's check at the accepted state
    compared θ with its value at the start.  Such springs have no branch to choose and are no longer
    held (MechanicalSystem.coordinate_angles); the run now completes and follows the Cartesian path
    (its spring unwrapped in Python) within the sweep's position bound, 300 rtol × the 33 mm scale."""
    from solver.compile import compile_model
    from solver.formulations.branches import angle_holders
    m = spring_on_a_screw_beside_a_loop()
    assert "spring" not in [h.name for h in angle_holders(compile_model(m, formulation="relative", codegen="off").system)]
    assert "spring" in [h.name for h in angle_holders(compile_model(m, formulation="cartesian", codegen="off").system)]
    rel = solver.simulate(m, t_end=0.3, formulation="relative")
    assert rel.status == "ok"
    assert any("dependent block quality" in e["message"] for e in rel.events)    # the renewal was checked
    cart = solver.simulate(m, t_end=0.3, formulation="cartesian")
    for body in ("b0", "b1", "b2"):
        assert np.max(np.abs(rel.body_position(body) - cart.body_position(body))) < 300 * 1e-8 * 0.033
