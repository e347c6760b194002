"""The planar model option (settings.planar, solver.formulations.planar, solver.constraints.planar).

A planar loop built with 3-D joints has dependent out-of-plane equations: its out-of-plane reaction
components are not unique, its in-plane ones and the driving torque are.  Compiled with the planar
joint forms the same mechanism has no redundant row; the independent check is the 3-D model
itself: the same motion, the same (unique) in-plane reactions and driver torque, to round-off of
the two integrations, and zero out-of-plane components."""
from __future__ import annotations

import json

import numpy as np
import pytest

import solver
from solver.compile import compile_model
from solver.constraints.planar import PLANES
from solver.formulations.cartesian import CartesianSystem
from solver.model.elements import PLANAR_CHOICES
from solver.partitioning.self_stress import null_spaces
from test_nonunique_components import OUT_OF_PLANE_REVOLUTE, driven_slider_crank, sample

CASES = {"driven slider-crank": driven_slider_crank, "four-bar": lambda: sample("fourbar")}


def planar(model, plane="xy"):
    model.settings.set("planar", plane)
    return model


def run(model, formulation, t_end=0.3):
    compiled = compile_model(model, formulation=formulation, codegen="off")
    return compiled, solver.simulate(compiled, t_end=t_end, rtol=1e-10, atol=1e-12)


def test_choices_are_the_planes():
    assert PLANAR_CHOICES == ("off", "auto") + tuple(PLANES)


@pytest.mark.parametrize("formulation", ["cartesian", "relative"])
@pytest.mark.parametrize("case", list(CASES))
def test_planar_forms_match_the_3d_model(case, formulation):
    """Same motion; in-plane reaction forces, the moment about the normal and the driver torque equal
    to 1e-8 of the joint's force scale; out-of-plane components exactly zero and nothing flagged —
    where the 3-D model flags the out-of-plane components of every joint."""
    c3, r3 = run(CASES[case](), formulation)
    c2, r2 = run(planar(CASES[case]()), formulation)
    assert c3.system.plane is None and c2.system.plane == "xy"
    assert any(n.startswith("planar: the model is planar in the xy plane") for n in c2.notices)
    for b in r3.body_names:
        assert np.abs(r3.body_position(b) - r2.body_position(b)).max() < 1e-9
        assert np.abs(r3.body_rotation(b) - r2.body_rotation(b)).max() < 1e-9
    for j in r3.joint_names:
        F3, T3 = r3.joint_reaction(j)
        F2, T2 = r2.joint_reaction(j)
        scale = np.abs(F3[:, :2]).max()
        assert scale > 1.0
        assert np.abs(F3[:, :2] - F2[:, :2]).max() < 1e-8 * scale
        assert np.abs(T3[:, 2] - T2[:, 2]).max() < 1e-8 * scale
        assert np.abs(F2[:, 2]).max() == 0.0 and np.abs(T2[:, :2]).max() < 1e-20 * scale
    for d in r3.driver_names:
        tau = r3.driver_force(d)
        assert np.abs(tau - r2.driver_force(d)).max() < 1e-8 * np.abs(tau).max()
    assert r3.nonunique_components[r3.joint_names[0]] == OUT_OF_PLANE_REVOLUTE
    assert r2.nonunique_components == {} and r2.redundant_equations == []


@pytest.mark.parametrize("formulation", ["cartesian", "relative"])
def test_no_self_stress_and_the_same_dof(formulation):
    """Φ_q of the planar forms has full row rank (no self-stress state) and the same n_q − rank as
    the 3-D model's; check_model counts 3·3 − 8 = 1 (Grübler = mobility, no redundant equation)."""
    for model in (sample("slider_crank"), sample("fourbar")):
        model.settings.set("formulation", formulation)
        dofs = []
        for m in (model, planar(model.copy())):
            system = compile_model(m, codegen="off").system
            q, _, t = system.initial_state()
            spaces = null_spaces(system.constraints(q, t).jac)
            dofs.append(system.nq - spaces.rank)
            if system.plane:
                assert spaces.stress.shape[1] == 0
        assert dofs[0] == dofs[1]
        c3, c2 = solver.check_model(model), solver.check_model(planar(model.copy()))
        assert (c2.dof, c2.mobility) == (c3.dof, c3.mobility)
        assert c2.redundant == 0 and c2.grubler_mobility == c2.mobility == 1 and c2.freedoms == 9
        assert sum(c2.joint_equations.values()) == 8 and c2.nonunique_components == {}
        assert c3.planar_suggestion == "xy" and c2.planar_suggestion is None and c2.plane == "xy"
        assert any("planar = 'xy' (or 'auto')" in m for m in c3.messages)
        assert any(m.startswith("Grübler (Kutzbach) count in the xy plane: 9 body freedoms") for m in c2.messages)


