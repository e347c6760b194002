"""Coupler constraints (solver.model.elements.Coupler; the row θ_j − p(θ_i) of
solver/formulations/rows.py) against closed forms on every path.

Gear pair (no gravity): shafts on revolutes to ground, I1 and I2 about their axes, θ2 = −r θ1, torque
τ on shaft 1.  The energy ½ (I1 + r² I2) θ̇1² gives α1 = τ / (I1 + r² I2); the tooth torque on shaft 2
along its axis is I2 α2 = −r I2 α1 (the coupler force), and joint 1 carries τ_J1 = I1 α1 − τ about
its axis.  With a torsional spring k on joint 2: ω² = r² k / (I1 + r² I2) (the reflected inertia).
"""
import math

import numpy as np
import pytest

import solver

R, I1, I2, TAU = 2.0, 0.3, 0.5, 1.5
ALPHA1 = TAU / (I1 + R * R * I2)


def gear_pair(ratio=-R, torque=TAU):
    m = solver.Model(name="gear pair", gravity=(0.0, 0.0, 0.0))
    m.add_body("shaft1", mass=1.0, inertia=(0.2, 0.2, I1), position=(0.0, 0.0, 0.0))
    m.add_body("shaft2", mass=2.0, inertia=(0.3, 0.3, I2), position=(1.0, 0.0, 0.0))
    m.add_joint("J1", "revolute", "ground", "shaft1", origin=(0, 0, 0), axis=(0, 0, 1))
    m.add_joint("J2", "revolute", "ground", "shaft2", origin=(1, 0, 0), axis=(0, 0, 1))
    m.add_coupler("mesh", "J1", "J2", ratio=ratio)
    m.add_torque("drive", "shaft1", torque=(0.0, 0.0, torque))
    return m


def gears_and_slider():
    """The gear pair (a linear coupler of two angles) and a slider on a prismatic along x whose
    displacement x drives a third wheel: θ3 = 0.1 − 0.7 x + 0.4 x² + 0.3 x³ (a cubic of a translation)."""
    m = gear_pair()
    m.add_body("slider", mass=1.0, inertia=(0.1, 0.1, 0.1), position=(0.0, 1.0, 0.0))
    m.add_body("wheel", mass=1.0, inertia=(0.1, 0.1, 0.15), position=(0.0, 2.0, 0.0))
    m.add_joint("S1", "prismatic", "ground", "slider", origin=(0, 1, 0), axis=(1, 0, 0))
    m.add_joint("J3", "revolute", "ground", "wheel", origin=(0, 2, 0), axis=(0, 0, 1))
    m.add_coupler("cubic", "S1", "J3", coefficients=[0.1, -0.7, 0.4, 0.3])
    return m


def angle_about_z(res, body):
    A = res.body_rotation(body)
    return np.unwrap(np.arctan2(A[:, 1, 0], A[:, 0, 0]))


PATHS = [(f, cg, i) for f in ("relative", "cartesian") for cg in ("on", "off") for i in ("auto", "rk45", "bdf")]


@pytest.mark.parametrize("formulation,codegen,integrator", PATHS)
def test_a_gear_pair_follows_its_closed_form(formulation, codegen, integrator):
    """θ1 = ½ α1 t², θ2 = −r θ1; tooth torque and the reactions about the axes.  Bounds: the
    integrators' error at the default tolerances (rtol 1e-8 over θ ≤ 1.4 rad: ≲ 1e-6 rad); the
    multipliers solve a linear system at each point (1e-8 N·m)."""
    res = solver.simulate(gear_pair(), t_end=1.0, output_step=0.1, formulation=formulation, codegen=codegen,
                          integrator=integrator)
    assert res.status == "ok"
    theta1 = 0.5 * ALPHA1 * res.t ** 2
    assert np.max(np.abs(angle_about_z(res, "shaft1") - theta1)) < 1e-6
    assert np.max(np.abs(angle_about_z(res, "shaft2") + R * theta1)) < 2e-6
    assert np.allclose(res.coupler_force("mesh"), -R * I2 * ALPHA1, atol=1e-8)
    assert np.array_equal(solver.output(gear_pair(), "couplers.mesh.force").evaluate(res, gear_pair()),
                          res.coupler_force("mesh"))
    assert np.allclose(res.joint_reaction("J2")[1][:, 2], -R * I2 * ALPHA1, atol=1e-8)
    assert np.allclose(res.joint_reaction("J1")[1][:, 2], I1 * ALPHA1 - TAU, atol=1e-8)


