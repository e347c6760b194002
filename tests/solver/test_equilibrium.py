"""Static equilibrium (descent on the potential with the modified reduced stiffness, Newton on the
reduced equations NᵀQ = 0, dynamic relaxation) against closed-form equilibria, open and closed
loops, both formulations; imported robots in tests/solver/test_equilibrium_robots.py."""
import os

import numpy as np
import pytest

import solver

G = 9.81
FORMULATIONS = ("cartesian", "relative")
HANG = (np.cos(-np.pi / 4), 0.0, 0.0, np.sin(-np.pi / 4))     # body x along −y


def pendulum(mass=2.0, inertia=0.05, d=0.7, position=None, stiffness=0.0, free_angle=0.0):
    """Pendulum pivoting about z at the origin, CM at distance d (hanging unless ``position``),
    optionally a rotational spring at the pivot."""
    m = solver.Model(name="pendulum", gravity=(0, -G, 0))
    m.add_body("bob", mass=mass, inertia=(1e-3, inertia, inertia), position=position or (0, -d, 0))
    m.add_joint("pivot", "revolute", "ground", "bob", origin=(0, 0, 0), axis=(0, 0, 1))
    if stiffness:
        m.add_rotational_spring_damper("spring", "pivot", stiffness=stiffness, free_angle=free_angle)
    return m


@pytest.mark.parametrize("formulation", FORMULATIONS)
def test_pendulum_with_rotational_spring(formulation):
    """Hanging pendulum, torsion spring k with free angle θ0 at the pivot: equilibrium
    k (θ0 − θ) = m g d sin θ.  Choosing θ* = 0.5 rad and θ0 = θ* + m g d sin θ* / k makes θ* the
    root (unique, k > m g d); there ω² = (k + m g d cos θ*) / (I + m d²)."""
    mass, inertia, d, k, theta = 2.0, 0.05, 0.7, 30.0, 0.5
    theta0 = theta + mass * G * d * np.sin(theta) / k
    model = pendulum(mass, inertia, d, stiffness=k, free_angle=theta0)
    eq = solver.static_equilibrium(model, formulation=formulation)
    assert eq.method == "descent" and eq.stable and eq.iterations <= 8
    assert eq.residual <= 1e-10 * mass * G
    lin = solver.linearize(model, state=eq.state, formulation=formulation)
    r = lin.body_positions[0]
    assert np.allclose(r, (d * np.sin(theta), -d * np.cos(theta), 0.0), atol=1e-9)
    w2 = (k + mass * G * d * np.cos(theta)) / (inertia + mass * d * d)
    assert abs(lin.frequencies_hz[0] - np.sqrt(w2) / (2 * np.pi)) < 1e-6 * np.sqrt(w2) / (2 * np.pi)
    assert np.allclose(eq.stiffness, lin.K, rtol=1e-6)                  # K̂ = −∂(NᵀQ)/∂z at rest


@pytest.mark.parametrize("formulation", FORMULATIONS)
def test_spring_hung_mass(formulation):
    """Mass on a vertical slide hung from a ceiling point by a spring of free length ℓ0:
    y* = y_anchor − ℓ0 − m g / k (linear: one Newton step)."""
    mass, k, l0 = 3.0, 800.0, 0.5
    m = solver.Model(name="hung", gravity=(0, -G, 0))
    m.add_body("mass", mass=mass, inertia=(0.01, 0.01, 0.01), position=(0, -l0, 0))
    m.add_joint("slide", "prismatic", "ground", "mass", origin=(0, -l0, 0), axis=(0, 1, 0))
    m.add_spring_damper("spring", "ground", "mass", point_i=(0, 0, 0), point_j=(0, -l0, 0), stiffness=k)
    eq = solver.static_equilibrium(m, formulation=formulation)
    assert eq.method == "descent" and eq.stable and eq.iterations <= 2
    y = solver.linearize(m, state=eq.state, formulation=formulation).body_positions[0, 1]
    assert abs(y - (-l0 - mass * G / k)) < 1e-9
    assert np.allclose(eq.state["qd"], 0.0) and eq.state["t"] == 0.0


