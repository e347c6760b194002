"""The compiled step loop (solver.codegen.dopri.c, segment.c; solver.analysis.segments).

The integrators alone on the harmonic oscillator y'' = −ω² y (closed form y = cos ωt): error at the
end and of the dense output between steps within the tolerance's reach; at fixed steps order 5 of
DOPRI5's steps and 4 of its dense output, order 8 of DOP853's steps and 7 of its dense output.  Then
runs whose step loop is in C against the same models stepped by scipy's RK45 / DOP853 in the Python
loop (the generic path): a pendulum, a driven double pendulum
and a slider–crank with a time-dependent load (compiled time functions), a four-bar through its
singular horizontal passes (re-partitions) against its exact motion; cancel and progress in the C
loop.
"""
from __future__ import annotations

import ctypes
import os
import subprocess
import sys

import numpy as np
import pytest

import solver
from solver.codegen.build import compiler_path
from solver.codegen.segment import METHODS

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
from tools.fourbar_row import exact_angle, pass_times, position_error  # noqa: E402
from tools.scale_models import fourbar_row  # noqa: E402

DOPRI_C = os.path.join(os.path.dirname(solver.__file__), "codegen", "dopri.c")
needs_compiler = pytest.mark.skipif(not compiler_path(), reason="no C compiler")
OMEGA = 2.0

HARNESS = r"""
#include <math.h>
#include <string.h>
#include "DOPRI"

static int oscillator(void *ctx, double t, const double *y, double *dy)
{
    (void)ctx; (void)t;
    dy[0] = y[1]; dy[1] = -OMEGA * OMEGA * y[0];
    return 0;
}

/* y(0) = [1, 0] to t_end; fixed > 0: steps of exactly `fixed` (tolerances that accept every step).
 * Dense output at the n_out times (ascending) into y_out (2 each); stats: accepted, rejected, nfev,
 * steps holding output points. */
int run(int method, double rtol, double atol, double fixed, double t_end, int n_out, const double *t_out,
        double *y_out, double *y_end, long *stats)
{
    double memory[DP_MEMORY(2)];
    dp_t s;
    dp_init(&s, method, 2, memory, rtol, atol, fixed > 0 ? fixed : INFINITY);
    s.y[0] = 1.0; s.y[1] = 0.0;
    oscillator(0, 0.0, s.y, s.f);
    if (fixed > 0) s.h = fixed;
    else if (dp_initial_step(&s, oscillator, 0, t_end, method)) return -1;   /* method: its order */
    int k = 0;
    stats[3] = 0;
    while (s.t < t_end) {
        const int code = dp_step(&s, oscillator, 0, t_end);
        if (code) return code;
        if (k < n_out && t_out[k] <= s.t) {
            if (dp_prepare_dense(&s, oscillator, 0)) return -3;
            ++stats[3];
        }
        for (; k < n_out && t_out[k] <= s.t; ++k) dp_dense(&s, t_out[k], y_out + 2 * k);
    }
    y_end[0] = s.y[0]; y_end[1] = s.y[1];
    stats[0] = s.accepted; stats[1] = s.rejected; stats[2] = s.nfev;
    return 0;
}
"""


@pytest.fixture(scope="module")
def oscillator(tmp_path_factory):
    folder = tmp_path_factory.mktemp("dopri")
    c, so = folder / "harness.c", folder / "harness.so"
    c.write_text(HARNESS.replace("DOPRI", DOPRI_C).replace("OMEGA", repr(OMEGA)))
    subprocess.run([os.environ.get("CC") or "cc", "-O2", "-shared", "-fPIC", "-o", str(so), str(c), "-lm"], check=True)
    lib = ctypes.CDLL(str(so))
    lib.run.restype = ctypes.c_int
    lib.run.argtypes = [ctypes.c_int] + [ctypes.c_double] * 4 + [ctypes.c_int] + [ctypes.c_void_p] * 4

    def run(method, rtol=1e-8, atol=1e-10, fixed=0.0, t_end=10.0, t_out=()):
        t_out = np.ascontiguousarray(t_out, dtype=float)
        y_out, y_end, stats = np.zeros((max(1, len(t_out)), 2)), np.zeros(2), np.zeros(4, dtype=np.int_)
        code = lib.run(METHODS[method], rtol, atol, fixed, t_end, len(t_out), t_out.ctypes.data, y_out.ctypes.data,
                       y_end.ctypes.data, stats.ctypes.data)
        assert code == 0
        return y_end, y_out[:len(t_out)], stats
    return run


def exact(t):
    t = np.asarray(t, dtype=float)
    return np.stack([np.cos(OMEGA * t), -OMEGA * np.sin(OMEGA * t)], axis=-1)


