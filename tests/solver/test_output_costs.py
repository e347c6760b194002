"""The cheaper ways of computing a run's outputs give the numbers of the plain computations they
replace: the non-unique reaction components found with the output rows' post-processing batch
(against a fresh :func:`reaction_uniqueness` at the same state), the output rows of that shared batch
(against post-processing them alone), the joint frames recovered for all joints at once (against one
least-squares solve per joint) and the B(e_k, a') tensor of all slots at once (against one slot at a
time), and the re-partition test with Weyl's bound decides as the one with the row-norm bound
(the same partitions, bit-identical results) while its bound stays above the exact σ_min."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import solver
from solver.constraints.batch import b_tensor
from solver.math.rotations import B_matrix
from solver.partitioning.partition import Partition
from solver.partitioning.self_stress import (joint_frames, null_spaces, probe_directions, reaction_responses,
                                             reaction_uniqueness)

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_models"


def scale_models():
    spec = importlib.util.spec_from_file_location("scale_models", ROOT / "tools" / "scale_models.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def fourbar_row(n):
    return scale_models().fourbar_row(n)


def slider_crank():
    return solver.load_model(str(SAMPLES / "slider_crank.mbs.json"))


@pytest.mark.parametrize("formulation", ["cartesian", "relative"])
def test_flags_found_with_the_output_batch_equal_a_fresh_computation(formulation, monkeypatch):
    """With generated kernels the probes' rows are post-processed in C (Recorder._probe_rows), the
    fresh computation's in Python: the same flags."""
    from solver.analysis.recording import Recorder
    in_c, probe_rows = [], Recorder._probe_rows
    monkeypatch.setattr(Recorder, "_probe_rows", lambda self, rows: in_c.append(probe_rows(self, rows)) or in_c[-1])
    model = slider_crank()
    res = solver.simulate(model, t_end=0.01, output_step=0.005, formulation=formulation)
    compiled = solver.compile_model(model, formulation=formulation)
    assert len(in_c) == 1 and (in_c[0] is not None) == bool(compiled.generated)
    system = compiled.system.workspace()
    fresh = reaction_uniqueness(system, res.t[0], res.coordinates[0], res.velocities[0], res.accelerations[0])
    assert fresh.components                                     # the planar loop of 3D joints: some flags
    assert res.meta["nonunique_components"] == fresh.components
    assert res.meta["nonunique_components_global"] == fresh.global_components
    assert res.meta["nonunique_messages"] == fresh.messages
    warnings = [e for e in res.meta["events"] if e["kind"] == "warning"]
    assert len(warnings) == 1 and warnings[0]["time"] == 0.0
    times = [e["time"] for e in res.meta["events"]]
    assert times == sorted(times)                               # listed at its own time
    # the output rows of the shared batch are those of the rows alone (the rows' own post-processing:
    # in C on the Cartesian path, solver/codegen/output.py, to round-off of the reactions' scale — the
    # planar mechanism's out-of-plane torques are round-off themselves)
    post = system.postprocess_batch(res.t, res.coordinates, res.velocities, res.accelerations, res.multipliers)
    scale = np.max(np.abs(post["reaction_force"]))
    for name in ("reaction_force", "reaction_torque", "reaction_force_joint", "reaction_torque_joint"):
        np.testing.assert_allclose(res._a[name], post[name], rtol=1e-12,
                                   atol=1e-12 * max(scale, np.max(np.abs(post[name]))))
    np.testing.assert_allclose(res._a["r"], post["r"], rtol=1e-13, atol=1e-15)


def test_joint_frames_equal_one_least_squares_solve_per_joint():
    model = slider_crank()
    res = solver.simulate(model, t_end=0.01, output_step=0.01, formulation="relative")
    system = solver.compile_model(model, formulation="relative").system.workspace()
    q, qd, qdd = res.coordinates[-1], res.velocities[-1], res.accelerations[-1]
    P, G = probe_directions(null_spaces(system.constraints(q, res.t[-1]).jac).stress)
    resp = reaction_responses(system, res.t[-1], q, qd, qdd, np.vstack([P, G]))
    frames = joint_frames(resp)
    assert len(frames) == len(system.joint_names) and any(f is not None for f in frames)
    for k, frame in enumerate(frames):
        g = np.concatenate([resp["global"][:, k, :3], resp["global"][:, k, 3:]])
        j = np.concatenate([resp["joint"][:, k, :3], resp["joint"][:, k, 3:]])
        expected, _, rank, _ = np.linalg.lstsq(g, j, rcond=None)
        assert (frame is not None) == (rank == 3)
        if frame is not None:
            np.testing.assert_allclose(frame, expected, rtol=0, atol=1e-12)


