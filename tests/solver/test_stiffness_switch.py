"""Stiffness-aware "auto" (issue #32 item 3): the compiled DOP853 loop detects a step size held by
stability (Hairer's h·ρ test, dopri.c dp_stiffness; step_rules.STIFF_*) and the run goes on with BDF.

Reference: the overdamped spring–damper m ẍ + c ẋ + k (x − L) = 0, x(0) − L = d, ẋ(0) = 0, in closed
form x − L = d (λ₂ e^{λ₁t} − λ₁ e^{λ₂t}) / (λ₂ − λ₁), λ₁,₂ = (−c ± √(c² − 4km)) / 2m.  With k = 10⁴,
c = 10³, m = 1: λ ≈ −10.1 and −990, so DOP853's step is held near 6.1 / 990 s by the fast mode
long after it has decayed (stiff).

Contact models switch too (issue #28): BDF's steps keep the contact step cap (conservative
advancement, ContactSet.step_cap, contact.c cc_step_cap), checked against its closed form on a ball
flying at a thin plate beside the stiff slider; the Geneva wheel indexes on "auto" after its switch
(tests/solver/test_contact_tunnelling.py)."""
import numpy as np
import pytest

import solver
from solver.analysis.step_rules import STIFF_INTEGRATOR

K, C, M, L, D = 1e4, 1e3, 1.0, 1.0, 0.1


def stiff_slider():
    m = solver.Model(name="stiff_slider", gravity=(0, 0, 0))
    m.add_body("slider", mass=M, inertia=(1e-2,) * 3, position=(L + D, 0.0, 0.0))
    m.add_joint("rail", "prismatic", "ground", "slider", axis=(1, 0, 0))
    m.add_spring_damper("spring", "ground", "slider", point_j=(L + D, 0.0, 0.0), stiffness=K, damping=C,
                        free_length=L)
    for key, value in {"t_end": 1.0, "output_step": 0.01, "rtol": 1e-6, "atol": 1e-8}.items():
        m.settings.set(key, value)
    return m


def closed_form(t):
    root = np.sqrt(C * C - 4 * K * M)
    l1, l2 = (-C + root) / (2 * M), (-C - root) / (2 * M)
    return L + D * (l2 * np.exp(l1 * t) - l1 * np.exp(l2 * t)) / (l2 - l1)


def integrator_events(res):
    return [e["message"] for e in res.events if e["kind"] == "integrator"]


def test_auto_switches_to_bdf_on_a_stiff_spring_damper_and_keeps_the_closed_form():
    compiled = solver.compile_model(stiff_slider())
    res = solver.simulate(compiled)
    events = integrator_events(res)
    assert events[0].startswith("step loop in C")
    assert any(e.startswith(f"switched to {STIFF_INTEGRATOR} (stiff: h·ρ ≈ ") for e in events), events
    x = res.body_position("slider")[:, 0]
    # BDF's local error is held at rtol·|x| + atol per step; the decaying motion does not accumulate it
    # beyond ten steps' worth: 10 × (rtol·(L + D) + atol) (measured: 4e-8)
    assert np.abs(x - closed_form(res.t)).max() < 10 * (1e-6 * (L + D) + 1e-8)
    # the explicit methods are held at their stability boundary (h·|λ₂| ≈ 6.4 for DOP853, 324 DOPRI5 steps);
    # the switched run takes 109
    explicit = solver.simulate(compiled, integrator="rk45")
    assert not any(e.startswith("switched") for e in integrator_events(explicit))     # only "auto" switches
    assert res.meta["steps"] < explicit.meta["steps"] / 2


def test_auto_keeps_dop853_on_a_non_stiff_pendulum():
    model = solver.load_model("sample_models/pendulum.mbs.json")
    res = solver.simulate(model, integrator="auto", t_end=2.0)
    events = integrator_events(res)
    assert events == ["step loop in C (Dormand–Prince 8(5,3))"], events


def python_loop_bdf(monkeypatch):
    """scipy's BDF in the Python loop on the same compiled right-hand side (what "bdf" was before bdf.c)."""
    from solver.codegen import segment
    monkeypatch.setattr(segment, "COMPILED", {k: v for k, v in segment.COMPILED.items() if k != "bdf"})


def test_bdf_steps_in_the_compiled_loop_and_keeps_the_closed_form(monkeypatch):
    """integrator="bdf" runs bdf.c in the compiled loop: the spring–damper within the same bound as the
    switched run, and as scipy's BDF (Python loop, same compiled right-hand side) — the same algorithm
    (Shampine & Reichelt 1997), so the same step count up to the Jacobians' round-off."""
    compiled = solver.compile_model(stiff_slider(), integrator="bdf")
    res = solver.simulate(compiled)
    assert integrator_events(res) == ["step loop in C (BDF/NDF orders 1–5)"]
    bound = 10 * (1e-6 * (L + D) + 1e-8)
    x = res.body_position("slider")[:, 0]
    assert np.abs(x - closed_form(res.t)).max() < bound
    python_loop_bdf(monkeypatch)
    scipy_bdf = solver.simulate(compiled)
    assert integrator_events(scipy_bdf) == []            # no compiled step loop
    assert np.abs(scipy_bdf.body_position("slider")[:, 0] - closed_form(res.t)).max() < bound
    assert abs(res.meta["steps"] - scipy_bdf.meta["steps"]) <= 0.1 * scipy_bdf.meta["steps"]


