"""Formulas written once for numbers and for the code generator (solver.math.namespace): the tire's
contact (solver.vehicle.tire.tire_contact), the road profiles (solver.vehicle.road.road_profile), the
spring-damper (solver.forces.spring_damper_force) and the speed controller
(solver.vehicle.speed_control.speed_control) give the same values on numbers (NUMPY_MATH)
and on symbols (the generator's namespace, solver.codegen.derive, evaluated let by let with
sympy.lambdify) at random states, to 1e-12."""
import math

import numpy as np
import pytest
import sympy as sp

import solver
from solver.codegen.derive import _math, _Symbols
from solver.forces import spring_damper_force
from solver.math.rotations import rotation_matrix
from solver.vehicle import RoadSurface, TireParameters
from solver.vehicle.road import road_profile
from solver.vehicle.speed_control import DrivenWheel, speed_control
from solver.vehicle.tire import tire_contact


TOL = 1e-12
ROADS = {"flat": {}, "half_sine": dict(start=0.5, obstacle_height=0.1, obstacle_length=2.5),
         "step": dict(start=0.8, obstacle_height=0.08, obstacle_length=1.2)}
FIELDS = ("delta", "delta_dot", "kappa", "alpha", "Fx", "Fy", "Fz", "point", "force", "torque")


def generator_namespace():
    """The code generator's namespace and its symbols (named intermediates in ``s.lets``)."""
    s = _Symbols({"nq": 0, "n_parameters": 0, "drivers": [], "n_inputs": 0})
    return s, _math(s)


def evaluator(s, outputs, inputs):
    """A function of the input values giving the sympy ``outputs`` (nested lists of expressions),
    each named intermediate evaluated once, in order, by its own lambdified function."""
    steps = []
    for sym, expr in s.lets:
        args = sorted(expr.free_symbols, key=lambda x: x.name)
        steps.append((sym, args, sp.lambdify(args, expr, "math")))
    flat = [sp.sympify(e) for e in outputs]
    finals = [(sorted(e.free_symbols, key=lambda x: x.name), e) for e in flat]
    finals = [(args, sp.lambdify(args, e, "math")) for args, e in finals]

    def run(values):
        env = dict(zip(inputs, values))
        for sym, args, fn in steps:
            env[sym] = fn(*[env[x] for x in args])
        return np.array([float(fn(*[env[x] for x in args])) for args, fn in finals])
    return run


def symbolic_tire(kind):
    """(evaluate(values), input symbols) of tire_contact's fields on the generator's namespace."""
    s, m = generator_namespace()
    c, a, v, w = (np.array(sp.symbols(f"{n}0:3"), dtype=object) for n in ("c", "a", "v", "w"))
    p = TireParameters(**{name: sp.Symbol(name) for name in TireParameters.__dataclass_fields__})
    z0, x0, H, L = sp.symbols("z0 x0 H L")

    def surface(x):
        h, slope = road_profile(kind, x, x0, H, L, m)
        return z0 + h, slope
    state = tire_contact(c, s.vector(a), v, w, p, surface, m)
    outputs = [x for name in FIELDS for x in np.atleast_1d(getattr(state, name))]
    inputs = [*c, *a, *v, *w, *(getattr(p, name) for name in TireParameters.__dataclass_fields__), z0, x0, H, L]
    return evaluator(s, outputs, inputs), inputs


def wheel(kind="flat", **tire):
    """(TireParameters, RoadSurface) of a tire on a road of profile ``kind`` (ROADS)."""
    m = solver.Model()
    m.add_body("w", mass=20.0, inertia=(0.6, 1.0, 0.6), position=(0, 0, 0.3))
    road = RoadSurface(m.add_road("road", profile=kind, height=0.02, **ROADS[kind]))
    return TireParameters.of(m.add_tire("t", "w", "road", **tire)), road


def numeric_fields(state):
    return np.concatenate([np.atleast_1d(np.asarray(getattr(state, name), dtype=float)) for name in FIELDS])


