"""Generated kernels of the relative formulation (solver.codegen.relative, tree.py, relative.c)
against the generic recursive path (STYLE §9): the tree map against the forward recursion and
finite differences; Φ, Φ_q, ν, γ, M and Q at random states to 1e-10 relative on models with every
joint type, inverted and cut joints, floating bases, massless links and tires; trajectories,
reactions and driving forces to 1e-8; the free-falling RRC arm's energy.  One cache folder for the
module, so each model compiles once.
"""
from pathlib import Path

import numpy as np
import pytest

import relative_models as rm
import solver
from solver.codegen import CodegenRelativeSystem
from solver.formulations.cartesian import CartesianSystem
from solver.formulations.relative import RelativeSystem
from solver.math.rotations import G_matrix, rotation_matrix
from test_codegen import all_features_model, rel_err

SAMPLES = Path(__file__).resolve().parents[2] / "sample_models"
KERNEL_RTOL = 1e-10
TRAJECTORY_RTOL = 1e-8
pytestmark = pytest.mark.usefixtures("module_codegen_cache")
_SYSTEMS = {}                # model name → (generic, generated), built once per test session


MODELS = {
    "all features": all_features_model,
    "redundant driven four-bar": lambda: rm.four_bar(True, driven=True),
    "driven slider-crank": lambda: rm.slider_crank(True),
    "floating chain": rm.floating_chain,
    "spherical + distance link": rm.spherical_with_distance_link,
    "driven planar screw": lambda: rm.planar_screw_fixed(True),
    "rrc_arm_case2": lambda: solver.load_model(SAMPLES / "rrc_arm_case2.mbs.json"),
    "car (tires)": lambda: solver.load_model(SAMPLES / "vehicle_cae_tc_bump.mbs.json"),
}


def systems(name, models=MODELS):
    """(generic, generated) systems of a model of ``models`` (name → builder), built once per session."""
    if name not in _SYSTEMS:
        model = models[name]()
        _SYSTEMS[name] = (RelativeSystem(model), CodegenRelativeSystem(model))
    return _SYSTEMS[name]


def random_states(generic, seed, count=3):
    rng = np.random.default_rng(seed)
    q0 = np.concatenate([mob.initial() for mob in generic.mobs])
    for _ in range(count):
        q = q0 + 0.2 * rng.standard_normal(generic.nq)
        yield q, rng.standard_normal(generic.nq), float(rng.uniform(0.0, 2.0))


@pytest.mark.slow
@pytest.mark.parametrize("name", list(MODELS))
def test_tree_map_equals_the_forward_recursion(name):
    """q_c, q̇_c = T q̇ and the generated frames() against kinematics()/frames(); Ṫq̇ against
    central differences of T q̇."""
    generic, generated = systems(name)
    for q, qd, _ in random_states(generic, 1):
        qc, T, qdc, tdqd = (np.array(a) for a in generated.cartesian_state(q, qd))
        kin, frames = generic.kinematics(q, qd), generic.frames(q, qd)
        for b in range(generic.nb):
            r, p = qc[7 * b:7 * b + 3], qc[7 * b + 3:7 * b + 7]
            assert np.allclose(r, kin.r[b], atol=1e-13)
            assert np.allclose(rotation_matrix(p), kin.A[b], atol=1e-13)
            assert np.allclose(qdc[7 * b:7 * b + 3], frames.v[b], atol=1e-12)
            assert np.allclose(2.0 * G_matrix(p) @ qdc[7 * b + 3:7 * b + 7], frames.w[b], atol=1e-12)
        assert np.allclose(T @ qd, qdc, atol=1e-13)
        mine = generated.frames(q, qd)
        for key in ("r", "A", "v", "w"):
            assert np.allclose(getattr(mine, key), getattr(frames, key), atol=1e-12)
        h = 1e-6

        def rate(qq):
            _, T2, _, _ = generated.cartesian_state(qq, qd)
            return T2 @ qd
        fd = (rate(q + h * qd) - rate(q - h * qd)) / (2 * h)
        assert rel_err(tdqd, fd) < 1e-7


@pytest.mark.parametrize("name", list(MODELS))
def test_kernels_equal_the_generic_relative_path(name):
    generic, generated = systems(name)
    worst = 0.0
    for q, qd, t in random_states(generic, 2):
        a, b = generated.constraints(q, t, qd, level=2), generic.constraints(q, t, qd, level=2)
        errs = [rel_err(a.phi, b.phi), rel_err(a.jac, b.jac), rel_err(a.nu, b.nu), rel_err(a.gamma, b.gamma),
                rel_err(generated.mass(q), generic.mass(q)), rel_err(generated.forces(q, qd, t), generic.forces(q, qd, t))]
        worst = max(worst, *errs)
    assert worst < KERNEL_RTOL


def compare_runs(model, t_end, **kw):
    generic = solver.simulate(model, formulation="relative", t_end=t_end, codegen="off", **kw)
    generated = solver.simulate(model, formulation="relative", t_end=t_end, codegen=True, **kw)
    notes = [e["message"] for e in generated.events if e["kind"] == "codegen"]
    assert len(notes) == 1 and notes[0].startswith("codegen: compiled kernels"), notes
    for body in model.bodies:
        assert rel_err(generated.body_position(body), generic.body_position(body)) < TRAJECTORY_RTOL
    for joint in model.joints:
        assert rel_err(generated.joint_reaction(joint)[0], generic.joint_reaction(joint)[0]) < 1e-6
    for driver in model.drivers:
        assert rel_err(generated.driver_force(driver), generic.driver_force(driver)) < 1e-6
    return generic, generated


