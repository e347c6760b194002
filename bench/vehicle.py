"""Choi & Yoo (2000) analogue: the CAE-TC car (sample_models/vehicle_*.mbs.json) in its four 10 s
manoeuvres.  Two tables:

1. Every run (manoeuvre × 14/23 bodies × partitioning × formulation × generic or generated kernels,
   solver.codegen): wall time, real-time factor
   RTF = simulated s / wall s (≥ 1 is real time), integrator steps and right-hand sides, the speed
   range (km/h), the chassis' peak vertical / lateral acceleration, and for a 23-body run the RMS
   difference of its chassis vertical and lateral accelerations from the 14-body run of the same
   manoeuvre, in % of the 14-body peak (issue 9: ≤ 2 %; "-" where the peak is below 0.1 m/s²).  No profiler runs here: the times are
   the plain run times.
2. Paper Table 4: the share of the run time spent in position analysis (Newton on the dependent
   coordinates, Partition.positions), velocity analysis (Partition.velocities) and acceleration
   analysis (the rest of the right-hand side: γ, mass matrix, forces, reduced solve — mass and
   forces also shown alone), the remainder being the integrator (BDF Newton/Jacobians), outputs
   and setup.  From cProfile of a separate straight-driving run (the profiler slows Python code,
   so these runs' times are not reported).  When the system runs compiled reduced kernels
   (solver/codegen) the three phases are one call and cannot be separated.

Paper (195 MHz workstation, Fortran): QR 40.6 % faster than LU; 14-body 52 % faster than 23-body;
position 36.9 %, velocity 14.4 %, acceleration 47.6 %; 10 s of driving in < 7 s.  Target here:
10 s simulated in < 10 s wall (RTF ≥ 1).

    .venv/bin/python bench/vehicle.py            # full: 10 s, 4 manoeuvres × {14, 23} × {QR, LU}, relative,
                                                 # generated and generic kernels
    .venv/bin/python bench/vehicle.py --quick    # CI smoke: 0.3 s runs, QR, straight + bump
    options: --t-end S --manoeuvres ... --bodies 14 23 --partitioning qr lu
             --formulation relative cartesian --profile-t-end S (0: no Table 4)
             --kernels generated generic
"""
from __future__ import annotations

import argparse
import cProfile
import itertools
import os
import pstats
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import solver                                              # noqa: E402
from solver.vehicle.cae_tc import MANOEUVRES, cae_tc       # noqa: E402
from solver.vehicle.outputs import heading_accelerations   # noqa: E402

PARTITION = os.path.join("partitioning", "partition.py")
DYNAMICS = os.path.join("analysis", "dynamics.py")


def run(manoeuvre, bodies, partitioning, formulation, t_end, profile=False, codegen=False):
    """(wall time, results, cProfile stats or None) of one run (``codegen``: generated kernels)."""
    model = cae_tc(manoeuvre, link_bodies=bodies == 23, t_end=t_end)
    prof = cProfile.Profile() if profile else None
    start = time.perf_counter()
    if prof:
        prof.enable()
    res = solver.simulate(model, partitioning=partitioning, formulation=formulation, codegen=codegen)
    if prof:
        prof.disable()
    return time.perf_counter() - start, res, pstats.Stats(prof) if prof else None


def responses(res):
    """Speed (km/h) and chassis vertical / lateral accelerations (m/s²) of a run."""
    speed = np.linalg.norm(res.body_velocity("chassis")[:, :2], axis=1) * 3.6
    _, lateral, vertical = heading_accelerations(res)
    return speed, vertical, lateral


def rms_percent(a, b):
    """RMS of a − b in % of max |a|, as text; "-" when a stays below 0.1 m/s² (nothing to compare)."""
    peak = np.max(np.abs(a))
    return f"{100.0 * np.sqrt(np.mean((a - b) ** 2)) / peak:6.2f}" if peak > 0.1 else "     -"


