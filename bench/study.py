"""Parameter study on Dask: wall time of 16 slider–crank variants (4×4 grid of crank and piston
mass, ``--t-end`` s each) run serially in this process vs on a LocalCluster of ``--workers``
processes (one thread each; its start-up timed apart), and a check that both give the same
responses bit for bit.  Expect ≈ n_workers× for the run on an idle machine with that many cores.

    .venv/bin/python bench/study.py [--t-end 0.5] [--workers 2]
"""
from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import solver                                              # noqa: E402
from solver.study import Parameter, Response, Study, run_study  # noqa: E402

SAMPLE = os.path.join(os.path.dirname(__file__), "..", "sample_models", "slider_crank.mbs.json")


def make_study(t_end):
    model = solver.load_model(SAMPLE)
    return Study(model, [Parameter("bodies.crank.mass", values=(0.4, 0.5, 0.6, 0.7)),
                         Parameter("bodies.piston.mass", values=(1.0, 1.5, 2.0, 2.5))],
                 [Response("max_reaction_force", "crank_pin"), Response("peak_acceleration", "piston"),
                  Response("final_energy_error")], fixed={"settings.t_end": t_end})


def main():
    from distributed import LocalCluster
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--t-end", type=float, default=0.5, help="simulated time per variant [s]")
    parser.add_argument("--workers", type=int, default=2, help="LocalCluster worker processes")
    args = parser.parse_args()
    study = make_study(args.t_end)
    start = time.perf_counter()
    serial = run_study(study, executor="serial")
    t_serial = time.perf_counter() - start
    start = time.perf_counter()
    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        t_start = time.perf_counter() - start
        parallel = run_study(study, executor=cluster.scheduler_address)
        t_run = time.perf_counter() - start - t_start
    print(f"{len(study.variants())} variants of {args.t_end:g} s on {os.cpu_count()} cores "
          f"(load average {os.getloadavg()[0]:.2f} at the end)")
    print(f"{'executor':<34}{'wall [s]':>10}{'speed-up':>10}{'ok':>5}")
    for label, wall, res in (("serial", t_serial, serial),
                             (f"LocalCluster {args.workers} workers, start-up", t_start, None),
                             (f"LocalCluster {args.workers} workers, run", t_run, parallel),
                             (f"LocalCluster {args.workers} workers, total", t_start + t_run, parallel)):
        rest = f"{t_serial / wall:>10.2f}{res.counts()['ok']:>5}" if res else ""
        print(f"{label:<34}{wall:>10.2f}{rest}")
    same = all(a.responses == b.responses for a, b in zip(serial.variants, parallel.variants))
    print(f"responses identical: {same}")


if __name__ == "__main__":      # LocalCluster workers are spawned processes: they re-import this file
    main()