@pytest.mark.parametrize("jtype, options", [
    ("spherical", {}),
    ("universal", {"axis": (1.0, 0.0, 0.0), "axis2": (0.0, 0.0, 1.0)}),
    ("cylindrical", {"axis": (0.0, 0.0, -1.0)})])
def test_revolutes_in_the_plane(jtype, options):
    """The four-bar with C spherical, universal (its second axis along the normal) or cylindrical (its
    axis along −n): planar in xy each is the four-bar of revolutes — the same motion and reactions,
    C's planar form has 2 rows, nothing redundant (in 3-D RRSR has one redundant equation:
    18 − (5 + 5 + 3 + 5) = 0 vs mobility 1)."""
    model = sample("fourbar")
    C = model.joints["C"].origin
    model.remove("C")
    model.add_joint("C", jtype, "coupler", "rocker", origin=C, **options)
    if jtype == "spherical":
        c3 = solver.check_model(model)
        assert (c3.mobility, c3.redundant) == (1, 1)
    _, ref = run(planar(sample("fourbar")), "cartesian")
    for formulation in ("cartesian", "relative"):
        _, res = run(planar(model.copy()), formulation)
        assert np.abs(res.body_position("rocker") - ref.body_position("rocker")).max() < 1e-10
        F, F_ref = res.joint_reaction("C")[0], ref.joint_reaction("C")[0]
        assert np.abs(F - F_ref).max() < 1e-8 * np.abs(F_ref).max()
    c2 = solver.check_model(planar(model))
    assert (c2.mobility, c2.redundant, c2.joint_equations["C"]) == (1, 0, 2)


def test_not_planar_is_an_error_naming_the_field():
    model = planar(sample("slider_crank"))
    model.set_field("crank", "angular_velocity", (1.0, 0.0, 15.0))
    with pytest.raises(solver.ModelError) as err:
        compile_model(model, codegen="off")
    assert [(p.element, p.field) for p in err.value.details] == [("crank", "angular_velocity")]
    assert "settings.planar = 'xy'" in str(err.value)
    model = planar(sample("slider_crank"), "yz")          # the sample lies in xy
    with pytest.raises(solver.ModelError) as err:
        compile_model(model, codegen="off")
    assert {(p.element, p.field) for p in err.value.details} == {
        ("crank_pin", "axis"), ("crank_rod", "axis"), ("rod_piston", "axis"), ("cylinder", "axis"),
        ("crank", "angular_velocity")}
    model = planar(sample("slider_crank"))
    model.add_joint("lead", "screw", "ground", "piston", origin=(0.4, 0.0, 0.0), axis=(0.0, 0.0, 1.0))
    with pytest.raises(solver.ModelError, match=r"joint 'lead'\.type: a screw joint moves out of the xy plane"):
        compile_model(model, codegen="off")


def test_auto_uses_the_plane_or_the_3d_forms():
    compiled = compile_model(planar(sample("fourbar"), "auto"), codegen="off")
    assert compiled.system.plane == "xy"
    model = planar(sample("fourbar"), "auto")
    model.set_field("crank", "velocity", (0.0, 0.0, 0.1))
    compiled = compile_model(model, codegen="off")
    assert compiled.system.plane is None
    assert "planar: the model is not planar in the xy, yz or zx plane; the 3-D joint forms are used" in compiled.notices