@pytest.mark.parametrize("options", [{"integrator": "galpha"}, {"constraints": "parametric"},
                                     {"partitioning": "qr"}, {"integrator": "adams"},
                                     {"integrator": "dop853", "formulation": "relative"},
                                     {"integrator": "adams", "formulation": "relative"},
                                     {"planar": "auto"}, {"planar": "auto", "formulation": "relative"}])
def test_a_gear_pair_on_the_other_paths(options):
    """Generalized-α (the coupler's (Φ_qᵀλ)_q), the parametric joint form (α_j − p(α_i)), QR, the
    other integrators, the planar joint forms."""
    options = {"formulation": "cartesian", **options}
    m = gear_pair()                 # (the kernels of the gear pair are built once, for the closed-form test above)
    if "planar" in options:
        m.settings.set("planar", options.pop("planar"))
    res = solver.simulate(m, t_end=0.2, output_step=0.1, **options)
    assert res.status == "ok"
    assert any(e["message"].startswith("planar: the model is planar") for e in res.events) == (
        m.settings.planar == "auto")
    assert np.max(np.abs(angle_about_z(res, "shaft2") + R * 0.5 * ALPHA1 * res.t ** 2)) < 1e-5
    assert np.allclose(res.coupler_force("mesh"), -R * I2 * ALPHA1, atol=1e-6)


def test_the_generated_kernels_evaluate_couplers_as_the_generic_path():
    """Φ, Φ_q, ν, γ of the kernels equal the generic evaluators' at random states (Cartesian: a linear
    coupler of two angles, a cubic of a translation driving an angle; relative: a quadratic of a tree
    angle); a polynomial of degree > 1 of an angle is the relative formulation's only (its branch
    enters Φ nonlinearly, and the conventional Cartesian form cannot tell it when it post-processes)."""
    from solver.codegen import CodegenCartesianSystem, CodegenRelativeSystem
    from solver.formulations.cartesian import CartesianSystem
    from solver.formulations.relative import RelativeSystem
    m = gears_and_slider()
    rng = np.random.default_rng(5)
    for generic, generated in ((CartesianSystem(m), CodegenCartesianSystem(m)), (None, None)):
        if generic is None:
            m.remove("cubic")
            m.add_coupler("quadratic", "J2", "S1", coefficients=[0.0, 0.5, -0.25])
            generic, generated = RelativeSystem(m), CodegenRelativeSystem(m)
        q, _, _ = generic.initial_state()
        for _ in range(3):
            x = generic.normalize(q + 0.4 * rng.standard_normal(generic.nq)) if hasattr(generic, "normalize") \
                else q + 0.4 * rng.standard_normal(generic.nq)
            xd = rng.standard_normal(generic.nq)
            a, b = generic.constraints(x, 0.3, xd, level=2), generated.constraints(x, 0.3, xd, level=2)
            for u, v in ((a.phi, b.phi), (a.jac, b.jac), (a.nu, b.nu), (a.gamma, b.gamma)):
                assert np.allclose(u, v, rtol=1e-10, atol=1e-12)
    m = gear_pair()
    m.remove("mesh")
    m.add_coupler("square", "J1", "J2", coefficients=[0.0, 1.0, 0.5])
    with pytest.raises(solver.ModelError, match="coupler 'square': a polynomial of degree > 1 of an angle needs"):
        solver.compile_model(m, formulation="cartesian")
    assert solver.compile_model(m, formulation="relative").generated


