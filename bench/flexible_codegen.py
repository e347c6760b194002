"""Flexible bodies on the generic and the generated path: the flexible four-bar sample (its saved
settings) and a flexible cantilever pendulum (a rigid hub on a revolute joint, an aluminium beam
clamped to it, Craig–Bampton modes; default settings otherwise).

Per model: the generic run's wall time, then in a fresh codegen cache the cold build (derivation +
C compile), the first run (build included) and a warm run (library from the cache), each with its
real-time factor; the load average is printed with them (timings on a shared machine are inflated).

    .venv/bin/python bench/flexible_codegen.py [--t-end S] [--modes K]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import solver  # noqa: E402

SAMPLE = Path(__file__).resolve().parents[1] / "sample_models" / "fourbar_singular_flexible.mbs.json"


def cantilever_pendulum(modes):
    """Hub (0.5 kg) on a revolute joint about z, a 0.8 m aluminium beam (10 × 20 mm, 6 elements)
    clamped to it by a fixed joint, released 40° from the vertical; t_end 2 s."""
    m = solver.Model(name="flexible cantilever pendulum", gravity=(0.0, -9.81, 0.0))
    m.add_body("hub", mass=0.5, inertia=(0.002, 0.002, 0.002))
    m.add_joint("pin", "revolute", "ground", "hub", axis=(0.0, 0.0, 1.0))
    tip = (0.8 * np.sin(np.radians(40.0)), -0.8 * np.cos(np.radians(40.0)), 0.0)
    m.add_flexible_beam("beam", (0.0, 0.0, 0.0), tip, section={"height": 0.01, "width": 0.02},
                        material={"density": 2700.0, "youngs": 7e10, "poisson": 0.33}, elements=6, modes=modes,
                        interface="craig_bampton")
    m.add_joint("clamp", "fixed", "hub", "beam")
    m.settings.set("t_end", 2.0)
    return m


def timed(model, t_end, codegen):
    t0 = time.perf_counter()
    compiled = solver.compile_model(model, codegen=codegen)
    res = solver.simulate(compiled, t_end=t_end)
    info = compiled.system.codegen_info if compiled.generated else {}
    build = 0.0 if not info or info["cache_hit"] else info["derive_s"] + info["compile_s"]
    return time.perf_counter() - t0, build, float(res.t[-1])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--t-end", type=float, default=None)
    ap.add_argument("--modes", type=int, default=4, help="fixed-interface modes of the cantilever")
    args = ap.parse_args(argv)
    os.environ.pop("MBS_CODEGEN", None)
    print(f"load average {os.getloadavg()[0]:.2f}")
    print("model  simulated s  generic s  cold build s  first run s (× real time)  warm run s (× real time)")
    for name, model in (("fourbar_singular_flexible", solver.load_model(str(SAMPLE))),
                        (f"cantilever pendulum ({args.modes} modes)", cantilever_pendulum(args.modes))):
        t_end = min(model.settings.t_end, args.t_end) if args.t_end else model.settings.t_end
        generic, _, _ = timed(model, t_end, "off")
        with tempfile.TemporaryDirectory() as cache:
            os.environ["MBS_CODEGEN_CACHE"] = cache
            first, build, t = timed(model, t_end, "on")
            warm, _, _ = timed(model, t_end, "on")
        print(f"{name}  {t:g}  {generic:.2f}  {build:.2f}  {first:.2f} ({t / first:.2f})  {warm:.2f} ({t / warm:.2f})")


if __name__ == "__main__":
    main()