@pytest.mark.parametrize("kind", list(ROADS))
def test_tire_contact_on_numbers_equals_the_generated_expressions(kind):
    p, road = wheel(kind, trail=0.04, rolling_resistance=0.015, damping=900.0)
    evaluate, _ = symbolic_tire(kind)
    rng = np.random.default_rng(7)
    counts = {"contact": 0, "airborne": 0, "pulling away": 0, "on the slope": 0}
    for _ in range(60):
        x = rng.uniform(-0.5, 4.0)
        q = np.array([1.0, *rng.normal(scale=0.08, size=3)])
        a = rotation_matrix(q / np.linalg.norm(q)) @ np.array([0.0, 1.0, 0.0])     # camber and steer
        c = np.array([x, rng.normal(), road.height(x) + p.radius + rng.uniform(-0.04, 0.01)])
        v = np.array([rng.uniform(-2.0, 20.0), rng.normal(), rng.normal(scale=1.5)])
        w = rng.normal(scale=3.0, size=3) + a * rng.uniform(-5.0, 70.0)
        state = tire_contact(c, a, v, w, p, road.surface)
        number = numeric_fields(state)
        symbol = evaluate([*c, *a, *v, *w, *(getattr(p, n) for n in TireParameters.__dataclass_fields__),
                           road.z0, road.x0, road.H, road.L])
        scale = np.maximum(1.0, np.abs(number))
        assert np.max(np.abs(symbol - number) / scale) <= TOL
        counts["contact" if state.contact else "airborne" if state.delta <= 0 else "pulling away"] += 1
        counts["on the slope"] += bool(state.contact and abs(road.profile(state.point[0])[1]) > 0.01)
    assert counts["contact"] > 20 and counts["airborne"] > 5 and counts["pulling away"] > 0
    assert (counts["on the slope"] > 5) == (kind != "flat")


def test_out_of_contact_the_tire_applies_nothing_and_a_flat_wheel_is_finite():
    p, road = wheel(damping=900.0)
    c = np.array([0.0, 0.0, road.z0 + p.radius - 0.01])
    pulling = tire_contact(c, np.array([0.0, 1.0, 0.0]), np.array([0.0, 0.0, 5.0]), np.zeros(3), p, road.surface)
    assert pulling.touching and not pulling.contact and pulling.delta == pytest.approx(0.01)
    assert (pulling.Fz, *pulling.force, *pulling.torque) == (0.0,) * 7
    with np.errstate(all="raise"):          # the numeric path lets a flat wheel divide by zero…
        with pytest.raises(FloatingPointError):
            tire_contact(c, np.array([0.0, 0.0, 1.0]), np.zeros(3), np.zeros(3), p, road.surface)
    with np.errstate(divide="ignore", invalid="ignore"):       # … and gates it out (TireForce.state)
        flat = tire_contact(c, np.array([0.0, 0.0, 1.0]), np.zeros(3), np.zeros(3), p, road.surface)
    assert not flat.touching and not flat.contact
    assert (flat.Fx, flat.Fy, flat.Fz, *flat.force, *flat.torque) == (0.0,) * 9


@pytest.mark.parametrize("kind", ["half_sine", "step"])
def test_road_profile_piecewise_equals_the_numbers(kind):
    x, x0, H, L = sp.symbols("x x0 H L")
    _, m = generator_namespace()
    h, slope = (sp.lambdify((x, x0, H, L), e, "math") for e in road_profile(kind, x, x0, H, L, m))
    road = wheel(kind)[1]
    for xs in np.linspace(road.x0 - 0.5, road.x0 + road.L + 0.5, 41):
        assert (h(xs, road.x0, road.H, road.L), slope(xs, road.x0, road.H, road.L)) == \
            pytest.approx(road.profile(xs), rel=TOL, abs=TOL)


