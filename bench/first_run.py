"""First runs: what a fresh process pays before and during the first run of a small model (issue #32
item 5: ``import solver`` ≤ 0.15 s, the first build of the arm, four-bar and slider–crank ≤ 0.3 s end to
end in a fresh process).

Every measurement is a fresh ``python`` subprocess (best of ``--repeat``, default 3, by total CPU time;
the load average is printed with the table: on a shared machine wall time includes waiting).  Rows:

- ``import solver``: the interpreter start and ``import solver`` alone, with the bytecode compiled (as
  an installed package has it; the measurements keep theirs in a folder of their own,
  ``PYTHONPYCACHEPREFIX``) and, ``no .pyc``, every source of the checkout compiled (run with
  ``PYTHONDONTWRITEBYTECODE``, as the project's shared machine sets it; the dependencies' bytecode used);
- per sample, ``warm``: the codegen cache already holds the model's kernels (the run after the first
  on this machine) — import, load the project, build (``solver.compile_model``: formulation, kernels
  loaded from the cache, checked), run the sample's own settings;
- per sample, ``cold``: an empty codegen cache of the measurement's own (a model never built on this
  machine: sympy derivation and the C compiler included).

Columns: seconds of wall time and CPU time (user + system of the child and of the compiler it runs) for
the whole process, interpreter start included, and the CPU time of the process in each phase.  ``build``
is import + load + compile (the target's "first build"); ``run`` is the sample's own settings; ``×RT``
the first run's real-time factor, simulated s / the whole process's CPU s (item 5's ``chain_200`` and
``loops_50`` ≥ 2×: ``--samples scale/chain_200 scale/loops_50``, the models of sample_models/scale/).

    nice python bench/first_run.py [--repeat 3] [--samples rrc_arm_case1 fourbar slider_crank] [--no-cold]
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
SAMPLES = ("rrc_arm_case1", "fourbar", "slider_crank")

CHILD = r"""
import json, sys, time
clock = time.process_time        # CPU time of this process: a busy machine's waiting left out
t0 = clock()
import solver
t1 = clock()
phases = {"import": t1 - t0}
if len(sys.argv) > 1:
    model = solver.load_model(sys.argv[1])
    t2 = clock()
    compiled = solver.compile_model(model)
    t3 = clock()
    res = solver.simulate(compiled)
    t4 = clock()
    phases.update(load=t2 - t1, compile=t3 - t2, run=t4 - t3, generated=bool(compiled.generated),
                  simulated=float(res.t[-1]))
print(json.dumps(phases))
"""


def measure(args, cache, pycache):
    """(wall, cpu, phases) of one fresh process running CHILD with ``args``, codegen cache ``cache`` and
    the bytecode in ``pycache`` (None: none written or read — every source compiled)."""
    env = dict(os.environ, MBS_CODEGEN_CACHE=cache, PYTHONPATH=ROOT)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if pycache is None:                  # the installed packages' own bytecode, none of the checkout's
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env.pop("PYTHONPYCACHEPREFIX", None)
    else:
        env["PYTHONPYCACHEPREFIX"] = pycache
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", CHILD, *args], env=env, capture_output=True, text=True, check=True,
                         cwd=ROOT)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)      # the compiler's processes included
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, json.loads(out.stdout.strip().splitlines()[-1])


def best(repeat, args, cache_for, pycache):
    """The measurement with the least CPU time of ``repeat`` (``cache_for(k)``: the k-th's cache)."""
    return min((measure(args, cache_for(k), pycache) for k in range(repeat)), key=lambda r: r[1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--samples", nargs="+", default=list(SAMPLES))
    parser.add_argument("--no-cold", action="store_true", help="skip the runs with an empty codegen cache")
    args = parser.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory(prefix="mbs-first-run-") as tmp:
        warm, pycache = os.path.join(tmp, "warm"), os.path.join(tmp, "pycache")
        rows.append(("import solver", "no .pyc", best(args.repeat, [], lambda k: warm, None)))
        for name in args.samples:
            path = os.path.join(ROOT, "sample_models", f"{name}.mbs.json")
            measure([path], warm, pycache)                          # fills the warm cache and the bytecode
        rows.append(("import solver", "", best(args.repeat, [], lambda k: warm, pycache)))
        for name in args.samples:
            path = os.path.join(ROOT, "sample_models", f"{name}.mbs.json")
            rows.append((name, "warm", best(args.repeat, [path], lambda k: warm, pycache)))
            if not args.no_cold:
                rows.append((name, "cold", best(args.repeat, [path],
                                                 lambda k: os.path.join(tmp, f"cold-{name}-{k}"), pycache)))
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"first runs, fresh process each, best of {args.repeat} by CPU time; load average {load}")
    print(f"{'model':<16}{'cache':<9}{'wall':>8}{'CPU':>8}{'import':>8}{'load':>8}{'compile':>9}{'build':>8}"
          f"{'run':>8}{'×RT':>7}  generated, simulated")
    for name, cache, (wall, cpu, p) in rows:
        cells = [p.get("import"), p.get("load"), p.get("compile")]
        build = sum(cells) if None not in cells else None
        text = "".join(f"{v:>8.3f}" if v is not None else f"{'':>8}" for v in (wall, cpu, *cells[:2]))
        text += f"{cells[2]:>9.3f}" if cells[2] is not None else f"{'':>9}"
        text += "".join(f"{v:>8.3f}" if v is not None else f"{'':>8}" for v in (build, p.get("run")))
        text += f"{p['simulated'] / cpu:>7.2f}" if "simulated" in p else f"{'':>7}"
        extra = f"  {p['generated']}, {p['simulated']:g} s" if "generated" in p else ""
        print(f"{name:<16}{cache:<9}{text}{extra}")


if __name__ == "__main__":
    main()