def phase_shares(stats):
    """{phase: fraction of the profiled run} for position / velocity / acceleration analysis,
    mass matrix and forces (the latter two part of the acceleration analysis); None when the
    run used compiled reduced kernels (no Partition.positions calls)."""
    table = stats.stats

    def find(path, name):
        return [k for k in table if k[0].endswith(path) and k[2] == name]

    def cumulative(keys, caller=None):
        total = 0.0
        for k in keys:
            if caller is None:
                total += table[k][3]
            else:
                total += sum(v[3] for c, v in table[k][4].items() if c in caller)
        return total

    positions = find(PARTITION, "positions")
    if not positions:
        return None
    rhs = find(DYNAMICS, "_rhs")
    whole = max(row[3] for row in table.values())             # simulate(): the profiled run
    acc = cumulative(rhs) - cumulative(find(DYNAMICS, "_state"), caller=rhs)
    return {"pos": cumulative(positions) / whole, "vel": cumulative(find(PARTITION, "velocities")) / whole,
            "acc": acc / whole,
            "mass": cumulative([k for k in table if k[2] == "mass" and "formulations" in k[0]], caller=rhs) / whole,
            "forces": cumulative(find(DYNAMICS, "_forces"), caller=rhs) / whole}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="CI smoke: 0.3 s runs of straight + bump, QR")
    ap.add_argument("--t-end", type=float)
    ap.add_argument("--manoeuvres", nargs="+", choices=list(MANOEUVRES))
    ap.add_argument("--bodies", type=int, nargs="+", default=[14, 23], choices=[14, 23])
    ap.add_argument("--partitioning", nargs="+", choices=["lu", "qr", "svd", "hybrid"])
    ap.add_argument("--formulation", nargs="+", default=["relative"], choices=["relative", "cartesian"])
    ap.add_argument("--profile-t-end", type=float, help="simulated s of the profiled runs (0: no Table 4)")
    ap.add_argument("--kernels", nargs="+", choices=["generated", "generic"],
                    help="generated: solver.codegen's compiled kernels, built before timing (default: both; "
                         "--quick: generic, so that the smoke run compiles nothing)")
    args = ap.parse_args(argv)

    quick = args.quick
    t_end = args.t_end or (0.3 if quick else 10.0)
    manoeuvres = args.manoeuvres or (["straight", "bump"] if quick else list(MANOEUVRES))
    partitionings = args.partitioning or (["qr"] if quick else ["qr", "lu"])
    profile_t_end = args.profile_t_end if args.profile_t_end is not None else (0.2 if quick else 2.0)
    args.kernels = args.kernels or (["generic"] if quick else ["generated", "generic"])
    if "generated" in args.kernels:       # build (or load) every library first: the road profile is baked in
        for manoeuvre, formulation, bodies in itertools.product(manoeuvres, args.formulation, args.bodies):
            solver.simulate(cae_tc(manoeuvre, link_bodies=bodies == 23, t_end=0.01), formulation=formulation,
                            codegen=True)

    print(f"{'manoeuvre':12s} {'bodies':>6s} {'part.':>5s} {'formulation':>11s} {'kernels':>9s} {'t_end':>6s} {'wall s':>7s} "
          f"{'RTF':>5s} {'steps':>6s} {'rhs':>6s} {'v min':>6s} {'v max':>6s} {'|az|max':>7s} {'|ay|max':>7s} "
          f"{'daz %':>6s} {'day %':>6s}")
    reference = {}
    for manoeuvre, partitioning, formulation, kernels, bodies in itertools.product(
            manoeuvres, partitionings, args.formulation, args.kernels, sorted(args.bodies)):
        wall, res, _ = run(manoeuvre, bodies, partitioning, formulation, t_end, codegen=kernels == "generated")
        s = res.summary()
        speed, vertical, lateral = responses(res)
        key = (manoeuvre, partitioning, formulation, kernels)
        diff = "     -      -"
        if bodies == 14 and s["status"] == "ok":
            reference[key] = (res.t, vertical, lateral)
        elif key in reference and np.array_equal(reference[key][0], res.t):
            diff = f"{rms_percent(reference[key][1], vertical)} {rms_percent(reference[key][2], lateral)}"
        print(f"{manoeuvre:12s} {bodies:6d} {partitioning:>5s} {formulation:>11s} {kernels:>9s} {t_end:6.2f} {wall:7.2f} "
              f"{res.t[-1] / wall:5.2f} {s['steps']:6d} {s['rhs_evaluations']:6d} {speed.min():6.2f} "
              f"{speed.max():6.2f} {np.max(np.abs(vertical)):7.2f} {np.max(np.abs(lateral)):7.2f} {diff}"
              + ("" if s["status"] == "ok" else f"  {s['status']}: {s['message']}"), flush=True)

    if profile_t_end <= 0:
        return
    print(f"\nTable 4 analogue: shares of a profiled {profile_t_end:g} s straight run (% of its time)")
    print(f"{'bodies':>6s} {'part.':>5s} {'formulation':>11s} {'pos %':>6s} {'vel %':>6s} {'acc %':>6s} "
          f"{'mass %':>6s} {'force %':>7s} {'other %':>7s}")
    for formulation, bodies, partitioning in itertools.product(args.formulation, sorted(args.bodies), partitionings):
        _, _, stats = run("straight", bodies, partitioning, formulation, profile_t_end, profile=True)
        shares = phase_shares(stats)
        if shares is None:
            print(f"{bodies:6d} {partitioning:>5s} {formulation:>11s}  compiled kernels: phases not separable")
            continue
        other = 1.0 - shares["pos"] - shares["vel"] - shares["acc"]
        print(f"{bodies:6d} {partitioning:>5s} {formulation:>11s} {100 * shares['pos']:6.1f} {100 * shares['vel']:6.1f} "
              f"{100 * shares['acc']:6.1f} {100 * shares['mass']:6.1f} {100 * shares['forces']:7.1f} "
              f"{100 * other:7.1f}", flush=True)


if __name__ == "__main__":
    main()
