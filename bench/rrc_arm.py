"""The 7-DOF RRC robot arm of Kim & You (1997) §4 in the relative (recursive) formulation.

1. Free-falling arm: no drivers, pitch joints 2, 4, 6 bent 0.3 rad, 5 s, rtol 1e-6 (the issue's
   peer comparison: MuJoCo RK4 1 ms ≈ 0.045 s, Exudyn generalized-α ≈ 0.18 s with 9e-5 energy
   drift): wall time, real-time factor (simulated / wall), energy drift, steps and right-hand sides
   with the generic recursive kernels and with the generated ones (solver.codegen; 500 and 50
   output points), and a cProfile top 10 of a generic run.
2. Case 1 (sample rrc_arm_case1, 5 s) and case 2 (sample rrc_arm_case2, 1 s, generalized-α):
   wall time; relative vs Cartesian on the plotted quantities; the spring's stretch and force.
3. Plots (paper Figs. 5–8): driving torque and global x-reaction of joint 2 (case 1) and joint 4
   (case 2), written as PNG with pyqtgraph (offscreen) and as CSV to ``out/bench/rrc_arm/``.

Usage:  python bench/rrc_arm.py [--skip-cartesian] [--out DIR]
"""
from __future__ import annotations

import argparse
import cProfile
import importlib.util
import io
import os
import pstats
import sys
import time

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, ROOT)
import solver  # noqa: E402
from plots import write_series  # noqa: E402