def test_b_tensor_of_all_slots_equals_one_slot_at_a_time():
    vectors = np.random.default_rng(3).standard_normal((40, 3))
    unit = np.eye(4)
    expected = np.array([[B_matrix(unit[k], a) for k in range(4)] for a in vectors])
    assert np.array_equal(b_tensor(vectors), expected)
    assert b_tensor(np.zeros((0, 3))).shape == (0, 4, 3, 4)


def test_weyl_bound_makes_the_same_repartition_decisions(monkeypatch):
    """The four-bar row through its first singular passes (Cartesian, dense QR partitions: it
    re-partitions at 0.71 s and 0.96 s)."""
    model = fourbar_row(3)
    runs = {}
    for bound in ("weyl", "row norms"):
        if bound == "row norms":
            monkeypatch.setattr(Partition, "_sigma_min_bound", Partition._smallest_row_norm)
        runs[bound] = solver.simulate(model, t_end=1.0, formulation="cartesian", codegen=False)
    a, b = runs["weyl"], runs["row norms"]
    partitions = [[(e["time"], e["message"]) for e in r.meta["events"] if e["kind"] == "partition"] for r in (a, b)]
    assert len(partitions[0]) > 1 and partitions[0] == partitions[1]
    assert np.array_equal(a.coordinates, b.coordinates) and np.array_equal(a.conditioning, b.conditioning)


def test_weyl_bound_is_above_the_exact_sigma_min():
    rng = np.random.default_rng(5)
    jac = rng.standard_normal((6, 9))
    part = Partition("qr", np.zeros(9), jac, np.arange(6), np.zeros(0, dtype=int))
    part._row_singular_values(jac)                              # J₀ for the bound
    for scale in (0.0, 1e-9, 1e-3, 0.1, 1.0):
        moved = jac + scale * rng.standard_normal(jac.shape)
        exact = np.linalg.svd(moved, compute_uv=False)[-1]
        assert exact <= part._sigma_min_bound(moved) <= part._smallest_row_norm(moved)
    assert part._sigma_min_bound(jac) == pytest.approx(np.linalg.svd(jac, compute_uv=False)[-1], rel=1e-9)


def test_plain_copy_is_a_deep_copy():
    import copy
    from collections import namedtuple
    from solver.model.elements import plain_copy
    Pair = namedtuple("Pair", "a b")
    values = {"name": "b", "position": [0.1, 0.2, 0.3], "nested": {"t": [0.0, 1.0], "k": (1, [2, 3])},
              "none": None, "flag": True, "pair": Pair([1.0], 2.0)}
    copied = plain_copy(values)
    assert copied == copy.deepcopy(values) and type(copied["pair"]) is Pair
    copied["position"][0] = 9.0
    copied["nested"]["k"][1].append(4)
    copied["pair"].a.append(5.0)
    assert values["position"][0] == 0.1 and values["nested"]["k"][1] == [2, 3] and values["pair"].a == [1.0]
    body = slider_crank().bodies["crank"]
    assert body.copy().values == body.values and body.copy().values is not body.values


@pytest.mark.parametrize("formulation", ["cartesian", "relative"])
def test_a_model_run_on_its_own_system_equals_a_run_on_a_workspace(formulation):
    """simulate(Model) compiles the system for that run alone and evaluates it itself (run state reset
    in place, ``own_workspace``); simulate(CompiledModel) evaluates a workspace copy: the same run.
    The four-bar sample's driven crank turns past ±π (the driver's angle unwrapping is run state)."""
    model = solver.load_model(str(SAMPLES / "fourbar.mbs.json"))
    own = solver.simulate(model, t_end=1.0, formulation=formulation, codegen=False)
    compiled = solver.compile_model(model, formulation=formulation, codegen=False)
    solver.simulate(compiled, t_end=0.5)                        # a run before leaves nothing behind
    copy = solver.simulate(compiled, t_end=1.0)
    assert own.status == copy.status == "ok"
    for name in ("q", "qd", "lam", "reaction_force", "energy_table", "conditioning"):
        assert np.array_equal(own._a[name], copy._a[name]), name