@needs_compiler
@pytest.mark.parametrize("method, stages, dense_stages", [("dopri5", 6, 0), ("dop853", 12, 3)])
def test_adaptive_steps_hold_the_tolerance_and_dense_output_between_steps(oscillator, method, stages, dense_stages):
    t_out = np.linspace(0.0, 10.0, 1001)[1:]
    errors = []
    for rtol in (1e-6, 1e-8, 1e-10):
        y_end, y_out, stats = oscillator(method, rtol, rtol * 1e-2, t_out=t_out)
        end_error = np.max(np.abs(y_end - exact(10.0)))
        dense_error = np.max(np.abs(y_out - exact(t_out)))
        accepted, rejected, nfev, with_outputs = stats
        assert accepted < len(t_out)               # the output points lie between the steps
        # FSAL: `stages` evaluations per attempted step, + HINIT; DOP853's dense output: 3 per step
        # holding output points
        assert nfev == 1 + stages * (accepted + rejected) + dense_stages * with_outputs
        assert end_error < 200 * rtol              # ten periods of global error growth
        assert dense_error < 400 * rtol
        errors.append((end_error, accepted))
    assert errors[2][0] < 0.05 * errors[0][0]      # a hundred times tighter: the error falls with it …
    order = {"dopri5": 5, "dop853": 8}[method]     # … and the steps grow like tol^(−1/order)
    assert 100 ** (1 / order) * 0.7 < errors[1][1] / errors[0][1] < 100 ** (1 / order) * 1.5


@needs_compiler
@pytest.mark.parametrize("method, h, order, dense_order", [("dopri5", 0.1, 5, 4), ("dop853", 0.5, 8, 7)])
def test_order_of_the_steps_and_of_the_dense_output(oscillator, method, h, order, dense_order):
    """Fixed steps h and h/2 (tolerances that accept every step): the error at the end falls by
    2^order, the dense output's at points inside the steps by at least 2^dense_order."""
    end, dense = [], []
    for step in (h, h / 2):
        t_mid = np.arange(0.37 * step, 5.0, step)[::2]
        y_end, y_out, stats = oscillator(method, 1.0, 1e12, fixed=step, t_end=5.0, t_out=t_mid)
        assert stats[1] == 0 and stats[0] == round(5.0 / step)
        end.append(np.max(np.abs(y_end - exact(5.0))))
        dense.append(np.max(np.abs(y_out - exact(t_mid))))
    assert 2 ** order * 0.8 < end[0] / end[1] < 2 ** order * 1.3
    assert dense[0] / dense[1] > 2 ** dense_order * 0.9


# ---- runs: the compiled loop against the Python loop -----------------------------------------------
def pendulum():
    m = solver.Model(name="pendulum", gravity=(0, -9.81, 0))
    m.add_body("bob", mass=1.0, inertia=(0.01, 0.01, 0.01), position=(0.8, 0.0, 0.0))
    m.add_joint("pin", "revolute", "ground", "bob", origin=(0, 0, 0), axis=(0, 0, 1))
    return m


def driven_double_pendulum():
    m = solver.Model(name="driven double pendulum", gravity=(0, -9.81, 0))
    m.add_body("upper", mass=2.0, inertia=(0.01, 0.1, 0.1), position=(0.25, 0.0, 0.0))
    m.add_body("lower", mass=1.0, inertia=(0.01, 0.05, 0.05), position=(0.75, 0.0, 0.0))
    m.add_joint("shoulder", "revolute", "ground", "upper", origin=(0, 0, 0), axis=(0, 0, 1))
    m.add_joint("elbow", "revolute", "upper", "lower", origin=(0.5, 0, 0), axis=(0, 0, 1))
    m.add_driver("swing", joint="shoulder", expression="0.4*sin(3*t)")
    return m


def loaded_slider_crank():
    from test_cartesian_dynamics import slider_crank
    m = slider_crank()
    m.add_force("push", "piston", force=("20*sin(7*t)", 0.0, 0.0))
    return m


PAIRS = {"auto": ("rk", "step loop in C (Dormand–Prince 8(5,3))"),       # C DOP853 vs scipy's DOP853
         "rk45": ("rk45", "step loop in C (Dormand–Prince 5(4))")}       # C DOPRI5 vs scipy's RK45


def run_both(model, integrator="auto", **options):
    """The same model and settings stepped in C (generated kernels) and by scipy's implementation of
    the same method in Python (generic path); returns (compiled-loop results, Python-loop results,
    the C run's events)."""
    python_integrator, message = PAIRS[integrator]
    events = []
    c_loop = solver.simulate(model, integrator=integrator, codegen="on", on_event=events.append, **options)
    python = solver.simulate(model, integrator=python_integrator, codegen="off", **options)
    assert message in [e["message"] for e in events]
    return c_loop, python, events


