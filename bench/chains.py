"""Pendulum chains of 10, 50 and 200 links: relative (recursive) vs Cartesian formulation.

Each link is 0.1 m long, 0.1 kg, revolute about z; the straight chain starts at rest tilted
0.5 rad from hanging and falls under gravity.  Two tables:

1. Generic (interpreted) kernels, 0.2 s, integrator ``adams``, rtol 1e-6, per formulation:

* ``eval ms``   one right-hand side: constraints (level 2) + M + Q + the partitioned solve for q̈
                (median of repeated calls at the initial state, caches cleared);
* ``wall s``    simulate() wall time for the run, ``rhs`` its right-hand-side evaluations,
  ``wall/sim s`` wall time per simulated second, ``wall/rhs ms`` wall time per evaluation
  (includes Newton position solves and output recording).

A run is cut at ``BUDGET`` seconds of wall time (checked in every right-hand side); the line then
says so and the per-second figures are from the part that ran.

2. Generated kernels, relative formulation (``codegen=True``: an open chain compiles to the O(n)
   articulated-body library, solver/codegen/articulated.c), ``GENERATED_T`` s, integrator ``rk``
   (DOP853), rtol 1e-6, 100 output points with reactions: ``build s`` derivation + compilation
   (once per geometry, cached), ``us/rhs`` one compiled right-hand side (median, at the initial
   state), ``wall s`` the simulate() call, ``real-time`` simulated / wall seconds, ``drift`` the
   energy drift (max |E − E₀| / max kinetic energy).

Seed-paper context: the recursive form should be O(n) per evaluation for an open chain; see
docs/formulations.md for what these numbers show.

Usage:  python bench/chains.py [n ...]        (default 10 50 200; total ≈ 4 min, 1 min of it the
        200-link chain's compilation when not cached)
"""
from __future__ import annotations

import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import solver  # noqa: E402
from solver.analysis.dynamics import Run  # noqa: E402
from solver.analysis.threads import single_threaded_blas  # noqa: E402
from solver.compile import compile_model  # noqa: E402
from solver.codegen import CodegenRelativeSystem  # noqa: E402
from solver.formulations.cartesian import CartesianSystem  # noqa: E402
from solver.formulations.relative import RelativeSystem  # noqa: E402
from solver.partitioning.choose import build_partition  # noqa: E402
from tools.scale_models import chain  # noqa: E402

T_END = 0.2
BUDGET = 35.0          # s of wall time per run
GENERATED_T = 5.0      # s simulated with generated kernels


def eval_time(system, repeats):
    """Median time of one right-hand side at the initial state (what Run._rhs does, minus the
    Newton position solve)."""
    q, qd, _ = system.initial_state()
    qd = qd + 0.01
    part = build_partition("qr", system, q, 0.0)
    times = []
    for _ in range(repeats):
        if hasattr(system, "_cache"):
            system._cache.clear()
        t0 = time.perf_counter()
        ev = system.constraints(q, 0.0, qd, level=2)
        M = system.mass(q)
        Q = system.forces(q, qd, 0.0)
        part.accelerations(M, Q, ev.jac, ev.gamma)
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


class BudgetRun(Run):
    """A Run that stops (Cancelled, partial results kept) once ``budget`` s of wall time are spent;
    checked in every right-hand side, since output points can be far apart for long chains."""

    def __init__(self, *args, budget, **kw):
        super().__init__(*args, **kw)
        self.deadline = time.perf_counter() + budget
        self.reached = 0.0

    def _rhs(self, part, t, y):
        if time.perf_counter() > self.deadline:
            raise solver.Cancelled(time=t)
        self.reached = max(self.reached, t)
        return super()._rhs(part, t, y)


def run(model, formulation):
    """(results, simulated time reached, cut?) of one budgeted run."""
    compiled = compile_model(model, formulation=formulation, t_end=T_END, output_step=T_END / 10, codegen="off")
    r = BudgetRun(compiled.system, compiled.settings, budget=BUDGET)
    try:
        res = r.execute()
        return res, res.t[-1], False
    except solver.Cancelled as exc:
        return exc.results, r.reached, True


