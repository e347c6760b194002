"""solver.InteractiveRun (Interact mode): chunked runs continue exactly, the pull's spring settles a body
where it balances gravity (closed form), its reactions include the pull on every path."""
import numpy as np
import pytest
from scipy.optimize import brentq

import solver

G = 9.81
OMEGA = 2.0 * np.pi * solver.PULL_FREQUENCY


def pendulum(mass=2.0, length=0.5, theta=0.0):
    """A point-like body (isotropic inertia) on a revolute about z at the origin, at angle θ from +x."""
    m = solver.Model(name="pendulum", gravity=(0.0, -G, 0.0))
    m.add_body("rod", mass=mass, inertia=(mass * 1e-3,) * 3,
               position=(length * np.cos(theta), length * np.sin(theta), 0.0))
    m.add_joint("J1", "revolute", "ground", "rod", origin=(0.0, 0.0, 0.0), axis=(0.0, 0.0, 1.0))
    return m


def slider(mass):
    m = solver.Model(name="slider", gravity=(0.0, -G, 0.0))
    m.add_body("b", mass=mass, inertia=(mass * 1e-2,) * 3, position=(0.0, 0.0, 0.0))
    m.add_joint("J1", "prismatic", "ground", "b", origin=(0.0, 0.0, 0.0), axis=(0.0, 1.0, 0.0))
    return m


def test_chunks_without_pull_equal_simulate():
    """60 chunks of 1/60 s (default path: generated kernels, the compiled step loop) against one run:
    each chunk restarts the step-size control, so they agree to the integrator's tolerance."""
    m = pendulum()
    run = solver.InteractiveRun(m)
    assert run.compiled.generated
    for _ in range(60):
        run.step(1.0 / 60.0)
    res = run.results()
    ref = solver.simulate(m, t_end=1.0, output_step=1.0 / 60.0)
    assert res.status == "ok" and len(res.t) == len(ref.t)
    np.testing.assert_allclose(res.t, ref.t, rtol=0, atol=1e-12)
    tol = 100 * m.settings.rtol * 0.5            # 100 × rtol of the 0.5 m arm over 60 restarts
    assert np.max(np.abs(res.body_position("rod") - ref.body_position("rod"))) < tol
    assert np.max(np.abs(res.energy["total"] - ref.energy["total"])) < 100 * m.settings.rtol * 2.0 * G * 0.5


@pytest.mark.parametrize("integrator", ["bdf", "radau"])
def test_python_loop_continues_one_integration_across_chunks(integrator):
    """With an integrator of the Python loop (BDF: the car's saved setting) a chunk continues the
    last chunk's integrator instead of starting one — one integrator object for the whole session
    while the load only moves, a fresh one after a grab (a jump of the load) — and 60 chunks equal
    one simulate run to the integrators' tolerance (the continued steps end on the frame times)."""
    m = pendulum(theta=0.3)
    run = solver.InteractiveRun(m, integrator=integrator)
    integrators = set()
    for _ in range(60):
        run.step(1.0 / 60.0)
        integrators.add(id(run.run.kept[1]))
    assert len(integrators) == 1
    res = run.results()
    ref = solver.simulate(m, t_end=1.0, output_step=1.0 / 60.0, integrator=integrator)
    assert res.status == ref.status == "ok"
    assert np.max(np.abs(res.body_position("rod") - ref.body_position("rod"))) < 100 * m.settings.rtol * 0.5
    run = solver.InteractiveRun(m, integrator=integrator)
    run.step(1.0 / 60.0)
    before = run.run.kept[1]
    run.move_target((0.0, 0.0, 0.0))            # no pull yet: nothing
    run.step(1.0 / 60.0)
    assert run.run.kept[1] is before
    r, _ = run.frame(0)
    run.set_pull("rod", r, r + 0.01)
    run.step(1.0 / 60.0)
    assert run.run.kept[1] is not before


@pytest.mark.parametrize("mass", [1e-3, 100.0])
def test_pull_settles_where_spring_balances_gravity(mass):
    """A slider moves along y only, with effective mass m: k = m ω², so the sag below the target is
    g/ω² whatever the mass (and no force across the slide)."""
    run = solver.InteractiveRun(slider(mass))
    run.set_pull("b", (0.1, 0.0, 0.0), (0.1, 0.5, 0.0))
    for _ in range(180):
        run.step(1.0 / 60.0)
    r, _ = run.frame(0)
    assert abs(r[1] - (0.5 - G / OMEGA**2)) < 1e-9
    assert np.max(np.abs(run.qd)) < 1e-9


