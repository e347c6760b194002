"""Road, tire and speed-control force elements (Choi & Yoo (2000); solver/vehicle/)."""
import math

import numpy as np
import pytest

import solver
from solver.forces import BodyFrames, Wrenches, compile_forces, element_loads, element_potential
from solver.math.rotations import rotation_matrix
from solver.vehicle import RoadSurface, TireForce, TireParameters, combined_slip_forces

G = 9.81


def wheel_model(**tire):
    m = solver.Model("wheel", gravity=(0, 0, -G))
    m.add_body("w", mass=20.0, inertia=(0.6, 1.0, 0.6), position=(0, 0, 0.3))
    m.add_road("road")
    m.add_tire("t", "w", "road", **tire)
    return m


def frames_of(r, v=(0, 0, 0), w=(0, 0, 0), A=np.eye(3)):
    return BodyFrames(np.array([r], float), np.array([A], float), np.array([v], float), np.array([w], float))


def tire_of(m, name="t"):
    e = m.forces[name]
    return TireForce(e, RoadSurface(m.forces[e.road]), {"w": 0}, {0: (np.array([0, 0, 0.3]), np.eye(3))})


def mf(x, B, C, D, E):         # written out independently of solver.vehicle.magic_formula
    phi = B * x - E * (B * x - math.atan(B * x))
    return D * math.sin(C * math.atan(phi))


# ---- road -------------------------------------------------------------------------------------
def test_road_profiles_heights_and_normals():
    m = solver.Model()
    bump = RoadSurface(m.add_road("b", height=0.05, profile="half_sine", start=15.0, obstacle_height=0.1,
                                  obstacle_length=2.5))
    assert bump.height(14.9) == pytest.approx(0.05)
    assert bump.height(16.25) == pytest.approx(0.15)
    assert bump.height(15.625) == pytest.approx(0.05 + 0.1 * math.sin(math.pi / 4))
    assert bump.height(17.6) == pytest.approx(0.05)
    step = RoadSurface(m.add_road("s", profile="step", start=1.0, obstacle_height=0.2, obstacle_length=0.5))
    assert [step.height(x) for x in (0.9, 1.25, 2.0)] == pytest.approx([0.0, 0.1, 0.2])
    table = RoadSurface(m.add_road("t", profile="table", table="0.01*t"))
    assert table.height(3.0) == pytest.approx(0.03)
    assert table.normal(3.0) == pytest.approx(np.array([-0.01, 0, 1]) / math.sqrt(1 + 1e-4))
    # slope (used for the normal) against central differences of the height
    for road, xs in ((bump, (15.3, 16.0, 17.2)), (step, (1.1, 1.3, 1.45))):
        for x in xs:
            fd = (road.height(x + 1e-6) - road.height(x - 1e-6)) / 2e-6
            n = road.normal(x)
            assert -n[0] / n[2] == pytest.approx(fd, rel=1e-6, abs=1e-9)
            assert np.linalg.norm(n) == pytest.approx(1.0)


# ---- magic formula ----------------------------------------------------------------------------
def test_pure_slip_curves_match_the_magic_formula_closed_form():
    p = TireParameters.of(wheel_model().forces["t"])
    Fz = 3000.0
    for kappa in (-0.5, -0.08, -0.01, 0.0, 0.02, 0.1, 0.3, 1.0):
        Fx, Fy = combined_slip_forces(kappa, 0.0, Fz, p)
        assert Fx == pytest.approx(mf(kappa, p.slip_stiffness / (p.shape_x * p.friction), p.shape_x,
                                      p.friction * Fz, p.curvature_x), rel=1e-12, abs=1e-9)
        assert Fy == 0.0
    for alpha in (-0.3, -0.05, 0.01, 0.1, 0.5):
        Fx, Fy = combined_slip_forces(0.0, alpha, Fz, p)
        assert Fy == pytest.approx(mf(alpha, p.cornering_stiffness / (p.shape_y * p.friction), p.shape_y,
                                      p.friction * Fz, p.curvature_y), rel=1e-12)
        assert Fx == 0.0
    # slopes at zero slip are the declared stiffnesses (central differences), peaks are μ F_z
    h = 1e-7
    assert (combined_slip_forces(h, 0, Fz, p)[0] - combined_slip_forces(-h, 0, Fz, p)[0]) / (2 * h) \
        == pytest.approx(p.slip_stiffness * Fz, rel=1e-6)
    assert (combined_slip_forces(0, h, Fz, p)[1] - combined_slip_forces(0, -h, Fz, p)[1]) / (2 * h) \
        == pytest.approx(p.cornering_stiffness * Fz, rel=1e-6)
    grid = np.linspace(0, 1, 20001)
    assert np.max(combined_slip_forces(grid, 0.0, Fz, p)[0]) == pytest.approx(p.friction * Fz, rel=1e-6)
    assert np.max(combined_slip_forces(0.0, grid, Fz, p)[1]) == pytest.approx(p.friction * Fz, rel=1e-6)


