"""Kim & Yoo (1997), Tables 2–3 analogue: the singular four-bar (rigid and flexible coupler) falling
through its flattened positions with LU, QR, SVD and hybrid LU↔QR coordinate partitioning: status,
wall time, integration steps, right-hand sides, energy drift, LU→QR / QR→LU switches (each hybrid
switch is listed below the table with its time and reason), and the step-size history of every
method per model as CSV and PNG in ``out/bench/flexible/step_sizes_<model>.*``.

The models are the samples ``sample_models/fourbar_singular_{rigid,flexible}.mbs.json`` (released
10° above the flattened configuration; singular passages near 0.17 s and 0.95 s; flexible: copper
coupler, 10 beam elements, 2 modes).  Adams (LSODA) with the given tolerance; energy drift =
max |E − E₀| / max kinetic energy (kinetic + gravity + strain).  A method that cannot get past a
singular position is reported with the time it stopped.

    .venv/bin/python bench/flexible.py [--t-end 1.2] [--rtol 1e-8] [--methods lu qr svd hybrid]
"""
from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import solver                                              # noqa: E402
from plots import write_series                             # noqa: E402

SAMPLES = os.path.join(os.path.dirname(__file__), "..", "sample_models")
PAPER = {("rigid", "lu"): 2.31, ("rigid", "qr"): 9.37, ("rigid", "hybrid"): 6.80,      # CPU s, Tables 2–3
         ("flexible", "lu"): 50.4, ("flexible", "qr"): 194.7, ("flexible", "hybrid"): 114.0}


def run(model, method, t_end, rtol):
    """(results or partial results, wall time, failure message or '')."""
    t0 = time.perf_counter()
    try:
        res = solver.simulate(model, t_end=t_end, output_step=0.01, partitioning=method, rtol=rtol,
                              atol=rtol * 1e-2)
        return res, time.perf_counter() - t0, ""
    except solver.SolverError as exc:
        return exc.results, time.perf_counter() - t0, str(exc)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--t-end", type=float, default=1.2)
    ap.add_argument("--rtol", type=float, default=1e-8)
    ap.add_argument("--methods", nargs="+", default=["lu", "qr", "svd", "hybrid"])
    ap.add_argument("--models", nargs="+", default=["rigid", "flexible"])
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "out", "bench", "flexible"))
    args = ap.parse_args(argv)
    print(f"singular four-bar, {args.t_end:g} s simulated, Adams rtol {args.rtol:g}; "
          "drift = max|E − E0| / max kinetic; paper = CPU s of Kim & Yoo (1997) (2 s simulated, 1997 PC)")
    head = (f"{'model':<9} {'method':<7} {'status':<22} {'wall s':>8} {'steps':>6} {'rhs':>7} "
            f"{'drift':>9} {'LU→QR':>6} {'QR→LU':>6} {'paper s':>8}")
    print(head)
    print("-" * len(head))
    hybrid_switches = []
    for kind in args.models:
        model = solver.load_model(os.path.join(SAMPLES, f"fourbar_singular_{kind}.mbs.json"))
        histories = []
        for method in args.methods:
            res, wall, failure = run(model, method, args.t_end, args.rtol)
            status = "ok" if not failure else (f"failed at {res.t[-1]:.3f} s" if res is not None and len(res.t)
                                               else "failed")
            drift = res.summary()["energy_drift"] if res is not None and len(res.t) else float("nan")
            events = [e for e in res.events if e["kind"] == "switch"] if res is not None else []
            switches = [e["message"] for e in events]
            hybrid_switches += [f"  {kind} {e['time']:.4f} s  {e['message']}" for e in events]
            to_qr = sum(s.startswith("lu -> qr") for s in switches)
            to_lu = sum(s.startswith("qr -> lu") for s in switches)
            steps = res.meta.get("steps", 0) if res is not None else 0
            rhs = res.meta.get("rhs_evaluations", 0) if res is not None else 0
            paper = PAPER.get((kind, method))
            print(f"{kind:<9} {method:<7} {status:<22} {wall:>8.2f} {steps:>6} {rhs:>7} {drift:>9.2e} "
                  f"{to_qr:>6} {to_lu:>6} {'' if paper is None else f'{paper:.1f}':>8}")
            if res is not None and len(res.step_sizes[0]):
                histories.append((method, *res.step_sizes))
        if histories:
            failed = write_series(os.path.abspath(args.out), f"step_sizes_{kind}",
                                  f"singular four-bar ({kind}): integration step size", ("time", "s"),
                                  ("step size", "s"), histories, log_y=True)
            print(f"  step-size history written to {os.path.relpath(args.out)}/step_sizes_{kind}.csv"
                  + (f" (PNG failed: {failed})" if failed else " and .png"))
    print("machine: 2 cores shared with other processes; BLAS single-threaded inside simulate()")
    if hybrid_switches:
        print("hybrid switches:")
        print("\n".join(hybrid_switches))


if __name__ == "__main__":
    main()
