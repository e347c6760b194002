"""Joint stops (lower_limit / upper_limit enforced by the Adams IMPACT law, solver.math.impact).

Checked against what does not use the multibody machinery:
- a free rotor (no gravity) thrown onto a linear stop (e = 1) rebounds with the restitution of a
  Kelvin–Voigt contact, e_r = exp(−ζπ/√(1 − ζ²)), ζ = c/(2√(k I)) (contact ends where δ returns to 0;
  the IMPACT force is not clipped, so the linear oscillator's half period is exact); the STEP ramp
  of the damping over d removes a fraction of order d/δ_max of the damping work;
- an undamped Hertz-type stop (e = 1.5) returns all the energy and reaches the penetration of
  ½ I ω₀² = k δ^(e+1)/(e+1);
- a prismatic slider hitting its end stop, the same restitution with m for I;
- a pendulum under gravity falling onto its stop against the 1-DOF equation J θ̈ = −m g l cos θ + F(θ, θ̇)
  integrated by scipy with the dissipated work ∫P dt as a second state: the angle history, the
  energy the run loses (its energy account, the stop potential in "spring") and the stop_power
  output all agree; the generated kernels (codegen "on": the stop is evaluated in Python and added
  to Q) give the same motion.
"""
import numpy as np
import pytest
from scipy.integrate import solve_ivp

import solver
from solver import cli
from solver.math.impact import stop_load, step
from solver.model.model import model_from_dict


def restitution(k, c, inertia):
    zeta = c / (2.0 * np.sqrt(k * inertia))
    return np.exp(-zeta * np.pi / np.sqrt(1.0 - zeta * zeta))


def rotor(k, e, c, d, omega=1.0, inertia=0.1):
    m = solver.Model(name="rotor", gravity=(0.0, 0.0, 0.0))
    m.add_body("rotor", mass=1.0, inertia=(inertia, inertia, inertia), angular_velocity=(0.0, 0.0, omega))
    m.add_joint("pivot", "revolute", "ground", "rotor", axis=(0.0, 0.0, 1.0), lower_limit=-0.5, upper_limit=0.05,
                stop_stiffness=k, stop_exponent=e, stop_damping=c, stop_depth=d)
    return m


def test_step_is_the_adams_cubic():
    x = np.linspace(-1.0, 3.0, 9)
    s = np.clip(x / 2.0, 0.0, 1.0)
    assert np.allclose(step(x, 0.0, 1.0, 2.0, 5.0), 1.0 + 4.0 * (3 * s ** 2 - 2 * s ** 3), rtol=0, atol=1e-15)
    F, P, V = stop_load(0.7, 0.2, None, 0.5, 100.0, 2.0, 10.0, 0.1)       # past the upper stop, full damping
    assert F == pytest.approx(-(100.0 * 0.2 ** 2 + 10.0 * 0.2)) and P == pytest.approx(10.0 * 0.04)
    assert V == pytest.approx(100.0 * 0.2 ** 3 / 3.0)
    assert stop_load(0.0, 5.0, -0.1, 0.1, 100.0, 2.0, 10.0, 0.1) == (0.0, 0.0, 0.0)


def test_a_push_only_stop_never_pulls_and_dissipates_what_it_releases():
    """Leaving the upper stop fast (q̇ = −1 at δ = 0.2: IMPACT 100·0.04 − 10·1 = −6 pulls): the
    push-only stop gives 0 and dissipates −k δ^e δ̇ = 4 (its potential released, no work done);
    slowly (q̇ = −0.1: 4 − 1 = 3 pushes) it is IMPACT."""
    F, P, V = stop_load(0.7, -1.0, None, 0.5, 100.0, 2.0, 10.0, 0.1, push_only=True)
    assert F == 0.0 and P == pytest.approx(100.0 * 0.2 ** 2 * 1.0) and V == pytest.approx(100.0 * 0.2 ** 3 / 3.0)
    assert stop_load(0.7, -1.0, None, 0.5, 100.0, 2.0, 10.0, 0.1)[0] == pytest.approx(6.0)
    F, P, _ = stop_load(0.7, -0.1, None, 0.5, 100.0, 2.0, 10.0, 0.1, push_only=True)
    assert F == pytest.approx(-3.0) and P == pytest.approx(10.0 * 0.01)
    F, P, _ = stop_load(-0.3, 1.0, -0.1, None, 100.0, 2.0, 10.0, 0.1, push_only=True)    # the lower side
    assert F == 0.0 and P == pytest.approx(4.0)


