"""The samples whose saved settings say integrator "adams", warm (their kernels built before, not timed):
CPU seconds per simulated second (best of ``--repeat`` runs, time.process_time), the real-time factor,
steps and right-hand sides, and the step loop the run took (its "step loop in …" event).  The load
average is printed with the table (a shared machine: CPU time still includes cache contention).

``--python`` runs the same settings in the Python loop (scipy LSODA; ``Run.python_loop``, the compiled
kernels and reduction kept), the comparison of docs/performance.md's "adams in the compiled loop".

    nice python bench/saved_adams.py [--samples slider_crank scale/loops_50 ...] [--repeat 3] [--python] [--t-end 1]
"""
from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import solver                                              # noqa: E402

ROOT = os.path.join(os.path.dirname(__file__), "..", "sample_models")
SAMPLES = ("slider_crank", "fourbar", "fourbar_spring", "double_pendulum", "pendulum", "rrc_arm_case1",
           "scale/loops_50")


def loop_of(res):
    """The step loop the run took, from its events ("C (…)" or "Python (…)"; no event: the Python loop of
    a run whose integrator has no compiled loop, or a kinematic run)."""
    for e in res.events:
        if "step loop in" in e["message"]:
            return e["message"].split("step loop in ", 1)[1].split(":")[0]
    return "Python" if res.meta["steps"] else "kinematic (no steps)"


def measure(name, repeat, t_end):
    model = solver.load_model(os.path.join(ROOT, name + ".mbs.json"))
    compiled = solver.compile_model(model)
    options = {} if t_end is None else {"t_end": t_end}
    solver.simulate(compiled, **options)           # warm: the time library and the buffers built
    best, res = None, None
    for _ in range(repeat):
        t0 = time.process_time()
        res = solver.simulate(compiled, **options)
        cpu = time.process_time() - t0
        best = cpu if best is None else min(best, cpu)
    span = float(res.t[-1] - res.t[0])
    return best / span, span / best, res


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", nargs="+", default=list(SAMPLES))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--python", action="store_true", help="the Python loop (scipy LSODA) instead")
    ap.add_argument("--t-end", type=float, default=None, help="simulated time (default: each sample's own)")
    args = ap.parse_args(argv)
    if args.python:
        from solver.analysis.dynamics import Run
        Run.python_loop = ("adams",)
    print(f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")
    print("| sample | CPU s / sim. s | × real time | steps | rhs | loop |")
    print("|---|---|---|---|---|---|")
    for name in args.samples:
        per, rt, res = measure(name, args.repeat, args.t_end)
        print(f"| {name} | {per:.4f} | {rt:.1f} | {res.meta['steps']} | {res.meta['rhs_evaluations']} | {loop_of(res)} |",
              flush=True)
    print(f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
