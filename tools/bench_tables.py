"""Regenerate docs/performance.md's tables from the bench scripts (``make bench``; issue #32 item 7).

Each entry of :data:`BENCHES` is a bench script with its arguments and the name of the block of
docs/performance.md its output replaces (markers ``<!-- bench-NAME:start -->`` …
``<!-- bench-NAME:end -->``, tools/doc_blocks.py); the prose around the blocks is hand-written and
kept.  A block holds a line saying what produced it — the command, the date (UTC), the commit, the
load average (os.getloadavg: 1, 5 and 15 min) before and after the script ran — and the script's
output: Markdown tables as printed, other output in a text block.  Peers (MuJoCo; Pinocchio and
Exudyn are not in any bench yet) run in the same process as ours inside the scripts that compare
with them (bench/peers.py), so their columns come from the same run.

The default set is the one ``make bench`` runs (≈ 25 min at load 12–18 on 27 Nov, much of it waiting;
not timed on a quiet machine); ``--heavy`` (``make bench BENCH_HEAVY=1``) adds the long ones (≈ 5 min).  Every script runs under ``nice`` with a time
limit; one that fails or times out leaves its block as it was and the command exits 1 after the rest.

    python tools/bench_tables.py [--heavy] [--only NAME ...] [--print] [--doc docs/performance.md]
"""
from __future__ import annotations

import argparse
import datetime
import os
import subprocess
import sys
from dataclasses import dataclass

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from tools.doc_blocks import block_names, replace_blocks  # noqa: E402

DOC = os.path.join(ROOT, "docs", "performance.md")


@dataclass(frozen=True)
class Bench:
    name: str                   # the block bench-NAME of the document
    args: tuple[str, ...]       # bench/SCRIPT.py and its arguments
    markdown: bool = True       # its output is Markdown (else shown as a text block)
    heavy: bool = False         # only with --heavy
    timeout: float = 900.0      # s of wall time


BENCHES = (
    Bench("samples", ("bench/samples.py", "--markdown", "--scale")),
    Bench("first-run", ("bench/first_run.py", "--samples", "rrc_arm_case1", "fourbar", "slider_crank",
                        "scale/chain_200", "scale/loops_50"), markdown=False),
    Bench("peers", ("bench/peers.py", "--repeat", "3")),
    Bench("slider-crank", ("bench/slider_crank.py", "--markdown", "--repeat", "3")),
    Bench("stiffness-cars", ("bench/stiffness.py", "--first", "--samples", "vehicle_cae_tc", "vehicle_23body")),
    Bench("stiffness-others", ("bench/stiffness.py", "--samples", "pendulum", "rrc_arm_case1", "slider_crank",
                               "fourbar_spring"), heavy=True),
    Bench("stiffness-contact", ("bench/stiffness.py", "--reference", "rk", "--compiled-only", "--repeat", "5",
                                "--samples", "box_on_ramp", "geneva", "slider_end_stop", "cam_follower",
                                "kuka_on_limits", "spheres_10"), heavy=True),
    Bench("default-integrator-row", ("bench/work_precision.py", "--t-end", "20", "--n", "10", "40",
                                     "--formulations", "relative", "--integrators", "auto", "rk45",
                                     "--partitionings", "qr", "--rtol", "1e-6", "1e-8", "1e-10"),
          markdown=False, heavy=True, timeout=1800.0),
)


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


CODE = ("solver", "bench", "tools")     # what a bench runs: changes elsewhere (the document itself) do not count


def commit() -> str:
    """The checkout's commit, "with uncommitted changes" when the code a bench runs differs from it."""
    out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", *CODE], cwd=ROOT,
                           capture_output=True, text=True).stdout.strip()
    return out.stdout.strip() + (" with uncommitted changes" if dirty else "") if out.returncode == 0 else "?"


def block_text(bench: Bench, output: str, when: str, revision: str, load_before: str, load_after: str) -> str:
    """The body of a block: what produced it, then the script's output."""
    head = (f"`python {' '.join(bench.args)}` — {when}, commit {revision}; load average before "
            f"{load_before}, after {load_after} (1, 5, 15 min; 2 cores)")
    body = output.strip("\n")
    return f"{head}\n\n{body}" if bench.markdown else f"{head}\n\n```text\n{body}\n```"


def run(bench: Bench) -> str:
    """The block text of one run of ``bench`` (a CalledProcessError or TimeoutExpired if it fails)."""
    before = load()
    out = subprocess.run(["nice", "-n", "10", sys.executable, *bench.args], cwd=ROOT, capture_output=True,
                         text=True, timeout=bench.timeout, check=True)
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%d %b %Y %H:%M UTC")
    return block_text(bench, out.stdout, when, commit(), before, load())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--heavy", action="store_true", help="also the long benches")
    ap.add_argument("--only", nargs="+", choices=[b.name for b in BENCHES], help="these benches only")
    ap.add_argument("--print", action="store_true", help="print the blocks instead of writing the document")
    ap.add_argument("--doc", default=DOC)
    args = ap.parse_args(argv)
    chosen = [b for b in BENCHES if (b.name in args.only if args.only else args.heavy or not b.heavy)]
    with open(args.doc, encoding="utf-8") as fh:
        marked = set(block_names(fh.read()))
    failed = 0
    for bench in chosen:
        name = f"bench-{bench.name}"
        print(f"== {name}: {' '.join(bench.args)}", flush=True)
        try:
            text = run(bench)
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
            print(f"   failed ({type(exc).__name__}); its block is left as it was\n{exc.stderr or ''}", flush=True)
            failed = 1
            continue
        if args.print or name not in marked:
            print(text if args.print else f"   (no {name} block in {args.doc})\n{text}", flush=True)
            continue
        with open(args.doc, encoding="utf-8") as fh:       # written after each bench: a late failure keeps the rest
            doc = fh.read()
        with open(args.doc, "w", encoding="utf-8") as fh:
            fh.write(replace_blocks(doc, {name: text}))
        print(f"   written ({load()})", flush=True)
    return failed


if __name__ == "__main__":
    sys.exit(main())
