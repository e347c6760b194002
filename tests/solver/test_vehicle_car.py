"""The CAE-TC car of Choi & Yoo (2000) (solver/vehicle/cae_tc.py): statics, straight driving,
cornering, 14-body vs 23-body (links as light bodies) responses and link reactions.

Horizons are short (≤ 2 s) to keep this file within its time budget; the full 10 s manoeuvres run
in bench/vehicle.py."""
import numpy as np
import pytest

import solver
from solver.compile import compile_model
from solver.vehicle import TireForce
from solver.vehicle.cae_tc import cae_tc, front_axle_load
from solver.vehicle.outputs import heading_accelerations, roll_angle, tire_forces

G = 9.81


def at_rest(link_bodies):
    m = cae_tc("straight", link_bodies=link_bodies)
    m.set_field("cruise", "target_speed", 0.0)
    for b in m.bodies.values():
        b.values["velocity"], b.values["angular_velocity"] = [0.0] * 3, [0.0] * 3
    return m


@pytest.mark.parametrize("link_bodies", [False, True], ids=["14body", "23body"])
def test_static_equilibrium_tire_loads_carry_the_weight_with_the_axle_split(link_bodies):
    m = at_rest(link_bodies)
    eq = solver.static_equilibrium(m)
    assert eq.iterations == 0 and eq.residual < 1e-8        # the car is built at its equilibrium
    system = compile_model(m, codegen="off").system
    frames = system.frames(eq.q, np.zeros_like(eq.q))
    Fz = {t.name: t.state(frames).Fz for t in system.force_elements if isinstance(t, TireForce)}
    weight = sum(b.mass for b in m.bodies.values()) * G
    assert sum(Fz.values()) == pytest.approx(weight, rel=1e-6)
    front, rear = front_axle_load(m)
    assert Fz["tire_fl"] + Fz["tire_fr"] == pytest.approx(front, rel=1e-6)
    assert Fz["tire_rl"] + Fz["tire_rr"] == pytest.approx(rear, rel=1e-6)
    assert Fz["tire_fl"] == pytest.approx(Fz["tire_fr"], rel=1e-9)


@pytest.mark.slow
def test_straight_driving_holds_the_speed_without_drift():
    res = solver.simulate(cae_tc("straight", t_end=0.5))
    v = res.body_velocity("chassis")
    assert np.max(np.abs(v[:, 0] * 3.6 - 50.0)) < 0.5
    assert np.max(np.abs(res.body_position("chassis")[:, 1])) < 1e-6
    assert np.max(np.abs(v[:, 1])) < 1e-6


@pytest.mark.slow
def test_cornering_lateral_acceleration_is_v_squared_over_the_path_radius():
    """J-turn at 50 km/h with the rack ramped over 0.3 s: the chassis CM's acceleration normal to
    its path equals v²/R, R the radius of curvature of the recorded path (central differences of
    the positions, independent of the recorded accelerations)."""
    m = cae_tc("j_turn", t_end=1.0)
    m.set_field("steer", "expression", "-0.006*(1-cos(pi*min(t,0.3)/0.3))/2")
    res = solver.simulate(m)
    dt = res.t[1] - res.t[0]
    p = res.body_position("chassis")[:, :2]
    d1 = (p[2:] - p[:-2]) / (2 * dt)
    d2 = (p[2:] - 2 * p[1:-1] + p[:-2]) / dt ** 2
    curvature = (d1[:, 0] * d2[:, 1] - d1[:, 1] * d2[:, 0]) / np.linalg.norm(d1, axis=1) ** 3
    v = res.body_velocity("chassis")[1:-1, :2]
    speed = np.linalg.norm(v, axis=1)
    a_n = np.einsum("ij,ij->i", res.body_acceleration("chassis")[1:-1, :2], np.c_[-v[:, 1], v[:, 0]]) / speed
    late = res.t[1:-1] >= 0.7
    assert np.all(curvature[late] > 1 / 200.0)                      # turning left, R < 200 m
    assert a_n[late] == pytest.approx(speed[late] ** 2 * curvature[late], rel=0.01)
    lateral = heading_accelerations(res)[1][1:-1][late]               # what a chassis sensor reads
    assert lateral == pytest.approx(a_n[late], rel=0.02)
    roll = roll_angle(res)[1:-1][late]
    assert np.all((roll > 0.002) & (roll < 0.1))                        # rolls outward, to the right


