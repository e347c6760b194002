"""Every MJCF file of the installed corpora (dm_control, gymnasium: tools/mjcf_corpus.py) imported
and run for 0.2 s with the defaults (``solver.simulate(model, t_end=0.2, output_step=0.01)``:
generated kernels, compiled step loop), each in a child process with a CPU-time cap.

    nice python bench/mjcf_runs.py [--cpu 120] [--only SUBSTRING ...] [--markdown]

One row per file: the outcome (``ok``; ``no bodies`` for fragments without a moving body;
``MuJoCo refuses``; ``refused`` with our message; ``FAIL`` with the solver's; ``LARGE`` when it did
not finish within the cap), the moving bodies and joint coordinates, and the CPU seconds of the
child in each phase: import (``read_mjcf``, no geoms), build (``solver.compile_model``: formulation,
kernels generated and compiled — the compiler's CPU time included — or loaded from the codegen
cache), run (``simulate`` of the compiled model).  Kernels are built in a codegen cache of the
bench's own (``--cache``, default a fresh temporary folder: every build is a cold one).
``--markdown`` prints the summary table of docs/import.md.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, ROOT)

CHILD = r"""
import json, os, resource, sys, time, warnings
cpu = lambda: sum(resource.getrusage(w).ru_utime + resource.getrusage(w).ru_stime
                  for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
limit = int(sys.argv[2])
resource.setrlimit(resource.RLIMIT_CPU, (limit, limit + 5))
warnings.simplefilter("ignore")
import mujoco, solver
from solver.io.mjcf import read_mjcf
out = {}
try:
    mujoco.MjSpec.from_file(sys.argv[1]).compile()
except Exception as exc:
    print(json.dumps({"outcome": "MuJoCo refuses", "why": str(exc).strip().splitlines()[0][:120]})); sys.exit()
t0 = cpu()
try:
    r = read_mjcf(sys.argv[1], visuals=False)
except solver.ModelError as exc:
    print(json.dumps({"outcome": "refused", "why": str(exc).splitlines()[0][:160]})); sys.exit()
out.update(bodies=len(r.model.bodies), notes=len(r.notes), import_s=cpu() - t0)
if not r.model.bodies:
    out.update(outcome="no bodies"); print(json.dumps(out)); sys.exit()
print(json.dumps(dict(out, outcome="LARGE")), flush=True)       # what is known if the cap ends it
t1 = cpu()
try:
    compiled = solver.compile_model(r.model)
    out.update(build_s=cpu() - t1, nq=int(compiled.system.nq), generated=bool(compiled.generated))
    print(json.dumps(dict(out, outcome="LARGE")), flush=True)
    t2 = cpu()
    res = solver.simulate(compiled, t_end=0.2, output_step=0.01)
    out.update(run_s=cpu() - t2, outcome="ok" if res.status == "ok" else "FAIL", why=str(res.status),
               violation=float(max(res.constraint_violation)) if len(res.t) else None)
except (solver.SolverError, solver.ModelError) as exc:
    out.update(outcome="FAIL", why=str(exc).splitlines()[0][:160])
print(json.dumps(out))
"""


def run_file(path, cpu, cache):
    """The child's last JSON line for ``path`` (its outcome and phase times)."""
    env = dict(os.environ, MBS_CODEGEN_CACHE=cache, PYTHONPATH=ROOT)
    try:
        proc = subprocess.run([sys.executable, "-c", CHILD, path, str(cpu)], capture_output=True, text=True,
                              timeout=4 * cpu + 60, env=env, cwd=ROOT)
        stdout = proc.stdout
    except subprocess.TimeoutExpired as exc:
        stdout = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
    lines = [line for line in stdout.splitlines() if line.startswith("{")]
    if not lines:
        return {"outcome": "FAIL", "why": "no output (the child crashed)"}
    return json.loads(lines[-1])


def main(argv=None):
    from tools import mjcf_corpus
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cpu", type=int, default=120, help="CPU seconds per file (default 120)")
    ap.add_argument("--only", nargs="*", default=(), help="files whose path contains one of these")
    ap.add_argument("--cache", default=None, help="codegen cache folder (default: a fresh temporary one)")
    ap.add_argument("--markdown", action="store_true", help="print the summary table of docs/import.md")
    args = ap.parse_args(argv)
    cache = args.cache or tempfile.mkdtemp(prefix="mbs-mjcf-runs-")
    rows = []
    print(f"{'corpus':10} {'file':55} {'outcome':14} {'bodies':>6} {'nq':>4} {'import':>7} {'build':>7} "
          f"{'run':>7}  note", flush=True)
    for corpus, root in mjcf_corpus.corpora().items():
        for path in mjcf_corpus.files(corpus):
            rel = os.path.relpath(path, root)
            if args.only and not any(s in rel for s in args.only):
                continue
            r = run_file(path, args.cpu, cache)
            rows.append((corpus, rel, r))
            secs = " ".join(f"{r[k]:7.1f}" if r.get(k) is not None else f"{'—':>7}" for k in ("import_s", "build_s",
                                                                                                "run_s"))
            note = r.get("why", "") if r["outcome"] != "ok" else ("" if r.get("generated") else "generic path")
            print(f"{corpus:10} {rel[-55:]:55} {r['outcome']:14} {r.get('bodies', ''):>6} {r.get('nq', ''):>4} "
                  f"{secs}  {note}", flush=True)
    if args.markdown:
        print(summary(rows))
    return 0


def summary(rows) -> str:
    """The markdown table of outcomes per corpus."""
    outcomes = ["ok", "FAIL", "LARGE", "refused", "no bodies", "MuJoCo refuses"]
    lines = ["| files | " + " | ".join(outcomes) + " |", "|---" * (len(outcomes) + 1) + "|"]
    for corpus in sorted({c for c, _, _ in rows}):
        counts = [sum(1 for c, _, r in rows if c == corpus and r["outcome"] == o) for o in outcomes]
        lines.append(f"| {corpus} | " + " | ".join(str(n) for n in counts) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
