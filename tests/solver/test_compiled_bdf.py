"""bdf.c alone (the runtime library's variable-order BDF/NDF, Shampine & Reichelt (1997)) on the stiff
spring–damper x'' = −k x − c x' (k = 10⁴, c = 10³, m = 1: λ ≈ −10.1 and −990), y = [x, ẋ],
x(0) = d, ẋ(0) = 0, in closed form x = d (λ₂ e^{λ₁t} − λ₁ e^{λ₂t}) / (λ₂ − λ₁): the end state and the dense
output within the tolerance's promise, the order climbing to the method's top orders, and step for
step what scipy's BDF (the same algorithm, in Python) does on the same equation.  Then the loop around
it (segment.c) through simulate: the four-bar row through its singular passes (re-partitions, no
singular-pass rule for BDF, nor for adams.c's Adams) against its exact motion; the cars and the switch: test_stiffness_switch.py."""
from __future__ import annotations

import ctypes
import os
import subprocess
import sys

import numpy as np
import pytest
from scipy.integrate import BDF

import solver
from solver.analysis import dynamics
from solver.codegen.build import compiler_path, runtime_source

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
from tools import make_samples  # noqa: E402
from tools.fourbar_row import position_error  # noqa: E402
from tools.scale_models import fourbar_row  # noqa: E402

K, C, D = 1e4, 1e3, 0.1
A = np.array([[0.0, 1.0], [-K, -C]])

HARNESS = r"""
static int spring(void *ctx, double t, const double *y, double *dy)
{
    (void)ctx; (void)t;
    dy[0] = y[1]; dy[1] = -SPRING_K * y[0] - SPRING_C * y[1];
    return 0;
}

static int accept_any(void *ctx, double t, const double *y) { (void)ctx; (void)t; (void)y; return 0; }

/* y(0) = [d, 0] to t_end with bdf.c; dense output at the n_out times (ascending) into y_out (2 each);
 * stats: accepted, rejected, right-hand sides, Jacobians, highest order, order histogram 1–5. */
int run_bdf(double rtol, double atol, double t_end, int n_out, const double *t_out, double *y_out, double *y_end,
            long *stats)
{
    double memory[DP_MEMORY(2)], bdf_memory[BDF_MEMORY(2)];
    int pivots[2];
    dp_t s;
    bdf_t b;
    dp_init(&s, DP_BDF, 2, memory, rtol, atol, INFINITY);
    bdf_init(&b, 2, bdf_memory, pivots, rtol, 1e-7);
    s.y[0] = SPRING_D; s.y[1] = 0.0;
    spring(0, 0.0, s.y, s.f);
    if (dp_initial_step(&s, spring, 0, t_end, 2) || bdf_start(&s, &b, spring, 0)) return -1;
    int k = 0;
    for (int i = 0; i < 10; ++i) stats[i] = 0;
    while (s.t < t_end) {
        const int code = bdf_step(&s, &b, spring, accept_any, 0, t_end, DP_K(&s, 16), DP_K(&s, 17));
        if (code) return code;
        for (; k < n_out && t_out[k] <= s.t; ++k) bdf_dense(&s, &b, t_out[k], y_out + 2 * k);
        if (b.order > stats[4]) stats[4] = b.order;
        ++stats[4 + b.order];
    }
    y_end[0] = s.y[0]; y_end[1] = s.y[1];
    stats[0] = s.accepted; stats[1] = s.rejected; stats[2] = s.nfev; stats[3] = b.njev;
    return 0;
}
"""


def closed_form(t):
    root = np.sqrt(C * C - 4 * K)
    l1, l2 = (-C + root) / 2, (-C - root) / 2
    x = D * (l2 * np.exp(l1 * t) - l1 * np.exp(l2 * t)) / (l2 - l1)
    v = D * l1 * l2 * (np.exp(l1 * t) - np.exp(l2 * t)) / (l2 - l1)
    return np.stack([x, v], axis=-1)


def runtime_harness(tmp_path_factory, name, text):
    """The runtime library's source (reduced.c … segment.c) followed by ``text``, compiled into a shared
    library of its own (skips the test without a C compiler)."""
    if not compiler_path():
        pytest.skip("no C compiler")
    folder = tmp_path_factory.mktemp(name)
    c, so = folder / "harness.c", folder / "harness.so"
    c.write_text(runtime_source() + text)
    subprocess.run([compiler_path(), "-O0", "-shared", "-fPIC", "-o", str(so), str(c), "-lm"], check=True)
    return ctypes.CDLL(str(so))


@pytest.fixture(scope="module")
def bdf_c(tmp_path_factory):
    defines = f"#define SPRING_K {K!r}\n#define SPRING_C {C!r}\n#define SPRING_D {D!r}\n"
    lib = runtime_harness(tmp_path_factory, "bdf", defines + HARNESS)
    lib.run_bdf.restype = ctypes.c_int
    lib.run_bdf.argtypes = [ctypes.c_double] * 3 + [ctypes.c_int] + [ctypes.c_void_p] * 4

    def run(rtol, atol, t_end=1.0, t_out=()):
        t_out = np.ascontiguousarray(t_out, dtype=float)
        y_out, y_end, stats = np.zeros((max(1, len(t_out)), 2)), np.zeros(2), np.zeros(10, dtype=np.int_)
        assert lib.run_bdf(rtol, atol, t_end, len(t_out), t_out.ctypes.data, y_out.ctypes.data, y_end.ctypes.data,
                           stats.ctypes.data) == 0
        return y_end, y_out[:len(t_out)], stats
    return run