@pytest.mark.parametrize("formulation", ["relative", "cartesian"])
def test_rotor_rebounds_with_the_kelvin_voigt_restitution(formulation):
    k, c, d, inertia = 1.0e3, 2.0, 1.0e-6, 0.1
    res = solver.simulate(rotor(k, 1.0, c, d, inertia=inertia), t_end=0.25, output_step=5e-3, formulation=formulation)
    w = res.body_angular_velocity("rotor")[:, 2]
    expected = restitution(k, c, inertia)          # 0.72925 (ζ = 0.1)
    # ramp: the damping work lost over δ < d is of order d/δ_max = 1e-6/0.01 of the whole
    assert -w[-1] / w[0] == pytest.approx(expected, rel=5e-4)


def test_undamped_hertz_stop_returns_the_energy_at_the_closed_form_penetration():
    k, e, inertia, omega = 1.0e3, 1.5, 0.1, 1.0
    # the compiled loop's DOP853 steps across the stop's onset (δ^1.5: no event location), where its
    # error estimate is blind to the kink: the energy it loses there scales with rtol (1.3e-6 of it at
    # the default 1e-8, 3e-8 at 1e-10); the law itself conserves it
    res = solver.simulate(rotor(k, e, 0.0, 1e-3, omega, inertia), t_end=0.15, output_step=5e-4, rtol=1e-10,
                          atol=1e-12)
    theta = solver.output(rotor(k, e, 0.0, 1e-3), "joints.pivot.rotation").evaluate(res, rotor(k, e, 0.0, 1e-3))
    w = res.body_angular_velocity("rotor")[:, 2]
    delta_max = ((e + 1.0) * inertia * omega ** 2 / (2.0 * k)) ** (1.0 / (e + 1.0))
    # the parabola through the samples at the deepest point: off by ≈ δ (ωh)³/12 ≈ 3e-7 rad
    # (ω ≈ √(k e δ^(e−1)/I) ≈ 50 rad/s in contact)
    assert extremes(theta)[0][0] - 0.05 == pytest.approx(delta_max, abs=1e-6)
    assert -w[-1] / w[0] == pytest.approx(1.0, abs=1e-6)
    energy = res.energy
    assert np.ptp(energy["total"]) <= 1e-6 * energy["total"][0]        # the stop's potential is in "spring"
    assert energy["spring"].max() == pytest.approx(energy["total"][0], rel=1e-4)


def extremes(x):
    """(maxima, minima) of a sampled curve: the vertex of the parabola through each extreme sample
    and its neighbours."""
    a, b, c = x[:-2], x[1:-1], x[2:]
    return tuple(b[k] + (c[k] - a[k]) ** 2 / (8.0 * (2.0 * b[k] - a[k] - c[k]))
                 for k in ((b > a) & (b > c), (b < a) & (b < c)))


def test_prismatic_slider_rebounds_from_its_end_stop():
    k, c, mass, v0 = 1.0e4, 20.0, 2.0, 0.5
    m = solver.Model(name="slider", gravity=(0.0, 0.0, 0.0))
    m.add_body("slider", mass=mass, inertia=(0.01, 0.01, 0.01), position=(0.0, 0.0, 0.0), velocity=(v0, 0.0, 0.0))
    m.add_joint("rail", "prismatic", "ground", "slider", axis=(1.0, 0.0, 0.0), lower_limit=-0.2, upper_limit=0.01,
                stop_stiffness=k, stop_damping=c, stop_depth=1e-7)
    res = solver.simulate(m, t_end=0.1, output_step=1e-3)
    v = res.body_velocity("slider")[:, 0]
    assert -v[-1] / v0 == pytest.approx(restitution(k, c, mass), rel=5e-4)      # 0.8004 (ζ = 0.0707)
    force = solver.output(m, "joints.rail.stop_force").evaluate(res, m)
    assert solver.output(m, "joints.rail.stop_force").unit == "N"
    assert force.min() < -0.5 * v0 * np.sqrt(k * mass) and force[0] == 0.0      # pushes back, zero before contact


def pendulum():
    m = solver.Model(name="stopped_pendulum", gravity=(0.0, -9.81, 0.0))
    m.add_body("arm", mass=2.0, inertia=(0.01, 0.01, 0.01), position=(0.5, 0.0, 0.0))
    m.add_joint("pivot", "revolute", "ground", "arm", axis=(0.0, 0.0, 1.0), lower_limit=-0.6, upper_limit=0.5,
                stop_stiffness=2.0e3, stop_exponent=1.5, stop_damping=5.0, stop_depth=1e-3)
    return m