@pytest.fixture(scope="module")
def bump_runs():
    """14- and 23-body cars at 20 km/h, front wheels over the 0.1 m × 2.5 m half-sine placed
    0.2 m ahead (the full 10 s run with the bump 15 m ahead is in bench/vehicle.py)."""
    runs = {}
    for link_bodies in (False, True):
        m = cae_tc("bump", link_bodies=link_bodies, t_end=0.5)
        m.set_field("road", "start", 0.2)
        runs[link_bodies] = (m, solver.simulate(m))
    return runs


@pytest.mark.slow
def test_14_and_23_body_cars_agree_over_the_bump(bump_runs):
    (m14, r14), (m23, r23) = bump_runs[False], bump_runs[True]
    assert np.array_equal(r14.t, r23.t)
    az14, az23 = r14.body_acceleration("chassis")[:, 2], r23.body_acceleration("chassis")[:, 2]
    peak = np.max(np.abs(az14))
    assert peak > 2.0                                          # the bump is felt
    assert np.sqrt(np.mean((az14 - az23) ** 2)) <= 0.02 * peak
    f14, f23 = tire_forces(m14, r14), tire_forces(m23, r23)
    assert np.max(f14["tire_fl"][:, 2]) > 1.3 * f14["tire_fl"][0, 2]
    for tire in f14:
        scale = np.max(f14[tire][:, 2])
        assert np.sqrt(np.mean((f14[tire][:, 2] - f23[tire][:, 2]) ** 2)) <= 0.02 * scale
    for r in (r14, r23):                                       # the speed control holds 20 km/h
        assert np.max(np.abs(r.body_velocity("chassis")[:, 0] * 3.6 - 20.0)) < 0.5


LANE_CHANGE = "0.006*sin(2*pi*min(t,1))*sin(pi*min(t,1))**2"     # C² rack input, right then left, 1 s


def lane_change(link_bodies, link_mass=1.0):
    """1 s lane change at 50 km/h (the 10 s manoeuvre is in bench/vehicle.py) with a rack input
    smooth at its ends, so that no acceleration jumps and the initial velocities need no rack rate."""
    m = cae_tc("lane_change", link_bodies=link_bodies, t_end=1.0, link_mass=link_mass)
    m.set_field("steer", "expression", LANE_CHANGE)
    return solver.simulate(m)


@pytest.fixture(scope="module")
def lane_runs():
    return {False: lane_change(False), True: lane_change(True)}


@pytest.mark.slow
def test_14_and_23_body_cars_agree_in_a_lane_change(lane_runs):
    r14, r23 = lane_runs[False], lane_runs[True]
    assert np.array_equal(r14.t, r23.t)
    ay14, ay23 = heading_accelerations(r14)[1], heading_accelerations(r23)[1]
    peak = np.max(np.abs(ay14))
    assert peak > 1.0 and ay14[np.argmax(np.abs(ay14[r14.t < 0.5]))] < 0    # > 0.1 g, right first
    assert np.sqrt(np.mean((ay14 - ay23) ** 2)) <= 0.02 * peak
    speed = np.linalg.norm(r14.body_velocity("chassis")[:, :2], axis=1) * 3.6
    assert np.max(np.abs(speed - 50.0)) < 0.5


LINKS = [("lateral_rod", "lateral_rod_ball"), ("tie_rod_l", "tie_ball_l"), ("lower_arm_l", "ball_l")]


@pytest.fixture(scope="module")
def light_links_run():
    return lane_change(True, link_mass=0.1)


@pytest.mark.slow
@pytest.mark.parametrize("link, body_joint", LINKS)
def test_massless_link_reactions_are_the_limit_of_light_links(lane_runs, light_links_run, link, body_joint):
    """The force a massless link exerts on its outer body (knuckle, axle) equals the force the link
    body exerts through its outer joint up to the link's inertia: with the link bodies' masses and
    inertias scaled by 0.1 the difference shrinks tenfold."""
    f14 = lane_runs[False].joint_reaction(link)[0]
    scale = np.max(np.linalg.norm(f14, axis=1))
    assert scale > 100.0
    error = {mass: np.max(np.linalg.norm(f14 - run.joint_reaction(body_joint)[0], axis=1)) / scale
             for mass, run in ((1.0, lane_runs[True]), (0.1, light_links_run))}
    assert error[1.0] <= 0.05 and error[0.1] <= 0.005
    assert error[0.1] <= 0.2 * error[1.0]