def test_combined_slip_reduces_both_forces_by_the_weighting_functions():
    p = TireParameters.of(wheel_model().forces["t"])
    kappa, alpha, Fz = 0.05, 0.08, 4000.0
    Fx, Fy = combined_slip_forces(kappa, alpha, Fz, p)
    Fx0, _ = combined_slip_forces(kappa, 0.0, Fz, p)
    _, Fy0 = combined_slip_forces(0.0, alpha, Fz, p)
    gxa = math.cos(math.atan(p.rbx1 * math.cos(math.atan(p.rbx2 * kappa)) * alpha))
    gyk = math.cos(math.atan(p.rby1 * math.cos(math.atan(p.rby2 * alpha)) * kappa))
    assert (Fx, Fy) == pytest.approx((gxa * Fx0, gyk * Fy0), rel=1e-12)
    assert 0 < Fx < Fx0 and 0 < Fy < Fy0
    assert math.hypot(Fx, Fy) <= p.friction * Fz


# ---- tire element ----------------------------------------------------------------------------
def test_vertical_force_is_k_delta_plus_c_delta_dot_and_lost_out_of_contact():
    m = wheel_model(stiffness=2e5, damping=800.0)
    tire = tire_of(m)
    s = tire.state(frames_of((0, 0, 0.29), v=(0, 0, -0.2)))
    assert (s.delta, s.delta_dot) == pytest.approx((0.01, 0.2))
    assert s.Fz == pytest.approx(2e5 * 0.01 + 800 * 0.2)
    assert s.point == pytest.approx([0, 0, 0])          # on the road surface
    assert s.force == pytest.approx([0, 0, s.Fz])
    assert tire.state(frames_of((0, 0, 0.3001), v=(0, 0, -1.0))).Fz == 0.0         # airborne
    assert tire.state(frames_of((0, 0, 0.299), v=(0, 0, 5.0))).Fz == 0.0           # leaving: no pull
    w = Wrenches(1)
    tire.apply(0.0, frames_of((0, 0, 0.29)), w)
    assert w.F[0] == pytest.approx([0, 0, 2000.0]) and w.T[0] == pytest.approx([0, 0, 0])
    assert tire.potential(frames_of((0, 0, 0.29))) == pytest.approx(0.5 * 2e5 * 1e-4)


def test_slip_ratio_and_angle_give_the_magic_formula_forces_at_the_contact_point():
    m = wheel_model(damping=0.0, rolling_resistance=0.0, trail=0.0)
    tire, p = tire_of(m), TireParameters.of(m.forces["t"])
    vx, vy, kappa = 15.0, -0.6, 0.04
    spin = (1 + kappa) * vx / p.radius
    s = tire.state(frames_of((0, 0, 0.285), v=(vx, vy, 0), w=(0, spin, 0)))
    vt = math.hypot(vx, p.low_speed)
    assert s.kappa == pytest.approx((spin * p.radius - vx) / vt)
    assert s.alpha == pytest.approx(math.atan(-vy / vt))
    Fz = p.stiffness * 0.015
    Fx, Fy = combined_slip_forces(s.kappa, s.alpha, Fz, p)
    assert (s.Fx, s.Fy, s.Fz) == pytest.approx((Fx, Fy, Fz))
    assert s.Fx > 0 and s.Fy > 0                   # driving, and pushing back against the drift to −y
    w = Wrenches(1)
    tire.apply(0.0, frames_of((0, 0, 0.285), v=(vx, vy, 0), w=(0, spin, 0)), w)
    lever = np.array([0, 0, -(p.radius - 0.015)])
    assert w.F[0] == pytest.approx([Fx, Fy, Fz])
    assert w.T[0] == pytest.approx(np.cross(lever, [Fx, Fy, Fz]))