def main(sizes):
    print(f"chains of n revolute links, {T_END} s simulated, adams rtol 1e-6; run budget {BUDGET:.0f} s")
    print(f"{'n':>4} {'formulation':<10} {'nq':>5} {'rows':>5} {'eval ms':>9} {'wall s':>8} {'rhs':>5} "
          f"{'wall/sim s':>11} {'wall/rhs ms':>12}  note")
    rows = []
    with single_threaded_blas():
        for n in sizes:
            model = chain(n)
            for formulation, cls in (("relative", RelativeSystem), ("cartesian", CartesianSystem)):
                system = cls(model)
                ev_ms = 1e3 * eval_time(system, 5 if n <= 50 else 2)
                res, t_reached, cut = run(model, formulation)
                wall = res.meta["wall_time"]
                rhs = max(int(res.meta.get("rhs_evaluations", 0)), 1)
                per_sim = wall / t_reached if t_reached > 0 else float("nan")
                note = f"cut at t = {t_reached:.3f} s" if cut else ""
                print(f"{n:>4} {formulation:<10} {system.nq:>5} {len(system.equations):>5} {ev_ms:>9.2f} "
                      f"{wall:>8.2f} {rhs:>5} {per_sim:>11.1f} {1e3 * wall / rhs:>12.2f}  {note}", flush=True)
                rows.append((n, formulation, ev_ms, wall, rhs, per_sim))
    print(f"\ngenerated kernels, relative formulation: {GENERATED_T} s simulated, rk (DOP853) rtol 1e-6, "
          "100 outputs")
    print(f"{'n':>4} {'build s':>8} {'us/rhs':>8} {'wall s':>8} {'rhs':>6} {'real-time':>10} {'drift':>9}")
    with single_threaded_blas():
        for n in sizes:
            ev_us, wall, rhs, drift, build = generated_run(n)
            rows.append((n, "generated", 1e-3 * ev_us, wall, rhs, wall / GENERATED_T))
            print(f"{n:>4} {build:>8.1f} {ev_us:>8.1f} {wall:>8.2f} {rhs:>6} {GENERATED_T / wall:>9.2f}x "
                  f"{drift:>9.1e}", flush=True)
    print("\nscaling of one evaluation (ms) from n to the next size:")
    for formulation in ("relative", "cartesian", "generated"):
        ev = [(n, e) for n, f, e, *_ in rows if f == formulation]
        for (n0, e0), (n1, e1) in zip(ev, ev[1:]):
            print(f"  {formulation:<10} n {n0:>3} -> {n1:>3}: x{e1 / e0:6.1f}  "
                  f"(exponent {np.log(e1 / e0) / np.log(n1 / n0):.2f})")
    return rows


def generated_run(n):
    """(µs per compiled right-hand side, wall s, evaluations, energy drift, build s) of the n-link
    chain with generated kernels."""
    model = chain(n)
    t0 = time.perf_counter()
    system = CodegenRelativeSystem(model)
    build = time.perf_counter() - t0
    q, qd, _ = system.initial_state()
    part = build_partition("qr", system, q, 0.0)
    reduction = system.compiled_reduction(part)
    y = np.concatenate([part.z_of(q), qd + 0.01])
    times = []
    for _ in range(200):
        t1 = time.perf_counter()
        reduction.solve(0.0, y, q, 2)
        times.append(time.perf_counter() - t1)
    t1 = time.perf_counter()
    res = solver.simulate(model, formulation="relative", codegen=True, t_end=GENERATED_T,
                          output_step=GENERATED_T / 100, integrator="rk", rtol=1e-6, atol=1e-8)
    wall = time.perf_counter() - t1
    return (1e6 * float(np.median(times)), wall, int(res.meta["rhs_evaluations"]), res.summary()["energy_drift"],
            build)


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [10, 50, 200])
