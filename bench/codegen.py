"""Generated kernels (solver.codegen, Choi & Yoo (2000) §4) vs the generic path, per sample model and
formulation (Cartesian with conventional joints, and relative).

For every rigid sample in ``sample_models/`` and each formulation:
  * generation: sympy derivation and compile time (fresh cache folder), then a cache hit;
  * µs per evaluation of the constraints at level 2 (Φ, Φ_q, ν, γ), of M and of Q at the initial
    state, generic vs generated (median of 5 medians of 200 calls);
  * the paper's Table 8 split: µs of the position analysis (Newton on Φ = 0), the velocity analysis
    and the acceleration analysis (equations, reduced mass matrix, solve) of one right-hand side at the
    initial state, generic (Partition.positions / velocities / accelerations) vs generated (the
    compiled reduction at levels 0, 1, 2, differenced);
  * wall time per simulated second of the sample's run (its own settings, ``--t-end`` capped),
    generic vs generated (median of ``--repeat`` alternating runs) and the speed-up;
  * for the slider–crank, where the time of a generated Cartesian run goes (cProfile, cumulative).
The machine is shared: read the numbers as medians of noisy samples.

    .venv/bin/python bench/codegen.py [--t-end 1.0] [--repeat 3] [--only slider_crank ...]
                                      [--formulation cartesian|relative]
"""
from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import statistics
import sys
import tempfile
import time
import timeit
from pathlib import Path

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import solver                                                        # noqa: E402
from solver.analysis.threads import single_threaded_blas            # noqa: E402
from solver.analysis.assembly import assemble_positions, consistent_velocities   # noqa: E402
from solver.codegen import CodegenCartesianSystem, CodegenRelativeSystem, CodegenUnavailable   # noqa: E402
from solver.errors import ModelError                                 # noqa: E402
from solver.formulations.cartesian import CartesianSystem            # noqa: E402
from solver.formulations.relative import RelativeSystem              # noqa: E402
from solver.partitioning.choose import build_partition  # noqa: E402

SAMPLES = Path(__file__).resolve().parents[1] / "sample_models"
SYSTEMS = {"cartesian": (CartesianSystem, CodegenCartesianSystem), "relative": (RelativeSystem, CodegenRelativeSystem)}
PROFILE_GROUPS = [       # (label, function name, file suffix): cumulative times, nested as listed
    ("output points (_record: M, Q, Φ, partition solve, λ, postprocess)", "_record", "dynamics.py"),
    ("  postprocess (body states, reactions, energies)", "postprocess", "cartesian.py"),
    ("  multipliers λ (lstsq)", "multipliers", "partition.py"),
    ("right-hand sides (_rhs)", "_rhs", "dynamics.py"),
    ("  positions: Newton on Φ = 0 (_state → Partition.positions)", "positions", "partition.py"),
    ("  velocities: (Φ_q U) ẇ = ν − Φ_q V ż", "velocities", "partition.py"),
    ("  accelerations: N, Nᵀ M N, Cholesky", "accelerations", "partition.py"),
    ("  all Φ/Φ_q/ν/γ evaluations (runs and outputs)", "constraints", "codegen/system.py"),
    ("  all M and Q evaluations", ("mass", "forces"), "codegen/system.py"),
    ("partition quality checks (svdvals per step)", "quality", "partition.py"),
]


def per_call_us(fn, number=200):
    return statistics.median(min(timeit.repeat(fn, number=number, repeat=3)) / number * 1e6 for _ in range(5))


def kernel_times(system):
    q, qd, _ = system.initial_state()
    qd = qd + 0.1
    return (per_call_us(lambda: system.constraints(q, 0.1, qd, level=2)), per_call_us(lambda: system.mass(q)),
            per_call_us(lambda: system.forces(q, qd, 0.1)))


def analysis_split(generic, generated):
    """µs of the position, velocity and acceleration analysis of one right-hand side at the
    assembled initial state: generic (Partition steps with the system's equations; Φ_q comes with
    the positions, γ, M and Q with the accelerations) and generated (the compiled reduction at
    levels 0, 1, 2, differenced)."""
    q, qd, t = generic.initial_state()
    q = assemble_positions(generic, q, t)
    qd = consistent_velocities(generic, q, qd, t)
    part = build_partition("lu", generic, q, t)
    f = part.dof
    y = np.concatenate([part.z_of(q), part.V.T @ qd])
    ev = generic.constraints(q, t, qd, level=2)

    def accelerations():
        e = generic.constraints(q, t, qd, level=2)
        return part.accelerations(generic.mass(q), generic.forces(q, qd, t), e.jac, e.gamma)
    split = (per_call_us(lambda: part.positions(generic, y[:f], t, q)),
             per_call_us(lambda: part.velocities(ev.jac, ev.nu, y[f:])), per_call_us(accelerations))
    compiled = generated.compiled_reduction(build_partition("lu", generated, q, t))
    levels = [per_call_us(lambda: compiled.solve(t, y, q, level)) for level in (0, 1, 2)]
    return split, (levels[0], levels[1] - levels[0], levels[2] - levels[1])


