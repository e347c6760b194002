"""Joint armature (solver/formulations/armature.py): a rotor's inertia a on a joint coordinate θ,
kinetic energy ½ a θ̇² — M_θθ += a in the relative formulation, M += a gᵀg and Q −= a gᵀ(ġq̇) in
the Cartesian one and on the relative formulation's cut joints.  Closed forms on every path
(generated relative kernels, an articulated open tree, the generic relative and Cartesian paths),
the two formulations against each other where the Cartesian velocity term matters, energy
conservation, the driving force, and MuJoCo's qM (tests/solver/test_mjcf.py, test_mjcf_corpus.py)."""
from __future__ import annotations

import numpy as np
import pytest

import solver

G = 9.81
PATHS = [("relative", False), ("cartesian", "auto")]


def slider(a, m=2.0):
    """A body on a vertical prismatic joint under gravity: (m + a) s̈ = −m g."""
    model = solver.Model(name="slider", gravity=(0.0, 0.0, -G))
    model.add_body("b", mass=m, inertia=(0.1, 0.1, 0.1), position=(0.0, 0.0, 0.0))
    model.add_joint("j", "prismatic", "ground", "b", origin=(0.0, 0.0, 0.0), axis=(0.0, 0.0, 1.0), armature=a)
    return model


def wheel(a, torque=1.5, izz=0.3):
    """A body on a revolute joint about its CM with a constant torque: (I_zz + a) θ̈ = τ."""
    model = solver.Model(name="wheel", gravity=(0.0, 0.0, 0.0))
    model.add_body("b", mass=2.0, inertia=(0.1, 0.2, izz), position=(0.0, 0.0, 0.0))
    model.add_joint("j", "revolute", "ground", "b", origin=(0.0, 0.0, 0.0), axis=(0.0, 0.0, 1.0), armature=a)
    model.add_torque("T", "b", torque=(0.0, 0.0, torque))
    return model


@pytest.mark.parametrize("formulation, codegen", PATHS, ids=[f"{f}-{c}" for f, c in PATHS])
def test_closed_forms_on_every_path(formulation, codegen):
    """s(t) = −½ g m/(m + a) t² and θ(t) = ½ τ/(I + a) t², to the integrator's tolerance (these
    motions are polynomials of degree 2: the error is round-off); the kinetic energy includes
    ½ a θ̇².  The generic relative path and the Cartesian formulation's generated kernels (M += a gᵀg,
    Q −= a gᵀ(ġq̇) derived with the joint coordinate).  The relative kernels' armature (articulated.c,
    relative.c) is checked against the other paths below (the arm) and against MuJoCo
    (tests/solver/test_mjcf.py: the gimbal and the chain)."""
    t = 1.0
    res = solver.simulate(slider(0.5), t_end=t, output_step=0.5, formulation=formulation, codegen=codegen)
    assert res.status == "ok"
    assert res.body_position("b")[-1, 2] == pytest.approx(-0.5 * G * 2.0 / 2.5 * t ** 2, rel=1e-9)
    res = solver.simulate(wheel(0.7), t_end=t, output_step=0.5, formulation=formulation, codegen=codegen)
    R = res.body_rotation("b")[-1]
    assert np.arctan2(R[1, 0], R[0, 0]) == pytest.approx(0.5 * 1.5 / 1.0 * t ** 2, rel=1e-7)
    assert res.energy["kinetic"][-1] == pytest.approx(0.5 * 1.0 * 1.5 ** 2, rel=1e-7)     # ½ (I + a) θ̇²
    if codegen == "auto":
        assert any("compiled kernels" in e["message"] for e in res.events if e["kind"] == "codegen"), res.events


def arm():
    """A slider on a spinning arm, both with armature: the slider's coordinate has ġq̇ ≠ 0 in the
    Cartesian formulation (the centripetal terms of the arm's rotation)."""
    model = solver.Model(name="arm", gravity=(0.0, -G, 0.0))
    model.add_body("a", mass=1.0, inertia=(0.01, 0.05, 0.05), position=(0.3, 0.0, 0.0), angular_velocity=(0, 0, 2.0))
    model.add_body("s", mass=0.5, inertia=(0.002, 0.002, 0.002), position=(0.5, 0.0, 0.0),
                   angular_velocity=(0.0, 0.0, 2.0), velocity=(0.0, 1.0, 0.0))
    model.add_joint("r", "revolute", "ground", "a", origin=(0.0, 0.0, 0.0), axis=(0.0, 0.0, 1.0), armature=0.2)
    model.add_joint("p", "prismatic", "a", "s", origin=(0.5, 0.0, 0.0), axis=(1.0, 0.0, 0.0), armature=0.3)
    return model


