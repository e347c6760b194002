"""The compiled reduction of many-loop models: band algebra (solver/codegen/banded.c) against dense
(reduced.c) on the four-bar row and ``loops_50``.

For each N of the four-bar row (``tools/scale_models.fourbar_row``, the IFToMM benchmark: 2N+1 unit
links, 20 singular passes in 20 s) with generated kernels on the default settings (relative, QR,
DOP853 stepped in C, rtol 1e-8), both algebras (the dense one forced by ``banded.BAND_MIN_ROWS``):

* ``rhs ms``     one level-2 compiled solve at the initial state (CPU, mean of many),
* ``CPU s``      simulate() for ``--t-end`` s with 0.01 s output points, best of ``--rounds`` (CPU time
                 of the process: the machine is shared), ``loop s`` the part in the compiled step loop
                 (CompiledSegments.advance), ``× real time`` simulated / CPU seconds,
* ``error m``    max over bodies and output points of |r_CM − exact| (tools/fourbar_row.py),

and on stderr the size of each N's generated C and its build time (wall, and CPU with the compilers';
"cached" when the library was in the cache), then ``loops_50`` (sample_models/scale) on its saved settings (LSODA in Python, 0.1 s) and over 1 s,
warm (the compilation reused).  The load average is printed with each line.

    nice .venv/bin/python bench/banded.py [--n 10 40 100] [--t-end 20] [--rounds 2] [--no-loops]
        [--algebras dense band] [--kernels]

``--kernels``: instead, per N the CPU ms of one call of relative.c's packed kernels and of the compiled
solve at levels 0, 1, 2 at the initial state (band algebra where the partition takes it).

``--start``: instead, per N the CPU s of a run's start in Python at the initial state (best of
``--rounds``): the independent rows (``independent_rows``), the QR partition (``build_partition``),
the consistent velocities, the null spaces of the first output row's uniqueness probes
(``null_spaces``), each on one BLAS thread as in a run, and the first run of 0.01 s on the
compilation (its workspace, initial state, partition, probes and one output step).
"""
from __future__ import annotations

import argparse
import ctypes
import os
import resource
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import solver                                                   # noqa: E402
import solver.codegen.segment as segment                        # noqa: E402
from solver.codegen import banded                               # noqa: E402
from solver.partitioning.choose import build_partition          # noqa: E402
from tools.fourbar_row import position_error                    # noqa: E402
from tools.scale_models import fourbar_row                      # noqa: E402

_LOOP = [0.0]


def _timed_advance(advance):
    def timed(self):
        t0 = time.process_time()
        try:
            return advance(self)
        finally:
            _LOOP[0] += time.process_time() - t0
    return timed


def _algebra(which):
    banded.BAND_MIN_ROWS = 16 if which == "band" else 10**9