def wall_per_second(model, formulation, t_end, repeat):
    runs = {False: [], True: []}
    for _ in range(repeat):
        for codegen in (False, True):
            t0 = time.perf_counter()
            solver.simulate(model, t_end=t_end, formulation=formulation, codegen=codegen)
            runs[codegen].append((time.perf_counter() - t0) / t_end)
    return statistics.median(runs[False]), statistics.median(runs[True])


def profile_split(model, t_end):
    prof = cProfile.Profile()
    prof.enable()
    solver.simulate(model, t_end=t_end, formulation="cartesian", codegen=True)
    prof.disable()
    stats = pstats.Stats(prof).stats
    total = sum(tt for (_, _, name), (_, _, tt, _, _) in stats.items())

    def cumulative(names, suffix):
        names = (names,) if isinstance(names, str) else names
        return sum(ct for (path, _, name), (_, _, _, ct, _) in stats.items() if name in names and path.endswith(suffix))
    print(f"\nWhere a generated slider-crank run goes (cProfile, {t_end:g} s simulated, total {total:.3f} s "
          "under the profiler; cumulative, nested groups overlap):")
    for label, names, suffix in PROFILE_GROUPS:
        t = cumulative(names, suffix)
        print(f"  {label:<72} {t:7.3f} s  {100 * t / total:5.1f} %")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--t-end", type=float, default=1.0, help="simulated time per run, capped by the sample's")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", nargs="*", help="sample names (default: all)")
    ap.add_argument("--formulation", choices=list(SYSTEMS), help="only this formulation (default: both)")
    args = ap.parse_args()
    paths = sorted(SAMPLES.glob("*.mbs.json"))
    if args.only:
        paths = [p for p in paths if p.name.split(".")[0] in args.only]
    os.environ["MBS_CODEGEN_CACHE"] = tempfile.mkdtemp(prefix="mbs-codegen-bench-")
    header = (f"{'model':<26}{'form':>5}{'derive s':>9}{'compile s':>10}{'hit s':>7} | {'Φ,Φq,γ µs':>10}{'gen':>7}"
              f" | {'M µs':>7}{'gen':>6} | {'Q µs':>7}{'gen':>6} | {'pos/vel/acc µs':>20}{'gen':>18}"
              f" | {'wall/sim s':>10}{'gen':>7}{'speed-up':>9}")
    print(header)
    print("-" * len(header))
    with single_threaded_blas():
        for path in paths:
            name = path.name.split(".")[0]
            model = solver.load_model(path)
            for formulation in [args.formulation] if args.formulation else list(SYSTEMS):
                generic_cls, generated_cls = SYSTEMS[formulation]
                try:
                    generated = generated_cls(model)
                    generic = generic_cls(model)
                except (ModelError, CodegenUnavailable) as exc:
                    print(f"{name:<26}{formulation[:4]:>5}  not generated: {str(exc)[:80]}")
                    continue
                info = generated.codegen_info
                hit = generated_cls(model).codegen_info["load_s"]
                kc, km, kq = kernel_times(generic)
                gc, gm, gq = kernel_times(generated)
                split_generic, split_generated = analysis_split(generic, generated)
                t_end = min(args.t_end, model.settings.t_end)
                w_generic, w_generated = wall_per_second(model, formulation, t_end, args.repeat)
                sg = "/".join(f"{x:.0f}" for x in split_generic)
                sc = "/".join(f"{x:.1f}" for x in split_generated)
                print(f"{name:<26}{formulation[:4]:>5}{info['derive_s']:9.2f}{info['compile_s']:10.2f}{hit:7.3f}"
                      f" | {kc:10.1f}{gc:7.1f} | {km:7.1f}{gm:6.1f} | {kq:7.1f}{gq:6.1f} | {sg:>20}{sc:>18}"
                      f" | {w_generic:10.3f}{w_generated:7.3f}{w_generic / w_generated:8.1f}×", flush=True)
        if not args.only or "slider_crank" in args.only:
            profile_split(solver.load_model(SAMPLES / "slider_crank.mbs.json"), min(args.t_end, 1.0))


if __name__ == "__main__":
    main()