def test_out_of_plane_loads_are_reported():
    """Gravity along the normal, a force along it and a force in the plane off the CM (no moment
    about an in-plane axis): the first two are named."""
    model = planar(sample("fourbar"))
    model.gravity = (0.0, 0.0, -9.81)
    model.add_force("push", "coupler", force=(0.0, 0.0, 1.0))
    model.add_force("pull", "coupler", force=(1.0, 2.0, 0.0), point=(0.2, 0.25, 0.0))
    for formulation in ("cartesian", "relative"):
        compiled = compile_model(model, codegen="off", formulation=formulation)
        assert ("planar: out-of-plane loads of gravity, push are carried by the bodies' plane constraints (not "
                "reported in the joint reactions)") in compiled.notices


def test_parametric_form_is_refused():
    model = planar(sample("fourbar"))
    with pytest.raises(solver.ModelError, match=r"constraints: the planar forms need the conventional joint form"):
        compile_model(model, codegen="off", formulation="cartesian", constraints="parametric")
    assert compile_model(planar(sample("fourbar"), "auto"), codegen="off", formulation="cartesian",
                         constraints="parametric").system.plane is None


def test_flexible_bodies_are_refused():
    model = sample("fourbar_singular_flexible")
    model.settings.set("planar", "xy")
    with pytest.raises(solver.ModelError, match="flexible bodies have no planar form"):
        compile_model(model, codegen="off")


def test_file_round_trip(tmp_path):
    """The option is saved when set and read back; the default is not written, so files written
    before it existed are unchanged by a load and save."""
    model = sample("slider_crank")
    model.save(tmp_path / "plain.mbs.json")
    assert "planar" not in json.loads((tmp_path / "plain.mbs.json").read_text())["solver"]
    planar(model, "auto").save(tmp_path / "auto.mbs.json")
    assert json.loads((tmp_path / "auto.mbs.json").read_text())["solver"]["planar"] == "auto"
    assert solver.load_model(str(tmp_path / "auto.mbs.json")).settings.planar == "auto"
    assert solver.load_model(str(tmp_path / "plain.mbs.json")).settings.planar == "off"


def rotated(model, R):
    """``model`` turned rigidly by the rotation matrix R (bodies, joints, gravity)."""
    from solver.math.rotations import quat_from_matrix, rotation_matrix
    out = model.copy()
    turn = lambda v: tuple(float(x) for x in R @ np.asarray(v, dtype=float))   # noqa: E731
    for b in out.bodies.values():
        out.set_field(b.name, "orientation", tuple(quat_from_matrix(R @ rotation_matrix(np.array(b.orientation)))))
        for f in ("position", "velocity", "angular_velocity"):
            out.set_field(b.name, f, turn(getattr(b, f)))
    for j in out.joints.values():
        for f in ("origin", "axis", "origin2"):
            out.set_field(j.name, f, turn(getattr(j, f)))
    out.gravity = turn(out.gravity)
    return out


@pytest.mark.parametrize("formulation", ["cartesian", "relative"])
def test_the_zx_plane_is_the_xy_plane_turned(formulation):
    """The driven slider–crank turned by −90° about x lies in the zx plane (normal e_y; the slide's
    marker x axis is then the normal, the other branch of the prismatic form): its planar run is the
    xy run turned, reactions included."""
    R = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]])
    _, ref = run(planar(driven_slider_crank()), formulation)
    compiled, res = run(planar(rotated(driven_slider_crank(), R), "zx"), formulation)
    assert compiled.system.plane == "zx" and res.nonunique_components == {}
    for b in ref.body_names:
        assert np.abs(res.body_position(b) - ref.body_position(b) @ R.T).max() < 1e-10
    for j in ref.joint_names:
        for x, y in zip(res.joint_reaction(j), ref.joint_reaction(j)):
            assert np.abs(x - y @ R.T).max() < 1e-9 * np.abs(ref.joint_reaction(j)[0]).max()
    assert np.abs(res.driver_force("crank_drive") - ref.driver_force("crank_drive")).max() < 1e-9


