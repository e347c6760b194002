"""Kim & You (1997) Table 3 analogue: time per reaction evaluation at each joint of the 7-DOF RRC arm,
non-recursive (eq. 30) vs recursive Newton–Euler (eq. 28), and the Table 1 operation counts.

The solver (``RelativeSystem.postprocess``) computes the reactions of *all* tree joints at once
(``_reactions_nonrecursive`` / ``_reactions_newton_euler``); it has no per-joint entry point.  So
this bench times

1. per joint i, two stand-alone functions written here from the same terms the solver keeps for
   the equations of motion (K_l, L_l, B_l, M̂_l, Q̂_l, Ẏ̂_l, q̈ — as in the paper, terms already
   computed for M q̈ = P are free):
     non-recursive  R̂_i = −L_i + K_i Ẏ̂_i + Σ_{l>i} (K_l B_l) q̈_l                    (eq. 30)
     Newton–Euler   R̂_n = M̂_n Ẏ̂_n − Q̂_n,  R̂_l = M̂_l Ẏ̂_l − Q̂_l + R̂_{l+1}, l = n−1 … i   (eq. 28)
   once with numpy 6×6 / 6-vector operations and once in plain Python scalar arithmetic (where
   time follows the operation count, as in the paper's Fortran);
2. the solver's all-joint functions as they are.

Operation counts are counted by the scalar versions and printed beside Table 1's formulas
(proposed 6(n−i)+36 mult / 6(n−i)+36 add; Newton–Euler 36(n−i)+36 / 42(n−i)+36).  Each per-joint
result is checked against the solver's arrays.  States: the case-1 sample (joint 2 driven) at
several times of a 0.5 s run.

Usage:  python bench/reactions.py
"""
from __future__ import annotations

import os
import sys
import time
import timeit

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import solver  # noqa: E402
from solver.analysis.threads import single_threaded_blas  # noqa: E402
from solver.formulations.relative import RelativeSystem  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
PAPER_TABLE3 = ((0.364863e-04, 0.768031e-04), (0.352150e-04, 0.732973e-04), (0.339175e-04, 0.676080e-04),
                (0.345843e-04, 0.624957e-04), (0.342007e-04, 0.539778e-04), (0.336119e-04, 0.417999e-04),
                (0.496852e-04, 0.563670e-04))


# ---- per-joint reactions, numpy ------------------------------------------------------------------
def nonrecursive_np(i, n, K, L, Ydd_i, KBq):
    """Eq. (30) for joint i (0-based edge) of an n-joint chain; KBq[l] = (K_l B_l) q̈_l."""
    R = K[i] @ Ydd_i - L[i]
    for l in range(i + 1, n):
        R += KBq[l]
    return R


def nonrecursive_np_kb(i, n, K, L, Ydd_i, KB, qdd):
    """Eq. (30) with the scaling (K_l B_l) · q̈_l done here (6 mult per outer joint)."""
    R = K[i] @ Ydd_i - L[i]
    for l in range(i + 1, n):
        R += KB[l] * qdd[l]
    return R


def newton_euler_np(i, n, Mh, Qh, Ydd):
    """Eq. (28) swept from the tip body n down to joint i."""
    R = Mh[n - 1] @ Ydd[n - 1] - Qh[n - 1]
    for l in range(n - 2, i - 1, -1):
        R = Mh[l] @ Ydd[l] - Qh[l] + R
    return R


# ---- per-joint reactions, scalar Python with operation counters ----------------------------------
class Count:
    mult = 0
    add = 0


def _matvec_minus(A, x, b, R, count):
    """R = A x − b (6×6 · 6): 36 mult, 30 + 6 add."""
    for r in range(6):
        row = A[r]
        s = row[0] * x[0]
        for c in range(1, 6):
            s += row[c] * x[c]
        R[r] = s - b[r]
    if count is not None:
        count.mult += 36
        count.add += 36


