"""The compiled reduction's band algebra (solver/codegen/banded.c, banded.py) against its dense algebra
(reduced.c) on the four-bar row (tools/scale_models.fourbar_row): the same partition solved with
B = Φ_q[rows](q_ref)ᵀ and a banded S = Φ_q[rows] B instead of the dense U and Φ_q[rows] U.

Both are backward-stable solves of the same equations, so at one state they agree to round-off
amplified by the condition numbers involved: κ(Φ_q U) for the dense one and κ(S) ≤ κ(Φ_q U) κ(Φ_q(q_ref))
for the band one (B = U K with K of the condition of Φ_q[rows](q_ref)).  Over a run, DOP853's step-size
control turns a round-off difference ε·κ of the stages into a relative change ε·κ/rtol of the next
step, which changes the solution by about the local error (rtol·|y|) times that: ≤ ε·κ·|y| per step."""
from __future__ import annotations

import ctypes
import os
import sys
from pathlib import Path

import numpy as np
import pytest

import solver
from solver.codegen import banded
from solver.codegen.segment import BandRows
from solver.partitioning.choose import build_partition

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
from tools.fourbar_row import position_error  # noqa: E402
from tools.scale_models import fourbar_row  # noqa: E402

EPS = np.finfo(float).eps
N = 10                                  # loops: r = 20 independent rows, band kl = ku = 3


@pytest.fixture(scope="module")
def compiled():
    return solver.compile_model(fourbar_row(N), codegen="on")


def _algebra(monkeypatch, which):
    """Force the band algebra ("band": every partition with rows) or the dense one."""
    monkeypatch.setattr(banded, "BAND_MIN_ROWS", 1 if which == "band" else 10**9)
    monkeypatch.setattr(banded, "BAND_FRACTION", 10.0)


def _solve(system, part, t, y, q):
    c = system.compiled_reduction(part)
    c.solve(t, y, q, c.MULTIPLIERS)
    return c, {name: np.array(getattr(c, name)) for name in ("q", "qd", "qdd", "zdd", "lam")}


def test_the_band_problem_of_the_row_is_narrow(compiled, monkeypatch):
    """The row's S = J Jᵀ is block tridiagonal (2 × 2 blocks per loop): kl = ku = 3 whatever N; at
    N = 10 (r = 20) that band, 2 kl + ku + 1 = 10 rows of storage, is half of S: the widest the
    band algebra takes (BAND_FRACTION); a narrower fraction leaves it to the dense algebra."""
    s = compiled.system
    q, _, _ = s.initial_state()
    part = build_partition("qr", s, q, 0.0)
    assert banded.BAND_FRACTION * len(part.rows) == 10
    p = banded.band_problem(s, part)
    assert (p.kl, p.ku) == (3, 3)
    assert sorted(p.arrays["row"]) == sorted(part.rows)
    monkeypatch.setattr(banded, "BAND_FRACTION", 0.25)
    assert banded.band_problem(s, part) is None


@pytest.mark.parametrize("method", ["qr", "lu"])
@pytest.mark.parametrize("t_state", [0.0, 0.7])
def test_one_state_matches_the_dense_algebra(compiled, monkeypatch, method, t_state):
    """q, q̇, q̈, λ, σ_min(Φ_q U) and ‖N‖_F of one solve, band against dense, at the start and near the
    first horizontal (singular) pass, within 100 ε κ · scale (module docstring)."""
    s = compiled.system
    exact_start = solver.simulate(compiled, t_end=max(t_state, 0.01), output_step=0.01)
    q, qd = exact_start.coordinates[-1 if t_state else 0], exact_start.velocities[-1 if t_state else 0]
    part = build_partition(method, s, q, 0.0)
    y = np.concatenate([part.z_of(q), part.V.T @ qd])
    _algebra(monkeypatch, "dense")
    dense, a = _solve(s, part, 0.0, y, q)
    _algebra(monkeypatch, "band")
    band_run, b = _solve(s, part, 0.0, y, q)
    assert band_run.band is not None and dense.band is None
    J = dense.jac[part.rows]
    kappa = np.linalg.cond(J @ part.U) * np.linalg.cond(part.reference_rows)
    for name in a:
        scale = max(1.0, np.max(np.abs(a[name])))
        assert np.max(np.abs(a[name] - b[name])) <= 100 * EPS * kappa * scale, name
    assert band_run.sigma_min == pytest.approx(dense.sigma_min, rel=100 * EPS * kappa)
    assert band_run.amplification == pytest.approx(dense.amplification, rel=100 * EPS * kappa)
    # the estimate is the dense SVD's σ_min from above (the loop's re-partition test relies on it)
    assert band_run.sigma_min >= np.linalg.svd(J @ part.U, compute_uv=False)[-1] * (1 - 1e-12)
    # Φ_q[rows] as the compiled loop stores it for the conditioning read-out (segment.c: the band
    # problem's J entries, packed kernels) is exactly the dense kernels' Φ_q[rows]
    arrays = band_run.band.arrays
    rows = BandRows(arrays, len(part.rows), s.nq)
    stack = rows.stack(band_run.arrays["jac"][arrays["j_at"][:rows.nnz]][None, :])
    assert stack.shape == (1, len(part.rows), s.nq)
    assert np.array_equal(np.asarray(stack)[0], J) and np.array_equal(next(iter(stack)).toarray(), J)


