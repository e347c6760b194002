"""Free bodies in contact on the O(n) path: an open tree whose only constraint rows are the free
joints' Euler-parameter normalizations runs articulated.c (the articulated-body recursion with the
normalizations' γ, solver/codegen/articulated.c) behind reduced.c's tree_reduced (sparse U, V,
diagonal Φ_q[rows] U), with the contact loads of contact.c as τ — the same equations as the dense
reduction (NᵀMN factored), which the same library still runs when tree_reduced is not used.

Checked: the right-hand side of both paths at random states in contact, for a QR and an LU
partition (round-off of the dense solve: a few ε · cond(NᵀMN) of the largest q̈); the trajectory
through ``solver.simulate(model)`` against the dense path and against the Cartesian formulation
(within the integrators' global error); the energy lost equals the energy the contacts dissipated."""
import numpy as np
import pytest

import solver
from solver.codegen import reduced
from solver.codegen.reduced import CompiledReduction, tree_partition
from solver.partitioning.choose import build_partition

LAW = dict(stiffness=1e6, damping=50.0, exponent=1.5, friction=(0.3, 0.3))
FLOOR = {"shape": "plane", "point": (0, 0, 0), "normal": (0, 1, 0)}
RTOL = 1e-10
NAMES = ["floor0", "floor1", "floor2", "c01", "c02", "c12"]          # the contact elements


def three_spheres():
    """Three spinning spheres dropped 10–30 mm onto a floor, rolling into each other."""
    m = solver.Model(name="three", gravity=(0, -9.81, 0))
    for k, (x, z, v, w) in enumerate([(0.0, 0.0, (0.3, 0, 0), (0, 0, 5)), (0.11, 0.02, (-0.4, 0, 0.1), (3, 0, 0)),
                                      (0.05, 0.1, (0, 0, -0.5), (0, 4, 1))]):
        m.add_body(f"s{k}", mass=0.5, inertia=(5e-4,) * 3, position=(x, 0.06 + 0.01 * k, z), velocity=v,
                   angular_velocity=w, geometry={"shape": "sphere", "radius": 0.05})
        m.add_contact(f"floor{k}", "ground", f"s{k}", geometry_i=FLOOR, **LAW)
    for a in range(3):
        for b in range(a + 1, 3):
            m.add_contact(f"c{a}{b}", f"s{a}", f"s{b}", **LAW)
    return m


@pytest.fixture(scope="module")
def compiled():
    return solver.compile_model(three_spheres())


def test_free_bodies_compile_to_the_articulated_library(compiled):
    system = compiled.system
    assert system.articulated and system.m == 3 == len(system.norm_rows) and system.nq == 21