@pytest.mark.slow
def test_slider_crank_and_four_bar_runs_equal_the_generic_path():
    compare_runs(solver.load_model(SAMPLES / "slider_crank.mbs.json"), 0.5, rtol=1e-9, atol=1e-11)
    compare_runs(solver.load_model(SAMPLES / "fourbar.mbs.json"), 0.5)


@pytest.mark.slow
def test_free_falling_rrc_arm_conserves_energy_and_matches_the_generic_run():
    """The issue's benchmark case (pitch joints at 0.3 rad, rtol 1e-6): energy drift ≤ 1e-4 over 5 s
    (measured ≈ 3e-8), and the first second equals the generic recursive run."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("make_samples", SAMPLES.parent / "tools" / "make_samples.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    model = mod.rrc_arm("rrc-arm-free", pitch=(0.3, 0.3, 0.3))
    compare_runs(model, 1.0, output_step=0.05, rtol=1e-9, atol=1e-11)
    res = solver.simulate(model, formulation="relative", t_end=5.0, output_step=0.1, rtol=1e-6, atol=1e-8,
                          codegen=True)
    assert res.summary()["energy_drift"] < 1e-4


# ---- the tree-structured algebra of relative.c and reduced.c against the dense one ----------------
def planar_loops(n):
    """tools/scale_models.planar_loops(n): n four-bars in a row, each closed by a cut revolute joint
    whose three out-of-plane equations are redundant with zero rows of Φ_q (planar motion)."""
    import sys
    sys.path.insert(0, str(SAMPLES.parent))
    from tools.scale_models import planar_loops as loops
    return loops(n, omega=0.7)


STRUCTURED = {"all features": all_features_model, "planar loops": lambda: planar_loops(4),
              "car (tires)": MODELS["car (tires)"]}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(STRUCTURED))
def test_tree_structured_products_equal_the_dense_ones(name):
    """relative.c forms M = Tᵀ M_c T, Q = Tᵀ (Q_c − M_c Ṫq̇), the cut-joint rows Φ_c,q T and
    γ_c − Φ_c,q Ṫq̇ over the columns of each body's path and the blocks of each row's bodies only:
    they equal the dense products of the generated T and Ṫq̇ with the generic Cartesian M_c, Q_c,
    Φ_c,q, γ_c at q_c (to 1e-12 relative)."""
    from solver.codegen.relative import describe_relative, ROW_CARTESIAN
    generic, generated = systems(name, STRUCTURED)
    cartesian = CartesianSystem(STRUCTURED[name](), form="conventional")
    rows = describe_relative(generated, cartesian)["rows"]
    cut = [(i, a) for i, (kind, a, _) in enumerate(rows) if kind == ROW_CARTESIAN]
    for q, qd, t in random_states(generic, 3):
        qc, T, qdc, tdqd = (np.array(a) for a in generated.cartesian_state(q, qd))
        Mc = cartesian.mass(qc)
        assert rel_err(generated.mass(q), T.T @ Mc @ T) < 1e-12
        Qc = cartesian.forces(qc, qdc, t) - Mc @ tdqd
        Q = generated.forces(q, qd, t) - (generated.interpreted_forces(q, qd, t) if generated.interpreted else 0.0)
        assert rel_err(Q, T.T @ Qc) < 1e-12
        if cut:
            ours, dense = generated.constraints(q, t, qd, level=2), cartesian.constraints(qc, t, qdc, level=2)
            i, a = (np.array(x) for x in zip(*cut))
            assert rel_err(ours.jac[i], dense.jac[a] @ T) < 1e-12
            assert rel_err(ours.gamma[i], dense.gamma[a] - dense.jac[a] @ tdqd) < 1e-12


@pytest.mark.slow
def test_compiled_reduction_of_planar_loops_equals_the_python_partition():
    """cg_reduced on the relative planar loops (redundant rows with zero Φ_q rows, which the
    minimum-norm step leaves out): q, q̇, q̈ equal the generic partition's to 1e-10 and λ the
    least-squares (minimum-norm) multipliers to 1e-9."""
    from solver.analysis.assembly import assemble_positions
    from solver.partitioning.choose import build_partition
    from solver.partitioning.partition import multipliers
    generic, generated = systems("planar loops", STRUCTURED)
    q0, _, t0 = generic.initial_state()
    q0 = assemble_positions(generic, q0, t0)
    part = build_partition("qr", generic, q0, t0)
    assert len(part.redundant) == 12 and part.dof == 1
    assert np.all(generic.constraints(q0, t0).jac[part.redundant] == 0.0)
    compiled = generated.compiled_reduction(part)
    rng = np.random.default_rng(5)
    for _ in range(3):
        y = np.concatenate([0.05 * rng.standard_normal(1), rng.standard_normal(1)])
        assert compiled.solve(t0, y, q0, level=compiled.MULTIPLIERS)     # q̈ and λ
        q, ev = part.positions(generic, y[:1], t0, q0)
        qd = part.velocities(ev.jac, ev.nu, y[1:])
        ev2 = generic.constraints(q, t0, qd, level=2)
        M, Q = generic.mass(q), generic.forces(q, qd, t0)
        qdd, _, _ = part.accelerations(M, Q, ev2.jac, ev2.gamma)
        for a, b in ((compiled.q, q), (compiled.qd, qd), (compiled.qdd, qdd)):
            assert rel_err(a, b) <= KERNEL_RTOL
        assert rel_err(compiled.lam, multipliers(ev2.jac, M, qdd, Q)) <= 1e-9
