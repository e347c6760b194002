"""Tolerance monotonicity: does asking for more accuracy ever fail where less succeeds, or give a
larger error?  Each model runs with its saved settings (the path a user gets, generated kernels on
"auto") at rtol 1e-6 … 1e-12 (atol = rtol / 100); the error is against an exact motion where one
exists (the four-bar row: tools/fourbar_row.py's 1-DOF reduction, max over bodies and output
points, m), else against the tightest run of the grid that completed (max over bodies of the final
CM position, m).  A cell reads "error (wall s)" or the failure kind and its time.

    .venv/bin/python bench/tolerance_grid.py [--markdown] [--only NAME ...] [--t-end S]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import solver  # noqa: E402
from tools.fourbar_row import position_error  # noqa: E402
from tools.scale_models import fourbar_row  # noqa: E402

SAMPLES = Path(__file__).resolve().parents[1] / "sample_models"
RTOLS = (1e-6, 1e-7, 1e-8, 1e-9, 1e-10, 1e-11, 1e-12)


def models(only):
    """(name, model, exact-error function or None, t_end) of the grid's rows."""
    rows = [(p.name.removesuffix(".mbs.json"), solver.load_model(p), None, None) for p in sorted(SAMPLES.glob("*.mbs.json"))]
    rows += [(f"fourbar_row_{n}", fourbar_row(n), (lambda res, n=n: position_error(res, n)), 5.0) for n in (10, 40)]
    return [r for r in rows if not only or r[0] in only]


def run(model, rtol, t_end):
    t0 = time.perf_counter()
    try:
        res = solver.simulate(model, rtol=rtol, atol=rtol / 100, t_end=t_end)
        return res, None, time.perf_counter() - t0
    except solver.SolverError as exc:
        return None, f"{exc.kind} at {exc.time:.3g} s", time.perf_counter() - t0


def final_positions(res):
    return np.array([res.body_position(b)[-1] for b in res.body_names])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--only", nargs="*")
    parser.add_argument("--t-end", type=float)
    args = parser.parse_args()
    header = ["model", *[f"rtol {r:.0e}" for r in RTOLS]]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)] if args.markdown else ["  ".join(header)]
    print("\n".join(lines), flush=True)
    for name, model, exact, t_end in models(args.only):
        t_end = args.t_end or t_end or model.settings.t_end
        runs = [run(model, rtol, t_end) for rtol in RTOLS]
        ref = next((res for res, _, _ in reversed(runs) if res is not None), None)
        cells = []
        for res, failure, wall in runs:
            if res is None:
                cells.append(failure)
            elif exact is not None:
                cells.append(f"{exact(res):.1e} ({wall:.1f})")
            else:
                cells.append(f"{np.max(np.abs(final_positions(res) - final_positions(ref))):.1e} ({wall:.1f})")
        lines.append(("| " + " | ".join([name, *cells]) + " |") if args.markdown else "  ".join([name, *cells]))
        print(lines[-1], flush=True)
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
