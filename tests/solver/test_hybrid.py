"""Hybrid LU↔QR partitioning (Kim & Yoo (1997), steps 1–14; solver/analysis/hybrid.py): which models
count as conservative for the energy criterion (b), criterion (b) itself on the rigid singular
four-bar (where LU that keeps its first independent set gains energy at the second flattened
passage), LU renewing that set before the passage (Partition.degraded's ‖∂q/∂z‖ rule), and
hybrid's cost against QR and LU on the same run."""
import os
import sys

import numpy as np
import pytest
import solver
from solver.analysis import dynamics, hybrid
from solver.compile import compile_model

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tools"))
import make_samples  # noqa: E402

KW = dict(output_step=0.01, rtol=1e-8, atol=1e-10)


def conserved(model):
    return hybrid.energy_conserved(compile_model(model, codegen="off").system)


def test_energy_criterion_applies_only_to_conservative_models():
    """Gravity, undamped springs and bushings of isotropic rotational stiffness conserve T + V;
    dampers, drivers (rheonomic constraints), applied loads, actuator forces f(t), anisotropic
    rotational bushing stiffness (test_bushing_energy.py) and modal damping do not."""
    assert conserved(make_samples.fourbar_singular_rigid())
    assert conserved(make_samples.fourbar_singular_flexible())
    m = make_samples.fourbar_singular_rigid()
    m.add_spring_damper("k", "ground", "coupler", point_i=(0.5, 1.0, 0.0), point_j=(1.4, 0.17, 0.0),
                        stiffness=50.0, preload=3.0)
    m.add_rotational_spring_damper("kr", "A", stiffness=2.0)
    m.add_bushing("b", "crank", "coupler", origin=(0.98, 0.17, 0.0), stiffness=(1e3,) * 6)
    assert conserved(m)
    for change in (lambda m: m.element("k").set("damping", 0.5),
                   lambda m: m.element("k").set("force", "2*t"),
                   lambda m: m.element("kr").set("damping", 0.1),
                   lambda m: m.element("b").set("damping", (0.0, 0.0, 0.0, 0.0, 0.0, 0.1)),
                   lambda m: m.element("b").set("stiffness", (1e3, 1e3, 1e3, 1e3, 2e3, 1e3)),
                   lambda m: m.add_force("f", "coupler", force=(0.0, -1.0, 0.0)),
                   lambda m: m.add_driver("d", "A", "-0.5*t")):
        changed = m.copy()
        change(changed)
        assert not conserved(changed)
    flex = make_samples.fourbar_singular_flexible()
    flex.element("coupler").set("damping_ratio", 0.01)
    assert not conserved(flex)


@pytest.mark.slow
def test_energy_criterion_switches_before_lu_gains_energy(monkeypatch):
    """Rigid singular four-bar through its second flattened passage (≈ 0.97 s), LU without the
    ‖∂q/∂z‖ re-partitioning (it keeps its first independent set, stationary there): LU alone used to
    gain 1.6e-4 of the kinetic scale there (Kim & Yoo (1997), Fig. 14); its velocities, ż ≈ 0 times a
    large ∂q/∂z, jump from step to step, which the velocity-continuity rule
    (branches.velocity_jump) refuses, so LU alone now stops there with a collapsed step size
    instead of a quiet energy error.  With only criterion (b) active (the step-size criteria
    disabled) hybrid switches to QR on the energy change, at the passage, and ends within 1e-3
    (measured 4.6e-4; 2.2e-5 with the position Newton bound at 1e-10 instead of atol / 10: what LU
    gains in its last steps before the switch, in that ill-conditioned stretch, follows rounding),
    back in LU after it."""
    monkeypatch.setattr(dynamics, "AMPLIFICATION_GROWTH", np.inf)
    monkeypatch.setattr(dynamics.Run, "python_loop", ("adams",))     # scipy's LSODA: the Python loop's rules
    model = make_samples.fourbar_singular_rigid()
    with pytest.raises(solver.SolverError) as lu:
        solver.simulate(model, t_end=1.05, partitioning="lu", **KW)
    assert lu.value.kind == "step_collapse" and 0.95 < lu.value.time < 1.0
    monkeypatch.setattr(hybrid, "SLOW", 0.0)
    monkeypatch.setattr(hybrid, "DECLINE", 0.0)
    monkeypatch.setattr(hybrid, "COLLAPSE", 0.0)
    hy = solver.simulate(model, t_end=1.05, partitioning="hybrid", **KW)
    switches = [e for e in hy.events if e["kind"] == "switch"]
    assert switches[0]["message"].startswith("lu -> qr: total energy changed by")
    assert 0.95 < switches[0]["time"] < 1.0
    assert any(e["message"].startswith("qr -> lu") for e in switches)
    assert hy.summary()["energy_drift"] < 1e-3


@pytest.mark.slow
def test_hybrid_costs_about_what_qr_costs_and_agrees_with_it():
    """Rigid singular four-bar, 1.2 s (both flattened passages): hybrid takes at most 15 % more
    steps than QR (measured 138 against 175), keeps QR's energy (< 1e-6; measured 3.0e-7) and its
    trajectory (1e-5 relative; measured 6.8e-8).  It needs no switch: LU renews its independent set
    at 0.83 s, where ‖∂q/∂z‖ has grown fivefold (the coordinate it integrated, the rocker's Euler
    parameter e₃ = sin(θ/2), is stationary where the rocker passes −180°), and passes both passages
    on LU.  Before that rule hybrid
    switched to QR at ≈ 0.97 s on LU's tenfold step drop (179 steps), and LU alone took 338 steps and
    gained 1.6e-4 of the kinetic scale."""
    model = make_samples.fourbar_singular_rigid()
    qr = solver.simulate(model, t_end=1.2, partitioning="qr", **KW)
    hy = solver.simulate(model, t_end=1.2, partitioning="hybrid", **KW)
    assert hy.meta["steps"] <= 1.15 * qr.meta["steps"]
    assert hy.summary()["energy_drift"] < 1e-6
    assert np.max(np.abs(hy.coordinates - qr.coordinates)) < 1e-5 * np.max(np.abs(qr.coordinates))
    renewed = [e for e in hy.events if e["kind"] == "partition" and "lost the motion" in e["message"]]
    assert renewed and 0.7 < renewed[0]["time"] < 0.95
    assert not [e for e in hy.events if e["kind"] == "switch"]


def test_returns_to_lu_back_off_after_an_lu_stretch_that_did_not_pay():
    """return_steps doubles after a short or slow LU stretch (no LU↔QR ping-pong), is capped, and
    is reset after an LU stretch that lasted."""
    model = make_samples.fourbar_singular_rigid()
    sw = hybrid.HybridSwitch(compile_model(model, codegen="off").system, 1e-8)
    assert sw.return_steps == hybrid.RETURN_STEPS
    sw.stretch_steps = 3
    assert sw._to_qr("x", slow=False) == ("qr", "x")
    assert sw.return_steps == 2 * hybrid.RETURN_STEPS
    for _ in range(20):
        sw._to_qr("x", slow=True)
    assert sw.return_steps == hybrid.RETURN_MAX
    sw.stretch_steps = hybrid.SHORT_STRETCH
    sw._to_qr("x", slow=False)
    assert sw.return_steps == hybrid.RETURN_STEPS
