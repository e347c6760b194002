"""Stiffness-aware "auto" (issue #32 item 3): the sample models on the default integrator with and
without the switch to BDF (solver.analysis.step_rules.STIFF_*, dopri.c dp_stiffness).

Each model runs on its own saved settings except the integrator, at the model's rtol and at 1e-6:

- ``auto, no switch``: "auto" with the stiffness test off (segments.STIFF_STEPS = 0: DOP853 in C all
  the way, the behaviour before the switch);
- ``auto``: "auto" as shipped (the event tells whether it switched and at which t; after the switch
  BDF steps in the compiled loop, solver/codegen/bdf.c);
- ``bdf``: BDF from the start (bdf.c in the compiled loop);
- ``bdf, Python loop``: scipy's BDF in the Python loop on the same compiled right-hand side (what
  "bdf", and "auto" after its switch, ran before bdf.c).

(``--compiled-only``: without the last.)

Columns: steps, right-hand sides, warm CPU s (best of ``--repeat`` runs of a compiled model, 2 by
default), the warm real-time factor (simulated s / warm CPU s), the first run in a fresh process
(import, load, build from the codegen cache, run: the child's CPU s, the checkout's bytecode
compiled, and real-time factor; ``--first`` only), and the largest body-position error (m) against
a reference at rtol 1e-10 (the model's atol): Radau, or with ``--reference rk`` DOP853 (the contact
models: an implicit reference's long steps are bounded only by the contact step cap).  The sample
``spheres_10`` is bench/contact.py's pile of 10 spheres over 0.3 s (output every 10 ms).  The load
average is printed.

    nice python bench/stiffness.py [--samples vehicle_cae_tc vehicle_23body pendulum ...] [--first]
    nice python bench/stiffness.py --reference rk --compiled-only --repeat 5 --samples geneva spheres_10 ...
"""
from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import solver                                      # noqa: E402
from solver.analysis import segments               # noqa: E402
from solver.codegen import segment                 # noqa: E402

ROOT = os.path.join(os.path.dirname(__file__), "..", "sample_models")
SAMPLES = ["vehicle_cae_tc", "vehicle_23body", "pendulum", "rrc_arm_case1", "slider_crank", "fourbar_spring",
           "geneva", "box_on_ramp", "slider_end_stop"]
FIRST = """import sys, time; t0 = time.perf_counter(); sys.path.insert(0, {root!r}); import solver
m = solver.load_model({path!r}); solver.simulate(m, integrator="auto", rtol={rtol!r})
print(time.perf_counter() - t0)"""


def positions(res):
    return np.stack([res.body_position(b) for b in res.body_names], axis=1)


def sample(name):
    """(model, its path or None): a saved sample, or bench/contact.py's spheres as ``spheres_N``."""
    if name.startswith("spheres_"):
        import contact                             # bench/contact.py
        model = contact.model(int(name.split("_")[1]))
        model.settings.set("t_end", 0.3)
        model.settings.set("output_step", 0.01)
        return model, None
    path = os.path.join(ROOT, f"{name}.mbs.json")
    return solver.load_model(path), path


def measure(model, rtol, integrator, switch=True, python_loop=False, repeat=2):
    """(results, best warm CPU s of ``repeat`` runs); ``python_loop``: the integrator not in the compiled loop."""
    saved, compiled_loop = segments.STIFF_STEPS, segment.COMPILED
    segments.STIFF_STEPS = saved if switch else 0
    if python_loop:
        segment.COMPILED = {k: v for k, v in compiled_loop.items() if k != integrator}
    try:
        compiled = solver.compile_model(model, integrator=integrator, rtol=rtol)
        best = np.inf
        for _ in range(repeat):
            t0 = time.process_time()
            res = solver.simulate(compiled)
            best = min(best, time.process_time() - t0)
    finally:
        segments.STIFF_STEPS, segment.COMPILED = saved, compiled_loop
    return res, best


PYCACHE = tempfile.mkdtemp(prefix="mbs-stiffness-pycache-")   # the checkout's bytecode, as installed code has it


def first_run(path, rtol):
    """CPU s of a fresh process (user + system: a shared machine's waiting left out): import, load,
    build (cache), run on "auto"; with the checkout's bytecode compiled (a first process writes it to a
    folder of its own, as bench/first_run.py does: PYTHONDONTWRITEBYTECODE would compile every source)."""
    code = FIRST.format(root=os.path.join(os.path.dirname(__file__), ".."), path=path, rtol=rtol)
    env = dict(os.environ, PYTHONPYCACHEPREFIX=PYCACHE)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", nargs="+", default=SAMPLES)
    ap.add_argument("--first", action="store_true", help="also the first run of 'auto' in a fresh process")
    ap.add_argument("--reference", choices=("radau", "rk"), default="radau",
                    help="the reference integrator (at rtol 1e-10)")
    ap.add_argument("--compiled-only", action="store_true", help="no row of scipy's BDF in the Python loop")
    ap.add_argument("--repeat", type=int, default=2, help="warm runs, the best one reported")
    args = ap.parse_args(argv)
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}\n")
    print("| model | rtol | integrator | steps | rhs | warm CPU s | RTF warm | first run CPU s | RTF first | "
          "max position error (m) | switch |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name in args.samples:
        model, path = sample(name)
        t_end = model.settings.t_end
        reference = positions(solver.simulate(model, integrator=args.reference, rtol=1e-10))
        variants = (("auto, no switch", "auto", False, False), ("auto", "auto", True, False),
                    ("bdf", "bdf", True, False), ("bdf, Python loop", "bdf", True, True))
        for rtol in sorted({model.settings.rtol, 1e-6}, reverse=True):
            for label, integrator, switch, python_loop in variants[:3] if args.compiled_only else variants:
                res, cpu = measure(model, rtol, integrator, switch, python_loop, args.repeat)
                error = np.abs(positions(res) - reference).max()
                event = next((f"t = {e['time']:.3g} s" for e in res.events if e["message"].startswith("switched")),
                             "-")
                first = first_run(path, rtol) if args.first and path and label == "auto" else None
                first_cols = f"{first:.2f} | {t_end / first:.1f}" if first else "- | -"
                print(f"| {name} | {rtol:g} | {label} | {res.meta['steps']} | {res.meta['rhs_evaluations']} | "
                      f"{cpu:.3f} | {t_end / cpu:.1f} | {first_cols} | {error:.2e} | {event} |", flush=True)
    print(f"\nload average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