@pytest.mark.slow
@needs_compiler
@pytest.mark.parametrize("build, formulation, integrator", [
    (pendulum, "relative", "auto"), (pendulum, "cartesian", "rk45"), (driven_double_pendulum, "cartesian", "auto"),
    (driven_double_pendulum, "relative", "rk45"), (loaded_slider_crank, "cartesian", "auto"),
    pytest.param(loaded_slider_crank, "relative", "rk45", marks=pytest.mark.sweep)])   # 11 s: sweep tier
def test_the_compiled_loop_equals_the_python_loop(build, formulation, integrator):
    rtol = 1e-9
    c_loop, python, _ = run_both(build(), integrator, t_end=2.0, output_step=0.01, rtol=rtol, atol=1e-11,
                                 formulation=formulation)
    assert c_loop.status == python.status == "ok"
    np.testing.assert_array_equal(c_loop.t, python.t)
    for name in c_loop.body_names:
        scale = max(1.0, np.max(np.abs(python.body_position(name))))
        assert np.max(np.abs(c_loop.body_position(name) - python.body_position(name))) < 100 * rtol * scale
    assert np.max(np.abs(c_loop.accelerations - python.accelerations)) < 1e-5 * np.max(np.abs(python.accelerations))
    lam = python.multipliers
    if lam.size:
        assert np.max(np.abs(c_loop.multipliers - lam)) <= 1e-5 * max(1.0, np.max(np.abs(lam)))
    assert np.max(c_loop.constraint_violation) < 1e-9
    s = c_loop.summary()
    step_t, step_h = c_loop.step_sizes
    assert s["steps"] == len(step_t) > 10 and s["rhs_evaluations"] >= 6 * s["steps"]
    assert s["steps"] < 1.5 * python.summary()["steps"]
    assert np.all(np.diff(step_t) > 0) and step_t[-1] == 2.0
    np.testing.assert_allclose(np.sum(step_h), 2.0, rtol=1e-12)


@needs_compiler
def test_rk_steps_in_c_as_auto_does_without_the_stiffness_switch():
    """``"rk"`` (DOP853, as a saved project names it: the 200-link chain) steps in C wherever ``"auto"``
    does: on a non-stiff model the same steps and the same numbers, bit for bit; ``"dop853"`` too."""
    runs = {}
    for integrator in ("auto", "rk", "dop853"):
        events = []
        runs[integrator] = solver.simulate(driven_double_pendulum(), t_end=1.0, output_step=0.01, codegen="on",
                                           formulation="relative", integrator=integrator, on_event=events.append)
        assert "step loop in C (Dormand–Prince 8(5,3))" in [e["message"] for e in events]
    for integrator in ("rk", "dop853"):
        assert runs[integrator].meta["steps"] == runs["auto"].meta["steps"]
        np.testing.assert_array_equal(runs[integrator].coordinates, runs["auto"].coordinates)
        np.testing.assert_array_equal(runs[integrator].multipliers, runs["auto"].multipliers)


@pytest.mark.slow
@needs_compiler
def test_four_bar_through_singular_passes_re_partitions_in_the_compiled_loop():
    """N = 1, 3 s (two horizontal passes, where the dependent block turns singular), Cartesian: the C
    loop returns to Python, which re-partitions where the Python loop does; both follow the exact
    motion to 2e-5 m."""
    theta, _ = exact_angle(1, np.array([0.0, 3.0]))
    assert theta[1] - theta[0] > np.pi
    c_loop, python, events = run_both(fourbar_row(1), "rk45", t_end=3.0, output_step=0.01, partitioning="qr",
                                      rtol=1e-10, atol=1e-11, formulation="cartesian")
    partitions = [e["time"] for e in events if e["kind"] == "partition"]
    assert len(partitions) >= 5                     # the start and at least two per singular pass
    python_partitions = [e["time"] for e in python.events if e["kind"] == "partition"]
    np.testing.assert_allclose(partitions[:5], python_partitions[:5], atol=0.02)
    for res in (c_loop, python):
        assert res.status == "ok"
        assert position_error(res, 1) < 2e-5
        e = res.energy["total"]
        assert np.ptp(e) < 1e-6 * np.max(np.abs(e))


@needs_compiler
@pytest.mark.parametrize("k", [0, 1])
def test_a_run_ending_on_a_singular_pass(k):
    """t_end on the four-bar row's first or second horizontal pass (N = 1, 0.70845000881 s, 1.2152618085
    s) stopped the default path with "the step size collapsed" (the Cartesian one too, at other
    roundings of the pass time, e.g. 1e-12 s past it): the step across the
    pass, placed so that no stage lands in its round-off band (band.c), was cut at t_end, its last
    stage in the band, and every attempt was refused.  It now keeps its placed size past t_end
    (segment.c segment_step) and the run ends at the row t_end from its dense output: positions
    within 1e-7 m of the exact motion (measured 1.2e-8 and 1.8e-8 m).  That row is at the singular
    configuration itself, where q̇ is not determined by ż (the mechanism has a second velocity mode),
    so the run warns of the conditioning there (recording.CONDITIONING_WARNING)."""
    t_end = float(pass_times(1, 1.3)[k])
    res = solver.simulate(fourbar_row(1), t_end=t_end)
    assert res.status == "ok" and res.t[-1] == t_end
    assert position_error(res, 1) < 1e-7
    assert any(e["kind"] == "warning" and "singular configuration" in e["message"] for e in res.events)


