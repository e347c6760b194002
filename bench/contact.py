"""Contact beside a peer, in one process: n spheres dropped into a square box (10, 100 and 1000 by
default) in MBS Studio and in MuJoCo (optional ``bench`` extra).

The scene: spheres of radius 0.05 m and 0.5 kg on a grid 0.12 m apart, 0.1 m … above the floor,
with small random initial velocities (seed 0), in a 0.1 m-per-sphere-wide square box (floor y = 0
and four walls, planes on ground); gravity −9.81 m/s² along y.  MBS Studio: one contact
element per sphere–wall and sphere–floor pair and one contact group of all the spheres (5n elements
and a group: no element per sphere pair; ``--pairs``: one per sphere pair instead, 5n + n(n − 1)/2;
k = 1e6 N/m^1.5, e = 1.5, impact damping 50 N·s/m, μ = 0.3), evaluated in C (solver/codegen/
contact.c: the sort-and-sweep broad phase of broadphase.c, the closed-form pairs, the laws) inside
the compiled reduced right-hand side, DOP853 in the compiled step loop (what ``simulate(model)``
picks).  MuJoCo: the same spheres and planes (its soft contacts, default solref/solimp, friction
0.3), Euler at dt = 1e-3, ``mj_step`` loop.  The two contact laws differ, so only the mean sphere
height at the end is compared: at rest on the floor it is R − δ, δ each law's static penetration
under m g (Hertz here: (m g/k)^(1/e) = 0.29 mm).

Times are CPU seconds of this process (``time.process_time``: the machine is shared, so wall time
scales with the load); the real-time factor is simulated time over CPU time (> 1: faster than real
time).  MBS Studio runs the sizes up to ``--mbs-max`` (the free spheres take the open tree's O(n)
path, articulated.c, with the block-sparse partition of solver/partitioning/block.py); MuJoCo runs
them all.  The last column is this process's peak resident memory after the row (``ru_maxrss``: the
largest so far, MuJoCo's and the earlier rows' included).

    .venv/bin/python bench/contact.py [--n 10 100 1000] [--t-end 1.0 0.01 1.0] [--mbs-max 1000] [--pairs] [--progress]
                                      [--integrator rk]
    .venv/bin/python bench/contact.py --energy 10 0.3 2e-4     # energy lost = energy the contacts dissipated
    .venv/bin/python bench/contact.py --rhs 10 1.0 20000        # one right-hand side at the state at 1 s

Prints the load average before and after the table.
"""
from __future__ import annotations

import argparse
import os
import resource
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import solver  # noqa: E402

RADIUS, MASS, GAP, MU = 0.05, 0.5, 0.12, 0.3