@pytest.mark.parametrize("options", [{"formulation": "cartesian"}, {"formulation": "relative"}, {"codegen": "off"}])
def test_pulled_pendulum_holds_its_equilibrium_and_reaction(options):
    """Anchor at the CM r = L(cos θ, sin θ), target X.  The CM moves only along the tangent t, with
    effective mass Λ = I_pivot/L² (I_pivot = I_zz + m L²): the pull is F = Λ ω² (t·(X − r)) t at rest.
    The equilibrium angle solves the torque balance about the pivot r × (F − m g ŷ) = 0 (a scalar
    root, brentq); started there, the pulled pendulum stays, and the pivot's recorded reaction on the
    rod is −(F + m g): reactions include the pull on every path."""
    mass, length, target = 2.0, 0.5, np.array([0.5, 0.3, 0.0])
    weight = np.array([0.0, -mass * G, 0.0])

    def at(theta):
        return length * np.array([np.cos(theta), np.sin(theta), 0.0])

    def pull(theta):
        r = at(theta)
        t = np.array([-np.sin(theta), np.cos(theta), 0.0])
        return (mass * 1e-3 + mass * length**2) / length**2 * OMEGA**2 * (t @ (target - r)) * t

    def torque(theta):
        return np.cross(at(theta), pull(theta) + weight)[2]

    theta = brentq(torque, 0.0, np.pi / 2, xtol=1e-15)
    run = solver.InteractiveRun(pendulum(mass, length, theta), **options)
    r0 = at(theta)
    run.set_pull("rod", r0, target)
    for _ in range(30):
        run.step(1.0 / 60.0)
    r, _ = run.frame(0)
    assert np.linalg.norm(r - r0) < 1e-9 * length
    res = run.results()
    force, _ = res.joint_reaction("J1")
    np.testing.assert_allclose(force[-1], -(pull(theta) + weight), atol=1e-8 * mass * G)
    assert res.meta["interactive"]


def test_held_load_and_bad_input():
    run = solver.InteractiveRun(slider(1.0))
    run.set_load("push", "b", (0.0, G, 0.0))       # holds the weight: stays at rest
    for _ in range(30):
        run.step(1.0 / 60.0)
    assert abs(run.frame(0)[0][1]) < 1e-12
    with pytest.raises(solver.ModelError, match="body"):
        run.set_pull("nope", (0, 0, 0), (0, 0, 0))
    with pytest.raises(solver.ModelError, match="dt"):
        run.step(0.0)


@pytest.mark.parametrize("options", [{}, pytest.param({"codegen": "off", "formulation": "relative"},
                                                      marks=pytest.mark.sweep)])    # generic: 4 s
def test_speed_scale_doubles_a_constant_speed_crank(options):
    """A crank driven at θ = ω t (ω = 2 rad/s) carries a free pendulum (1 DOF to interact with).  Its
    speed scale 1 for 0.5 s, then 2 for 0.5 s: the warped time τ = 0.5 + 2 (t − 0.5) gives θ(1 s) =
    ω τ(1) = 3 rad and θ̇ = 2ω from the change on (closed form), on the default path (the first
    scale ≠ 1 leaves the compiled loop for the Python one) and the generic relative one."""
    omega, arm = 2.0, 0.4
    m = solver.Model(name="crank", gravity=(0.0, -G, 0.0))
    m.add_body("crank", mass=1.0, inertia=(1e-2,) * 3, position=(arm, 0.0, 0.0))
    m.add_joint("pin", "revolute", "ground", "crank", origin=(0.0, 0.0, 0.0), axis=(0.0, 0.0, 1.0))
    m.add_body("bob", mass=0.5, inertia=(1e-3,) * 3, position=(2 * arm, -0.3, 0.0))
    m.add_joint("hinge", "revolute", "crank", "bob", origin=(2 * arm, 0.0, 0.0), axis=(0.0, 0.0, 1.0))
    m.add_driver("motor", "pin", expression=f"{omega}*t")
    run = solver.InteractiveRun(m, **options)
    for _ in range(30):
        run.step(1.0 / 60.0)
    run.set_speed(2.0)
    for _ in range(30):
        run.step(1.0 / 60.0)
    r, _ = run.frame(0)
    assert abs(run.t - 1.0) < 1e-12
    assert abs(np.arctan2(r[1], r[0]) - omega * (0.5 + 2.0 * 0.5)) < 1e-9
    res = run.results()
    assert res.status == "ok"
    rate = res.body_angular_velocity("crank")[:, 2]
    np.testing.assert_allclose(rate[res.t <= 0.5 - 1e-9], omega, rtol=0, atol=1e-9)
    np.testing.assert_allclose(rate[res.t > 0.5 + 1e-9], 2.0 * omega, rtol=0, atol=1e-9)
    with pytest.raises(solver.ModelError, match="speed"):
        run.set_speed(-1.0)


def test_grab_at_a_singular_pose_gives_a_bounded_kick():
    """The double pendulum sample starts straight: its lower CM cannot move along the arm, so the
    point's effective inertia Λ is unbounded there, and held over a frame the pull kicked it to
    4346 J.  With Λ's eigenvalues capped at PULL_INERTIA_CAP × the total mass M, the kinetic energy
    stays below what the sources can give: the pull spring's energy at the cap, ½ Λ_cap ω² d², plus
    the largest fall of gravity's potential, M g (reach 1 m)."""
    from pathlib import Path
    m = solver.load_model(str(Path(__file__).resolve().parents[2] / "sample_models" / "double_pendulum.mbs.json"))
    run = solver.InteractiveRun(m)
    run.step(1.0 / 60.0)
    r, _ = run.frame(1)
    target = r + np.array([-0.2, -0.35, 0.0])
    run.set_pull("lower", r, target)
    total = sum(b.mass for b in m.bodies.values())
    bound = 0.5 * solver.analysis.interactive.PULL_INERTIA_CAP * total * OMEGA**2 * np.sum((target - r)**2) \
        + total * G * 1.0
    kinetic = []
    for _ in range(30):
        run.step(1.0 / 60.0)
        kinetic.append(run.live()["energy"][0])
    assert max(kinetic) < bound
