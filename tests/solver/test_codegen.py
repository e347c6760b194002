"""Generated kernels (solver.codegen) against the generic Cartesian path (STYLE §9): Φ, Φ_q, ν, γ,
M and Q at random states to 1e-10 relative for every sample model and a model with every joint type
and force element that is generated; trajectories to 1e-8; the on-disk cache; the fallback when
there is no compiler.  Every test uses a fresh cache folder (module-wide, so each model compiles once).
"""
import gc
from pathlib import Path

import numpy as np
import pytest

import solver
from solver.cli import main
from solver.codegen import CodegenCartesianSystem, CodegenUnavailable
from solver.codegen import derive as codegen_derive
from solver.codegen.build import MODEL_LIBRARIES
from solver.analysis.assembly import assemble_positions
from solver.formulations.cartesian import CartesianSystem
from solver.partitioning.partition import multipliers
from solver.partitioning.choose import build_partition

SAMPLES = sorted(Path(__file__).resolve().parents[2].joinpath("sample_models").glob("*.mbs.json"))
KERNEL_RTOL = 1e-10
TRAJECTORY_RTOL = 1e-8


pytestmark = pytest.mark.usefixtures("module_codegen_cache")


def rel_err(a, b):
    """max |a − b| / max |b| (max |a| when b is all zero)."""
    scale = np.max(np.abs(b)) if np.size(b) else 0.0
    err = np.max(np.abs(a - b)) if np.size(b) else 0.0
    return err / scale if scale > 0 else err


def all_features_model():
    """Every joint type (both bodies moving or on ground), drivers on rotation, translation and
    planar x, a spring-damper with damping, preload and force(t), an applied force at a point, an
    applied torque and a bushing between two moving bodies; bodies rotated, inertias with products.
    For kernel checks only (not assembled)."""
    m = solver.Model(name="all-features", gravity=(0.3, -9.81, 0.2))
    orientations = [(np.cos(0.3), 0.2, np.sin(0.3), 0.1), (0.9, -0.1, 0.3, 0.2), None, (0.8, 0.4, -0.2, 0.3),
                    (0.7, 0.1, 0.1, -0.5), None]
    for k, o in enumerate(orientations):
        m.add_body(f"b{k}", mass=1.0 + k, inertia=(0.1 + 0.01 * k, 0.2, 0.25, 0.01, -0.02, 0.005),
                   position=(0.2 * k, 0.1 * k * k, -0.05 * k), orientation=o)
    axis = (0.4, 1.0, 0.0)
    m.add_joint("rev", "revolute", "ground", "b0", origin=(0.0, 0.1, 0.0), axis=(0, 0, 1))
    m.add_joint("pri", "prismatic", "b0", "b1", origin=(0.1, 0.1, 0.0), axis=axis)
    m.add_joint("cyl", "cylindrical", "b1", "b2", origin=(0.3, 0.2, 0.0), axis=(1, 0, 1))
    m.add_joint("uni", "universal", "b2", "b3", origin=(0.5, 0.4, -0.1), axis=(0, 0, 1), axis2=(1.0, -0.4, 0.0))
    m.add_joint("sph", "spherical", "b3", "b4", origin=(0.7, 0.9, -0.2))
    m.add_joint("pla", "planar", "b4", "b5", origin=(0.9, 1.4, -0.2), axis=(0, 1, 0))
    m.add_joint("scr", "screw", "b5", "b2", origin=(0.8, 1.0, 0.0), axis=axis, pitch=0.05)
    m.add_joint("fix", "fixed", "b1", "b4", origin=(0.4, 0.5, 0.0))
    m.add_joint("dst", "distance", "ground", "b3", origin=(0.5, 0.3, 0.0), origin2=(0.6, 0.8, -0.1))
    m.add_joint("rsp", "revolute_spherical", "b0", "b5", origin=(0.0, -0.4, 0.0), axis=(1, 0, 0),
                origin2=(0.9, 1.2, -0.3))
    m.add_driver("d_rev", joint="rev", expression="0.3*sin(2*t) + 0.1*t^2")
    m.add_driver("d_pri", joint="pri", expression="0.05*cos(3*t)")
    m.add_driver("d_pla", joint="pla", coordinate="x", expression="0.1*sin(t)")
    m.add_driver("d_scr", joint="scr", expression="2*t*t")
    m.add_spring_damper("spr", "b1", "b5", point_i=(0.2, 0.0, 0.1), point_j=(1.0, 1.5, -0.2), stiffness=200.0,
                        damping=3.0, free_length=0.9, preload=5.0, force="10*sin(4*t)")
    m.add_spring_damper("gsp", "ground", "b2", point_i=(0.0, 1.0, 0.0), point_j=(0.4, 0.4, 0.0), stiffness=50.0)
    m.add_force("F", "b3", force=("5*sin(3*t)", 2.0, -1.0), point=(0.7, 0.8, -0.1))
    m.add_torque("T", "b4", torque=(0.0, 0.1, "0.2*cos(t)"))
    m.add_bushing("bus", "b2", "b4", origin=(0.6, 0.7, -0.1), stiffness=(400.0, 300.0, 200.0, 30.0, 20.0, 10.0),
                  damping=(4.0, 3.0, 2.0, 0.3, 0.2, 0.1))
    return m