def test_spring_damper_force_on_numbers_equals_the_generated_expressions_stacked_and_single():
    s, m = generator_namespace()
    d, dv = (np.array(sp.symbols(f"{n}0:3"), dtype=object) for n in ("d", "dv"))
    constants = sp.symbols("k c l0 preload f")
    evaluate = evaluator(s, list(spring_damper_force(d, dv, *constants, m)), [*d, *dv, *constants])
    rng = np.random.default_rng(3)
    D, DV = rng.normal(size=(40, 3)), rng.normal(size=(40, 3))
    D[0] = 0.0                                                    # coincident ends: no force
    D[1] = [3e-13, 0.0, 0.0]
    values = np.column_stack([rng.uniform(10, 500, 40), rng.uniform(0, 20, 40), rng.uniform(0.2, 2, 40),
                              rng.normal(size=40), rng.normal(size=40)])
    with np.errstate(divide="ignore", invalid="ignore"):
        stacked = spring_damper_force(D, DV, *values.T)
        single = np.array([spring_damper_force(D[n], DV[n], *values[n]) for n in range(40)])
    assert stacked.shape == single.shape == (40, 3)
    assert np.array_equal(stacked, single)
    assert np.all(stacked[:2] == 0.0)
    for n in range(40):
        number = evaluate([*D[n], *DV[n], *values[n]])
        assert np.max(np.abs(number - stacked[n])) <= TOL * max(1.0, np.max(np.abs(stacked[n])))
    # against the law written out: T = k (L − l0) + c L̇ + preload + f along d/L
    L = np.linalg.norm(D[2:], axis=1)
    k, c, l0, preload, f = values[2:].T
    T = k * (L - l0) + c * np.sum(D[2:] * DV[2:], axis=1) / L + preload + f
    assert stacked[2:] == pytest.approx(T[:, None] * D[2:] / L[:, None], rel=1e-12)


def symbols(name, shape):
    """An object array of fresh symbols ``name0``, ``name1``, … of the given shape."""
    return np.array(sp.symbols(f"{name}0:{int(np.prod(shape))}"), dtype=object).reshape(shape)