def fourbar():
    """A four-bar with armature on every joint: one of them is the relative formulation's cut joint."""
    model = solver.Model(name="fourbar", gravity=(0.0, -G, 0.0))
    model.add_body("c", mass=1.0, inertia=(0.01, 0.01, 0.01), position=(0.0, 0.1, 0.0), angular_velocity=(0, 0, 3.0))
    model.add_body("l", mass=1.0, inertia=(0.01, 0.05, 0.05), position=(0.2, 0.2, 0.0))
    model.add_body("o", mass=1.0, inertia=(0.01, 0.02, 0.02), position=(0.45, 0.1, 0.0))
    for name, i, j, x, a in (("A", "ground", "c", (0, 0, 0), 0.1), ("B", "c", "l", (0, 0.2, 0), 0.05),
                             ("C", "l", "o", (0.4, 0.2, 0), 0.07), ("D", "o", "ground", (0.5, 0, 0), 0.2)):
        model.add_joint(name, "revolute", i, j, origin=x, axis=(0.0, 0.0, 1.0), armature=a)
    return model


@pytest.mark.parametrize("make", [arm, fourbar])
def test_formulations_agree_and_energy_is_conserved(make):
    """The Cartesian formulation's M += a gᵀg, Q −= a gᵀ(ġq̇) (generated kernels) against the relative
    one (generated kernels for the arm; the four-bar's cut joint on the generic path: its M += a gᵀg
    through the chain rule), 0.2 s at rtol 1e-10: positions agree to ≈ 1e-9 m (measured: arm 2e-10, four-bar
    6e-10 over 1 s) and the total energy — ½ a θ̇² included — stays constant to ≈ 1e-8 of its size.
    Without the Cartesian ġq̇ term the arm's energy drifts by ≈ 1e-3 (checked below)."""
    runs = {}
    for formulation in ("relative", "cartesian"):
        res = solver.simulate(make(), t_end=0.2, output_step=0.1, formulation=formulation, rtol=1e-10, atol=1e-12)
        assert res.status == "ok"
        if formulation == "cartesian" or make is arm:
            assert any("compiled kernels" in e["message"] for e in res.events if e["kind"] == "codegen")
        e = res.energy["total"]
        assert np.max(np.abs(e - e[0])) < 1e-7 * max(1.0, abs(e[0])), formulation
        runs[formulation] = res
    worst = max(float(np.max(np.abs(runs["relative"].body_position(b) - runs["cartesian"].body_position(b))))
                for b in make().bodies)
    print(f"{make.__name__}: largest CM difference {worst:.1e} m")
    assert worst < 1e-8
    # the reactions are the joint's alone (the rotor's a θ̈ is not carried through the joint) in both
    for name in make().joints:
        for k in range(2):
            ours, theirs = runs["relative"].joint_reaction(name)[k], runs["cartesian"].joint_reaction(name)[k]
            assert np.max(np.abs(ours - theirs)) < 1e-6 * max(1.0, np.max(np.abs(theirs))), name


def test_the_cartesian_kernels_equal_the_generic_terms():
    """The generated Cartesian M and Q (armature derived with the joint coordinate) against the
    generic CartesianSystem's at a state with random velocities: round-off; and the armature is in
    them (M differs from the model's without it)."""
    compiled = solver.compile_model(arm(), formulation="cartesian")
    generic = solver.compile_model(arm(), formulation="cartesian", codegen=False).system
    assert compiled.generated
    q, qd, _ = generic.initial_state()
    qd = qd + np.random.default_rng(0).normal(0.0, 1.0, qd.size)
    M = compiled.system.mass(q)
    assert np.max(np.abs(M - generic.mass(q))) <= 1e-14 * np.max(np.abs(M))
    Q = compiled.system.forces(q, qd, 0.0)
    assert np.max(np.abs(Q - generic.forces(q, qd, 0.0))) <= 1e-13 * np.max(np.abs(Q))
    bare = arm()
    for joint in bare.joints.values():
        joint.set("armature", 0.0)
    assert np.max(np.abs(M - solver.compile_model(bare, formulation="cartesian", codegen=False).system.mass(q))) > 0.1


