"""Which reaction components redundant constraints leave undetermined (solver.partitioning.self_stress).

The multipliers are fixed up to the self-stress states S (Φ_qᵀ S = 0); a reaction component c₀ + cᵀλ
is unique iff ‖Sᵀc‖ ≤ tol ‖c‖.  A planar loop built with 3D joints carries its self-stress in the
out-of-plane directions only: out-of-plane force and the moments about in-plane axes are arbitrary, the
in-plane forces, the moment about the plane normal and the driving torque are unique.  The check that
the flags are right is independent of the criterion: adding a self-stress vector to λ (still a
solution of M q̈ + Φ_qᵀλ = Q) must change exactly the flagged outputs of the formulation's own
post-processing and leave the others as they were."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.linalg as sla

import solver
from solver.partitioning.partition import independent_rows, multipliers
from solver.partitioning.self_stress import (EXACT_NORMS, JOINT_COMPONENTS, SKETCH_STRESS, nonunique_mask,
                                             null_spaces, reaction_responses, reaction_uniqueness, sentence)

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_models"
OUT_OF_PLANE_REVOLUTE = ["force z", "moment x", "moment y"]   # revolute frame: z along the axis (normal)


def sample(name):
    return solver.load_model(str(SAMPLES / f"{name}.mbs.json"))


def driven_slider_crank():
    """The slider–crank sample with its crank driven at 15 rad/s (its initial speed)."""
    m = sample("slider_crank")
    m.add_driver("crank_drive", "crank_pin", "15*t")
    return m


def slider_crank_with_pendulum():
    """The slider–crank sample with a bob hung from the piston by a revolute (an open branch)."""
    m = sample("slider_crank")
    m.add_body("bob", mass=0.3, inertia=(1e-4, 1e-4, 1e-4), position=(0.4, -0.1, 0.0))
    m.add_joint("hinge", "revolute", "piston", "bob", origin=(0.4, 0.0, 0.0))
    return m


def spatial_fourbar():
    """The four-bar sample with B spherical and C universal (RSUR; the cross along the plane normal
    on the coupler and along the rocker, so the coupler cannot spin about BC): 6·3 − (5 + 3 + 4 + 5)
    = 1, and Φ_q has full row rank — no redundant equation, every reaction unique."""
    m = sample("fourbar")
    B, C, D = (np.array(m.joints[n].origin) for n in "BCD")
    m.remove("crank_drive")
    m.remove("B")
    m.remove("C")
    m.add_joint("B", "spherical", "crank", "coupler", origin=tuple(B))
    m.add_joint("C", "universal", "coupler", "rocker", origin=tuple(C), axis=(0.0, 0.0, 1.0), axis2=tuple(D - C))
    return m


def state(model, formulation="cartesian"):
    """(system, t, q, q̇, q̈, λ): an assembled, consistent state 0.02 s into a run."""
    res = solver.simulate(model, t_end=0.02, output_step=0.02, formulation=formulation)
    system = solver.compile_model(model, formulation=formulation).system
    k = -1
    return (system, res.t[k], res.coordinates[k], res.velocities[k], res.accelerations[k],
            res.multipliers[k], res)


def outputs(system, t, q, qd, qdd, lam):
    """Joint-frame reactions (nj, 6) and driver forces of one state, from the formulation."""
    post = system.postprocess(q, qd, qdd, lam, t)
    return np.concatenate([post["reaction_force_joint"], post["reaction_torque_joint"]], axis=1), post["driver_force"]


def changed_by_self_stress(system, t, q, qd, qdd, lam, s):
    """{element: [components]} the self-stress vector s (scaled to the size of λ) changes, compared
    with round-off of the outputs' size."""
    R0, D0 = outputs(system, t, q, qd, qdd, lam)
    scale = max(np.max(np.abs(R0)), np.max(np.abs(D0), initial=0.0), 1.0)
    R1, D1 = outputs(system, t, q, qd, qdd, lam + s * np.linalg.norm(lam) / np.linalg.norm(s))
    changed = {}
    for k, name in enumerate(system.joint_names):
        comps = [c for c, d in zip(JOINT_COMPONENTS, np.abs(R1[k] - R0[k])) if d > 1e-8 * scale]
        if comps:
            changed[name] = comps
    for k, name in enumerate(system.driver_names):
        if abs(D1[k] - D0[k]) > 1e-8 * scale:
            changed[name] = ["driver force"]
    return changed