def mixed_model():
    """Every other planar form in one xy mechanism: a pendulum a (revolute to ground) with b fixed to
    it; c held in the plane by a planar joint to ground, tied to b by a distance link and a
    revolute–spherical link (axis along the normal).  3-D: 18 − (5 + 6 + 3 + 1 + 2) = 1, mobility 2:
    one redundant equation (the link's axial offset, out-of-plane)."""
    m = solver.Model(name="mixed", gravity=(0.0, -9.81, 0.0))
    m.add_body("a", mass=1.0, inertia=(0.01, 0.02, 0.03), position=(0.2, 0.0, 0.0), angular_velocity=(0.0, 0.0, 1.0))
    m.add_body("b", mass=0.5, inertia=(0.004, 0.005, 0.006), position=(0.4, 0.1, 0.05),
               orientation=(np.cos(0.2), 0.0, 0.0, np.sin(0.2)))
    m.add_body("c", mass=0.8, inertia=(0.01, 0.01, 0.02), position=(0.7, -0.2, 0.0))
    m.add_joint("pivot", "revolute", "ground", "a")
    m.add_joint("weld", "fixed", "a", "b", origin=(0.4, 0.0, 0.0))
    m.add_joint("slide", "planar", "ground", "c", origin=(0.7, -0.2, 0.0))
    m.add_joint("rod", "distance", "b", "c", origin=(0.45, 0.1, 0.05), origin2=(0.7, -0.15, 0.0))
    m.add_joint("link", "revolute_spherical", "a", "c", origin=(0.1, 0.0, 0.0), origin2=(0.65, -0.2, 0.0))
    return m


@pytest.mark.parametrize("formulation", ["cartesian", "relative"])
def test_fixed_planar_and_link_forms(formulation):
    """The mixed model: the same motion and in-plane reactions as 3-D; the 3-D redundancy (one
    equation, on the link) is gone."""
    c3 = solver.check_model(mixed_model())
    assert (c3.grubler_mobility, c3.mobility, c3.redundant) == (1, 2, 1)
    c2 = solver.check_model(planar(mixed_model()))
    assert c2.joint_equations == {"pivot": 2, "weld": 3, "slide": 0, "rod": 1, "link": 1}
    assert (c2.grubler_mobility, c2.mobility, c2.redundant) == (2, 2, 0)
    _, r3 = run(mixed_model(), formulation)
    _, r2 = run(planar(mixed_model()), formulation)
    assert r2.nonunique_components == {}
    for b in r3.body_names:
        assert np.abs(r3.body_position(b) - r2.body_position(b)).max() < 1e-9
    for j in r3.joint_names:
        (F3, T3), (F2, T2) = r3.joint_reaction(j), r2.joint_reaction(j)
        scale = max(np.abs(F3[:, :2]).max(), 1e-3)
        assert np.abs(F3[:, :2] - F2[:, :2]).max() < 1e-7 * scale, j
        assert np.abs(T3[:, 2] - T2[:, 2]).max() < 1e-7 * scale, j


