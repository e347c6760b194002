"""Every sample's default run: what a user gets from ``mbs run MODEL`` (or F5 in the GUI) with the
project's saved settings, generated kernels on "auto".

For each ``sample_models/*.mbs.json`` (and ``sample_models/scale/`` with ``--scale``): the first run in a
fresh codegen cache (cold: the build included), then a second run (Run again: the process reuses
its compilation, :mod:`solver.recent_compiles`), then a run after the process forgot it (a new
``mbs run``: the compile step loads the build from the codegen cache).  Columns: simulated time,
which path ran, cold build time (as the cache recorded it: wall), the CPU time of each run (this
process and the C compiler's processes: on a shared machine wall time includes waiting) and its
real-time factor (simulated s / CPU s).  The load average is printed with the table.
``--markdown`` prints the table for ``docs/performance.md``; ``--t-end S`` caps the simulated time
(for a quick look).

    .venv/bin/python bench/samples.py [--markdown] [--scale] [--t-end S] [--only NAME ...]
"""
from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import solver  # noqa: E402
from solver import recent_compiles  # noqa: E402
from solver.codegen.build import MODEL_LIBRARIES  # noqa: E402

ROOT = Path(__file__).resolve().parents[1] / "sample_models"


def build_seconds(compiled) -> float:
    """Derivation + C compile time of the model's build, as the cache recorded it (0 on the generic
    path)."""
    if not compiled.generated:
        return 0.0
    info = compiled.system.codegen_info
    return info["derive_s"] + info["compile_s"]


def cpu_time() -> float:
    """CPU s of this process and of its finished children (the C compiler of a build)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def one_sample(path, t_end):
    """Three runs of ``simulate(model)`` as ``mbs run`` and the GUI call it (compile step included):
    the first in a fresh cache, the second reusing the compilation, the third loading the build
    from the cache after the process forgot its compilations."""
    model = solver.load_model(str(path))
    t_sim = min(model.settings.t_end, t_end) if t_end else model.settings.t_end
    cache = Path(os.environ["MBS_CODEGEN_CACHE"])
    before = set(cache.glob(MODEL_LIBRARIES))
    cpu = {}
    for phase in ("cold", "warm", "reload"):
        if phase == "reload":
            recent_compiles.forget()
        t0 = cpu_time()
        res = solver.simulate(model, t_end=t_sim)
        cpu[phase] = cpu_time() - t0
    compiled = solver.compile_model(model)        # from the cache: which path ran, the cold build's times
    path_used = ("generated" if compiled.generated else "generic") + f" ({model.settings.formulation})"
    return {"name": path.name.removesuffix(".mbs.json"), "t": float(res.t[-1]), "path": path_used,
            "build": build_seconds(compiled) if set(cache.glob(MODEL_LIBRARIES)) - before else 0.0, **cpu,
            "status": res.status, "notice": compiled.notices[0] if compiled.notices else ""}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--scale", action="store_true", help="also the large models of sample_models/scale/")
    ap.add_argument("--t-end", type=float, default=None)
    ap.add_argument("--only", nargs="*", default=None)
    args = ap.parse_args(argv)
    os.environ.pop("MBS_CODEGEN", None)            # the product's default: "auto" builds
    os.environ["MBS_CODEGEN_CACHE"] = tempfile.mkdtemp(prefix="mbs-bench-cache-")
    paths = sorted(ROOT.glob("*.mbs.json")) + (sorted((ROOT / "scale").glob("*.mbs.json")) if args.scale else [])
    if args.only:
        paths = [p for p in paths if any(p.name.startswith(o) for o in args.only)]
    header = ("sample", "simulated s", "path", "cold build s", "first run CPU s", "first run × real time",
              "run again CPU s", "run again × real time", "new process CPU s", "new process × real time")
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"every sample's own settings, simulate(model); CPU s of the process and its C compiler; "
          f"load average {load}\n")
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    if not args.markdown:
        print("  ".join(header))
    for path in paths:
        r = one_sample(path, args.t_end)
        cells = (r["name"], f"{r['t']:g}", r["path"], f"{r['build']:.2f}", f"{r['cold']:.2f}",
                 f"{r['t'] / r['cold']:.2f}", f"{r['warm']:.2f}", f"{r['t'] / r['warm']:.2f}",
                 f"{r['reload']:.2f}", f"{r['t'] / r['reload']:.2f}")
        if args.markdown:
            lines.append("| " + " | ".join(cells) + " |")
        else:
            print("  ".join(cells) + ("" if r["status"] == "ok" else f"  [{r['status']}]"), flush=True)
            if not r["path"].startswith("generated"):
                print("    " + r["notice"])
    if args.markdown:
        print("\n".join(lines))


if __name__ == "__main__":
    main()
