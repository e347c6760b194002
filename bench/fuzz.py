"""Differential fuzzing sweep: random mechanisms through every path (issue #27, item 3).

    .venv/bin/python bench/fuzz.py --cases N --seed S [--bodies B] [--t-end T] [--run-seconds X] [--log FILE]
                                   [--jobs J]

Builds ``random_mechanism(seed)`` for seeds S … S+N−1 (tests/solver/random_mechanisms.py), runs each
through the reference and every path and compares them (tests/solver/differential.py).  Prints one
line per case as it goes (appended to ``--log`` too, so a long sweep at ``nice`` can be followed and
resumed), then a table of outcomes — agree, disagree by quantity (per path), all paths fail — and
the worst discrepancies (error / bound, path, item, time); an "all fail" case proven to be a limit point
of the driven motion (differential.limit_point) is counted as explained.  Run it at low priority: ``nice -n 10``.
Each line ends with the case's wall and CPU seconds (the CPU time of its runs and comparisons: the
measure of the sweep's cost on a shared machine, independent of its load).  ``--jobs J`` runs J
cases at a time in worker processes (a quiet machine with J cores; default 1), lines in seed order.
"""
from __future__ import annotations

import argparse
import multiprocessing
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


def case_line(case, model, seconds, cpu) -> str:
    if case.all_fail:
        why = f"explained: {case.explained}" if case.explained else case.reference_error[:100]
        verdict = f"ALL FAIL ({why})"
    elif case.disagreements:
        verdict = "DISAGREE " + "; ".join(f"{p}: {','.join(q)}" for p, q in case.disagreements.items())
    else:
        verdict = "agree"
    return f"seed {case.seed}: {verdict} | {describe(model)} | {seconds:.1f} s, cpu {cpu:.1f} s"


def one_case(job):
    """(case, its log line, CPU seconds) of one seed: ``job`` = (seed, bodies, t_end, run seconds)."""
    seed, bodies, t_end, run_seconds = job
    model = random_mechanism(seed, max_bodies=bodies)
    wall, cpu = time.perf_counter(), _cpu()
    case = diff.compare_case(seed, model, t_end=t_end, seconds=run_seconds)
    cpu = _cpu() - cpu
    return case, case_line(case, model, time.perf_counter() - wall, cpu), cpu


def _cpu():
    """CPU seconds of this process and its waited-for children (the C compiler's builds)."""
    import resource
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


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


def print_cpu_table(cases):
    """CPU seconds of the runs by path over the cases (a path that took an identical run's results: 0)."""
    cpu = Counter()
    for case in cases:
        cpu["reference"] += case.reference_seconds
        for p in case.paths:
            cpu[diff.path_name(p.path)] += p.seconds
    total = sum(cpu.values())
    print(f"\n{'runs':<26} {'CPU s':>8} {'share':>6}")
    for name, seconds in cpu.most_common():
        print(f"{name:<26} {seconds:>8.1f} {seconds / max(total, 1e-9):>6.1%}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--bodies", type=int, default=4, help="largest number of rigid bodies")
    ap.add_argument("--t-end", type=float, default=0.3)
    ap.add_argument("--run-seconds", type=float, default=diff.RUN_SECONDS, help="cancel a run after this time")
    ap.add_argument("--log", default="", help="append each case's line to this file")
    ap.add_argument("--jobs", type=int, default=1, help="cases run at a time in worker processes")
    args = ap.parse_args(argv)
    cases, outcome, by_quantity = [], Counter(), Counter()
    start, cpu_total = time.perf_counter(), 0.0
    jobs = [(seed, args.bodies, args.t_end, args.run_seconds) for seed in range(args.seed, args.seed + args.cases)]
    pool = multiprocessing.Pool(args.jobs) if args.jobs > 1 else None
    done = pool.imap(one_case, jobs) if pool else map(one_case, jobs)
    while True:
        try:
            case, line, cpu = next(done)
        except (KeyboardInterrupt, StopIteration):      # Ctrl-C: the summary of the cases done so far
            break
        cpu_total += cpu
        print(line, flush=True)
        if args.log:
            with open(args.log, "a") as f:
                f.write(line + "\n")
        cases.append(case)
        outcome[("all fail, explained" if case.explained else "all fail") if case.all_fail
                else "disagree" if case.disagreements else "agree"] += 1
        for path, quantities in case.disagreements.items():
            for q in quantities:
                by_quantity[(path, q)] += 1
    if pool:
        pool.terminate()
    wall = time.perf_counter() - start
    print(f"\n{len(cases)} cases (seeds {args.seed}…{args.seed + len(cases) - 1}) in {wall:.0f} s "
          f"({60 * len(cases) / max(wall, 1e-9):.2f} cases/min), CPU {cpu_total:.0f} s "
          f"({60 * len(cases) / max(cpu_total, 1e-9):.2f} cases per CPU minute); load average "
          + " ".join(f"{x:.1f}" for x in os.getloadavg()))
    print(f"{'outcome':<20} {'cases':>6}")
    for k in ("agree", "disagree", "all fail", "all fail, explained"):
        print(f"{k:<20} {outcome[k]:>6}")
    if by_quantity:
        print(f"\n{'path':<26} {'quantity':<18} {'cases':>6}")
        for (path, q), n in sorted(by_quantity.items()):
            print(f"{path:<26} {q:<18} {n:>6}")
    print_cpu_table(cases)
    rows = worst_rows(cases)
    if rows:
        print(f"\n{'error/bound':>12} {'seed':>6} {'path':<26} {'quantity':<18} {'item':<10} {'output':>6}")
        for r, seed, path, q, item, k in rows:
            print(f"{r:>12.3g} {seed:>6} {path:<26} {q:<18} {str(item):<10} {k:>6}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
