"""Lee, Lee & Bae (2013), Table 8 analogue: 1, 5 and 20 independent slider–cranks in one model, 1 s
simulated, conventional vs parametric joint constraints; wall time and real-time factor.

Each copy is the sample ``sample_models/slider_crank.mbs.json`` (crank started at 15 rad/s, three
revolutes and a prismatic: 3 redundant equations per copy) shifted along z.  Solver settings are
the sample's (Adams/LSODA, QR partitioning, rtol 1e-6) unless given on the command line.

    .venv/bin/python bench/slider_crank.py [--sets 1 5 20] [--t-end 1] [--rtol 1e-6] [--repeat 1]
"""
from __future__ import annotations

import argparse
import copy
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import solver                                              # noqa: E402
from solver.io.project import project_from_dict             # noqa: E402

SAMPLE = os.path.join(os.path.dirname(__file__), "..", "sample_models", "slider_crank.mbs.json")
PAPER = {1: (0.09, 0.09), 5: (0.42, 0.46), 20: (1.70, 1.94)}   # s per simulated s, 2.8 GHz i7 (Table 8)


def slider_cranks(n, dz=0.5):
    """n copies of the sample slider–crank, copy k shifted by k·dz along z (names suffixed _k)."""
    data = json.load(open(SAMPLE))
    base = data["model"]
    model = copy.deepcopy(base)
    model["name"] = f"{n} slider-cranks"
    for key in ("bodies", "joints", "markers", "forces", "drivers"):
        model[key] = []
    for k in range(n):
        names = {b["name"]: f"{b['name']}_{k}" for b in base["bodies"]}
        names["ground"] = "ground"
        for b in base["bodies"]:
            b = copy.deepcopy(b)
            b["name"] = names[b["name"]]
            b["position"][2] += k * dz
            model["bodies"].append(b)
        for j in base["joints"]:
            j = copy.deepcopy(j)
            j["name"] = f"{j['name']}_{k}"
            j["body_i"], j["body_j"] = names[j["body_i"]], names[j["body_j"]]
            j["origin"][2] += k * dz
            j["origin2"][2] += k * dz
            model["joints"].append(j)
    data = dict(data, model=model)
    return project_from_dict(data, "bench")


def algebra(res):
    """'sparse' when the run factorized Φ_q sparsely (its partition events say so), else 'dense'."""
    return "sparse" if any("sparse" in e["message"] for e in res.events if e["kind"] == "partition") else "dense"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", type=int, nargs="+", default=[1, 5, 20])
    ap.add_argument("--t-end", type=float, default=1.0)
    ap.add_argument("--rtol", type=float, default=None)
    ap.add_argument("--repeat", type=int, default=1, help="runs per case; the fastest is reported")
    args = ap.parse_args(argv)
    print(f"slider–crank sets, {args.t_end:g} s simulated, wall time in s (best of {args.repeat}); "
          "RTF = simulated / wall time; codegen = conventional with compiled kernels and the compiled "
          "reduced right-hand side (solver.codegen; compile time excluded: the library is built once first), "
          "or, from 120 independent constraint rows (20 sets), the sparse factorizations of "
          "solver/partitioning/sparse.py on the compiled kernels (column 'algebra')")
    head = (f"{'sets':>4} {'nq conv/par':>12} {'conventional':>13} {'RTF':>6} {'parametric':>11} {'RTF':>6} "
            f"{'codegen':>8} {'RTF':>6} {'algebra':>8} {'par/conv':>8} {'steps c/p':>11} {'rhs c/p':>11} {'paper c/p (s)':>14}")
    print(head)
    print("-" * len(head))
    for n in args.sets:
        model = slider_cranks(n)
        solver.simulate(model, t_end=1e-3, codegen=True)          # build (or load) the library
        row = {}
        for key, form, codegen in (("c", "conventional", False), ("p", "parametric", False),
                                   ("g", "conventional", True)):
            best = None
            for _ in range(args.repeat):
                res = solver.simulate(model, t_end=args.t_end, output_step=args.t_end / 100, constraints=form,
                                      rtol=args.rtol, codegen=codegen)
                if best is None or res.meta["wall_time"] < best.meta["wall_time"]:
                    best = res
            row[key] = best
        c, p, g = row["c"], row["p"], row["g"]
        wc, wp, wg = c.meta["wall_time"], p.meta["wall_time"], g.meta["wall_time"]
        paper = PAPER.get(n)
        print(f"{n:>4} {c.coordinates.shape[1]:>5}/{p.coordinates.shape[1]:<6} {wc:>13.3f} {args.t_end / wc:>6.2f} "
              f"{wp:>11.3f} {args.t_end / wp:>6.2f} {wg:>8.3f} {args.t_end / wg:>6.2f} {algebra(g):>8} {wp / wc:>8.2f} "
              f"{c.meta['steps']:>5}/{p.meta['steps']:<5} {c.meta['rhs_evaluations']:>5}/{p.meta['rhs_evaluations']:<5} "
              f"{'' if paper is None else f'{paper[0]:.2f}/{paper[1]:.2f}':>14}")
    print("machine: 2 cores shared with other processes; BLAS single-threaded inside simulate()")


if __name__ == "__main__":
    main()
