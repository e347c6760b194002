"""Lee, Lee & Bae (2013) Table 8 in its own shape: 1, 5 and 20 independent slider–cranks in one model, CPU
seconds per simulated second, the paper's numbers beside ours (issue #32 item 4).

Each copy is the sample ``sample_models/slider_crank.mbs.json`` (crank started at 15 rad/s, three
revolutes and a prismatic: 3 redundant equations per copy) shifted along z; 1 s simulated, 100 output
points.  Columns, each the best of ``--repeat`` runs of a compiled model (the build before, not timed):

- the paper's Table 8 (Lee, Lee & Bae (2013), Trans. KSME A 37(12): BDF, a 2.8 GHz Intel Core i7):
  conventional and proposed (parametric) joint constraints;
- ours on the sample's **saved settings** (Cartesian, QR, Adams: LSODA's method, in the compiled loop adams.c, rtol 1e-6, codegen
  "auto"),
  conventional and parametric constraints (the parametric form has no generated kernels: generic path,
  one run per case), and the same settings in the relative formulation (what the Cartesian
  reduction costs: the integrator and the tolerances are the same);
- ours on a **new model's settings** (``Settings`` defaults: formulation "auto", DOP853 in C, rtol 1e-8),
  the form a user who does not choose gets;
- steps, right-hand sides and the algebra (dense compiled reduction, or ≥ 120 independent rows: the
  sparse factorizations of solver/partitioning/sparse.py) of the saved-settings conventional run.

``--markdown`` prints a Markdown table (docs/performance.md).  ``--rhs`` instead prints, per number of
sets, the CPU ms of one compiled solve (``cg_reduced``) at levels 1, 2 and 3 — step end (q, q̇),
right-hand side (+ q̈), output row (+ λ) — at the initial state of the saved settings' QR partition
(best of 3 × 400 calls).

    .venv/bin/python bench/slider_crank.py [--sets 1 5 20] [--t-end 1] [--repeat 1] [--markdown] [--rhs]
"""
from __future__ import annotations

import argparse
import copy
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))        # bench/peers.py, when imported by tests

import solver                                              # noqa: E402
from solver.io.project import project_from_dict             # noqa: E402
from peers import new_model_settings                       # noqa: E402  (bench/peers.py)

SAMPLE = os.path.join(os.path.dirname(__file__), "..", "sample_models", "slider_crank.mbs.json")
# Lee, Lee & Bae (2013) Table 8: computation time per simulated second (s), conventional / proposed (parametric)
PAPER = {1: (0.09, 0.09), 5: (0.42, 0.46), 20: (1.70, 1.94)}


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
    messages = [e["message"] for e in res.events if e["kind"] == "partition"]
    return next((word for word in ("band", "sparse") if any(word in m for m in messages)), "dense")


def best_run(compiled, t_end, repeat):
    """(CPU s, results) of the fastest of ``repeat`` runs of ``compiled`` over ``t_end``."""
    best = None
    for _ in range(repeat):
        t0 = time.process_time()
        res = solver.simulate(compiled, t_end=t_end, output_step=t_end / 100)
        cpu = time.process_time() - t0
        if best is None or cpu < best[0]:
            best = (cpu, res)
    return best


def solve_ms(n, calls=400):
    """{level: CPU ms of one compiled solve} for n sets (module docstring) and the algebra's name."""
    import numpy as np
    from solver.partitioning.choose import build_partition
    s = solver.compile_model(slider_cranks(n), codegen="on").system
    q, qd, _ = s.initial_state()
    part = build_partition("qr", s, q, 0.0)
    y = np.concatenate([part.z_of(q), part.V.T @ qd])
    c = s.compiled_reduction(part)
    ms = {}
    for level in (1, 2, 3):
        c.solve(0.0, y, q, level)
        best = np.inf
        for _ in range(3):
            t0 = time.process_time()
            for _ in range(calls):
                c.solve(0.0, y, q, level)
            best = min(best, (time.process_time() - t0) / calls * 1e3)
        ms[level] = best
    return ms, "dense" if c.band is None else f"band{' (packed kernels)' if c._packed else ''}"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", type=int, nargs="+", default=[1, 5, 20])
    ap.add_argument("--t-end", type=float, default=1.0)
    ap.add_argument("--repeat", type=int, default=1, help="runs per case; the fastest is reported")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--rhs", action="store_true", help="only the CPU ms of one compiled solve per level")
    args = ap.parse_args(argv)
    if args.rhs:
        print("| sets | algebra | level 1 (step end) ms | level 2 (right-hand side) ms | level 3 (output row) ms | load |")
        print("|---|---|---|---|---|---|")
        for n in args.sets:
            ms, kind = solve_ms(n)
            print(f"| {n} | {kind} | {ms[1]:.4f} | {ms[2]:.4f} | {ms[3]:.4f} | {os.getloadavg()[0]:.1f} |", flush=True)
        return
    header = ("sets", "paper conventional", "paper proposed", "saved settings, conventional",
              "saved settings, parametric", "saved settings, relative formulation", "new-model settings",
              "saved: steps / rhs", "saved: algebra")
    print(f"Lee, Lee & Bae (2013) Table 8 shape: CPU s per simulated s ({args.t_end:g} s simulated, best of "
          f"{args.repeat}; parametric: one run); the paper's on a 2.8 GHz Core i7 (2013), ours on this machine\n")
    print("| " + " | ".join(header) + " |" if args.markdown else "  ".join(header))
    if args.markdown:
        print("|" + "---|" * len(header))
    for n in args.sets:
        cases = {"conventional": (slider_cranks(n), {}, args.repeat),
                 "parametric": (slider_cranks(n), {"constraints": "parametric"}, 1),
                 "relative": (slider_cranks(n), {"formulation": "relative"}, args.repeat),
                 "defaults": (new_model_settings(slider_cranks(n)), {}, args.repeat)}
        row = {}
        for key, (model, overrides, repeat) in cases.items():
            compiled = solver.compile_model(model, **overrides)
            solver.simulate(compiled, t_end=1e-3)                  # first-run costs (imports, buffers) not timed
            row[key] = best_run(compiled, args.t_end, repeat)
        (cc, c), (cp, _), (cr, _), (cd, _) = row["conventional"], row["parametric"], row["relative"], row["defaults"]
        paper = PAPER.get(n, (None, None))
        cells = (str(n), *(f"{v:.2f}" if v is not None else "" for v in paper),
                 *(f"{cpu / args.t_end:.3f}" for cpu in (cc, cp, cr, cd)),
                 f"{c.meta['steps']} / {c.meta['rhs_evaluations']}", algebra(c))
        print("| " + " | ".join(cells) + " |" if args.markdown else "  ".join(cells), flush=True)


if __name__ == "__main__":
    main()