def test_the_cartesian_velocity_term_is_needed(monkeypatch):
    """Without Q −= a gᵀ(ġq̇) the Cartesian arm's energy is not conserved (the generic path, whose
    terms the generated kernels equal to round-off): the test above would see it."""
    from solver.formulations.cartesian import CartesianSystem
    terms = CartesianSystem._armature_terms
    monkeypatch.setattr(CartesianSystem, "_armature_terms",
                        lambda self, q, qd: [(c, g, 0.0, a) for c, g, _, a in terms(self, q, qd)])
    res = solver.simulate(arm(), t_end=0.3, output_step=0.1, formulation="cartesian", codegen=False, rtol=1e-10,
                          atol=1e-12)
    e = res.energy["total"]
    assert np.max(np.abs(e - e[0])) > 1e-4


@pytest.mark.parametrize("formulation", ["relative", "cartesian"])
def test_the_driving_force_accelerates_the_rotor_too(formulation):
    """A driven wheel θ = t² (no gravity, no load): the driver's torque is (I_zz + a) θ̈ = 2 (I_zz + a);
    a free wheel's reaction has no torque about its axis (the rotor's a θ̈ is not the joint's)."""
    model = wheel(0.7, torque=0.0)
    model.add_driver("d", joint="j", expression="t^2")
    res = solver.simulate(model, t_end=0.5, output_step=0.25, formulation=formulation)
    assert res.status == "ok"
    np.testing.assert_allclose(res.driver_force("d"), 2.0 * (0.3 + 0.7), rtol=1e-8)
    free = solver.simulate(wheel(0.7), t_end=0.5, output_step=0.25, formulation=formulation)
    assert np.max(np.abs(free.joint_reaction("j")[1][:, 2])) < 1e-12


def test_armature_is_refused_where_a_joint_has_no_single_coordinate():
    model = solver.Model(name="m")
    model.add_body("b", mass=1.0, inertia=(1.0, 1.0, 1.0), position=(0.0, 0.0, 0.0))
    with pytest.raises(solver.ModelError, match=r"joint 'j'.*armature: a spherical joint has no armature"):
        model.add_joint("j", "spherical", "ground", "b", armature=0.1)
    with pytest.raises(solver.ModelError, match="armature"):
        model.add_joint("j", "revolute", "ground", "b", armature=-1.0)


def test_armature_round_trips_through_the_project_file(tmp_path):
    model = slider(0.25)
    path = tmp_path / "s.mbs.json"
    model.save(str(path))
    assert solver.load_model(str(path)).joints["j"].armature == 0.25
    assert '"armature"' not in (lambda m: (m.save(str(tmp_path / "z.mbs.json")),
                                           (tmp_path / "z.mbs.json").read_text())[1])(slider(0.0))


@pytest.mark.sweep
def test_an_fmu_of_a_model_with_armature_equals_the_solver(tmp_path):
    """The FMU (Cartesian generated kernels, armature derived in them) against the default run at
    rtol 1e-10: the slider's position to 1e-9 m (measured 3.8e-13 m).  A sweep test: its FMU build
    takes ≈ 10 s."""
    fmpy = pytest.importorskip("fmpy")
    from solver.fmu import export_fmu
    model = arm()
    path = export_fmu(model, tmp_path / "arm.fmu", step=0.05)
    res = solver.simulate(model, t_end=0.2, output_step=0.05, rtol=1e-10, atol=1e-12)
    names = [f"bodies.s.position.{c}" for c in "xyz"]
    fmu = fmpy.simulate_fmu(str(path), stop_time=0.2, output_interval=0.05, relative_tolerance=1e-10, output=names)
    assert np.max(np.abs(np.stack([fmu[n] for n in names], 1) - res.body_position("s"))) < 1e-9
