"""adams.c (the compiled loop's variable-order Adams, LSODA's non-stiff half: Petzold (1983), Hindmarsh's
STODA/CFODE) alone, then through simulate.

Alone: the Nordsieck coefficients of orders 1–4 against the Adams–Moulton formulas in closed form
(the trapezoidal rule l = (1/2, 1, 1/2) and its error constant 1/12, …); on the oscillator y'' = −y
(closed form y = cos t) the end error proportional to rtol and steps and right-hand sides as scipy's
LSODA takes on the same equation (the same algorithm, in Fortran); the stiffness ratio that LSODA
switches on, past 5 on the stiff spring–damper of test_compiled_bdf.py.  Through simulate: the
samples whose saved settings say "adams" stepped in C against a tight DOP853 reference (within
the error of scipy's LSODA in the Python loop on the same settings, and a tolerance-derived bound),
and the stiff slider switching to BDF with its closed form kept.  Through the four-bar row's singular
passes: test_compiled_bdf.py (both multistep methods)."""
from __future__ import annotations

import ctypes
import os

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import solver
from solver.analysis.dynamics import Run
from solver.analysis.step_rules import ADAMS_SWITCH, STIFF_INTEGRATOR
from test_compiled_bdf import runtime_harness

SAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "sample_models")

HARNESS = r"""
static double harness_k, harness_c;     /* y'' = −k y − c y' */

static int linear(void *ctx, double t, const double *y, double *dy)
{
    (void)ctx; (void)t;
    dy[0] = y[1]; dy[1] = -harness_k * y[0] - harness_c * y[1];
    return 0;
}

static int accept_any(void *ctx, double t, const double *y) { (void)ctx; (void)t; (void)y; return 0; }

/* y(0) = y0 to t_end with adams.c; dense output at the n_out times (ascending) into y_out (2 each);
 * stats: accepted, rejected, right-hand sides, highest order; *ratio the largest switch ratio (h_rho). */
int run_adams(double k, double c, const double *y0, double rtol, double atol, double t_end, int n_out,
              const double *t_out, double *y_out, double *y_end, long *stats, double *ratio)
{
    double memory[DP_MEMORY(2)], adams_memory[ADAMS_MEMORY(2)];
    dp_t s;
    adams_t a;
    harness_k = k; harness_c = c;
    dp_init(&s, DP_ADAMS, 2, memory, rtol, atol, INFINITY);
    adams_init(&a, 2, adams_memory);
    s.y[0] = y0[0]; s.y[1] = y0[1];
    linear(0, 0.0, s.y, s.f);
    if (dp_initial_step(&s, linear, 0, t_end, 2)) return -1;
    adams_start(&s, &a);
    int i = 0;
    stats[3] = 0;
    *ratio = 0.0;
    while (s.t < t_end) {
        const int code = adams_step(&s, &a, linear, accept_any, 0, t_end, DP_K(&s, 16), DP_K(&s, 17));
        if (code) return code;
        if (a.order_used > stats[3]) stats[3] = a.order_used;
        if (s.h_rho > *ratio) *ratio = s.h_rho;
        for (; i < n_out && t_out[i] <= s.t; ++i) adams_dense(&s, &a, t_out[i], y_out + 2 * i);
    }
    y_end[0] = s.y[0]; y_end[1] = s.y[1];
    stats[0] = s.accepted; stats[1] = s.rejected; stats[2] = s.nfev + 1;     /* + f at the start */
    return 0;
}

/* l_j and τ_1, τ_2, τ_3 of order q (adams_init's tables) into el (q + 1) and tesco (3). */
void coefficients(int q, double *el, double *tesco)
{
    static double memory[ADAMS_MEMORY(1)];
    adams_t a;
    adams_init(&a, 1, memory);
    for (int j = 0; j <= q; ++j) el[j] = ADAMS_EL(&a, q)[j];
    for (int i = 0; i < 3; ++i) tesco[i] = a.tesco[3 * q + i];
}
"""


@pytest.fixture(scope="module")
def adams_c(tmp_path_factory):
    lib = runtime_harness(tmp_path_factory, "adams", HARNESS)
    lib.run_adams.restype = ctypes.c_int
    lib.run_adams.argtypes = [ctypes.c_double] * 2 + [ctypes.c_void_p] + [ctypes.c_double] * 3 + [ctypes.c_int] \
        + [ctypes.c_void_p] * 5
    lib.coefficients.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p]

    def run(rtol, atol, k=1.0, c=0.0, y0=(1.0, 0.0), t_end=10.0, t_out=()):
        t_out = np.ascontiguousarray(t_out, dtype=float)
        y0 = np.ascontiguousarray(y0, dtype=float)
        y_out, y_end, stats, ratio = np.zeros((max(1, len(t_out)), 2)), np.zeros(2), np.zeros(4, dtype=np.int_), \
            np.zeros(1)
        assert lib.run_adams(k, c, y0.ctypes.data, rtol, atol, t_end, len(t_out), t_out.ctypes.data,
                             y_out.ctypes.data, y_end.ctypes.data, stats.ctypes.data, ratio.ctypes.data) == 0
        return y_end, y_out[:len(t_out)], stats, ratio[0]

    def coefficients(q):
        el, tesco = np.zeros(q + 1), np.zeros(3)
        lib.coefficients(q, el.ctypes.data, tesco.ctypes.data)
        return el, tesco
    run.coefficients = coefficients
    return run