def test_rolling_resistance_and_aligning_moment():
    m = wheel_model(damping=0.0, rolling_resistance=0.015, trail=0.04)
    tire, p = tire_of(m), TireParameters.of(m.forces["t"])
    vx = 10.0
    s = tire.state(frames_of((0, 0, 0.29), v=(vx, 0.5, 0), w=(0, vx / p.radius, 0)))
    spin = vx
    rolling = -0.015 * s.Fz * p.radius * spin / math.hypot(spin, p.low_speed)
    Mz = -0.04 / math.sqrt(1 + (p.By * s.alpha) ** 2) * s.Fy
    assert s.torque == pytest.approx([0, rolling, Mz])
    assert rolling < 0 and Mz > 0          # resists the spin; turns the wheel toward its velocity


@pytest.mark.parametrize("profile, rel", [("flat", 1e-8), ("half_sine", 1e-2)])
def test_penetration_rate_is_the_time_derivative_of_the_penetration(profile, rel):
    """δ̇ = −n·V is exact on a flat road (also cambered and steered); on the bump it omits the
    change of the normal under the moving contact point (curvature term, here 0.6 %)."""
    m = wheel_model()
    m.add_road("r2", profile=profile, start=-1.0, obstacle_height=0.1, obstacle_length=2.5)
    m.set_field("t", "road", "r2")
    tire = tire_of(m)
    q = np.array([1.0, 0.04, 0.0, 0.05])
    A = rotation_matrix(q / np.linalg.norm(q))                                     # camber and steer
    r = np.array([0.2, 0.0, 0.38 if profile == "half_sine" else 0.28])
    v, w = np.array([8.0, 0.3, -0.4]), np.array([0.1, 25.0, 0.3])
    s = tire.state(frames_of(r, v, w, A))
    assert s.delta > 0.01
    h = 1e-6

    def delta_at(dt):
        Ah = rotation_matrix(np.array([1.0, *(0.5 * w * dt)]) / math.sqrt(1 + (0.5 * dt) ** 2 * w @ w)) @ A
        return tire.state(frames_of(r + v * dt, v, w, Ah)).delta
    fd = (delta_at(h) - delta_at(-h)) / (2 * h)
    assert s.delta_dot == pytest.approx(fd, rel=rel)