def test_speed_control_on_numbers_equals_the_generated_expressions_stacked_and_single():
    """speed_control on symbols (lambdified let by let) and on numbers, one state and 30 stacked, at
    random rotations, velocities near the target speed and phases (most torques below saturation, one
    carrier the ground); and against the law written with the spin angles
    θ_w = atan2(y_w, x_w): T = T_max tanh((k_p (v* − v) + k_i ½ Σ R sin(φ − θ_w))/T_max)."""
    s, m = generator_namespace()
    A, v, forward = symbols("A", (3, 3)), symbols("v", 3), symbols("f", 3)
    rotations = [(symbols(f"C{k}_", (3, 3)), symbols(f"W{k}_", (3, 3))) for k in range(2)]
    geometry = [[symbols(f"{n}{k}_", 3) for n in ("a", "u", "w", "x")] for k in range(2)]
    phase, gains = sp.symbols("sphi cphi"), sp.symbols("vt kp ki tmax R")
    wheels = [(Ac, Aw, DrivenWheel(0, 1, *g)) for (Ac, Aw), g in zip(rotations, geometry)]
    state = speed_control(A, v, forward, wheels, *phase, *gains, m)
    outputs = [state.speed, state.error, state.torque, *np.concatenate(state.wheel_torques)]
    inputs = [*A.ravel(), *v, *forward, *(x for Ac, Aw in rotations for x in (*Ac.ravel(), *Aw.ravel())),
              *(x for g in geometry for vec in g for x in vec), *phase, *gains]
    evaluate = evaluator(s, outputs, inputs)

    rng = np.random.default_rng(5)
    N = 30

    def rot():
        q = rng.normal(size=4)
        return rotation_matrix(q / np.linalg.norm(q))
    A_n, Rc, Rw = (np.array([rot() for _ in range(N)]) for _ in range(3))
    Rw2, Rc2 = np.array([rot() for _ in range(N)]), np.eye(3)              # the right wheel's carrier: ground
    forward_n = rot()[:, 0]
    v_n = np.einsum("nij,j->ni", A_n, forward_n) * rng.uniform(12.0, 16.0, (N, 1)) + rng.normal(size=(N, 3))
    axis = rot() @ np.array([0.0, 1.0, 0.0])
    init = {0: (None, rot()), 1: (None, rot()), 2: (None, rot()), -1: (None, np.eye(3))}
    geo = [DrivenWheel.at(0, 1, axis, init), DrivenWheel.at(2, -1, axis, init)]
    t = rng.uniform(0.0, 30.0, N)
    v_t, kp, ki, t_max, radius = 14.0, 900.0, 450.0, 2500.0, 0.31
    phi = v_t * t / radius
    unsaturated = 0
    args = (forward_n, np.sin(phi), np.cos(phi), v_t, kp, ki, t_max, radius)
    stacked = speed_control(A_n, v_n, args[0], [(Rc, Rw, geo[0]), (Rc2, Rw2, geo[1])], *args[1:])
    for n in range(N):
        one = speed_control(A_n[n], v_n[n], args[0], [(Rc[n], Rw[n], geo[0]), (Rc2, Rw2[n], geo[1])],
                            args[1][n], args[2][n], *args[3:])
        number = np.array([one.speed, one.error, one.torque, *np.concatenate(one.wheel_torques)])
        assert np.array_equal(number, [stacked.speed[n], stacked.error[n], stacked.torque[n],
                                       *np.concatenate([x[n] for x in stacked.wheel_torques])])
        symbol = evaluate([*A_n[n].ravel(), *v_n[n], *forward_n,
                           *Rc[n].ravel(), *Rw[n].ravel(), *Rc2.ravel(), *Rw2[n].ravel(),
                           *(x for w in geo for vec in (w.axis_c, w.u_c, w.v_c, w.u_w) for x in vec),
                           args[1][n], args[2][n], *args[3:]])
        assert np.max(np.abs(symbol - number)) <= TOL * max(1.0, np.max(np.abs(number)))
        # the law with the spin angles, θ_w = atan2(y_w, x_w) in the carrier's reference axes
        angles = [math.atan2((Ac @ w.v_c) @ (Aw @ w.u_w), (Ac @ w.u_c) @ (Aw @ w.u_w))
                  for Ac, Aw, w in ((Rc[n], Rw[n], geo[0]), (Rc2, Rw2[n], geo[1]))]
        speed = (A_n[n] @ forward_n) @ v_n[n]
        error = 0.5 * radius * sum(math.sin(phi[n] - theta) for theta in angles)
        T = t_max * math.tanh((kp * (v_t - speed) + ki * error) / t_max)
        assert (one.speed, one.error, one.torque) == pytest.approx((speed, error, T), rel=1e-12, abs=1e-12)
        assert one.wheel_torques[1] == pytest.approx(T / 2 * (Rc2 @ geo[1].axis_c), rel=1e-12, abs=1e-12)
        unsaturated += abs(T) < 0.9 * t_max
    assert unsaturated > N / 2


def test_rotational_spring_reads_the_joint_rotation_coordinate():
    """θ of the rotational spring-damper is the revolute joint's coordinate (COORDINATES), unwrapped."""
    from solver.forces import BodyFrames, compile_forces
    m = solver.Model()
    m.add_body("b", mass=1.0, inertia=(1.0, 1.0, 1.0))
    m.add_joint("j", "revolute", "ground", "b", origin=(0, 0, 0), axis=(0, 0, 1))
    m.add_rotational_spring_damper("rs", "j", stiffness=2.0)
    (rs,) = compile_forces(m, {"b": 0}, {0: (np.zeros(3), np.eye(3))})
    for turn in np.linspace(0.0, 3 * math.pi, 13):       # past π: continuous
        Rz = np.array([[math.cos(turn), -math.sin(turn), 0], [math.sin(turn), math.cos(turn), 0], [0, 0, 1]])
        theta, axis = rs.rotation(BodyFrames(np.zeros((1, 3)), Rz[None], np.zeros((1, 3)), np.zeros((1, 3))))
        assert theta == pytest.approx(turn, abs=1e-12) and axis == pytest.approx([0, 0, 1])