def test_the_natural_frequency_of_a_gear_pair_has_the_reflected_inertia():
    m = gear_pair(torque=0.0)
    m.add_rotational_spring_damper("shaft2_spring", "J2", stiffness=40.0)
    expected = math.sqrt(R * R * 40.0 / (I1 + R * R * I2)) / (2 * math.pi)
    for formulation in ("relative", "cartesian"):
        lin = solver.linearize(solver.compile_model(m, formulation=formulation, codegen="off"))
        assert lin.frequencies_hz == pytest.approx([expected], rel=1e-9)


@pytest.mark.parametrize("options", [{"formulation": "relative"},
                                     {"formulation": "cartesian", "constraints": "parametric"}])
def test_a_polynomial_coupler_with_offset_follows_its_driven_leader(options):
    """A mimic-like coupler on a kinematic run: θ_i = 0.8 sin 2t prescribed, θ_j = 0.1 + 0.5 θ_i + 0.2 θ_i²
    exactly (assembly moves joint_j to the offset 0.1 at t = 0); the follower's rates by the chain rule;
    then θ_i = 3t for 2 s (past π: the branch matters): the coupler force f = I2 θ̈_j, the motor
    torque p'(θ_i) f, and the leading joint's reaction about its axis I1 θ̈_i = 0 — the motor's torque
    less the coupler's p'(θ_i) f on the branch the angle is on."""
    m = gear_pair(torque=0.0)
    m.remove("mesh")
    m.add_coupler("mimic", "J1", "J2", coefficients=[0.1, 0.5, 0.2])
    m.add_driver("motor", "J1", expression="0.8*sin(2*t)")
    res = solver.simulate(m, t_end=1.0, output_step=0.1, **options)
    assert res.status == "ok"
    th = 0.8 * np.sin(2 * res.t)
    th_d = 1.6 * np.cos(2 * res.t)
    assert np.max(np.abs(angle_about_z(res, "shaft2") - (0.1 + 0.5 * th + 0.2 * th ** 2))) < 1e-8
    w2 = res.body_angular_velocity("shaft2")[:, 2]
    assert np.max(np.abs(w2 - (0.5 + 0.4 * th) * th_d)) < 1e-7
    m.set_field("motor", "expression", "3*t")
    res = solver.simulate(m, t_end=2.0, output_step=0.1, **options)
    th = 3.0 * res.t
    tooth = I2 * 0.4 * 3.0 ** 2                           # I2 θ̈2, θ̈2 = p''(θ) θ̇² (θ̈ = 0)
    assert np.allclose(res.coupler_force("mimic"), tooth, rtol=1e-6)
    assert np.allclose(res.driver_force("motor"), (0.5 + 0.4 * th) * tooth, rtol=1e-6)
    assert np.max(np.abs(res.joint_reaction("J1")[1][:, 2])) < 1e-6 * tooth      # I1 θ̈ = 0: driver − p' f


def test_a_linear_mimic_with_offset_assembles_and_reports_its_force():
    """URDF-style mimic θ_j = 0.5 θ_i + 0.3 under torque: assembly takes the nearest configuration
    on the coupler (least change: θ1 = −0.12, θ2 = 0.24 rad), and the energy ½ (I1 + ¼ I2) θ̇1² gives
    α1 = τ / (I1 + I2/4); coupler force I2 α2 = ½ I2 α1."""
    m = gear_pair(ratio=0.5)
    m.set_field("mesh", "offset", 0.3)
    res = solver.simulate(m, t_end=1.0, output_step=0.1)
    alpha1 = TAU / (I1 + 0.25 * I2)
    theta1, theta2 = angle_about_z(res, "shaft1"), angle_about_z(res, "shaft2")
    assert theta1[0] == pytest.approx(-0.12, abs=1e-9) and theta2[0] == pytest.approx(0.24, abs=1e-9)
    assert np.max(np.abs(theta1 - theta1[0] - 0.5 * alpha1 * res.t ** 2)) < 1e-6
    assert np.max(np.abs(theta2 - (0.5 * theta1 + 0.3))) < 1e-8
    assert np.allclose(res.coupler_force("mesh"), 0.5 * I2 * alpha1, atol=1e-8)