def parallelogram(mA, mB, L, d):
    """Parallelogram four-bar hanging in the xy plane: links A and C (mass mA, length L) from
    ground pivots (0, 0) and (d, 0), coupler B (mass mB) between their lower ends at y = −L."""
    m = solver.Model(name="parallelogram", gravity=(0, -G, 0))
    for name, x in (("A", 0.0), ("C", d)):
        m.add_body(name, mass=mA, inertia=(1e-3, 0.06, 0.06), position=(x, -L / 2, 0), orientation=HANG)
    m.add_body("B", mass=mB, inertia=(1e-3, 0.03, 0.03), position=(d / 2, -L, 0))
    z = (0, 0, 1)
    m.add_joint("J1", "revolute", "ground", "A", origin=(0, 0, 0), axis=z)
    m.add_joint("J2", "revolute", "A", "B", origin=(0, -L, 0), axis=z)
    m.add_joint("J3", "revolute", "B", "C", origin=(d, -L, 0), axis=z)
    m.add_joint("J4", "revolute", "ground", "C", origin=(d, 0, 0), axis=z)
    return m


@pytest.mark.parametrize("formulation", FORMULATIONS)
def test_closed_loop_under_a_side_load(formulation):
    """Parallelogram four-bar (links A, C of length L hanging, coupler B) with a constant horizontal
    force F on B: virtual work with the crank angle θ, W sin θ = F L cos θ, W = g L (m_A + m_B),
    so tan θ* = F / (g (m_A + m_B)) (the coupler CM moves by L (sin θ, 1 − cos θ))."""
    mA, mB, L, d, F = 2.0, 1.5, 0.6, 0.5, 20.0
    m = parallelogram(mA, mB, L, d)
    m.add_force("push", "B", force=(F, 0, 0))
    eq = solver.static_equilibrium(m, formulation=formulation)
    assert eq.stable and eq.residual <= 1e-10 * max(1.0, F)
    theta = np.arctan(F / (G * (mA + mB)))
    rB = solver.linearize(m, state=eq.state, formulation=formulation).body_positions[2]
    assert np.allclose(rB, (d / 2 + L * np.sin(theta), -L * np.cos(theta), 0.0), atol=1e-9)


@pytest.mark.parametrize("formulation", FORMULATIONS)
@pytest.mark.parametrize("method", ("descent", "relaxation"))
def test_from_a_horizontal_pendulum(formulation, method):
    """Started horizontal, the reduced Jacobian is zero (Newton makes no step): descent (its zero
    curvature floored, the step cut to MAX_MOVE) and dynamic relaxation bring the pendulum down to
    hanging straight, a stable equilibrium."""
    model = pendulum(position=(0.7, 0, 0))
    eq = solver.static_equilibrium(model, formulation=formulation, method=method)
    print(f"horizontal pendulum ({formulation}, {method}): {eq.iterations} iterations")
    assert eq.method == method and eq.stable and eq.iterations <= (8 if method == "descent" else 20)
    assert eq.residual <= 1e-10 * 2.0 * G
    r = solver.linearize(model, state=eq.state, formulation=formulation).body_positions[0]
    assert np.allclose(r, (0, -0.7, 0), atol=1e-9)


def test_newton_alone_may_end_upside_down():
    """Started 10° short of upright, Newton alone converges to the inverted (unstable) position;
    the default method (descent) finds the hanging one."""
    a = np.radians(80.0)
    model = pendulum(position=(0.7 * np.cos(a), 0.7 * np.sin(a), 0))
    up = solver.static_equilibrium(model, method="newton", formulation="relative")
    assert up.method == "newton" and not up.stable
    assert abs(up.q[0] - np.radians(10.0)) < 1e-9                 # joint angle from the start to upright
    down = solver.static_equilibrium(model, formulation="relative")
    assert down.method == "descent" and down.stable
    assert abs(down.q[0] - np.radians(-170.0)) < 1e-9
    assert down.stiffness[0, 0] > 0 > up.stiffness[0, 0]


def test_sample_fourbar_rests_at_its_drawn_configuration():
    """The four-bar with a spring is drawn at its equilibrium: zero iterations, q unchanged."""
    path = os.path.join(os.path.dirname(__file__), "..", "..", "sample_models", "fourbar_spring.mbs.json")
    model = solver.load_model(path)
    eq = solver.static_equilibrium(model, formulation="relative")
    assert eq.iterations == 0 and eq.stable and np.allclose(eq.q, 0.0, atol=1e-12)