def scipy_steps(rtol, atol, t_end=1.0):
    """scipy's BDF on the same equation with its exact Jacobian: (accepted steps, end state)."""
    ode = BDF(lambda t, y: A @ y, 0.0, np.array([D, 0.0]), t_end, rtol=rtol, atol=atol, jac=A)
    steps = 0
    while ode.status == "running":
        ode.step()
        steps += 1
    return steps, ode.y


@pytest.mark.parametrize("rtol", [1e-4, 1e-6, 1e-8])
def test_bdf_c_holds_the_closed_form_and_steps_as_scipy_bdf(bdf_c, rtol):
    atol = 1e-3 * rtol * D
    t_out = np.linspace(0.0, 1.0, 101)[1:]
    y_end, y_out, stats = bdf_c(rtol, atol, t_out=t_out)
    accepted, rejected, nfev, njev, top = stats[:5]
    # a local error of rtol·|y| + atol per step, decaying motion: the global error stays within a few
    # steps' worth of the initial scale (|x| ≤ d, |ẋ| ≤ 10 d)
    scale = np.array([D, 10 * D])
    assert np.all(np.abs(y_end - closed_form(1.0)) < 10 * (rtol * scale + atol))
    assert np.all(np.abs(y_out - closed_form(t_out)) < 10 * (rtol * scale + atol))
    assert top >= 3 and stats[7] + stats[8] + stats[9] > accepted / 2     # mostly orders 3–5
    assert njev <= 1 + rejected                # Jacobians only after failed Newton iterations
    steps, y_scipy = scipy_steps(rtol, atol)
    # the same algorithm: measured 108, 190, 360 steps at rtol 1e-4, 1e-6, 1e-8 for both, the end states
    # 6e-12 apart at 1e-4 (the Jacobian: differences here, exact there) and 3e-19 at 1e-6
    assert abs(accepted - steps) <= 0.05 * steps + 1
    assert np.all(np.abs(y_end - y_scipy) < 10 * (rtol * scale + atol))


def test_tighter_tolerances_take_more_steps_and_less_error(bdf_c):
    errors, steps = [], []
    for rtol in (1e-5, 1e-7, 1e-9):
        y_end, _, stats = bdf_c(rtol, 1e-3 * rtol * D)
        errors.append(np.abs(y_end - closed_form(1.0))[0])
        steps.append(stats[0])
    assert steps[0] < steps[1] < steps[2]
    assert errors[2] < 0.05 * errors[0]


@pytest.mark.parametrize("integrator, method", [("bdf", "BDF/NDF orders 1–5"),
                                                ("adams", "Adams–Moulton orders 1–12, BDF when stiff")])
def test_compiled_multistep_methods_cross_the_four_bar_rows_singular_passes(integrator, method):
    """N = 1, 3 s, Cartesian, QR: two horizontal passes where the dependent block turns singular.  bdf.c
    re-partitions there as the Python loop does (7 partitions) and follows the exact motion: measured
    1.5e-6 m at rtol 1e-8 (scipy's BDF in the Python loop: 2.0e-6 m; with the singular-pass rule of
    band.c the steps crept to 1e-11 s before the first pass and the run stopped: segment.c
    segment_start_bdf).  adams.c, without the rule too (segments.BAND_METHODS): 7 partitions as scipy's
    LSODA, 4.0e-6 m (LSODA in the Python loop: 1.2e-5 m), energy within 4.9e-7 of its size; LSODA's
    switch test hands the run to BDF near a pass (the corrector's Lipschitz estimate grows there)."""
    events = []
    res = solver.simulate(fourbar_row(1), integrator=integrator, t_end=3.0, output_step=0.01, partitioning="qr",
                          rtol=1e-8, atol=1e-10, formulation="cartesian", on_event=events.append)
    assert f"step loop in C ({method})" in [e["message"] for e in events]
    assert res.status == "ok"
    assert len([e for e in events if e["kind"] == "partition"]) >= 5
    assert position_error(res, 1) < 1e-5
    e = res.energy["total"]
    assert np.ptp(e) < 2e-6 * np.max(np.abs(e))          # measured 5e-7 (bdf), 4.9e-7 (adams)


def test_compiled_bdf_on_lu_crosses_the_rigid_four_bars_first_flattened_pass(monkeypatch):
    """The rigid singular four-bar (tools/make_samples.py) on LU with the ‖∂q/∂z‖ re-partition rule off,
    compiled BDF, rtol 1e-8, 0.2 s: across the first flattened pass (0.1763 s).  BDF's solves at one
    t_{n+1} start the position Newton from the last solve (segment.c segment_solve; seeds 3156 and 1022:
    test_random_mechanisms.py); at this pass that start made BDF's Newton stall (contraction rate 0.97
    at h = 1.6e-9, the solves of successive iterates landing apart) with a fresh Jacobian at every step
    size, and the run stopped with a collapsed step at 0.17629 s.  An attempt whose Newton fails with a
    fresh Jacobian is now tried once more with every solve started from the accepted state's prediction
    (bdf.c's afresh), which converges there: energy drift measured 1.8e-8 (1.2e-7 over 1.05 s)."""
    monkeypatch.setattr(dynamics, "AMPLIFICATION_GROWTH", np.inf)
    res = solver.simulate(make_samples.fourbar_singular_rigid(), t_end=0.2, partitioning="lu", integrator="bdf",
                          output_step=0.01, rtol=1e-8, atol=1e-10)
    assert res.status == "ok" and res.t[-1] == pytest.approx(0.2)
    assert res.summary()["energy_drift"] < 1e-6
