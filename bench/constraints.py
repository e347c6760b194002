"""Lee, Lee & Bae (2013), Table 7 analogue: per-call cost of Φ_q and (Φ_qᵀλ)_q for each joint type,
conventional vs parametric form (µs per joint).

Two numbers per form: one joint alone (what a call costs in this numpy implementation, mostly
interpreter/numpy overhead), and per joint when 64 joints of the type are evaluated together (the
batched evaluators' amortized cost, closer to the arithmetic the paper counts).  "Φ_q" is one
evaluation of the joint rows' Φ and Φ_q (the batched evaluator computes them together); "(Φ_qᵀλ)_q"
is the Hessian contraction.  The paper's operation counts (Table 7) are printed alongside.

    .venv/bin/python bench/constraints.py [--batch 64] [--seconds 0.2]
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import solver                                                     # noqa: E402
from solver.formulations.cartesian import CartesianSystem          # noqa: E402

JOINTS = ["revolute", "prismatic", "screw", "cylindrical", "universal", "planar", "spherical", "fixed"]
PAPER = {"revolute": (222, 360, 51, 45), "prismatic": (504, 939, 33, 9), "screw": (564, 1074, 60, 54),
         "cylindrical": (420, 798, 57, 54), "universal": (138, 219, 73, 114), "planar": (294, 540, 75, 63),
         "spherical": (54, 78, 101, 386), "fixed": None}


def pairs_model(jtype, n):
    """n independent body pairs, each joined by one joint of the type (body a_k — body b_k)."""
    m = solver.Model(name=f"{n} {jtype}", gravity=(0, -9.81, 0))
    for k in range(n):
        z = 0.5 * k
        m.add_body(f"a{k}", mass=1.0, inertia=(0.1, 0.2, 0.25), position=(0.1, 0.2, z),
                   orientation=(np.cos(0.3), 0.2, np.sin(0.3), 0.1))
        m.add_body(f"b{k}", mass=2.0, inertia=(0.3, 0.2, 0.4), position=(0.6, -0.1, z + 0.1),
                   orientation=(0.9, -0.1, 0.3, 0.2))
        opts = {"axis2": (1.0, -0.4, 0.0)} if jtype == "universal" else {}
        if jtype == "screw":
            opts["pitch"] = 0.05
        m.add_joint(f"J{k}", jtype, f"a{k}", f"b{k}", origin=(0.4, 0.0, z + 0.05), axis=(0.4, 1.0, 0.0), **opts)
    return m


def per_call(f, seconds):
    f()
    n, t0 = 0, time.perf_counter()
    while True:
        for _ in range(20):
            f()
        n += 20
        dt = time.perf_counter() - t0
        if dt > seconds:
            return dt / n * 1e6


def costs(jtype, n, seconds):
    """(Φ_q, (Φ_qᵀλ)_q) µs per joint, conventional and parametric, for n joints evaluated together."""
    out = []
    for form in ("conventional", "parametric"):
        S = CartesianSystem(pairs_model(jtype, n), form=form)
        rng = np.random.default_rng(0)
        q0, _, _ = S.initial_state()
        q = S.normalize(q0 + 0.05 * rng.standard_normal(S.nq))
        lam = rng.standard_normal(S.m)
        phi, jac = np.zeros(S.m), np.zeros((S.m, S.nq))
        H = np.zeros((S.nq, S.nq))
        if form == "conventional":
            B = S.batch

            def jac_call():
                B._cache_q = None                    # the run path caches per q; measure the work
                B.evaluate(q, None, 0.0, 0, phi, jac, None, None)

            def hess_call():
                # the joint part of CartesianSystem.constraint_hessian (per-joint exact Hessians)
                states = S._states(q, None)
                for j in S.joints:
                    for row, s in zip(j.rows, j.joint.equations(states[j.body_i], states[j.body_j], 0)):
                        H[np.ix_(j.cols, j.cols)] += s.hess(lam[row])[np.ix_(j.mask, j.mask)]
        else:
            P = S.param

            def jac_call():
                P._cache_q = None                    # idem
                P.evaluate(q, None, 0.0, 0, phi, jac, None, None)

            def hess_call():
                P.hessian(q, lam, H)
        out += [per_call(jac_call, seconds) / n, per_call(hess_call, seconds) / n]
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--seconds", type=float, default=0.2, help="timing time per measurement")
    args = ap.parse_args(argv)
    print("µs per joint: conventional (c) vs parametric (p); 1 = one joint per call, "
          f"{args.batch} = {args.batch} joints per call (amortized); paper = Table 7 operation counts")
    head = (f"{'joint':<12} | {'Φ_q c':>7} {'Φ_q p':>7} {'(Φᵀλ)_q c':>10} {'(Φᵀλ)_q p':>10} | "
            f"{'Φ_q c':>7} {'Φ_q p':>7} {'(Φᵀλ)_q c':>10} {'(Φᵀλ)_q p':>10} | {'paper ops Φ_q c/p, (Φᵀλ)_q c/p':>32}")
    print(f"{'':<12} | {'1 joint per call':^38} | {f'{args.batch} joints per call':^38} |")
    print(head)
    print("-" * len(head))
    for jtype in JOINTS:
        one = costs(jtype, 1, args.seconds)
        many = costs(jtype, args.batch, args.seconds)
        paper = PAPER[jtype]
        ptxt = "" if paper is None else f"{paper[0]}/{paper[2]}, {paper[1]}/{paper[3]}"
        print(f"{jtype:<12} | {one[0]:>7.1f} {one[2]:>7.1f} {one[1]:>10.1f} {one[3]:>10.1f} | "
              f"{many[0]:>7.2f} {many[2]:>7.2f} {many[1]:>10.2f} {many[3]:>10.2f} | {ptxt:>32}")
    print("machine: 2 cores shared with other processes; numbers vary ±30 % between runs")


if __name__ == "__main__":
    main()