def test_nordsieck_coefficients_are_the_adams_moulton_formulas(adams_c):
    """l of order q is the Nordsieck form of the q-step Adams–Moulton formula (Nordsieck (1962); Gear
    (1971) table 9.1): order 1 implicit Euler, 2 the trapezoidal rule, then 3 and 4; τ_2 = 1/|C_{q+1}|
    with C the formula's error constant (1/2, 1/12, 1/24, 19/720), the constant of LSODA's error test."""
    expected = {1: ([1, 1], 2.0), 2: ([1 / 2, 1, 1 / 2], 12.0), 3: ([5 / 12, 1, 3 / 4, 1 / 6], 24.0),
                4: ([3 / 8, 1, 11 / 12, 1 / 3, 1 / 24], 720 / 19)}
    for q, (el, tau2) in expected.items():
        got, tesco = adams_c.coefficients(q)
        np.testing.assert_allclose(got, el, rtol=1e-14)
        assert tesco[1] == pytest.approx(tau2, rel=1e-14)


def test_adams_c_error_falls_with_rtol_and_steps_as_scipy_lsoda(adams_c):
    """y'' = −y over 10 s (1.6 periods), atol = rtol: the end error and the dense output's stay within
    50 rtol — the bound scipy's LSODA meets too (measured 6–20 rtol for both) — and fall with rtol
    (5e4 times from 1e-6 to 1e-10); the orders climb as the tolerance tightens; steps and right-hand
    sides within 10 % of LSODA's (measured 41/41, 64/64, 90/97, 116/119 steps)."""
    t_out = np.linspace(0.0, 10.0, 401)[1:]
    errors = {}
    for rtol in (1e-4, 1e-6, 1e-8, 1e-10):
        y_end, y_out, stats, _ = adams_c(rtol, rtol, t_out=t_out)
        exact = np.array([np.cos(10.0), -np.sin(10.0)])
        errors[rtol] = np.max(np.abs(y_end - exact))
        assert errors[rtol] < 50 * rtol
        assert np.max(np.abs(y_out[:, 0] - np.cos(t_out))) < 50 * rtol
        ref = solve_ivp(lambda t, y: [y[1], -y[0]], (0.0, 10.0), [1.0, 0.0], method="LSODA", rtol=rtol, atol=rtol)
        assert abs(ref.y[0, -1] - np.cos(10.0)) < 50 * rtol
        accepted, rejected, nfev, top = stats
        assert abs(accepted - (len(ref.t) - 1)) <= 0.1 * len(ref.t)
        assert abs(nfev - ref.nfev) <= 0.1 * ref.nfev
        assert rejected <= 3 and top >= {1e-4: 4, 1e-6: 5, 1e-8: 7, 1e-10: 8}[rtol]
    assert errors[1e-10] < 1e-3 * errors[1e-6]


def test_lsodas_switch_ratio_passes_5_on_a_stiff_spring_damper(adams_c):
    """x'' = −10⁴ x − 10³ x' (λ ≈ −10.1, −990): once the fast mode has decayed Adams' step is held by
    its stability region (h·990 ≲ 0.5), BDF's would be longer: the ratio passes LSODA's 5.  On the
    oscillator it stays below 1."""
    *_, ratio = adams_c(1e-6, 1e-9, k=1e4, c=1e3, y0=(0.1, 0.0), t_end=0.2)
    assert ratio > ADAMS_SWITCH
    *_, ratio = adams_c(1e-6, 1e-6)
    assert ratio < 1.0


# ---- through simulate ------------------------------------------------------------------------------
def saved_adams_runs(model, monkeypatch, **options):
    """(compiled loop, Python loop: scipy LSODA, tight reference: DOP853 in C at rtol 1e-11) of ``model`` on
    its own settings (``options`` changed), the same compiled model."""
    compiled = solver.compile_model(model)
    events = []
    c_loop = solver.simulate(compiled, on_event=events.append, **options)
    assert "step loop in C (Adams–Moulton orders 1–12, BDF when stiff)" in [e["message"] for e in events]
    with monkeypatch.context() as patch:
        patch.setattr(Run, "python_loop", ("adams",))
        python = solver.simulate(compiled, **options)
    reference = solver.simulate(compiled, **dict(options, integrator="auto", rtol=1e-11, atol=1e-13))
    return c_loop, python, reference


def position_error(res, reference):
    return max(np.max(np.abs(res.body_position(b) - reference.body_position(b))) for b in res.body_names)