@pytest.mark.parametrize("profile", ["flat", "half_sine", "step"])
def test_stacked_states_give_the_wrenches_and_energy_of_one_state_at_a_time(profile):
    """The output post-processing evaluates a tire on all output points at once (element_loads on
    stacked states): the same forces, torques and spring energy as state by state, in contact,
    airborne, leaving the road (k δ + c δ̇ < 0) and lying flat (not finite inside, gated out); the
    spring energy ½ k δ² of the contact state's δ while touching, alone (element_potential) the same."""
    m = wheel_model(stiffness=2e5, damping=800.0)
    m.add_road("r2", profile=profile, start=-0.3, obstacle_height=0.05, obstacle_length=1.0)
    m.set_field("t", "road", "r2")
    tire = tire_of(m)
    assert tire.stacked
    rng = np.random.default_rng(3)
    flat = rotation_matrix(np.array([math.cos(math.pi / 4), math.sin(math.pi / 4), 0, 0]))   # axis along z
    states = []
    for k in range(12):
        q = np.array([1.0, *rng.normal(0, 0.05, 3)])
        A = flat if k == 11 else rotation_matrix(q / np.linalg.norm(q))
        z = (0.26, 0.3005, 0.29, 0.31)[k % 4] + (0.03 if profile != "flat" else 0.0)
        r = np.array([rng.uniform(-0.5, 0.8), 0.0, z])
        v = np.array([rng.normal(8, 1), rng.normal(0, 0.3), 5.0 if k % 4 == 2 else rng.normal(0, 0.2)])
        states.append((r, v, np.array([0.1, 25.0, 0.3]) + rng.normal(0, 1, 3), A))
    stacked = BodyFrames(*(np.array([[s[i]] for s in states]) for i in (0, 3, 1, 2)))
    times = np.linspace(0.0, 1.0, len(states))
    together, energy = element_loads([tire], times, stacked, 1, potential=True)
    contacts = 0
    for n, (r, v, w, A) in enumerate(states):
        one, e = element_loads([tire], float(times[n]), frames_of(r, v, w, A), 1, potential=True)
        contacts += bool(tire.state(frames_of(r, v, w, A)).contact)
        scale = max(1.0, np.abs(one.F).max())
        np.testing.assert_allclose(together.F[n], one.F, rtol=1e-12, atol=1e-12 * scale)
        np.testing.assert_allclose(together.T[n], one.T, rtol=1e-12, atol=1e-12 * scale)
        assert energy[n] == pytest.approx(e, rel=1e-12, abs=1e-15)
        state = tire.state(frames_of(r, v, w, A))            # the potential reads the geometry alone
        assert e == pytest.approx(0.5 * 2e5 * state.delta ** 2 if state.touching else 0.0, rel=1e-12, abs=1e-15)
    np.testing.assert_array_equal(element_potential([tire], stacked, times.shape), energy)
    assert 3 <= contacts <= 9 and np.isfinite(together.F).all() and np.isfinite(together.T).all()


@pytest.mark.slow
def test_dropped_wheel_settles_at_the_static_deflection():
    m = wheel_model(stiffness=2e5, damping=800.0)
    res = solver.simulate(m, t_end=1.0, output_step=0.01)
    assert res.body_position("w")[-1, 2] == pytest.approx(0.3 - 20 * G / 2e5, abs=1e-6)
    # upright on one contact point the wheel is unstable in roll (it would tip over): Newton finds
    # that equilibrium, the default (a stable one) finds none
    eq = solver.static_equilibrium(m, formulation="cartesian", method="newton")   # q = [r ; p] of the wheel
    assert not eq.stable
    frames = frames_of(eq.q[:3], A=rotation_matrix(eq.q[3:7]))
    assert tire_of(m).state(frames).Fz == pytest.approx(20 * G, rel=1e-9)


# ---- speed control ---------------------------------------------------------------------------
def test_speed_control_torque_is_pi_with_the_rolled_distance():
    """T = T_max tanh(u/T_max), u = k_p (v* − v) + k_i ½ Σ R sin((v* t − R θ_w)/R): the periodic
    integral term is a function of the state alone (the same for θ and θ + 2π, whatever the order
    of evaluation) and ≈ k_i (v* t − R θ) for distance errors small against R."""
    m = solver.Model("axle", gravity=(0, 0, -G))
    m.add_body("c", mass=100.0, inertia=(1, 1, 1), position=(0, 0, 0.5))
    for side, y in (("l", 0.7), ("r", -0.7)):
        m.add_body(side, mass=10.0, inertia=(0.3, 0.5, 0.3), position=(0, y, 0.3))
    m.add_speed_control("sc", "c", "l", "c", "r", "c", target_speed=10.0, kp=200.0, ki=50.0,
                        max_torque=1000.0, radius=0.3)
    index = {"c": 0, "l": 1, "r": 2}
    init = {k: (np.array(m.bodies[n].position), np.eye(3)) for n, k in index.items()}
    (sc,) = compile_forces(m, index, init)
    spin = lambda a: np.array([[math.cos(a), 0, math.sin(a)], [0, 1, 0], [-math.sin(a), 0, math.cos(a)]])

    def frames(theta_l, theta_r):
        return BodyFrames(np.array([init[k][0] for k in range(3)]),
                          np.array([np.eye(3), spin(theta_l), spin(theta_r)]),
                          np.array([[9.0, 0, 0]] * 3), np.zeros((3, 3)))

    t = 2.0
    for theta_l, theta_r in ((66.6, 66.7), (0.2, -3.0), (66.6 + 2 * math.pi, 66.7 - 4 * math.pi), (5.0, 60.0)):
        e = 0.5 * 0.3 * (math.sin((10.0 * t - 0.3 * theta_l) / 0.3) + math.sin((10.0 * t - 0.3 * theta_r) / 0.3))
        assert sc.state(t, frames(theta_l, theta_r)).error == pytest.approx(e, abs=1e-12)
        u = 200.0 * (10.0 - 9.0) + 50.0 * e
        w = Wrenches(3)
        sc.apply(t, frames(theta_l, theta_r), w)
        T = 1000.0 * math.tanh(u / 1000.0)
        assert w.T[1] == pytest.approx([0, T / 2, 0]) and w.T[2] == pytest.approx([0, T / 2, 0])
        assert w.T[0] == pytest.approx([0, -T, 0]) and not w.F.any()
    # all output points at once (stacked states) give the wrenches of one state at a time
    cases = [(66.6, 66.7), (0.2, -3.0), (5.0, 60.0)]
    stacked = [frames(*c) for c in cases]
    stacked = BodyFrames(*(np.array([getattr(f, k) for f in stacked]) for k in "rAvw"))
    times = np.array([2.0, 0.7, 9.1])
    assert sc.stacked
    together = element_loads([sc], times, stacked, 3)[0]
    for n, case in enumerate(cases):
        one = element_loads([sc], float(times[n]), frames(*case), 3)[0]
        assert np.array_equal(together.T[n], one.T) and np.array_equal(together.F[n], one.F)
    s = 0.3 * (66.6 + 66.7) / 2               # rolled distance 19.995 m at t = 2; wheel errors 2, −1 cm
    linear = 10.0 * t - s
    assert abs(sc.state(t, frames(66.6, 66.7)).error - linear) <= 0.02 ** 3 / (6 * 0.3 ** 2)   # sin x − x