def test_the_car_on_compiled_bdf_agrees_with_radau_and_scipy_bdf(monkeypatch):
    """The 14-body car over its first second at rtol 1e-6 against Radau at rtol 1e-10 (an atol 1e-10
    reference gives the same errors to three digits): "auto" (DOP853, the switch at t ≈ 0.2 s, then
    bdf.c), "bdf" (bdf.c from the start) and scipy's BDF in the Python loop, every body position within
    10 · (rtol · largest position + atol), the spring–damper's bound (measured: 4.1e-6, 8.3e-7 and
    8.3e-7 m against 1.4e-4 m); bdf.c and scipy's BDF take the same steps (63 and 63)."""
    model = solver.load_model("sample_models/vehicle_cae_tc.mbs.json")
    model.settings.set("t_end", 1.0)
    model.settings.set("rtol", 1e-6)

    def positions(res):
        return np.stack([res.body_position(b) for b in res.body_names], axis=1)

    reference = positions(solver.simulate(model, integrator="radau", rtol=1e-10))
    bound = 10 * (1e-6 * np.abs(reference).max() + model.settings.atol)
    auto = solver.simulate(model, integrator="auto")       # (the sample is saved with "bdf")
    assert any(e.startswith("switched to bdf") for e in integrator_events(auto))
    bdf = solver.simulate(model, integrator="bdf")
    assert integrator_events(bdf) == ["step loop in C (BDF/NDF orders 1–5)"]
    python_loop_bdf(monkeypatch)
    scipy_bdf = solver.simulate(model, integrator="bdf")
    for res in (auto, bdf, scipy_bdf):
        assert np.abs(positions(res) - reference).max() < bound
    assert abs(bdf.meta["steps"] - scipy_bdf.meta["steps"]) <= 0.1 * scipy_bdf.meta["steps"]


SPEED, RADIUS, PLATE, AT = 10.0, 0.01, 0.002, 3.0
PLATE_BOUND = np.sqrt(2 * 0.1 ** 2 + (PLATE / 2) ** 2)     # the 2 mm × 0.2 m × 0.2 m plate's bounding radius


def stiff_slider_and_shot():
    """The stiff slider, and apart from it a 10 mm ball at 10 m/s towards a 2 mm plate 3 m away (no gravity):
    DOP853 switches to BDF at t ≈ 0.13 s, the ball reaches the plate at t ≈ 0.3 s."""
    m = stiff_slider()
    m.add_body("ball", mass=0.1, inertia=(1e-5,) * 3, position=(0.0, 1.0, 0.0), velocity=(SPEED, 0.0, 0.0),
               geometry={"shape": "sphere", "radius": RADIUS})
    m.add_body("plate", mass=1.0, inertia=(1e-3,) * 3, position=(AT, 1.0, 0.0),
               geometry={"shape": "box", "size": [PLATE, 0.2, 0.2]})
    m.add_joint("held", "fixed", "ground", "plate")
    m.add_contact("hit", "plate", "ball", stiffness=1e7, damping=0.0, exponent=1.5)
    m.settings.set("t_end", 0.5)
    return m


def test_auto_switches_on_a_contact_model_and_bdf_keeps_the_contact_step_cap():
    """After the switch, until the ball touches the plate, every BDF step h from t − h is within the
    conservative-advancement bound at its start, (g + w)/s with g = AT − SPEED (t − h) − RADIUS − PLATE_BOUND,
    w = PLATE/2, s = SPEED (the ball flies uniformly); BDF's own steps grow to 14 ms, six times the 2.2 ms
    in which the ball crosses the plate, so without the cap it would tunnel.  The ball rebounds at 10 m/s
    (undamped) with the slider on its closed form."""
    res = solver.simulate(stiff_slider_and_shot())
    switched = [e["time"] for e in res.events if e["message"].startswith(f"switched to {STIFF_INTEGRATOR}")]
    assert len(switched) == 1 and switched[0] < 0.2, res.events
    t, h = res.step_sizes
    start = t - h
    touch = (AT - PLATE / 2 - RADIUS) / SPEED
    flight = (start > switched[0]) & (t < touch)
    gap = AT - SPEED * start[flight] - RADIUS - PLATE_BOUND
    cap = (np.maximum(gap, 0.0) + PLATE / 2) / SPEED
    assert flight.sum() > 20
    assert np.all(h[flight] <= cap * (1 + 1e-9))
    assert h[start > switched[0]].max() > 2 * (PLATE + 2 * RADIUS) / SPEED      # BDF's steps could tunnel
    assert res.body_velocity("ball")[-1, 0] == pytest.approx(-SPEED, rel=1e-4)    # measured 1.2e-5
    x = res.body_position("slider")[:, 0]
    assert np.abs(x - closed_form(res.t)).max() < 10 * (1e-6 * (L + D) + 1e-8)


def test_auto_switches_on_box_on_ramp_and_agrees_with_a_tight_dop853_run():
    """The box's stiction holds DOP853 at its stability boundary: "auto" switches (t ≈ 0.33 s) and stays
    within 10 · (rtol · largest position + atol) of DOP853 at rtol 1e-10 (measured 2e-9 m at rtol 1e-8)."""
    model = solver.load_model("sample_models/box_on_ramp.mbs.json")

    def positions(res):
        return np.stack([res.body_position(b) for b in res.body_names], axis=1)

    reference = positions(solver.simulate(model, integrator="rk", rtol=1e-10))
    res = solver.simulate(model)
    assert any(e.startswith("switched to bdf") for e in integrator_events(res))
    rtol, atol = model.settings.rtol, model.settings.atol
    assert np.abs(positions(res) - reference).max() < 10 * (rtol * np.abs(reference).max() + atol)