def builders():
    spec = importlib.util.spec_from_file_location("make_samples", os.path.join(ROOT, "tools", "make_samples.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def rel(a, b):
    return float(np.abs(np.asarray(a) - b).max() / max(np.abs(b).max(), 1e-300))


# ---- 1. free-falling arm --------------------------------------------------------------------------
def free_fall(mod, t_end=5.0):
    model = mod.rrc_arm("rrc-arm-free", pitch=(0.3, 0.3, 0.3))
    print(f"1. Free-falling arm (pitch joints at 0.3 rad, {t_end} s, rtol 1e-6, relative formulation)")
    print(f"   {'integrator':<10} {'kernels':<9} {'outputs':>7} {'wall s':>8} {'RTF':>7} {'steps':>6} {'rhs':>6} "
          f"{'µs/rhs':>8} {'energy drift':>13}")
    results = {}
    solver.simulate(model, formulation="relative", t_end=0.01, codegen=True)      # compile once (cached)
    for integrator in ("adams", "rk45", "rk"):
        for codegen, output_step in ((False, 0.01), (True, 0.01), (True, 0.1)):
            res = solver.simulate(model, formulation="relative", t_end=t_end, output_step=output_step, rtol=1e-6,
                                  atol=1e-8, integrator=integrator, codegen=codegen)
            s = res.summary()
            results[integrator, codegen, output_step] = s
            print(f"   {integrator:<10} {'generated' if codegen else 'generic':<9} {int(round(t_end / output_step)):>7} "
                  f"{s['wall_time_s']:>8.3f} {s['real_time_factor']:>7.1f} {s['steps']:>6} {s['rhs_evaluations']:>6} "
                  f"{1e6 * s['wall_time_s'] / s['rhs_evaluations']:>8.0f} {s['energy_drift']:>13.2e}")
    print("   target (issue): ≤ 0.18 s wall with drift ≤ 1e-4 (Exudyn ≈ 0.18 s, MuJoCo RK4 ≈ 0.045 s)")
    prof = cProfile.Profile()
    prof.enable()
    solver.simulate(model, formulation="relative", t_end=t_end, output_step=0.01, rtol=1e-6, atol=1e-8)
    prof.disable()
    buf = io.StringIO()
    pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(10)
    print("   cProfile of the adams run, top 10 by own time:")
    lines = [ln for ln in buf.getvalue().splitlines() if ln.strip()]
    start = next(k for k, ln in enumerate(lines) if ln.lstrip().startswith("ncalls"))
    for ln in lines[start:start + 11]:
        print("   " + ln.replace(ROOT, "").replace(os.path.dirname(np.__file__), "numpy"))
    return results


# ---- 2. cases 1 and 2 ------------------------------------------------------------------------------
def timed(model, **kw):
    t0 = time.perf_counter()
    res = solver.simulate(model, **kw)
    return res, time.perf_counter() - t0


def case1(with_cartesian):
    model = solver.load_model(os.path.join(ROOT, "sample_models", "rrc_arm_case1.mbs.json"))
    print("\n2a. Case 1 (roll joints locked, q2 = (π/3) sin(π t/5), 5 s, sample settings: relative, adams)")
    res, wall = timed(model)
    s = res.summary()
    print(f"   relative : wall {wall:.2f} s, RTF {s['real_time_factor']:.3f}, steps {s['steps']}, "
          f"rhs {s['rhs_evaluations']}, energy account not closed (drivers do work)")
    tau, fx = res.driver_force("drive2"), res.joint_reaction("J2")[0][:, 0]
    print(f"   driving torque of joint 2: {tau.min():.4g} … {tau.max():.4g} N·m; "
          f"x-reaction of joint 2: {fx.min():.4g} … {fx.max():.4g} N")
    if with_cartesian:
        cart, wall_c = timed(model, formulation="cartesian")
        print(f"   cartesian: wall {wall_c:.2f} s; relative vs cartesian (rel. to peak): "
              f"τ2 {rel(tau, cart.driver_force('drive2')):.1e}, "
              f"F_x(J2) {rel(fx, cart.joint_reaction('J2')[0][:, 0]):.1e}, "
              f"tip {rel(res.body_position('link7'), cart.body_position('link7')):.1e}")
    return res


def case2(mod, with_cartesian):
    model = solver.load_model(os.path.join(ROOT, "sample_models", "rrc_arm_case2.mbs.json"))
    print("\n2b. Case 2 (tip spring 3.067e9 N/m, roll joints and joint 2 locked, "
          "q4 = (π/30) sin(π t − π), 1 s, generalized-α, h = 1 ms)")
    res, wall = timed(model)
    s = res.summary()
    print(f"   relative : wall {wall:.2f} s, RTF {s['real_time_factor']:.3f}, steps {s['steps']}, "
          f"Newton iterations {s['rhs_evaluations']}")
    tau, fx = res.driver_force("drive4"), res.joint_reaction("J4")[0][:, 0]
    print(f"   driving torque of joint 4: {tau.min():.4g} … {tau.max():.4g} N·m; "
          f"x-reaction of joint 4: {fx.min():.4g} … {fx.max():.4g} N")
    L7 = mod.RRC_LENGTHS[6]
    tip = res.body_position("link7") + np.einsum("nij,j->ni", res.body_rotation("link7"), [L7 / 2, 0.0, 0.0])
    anchor = np.array([-mod.INCH, -sum(mod.RRC_LENGTHS), 0.0])
    stretch = np.linalg.norm(tip - anchor, axis=1) - mod.INCH
    print(f"   spring stretch {stretch.min() * 1e6:.3g} … {stretch.max() * 1e6:.3g} µm, tension "
          f"{mod.RRC_SPRING * stretch.min():.4g} … {mod.RRC_SPRING * stretch.max():.4g} N; tip moved "
          f"{np.abs(tip - tip[0]).max() * 1e3:.1f} mm; joint 6 swings "
          f"{np.degrees(np.ptp(res.coordinates[:, 5])):.1f}°")
    if with_cartesian:
        cart, wall_c = timed(model, formulation="cartesian")
        print(f"   cartesian: wall {wall_c:.2f} s; relative vs cartesian (rel. to peak): "
              f"τ4 {rel(tau, cart.driver_force('drive4')):.1e}, "
              f"F_x(J4) {rel(fx, cart.joint_reaction('J4')[0][:, 0]):.1e}")
    return res


# ---- 3. plots ------------------------------------------------------------------------------------
def save_outputs(out, res1, res2):
    series = [("fig5_case1_driving_torque_joint2", res1.t, res1.driver_force("drive2"), "driving torque of joint 2", "N·m"),
              ("fig6_case1_x_reaction_joint2", res1.t, res1.joint_reaction("J2")[0][:, 0], "x-reaction of joint 2", "N"),
              ("fig7_case2_driving_torque_joint4", res2.t, res2.driver_force("drive4"), "driving torque of joint 4", "N·m"),
              ("fig8_case2_x_reaction_joint4", res2.t, res2.joint_reaction("J4")[0][:, 0], "x-reaction of joint 4", "N")]
    failures = [write_series(out, name, f"RRC arm — {title} (relative formulation)", ("time", "s"), (title, unit),
                             [(title.replace(" ", "_"), t, y)]) for name, t, y, title, unit in series]
    failed = next((f for f in failures if f), "")
    print(f"\n3. CSV{'' if failed else ' and PNG'} written to {os.path.relpath(out)}/ (fig5–fig8)"
          + (f"; PNG export failed ({failed})" if failed else ""))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--skip-cartesian", action="store_true", help="only the relative runs")
    ap.add_argument("--out", default=os.path.join(ROOT, "out", "bench", "rrc_arm"))
    args = ap.parse_args()
    mod = builders()
    free_fall(mod)
    r1 = case1(not args.skip_cartesian)
    r2 = case2(mod, not args.skip_cartesian)
    save_outputs(os.path.abspath(args.out), r1, r2)


if __name__ == "__main__":
    main()