def test_bad_arguments():
    with pytest.raises(solver.ModelError, match="method"):
        solver.static_equilibrium(pendulum(), method="magic")
    with pytest.raises(solver.ModelError, match="tol"):
        solver.static_equilibrium(pendulum(), tol=0.0)
    with pytest.raises(solver.ModelError, match="start must have"):
        solver.static_equilibrium(pendulum(), formulation="relative", start=[0.0, 1.0])


@pytest.mark.parametrize("formulation", FORMULATIONS)
def test_run_started_at_equilibrium_stays_there(formulation):
    """simulate(initial="equilibrium"): the torsion-spring pendulum, drawn hanging straight down
    (0.5 rad from its equilibrium), starts at θ* and stays: max displacement < 1e-9 m over 1 s."""
    mass, d, k, theta = 2.0, 0.7, 30.0, 0.5
    model = pendulum(mass, 0.05, d, stiffness=k, free_angle=theta + mass * G * d * np.sin(theta) / k)
    res = solver.simulate(model, t_end=1.0, output_step=0.05, formulation=formulation, rtol=1e-10, atol=1e-12,
                          initial="equilibrium")
    r = res.body_position("bob")
    assert np.allclose(r[0], (d * np.sin(theta), -d * np.cos(theta), 0.0), atol=1e-9)
    assert np.max(np.abs(r - r[0])) < 1e-9
    assert [e["kind"] for e in res.events].count("equilibrium") == 1


def test_flexible_cantilever_started_at_equilibrium_stays_there():
    """An aluminium cantilever sagging under gravity (tip ≈ 0.36 mm): started at its static equilibrium,
    the tip node and the modal coordinates stay put over 0.5 s (< 1e-9 m)."""
    m = solver.Model(name="sag", gravity=(0, -G, 0))
    m.add_flexible_beam("beam", (0, 0, 0), (0.5, 0, 0), section={"height": 0.01, "width": 0.02},
                        material={"density": 2700.0, "youngs": 7e10}, elements=4, modes=2,
                        interface="craig_bampton")
    m.add_joint("clamp", "fixed", "ground", "beam", origin=(0, 0, 0))
    res = solver.simulate(m, t_end=0.5, output_step=0.05, rtol=1e-10, atol=1e-12, partitioning="qr",
                          initial="equilibrium")
    r, A = res.flexible_frame("beam")
    tip = r + np.einsum("nij,nj->ni", A, (0.25, 0.0, 0.0) + res.node_displacement("beam", 4))
    assert tip[0, 1] < -3e-4                         # ρ g A L⁴ / 8 E I = 0.355 mm
    assert np.max(np.abs(tip - tip[0])) < 1e-9
    assert np.max(np.abs(res.modal_coordinates("beam") - res.modal_coordinates("beam")[0])) < 1e-9


def test_start_from_equilibrium_arguments_and_cli(tmp_path, capsys):
    from solver import cli
    model = pendulum(stiffness=30.0, free_angle=0.8)
    with pytest.raises(solver.ModelError, match="simulate: initial must be"):
        solver.simulate(model, initial="rest")
    with pytest.raises(solver.ModelError, match="hold and initial='equilibrium'"):
        solver.simulate(model, initial="equilibrium", hold=["pivot"])
    model.save(tmp_path / "p.mbs.json")
    assert cli.main(["run", str(tmp_path / "p.mbs.json"), "--t-end", "0.1", "--from-equilibrium"]) == 0
    assert "started at the static equilibrium" in capsys.readouterr().out


UP = (np.cos(np.pi / 4), 0.0, 0.0, np.sin(np.pi / 4))         # body x along +y