def test_the_cartesian_evaluators_agree_on_a_polynomial_coupler():
    """Batched and per-joint evaluators, Φ_q of the cubic coupler against central differences of Φ,
    γ against Φ_q q̇ differentiated along q̇, and (Φ_qᵀλ)_q against differences of Φ_qᵀλ."""
    from solver.formulations.cartesian import CartesianSystem
    system = CartesianSystem(gears_and_slider())
    rng = np.random.default_rng(3)
    q, _, _ = system.initial_state()
    q = system.normalize(q + 0.3 * rng.standard_normal(system.nq))
    qd = rng.standard_normal(system.nq)
    batch, ref = system.constraints(q, 0.0, qd, level=2), system.constraints_per_joint(q, 0.0, qd, level=2)
    for a, b in ((batch.phi, ref.phi), (batch.jac, ref.jac), (batch.gamma, ref.gamma)):
        assert np.allclose(a, b, atol=1e-12)
    row = system.couplers[1].row
    eps = 1e-6
    fd = [(system.constraints(q + eps * e, 0.0).phi[row] - system.constraints(q - eps * e, 0.0).phi[row]) / (2 * eps)
          for e in np.eye(system.nq)]
    assert np.allclose(batch.jac[row], fd, atol=1e-8)
    jdot = (system.constraints(q + eps * qd, 0.0).jac[row] - system.constraints(q - eps * qd, 0.0).jac[row]) / (2 * eps)
    assert batch.gamma[row] == pytest.approx(-jdot @ qd, abs=1e-6)
    lam = rng.standard_normal(system.m)
    H = system.constraint_hessian(q, lam, 0.0)
    fd_H = np.array([(system.constraints(q + eps * e, 0.0).jac.T @ lam - system.constraints(q - eps * e, 0.0).jac.T @ lam)
                     / (2 * eps) for e in np.eye(system.nq)]).T
    assert np.allclose(H, fd_H, atol=1e-6)


@pytest.mark.parametrize("formulation,codegen,leading", [("relative", "on", "J1"), ("relative", "off", "J1"),
                                                         ("cartesian", "off", "J1"), ("relative", "on", "J2b"),
                                                         ("relative", "off", "J2b")])
def test_a_coupler_on_a_loop_closing_joint(formulation, codegen, leading):
    """Shaft 2 also turns in a second, coaxial bearing J2b to ground (a redundant loop; the relative
    formulation's cut joint): the coupler on J2b holds θ2 = −r θ1 and J2b carries the tooth torque
    about its axis (J2, a revolute without the coupler, none); the same with J2b leading (θ1 = −θ2/r,
    the coupler force along θ1: I1 α1 − τ, the cut joint's multiplier column scaled by −c_1).  A polynomial
    of the angle of a cut leading joint is refused by both formulations, naming the coupler."""
    m = gear_pair()
    m.add_joint("J2b", "revolute", "ground", "shaft2", origin=(1, 0, 0.5), axis=(0, 0, 1))
    m.remove("mesh")
    if leading == "J1":
        m.add_coupler("mesh", "J1", "J2b", ratio=-R)
    else:
        m.add_coupler("mesh", "J2b", "J1", ratio=-1.0 / R)
    res = solver.simulate(m, t_end=1.0, output_step=0.25, formulation=formulation, codegen=codegen)
    assert res.status == "ok"
    assert np.max(np.abs(angle_about_z(res, "shaft2") + R * 0.5 * ALPHA1 * res.t ** 2)) < 1e-6
    force = -R * I2 * ALPHA1 if leading == "J1" else I1 * ALPHA1 - TAU
    assert np.allclose(res.coupler_force("mesh"), force, atol=1e-7)
    assert np.allclose(res.joint_reaction("J2b")[1][:, 2], -R * I2 * ALPHA1, atol=1e-7)
    assert np.allclose(res.joint_reaction("J2")[1][:, 2], 0.0, atol=1e-7)
    m.remove("mesh")
    m.add_coupler("mesh", "J2b", "J1", coefficients=[0.0, -0.5, 0.1])
    with pytest.raises(solver.ModelError, match="coupler 'mesh': joint 'J2b' closes a loop"):
        solver.compile_model(m, codegen="off")
    with pytest.raises(solver.ModelError, match="coupler 'mesh': a polynomial of degree > 1 of an angle needs"):
        solver.compile_model(m, formulation="cartesian", codegen="off")


