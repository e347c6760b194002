"""The order of the compiled explicit method at loose tolerances: DOP853 ("rk", what "auto" steps in C)
beside DOPRI5 ("rk45") on the same models and tolerances (issue #32 item 1: at loose accuracy a
lower-order pair takes fewer right-hand sides per step — 6 against DOP853's 12, and no extra stages
for the dense output — but more steps).

Models: the free-falling 7-DOF arm of bench/peers.py (5 s, 501 output points), the four-bar row
N = 10 (tools/scale_models.fourbar_row, 5 s; error against its exact motion, tools/fourbar_row.py),
the 200-link chain (sample_models/scale/chain_200, 2 s) and the 14-body car
(sample_models/vehicle_cae_tc, 2 s).  Each runs warm (``simulate`` of its CompiledModel, generated
kernels, the saved settings but integrator and tolerances) at rtol 1e-3 … 1e-8, atol = rtol/100.
Error: the largest distance over bodies and output points of a body's CM from the reference (the
row's exact motion, else DOP853 at rtol 1e-11), m.  CPU: best of ``--repeat`` runs, ms.  The load
average is printed with the table (a shared machine: read CPU, not wall).

    nice python bench/method_order.py [--repeat 3] [--only arm fourbar_row_10 chain_200 car]
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
from tools.fourbar_row import position_error  # noqa: E402
from tools.scale_models import fourbar_row  # noqa: E402

RTOLS = (1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8)
METHODS = (("rk", "DOP853"), ("rk45", "DOPRI5"))
REFERENCE = dict(integrator="rk", rtol=1e-11, atol=1e-13)


def cases(only):
    """(name, compiled model, simulate overrides, error function of Results) per model."""
    import peers
    arm = peers.new_model_settings(peers.free_falling_arm()[0])
    rows = [("arm", arm, {}), ("fourbar_row_10", fourbar_row(10), dict(t_end=5.0)),
            ("chain_200", solver.load_model(ROOT / "sample_models" / "scale" / "chain_200.mbs.json"), {}),
            ("car", solver.load_model(ROOT / "sample_models" / "vehicle_cae_tc.mbs.json"), dict(t_end=2.0))]
    out = []
    for name, model, extra in rows:
        if only and name not in only:
            continue
        compiled = solver.compile_model(model)
        if name.startswith("fourbar_row"):
            error = (lambda res: position_error(res, 10))
        else:
            ref = solver.simulate(compiled, **extra, **REFERENCE)
            error = (lambda res, ref=ref: float(max(np.max(np.linalg.norm(res.body_position(b) - ref.body_position(b),
                                                                            axis=1)) for b in ref.body_names)))
        out.append((name, compiled, extra, error))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", nargs="*")
    args = ap.parse_args(argv)
    print("| model | rtol | method | error m | steps | rhs | CPU ms |")
    print("|---|---|---|---|---|---|---|")
    for name, compiled, extra, error in cases(args.only):
        for rtol in RTOLS:
            for integrator, label in METHODS:
                best, res = np.inf, None
                for _ in range(args.repeat):
                    t0 = time.process_time()
                    try:
                        res = solver.simulate(compiled, **extra, integrator=integrator, rtol=rtol, atol=rtol / 100)
                    except solver.SolverError as exc:
                        res = exc
                        break
                    best = min(best, time.process_time() - t0)
                if isinstance(res, Exception):
                    print(f"| {name} | {rtol:g} | {label} | failed: {res.kind} |  |  |  |", flush=True)
                    continue
                s = res.summary()
                print(f"| {name} | {rtol:g} | {label} | {error(res):.2e} | {s['steps']} | {s['rhs_evaluations']} | "
                      f"{1e3 * best:.1f} |", flush=True)
    print(f"\nLoad average {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores.")


if __name__ == "__main__":
    main()