def test_planar_rows_derivatives():
    """Φ_q, γ, ν and (Φ_qᵀλ)_q of the planar rows (joints and plane constraints, batched) equal
    central differences away from the assembled state, and the per-joint evaluator to round-off."""
    from test_constraint_derivatives import assert_constraint_derivatives
    R = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]])
    rng = np.random.default_rng(7)
    for model, plane in ((mixed_model(), "xy"), (rotated(driven_slider_crank(), R), "zx")):
        system = CartesianSystem(model, plane=plane)
        q0, _, _ = system.initial_state()
        q = q0 + 0.1 * rng.standard_normal(system.nq)
        qd, lam = rng.standard_normal(system.nq), rng.standard_normal(system.m)
        assert_constraint_derivatives(system, q, qd, lam, 0.4)
        batched, per_joint = system.constraints(q, 0.4, qd, level=2), system.constraints_per_joint(q, 0.4, qd, level=2)
        for key in ("phi", "jac", "nu", "gamma"):
            assert np.allclose(getattr(batched, key), getattr(per_joint, key), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("formulation", ["cartesian", "relative"])
def test_linearization_and_equilibrium_agree(formulation):
    """The four-bar with a spring: the same natural frequency and static equilibrium as in 3-D."""
    def model(plane):
        m = sample("fourbar_spring")
        m.settings.set("planar", plane)
        return compile_model(m, formulation=formulation, codegen="off")
    w3, w2 = (np.sort(np.abs(solver.linearize(model(p)).eigenvalues)) for p in ("off", "xy"))
    assert len(w2) == len(w3) and np.allclose(w2, w3, rtol=1e-8)
    e3, e2 = (solver.static_equilibrium(model(p)) for p in ("off", "xy"))
    assert e2.stable and np.abs(e3.q - e2.q).max() < 1e-9       # the same coordinates in both forms


def test_command_line_option(tmp_path, capsys):
    """``mbs run --planar``: the run says which forms it used and flags nothing; a plane the model is
    not planar in exits 2 naming the joints' fields, without a traceback."""
    from solver import cli
    path, out = tmp_path / "slider_crank.mbs.json", tmp_path / "run.h5"
    sample("slider_crank").save(path)
    assert cli.main(["run", str(path), "--t-end", "0.02", "--planar", "auto", "--out", str(out)]) == 0
    assert "planar: the model is planar in the xy plane; its joints are compiled in their planar forms" in \
        capsys.readouterr().out
    assert solver.load_results(str(out)).nonunique_components == {}
    assert cli.main(["run", str(path), "--t-end", "0.02", "--planar", "yz"]) == 2
    err = capsys.readouterr().err
    assert "joint 'crank_pin'.axis: must be along the normal of the yz plane" in err and "Traceback" not in err


GENERATED_CASES = {"driven slider-crank": (driven_slider_crank, "xy"), "four-bar": (lambda: sample("fourbar"), "xy"),
                   "mixed": (mixed_model, "xy"),
                   "slider-crank in zx": (lambda: rotated(driven_slider_crank(), np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]])), "zx")}


@pytest.mark.slow
@pytest.mark.usefixtures("module_codegen_cache")
@pytest.mark.parametrize("formulation", ["cartesian", "relative"])
@pytest.mark.parametrize("case", list(GENERATED_CASES))
def test_generated_planar_forms_equal_the_generic_ones(case, formulation):
    """Generated kernels of the planar forms (the same joint-kind equations, and the Cartesian bodies'
    plane constraints): Φ, Φ_q, ν, γ, M and Q equal the generic planar system's to 1e-12 at random
    states off the manifold; a run equals the generic planar run to 1e-9 m, reactions to 1e-8 of
    their scale."""
    make, plane = GENERATED_CASES[case]
    generic = compile_model(planar(make(), plane), formulation=formulation, codegen="off")
    generated = compile_model(planar(make(), plane), formulation=formulation, codegen="on")
    assert generated.generated and generated.system.plane == plane
    a, b = generated.system, generic.system
    rng = np.random.default_rng(5)
    for _ in range(3):
        q, qd, t = rng.normal(size=b.nq), rng.normal(size=b.nq), rng.uniform(0.0, 2.0)
        x, y = a.constraints(q, t, qd, level=2), b.constraints(q, t, qd, level=2)
        for u, v in ((x.phi, y.phi), (x.jac, y.jac), (x.nu, y.nu), (x.gamma, y.gamma), (a.mass(q), b.mass(q)),
                     (a.forces(q, qd, t), b.forces(q, qd, t))):
            assert np.abs(u - v).max() <= 1e-12 * max(1.0, np.abs(v).max())
    kw = dict(t_end=0.3, rtol=1e-10, atol=1e-12, integrator="adams")
    r1, r2 = solver.simulate(generated, **kw), solver.simulate(generic, **kw)
    for body in r2.body_names:
        assert np.abs(r1.body_position(body) - r2.body_position(body)).max() < 1e-9
    for j in r2.joint_names:
        F1, F2 = r1.joint_reaction(j)[0], r2.joint_reaction(j)[0]
        assert np.abs(F1 - F2).max() < 1e-8 * max(np.abs(F2).max(), 1e-3)