def nonrecursive_py(i, n, K, L, Ydd_i, KB, qdd, count=None):
    R = [0.0] * 6
    _matvec_minus(K[i], Ydd_i, L[i], R, count)
    for l in range(i + 1, n):
        kb, a = KB[l], qdd[l]
        for r in range(6):
            R[r] += kb[r] * a
        if count is not None:
            count.mult += 6
            count.add += 6
    return R


def newton_euler_py(i, n, Mh, Qh, Ydd, count=None):
    R = [0.0] * 6
    _matvec_minus(Mh[n - 1], Ydd[n - 1], Qh[n - 1], R, count)
    T = [0.0] * 6
    for l in range(n - 2, i - 1, -1):
        _matvec_minus(Mh[l], Ydd[l], Qh[l], T, count)
        for r in range(6):
            R[r] += T[r]
        if count is not None:
            count.add += 6
    return R


# ---- bench -----------------------------------------------------------------------------------------
def states():
    model = solver.load_model(os.path.join(ROOT, "sample_models", "rrc_arm_case1.mbs.json"))
    res = solver.simulate(model, formulation="relative", t_end=0.5, output_step=0.05)
    return model, [(res.coordinates[k], res.velocities[k], res.accelerations[k], res.t[k])
                   for k in range(1, len(res.t))]


def terms(S, q, qd, qdd, t):
    """The EoM terms of one state (what RelativeSystem.postprocess has at hand)."""
    kin = S.kinematics(q, qd)
    K = S._K(kin)
    Qh = S._Qhat(kin, t)
    L = S._L(kin, K, Qh)
    Ydd = S._accelerations(kin, qdd)
    n = len(S.topology.edges)
    child = [e.child for e in S.topology.edges]
    KB = [(K[e] @ kin.B[e])[:, 0] for e in range(n)]          # computed for M anyway (1-DOF joints)
    qe = np.array([qdd[S.cols[e][0]] for e in range(n)])
    Mh = [S.state_mass(kin, b) for b in child]
    return dict(kin=kin, K=K, L=L, Qh=[Qh[b] for b in child], Ydd=[Ydd[b] for b in child], KB=KB,
                KBq=[KB[e] * qe[e] for e in range(n)], qdd=qe, Mh=Mh, n=n, Qh_all=Qh, Ydd_all=Ydd,
                qdd_full=qdd)


def best_of(fn, number, repeat=5):
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number