def check_kernels(model, seed, states=4, required=False):
    """Generated Φ, Φ_q, ν, γ, M and Q equal the generic ones to KERNEL_RTOL at random states off the
    constraint manifold; a model the kernels do not cover is skipped, or an error when ``required``."""
    generic = CartesianSystem(model)
    try:
        generated = CodegenCartesianSystem(model)
    except CodegenUnavailable as exc:
        if required:
            raise
        pytest.skip(f"not generated: {exc}")
    rng = np.random.default_rng(seed)
    worst = {}
    for _ in range(states):
        q = rng.normal(size=generic.nq)           # off the constraint manifold, |p| ≠ 1
        qd = rng.normal(size=generic.nq)
        t = rng.uniform(0.0, 3.0)
        a, b = generated.constraints(q, t, qd, level=2), generic.constraints(q, t, qd, level=2)
        pairs = {"phi": (a.phi, b.phi), "jac": (a.jac, b.jac), "nu": (a.nu, b.nu), "gamma": (a.gamma, b.gamma),
                 "M": (generated.mass(q), generic.mass(q)), "Q": (generated.forces(q, qd, t), generic.forces(q, qd, t))}
        for key, (x, y) in pairs.items():
            worst[key] = max(worst.get(key, 0.0), rel_err(x, y))
        level0 = generated.constraints(q, t)
        assert level0.nu is None and level0.gamma is None
    assert max(worst.values()) <= KERNEL_RTOL, worst
    return generated


@pytest.mark.slow
@pytest.mark.parametrize("path", SAMPLES, ids=[p.name.split(".")[0] for p in SAMPLES])
def test_kernels_equal_generic_on_samples(path):
    check_kernels(solver.load_model(path), seed=len(path.name))


@pytest.mark.slow
def test_kernels_equal_generic_every_joint_type_and_force():
    system = check_kernels(all_features_model(), seed=7)
    assert not system.codegen_info["cache_hit"]


@pytest.mark.slow
def test_force_elements_not_generated_are_added_in_python():
    """A rotational spring-damper is not in the kernels: its Q is evaluated in Python and added
    (kernel check: Q equals the generic Q), and a run (with a generated bushing to ground too)
    agrees with the generic one."""
    model = solver.load_model(next(p for p in SAMPLES if p.name.startswith("double_pendulum.")))
    joint = next(iter(model.joints))
    model.add_rotational_spring_damper("rs", joint, stiffness=3.0, damping=0.2, free_angle=0.3)
    bodies = list(model.bodies)
    model.add_bushing("bu", "ground", bodies[-1], origin=tuple(model.bodies[bodies[-1]].position),
                      stiffness=(40.0, 40.0, 40.0, 1.0, 1.0, 1.0), damping=(0.5,) * 6)
    system = check_kernels(model, seed=3)
    assert [f.name for f in system.interpreted] == ["rs"]
    generic = solver.simulate(model, t_end=0.3, codegen="off")
    generated = solver.simulate(model, t_end=0.3, codegen=True)
    assert any(e["message"].startswith("codegen: compiled") for e in generated.events)
    for body in bodies:
        assert rel_err(generated.body_position(body), generic.body_position(body)) <= TRAJECTORY_RTOL


@pytest.mark.slow
@pytest.mark.parametrize("name", ["slider_crank", "double_pendulum"])
def test_trajectories_equal_generic(name, monkeypatch):
    """The generated kernels against the generic path under one integrator: the samples' "adams" is
    scipy's LSODA in the Python loop on both (adams.c in the compiled loop takes steps of its own:
    test_compiled_adams.py)."""
    from solver.analysis.dynamics import Run
    monkeypatch.setattr(Run, "python_loop", ("adams",))
    model = solver.load_model(next(p for p in SAMPLES if p.name.startswith(name + ".")))
    assert model.settings.integrator == "adams"
    generic = solver.simulate(model, t_end=0.5, codegen="off")
    generated = solver.simulate(model, t_end=0.5, codegen=True)
    notes = [e["message"] for e in generated.events if e["kind"] == "codegen"]
    assert len(notes) == 1 and notes[0].startswith("codegen: compiled kernels"), notes
    assert not any(e["kind"] == "codegen" for e in generic.events)
    assert np.array_equal(generated.t, generic.t)
    # each quantity against its largest value over the bodies: a slider's angular velocity is round-off
    # (1e-15 rad/s) on both paths
    for quantity in ("body_position", "body_velocity", "body_acceleration", "body_angular_velocity"):
        scale = max(np.max(np.abs(getattr(generic, quantity)(body))) for body in generic.body_names)
        for body in generic.body_names:
            a, b = getattr(generated, quantity)(body), getattr(generic, quantity)(body)
            assert np.max(np.abs(a - b)) <= TRAJECTORY_RTOL * scale, (body, quantity)
    # reactions against the largest reaction force (torques in N·m against it × 1 m): a redundant
    # joint's torque is round-off (1e-13 N·m) on both paths
    scale = max(np.max(np.abs(generic.joint_reaction(j)[0])) for j in generic.joint_names)
    for joint in generic.joint_names:
        for a, b in zip(generated.joint_reaction(joint), generic.joint_reaction(joint)):
            assert np.max(np.abs(a - b)) <= TRAJECTORY_RTOL * scale, joint


