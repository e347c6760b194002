"""Contact beside a peer, in one process: n spheres dropped into a square box (10 and 100 by
default) in MBS Studio and in MuJoCo (optional ``bench`` extra).

The scene: spheres of radius 0.05 m and 0.5 kg on a grid 0.12 m apart, 0.1 m … above the floor,
with small random initial velocities (seed 0), in a 0.1 m-per-sphere-wide square box (floor y = 0
and four walls, planes on ground); gravity −9.81 m/s² along y; 1 s.  MBS Studio: one contact
element per sphere–wall, sphere–floor and sphere–sphere pair (n + 4n + n(n − 1)/2 elements;
k = 1e6 N/m^1.5, e = 1.5, impact damping 50 N·s/m, μ = 0.3), evaluated by one ContactSet
(bounding-sphere broad phase, docs/contact.md) in C (solver/codegen/contact.c) inside the compiled
reduced right-hand side, DOP853 in the compiled step loop (what ``simulate(model)`` picks).  MuJoCo: the same spheres and planes (its soft contacts, default
solref/solimp, friction 0.3), Euler at dt = 1e-3, ``mj_step`` loop.  The two contact laws differ,
so only the rest height of the pile (mean sphere height at 1 s) is compared.

    .venv/bin/python bench/contact.py [--n 10 100] [--t-end 1.0]

Prints the load average first (the machine is shared: wall times scale with it).
"""
from __future__ import annotations

import argparse
import os
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


def ours(n, t_end):
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
    for a in range(n):
        for b in range(a + 1, n):
            m.add_contact(f"c{a}_{b}", f"s{a}", f"s{b}", **law)
    t0 = time.perf_counter()
    compiled = solver.compile_model(m)
    t1 = time.perf_counter()
    res = solver.simulate(compiled, t_end=t_end, output_step=0.01)
    t2 = time.perf_counter()
    height = np.mean([res.body_position(f"s{k}")[-1, 1] for k in range(n)])
    loop = next((e["message"] for e in res.events if e["message"].startswith("step loop")), "")
    return {"compile": t1 - t0, "run": t2 - t1, "steps": res.meta["steps"],
            "rhs": res.meta["rhs_evaluations"], "height": height, "contacts": len(m.forces), "loop": loop}


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
    t0 = time.perf_counter()
    while data.time < t_end - 1e-9:
        mujoco.mj_step(mj, data)
    t1 = time.perf_counter()
    return {"run": t1 - t0, "steps": int(round(t_end / 1e-3)), "height": float(np.mean(data.xpos[1:, 2]))}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[10, 100])
    parser.add_argument("--t-end", type=float, default=1.0)
    args = parser.parse_args(argv)
    print(f"load average {os.getloadavg()[0]:.1f}; t_end {args.t_end} s")
    print("| spheres | contact elements | MBS compile s | MBS run s | steps | RHS | MuJoCo run s | "
          "mean height MBS / MuJoCo m | MBS step loop |")
    print("|---|---|---|---|---|---|---|---|---|")
    for n in args.n:
        a = ours(n, args.t_end)
        try:
            b = mujoco_run(n, args.t_end)
        except ImportError:
            b = {"run": float("nan"), "height": float("nan")}
        print(f"| {n} | {a['contacts']} | {a['compile']:.2f} | {a['run']:.2f} | {a['steps']} | {a['rhs']} | "
              f"{b['run']:.3f} | {a['height']:.4f} / {b['height']:.4f} | {a['loop']} |", flush=True)


if __name__ == "__main__":
    main()