def main():
    model, sts = states()
    S = RelativeSystem(model)
    T = [terms(S, *s) for s in sts]
    n = T[0]["n"]
    # correctness against the solver's all-joint arrays
    worst = 0.0
    for tm in T:
        ref = S._reactions_nonrecursive(tm["kin"], tm["K"], tm["L"], tm["Ydd_all"], tm["qdd_full"])
        for i in range(n):
            a = nonrecursive_np(i, n, tm["K"], tm["L"], tm["Ydd"][i], tm["KBq"])
            b = newton_euler_np(i, n, tm["Mh"], tm["Qh"], tm["Ydd"])
            c = np.array(nonrecursive_py(i, n, tm["K"], tm["L"], tm["Ydd"][i], tm["KB"], tm["qdd"]))
            d = np.array(newton_euler_py(i, n, tm["Mh"], tm["Qh"], tm["Ydd"]))
            scale = np.abs(ref).max()
            worst = max(worst, *(np.abs(x - ref[i]).max() / scale for x in (a, b, c, d)))
    print(f"RRC arm, {n} joints, {len(T)} states of case 1; per-joint results vs the solver's arrays: "
          f"max rel. difference {worst:.1e}\n")

    # Python-list copies for the scalar versions
    P = [dict(K=[m.tolist() for m in tm["K"]], L=[v.tolist() for v in tm["L"]], Ydd=[v.tolist() for v in tm["Ydd"]],
              KB=[v.tolist() for v in tm["KB"]], qdd=tm["qdd"].tolist(), Mh=[m.tolist() for m in tm["Mh"]],
              Qh=[v.tolist() for v in tm["Qh"]]) for tm in T]

    print("Table 1 operation counts (counted by the scalar code = formula):")
    print(f"{'joint':>5} {'prop. mult':>10} {'prop. add':>10} {'NE mult':>8} {'NE add':>8}   "
          f"{'6(n-i)+36':>9} {'36(n-i)+36':>10} {'42(n-i)+36':>10}  {'NE/prop (mult+add)':>18}")
    for i in range(n):
        cp, cn = Count(), Count()
        p = P[0]
        nonrecursive_py(i, n, p["K"], p["L"], p["Ydd"][i], p["KB"], p["qdd"], cp)
        newton_euler_py(i, n, p["Mh"], p["Qh"], p["Ydd"], cn)
        k = n - (i + 1)
        print(f"{i + 1:>5} {cp.mult:>10} {cp.add:>10} {cn.mult:>8} {cn.add:>8}   {6 * k + 36:>9} {36 * k + 36:>10} "
              f"{42 * k + 36:>10}  {(cn.mult + cn.add) / (cp.mult + cp.add):>18.2f}")
        assert (cp.mult, cp.add, cn.mult, cn.add) == (6 * k + 36, 6 * k + 36, 36 * k + 36, 42 * k + 36)

    print("\nTime per reaction evaluation of joint i (µs; best of 5 repeats, averaged over the states):")
    print(f"{'joint':>5} | {'numpy eq.30':>11} {'numpy NE':>9} {'ratio':>6} | {'scalar eq.30':>12} "
          f"{'scalar NE':>9} {'ratio':>6} | {'paper eq.30':>11} {'paper NE':>9} {'ratio':>6}")
    number = 2000
    for i in range(n):
        tn = tp = sn = sp = 0.0
        for tm, p in zip(T, P):
            K, L, Ydd_i, KBq, Mh, Qh, Ydd = tm["K"], tm["L"], tm["Ydd"][i], tm["KBq"], tm["Mh"], tm["Qh"], tm["Ydd"]
            tp += best_of(lambda: nonrecursive_np(i, n, K, L, Ydd_i, KBq), number)
            tn += best_of(lambda: newton_euler_np(i, n, Mh, Qh, Ydd), number)
            sp += best_of(lambda: nonrecursive_py(i, n, p["K"], p["L"], p["Ydd"][i], p["KB"], p["qdd"]), number)
            sn += best_of(lambda: newton_euler_py(i, n, p["Mh"], p["Qh"], p["Ydd"]), number)
        k = len(T)
        pp, pn = PAPER_TABLE3[i]
        print(f"{i + 1:>5} | {1e6 * tp / k:>11.2f} {1e6 * tn / k:>9.2f} {tn / tp:>6.2f} | {1e6 * sp / k:>12.2f} "
              f"{1e6 * sn / k:>9.2f} {sn / sp:>6.2f} | {1e6 * pp:>11.2f} {1e6 * pn:>9.2f} {pn / pp:>6.3f}")

    print("\nSolver's all-joint functions (all 7 reactions per call; µs, averaged over the states):")
    a = b = 0.0
    for tm in T:
        kin, K, L, Ydd_all, Qh_all = tm["kin"], tm["K"], tm["L"], tm["Ydd_all"], tm["Qh_all"]
        qdd_full = tm["qdd_full"]
        a += best_of(lambda: S._reactions_nonrecursive(kin, K, L, Ydd_all, qdd_full), 500)
        b += best_of(lambda: S._reactions_newton_euler(kin, Qh_all, Ydd_all), 500)
    k = len(T)
    print(f"  _reactions_nonrecursive {1e6 * a / k:8.1f}   _reactions_newton_euler {1e6 * b / k:8.1f}   "
          f"ratio NE/eq.30 {b / a:.2f}")
    q, qd, qdd, t = sts[-1]
    lam = np.zeros(S.m)
    t0 = time.perf_counter()
    for _ in range(50):
        S._cache.clear()
        S.postprocess(q, qd, qdd, lam, t)
    print(f"  whole postprocess (kinematics, K, L, reactions, energies): {1e6 * (time.perf_counter() - t0) / 50:.0f} µs")


if __name__ == "__main__":
    with single_threaded_blas():
        main()