@pytest.mark.slow
@needs_compiler
def test_cancel_and_progress_in_the_compiled_loop():
    seen = []

    def progress(t, t_end):
        seen.append(t)

    res = solver.simulate(pendulum(), t_end=20.0, output_step=0.001, codegen="on", progress=progress)
    assert res.status == "ok" and len(res.t) == 20001
    assert len(seen) > 100 and seen[-1] == pytest.approx(20.0) and seen == sorted(seen)
    with pytest.raises(solver.Cancelled) as info:
        solver.simulate(pendulum(), t_end=20.0, output_step=0.001, codegen="on", cancel=lambda: len(seen) > 150,
                        progress=progress)
    partial = info.value.results
    assert partial.status == "cancelled"
    assert 0.0 < partial.t[-1] < 20.0 and len(partial.t) < 20001


@pytest.mark.slow
@needs_compiler
def test_streamed_results_of_the_compiled_loop_equal_those_in_memory(tmp_path):
    memory = solver.simulate(driven_double_pendulum(), t_end=1.0, codegen="on")
    streamed = solver.simulate(driven_double_pendulum(), t_end=1.0, codegen="on", results_path=tmp_path / "run.h5")
    assert streamed.path == str(tmp_path / "run.h5")
    for name in ("t", "q", "qd", "qdd", "lam", "r", "reaction_force", "conditioning", "step_t", "step_h"):
        np.testing.assert_array_equal(streamed._full(name), memory._full(name))


@pytest.mark.slow
@needs_compiler
def test_auto_steps_in_python_when_a_force_needs_python_or_hybrid_partitioning():
    """A rotational spring-damper in the Cartesian formulation is evaluated in Python, hybrid
    partitioning looks at every step: "auto" then runs LSODA in the Python loop (and says so), with
    the same motion as the compiled loop of the pendulum alone (the spring has zero stiffness).  In
    the relative formulation the spring on a tree joint is compiled (solver/codegen/contact.c): the
    compiled loop."""
    m = pendulum()
    m.add_rotational_spring_damper("spring", "pin", stiffness=0.0, damping=0.0)
    events = []
    res = solver.simulate(m, t_end=1.0, codegen="on", formulation="cartesian", on_event=events.append)
    assert "step loop in Python (adams): force elements evaluated in Python: spring" in [e["message"] for e in events]
    compiled_loop = solver.simulate(pendulum(), t_end=1.0, codegen="on")
    assert np.max(np.abs(res.body_position("bob") - compiled_loop.body_position("bob"))) < 1e-6
    events = []
    relative = solver.simulate(m, t_end=1.0, codegen="on", formulation="relative", on_event=events.append)
    assert "step loop in C (Dormand–Prince 8(5,3))" in [e["message"] for e in events]
    assert np.max(np.abs(relative.body_position("bob") - compiled_loop.body_position("bob"))) < 1e-6
    events = []
    hybrid = solver.simulate(pendulum(), t_end=1.0, codegen="on", partitioning="hybrid", on_event=events.append)
    assert "step loop in Python (adams): hybrid partitioning checks every step" in [e["message"] for e in events]
    assert np.max(np.abs(hybrid.body_position("bob") - compiled_loop.body_position("bob"))) < 1e-6


@pytest.mark.slow
@needs_compiler
@pytest.mark.parametrize("name", ["pendulum", "slider_crank", "rrc_arm_case1"])
def test_samples_at_their_saved_tolerances(name):
    """The samples' own settings (rtol 1e-6: long steps) stepped in C by "auto" against scipy's
    DOP853 in the Python loop: within 1e-5 m everywhere (both are ~1e-6 m from a tight reference).
    The pendulum (Cartesian) went to the mirror assembly when Newton started from the last stage of
    a long rejected step instead of from the accepted state."""
    model = solver.load_model(os.path.join(os.path.dirname(__file__), "..", "..", "sample_models",
                                           f"{name}.mbs.json"))
    c_loop, python, _ = run_both(model)
    assert c_loop.status == python.status == "ok"
    for body in c_loop.body_names:
        assert np.max(np.abs(c_loop.body_position(body) - python.body_position(body))) < 1e-5
