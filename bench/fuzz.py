"""Differential fuzzing sweep: random mechanisms through every path (issue #27, item 3).

    .venv/bin/python bench/fuzz.py --cases N --seed S [--bodies B] [--t-end T] [--run-seconds X] [--log FILE]

Builds ``random_mechanism(seed)`` for seeds S … S+N−1 (tests/solver/random_mechanisms.py), runs each
through the reference and every path and compares them (tests/solver/differential.py).  Prints one
line per case as it goes (appended to ``--log`` too, so a long sweep at ``nice`` can be followed and
resumed), then a table of outcomes — agree, disagree by quantity (per path), all paths fail — and
the worst discrepancies (error / bound, path, item, time).  Run it at low priority: ``nice -n 10``.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "solver"))
import differential as diff  # noqa: E402
from random_mechanisms import random_mechanism  # noqa: E402


def describe(model) -> str:
    kinds = Counter(j.type for j in model.joints.values())
    forces = Counter(f.KIND for f in model.forces.values())
    return (f"{len(model.bodies)}b{'+flex' if model.flexible_bodies else ''} "
            f"joints[{' '.join(f'{k}:{n}' for k, n in sorted(kinds.items()))}] drivers:{len(model.drivers)} "
            f"forces[{' '.join(f'{k}:{n}' for k, n in sorted(forces.items()))}] g={'on' if any(model.gravity) else 'off'}")


def case_line(case, model, seconds) -> str:
    if case.all_fail:
        verdict = f"ALL FAIL ({case.reference_error[:100]})"
    elif case.disagreements:
        verdict = "DISAGREE " + "; ".join(f"{p}: {','.join(q)}" for p, q in case.disagreements.items())
    else:
        verdict = "agree"
    return f"seed {case.seed}: {verdict} | {describe(model)} | {seconds:.1f} s"


def worst_rows(cases, n=15):
    rows = []
    for case in cases:
        for p in case.paths:
            for q, r in p.ratios.items():
                if r > 1.0:
                    item, k = p.where.get(q) or (None, 0)
                    rows.append((r, case.seed, diff.path_name(p.path), q, item, k))
        for q, r in case.reference_ratios.items():
            if r > 1.0:
                rows.append((r, case.seed, "reference", q, None, 0))
    return sorted(rows, reverse=True)[:n]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--bodies", type=int, default=4, help="largest number of rigid bodies")
    ap.add_argument("--t-end", type=float, default=0.3)
    ap.add_argument("--run-seconds", type=float, default=diff.RUN_SECONDS, help="cancel a run after this time")
    ap.add_argument("--log", default="", help="append each case's line to this file")
    args = ap.parse_args(argv)
    cases, outcome, by_quantity = [], Counter(), Counter()
    start = time.perf_counter()
    for seed in range(args.seed, args.seed + args.cases):
        try:
            model = random_mechanism(seed, max_bodies=args.bodies)
            t0 = time.perf_counter()
            case = diff.compare_case(seed, model, t_end=args.t_end, seconds=args.run_seconds)
        except KeyboardInterrupt:           # Ctrl-C: the summary of the cases done so far
            break
        line = case_line(case, model, time.perf_counter() - t0)
        print(line, flush=True)
        if args.log:
            with open(args.log, "a") as f:
                f.write(line + "\n")
        cases.append(case)
        outcome["all fail" if case.all_fail else "disagree" if case.disagreements else "agree"] += 1
        for path, quantities in case.disagreements.items():
            for q in quantities:
                by_quantity[(path, q)] += 1
    print(f"\n{len(cases)} cases (seeds {args.seed}…{args.seed + len(cases) - 1}) in "
          f"{time.perf_counter() - start:.0f} s")
    print(f"{'outcome':<12} {'cases':>6}")
    for k in ("agree", "disagree", "all fail"):
        print(f"{k:<12} {outcome[k]:>6}")
    if by_quantity:
        print(f"\n{'path':<26} {'quantity':<18} {'cases':>6}")
        for (path, q), n in sorted(by_quantity.items()):
            print(f"{path:<26} {q:<18} {n:>6}")
    rows = worst_rows(cases)
    if rows:
        print(f"\n{'error/bound':>12} {'seed':>6} {'path':<26} {'quantity':<18} {'item':<10} {'output':>6}")
        for r, seed, path, q, item, k in rows:
            print(f"{r:>12.3g} {seed:>6} {path:<26} {q:<18} {str(item):<10} {k:>6}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
