"""Fuzz seed 1047 (bench/fuzz.py --bodies 3): the compiled DOP853 loop stopped where LSODA and BDF pass.

A rigid body on a cylindrical joint to ground closed by a distance link to ground, a flexible beam
hinged to it, bushing, forces and an actuator, no gravity.  On the generated Cartesian kernels
(the only formulation of flexible bodies) integrator "auto" (DOP853 stepped in C) failed at
t = 0.118 s: "QR partitioning cannot get past this configuration (25 re-partitions in a row; last:
position Newton did not converge (max |Φ| = 2.22e+06)) … try partitioning='qr' or 'hybrid'".

Cause: a trial stage of a step too long for its Newton start (the last accepted state moved along
q̇: max |Φ| = 2.2e6 on a model a few cm across) failed its position Newton; the compiled loop then
re-partitioned and restarted from the same state, where dp_initial_step chose the same long step
again — 25 times.  LSODA and BDF restart from a small first step, so they passed.  Fix
(segment.c, step_rules.STAGE_RETRIES): a stage's failed Newton first retries the step
BRANCH_SHRINK times shorter, up to STAGE_RETRIES times, as a refused branch does.  Now "auto"
runs to 0.25 s in ≈ 1 s and agrees with "adams" and "bdf" to 4.3e-9 m (positions up to 0.14 m).
(The generic reference at rtol 1e-10 does not finish in 20 s; the model is the generator's seed.)
Run from the repository root:

    .venv/bin/python tests/solver/regressions/compiled_dop853_flexible_stops.py
"""
import os
import sys

sys.path.insert(0, ".")
sys.path.insert(0, os.path.join("tests", "solver"))
import solver  # noqa: E402
from random_mechanisms import random_mechanism  # noqa: E402

T_END = 0.25


def run(integrator="auto"):
    """Seed 1047 on the generated Cartesian kernels with ``integrator`` (its default tolerances)."""
    model = random_mechanism(1047, max_bodies=3)
    return solver.simulate(model, t_end=T_END, formulation="cartesian", codegen="on", integrator=integrator)


if __name__ == "__main__":
    for integrator in ("auto", "adams", "bdf"):
        try:
            print(integrator, "ran to", run(integrator).t[-1])
        except solver.SolverError as exc:
            print(integrator, "SolverError:", exc)
