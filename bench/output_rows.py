"""What the output rows cost: warm runs of sample models with their rows post-processed in C
(solver/codegen/output.py) and, in the same process, in Python (postprocess_batch: the compiled
output switched off for the measurement).

``nice python bench/output_rows.py [--repeat N]``: CPU time of ``simulate(compiled)``, best of N
interleaved rounds, with the load average; a run's tip of the same rows is compared between the two
(max |C − Python| over the reaction columns, relative to their scale).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import solver  # noqa: E402
from solver.codegen import output  # noqa: E402

COLUMNS = ("r", "v", "a", "reaction_force", "reaction_torque", "energy_table")


def cases():
    """(name, CompiledModel) of the cases measured: the arm of bench/peers.py on the default settings
    and at rtol 1e-4, samples whose rows the C covers, on "auto", and closed loops of the relative
    formulation (two samples, the four-bar row N = 40)."""
    import peers
    arm, _ = peers.free_falling_arm()
    for f in solver.Settings.FIELDS:
        if f.name in peers.DEFAULTS:
            arm.settings.set(f.name, f.default)
    out = [("7-DOF arm, default (auto, rtol 1e-8)", solver.compile_model(arm)),
           ("7-DOF arm, auto rtol 1e-4", solver.compile_model(arm, rtol=1e-4, atol=1e-6))]
    for name in ("double_pendulum", "fourbar_spring", "pendulum", "slider_crank"):
        model = solver.load_model(str(ROOT / "sample_models" / f"{name}.mbs.json"))
        out.append((f"{name} (saved settings, integrator auto)", solver.compile_model(model, integrator="auto")))
    for name in ("fourbar_spring", "slider_crank"):          # closed loops in the relative formulation
        model = solver.load_model(str(ROOT / "sample_models" / f"{name}.mbs.json"))
        out.append((f"{name} (relative, integrator auto)",
                    solver.compile_model(model, integrator="auto", formulation="relative")))
    from tools.scale_models import fourbar_row
    out.append(("four-bar row N = 40, 5 s (default settings)", solver.compile_model(fourbar_row(40), t_end=5.0)))
    return out


def cpu(fn):
    t0 = time.process_time()
    res = fn()
    return time.process_time() - t0, res


def measure(repeat):
    python_rows = lambda system: (None, "measured in Python")      # noqa: E731
    compiled_kind = output.output_kind
    rows = []
    for name, compiled in cases():
        covered = output.compiled_output(compiled.system) is None
        best = {"C": np.inf, "Python": np.inf}
        results = {}
        for _ in range(repeat):
            for path in best:
                output.output_kind = compiled_kind if path == "C" else python_rows
                try:
                    seconds, res = cpu(lambda: solver.simulate(compiled))
                finally:
                    output.output_kind = compiled_kind
                best[path] = min(best[path], seconds)
                results[path] = res
        diff = max(float(np.max(np.abs(results["C"]._full(c) - results["Python"]._full(c)), initial=0.0))
                   / max(1.0, float(np.max(np.abs(results["Python"]._full(c)), initial=0.0))) for c in COLUMNS)
        rows.append((name, covered, len(results["C"]), best["C"] * 1e3, best["Python"] * 1e3, diff))
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5, help="best of this many rounds (default 5)")
    args = ap.parse_args(argv)
    rows = measure(args.repeat)
    print("| case | rows in C | output points | CPU ms, rows in C | CPU ms, rows in Python | C / Python | "
          "max difference (of the column's scale) |")
    print("|---|---|---|---|---|---|---|")
    for name, covered, n, c, p, diff in rows:
        print(f"| {name} | {'yes' if covered else 'no'} | {n} | {c:.1f} | {p:.1f} | {c / p:.2f} | {diff:.1e} |")
    print(f"\nBest of {args.repeat} interleaved rounds, CPU time of the process.  Load average: "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores.")


if __name__ == "__main__":
    main()