def test_initial_velocities_at_rest_are_the_least_squares_answer():
    """RelativeSystem.initial_state skips the KKT least-squares solve when nothing moves (no body
    velocity, ν = 0): lstsq's answer there is q̇ = 0 exactly; a model given a velocity still solves."""
    from solver.formulations.relative import RelativeSystem
    at_rest = scale_models().planar_loops(3)                    # loops_50's kind, starting at rest
    system = RelativeSystem(at_rest)
    q, qd, _ = system.initial_state()
    ev = system.constraints(q, 0.0, level=1)
    kkt = np.block([[1e-12 * np.eye(system.nq), ev.jac.T], [ev.jac, np.zeros((system.m, system.m))]])
    assert np.array_equal(qd, np.linalg.lstsq(kkt, np.zeros(system.nq + system.m), rcond=None)[0][:system.nq])
    assert not np.any(qd)
    for moving in (slider_crank(), fourbar_row(3)):             # their cranks start turning
        assert np.any(RelativeSystem(moving).initial_state()[1])


def test_consistent_velocities_skip_the_projection_only_when_it_is_zero():
    from solver.analysis.assembly import consistent_velocities
    from solver.formulations.relative import RelativeSystem
    system = RelativeSystem(scale_models().planar_loops(3))
    from solver.partitioning.partition import independent_rows
    q, qd, t = system.initial_state()
    ev = system.constraints(q, t, level=1)
    rows, _ = independent_rows(ev.jac)
    J = ev.jac[rows]
    JW = J / system.velocity_weights()

    def projected(v):                      # the weighted least-change projection onto the independent rows
        y = np.linalg.lstsq(JW @ J.T, ev.nu[rows] - J @ v, rcond=None)[0]
        return v + JW.T @ y
    assert np.array_equal(consistent_velocities(system, q, qd, t), projected(qd))          # at rest: q̇ = 0
    off = np.random.default_rng(2).standard_normal(system.nq)
    assert np.array_equal(consistent_velocities(system, q, off, t), projected(off))
    assert np.max(np.abs(ev.jac @ consistent_velocities(system, q, off, t))) < 1e-10


def test_cached_joint_frames_and_constants_equal_fresh_ones():
    """joint_frame caches frame_from_axis per (axis, axis2) and constants_of per form: the same
    numbers as computed afresh, and a caller changing its frame does not change the cache."""
    from solver.constraints.forms import constants_of
    from solver.constraints.joints import joint_frame
    from solver.math.rotations import frame_from_axis
    model = solver.load_model(str(SAMPLES / "vehicle_23body.mbs.json"))
    for joint in model.joints.values():
        fresh = (frame_from_axis(joint.axis, joint.axis2) if "axis2" in joint.kind.fields
                 else frame_from_axis(joint.axis))
        frame = joint_frame(joint)
        assert np.array_equal(frame, fresh)
        frame[:] = 0.0
        assert np.array_equal(joint_frame(joint), fresh)
        for spec in joint.kind.equations:
            constants_of.cache_clear()
            first = constants_of(spec)
            assert constants_of(spec) == first


def test_post_processing_of_repeated_states_equals_each_row_on_its_own(monkeypatch):
    """Relative post-processing runs the forward recursion once per distinct (q, q̇) (byte for byte:
    a −0.0 is not a 0.0) and gathers it back: every output as with one recursion of all rows."""
    from solver.formulations.relative import RelativeSystem
    model = slider_crank()
    res = solver.simulate(model, t_end=0.01, output_step=0.005, formulation="relative", codegen=False)
    system = RelativeSystem(model)
    pick = [0, 1, 1, 2, 1, 0, 2]
    t, q, qd, qdd = (np.array(x)[pick] for x in (res.t, res.coordinates, res.velocities, res.accelerations))
    qd[6] = np.where(qd[6] == 0.0, -0.0, qd[6])                  # the same numbers as row 3, other bytes
    lam = np.random.default_rng(4).standard_normal((len(pick), len(system.equations)))
    distinct = system.postprocess_batch(t, q, qd, qdd, lam)
    monkeypatch.setattr(RelativeSystem, "_distinct_recursion", RelativeSystem._recursion)
    plain = system.postprocess_batch(t, q, qd, qdd, lam)
    for name in plain:
        assert np.array_equal(distinct[name], plain[name]), name
