"""Fuzz seed 70 (fast set), minimized: LSODA ("adams") takes ~10^4× more steps since the branch rule.

One body on a screw joint to ground, turned by a rotational spring, no gravity.  At 32c2c81 (before
solver/formulations/branches.py) LSODA takes ~70 steps over 0.1 s, as DOP853 does; at 0a3704c it
takes tens of thousands and its reactions drift off the reference.  Run from the repository root:

    .venv/bin/python tests/solver/regressions/lsoda_branch_rule_steps.py
"""
import sys
import time

sys.path.insert(0, ".")
import solver  # noqa: E402


def model(kind="screw", spring=True):
    m = solver.Model(name="lsoda_steps", gravity=(0.0, 0.0, 0.0))
    m.add_body("b0", mass=11.0, inertia=(4e-4, 3e-4, 2e-4), position=(0.006, 0.006, -0.014),
               angular_velocity=(0.74, -1.36, -0.61))
    axis = (-0.4428, 0.8195, 0.3638)
    m.add_joint("j0", kind, "ground", "b0", origin=(0.0, 0.0107, -0.0124), axis=axis, pitch=0.0284)
    if spring:
        m.add_rotational_spring_damper("spring", "j0", stiffness=17.5, free_angle=-0.42)
    return m


if __name__ == "__main__":
    for kind in ("screw", "revolute"):
        for spring in (True, False):
            for integrator in ("adams", "dop853"):
                t0 = time.perf_counter()
                try:
                    r = solver.simulate(model(kind, spring), t_end=0.1, codegen="off", formulation="relative",
                                        integrator=integrator)
                    print(f"{kind:9} spring={spring!s:5} {integrator:7} steps {len(r.step_sizes[0]):7d} "
                          f"{time.perf_counter() - t0:6.1f} s  F(j0) at 0.05 s {r.joint_reaction('j0')[0][5]}")
                except solver.SolverError as exc:
                    print(kind, spring, integrator, "SolverError", exc)
