"""Fuzz seed 1047 (bench/fuzz.py --bodies 3): the compiled DOP853 loop stops where LSODA and BDF pass.

A rigid body on a cylindrical joint to ground closed by a distance link to ground, a flexible beam
hinged to it, bushing, forces and an actuator, no gravity.  On the generated Cartesian kernels
(the only formulation of flexible bodies) integrator "auto" (DOP853 stepped in C) fails at
t = 0.118 s: "QR partitioning cannot get past this configuration (25 re-partitions in a row; last:
position Newton did not converge (max |Φ| = 2.22e+06)) … try partitioning='qr' or 'hybrid'" — a
Newton residual of 2e6 on a model a few cm across (a step far too long for its prediction), and a
hint to try the partitioning it already uses.  "adams" and "bdf" on the same kernels run to 0.25 s.
(The generic reference at rtol 1e-10 did not finish in 20 s; not minimized yet: the model is the
generator's seed.)  Run from the repository root:

    .venv/bin/python tests/solver/regressions/compiled_dop853_flexible_stops.py
"""
import os
import sys

sys.path.insert(0, ".")
sys.path.insert(0, os.path.join("tests", "solver"))
import solver  # noqa: E402
from random_mechanisms import random_mechanism  # noqa: E402

if __name__ == "__main__":
    model = random_mechanism(1047, max_bodies=3)
    for integrator in ("auto", "adams", "bdf"):
        try:
            r = solver.simulate(model, t_end=0.25, formulation="cartesian", codegen="on", integrator=integrator)
            print(integrator, "ran to", r.t[-1])
        except solver.SolverError as exc:
            print(integrator, "SolverError:", exc)