@pytest.mark.parametrize("name", ["slider_crank", "fourbar", "rrc_arm_case1"])
@pytest.mark.parametrize("method", ["lu", "qr", "svd"])
def test_compiled_reduction_equals_python_partition(name, method):
    """cg_reduced (reduced.c) against Partition.positions/velocities/accelerations on the generic
    system: the same partition, states perturbed off the reference, to 1e-10 relative (‖∂q/∂z‖ of
    the re-partitioning rule too); its λ satisfies Φ_qᵀλ = Q − M q̈ and is the minimum-norm one: it
    equals the least-squares λ (the four-bar and the slider–crank have redundant rows)."""
    model = solver.load_model(next(p for p in SAMPLES if p.name.startswith(name + ".")))
    generic, generated = CartesianSystem(model), CodegenCartesianSystem(model)
    q0, _, t0 = generic.initial_state()
    q0 = assemble_positions(generic, q0, t0)
    part = build_partition(method, generic, q0, t0)
    compiled = generated.compiled_reduction(part)
    rng = np.random.default_rng(len(name))
    for _ in range(3):
        t = t0 + rng.uniform(0.0, 0.3)
        y = np.concatenate([0.02 * rng.standard_normal(part.dof), rng.standard_normal(part.dof)])
        assert compiled.solve(t, y, q0, level=1)
        level1 = compiled.amplification
        assert compiled.solve(t, y, q0, level=compiled.MULTIPLIERS)      # q̈ and λ
        q, ev = part.positions(generic, y[:part.dof], t, q0)
        qd = part.velocities(ev.jac, ev.nu, y[part.dof:])
        ev2 = generic.constraints(q, t, qd, level=2)
        qdd, zdd, _ = part.accelerations(generic.mass(q), generic.forces(q, qd, t), ev2.jac, ev2.gamma)
        for a, b in ((compiled.q, q), (compiled.qd, qd), (compiled.qdd, qdd), (compiled.zdd, zdd)):
            assert rel_err(a, b) <= KERNEL_RTOL
        residual = ev2.jac.T @ compiled.lam - (generic.forces(q, qd, t) - generic.mass(q) @ qdd)
        assert np.max(np.abs(residual)) <= KERNEL_RTOL * np.max(np.abs(generic.forces(q, qd, t)))
        exact = np.linalg.svd(ev2.jac[part.rows] @ part.U, compute_uv=False)[-1]
        assert exact <= compiled.sigma_min <= 1.05 * exact      # power-iteration estimate, from above
        assert rel_err(compiled.amplification, part.amplification(ev2.jac)) <= KERNEL_RTOL
        assert level1 == compiled.amplification
        least_squares = multipliers(ev2.jac, generic.mass(q), qdd, generic.forces(q, qd, t))
        assert rel_err(compiled.lam, least_squares) <= 1e-9


@pytest.mark.slow
def test_cache_hit_and_parameter_change_reuse_the_library(runtime_cache, monkeypatch):
    monkeypatch.setenv("MBS_CODEGEN_CACHE", str(runtime_cache))
    model = solver.load_model(next(p for p in SAMPLES if p.name.startswith("pendulum.")))
    first = CodegenCartesianSystem(model).codegen_info
    assert not first["cache_hit"] and first["derive_s"] > 0 and first["compile_s"] > 0
    second = CodegenCartesianSystem(model).codegen_info
    assert second["cache_hit"] and second["path"] == first["path"]
    assert second["load_s"] < 0.5                  # no derivation, no compiler: reading the library only
    body = next(iter(model.bodies))
    model.set_field(body, "mass", 2.5 * model.bodies[body].mass)
    model.set_field(body, "inertia", (0.3, 0.25, 0.2, 0.01, 0.0, 0.02))
    changed = CodegenCartesianSystem(model)
    assert changed.codegen_info["cache_hit"] and changed.codegen_info["path"] == first["path"]
    q, qd, _ = changed.initial_state()
    qd += 0.3
    generic = CartesianSystem(model)
    assert rel_err(changed.mass(q), generic.mass(q)) <= KERNEL_RTOL
    assert rel_err(changed.forces(q, qd, 0.1), generic.forces(q, qd, 0.1)) <= KERNEL_RTOL
    assert len(list(runtime_cache.glob(MODEL_LIBRARIES))) == 1