def reference(t):
    """The 1-DOF pendulum with the same stop law, and the work its damping dissipated."""
    mass, arm, J = 2.0, 0.5, 0.01 + 2.0 * 0.25

    def rhs(_, y):
        F, P, _ = stop_load(y[0], y[1], -0.6, 0.5, 2.0e3, 1.5, 5.0, 1e-3)
        return [y[1], (-mass * 9.81 * arm * np.cos(y[0]) + F) / J, P]
    return solve_ivp(rhs, (0.0, t[-1]), [0.0, 0.0, 0.0], method="LSODA", rtol=1e-10, atol=1e-12, t_eval=t,
                     max_step=1e-3).y


def simulate_with(model, codegen, **options):
    """simulate(model, codegen=codegen, **options); with "on", the run used compiled kernels."""
    res = solver.simulate(model, codegen=codegen, **options)
    if codegen == "on":
        assert [e for e in res.events if e["kind"] == "codegen"][0]["message"].startswith("codegen: compiled")
    return res


@pytest.mark.parametrize("codegen", ["off", "on"])
def test_pendulum_on_its_stop_loses_the_dissipated_work(codegen):
    m = pendulum()
    res = simulate_with(m, codegen, t_end=0.6, output_step=1e-3)
    theta = solver.output(m, "joints.pivot.rotation").evaluate(res, m)
    ref_theta, ref_rate, ref_work = reference(res.t)
    assert ref_theta.min() < -0.6 - 0.01 and ref_work[-1] > 1.0            # it hit the stop hard
    assert np.max(np.abs(theta - ref_theta)) < 1e-6                        # rtol 1e-8 runs: ≈ 1e-8 rad
    total = res.energy["total"]
    assert total[0] - total[-1] == pytest.approx(ref_work[-1], rel=1e-5)
    force, power = (solver.output(m, f"joints.pivot.{q}").evaluate(res, m) for q in ("stop_force", "stop_power"))
    ref_force, ref_power, _ = stop_load(ref_theta, ref_rate, -0.6, 0.5, 2.0e3, 1.5, 5.0, 1e-3)
    assert np.max(np.abs(force - ref_force)) < 1e-4 * np.max(np.abs(ref_force))
    assert np.max(np.abs(power - ref_power)) < 1e-4 * np.max(ref_power)


def test_stops_in_the_file_and_bad_fields():
    m = pendulum()
    data = m.to_dict()["joints"][0]
    assert data["stop_stiffness"] == 2.0e3 and "limit_coordinate" not in data        # defaults are not written
    assert model_from_dict(m.to_dict()).joints["pivot"] == m.joints["pivot"]
    with pytest.raises(solver.ModelError, match="limit_coordinate"):
        m.add_joint("bad", "revolute", "ground", "arm", limit_coordinate="translation", lower_limit=0.0)
    with pytest.raises(solver.ModelError, match="stop_exponent"):
        m.add_joint("bad", "revolute", "ground", "arm", stop_exponent=0.5)
    m.add_joint("cyl", "cylindrical", "ground", "arm", limit_coordinate="translation", upper_limit=0.1)
    assert m.joints["cyl"].stop_coordinate() == "translation"
    assert m.joints["pivot"].stop_coordinate() == "rotation"


URDF = """<robot name="r"><link name="base"/>
  <link name="arm"><inertial><origin xyz="0.5 0 0"/><mass value="2"/>
    <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" iyz="0" ixz="0"/></inertial></link>
  <joint name="hinge" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 1 0"/>
    <limit lower="-0.3" upper="0.3" effort="5" velocity="2"/></joint>
</robot>"""


def test_urdf_limits_are_stops_unless_asked_not_to(tmp_path):
    path = tmp_path / "r.urdf"
    path.write_text(URDF)
    enforced, data_only = solver.read_urdf(path).model, solver.read_urdf(path, enforce_limits=False).model
    assert enforced.joints["hinge"].stop_coordinate() == "rotation"
    assert data_only.joints["hinge"].stop_coordinate() is None and data_only.joints["hinge"].upper_limit == 0.3
    # the arm falls (gravity −z, arm along x, turning about +y): held at the upper stop, or it swings down
    fell = [solver.output(m, "joints.hinge.rotation").evaluate(solver.simulate(m, t_end=0.35, output_step=0.01), m)
            for m in (enforced, data_only)]
    assert fell[0].max() < 0.3 + 0.02 < 0.5 < fell[1].max()              # free: ≈ ½ (m g l/J) t² = 0.59
    assert cli.main(["import", str(path), "-o", str(tmp_path / "a.mbs.json")]) == 0
    assert cli.main(["import", str(path), "-o", str(tmp_path / "b.mbs.json"), "--no-limits"]) == 0
    assert solver.load_model(tmp_path / "a.mbs.json").joints["hinge"].stops
    assert not solver.load_model(tmp_path / "b.mbs.json").joints["hinge"].stops
