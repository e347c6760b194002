"""Work-precision study on the four-bar row: wall time against error from the exact motion.

The model is ``tools/scale_models.fourbar_row(N)`` (N parallelogram four-bars sharing cranks and
couplers, 2N+1 unit links, cranks started straight up at 1 rad/s: every horizontal pass is a
singular configuration); the reference is its exact 1-DOF motion (``tools/fourbar_row.py``,
J θ̈ + G sin θ = 0 at rtol 1e-12).  For every integrator × formulation × partitioning × rtol asked
for, one run of ``--t-end`` s with 0.01 s output points and generated kernels (``codegen="on"``;
the build is done once per formulation, before the timed runs) reports:

* ``wall s``   simulate() wall time (build excluded),
* ``CPU s``    CPU time of the process during simulate() (on a shared machine the fairer one),
* ``error m``  max over output points and bodies of |r_CM − r_CM exact| (``position_error``),
* ``drift``    energy drift max |E − E₀| / max |E| (Results.summary),
* ``steps``, ``rhs`` accepted steps and right-hand-side evaluations,
* ``status``   ok / failed (solver message) / budget (cut at ``--budget`` s of wall time).

atol is rtol/100.  ``galpha`` has no error control: it runs at the fixed step h = 100·rtol s, listed
under that rtol, and only for h ≥ 1e-4 s (smaller steps take too long for a 20 s run).  Partitioning
applies to the Cartesian formulation's joints and to the relative formulation's cut joints.

    .venv/bin/python bench/work_precision.py [--n 10 40] [--t-end 20] [--rtol 1e-5 ... 1e-10]
        [--integrators adams rk rk45 bdf radau galpha] [--formulations cartesian relative]
        [--partitionings qr hybrid lu] [--budget 120] [--csv work_precision.csv]
"""
from __future__ import annotations

import argparse
import csv
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import solver                                              # noqa: E402
from solver.compile import compile_model                   # noqa: E402
from tools.fourbar_row import position_error               # noqa: E402
from tools.scale_models import fourbar_row                 # noqa: E402

RTOLS = (1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10)
INTEGRATORS = ("adams", "rk", "rk45", "bdf", "radau", "galpha")
GALPHA_MIN_STEP = 1e-4
COLUMNS = ("n", "formulation", "partitioning", "integrator", "rtol", "wall_s", "cpu_s", "error_m", "drift", "steps",
           "rhs", "status")


def one_run(compiled, n, t_end, integrator, partitioning, rtol, budget):
    """One timed run; a dict with the COLUMNS."""
    options = dict(t_end=t_end, output_step=0.01, integrator=integrator, partitioning=partitioning)
    if integrator == "galpha":
        options["max_step"] = 100 * rtol
    else:
        options.update(rtol=rtol, atol=rtol / 100)
    start, cpu = time.perf_counter(), time.process_time()
    row = dict(n=n, formulation=compiled.settings.formulation, partitioning=partitioning, integrator=integrator,
               rtol=rtol)
    try:
        res = solver.simulate(compiled, cancel=lambda: time.perf_counter() - start > budget, **options)
    except solver.Cancelled:
        return dict(row, wall_s=time.perf_counter() - start, cpu_s=time.process_time() - cpu, error_m=float("nan"),
                    drift=float("nan"), steps=0, rhs=0, status="budget")
    except solver.SolverError as exc:
        return dict(row, wall_s=time.perf_counter() - start, cpu_s=time.process_time() - cpu, error_m=float("nan"),
                    drift=float("nan"), steps=0, rhs=0, status="failed: " + str(exc).splitlines()[0][:60])
    cpu = time.process_time() - cpu
    s = res.summary()
    return dict(row, wall_s=res.meta["wall_time"], cpu_s=cpu, error_m=position_error(res, n), drift=s["energy_drift"],
                steps=s["steps"], rhs=s["rhs_evaluations"], status="ok")


def cases(args):
    for integrator in args.integrators:
        parts = ["qr"] if integrator == "galpha" else args.partitionings
        for partitioning in parts:
            for rtol in args.rtol:
                if integrator == "galpha" and 100 * rtol < (1 - 1e-9) * GALPHA_MIN_STEP:
                    continue
                yield integrator, partitioning, rtol


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="+", default=[10, 40])
    ap.add_argument("--t-end", type=float, default=20.0)
    ap.add_argument("--rtol", type=float, nargs="+", default=list(RTOLS))
    ap.add_argument("--integrators", nargs="+", default=list(INTEGRATORS))
    ap.add_argument("--formulations", nargs="+", default=["cartesian", "relative"])
    ap.add_argument("--partitionings", nargs="+", default=["qr", "hybrid", "lu"])
    ap.add_argument("--budget", type=float, default=120.0, help="s of wall time per run before it is cut")
    ap.add_argument("--csv", default=None, help="write the table here as CSV")
    args = ap.parse_args(argv)
    head = (f"{'N':>3} {'formulation':>11} {'part':>6} {'integrator':>10} {'rtol':>7} {'wall s':>8} {'CPU s':>8} "
            f"{'error m':>9} {'drift':>9} {'steps':>6} {'rhs':>7}  status")
    print(f"four-bar row, {args.t_end:g} s simulated, generated kernels (build excluded), atol = rtol/100; "
          "error = max |r_CM − exact| over bodies and output points")
    print(head)
    print("-" * len(head))
    out = open(args.csv, "w", newline="") if args.csv else None
    writer = csv.DictWriter(out, fieldnames=COLUMNS) if out else None
    if writer:
        writer.writeheader()
    for n in args.n:
        model = fourbar_row(n)
        for formulation in args.formulations:
            compiled = compile_model(model, codegen="on", formulation=formulation)
            for integrator, partitioning, rtol in cases(args):
                r = one_run(compiled, n, args.t_end, integrator, partitioning, rtol, args.budget)
                print(f"{n:>3} {formulation:>11} {partitioning:>6} {integrator:>10} {rtol:>7.0e} {r['wall_s']:>8.2f} "
                      f"{r['cpu_s']:>8.2f} {r['error_m']:>9.2e} {r['drift']:>9.2e} {r['steps']:>6} {r['rhs']:>7}  {r['status']}",
                      flush=True)
                if writer:
                    writer.writerow(r)
                    out.flush()
    if out:
        out.close()
    print("machine: 2 cores shared with other processes; BLAS single-threaded inside simulate(); load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores at the end")


if __name__ == "__main__":
    main()