def two_link_arm_upright(l1=0.6, l2=0.5, m1=2.0, m2=1.5):
    """Two rods standing straight up on revolute joints about z (links of length l1, l2, CMs at
    their middles): an equilibrium where the potential is largest."""
    m = solver.Model(name="arm", gravity=(0, -G, 0))
    m.add_body("upper", mass=m1, inertia=(1e-3, m1 * l1 ** 2 / 12, m1 * l1 ** 2 / 12), position=(0, l1 / 2, 0),
               orientation=UP)
    m.add_body("lower", mass=m2, inertia=(1e-3, m2 * l2 ** 2 / 12, m2 * l2 ** 2 / 12), position=(0, l1 + l2 / 2, 0),
               orientation=UP)
    m.add_joint("shoulder", "revolute", "ground", "upper", origin=(0, 0, 0), axis=(0, 0, 1))
    m.add_joint("elbow", "revolute", "upper", "lower", origin=(0, l1, 0), axis=(0, 0, 1))
    return m


@pytest.mark.parametrize("formulation", FORMULATIONS)
def test_two_link_arm_from_upright_hangs_down(formulation):
    """Drawn upright (r = 0 exactly, both ω² < 0), descent leaves along the most negative
    curvature and ends hanging: both links along gravity, CMs at (0, −l1/2) and (0, −l1 − l2/2)."""
    l1, l2 = 0.6, 0.5
    model = two_link_arm_upright(l1, l2)
    up = solver.static_equilibrium(model, formulation=formulation, method="newton")
    assert up.iterations == 0 and not up.stable
    eq = solver.static_equilibrium(model, formulation=formulation)
    print(f"two-link arm ({formulation}): {eq.iterations} iterations, max|r| {eq.residual:.1e}")
    assert eq.method == "descent" and eq.stable and eq.iterations <= 12
    assert eq.residual <= 1e-10 * 2.0 * G * (1 + l1)
    r = solver.linearize(model, state=eq.state, formulation=formulation).body_positions
    assert np.allclose(r[:, :2], [(0, -l1 / 2), (0, -l1 - l2 / 2)], atol=1e-9)


@pytest.mark.parametrize("formulation", FORMULATIONS)
def test_inverted_pendulum_goes_to_the_stable_one_unless_asked(formulation):
    """A pendulum drawn exactly inverted: the default goes down to hanging (stiffness m g d > 0);
    method="newton" returns the inverted one in 0 iterations, flagged unstable, stiffness −m g d
    (1 DOF: z is ± the joint angle, so K̂ is the joint stiffness)."""
    mass, d = 2.0, 0.7
    model = pendulum(mass, d=d, position=(0, d, 0))
    down = solver.static_equilibrium(model, formulation=formulation)
    print(f"inverted pendulum ({formulation}): {down.iterations} iterations")
    assert down.method == "descent" and down.stable and down.iterations <= 8
    assert np.allclose(solver.linearize(model, state=down.state, formulation=formulation).body_positions[0],
                       (0, -d, 0), atol=1e-9)
    up = solver.static_equilibrium(model, formulation=formulation, method="newton")
    assert up.iterations == 0 and not up.stable
    if formulation == "relative":
        assert abs(up.stiffness[0, 0] + mass * G * d) < 1e-6 * mass * G * d
        assert abs(down.stiffness[0, 0] - mass * G * d) < 1e-6 * mass * G * d


@pytest.mark.parametrize("formulation", FORMULATIONS)
def test_closed_loop_descends_on_the_constraint_manifold(formulation):
    """The parallelogram of test_closed_loop_under_a_side_load, unloaded, with a torsion spring
    k at J1 of free angle θ0: V = ½ k (θ − θ0)² − W cos θ, W = g L (m_A + m_B), so
    k (θ0 − θ*) = W sin θ*; θ* = 0.4 rad and θ0 from it (unique root: k > W).  Drawn hanging."""
    mA, mB, L, d, k, theta = 2.0, 1.5, 0.6, 0.5, 40.0, 0.4
    W = G * L * (mA + mB)
    m = parallelogram(mA, mB, L, d)
    m.add_rotational_spring_damper("spring", "J1", stiffness=k, damping=0.5, free_angle=theta + W * np.sin(theta) / k)
    eq = solver.static_equilibrium(m, formulation=formulation)
    print(f"sprung parallelogram ({formulation}): {eq.iterations} iterations")
    assert eq.method == "descent" and eq.stable and eq.iterations <= 8
    rB = solver.linearize(m, state=eq.state, formulation=formulation).body_positions[2]
    assert np.allclose(rB, (d / 2 + L * np.sin(theta), -L * np.cos(theta), 0.0), atol=1e-9)