def rhs_ms(compiled):
    """CPU ms of one level-2 compiled solve at the initial state (and the band problem used)."""
    s = compiled.system
    q, qd, _ = s.initial_state()
    part = build_partition("qr", s, q, 0.0)
    y = np.concatenate([part.z_of(q), part.V.T @ qd])
    c = s.compiled_reduction(part)
    c.solve(0.0, y, q, 2)
    reps = max(50, 20000 // max(1, s.nq))
    t0 = time.process_time()
    for _ in range(reps):
        c.solve(0.0, y, q, 2)
    return (time.process_time() - t0) / reps * 1e3, len(part.rows), c.band


def kernels(n):
    """CPU ms per call (best of 3) of the packed relative kernels at the initial state and of the
    compiled solve at levels 0, 1, 2 (positions; + velocities; + accelerations), band algebra."""
    compiled = solver.compile_model(fourbar_row(n), codegen="on")
    s = compiled.system
    k = s.kernels
    q, qd, _ = s.initial_state()
    k["q"][:], k["qd"][:] = q, qd
    sizes = {"phi": s.m, "jac": len(s.kernel_jacobian_pattern()[0]), "ang": len(k["ang"]), "gamma": s.m,
             "M": len(s.kernel_mass_pattern()[1]), "Q": s.nq}
    out = {name: np.zeros(max(1, size)) for name, size in sizes.items()}
    ptr = {name: ctypes.c_void_p(a.ctypes.data) for name, a in [*out.items(), *((x, k[x]) for x in "q qd par f u".split())]}
    inputs = [ptr[x] for x in ("q", "qd", "par", "f")]
    part = build_partition("qr", s, q, 0.0)
    y = np.concatenate([part.z_of(q), part.V.T @ qd])
    red = s.compiled_reduction(part)
    calls = {"cg_position_packed": lambda: k.lib.cg_position_packed(*inputs, ptr["u"], ptr["phi"], ptr["jac"], ptr["ang"]),
             "cg_dynamics_packed": lambda: k.lib.cg_dynamics_packed(*inputs, ptr["f"], ptr["u"], ptr["gamma"], ptr["M"],
                                                                    ptr["Q"]),
             **{f"solve level {level}": (lambda level=level: red.solve(0.0, y, q, level)) for level in range(3)}}
    reps = max(20, 20000 // s.nq)
    for name, fn in calls.items():
        best = np.inf
        for _ in range(3):
            t0 = time.process_time()
            for _ in range(reps):
                fn()
            best = min(best, (time.process_time() - t0) / reps * 1e3)
        print(f"| {n} | {name} | {best:.3f} | {os.getloadavg()[0]:.1f} |", flush=True)


def start(n, rounds):
    """CPU s of the start's pieces at N (``--start``)."""
    from solver.analysis.assembly import consistent_velocities
    from solver.analysis.threads import single_threaded_blas
    from solver.partitioning.partition import independent_rows
    from solver.partitioning.self_stress import null_spaces
    s = solver.compile_model(fourbar_row(n), codegen="on").system
    q, qd, _ = s.initial_state()
    jac = s.constraints(q, 0.0).jac
    pieces = {"independent_rows": lambda: independent_rows(jac), "build_partition": lambda: build_partition("qr", s, q, 0.0),
              "consistent velocities": lambda: consistent_velocities(s, q, qd + 0.01, 0.0),
              "null_spaces": lambda: null_spaces(jac),
              "first run 0.01 s": lambda: solver.simulate(solver.compile_model(fourbar_row(n), codegen="on"),
                                                          t_end=0.01, output_step=0.01)}
    cells = []
    for name, fn in pieces.items():
        best = np.inf
        for _ in range(1 if name.startswith("first") else rounds):     # (a second run would reuse the workspace)
            with single_threaded_blas():          # as a run: CPU of one thread
                t0 = time.process_time()
                fn()
                best = min(best, time.process_time() - t0)
        cells.append(f"{best:.3f}")
    print(f"| {n} | {s.m} | {s.nq} | {' | '.join(cells)} | {os.getloadavg()[0]:.1f} |", flush=True)


def row(n, t_end, rounds, algebras):
    t0, cpu0 = time.perf_counter(), _cpu_with_children()
    compiled = solver.compile_model(fourbar_row(n), codegen="on")
    info = compiled.system.codegen_info
    build = ("cached" if info["cache_hit"] else
             f"{time.perf_counter() - t0:.0f} s wall, {_cpu_with_children() - cpu0:.0f} s CPU")
    print(f"  N = {n}: generated C {info['c_lines']:,} lines, build {build} (load {os.getloadavg()[0]:.1f})",
          file=sys.stderr, flush=True)
    for which in algebras:
        _algebra(which)
        ms, r, problem = rhs_ms(compiled)
        best = None
        for _ in range(rounds):
            _LOOP[0] = 0.0
            t0 = time.process_time()
            res = solver.simulate(compiled, t_end=t_end, output_step=0.01)
            cpu = time.process_time() - t0
            if best is None or cpu < best[0]:
                best = (cpu, _LOOP[0], res)
        cpu, loop, res = best
        shape = f"kl {problem.kl} ku {problem.ku}" if problem else "dense"
        print(f"| {n} | {r} | {which} ({shape}) | {ms:.3f} | {cpu:.2f} | {loop:.2f} | {t_end / cpu:.1f} | "
              f"{position_error(res, n):.2e} | {res.status} | {os.getloadavg()[0]:.1f} |", flush=True)


def _cpu_with_children():
    """CPU seconds of this process and of its finished children (the C compilers)."""
    child = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + child.ru_utime + child.ru_stime


def loops(rounds, algebras):
    model = solver.load_model(str(ROOT / "sample_models" / "scale" / "loops_50.mbs.json"))
    compiled = solver.compile_model(model)
    for which in algebras:
        _algebra(which)
        for t_end in (None, 1.0):
            best = None
            for _ in range(rounds + 1):        # the first run of each also warms the process
                t0 = time.process_time()
                res = solver.simulate(compiled) if t_end is None else solver.simulate(compiled, t_end=t_end)
                cpu = time.process_time() - t0
                best = cpu if best is None else min(best, cpu)
            sim = float(res.t[-1])
            print(f"| loops_50 | {which} | {sim:g} | {res.summary()['integrator']} | {best:.3f} | {sim / best:.2f} | "
                  f"{os.getloadavg()[0]:.1f} |", flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="+", default=[10, 40, 100])
    ap.add_argument("--t-end", type=float, default=20.0)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--no-loops", action="store_true")
    ap.add_argument("--algebras", nargs="+", choices=("dense", "band"), default=["dense", "band"])
    ap.add_argument("--kernels", action="store_true", help="only the per-call CPU ms of the packed kernels and solves")
    ap.add_argument("--start", action="store_true", help="only the CPU s of a run's start in Python")
    args = ap.parse_args(argv)
    if args.start:
        print("| N | m | nq | independent_rows | build_partition | consistent velocities | null_spaces | "
              "first run 0.01 s | load |\n|---|---|---|---|---|---|---|---|---|")
        for n in args.n:
            start(n, args.rounds)
        return
    if args.kernels:
        print("| N | call | CPU ms | load |\n|---|---|---|---|")
        for n in args.n:
            kernels(n)
        return
    segment.CompiledSegments.advance = _timed_advance(segment.CompiledSegments.advance)
    print(f"four-bar row, {args.t_end:g} s, default settings, generated kernels (build excluded), CPU s best of "
          f"{args.rounds}")
    print("| N | r | algebra | rhs ms | CPU s | loop s | × real time | error m | status | load |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for n in args.n:
        try:
            row(n, args.t_end, args.rounds, args.algebras)
        except solver.ModelError as exc:     # e.g. the kernels of a huge model do not link
            print(f"| {n} | | | | | | | | build failed: {str(exc)[:160]} | {os.getloadavg()[0]:.1f} |", flush=True)
    if not args.no_loops:
        print("\nloops_50, warm, CPU s best of", args.rounds)
        print("| model | algebra | simulated s | integrator | CPU s | × real time | load |")
        print("|---|---|---|---|---|---|---|")
        loops(args.rounds, args.algebras)


if __name__ == "__main__":
    main()