@pytest.mark.parametrize("method", ["qr", "lu"])
def test_right_hand_side_as_the_dense_reduction(compiled, method, monkeypatch):
    """q, q̇ (Newton and velocity solve on the diagonal dependent block) and q̈, z̈ (articulated
    recursion) of tree_reduced against reduced.c's dense path on the same partition; λ of the
    normalizations is 0 (they carry no load), the dense path's to round-off."""
    system = compiled.system
    q0, qd0, _ = system.initial_state()
    rng = np.random.default_rng(3)
    for k in range(4):
        q = q0 + rng.normal(0.0, 0.05, q0.size)        # Euler parameters off the unit sphere: Newton's work
        q[[1, 8, 15]] = 0.047 - np.array([0.06, 0.07, 0.08])   # every sphere 3 mm into the floor (q: from the start)
        qd = qd0 + rng.normal(0.0, 1.0, q0.size)
        part = build_partition(method, system, system.normalize(q), 0.0)
        tree = CompiledReduction(system, part)
        assert tree.problem.k_tree and tree_partition(system, part) is not None
        with monkeypatch.context() as patch:
            patch.setattr(reduced, "tree_partition", lambda s, p: None)
            dense = CompiledReduction(system, part)
        assert not dense.problem.k_tree
        y = np.concatenate([part.z_of(q), part.V.T @ qd])
        results = []
        for r in (tree, dense):         # the dense path from the tree path's solution: the same q
            assert r.solve(0.0, y, results[0]["q"] if results else q, r.MULTIPLIERS)
            results.append({name: getattr(r, name).copy() for name in ("q", "qd", "qdd", "zdd", "lam")}
                           | {"sigma": r.sigma_min, "gain": r.amplification})
        a, b = results
        assert np.max(np.abs(system.constraints(a["q"], 0.0).phi)) <= tree.problem.tol     # Newton's bound
        assert np.max(np.abs(a["q"] - b["q"])) <= 1e-13                  # U Uᵀ (q − q_ref) rebuilt: round-off
        # a 4-term sum and a division by |A_ii| ≥ 2 σ_min: round-off of the rates
        assert np.max(np.abs(a["qd"] - b["qd"])) <= 1e-13 * np.max(np.abs(qd)) / min(1.0, a["sigma"])
        assert np.isclose(a["gain"], b["gain"], rtol=1e-12)
        assert a["sigma"] <= b["sigma"] * (1 + 1e-12)      # exact σ_min against the estimate from above
        # round-off of the dense solve: ε · cond(NᵀMN) · nq of the largest acceleration
        M = system.mass(a["q"])
        N = part.accelerations(M, np.zeros(system.nq), system.constraints(a["q"], 0.0).jac, np.zeros(system.m))[2]
        bound = system.nq * np.finfo(float).eps * np.linalg.cond(N.T @ M @ N) * np.max(np.abs(a["qdd"]))
        assert np.max(np.abs(a["qdd"] - b["qdd"])) <= bound and np.max(np.abs(a["zdd"] - b["zdd"])) <= bound
        assert np.max(np.abs(a["qdd"])) > 100.0                  # in contact
        assert not np.any(a["lam"]) and np.max(np.abs(b["lam"])) <= bound


def test_trajectory_as_the_dense_path_and_the_cartesian_formulation(compiled, monkeypatch):
    """Three spheres colliding for 0.3 s (contact forces up to 83 N).  The paths solve the same
    equations, so they differ by the integrators' global error, which follows rtol: 100 rtol × the
    largest coordinate (measured 2e-10 m against the dense path, 3e-10 m against Cartesian)."""
    options = dict(t_end=0.3, output_step=0.01, rtol=RTOL, atol=RTOL * 1e-2)
    res = solver.simulate(compiled, **options)
    assert any("step loop in C" in e["message"] for e in res.events)
    with monkeypatch.context() as patch:
        patch.setattr(reduced, "tree_partition", lambda s, p: None)
        dense = solver.simulate(compiled, **options)
    cartesian = solver.simulate(three_spheres(), formulation="cartesian", **options)
    names = [f"s{k}" for k in range(3)]
    scale = max(np.max(np.abs(res.body_position(n))) for n in names)
    assert max(np.max(np.abs(res.contact_force(n))) for n in NAMES) > 50.0
    for other in (dense, cartesian):
        assert max(np.max(np.abs(res.body_position(n) - other.body_position(n))) for n in names) <= 100 * RTOL * scale


def test_energy_lost_is_the_contacts_dissipation(compiled):
    """E(0) − E(t) = ∫ Σ contact_dissipation dt (trapezoid on 0.1 ms output points: its error is
    O(h²) of the impacts' ms time scale — measured 5.8e-3 of the loss at 0.2 ms, 5.4e-4 at 0.1 ms)."""
    res = solver.simulate(compiled, t_end=0.3, output_step=1e-4)
    power = sum(res.contact_dissipation(name) for name in NAMES)
    dissipated = np.concatenate([[0.0], np.cumsum(0.5 * (power[1:] + power[:-1]) * np.diff(res.t))])
    lost = res.energy["total"][0] - res.energy["total"]
    assert lost[-1] > 0.05
    assert np.max(np.abs(lost - dissipated)) <= 5e-3 * lost[-1]
