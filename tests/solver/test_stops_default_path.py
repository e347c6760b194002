"""Stiff joint stops on the default path (generated kernels, the compiled DOP853 loop, issue #28).

The KUKA iiwa of tests/solver/robots.py imported from its URDF, limits enforced as stops
(k = 1e5 N·m/rad), released upright with joint 2 turning: it falls onto its stops.  DOP853 steps long
between the impacts, and an explicit trial stage of a long step into a stop runs away (the stages
reached |y| ≈ 1e186; the open tree's accelerations overflowed at t = 1.52 s undamped, 1.87 s with the
import's damping) — the run used to end there with "non-finite forces".  A stage whose forces or
accelerations are not finite now refuses the step like a failed stage Newton (step_rules.STAGE_RETRIES).

Checked against what the integrator does not decide:
- undamped stops conserve energy (kinetic + gravity + the stops' k δ²/2): the run's total energy stays
  at its start to the integration error.  DOP853 at rtol 1e-8 crosses each kink of the force at δ = 0
  without locating it and loses ≈ 1e-6 of the energy per crossing (docs/contact.md); a few tens of
  crossings: ≤ 1e-5 of the largest kinetic energy (measured 5e-7);
- damped stops (the import's c = 100 N·m·s/rad) only dissipate: the total energy never rises (same
  bound) while it falls by tens of joules;
- the arm ends within its limits, past them only by its stops' penetration.
"""
import sys
from pathlib import Path

import numpy as np
import pytest

import solver
from solver.io.urdf import read_urdf

sys.path.insert(0, str(Path(__file__).resolve().parent))
from robots import iiwa_urdf, write  # noqa: E402

T_END = 2.5                # past both failures (1.52 s, 1.87 s)
OUTPUT_STEP = 0.02         # the stops' loads are post-processed state by state in Python (≈ 1 ms each)


@pytest.fixture(scope="module")
def arm(tmp_path_factory):
    return read_urdf(write(tmp_path_factory.mktemp("iiwa"), iiwa_urdf())).model


def fall(model, damping):
    m = model.copy()
    for j in m.joints.values():
        if j.type == "revolute":
            m.set_field(j.name, "stop_damping", damping)
    res = solver.simulate(m, t_end=T_END, output_step=OUTPUT_STEP)
    assert res.status == "ok" and res.t[-1] == pytest.approx(T_END)
    assert any(e["message"].startswith("step loop in C") for e in res.events)
    return m, res


def test_iiwa_on_undamped_limit_stops_runs_through_the_impacts_and_keeps_its_energy(arm):
    m, res = fall(arm, 0.0)
    free = arm.copy()
    for j in free.joints.values():
        free.set_field(j.name, "lower_limit", None)
        free.set_field(j.name, "upper_limit", None)
    unstopped = solver.simulate(free, t_end=T_END, output_step=OUTPUT_STEP)
    turned = solver.output(m, "joints.joint_2.rotation").evaluate
    assert np.max(np.abs(turned(res, m) - turned(unstopped, free))) > 0.5      # the stops turned it back
    E, kinetic = res.energy["total"], res.energy["kinetic"]
    assert np.max(np.abs(E - E[0])) < 1e-5 * np.max(kinetic)           # measured 3.5e-5 J of 66 J


def test_iiwa_on_its_damped_urdf_stops_only_loses_energy(arm):
    m, res = fall(arm, arm.joints["joint_2"].stop_damping)
    E, kinetic = res.energy["total"], res.energy["kinetic"]
    assert E[0] - E[-1] > 10.0                                           # measured 80 J dissipated
    assert np.max(E - np.minimum.accumulate(E)) < 1e-5 * np.max(kinetic)   # never rises: measured 3e-7 J
    for j in m.joints.values():                                          # at rest within its limits' stops
        if j.type == "revolute":
            angle = solver.output(m, f"joints.{j.name}.rotation").evaluate(res, m)[-1]
            assert abs(angle) < j.upper_limit + 0.03, j.name