def test_a_mimic_in_a_serial_chain_loads_each_joint_along_its_own_axis():
    """Joint 2 (link 1 → link 2) mimics joint 1 (ground → link 1) with ratio ½ under gravity.  Link 1
    is a body of both joints, so the coupler row's gradient on it mixes ∂θ2 and ∂θ1; each joint's
    reaction must carry only its own part: about the axes τ_J2 = the coupler force f and τ_J1 = −½ f
    (revolutes carry nothing else about their axes).  The Cartesian reactions equal the relative
    formulation's (Newton–Euler from the motion, an independent route) to the integration error."""
    m = solver.Model(name="serial mimic", gravity=(0.0, -9.81, 0.0))
    m.add_body("l1", mass=1.0, inertia=(0.01, 0.1, 0.1), position=(0.5, 0.0, 0.0))
    m.add_body("l2", mass=0.7, inertia=(0.01, 0.08, 0.08), position=(1.4, 0.0, 0.0))
    m.add_joint("j1", "revolute", "ground", "l1", origin=(0, 0, 0), axis=(0, 0, 1))
    m.add_joint("j2", "revolute", "l1", "l2", origin=(1, 0, 0), axis=(0, 0, 1))
    m.add_coupler("mimic", "j1", "j2", ratio=0.5)
    runs = [solver.simulate(m, t_end=0.6, output_step=0.2, formulation=f, codegen=cg)
            for f, cg in (("relative", "off"), ("cartesian", "off"))]
    for res in runs:
        f = res.coupler_force("mimic")
        assert np.allclose(res.joint_reaction("j2")[1][:, 2], f, atol=1e-9)
        assert np.allclose(res.joint_reaction("j1")[1][:, 2], -0.5 * f, atol=1e-9)
        for joint in ("j1", "j2"):
            for a, b in zip(res.joint_reaction(joint), runs[0].joint_reaction(joint)):
                assert np.max(np.abs(a - b)) < 1e-5
    assert abs(runs[0].coupler_force("mimic")[-1]) > 1.0


def test_bad_couplers_are_model_errors_naming_the_field(tmp_path):
    m = gear_pair()
    m.add_joint("ball", "spherical", "shaft1", "shaft2", origin=(0.5, 0, 0))
    cases = [({"joint_i": "J1", "joint_j": "J1"}, r"coupler 'c'\.joint_j: must differ from joint_i"),
             ({"joint_i": "nope", "joint_j": "J2"}, r"coupler 'c'\.joint_i: no joint named 'nope'"),
             ({"joint_i": "ball", "joint_j": "J2"}, r"coupler 'c'\.joint_i: a spherical joint has no coordinate"),
             ({"joint_i": "J1", "joint_j": "J2", "ratio": float("inf")}, r"coupler 'c'\.ratio: must be finite"),
             ({"joint_i": "J1", "joint_j": "J2", "coordinate_j": "translation"}, r"coupler 'c'\.coordinate_j"),
             ({"joint_i": "J1", "joint_j": "J2", "coefficients": [1.0, "x"]}, r"coupler 'c'\.coefficients"),
             ({"joint_i": "J1", "joint_j": "J2", "ratio": 2.0, "coefficients": [0.0, 1.0]},
              r"coupler 'c'\.coefficients: give either")]
    for fields, message in cases:
        with pytest.raises(solver.ModelError, match=message):
            m.add_coupler("c", **fields)
    m.add_driver("d2", "J2", expression="t")
    with pytest.raises(solver.ModelError, match=r"coupler 'mesh'\.joint_j: coordinate rotation of joint 'J2' is already driven by 'd2'"):
        m.check()