@pytest.mark.parametrize("formulation", ["cartesian", "relative"])
def test_slider_crank_sample_flags_only_out_of_plane_components(formulation):
    res = solver.simulate(sample("slider_crank"), t_end=0.05, formulation=formulation)
    flagged = res.nonunique_components
    for j in ("crank_pin", "crank_rod", "rod_piston"):
        assert flagged[j] == OUT_OF_PLANE_REVOLUTE
    # prismatic: frame z along the slide (global x), x = global y, y = global z
    assert flagged["cylinder"] == ["force y", "moment x", "moment z"]
    assert res.nonunique_components_in("global") == {j: ["force z", "moment x", "moment y"]
                                                     for j in ("crank_pin", "crank_rod", "rod_piston", "cylinder")}
    assert res.nonunique_reactions == ["crank_pin", "crank_rod", "rod_piston", "cylinder"]
    assert res.nonunique_messages["crank_pin"] == ("out-of-plane force z and out-of-plane moment x, y of "
                                                   "crank_pin are not unique")
    assert res.nonunique_messages["cylinder"] == ("out-of-plane force y and out-of-plane moment x, z of "
                                                  "cylinder are not unique")
    [event] = [e for e in res.events if e["kind"] == "warning" and "crank_pin are not unique" in e["message"]]
    assert event["message"].endswith("(self-stress of the redundant constraints; every other reaction "
                                     "component is unique)")


def test_driven_slider_crank_driver_torque_and_in_plane_reactions_unique():
    res = solver.simulate(driven_slider_crank(), t_end=0.05)
    assert "crank_drive" not in res.nonunique_components
    assert "moment z" not in res.nonunique_components["crank_pin"]          # carries the driving torque
    assert res.nonunique_components["crank_pin"] == OUT_OF_PLANE_REVOLUTE
    # the driving torque is a real number, not round-off: the flags are not trivially empty
    assert np.max(np.abs(res.driver_force("crank_drive"))) > 1e-3


def test_a_joint_outside_the_loop_is_unique():
    """The hinge of a pendulum on the piston carries no self-stress: all its components are unique."""
    res = solver.simulate(slider_crank_with_pendulum(), t_end=0.05)
    assert "hinge" not in res.nonunique_components and "hinge" not in res.nonunique_reactions
    assert res.nonunique_reactions == ["crank_pin", "crank_rod", "rod_piston", "cylinder"]
    F, _ = res.joint_reaction("hinge")
    assert np.max(np.abs(F)) > 1.0                     # it does carry the bob (0.3 kg · g ≈ 2.9 N)


def test_fourbar_sample():
    res = solver.simulate(sample("fourbar"), t_end=0.05)
    assert res.nonunique_components == {j: OUT_OF_PLANE_REVOLUTE for j in "ABCD"}
    assert res.nonunique_reactions == ["A", "B", "C", "D"]
    assert res.nonunique_messages["B"] == "out-of-plane force z and out-of-plane moment x, y of B are not unique"


def test_spatial_fourbar_without_redundancy_flags_nothing():
    m = spatial_fourbar()
    system = solver.compile_model(m).system
    q, _, t = system.initial_state()
    jac = system.constraints(q, t).jac
    assert len(independent_rows(jac)[1]) == 0 and system.nq - jac.shape[0] == 1
    res = solver.simulate(m, t_end=0.05)
    assert res.status == "ok" and res.redundant_equations == []
    assert res.nonunique_reactions == [] and res.nonunique_components == {} and res.nonunique_messages == {}


@pytest.mark.parametrize("model, formulation", [(driven_slider_crank, "cartesian"), (driven_slider_crank, "relative"),
                                                (lambda: sample("fourbar"), "cartesian"),
                                                (lambda: sample("fourbar"), "relative")])
def test_a_self_stress_changes_exactly_the_flagged_components(model, formulation):
    system, t, q, qd, qdd, lam, _ = state(model(), formulation)
    u = reaction_uniqueness(system, t, q, qd, qdd)
    S = u.basis
    assert S.shape[1] == 3                                          # 3 redundant equations
    jac = system.constraints(q, t).jac
    assert np.max(np.abs(jac.T @ S)) < 1e-12
    # λ + s solves the same equations of motion: Φ_qᵀ(λ + s) = Q − M q̈ as well as λ does
    rhs = system.forces(q, qd, t) - system.mass(q) @ qdd
    assert np.max(np.abs(jac.T @ lam - rhs)) < 1e-8 * max(1.0, np.max(np.abs(rhs)))
    assert np.allclose(multipliers(jac, system.mass(q), qdd, system.forces(q, qd, t)), lam, atol=1e-8)
    union = {}
    rng = np.random.default_rng(7)
    for s in list(S.T) + [S @ rng.standard_normal(S.shape[1])]:
        for name, comps in changed_by_self_stress(system, t, q, qd, qdd, lam, s).items():
            union.setdefault(name, set()).update(comps)
            assert set(comps) <= set(u.components[name])
    assert {n: sorted(c, key=JOINT_COMPONENTS.index) for n, c in union.items()} == u.components


