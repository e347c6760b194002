"""Seed paper 5 analogue: the CAE-TC car (sample_models/vehicle_*.mbs.json) in its four 10 s
manoeuvres; wall time and real-time factor per manoeuvre, 14-body (massless links) vs 22-body
(links as light bodies), LU vs QR partitioning, relative vs Cartesian formulation, and the share
of position / velocity / acceleration analysis in the run (paper Table 4, from a profile of the
partition's positions / velocities / accelerations calls).  ``wall/s`` is wall seconds per
simulated second (< 1 = faster than real time).

Paper (195 MHz workstation, Fortran): QR 40.6 % faster than LU; 14-body 52 % faster than 23-body;
position 36.9 %, velocity 14.4 %, acceleration 47.6 %; 10 s of driving in < 7 s.  Target here:
10 s simulated in < 10 s wall (real time).

    .venv/bin/python bench/vehicle.py [--t-end 10] [--manoeuvres straight bump j_turn lane_change]
        [--bodies 14 22] [--partitioning lu qr] [--formulation relative cartesian] [--profile]
"""
from __future__ import annotations

import argparse
import cProfile
import itertools
import os
import pstats
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import solver                                              # noqa: E402
from solver.vehicle.cae_tc import MANOEUVRES, cae_tc       # noqa: E402

PHASES = ("positions", "velocities", "accelerations")


def run(manoeuvre, bodies, partitioning, formulation, t_end, profile):
    """(wall time, summary, phase shares or None) of one run."""
    model = cae_tc(manoeuvre, link_bodies=bodies == 22, t_end=t_end)
    kwargs = dict(partitioning=partitioning, formulation=formulation)
    prof = cProfile.Profile() if profile else None
    start = time.perf_counter()
    if prof:
        prof.enable()
    res = solver.simulate(model, **kwargs)
    if prof:
        prof.disable()
    wall = time.perf_counter() - start
    return wall, res.summary(), _shares(prof, wall) if prof else None


def _shares(prof, wall):
    """Fraction of the wall time spent in Partition.positions / velocities / accelerations."""
    stats = pstats.Stats(prof).stats
    total = {p: 0.0 for p in PHASES}
    for (path, _, name), (_, _, _, cumulative, _) in stats.items():
        if name in PHASES and path.endswith(os.path.join("partitioning", "partition.py")):
            total[name] += cumulative
    return {p: total[p] / wall for p in PHASES}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--t-end", type=float, default=10.0)
    ap.add_argument("--manoeuvres", nargs="+", default=list(MANOEUVRES), choices=list(MANOEUVRES))
    ap.add_argument("--bodies", type=int, nargs="+", default=[14, 22], choices=[14, 22])
    ap.add_argument("--partitioning", nargs="+", default=["qr", "lu"], choices=["lu", "qr", "svd", "hybrid"])
    ap.add_argument("--formulation", nargs="+", default=["relative", "cartesian"], choices=["relative", "cartesian"])
    ap.add_argument("--profile", action="store_true", help="also report the position/velocity/acceleration shares")
    args = ap.parse_args(argv)
    head = f"{'manoeuvre':12s} {'bodies':>6s} {'part.':>5s} {'formulation':>11s} {'t_end s':>8s} {'wall s':>8s} " \
           f"{'wall/s':>7s} {'steps':>6s} {'rhs':>6s} {'status':>7s}"
    if args.profile:
        head += f" {'pos %':>6s} {'vel %':>6s} {'acc %':>6s}"
    print(head)
    for manoeuvre, bodies, partitioning, formulation in itertools.product(
            args.manoeuvres, args.bodies, args.partitioning, args.formulation):
        wall, s, shares = run(manoeuvre, bodies, partitioning, formulation, args.t_end, args.profile)
        line = (f"{manoeuvre:12s} {bodies:6d} {partitioning:>5s} {formulation:>11s} {args.t_end:8.2f} {wall:8.1f} "
                f"{wall / args.t_end:7.1f} {s['steps']:6d} {s['rhs_evaluations']:6d} {s['status']:>7s}")
        if shares:
            line += " " + " ".join(f"{100 * shares[p]:6.1f}" for p in PHASES)
        print(line, flush=True)


if __name__ == "__main__":
    main()