def test_a_coupler_file_round_trip_and_its_field_paths(tmp_path):
    m = gear_pair()
    m.add_coupler("poly", "J2", "J1", coefficients=[0.0, 1.0, 0.5])
    m.remove("poly")
    m.set_field("mesh", "offset", 0.25)
    path = tmp_path / "gear.mbs.json"
    m.save(path)
    back = solver.load_model(path)
    assert back == m and back.couplers["mesh"].ratio == -R and back.couplers["mesh"].offset == 0.25
    text = path.read_text().replace('"ratio": -2.0', '"ratio": "big"')
    path.write_text(text)
    with pytest.raises(solver.ModelError, match=r"model\.couplers\[0\]\.ratio: must be a number"):
        solver.load_model(path)


def test_a_bad_coupler_in_a_file_exits_2_naming_the_field(tmp_path, capsys):
    from solver import cli
    m = gear_pair()
    path = tmp_path / "gear.mbs.json"
    m.save(path)
    path.write_text(path.read_text().replace('"joint_j": "J2"', '"joint_j": "J1"'))
    assert cli.main(["validate", str(path)]) == 2
    assert "model.couplers[0].joint_j: must differ from joint_i" in capsys.readouterr().err


def test_check_model_counts_a_coupler_as_one_equation_and_hold_leaves_it_alone():
    """Gear pair: 2 bodies × 6 − 2 revolutes × 5 − 1 coupler = 1 DOF (Grübler and rank agree);
    assembling with joint 2 (the follower) held adds no hold driver on its coupled coordinate (which
    would conflict with the coupler): the coupler sets it."""
    check = solver.check_model(gear_pair())
    assert (check.grubler, check.dof) == (1, 1)
    assert "12 body freedoms (2 moving bodies) − 10 joint equations − 1 coupler equation = 1" in check.messages[0]
    res = solver.simulate(gear_pair(), t_end=0.2, output_step=0.1, hold=["J2"])
    assert res.status == "ok"


def test_a_redundant_gear_loop_runs_and_flags_its_coupler_forces_as_not_unique():
    """Three gears coupled round a loop with consistent ratios (θ1 = −2 θ0, θ2 = −½ θ1, θ0 = θ2): one
    coupler is redundant, the motion is the 1-DOF closed form θ0 = ½ τ/(I0 + 4 I1 + I2) t², and the
    split of the load among the couplers is not unique (reported like a redundant driver's force)."""
    m = solver.Model(name="three gears", gravity=(0.0, 0.0, 0.0))
    for k in range(3):
        m.add_body(f"g{k}", mass=1.0, inertia=(0.2, 0.2, 0.3), position=(float(k), 0.0, 0.0))
        m.add_joint(f"J{k}", "revolute", "ground", f"g{k}", origin=(float(k), 0, 0), axis=(0, 0, 1))
    m.add_coupler("c01", "J0", "J1", ratio=-2.0)
    m.add_coupler("c12", "J1", "J2", ratio=-0.5)
    m.add_coupler("c20", "J2", "J0", ratio=1.0)
    m.add_torque("drive", "g0", torque=(0.0, 0.0, 1.0))
    res = solver.simulate(m, t_end=0.5, output_step=0.25, codegen="off")     # (no build: kernels are tested above)
    assert res.status == "ok"
    assert np.max(np.abs(angle_about_z(res, "g0") - 0.5 / (0.3 * 6.0) * res.t ** 2)) < 1e-9
    assert res.meta["nonunique_components"] == {name: ["coupler force"] for name in ("c01", "c12", "c20")}
    check = solver.check_model(m)
    assert (check.dof, check.redundant) == (1, 1)
    assert any("the couplers c01, c12, c20 over-constrain their loop" in text for text in check.messages)
    assert check.planar_suggestion is None          # the planar joint forms would not remove it