@pytest.mark.parametrize("name, t_end", [("slider_crank", 2.0), ("fourbar_spring", 3.0), ("double_pendulum", 2.0)])
def test_samples_on_saved_adams_settings_against_a_tight_reference(name, t_end, monkeypatch):
    """Their own settings (rtol 1e-6, atol 1e-8, Adams) stepped in C: body positions within the bound
    of 100 (rtol·|x|max + atol) of a DOP853 run at rtol 1e-11 — the bound scipy's LSODA meets on the
    slider–crank at every rtol from 4e-7 to 2e-6 (at most 78 rtol·|x|max there) — and within 10 times
    the error of scipy's LSODA in the Python loop (the same method: its steps within 10 %).  Measured
    (C loop, Python loop): slider_crank 2.1e-5, 7.0e-6 m (bound 4.1e-5; both grow tenfold over the last
    0.5 s; the ratio over rtol 4e-7 … 2e-6 runs 0.3–3, path noise of two codes with the same rules);
    fourbar_spring 1.5e-6, 1.7e-6 m; double_pendulum 1.7e-6, 1.6e-6 m."""
    model = solver.load_model(os.path.join(SAMPLES, f"{name}.mbs.json"))
    assert model.settings.integrator == "adams" and model.settings.rtol == 1e-6
    c_loop, python, reference = saved_adams_runs(model, monkeypatch, t_end=t_end)
    assert c_loop.status == python.status == "ok"
    scale = max(np.max(np.abs(reference.body_position(b))) for b in reference.body_names)
    bound = 100 * (model.settings.rtol * scale + model.settings.atol)
    c_error, python_error = position_error(c_loop, reference), position_error(python, reference)
    assert c_error < bound
    assert c_error < 10 * python_error + 1e-7
    assert abs(c_loop.meta["steps"] - python.meta["steps"]) <= 0.1 * python.meta["steps"]


def test_slider_crank_error_falls_as_rtol_tightens():
    """Tolerance monotonicity (issue #27 item 4) of "adams" in C on the slider–crank's saved settings,
    rtol 1e-6 … 1e-10 (atol = rtol/100): the error against DOP853 at rtol 1e-11 falls at every step of
    the grid, never grows.  Measured: 2.1e-5, 3.3e-6, 4.7e-7, 5.6e-8, 4.5e-9 m."""
    compiled = solver.compile_model(solver.load_model(os.path.join(SAMPLES, "slider_crank.mbs.json")))
    reference = solver.simulate(compiled, integrator="auto", rtol=1e-11, atol=1e-13)
    errors = [position_error(solver.simulate(compiled, rtol=rtol, atol=rtol / 100), reference)
              for rtol in (1e-6, 1e-7, 1e-8, 1e-9, 1e-10)]
    assert all(tight < loose for loose, tight in zip(errors, errors[1:])), errors


def test_loops_on_loops_50s_settings_follow_the_closed_form():
    """planar_loops(2) — loops_50's kind, on loops_50's saved settings (relative, QR, Adams, rtol 1e-6)
    for 1 s — against its closed form (a physical pendulum J θ̈ = −G sin θ, tools/scale_models.py,
    integrated by scipy at rtol 1e-12): the first rocker's centre within 100 (rtol ℓ + atol)."""
    from tools.scale_models import planar_loops
    n, tilt, length, mass, g = 2, 0.5, 0.3, 0.1, 9.81
    saved = solver.load_model(os.path.join(SAMPLES, "scale", "loops_50.mbs.json")).settings
    model = planar_loops(n)
    for key in ("formulation", "partitioning", "integrator", "rtol", "atol", "output_step"):
        model.settings.set(key, getattr(saved, key))
    events = []
    res = solver.simulate(model, t_end=1.0, on_event=events.append)
    assert "step loop in C (Adams–Moulton orders 1–12, BDF when stiff)" in [e["message"] for e in events]
    J = (n + 1) * (mass * length**2 / 12 + mass * length**2 / 4) + n * mass * length**2
    G = g * mass * length * ((n + 1) / 2 + n)
    theta = solve_ivp(lambda t, y: [y[1], -G / J * np.sin(y[0])], (0.0, 1.0), [tilt, 0.0], t_eval=res.t,
                      rtol=1e-12, atol=1e-14).y[0]
    centre = 0.5 * length * np.stack([np.sin(theta), -np.cos(theta)], axis=1)
    assert np.max(np.abs(res.body_position("R0")[:, :2] - centre)) < 100 * (saved.rtol * length + saved.atol)


def test_adams_switches_to_bdf_on_the_stiff_slider_and_keeps_the_closed_form():
    """The stiff slider of test_stiffness_switch.py on "adams": LSODA's test switches to BDF (the event
    names the step ratio), and the motion keeps the closed form within BDF's bound there (measured
    9e-8 m, 172 steps; scipy's LSODA: 8e-8 m, 182 steps)."""
    from test_stiffness_switch import D, L, closed_form, stiff_slider
    res = solver.simulate(stiff_slider(), integrator="adams")
    events = [e["message"] for e in res.events if e["kind"] == "integrator"]
    assert any(e.startswith(f"switched to {STIFF_INTEGRATOR} (stiff: BDF's step ≈ ") for e in events), events
    x = res.body_position("slider")[:, 0]
    assert np.abs(x - closed_form(res.t)).max() < 10 * (1e-6 * (L + D) + 1e-8)

