"""Fuzz seed 70 (fast set), minimized: LSODA ("adams") takes 10^2-10^4x more steps since the branch rule.

One body on a screw (or revolute) joint to ground, turned by a rotational spring, no gravity, the
generic relative path.  Measured on the 2-core machine under load:

    joint     spring  integrator  32c2c81 (before branches.py)   0a3704c
    screw     yes     adams       195 steps over 0.1 s (1.4 s)    62269 steps over 0.1 s (360 s)
    revolute  yes     adams       238 steps over 0.1 s (1.1 s)    8650 steps over 0.02 s (53 s)
    screw     yes     dop853      32 steps                        32 steps
    screw     no      adams       6 steps                         6 steps

Any unwrapped angle does it (screw joint, rotational spring, rotation driver: fuzz seeds 1, 19, 31,
37, 70, 79, 97 of the fast set, 1025 of the sweep: 66281 steps instead of 71 on the Cartesian
generated path), and the runs drift off the reference (seed 70: reaction 8.8× the bound; seed 1025:
angular velocity 1.4e-4 rad/s off where 32c2c81 was 7.7e-8).  This script runs 0.02 s of each case
(about a minute at 0a3704c).  Run from the repository root:

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
    for kind, spring, integrator in (("screw", True, "adams"), ("revolute", True, "adams"),
                                     ("screw", True, "dop853"), ("screw", False, "adams")):
        t0 = time.perf_counter()
        r = solver.simulate(model(kind, spring), t_end=0.02, codegen="off", formulation="relative",
                            integrator=integrator)
        print(f"{kind:9} spring={spring!s:5} {integrator:7} steps {len(r.step_sizes[0]):7d} "
              f"{time.perf_counter() - t0:6.1f} s")
