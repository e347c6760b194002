"""Interact mode's real-time factor: models run chunk by chunk (solver.InteractiveRun, one display
frame of 1/60 s per chunk, the compiled path by default) while a body is dragged — its target
circling the grab point (radius 0.1 m, 0.5 Hz) the way a mouse pulls it.

Prints per model and settings: chunks, simulated time, wall time, real-time factor (simulated /
wall; ≥ 1 keeps up with the display; "alone": simulate() of the same compiled model over the same
time with no pull, one output point per frame), the median and worst wall time of one chunk (a frame's budget
is 16.7 ms), the integrator's steps per chunk and the grabbed point's lag behind its target.

Models: the 14-body car (sample vehicle_cae_tc, its saved settings and with integrator "auto", the
compiled DOP853 loop) and the KUKA LBR iiwa 14 (7 DOF, tests/solver/robots.py's URDF, the import's
settings).

"fresh start": every frame starts its integrator afresh (what Interact did before a chunk continued
the Python loop's integrator; the last Jacobian still reused), for a comparison under the same load.

--accuracy: the car's chassis path continued and restarted each frame against a tight-tolerance
session (what continuing costs in accuracy).

Usage:  nice -n 10 python bench/interact.py [--seconds 5] [--only car] [--repeat 3] [--accuracy]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "tests", "solver"))
import solver  # noqa: E402

FRAME = 1.0 / 60.0


def car():
    return solver.load_model(os.path.join(ROOT, "sample_models", "vehicle_cae_tc.mbs.json"))


def iiwa(enforce_limits=True):
    from robots import iiwa_urdf
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "iiwa.urdf")
        with open(path, "w") as f:
            f.write(iiwa_urdf())
        return solver.read_urdf(path, enforce_limits=enforce_limits).model


def iiwa_free():
    return iiwa(enforce_limits=False)


def drag(model, body, seconds, fresh=False, **settings):
    """Run ``seconds`` of simulated time in frames while ``body`` is pulled at a point 0.1 m from its CM
    toward a target circling that point (``fresh``: every frame starts its integrator afresh, as
    before chunks continued it).  Returns the row of the table."""
    t0 = time.perf_counter()
    run = solver.InteractiveRun(model, **settings)
    compile_wall = time.perf_counter() - t0
    b = run.body_names.index(body)
    r, A = run.frame(b)
    grab = r + A @ np.array([0.1, 0.0, 0.0])
    run.set_pull(body, grab, grab)
    walls, cpus, lags = [], [], []
    steps0 = run.run.steps
    while run.t < seconds - 1e-9:
        phase = 2 * np.pi * 0.5 * run.t
        target = grab + 0.1 * np.array([np.cos(phase) - 1.0, np.sin(phase), 0.0])
        run.move_target(target)
        if fresh:
            run.run.kept = None
        w0, c0 = time.perf_counter(), time.process_time()
        run.step(FRAME)
        walls.append(time.perf_counter() - w0)
        cpus.append(time.process_time() - c0)
        point, _ = run.pull_force()
        lags.append(np.linalg.norm(point - target))
    walls = np.array(walls)
    w0 = time.perf_counter()
    solver.simulate(run.compiled, t_end=seconds, output_step=FRAME)
    alone = seconds / (time.perf_counter() - w0)
    return {"alone": alone, "chunks": len(walls), "sim": run.t, "wall": walls.sum(), "rtf": run.t / walls.sum(),
            "rtf_cpu": run.t / sum(cpus),
            "median_ms": 1e3 * np.median(walls), "worst_ms": 1e3 * walls.max(),
            "steps": (run.run.steps - steps0) / len(walls), "lag": max(lags), "compile": compile_wall,
            "path": "generated" if run.compiled.generated else "generic", "integrator": run.run.s.integrator,
            "formulation": run.run.s.formulation}


def accuracy(seconds=2.0):
    """The car dragged ``seconds`` at its saved settings, continued and restarted each frame, against
    the same session at rtol 1e-7 (restarted): the largest chassis position difference (m)."""
    model = car()

    def path(fresh, **settings):
        run = solver.InteractiveRun(model, **settings)
        b = run.body_names.index("chassis")
        r, A = run.frame(b)
        grab = r + A @ np.array([0.1, 0.0, 0.0])
        run.set_pull("chassis", grab, grab)
        points = []
        while run.t < seconds - 1e-9:
            phase = 2 * np.pi * 0.5 * run.t
            run.move_target(grab + 0.1 * np.array([np.cos(phase) - 1.0, np.sin(phase), 0.0]))
            if fresh:
                run.run.kept = None
            run.step(FRAME)
            points.append(run.frame(b)[0])
        return np.array(points), run.run.s.rtol

    reference, _ = path(True, rtol=1e-7, atol=1e-9)
    for label, fresh in (("continued", False), ("restarted each frame", True)):
        points, rtol = path(fresh)
        print(f"car dragged {seconds:g} s, {label:22s} rtol {rtol:g}: max |Δr chassis| vs rtol 1e-7 "
              f"{np.abs(points - reference).max():.2e} m (path extent {np.ptp(reference, axis=0).max():.2f} m)")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=5.0)
    p.add_argument("--only", help="run only the cases whose label contains this text (e.g. car, iiwa)")
    p.add_argument("--repeat", type=int, default=1, help="runs per case (the table has each)")
    p.add_argument("--accuracy", action="store_true", help="only the car's accuracy, continued vs restarted")
    args = p.parse_args()
    if args.accuracy:
        accuracy()
        return
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}; ×real: simulated / wall time, "
          "×CPU: simulated / this process's CPU time (what the load average does not change)")
    cases = [("car (14 bodies), saved settings", car, "chassis", {}),
             ("car (14 bodies), saved settings, fresh start", car, "chassis", {"fresh": True}),
             ("car (14 bodies), integrator auto", car, "chassis", {"integrator": "auto"}),
             ("KUKA iiwa (7 DOF), limits as stops", iiwa, None, {}),
             ("KUKA iiwa (7 DOF), limits as stops, BDF", iiwa, None, {"integrator": "bdf"}),
             ("KUKA iiwa (7 DOF), no limit stops", iiwa_free, None, {})]
    print(f"{'model':50s} {'path':9s} {'form.':9s} {'integ.':6s} {'chunks':>6s} {'sim s':>6s} {'wall s':>7s} "
          f"{'×real':>6s} {'×CPU':>6s} {'alone':>6s} {'med ms':>7s} {'max ms':>7s} {'steps':>6s} {'lag m':>7s} {'compile s':>9s}")
    for label, build, body, settings in cases:
        if args.only and args.only not in label:
            continue
        model = build()
        body = body or list(model.bodies)[-1]
        for _ in range(args.repeat):
            try:
                row = drag(model, body, args.seconds, **settings)
            except solver.SolverError as exc:
                print(f"{label:50s} failed: {exc}")
                continue
            print(f"{label:50s} {row['path']:9s} {row['formulation']:9s} {row['integrator']:6s} {row['chunks']:6d} "
                  f"{row['sim']:6.2f} {row['wall']:7.3f} {row['rtf']:6.2f} {row['rtf_cpu']:6.2f} {row['alone']:6.2f} {row['median_ms']:7.2f} {row['worst_ms']:7.2f} "
                  f"{row['steps']:6.1f} {row['lag']:7.4f} {row['compile']:9.2f}")


if __name__ == "__main__":
    main()