def test_a_run_matches_the_dense_algebra(compiled, monkeypatch):
    """0.6 s of the row (6 DOP853 steps, before the first singular pass) on the default settings with
    the band and the dense algebra: the same steps, and q, q̇ within steps · ε · κ · scale · 10, κ the
    largest 1 / conditioning over the run (module docstring); both follow the exact motion.  The band
    run first: a run keeps a reduction without a band with its workspace (Run._reduction), which a
    later run of the same partition takes whatever the forced algebra (the events say which ran)."""
    runs, messages = {}, {}
    for which in ("band", "dense"):
        _algebra(monkeypatch, which)
        events = []
        runs[which] = solver.simulate(compiled, t_end=0.6, output_step=0.01, on_event=events.append)
        messages[which] = " ".join(e["message"] for e in events)
    a, b = runs["dense"], runs["band"]
    assert a.status == b.status == "ok"
    assert "band factorization of Φ_q in C" in messages["band"] and "band factorization" not in messages["dense"]
    assert len(a.step_sizes) == len(b.step_sizes)
    kappa = 1.0 / np.min(a.conditioning)
    for name in ("coordinates", "velocities"):
        x, y = np.asarray(getattr(a, name)), np.asarray(getattr(b, name))
        assert np.max(np.abs(x - y)) <= 10 * len(a.step_sizes) * EPS * kappa * np.max(np.abs(x)), name
    assert position_error(b, N) < 1e-6


@pytest.mark.parametrize("name", ["fourbar_row_3", "vehicle_cae_tc", "slider_crank"])
def test_the_kernels_write_only_inside_the_patterns(name):
    """The band algebra reads Φ_q and M only at their patterns (relative.py relative_jacobian_pattern,
    relative_mass_pattern; the Cartesian jacobian_pattern): at random coordinates (Euler parameters
    normalized) every entry the kernels write outside them is exactly zero, and the packed kernels
    write the same entries (_packed_kernels_match_the_dense_ones).  The car: cut joints, spherical
    joints with Euler parameters, drivers; the slider–crank: the Cartesian kernels, whose patterns are
    the entries they write (codegen/cartesian_packed.c), within the system's structural ones."""
    if name == "fourbar_row_3":
        model, formulation = fourbar_row(3), "relative"
    else:
        model = solver.load_model(str(Path(__file__).resolve().parents[2] / "sample_models" / f"{name}.mbs.json"))
        formulation = "relative" if name.startswith("vehicle") else "cartesian"
    s = solver.compile_model(model, codegen="on", formulation=formulation).system
    jac_mask = np.zeros((s.m, s.nq), dtype=bool)
    jac_mask[s.kernel_jacobian_pattern()] = True
    mass = getattr(s, "kernel_mass_pattern", lambda: None)()
    mass_mask = np.zeros((s.nq, s.nq), dtype=bool)
    if mass is not None:
        indptr, indices = mass
        mass_mask[np.repeat(np.arange(s.nq), np.diff(indptr)), indices] = True
    else:
        mass_mask[:] = True
    rng = np.random.default_rng(7)
    q0, _, _ = s.initial_state()
    k = s.kernels
    for _ in range(3):
        q = q0 + rng.uniform(-0.5, 0.5, s.nq)
        if hasattr(s, "normalize"):
            q = s.normalize(q)
        k["q"][:] = q
        k.call("position")
        k.call("mass")
        assert not np.any(k.jac[:s.m][~jac_mask]), "Φ_q outside its pattern"
        assert not np.any(k.M[~mass_mask]), "M outside its pattern"
        _packed_kernels_match_the_dense_ones(s, q)     # relative.c's, cartesian_packed.c's
    if formulation == "cartesian":
        structural = np.zeros((s.m, s.nq), dtype=bool)
        structural[s.jacobian_pattern()] = True
        assert structural[jac_mask].all() and structural.sum() > jac_mask.sum()
        indptr, indices = s.mass_pattern()
        blocks = np.zeros((s.nq, s.nq), dtype=bool)
        blocks[np.repeat(np.arange(s.nq), np.diff(indptr)), indices] = True
        assert blocks[mass_mask].all()


def _packed_kernels_match_the_dense_ones(s, q):
    """cg_position_packed and cg_dynamics_packed (the band algebra's kernels) write exactly the dense
    kernels' Φ_q and M entries at their patterns, in the patterns' order, and the same Φ, γ and Q."""
    k = s.kernels
    rows, cols = s.kernel_jacobian_pattern()
    indptr, indices = s.kernel_mass_pattern()
    qd = np.linspace(-1.0, 1.0, s.nq)
    k["qd"][:] = qd
    k.call("position")
    phi, jac = k["phi"].copy(), k.jac.copy()
    k.call("mass")
    k.call("gamma")
    k.call("forces")
    M, gamma, Q = k.M.copy(), k["gamma"].copy(), k["Q"].copy()
    buf = {name: np.zeros(max(1, size)) for name, size in (("phi", len(phi)), ("jac", len(rows)), ("ang", len(k["ang"])),
                                                          ("gamma", len(gamma)), ("M", len(indices)), ("Q", s.nq))}
    ptr = lambda a: a.ctypes.data_as(ctypes.c_void_p)                           # noqa: E731
    inputs = [ptr(k[name]) for name in ("q", "qd", "par", "f")]
    k.lib.cg_position_packed(*inputs, ptr(k["u"]), ptr(buf["phi"]), ptr(buf["jac"]), ptr(buf["ang"]))
    k.lib.cg_dynamics_packed(*inputs, ptr(k["f"]), ptr(k["u"]), ptr(buf["gamma"]), ptr(buf["M"]), ptr(buf["Q"]))
    assert np.array_equal(buf["phi"][:len(phi)], phi) and np.array_equal(buf["jac"][:len(rows)], jac[rows, cols])
    assert np.array_equal(buf["M"][:len(indices)], M[np.repeat(np.arange(s.nq), np.diff(indptr)), indices])
    assert np.array_equal(buf["gamma"][:len(gamma)], gamma) and np.array_equal(buf["Q"], Q)