@pytest.mark.parametrize("method", ("descent", "relaxation"))
def test_loads_without_a_potential(method):
    """A pendulum with a constant horizontal force F on its CM (an applied load: no potential in
    the energy account, so descent's merit is the loads' work along each step) started 10° short
    of upright: descent and relaxation end hanging at tan φ = F / (m g) from straight down;
    Newton at the upper equilibrium, the opposite point (−d sin φ, d cos φ), unstable."""
    mass, d, F = 2.0, 0.7, 5.0
    a = np.radians(80.0)
    model = pendulum(mass, d=d, position=(d * np.cos(a), d * np.sin(a), 0))
    model.add_force("push", "bob", force=(F, 0, 0))
    eq = solver.static_equilibrium(model, formulation="relative", method=method)
    print(f"pushed pendulum: {method}, {eq.iterations} iterations")
    assert eq.stable and eq.iterations <= (8 if method == "descent" else 40)
    phi = np.arctan(F / (mass * G))
    r = solver.linearize(model, state=eq.state, formulation="relative").body_positions[0]
    assert np.allclose(r, (d * np.sin(phi), -d * np.cos(phi), 0.0), atol=1e-9)
    up = solver.static_equilibrium(model, formulation="relative", method="newton")
    assert not up.stable
    r = solver.linearize(model, state=up.state, formulation="relative").body_positions[0]
    assert np.allclose(r, (-d * np.sin(phi), d * np.cos(phi), 0.0), atol=1e-9)


def test_auto_falls_back_to_relaxation_when_descent_fails(monkeypatch):
    """"auto" is descent, then relaxation from the start: with descent made to fail, the pendulum
    pushed sideways still ends at tan φ = F / (m g), found by relaxation."""
    from solver.analysis import equilibrium

    def fail(self, q):
        raise solver.SolverError("descent made to fail", kind="equilibrium")
    monkeypatch.setattr(equilibrium._Solver, "_descent", fail)
    mass, d, F = 2.0, 0.7, 5.0
    a = np.radians(80.0)
    model = pendulum(mass, d=d, position=(d * np.cos(a), d * np.sin(a), 0))
    model.add_force("push", "bob", force=(F, 0, 0))
    eq = solver.static_equilibrium(model, formulation="relative")
    assert eq.method == "relaxation" and eq.stable
    phi = np.arctan(F / (mass * G))
    r = solver.linearize(model, state=eq.state, formulation="relative").body_positions[0]
    assert np.allclose(r, (d * np.sin(phi), -d * np.cos(phi), 0.0), atol=1e-9)


def test_auto_finds_the_hanging_flexible_singular_fourbar():
    """The flexible four-bar sample, released 10° above its singular position.  Descent's tangent
    steps pass the singular position since the position Newton's bound follows the run's atol
    (partition.position_tolerance); where they do not, "auto" starts over with dynamic relaxation —
    either way it ends hanging: crank and rocker CMs straight below their pivots (0, −0.5) and
    (1, −0.5), the swing at the rigid sample's frequency (found by descent)."""
    folder = os.path.join(os.path.dirname(__file__), "..", "..", "sample_models")
    flexible = solver.load_model(os.path.join(folder, "fourbar_singular_flexible.mbs.json"))
    eq = solver.static_equilibrium(flexible)
    print(f"flexible singular four-bar: {eq.method}, {eq.iterations} iterations ({len(eq.history)} in all)")
    assert eq.method in ("descent", "relaxation") and eq.stable and eq.iterations <= 50
    lin = solver.linearize(flexible, state=eq.state)
    assert lin.body_names == ["crank", "rocker"]
    assert np.allclose(lin.body_positions, [(0, -0.5, 0), (1, -0.5, 0)], atol=1e-9)
    rigid = solver.linearize(solver.load_model(os.path.join(folder, "fourbar_singular_rigid.mbs.json")),
                             state="equilibrium")
    assert abs(lin.frequencies_hz[0] - rigid.frequencies_hz[0]) < 1e-6 * rigid.frequencies_hz[0]