def layout(n):
    """(side of the box, initial positions (n, 3), initial velocities (n, 3))."""
    per_row = int(np.ceil(np.sqrt(n)))
    side = GAP * per_row + 0.02
    k = np.arange(n)
    x = (k % per_row - (per_row - 1) / 2) * GAP
    z = ((k // per_row) % per_row - (per_row - 1) / 2) * GAP
    y = 0.1 + RADIUS + GAP * (k // per_row ** 2)
    rng = np.random.default_rng(0)
    return side, np.column_stack([x, y, z]), rng.normal(0.0, 0.2, (n, 3))


def walls(side):
    """The floor and four walls as planes (point, normal into the box)."""
    h = side / 2
    return [((0, 0, 0), (0, 1, 0)), ((-h, 0, 0), (1, 0, 0)), ((h, 0, 0), (-1, 0, 0)),
            ((0, 0, -h), (0, 0, 1)), ((0, 0, h), (0, 0, -1))]


def model(n, pairs=False):
    """The scene in MBS Studio (module docstring): the spheres in one contact group, or with
    ``pairs`` one contact element per sphere pair."""
    side, r0, v0 = layout(n)
    m = solver.Model(name=f"spheres-{n}", gravity=(0, -9.81, 0))
    law = dict(stiffness=1e6, damping=50.0, exponent=1.5, friction=(MU, MU))
    inertia = (0.4 * MASS * RADIUS ** 2,) * 3
    for k in range(n):
        m.add_body(f"s{k}", mass=MASS, inertia=inertia, position=tuple(r0[k]), velocity=tuple(v0[k]),
                   geometry={"shape": "sphere", "radius": RADIUS})
        for w, (point, normal) in enumerate(walls(side)):
            m.add_contact(f"w{w}_{k}", "ground", f"s{k}", geometry_i={"shape": "plane", "point": point,
                                                                         "normal": normal}, **law)
    if not pairs:
        m.add_contact_group("spheres", [f"s{k}" for k in range(n)], **law)
        return m
    for a in range(n):
        for b in range(a + 1, n):
            m.add_contact(f"c{a}_{b}", f"s{a}", f"s{b}", **law)
    return m


def ours(n, t_end, pairs=False, progress=False, integrator="auto"):
    m = model(n, pairs)
    t0 = time.process_time()
    compiled = solver.compile_model(m)
    t1 = time.process_time()

    def report(t, _end):
        print(f"  {n} spheres: t = {t:.3f} s after {time.process_time() - t1:.1f} CPU s (load average "
              f"{os.getloadavg()[0]:.1f})", file=sys.stderr, flush=True)
    res = solver.simulate(compiled, t_end=t_end, output_step=min(0.01, t_end), integrator=integrator,
                          progress=report if progress else None)
    t2 = time.process_time()
    height = np.mean([res.body_position(f"s{k}")[-1, 1] for k in range(n)])
    loop = next((e["message"] for e in res.events if e["message"].startswith("step loop")), "")
    return {"compile": t1 - t0, "run": t2 - t1, "steps": res.meta["steps"],
            "rhs": res.meta["rhs_evaluations"], "height": height, "contacts": len(m.forces), "loop": loop,
            "peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def energy_audit(n, t_end, output_step):
    """(energy lost E(0) − E(t_end), energy the contacts dissipated ∫ Σ D dt (trapezoid over the
    output points; Results.contact_dissipation re-evaluates each element's law in Python from the
    recorded states), largest |lost − dissipated| over the run) of the default run."""
    m = model(n)
    res = solver.simulate(m, t_end=t_end, output_step=output_step)
    power = sum(res.contact_dissipation(name) for name in m.forces)
    dissipated = np.concatenate([[0.0], np.cumsum(0.5 * (power[1:] + power[:-1]) * np.diff(res.t))])
    lost = res.energy["total"][0] - res.energy["total"]
    return lost[-1], dissipated[-1], np.max(np.abs(lost - dissipated))


def rhs_costs(n, t_end, repeats):
    """(CPU µs of one compiled right-hand side, cg_reduced at level 2 called from Python (its ctypes
    call included), CPU µs of its contact evaluation cc_generalized alone, contact points) at the
    state of the default run at t_end, on a QR partition there."""
    from solver.codegen.reduced import CompiledReduction
    from solver.partitioning.choose import build_partition
    compiled = solver.compile_model(model(n))
    res = solver.simulate(compiled, t_end=t_end, output_step=t_end)
    q, qd = res.coordinates[-1].copy(), res.velocities[-1].copy()
    part = build_partition("qr", compiled.system, q, t_end)
    reduction = CompiledReduction(compiled.system, part)
    y = np.concatenate([part.z_of(q), part.V.T @ qd])
    reduction.solve(t_end, y, q, 2)
    t0 = time.process_time()
    for _ in range(repeats):
        reduction.solve(t_end, y, q, 2)
    t1 = time.process_time()
    for _ in range(repeats):
        reduction.contact.generalized(q, qd)
    t2 = time.process_time()
    return 1e6 * (t1 - t0) / repeats, 1e6 * (t2 - t1) / repeats, reduction.contact.struct.points


def mujoco_run(n, t_end):
    import mujoco
    side, r0, v0 = layout(n)
    planes = "".join(f'<geom type="plane" size="5 5 0.1" pos="{p[0]} {p[2]} {p[1]}" zaxis="{q[0]} {q[2]} {q[1]}" '
                     f'friction="{MU} 0 0"/>' for p, q in walls(side))       # MuJoCo is z up: swap y and z
    bodies = "".join(f'<body pos="{x} {z} {y}"><freejoint/><geom type="sphere" size="{RADIUS}" mass="{MASS}" '
                     f'friction="{MU} 0 0"/></body>' for x, y, z in r0)
    mj = mujoco.MjModel.from_xml_string(f'<mujoco><option timestep="1e-3"/><worldbody>{planes}{bodies}'
                                        '</worldbody></mujoco>')
    data = mujoco.MjData(mj)
    for k, (vx, vy, vz) in enumerate(v0):
        data.qvel[6 * k:6 * k + 3] = (vx, vz, vy)
    t0 = time.process_time()
    while data.time < t_end - 1e-9:
        mujoco.mj_step(mj, data)
    t1 = time.process_time()
    return {"run": t1 - t0, "steps": int(round(t_end / 1e-3)), "height": float(np.mean(data.xpos[1:, 2]))}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[10, 100, 1000])
    parser.add_argument("--t-end", type=float, nargs="+", default=[1.0, 0.01, 1.0],
                        help="simulated time per size (the last one for the sizes after it)")
    parser.add_argument("--mbs-max", type=int, default=1000, help="the largest size MBS Studio runs")
    parser.add_argument("--integrator", default="auto", help="MBS Studio's integrator (default auto)")
    parser.add_argument("--progress", action="store_true",
                        help="print each output point's simulated time and CPU seconds so far (stderr)")
    parser.add_argument("--pairs", action="store_true",
                        help="one contact element per sphere pair instead of the contact group")
    parser.add_argument("--energy", type=float, nargs=3, metavar=("N", "T_END", "OUTPUT_STEP"),
                        help="instead: the energy balance of N spheres over T_END (contact dissipation "
                             "integrated over the output points)")
    parser.add_argument("--rhs", type=float, nargs=3, metavar=("N", "T_END", "REPEATS"),
                        help="instead: the CPU time of one right-hand side and of its contact evaluation at the "
                             "state of N spheres at T_END")
    args = parser.parse_args(argv)
    if args.rhs:
        n, t_end, repeats = int(args.rhs[0]), args.rhs[1], int(args.rhs[2])
        total, contact, points = rhs_costs(n, t_end, repeats)
        print(f"{n} spheres at t = {t_end:g} s ({points} contact points): right-hand side {total:.1f} µs, of which "
              f"the contact evaluation {contact:.1f} µs (load average {os.getloadavg()[0]:.1f})")
        return
    if args.energy:
        n, t_end, step = int(args.energy[0]), *args.energy[1:]
        lost, dissipated, worst = energy_audit(n, t_end, step)
        print(f"{n} spheres, {t_end:g} s, output every {step:g} s: energy lost {lost:.6g} J, dissipated by the "
              f"contacts {dissipated:.6g} J, largest difference over the run {worst:.3g} J "
              f"({worst / lost:.2g} of the loss)")
        return
    print(f"load average {os.getloadavg()[0]:.1f}")
    print("| spheres | contact elements | simulated s | MBS compile CPU s | MBS run CPU s | MBS real-time factor "
          "| steps | RHS | MuJoCo run CPU s | MuJoCo real-time factor | mean height MBS / MuJoCo m | MBS step loop "
          "| peak memory MB |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for k, n in enumerate(args.n):
        t_end = args.t_end[min(k, len(args.t_end) - 1)]
        try:
            b = mujoco_run(n, t_end)
        except ImportError:
            b = {"run": float("nan"), "height": float("nan")}
        if n > args.mbs_max:
            a = {"contacts": n * 5 + (n * (n - 1) // 2 if args.pairs else 1), "compile": float("nan"),
                 "run": float("nan"), "steps": "—", "rhs": "—", "height": float("nan"),
                 "loop": f"not run (above --mbs-max {args.mbs_max})", "peak": float("nan")}
        else:
            a = ours(n, t_end, args.pairs, args.progress, args.integrator)
        print(f"| {n} | {a['contacts']} | {t_end:g} | {a['compile']:.2f} | {a['run']:.2f} | {t_end / a['run']:.3g} | "
              f"{a['steps']} | {a['rhs']} | {b['run']:.3f} | {t_end / b['run']:.3g} | "
              f"{a['height']:.5f} / {b['height']:.5f} | {a['loop']} | {a['peak']:.0f} |", flush=True)
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