# ---- model, validation, files ------------------------------------------------------------------
def test_validation_messages_name_the_field():
    m = wheel_model()
    with pytest.raises(solver.ModelError, match=r"tire 'T1'\.radius: must be > 0"):
        m.add_tire("T1", "w", "road", radius=-0.3)
    with pytest.raises(solver.ModelError, match=r"tire 'T2'\.road: no road named 'nope' \(roads: road\)"):
        m.add_tire("T2", "w", "nope")
    with pytest.raises(solver.ModelError, match=r"tire 'T3'\.road: no road named 't'"):
        m.add_tire("T3", "w", "t")                    # a tire is not a road
    with pytest.raises(solver.ModelError, match=r"road 'R'\.profile: must be one of flat, half_sine"):
        m.add_road("R", profile="bumpy")
    with pytest.raises(solver.ModelError, match=r"road 'R'\.obstacle_length: must be > 0"):
        m.add_road("R", obstacle_length=0.0)
    with pytest.raises(solver.ModelError, match=r"speed_control 'S'\.left_carrier: must differ from left_wheel"):
        m.add_speed_control("S", "w", "w", "w", "w", "w")
    with pytest.raises(solver.ModelError, match=r"tire 't'\.road: no road named 'x'"):
        m.set_field("t", "road", "x")


def test_project_round_trip_rename_and_cascade(tmp_path):
    m = wheel_model(radius=0.31, curvature_y=-0.5)
    m.add_body("c", mass=100.0, inertia=(1, 1, 1), position=(0, 0, 0.6))
    m.add_body("w2", mass=20.0, inertia=(0.6, 1.0, 0.6), position=(0, -1, 0.3))
    m.add_speed_control("sc", "c", "w", "c", "w2", "c", target_speed=13.9)
    m.add_road("bump", profile="table", table={"t": [0, 1, 2, 3], "values": [0, 0.02, 0.0, 0.0]})
    path = tmp_path / "v.mbs.json"
    m.save(path)
    m2 = solver.load_model(path)
    assert m2 == m
    assert m2.forces["t"].curvature_y == -0.5 and m2.forces["bump"].table["values"][1] == 0.02
    m2.rename("road", "asphalt")
    assert m2.forces["t"].road == "asphalt"
    removed = m2.remove("asphalt", cascade=True)
    assert [e.name for e, _ in removed] == ["t", "asphalt"]
