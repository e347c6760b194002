"""Would locating contact onset and separation help DOP853?  (issue #28 item 4: "the adaptive
integrators locate contact onset and separation instead of stepping across them")

A ball (m = 0.5 kg, R = 0.05 m) dropped from 0.2 m onto a compliant floor, 2 s of bounces, as one
degree of freedom x (height of the centre), penetration δ = R − x, with the laws of
solver.contact.laws (Hunt & Crossley (1975): f = k δ^e (1 + λ δ̇); Adams IMPACT: k δ^e + STEP(δ; 0,
0, d, c) δ̇; clipped at 0).  scipy's DOP853 (the compiled loop's method, same step control)
integrates it two ways:

- stepping across the kinks at δ = 0 (what simulate does: the force is continuous there, the step
  control resolves the contact);
- with the crossings located (solve_ivp's terminal event on δ = 0, found on the dense output) and
  the integration restarted there, so no step holds a kink (Hairer, Nørsett & Wanner, Solving ODE I
  (1993), §II.6).

Prints per law and rtol: the error of the state at 2 s and of the energy (undamped: its drift)
against the located run at rtol 1e-13, and the right-hand sides spent.

Usage:  nice -n 10 python bench/contact_events.py
"""
from __future__ import annotations

import numpy as np
from scipy.integrate import solve_ivp

G, MASS, K, RADIUS, DROP, T_END = 9.81, 0.5, 1e6, 0.05, 0.2, 2.0
LAWS = {"Hertz e=1.5, undamped": dict(e=1.5), "Hunt–Crossley e=1.5, λ=0.3 s/m": dict(e=1.5, lam=0.3),
        "IMPACT e=1, c=20 N·s/m, d=1 mm": dict(e=1.0, c=20.0, d=1e-3), "linear e=1, undamped": dict(e=1.0)}


def rate(e, lam=0.0, c=0.0, d=1e-3):
    def f(t, y):
        x, v = y
        delta = RADIUS - x
        force = 0.0
        if delta > 0.0:
            s = min(delta / d, 1.0)
            force = max(K * delta ** e * (1.0 + lam * -v) + c * s * s * (3.0 - 2.0 * s) * -v, 0.0)
        return [v, -G + force / MASS]
    return f


def energy(y, e):
    delta = max(RADIUS - y[0], 0.0)
    return 0.5 * MASS * y[1] ** 2 + MASS * G * y[0] + K * delta ** (e + 1.0) / (e + 1.0)


def drop(law, rtol, located):
    """(state at T_END, right-hand sides)."""
    f = rate(**law)

    def gap(t, y):
        return y[0] - RADIUS
    gap.terminal = True
    t, y, nfev = 0.0, np.array([DROP, 0.0]), 0
    while t < T_END:
        sol = solve_ivp(f, (t, T_END), y, method="DOP853", rtol=rtol, atol=1e-2 * rtol,
                        events=gap if located else None)
        nfev += sol.nfev
        t, y = sol.t[-1], sol.y[:, -1]
        if located and sol.status == 1:        # at the crossing: a first tiny step to its other side
            t, y = sol.t_events[0][0], sol.y_events[0][0]
            past = solve_ivp(f, (t, t + 1e-9), y, method="DOP853", rtol=rtol, atol=1e-2 * rtol)
            nfev += past.nfev
            t, y = past.t[-1], past.y[:, -1]
    return y, nfev


def main():
    print(f"{'law':34s} {'crossings':10s} {'rtol':>6s} {'|Δx| m':>9s} {'|Δv| m/s':>9s} {'|ΔE|/E':>8s} {'rhs':>6s}")
    for label, law in LAWS.items():
        ref = drop(law, 1e-13, True)[0]
        for rtol in (1e-6, 1e-8):
            for located in (False, True):
                y, nfev = drop(law, rtol, located)
                dE = abs(energy(y, law["e"]) - energy(ref, law["e"])) / energy(ref, law["e"])
                print(f"{label:34s} {'located' if located else 'stepped':10s} {rtol:6.0e} {abs(y[0] - ref[0]):9.2e} "
                      f"{abs(y[1] - ref[1]):9.2e} {dE:8.1e} {nfev:6d}")


if __name__ == "__main__":
    main()