@pytest.mark.slow
@pytest.mark.parametrize("enabled", [True, False])
def test_a_build_leaves_the_garbage_collector_as_it_found_it(runtime_cache, monkeypatch, enabled):
    """The derivation pauses Python's cyclic collector (build._collection_paused) and restores it."""
    monkeypatch.setenv("MBS_CODEGEN_CACHE", str(runtime_cache))
    model = solver.load_model(next(p for p in SAMPLES if p.name.startswith("pendulum.")))
    during, derive = [], codegen_derive.derive
    monkeypatch.setattr(codegen_derive, "derive", lambda *a, **k: during.append(gc.isenabled()) or derive(*a, **k))
    was = gc.isenabled()
    try:
        (gc.enable if enabled else gc.disable)()
        assert not CodegenCartesianSystem(model).codegen_info["cache_hit"]
        assert during == [False] and gc.isenabled() == enabled
    finally:
        (gc.enable if was else gc.disable)()


@pytest.mark.slow
def test_fallback_without_compiler(tmp_path, monkeypatch):
    """codegen "auto" (the default) without a compiler: the generic path, one notice; "on": an error."""
    monkeypatch.setenv("MBS_CODEGEN_CACHE", str(tmp_path))
    monkeypatch.setenv("CC", "mbs-no-such-compiler")
    monkeypatch.delenv("MBS_CODEGEN", raising=False)
    model = solver.load_model(next(p for p in SAMPLES if p.name.startswith("slider_crank.")))
    assert model.settings.codegen == "auto"
    with pytest.raises(solver.ModelError, match="settings.codegen: 'on' needs generated kernels.*no C compiler"):
        solver.simulate(model, t_end=0.2, codegen=True)
    res = solver.simulate(model, t_end=0.2)
    notes = [e["message"] for e in res.events if e["kind"] == "codegen"]
    assert notes == ["codegen unavailable, generic path used: no C compiler: 'mbs-no-such-compiler' was not "
                     "found (set CC to a C compiler)"]
    reference = solver.simulate(model, t_end=0.2, codegen=False)
    for body in reference.body_names:
        assert np.array_equal(res.body_position(body), reference.body_position(body))
    assert not list(tmp_path.glob("*.so"))


def test_unsupported_form_falls_back_with_a_message(monkeypatch):
    monkeypatch.delenv("MBS_CODEGEN", raising=False)
    model = solver.load_model(next(p for p in SAMPLES if p.name.startswith("pendulum.")))
    res = solver.simulate(model, t_end=0.05, constraints="parametric", codegen="auto")
    notes = [e["message"] for e in res.events if e["kind"] == "codegen"]
    assert len(notes) == 1 and "only the conventional joint form is generated" in notes[0]


def test_cli_codegen_flag(capsys):
    path = next(p for p in SAMPLES if p.name.startswith("pendulum."))
    assert main(["run", str(path), "--t-end", "0.05", "--codegen"]) == 0
    assert "codegen: compiled kernels" in capsys.readouterr().out


@pytest.mark.slow
def test_generated_tires_equal_the_python_tires_on_the_bump():
    """The car's tires and speed controller are in the kernels: Q equals the generic Q to 1e-12 at
    states with every tire loaded, the front wheels on the half-sine bump's flank, the controller
    driving (t = 0.3 s, wheels turned at random)."""
    model = solver.load_model(next(p for p in SAMPLES if p.name.startswith("vehicle_cae_tc_bump.")))
    generic, generated = CartesianSystem(model), CodegenCartesianSystem(model)
    assert generated.interpreted == []
    q, qd, t = generic.initial_state()
    q = assemble_positions(generic, q, t)
    q[0:7 * generic.nb:7] += 15.5                 # the bump starts 15 m ahead of the front axle
    rng = np.random.default_rng(0)
    tires = [f for f in generic.force_elements if type(f).__name__ == "TireForce"]
    for _ in range(3):
        qq = generic.normalize(q + 1e-3 * rng.standard_normal(len(q)))
        qv = qd + 0.5 * rng.standard_normal(len(q))
        frames = generic.frames(qq, qv)
        assert all(f.state(frames).Fz > 1000.0 for f in tires)
        assert max(abs(f.road.profile(f.state(frames).point[0])[1]) for f in tires) > 0.05    # on the flank
        assert rel_err(generated.forces(qq, qv, 0.3), generic.forces(qq, qv, 0.3)) < 1e-12
