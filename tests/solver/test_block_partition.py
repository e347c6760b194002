"""The block-sparse QR partition of an open tree's normalization rows (solver/partitioning/block.py)
against the dense QR partition (partition.py) of the same configuration.

Both span the same tangent space (U: the rows' directions, V: its orthogonal complement), so what
does not depend on the basis is equal to round-off: the projector V Vᵀ, the positions the Newton
finds from the same q, the velocities, ‖N‖_F (N' = N R for an orthogonal R), σ_min(Φ_q U) and the
partition quality.  A run of 12 free spheres dropped on a floor 0.5 m or more below them (the
block partition switched on for them) under ``simulate(model)``: the block partition (compiled
tree_reduced reading its sparse columns) is as close to a tight reference as the dense one.
"""
import numpy as np
import pytest

import solver
from solver.partitioning import block
from solver.partitioning.block import BlockPartition
from solver.partitioning.choose import build_partition
from solver.partitioning.partition import Partition, independent_rows


def free_bodies(n, rng):
    m = solver.Model(name="free", gravity=(0, -9.81, 0))
    for k in range(n):
        q = rng.normal(size=4)
        m.add_body(f"b{k}", mass=1.0, inertia=(1e-3, 2e-3, 3e-3), position=tuple(rng.uniform(-1.5, 1.5, 3)),
                   orientation=tuple(q / np.linalg.norm(q)), velocity=tuple(rng.normal(size=3)),
                   angular_velocity=tuple(rng.normal(size=3)), geometry={"shape": "sphere", "radius": 0.05})
        m.add_contact(f"floor{k}", "ground", f"b{k}", stiffness=1e6, damping=50.0,
                      geometry_i={"shape": "plane", "point": (0, -2, 0), "normal": (0, 1, 0)})
    return m


def test_the_block_partition_is_the_dense_qr_partition_in_another_basis():
    rng = np.random.default_rng(2)
    n = block.BLOCK_MIN_ROWS + 3
    system = solver.compile_model(free_bodies(n, rng), codegen="off").system
    q0 = system.initial_state()[0]
    fast = build_partition("qr", system, q0, 0.0)
    assert isinstance(fast, BlockPartition) and fast.dof == system.nq - n
    jac = system.constraints(q0, 0.0).jac
    rows, redundant = independent_rows(jac)
    dense = Partition("qr", q0, jac, rows, redundant)
    U, V = fast.U.toarray(), fast.V.toarray()
    eye = 1e-14
    assert np.max(np.abs(V.T @ V - np.eye(fast.dof))) <= eye and np.max(np.abs(U.T @ U - np.eye(n))) <= eye
    assert np.max(np.abs(V.T @ U)) <= eye
    assert np.max(np.abs(V @ V.T - dense.V @ dense.V.T)) <= 1e-13
    q = q0 + rng.normal(0.0, 1e-3, q0.shape)                      # off the constraints: Newton's work
    z = dense.z_of(q)
    qa, _ = fast.positions(system, fast.z_of(q), 0.0, q)
    qb, _ = dense.positions(system, z, 0.0, q)
    assert np.max(np.abs(qa - qb)) <= 1e-12
    ev = system.constraints(qa, 0.0, level=1)
    qd = rng.normal(size=q0.shape)
    va = fast.velocities(ev.jac, ev.nu, fast.zd_of(qd))
    vb = dense.velocities(ev.jac, ev.nu, dense.zd_of(qd))
    assert np.max(np.abs(va - vb)) <= 1e-12 * np.max(np.abs(vb))
    assert fast.amplification(ev.jac) == pytest.approx(dense.amplification(ev.jac), rel=1e-12)
    assert fast._dependent_sigma_min(ev.jac) == pytest.approx(dense._dependent_sigma_min(ev.jac), rel=1e-12)
    assert fast.quality(ev.jac) == pytest.approx(dense.quality(ev.jac), rel=1e-12)
    assert fast.degraded(ev.jac, 0.5, 10.0) is None


def test_the_sparse_initial_velocities_are_the_dense_least_squares_fit(monkeypatch):
    from solver.formulations import relative
    model = free_bodies(12, np.random.default_rng(3))
    model.add_joint("pin", "revolute", "b0", "b1", origin=(0.0, 0.0, 0.0))      # a cut-free chain link too
    starts = []
    for limit in (0, 10 ** 9):                                                # sparse (SuperLU), dense lstsq
        monkeypatch.setattr(relative, "SPARSE_FIT_MIN", limit)
        starts.append(solver.compile_model(model, codegen="off").system.initial_state()[1])
    assert np.any(starts[1]) and np.max(np.abs(starts[0] - starts[1])) <= 1e-9 * np.max(np.abs(starts[1]))


def test_a_run_with_the_block_partition_is_as_close_to_a_tight_reference_as_the_dense_run(monkeypatch):
    """12 free spheres bouncing on a floor (the block partition switched on from 1 row): the default
    run with the block partition and with the dense one, against a dense run at rtol 1e-11."""
    runs = []
    for limit, rtol in ((1, None), (10 ** 9, None), (10 ** 9, 1e-11)):
        monkeypatch.setattr(block, "BLOCK_MIN_ROWS", limit)
        model = free_bodies(12, np.random.default_rng(4))
        res = solver.simulate(model, t_end=0.7, output_step=0.01, **({"rtol": rtol, "atol": 1e-13} if rtol else {}))
        assert res.status == "ok"
        runs.append(np.array([res.body_position(f"b{k}") for k in range(12)]))
    fast, dense, reference = runs
    assert np.min(reference[..., 1]) < -1.9                     # they reached the floor (y = -2, R = 0.05)
    assert np.max(np.abs(fast - reference)) <= 10.0 * np.max(np.abs(dense - reference)) + 1e-9