@pytest.mark.parametrize("model", [lambda: sample("slider_crank"), driven_slider_crank, spatial_fourbar])
def test_null_spaces_match_scipy(model):
    """The self-stress states and velocity modes of one pivoted QR span the same spaces as
    scipy.linalg.null_space (an SVD) of Φ_qᵀ and Φ_q: equal orthogonal projectors."""
    system = solver.compile_model(model()).system
    q, _, t = system.initial_state()
    jac = system.constraints(q, t).jac
    spaces = null_spaces(jac)
    for mine, theirs in ((spaces.stress, sla.null_space(jac.T)), (spaces.modes, sla.null_space(jac))):
        assert mine.shape == theirs.shape
        assert np.allclose(mine.T @ mine, np.eye(mine.shape[1]), atol=1e-12)
        assert np.allclose(mine @ mine.T, theirs @ theirs.T, atol=1e-10)
    assert spaces.rank + spaces.stress.shape[1] == jac.shape[0]


def test_hdf5_round_trip_streamed_and_saved(tmp_path):
    m = sample("slider_crank")
    streamed = solver.simulate(m, t_end=0.05, results_path=str(tmp_path / "run.h5"))
    memory = solver.simulate(m, t_end=0.05)
    memory.save(str(tmp_path / "saved.h5"))
    for res in (streamed, solver.load_results(str(tmp_path / "saved.h5")),
                solver.load_results(str(tmp_path / "run.h5"), lazy=True)):
        assert res.nonunique_components == memory.nonunique_components
        assert res.nonunique_components_in("global") == memory.nonunique_components_in("global")
        assert res.nonunique_messages == memory.nonunique_messages
        assert res.nonunique_reactions == memory.nonunique_reactions


def test_results_without_component_data_flag_every_component_of_their_joints():
    res = solver.simulate(sample("fourbar"), t_end=0.02)
    for key in ("nonunique_components", "nonunique_components_global", "nonunique_messages"):
        del res.meta[key]
    assert res.nonunique_components == {j: list(JOINT_COMPONENTS) for j in "ABCD"}
    with pytest.raises(solver.ModelError, match="frame"):
        res.nonunique_components_in("body")


def test_bricard_mechanism_has_no_plane_words():
    """Bricard's loop is spatial: one self-stress state, components named by joint axes only."""
    from test_reliability_solver import bricard
    res = solver.simulate(bricard(), t_end=0.02)
    assert sorted(res.nonunique_components) == [f"J{k}" for k in range(1, 7)]
    assert all("plane" not in text for text in res.nonunique_messages.values())


def test_sentence_grammar():
    assert sentence("A", ["moment x"]) == "moment x of A is not unique"
    assert sentence("d", ["driver force"]) == "driver force of d is not unique"
    assert sentence("A", ["in-plane force x", "out-of-plane force z", "moment x"]) == \
        "in-plane force x, out-of-plane force z and moment x of A are not unique"


def test_the_sketch_of_a_large_model_gives_the_exact_flags():
    """4 planar loops (tools/scale_models.planar_loops): 74 multipliers and 12 self-stress states, so
    the random sketch is used for both (SKETCH_STRESS, EXACT_NORMS); its flags equal those from all
    self-stress states and the exact ‖c‖ (unit-vector probes)."""
    sys.path.insert(0, str(ROOT))
    from tools.scale_models import planar_loops
    system = solver.compile_model(planar_loops(4), formulation="cartesian").system
    q, _, t = system.initial_state()
    spaces = null_spaces(system.constraints(q, t).jac)
    m, k = spaces.stress.shape
    assert m > EXACT_NORMS and k > SKETCH_STRESS
    u = reaction_uniqueness(system, t, q)
    zero = np.zeros_like(q)
    stress = reaction_responses(system, t, q, zero, zero, spaces.stress.T)["joint"]
    norms = reaction_responses(system, t, q, zero, zero, np.eye(m))["joint"]
    nj = len(system.joint_names)
    exact = nonunique_mask(stress.reshape(k, nj, 2, 3), norms.reshape(m, nj, 2, 3)).reshape(nj, 6)
    assert u.components == {name: [c for c, bad in zip(JOINT_COMPONENTS, row) if bad]
                            for name, row in zip(system.joint_names, exact) if row.any()}
    assert len(u.components) == nj


@pytest.mark.slow
def test_generated_kernels_give_the_same_flags():
    """Generated C kernels (codegen="on", built in the test session's cache: 2.7 s measured)."""
    generic = solver.simulate(sample("fourbar"), t_end=0.02, codegen="off")
    compiled = solver.simulate(sample("fourbar"), t_end=0.02, codegen="on")
    assert compiled.nonunique_components == generic.nonunique_components
    assert compiled.nonunique_messages == generic.nonunique_messages
