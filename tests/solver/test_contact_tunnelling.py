"""No step carries a contact shape through another (issue #28; ContactSet.step_cap, contact.c's
cc_step_cap: conservative advancement, Mirtich (1996)).

The compliant law acts only where shapes overlap, so a step from one side of a thin shape to the
other sees no contact at either end.  Measured before the cap: a 10 mm ball shot at 10 m/s at a
2 mm plate passed through it under the compiled DOP853 and DOPRI5 loops (5 steps) and LSODA (whose
lowered HMAX binds late: integrators.limit_step sets its TCRIT instead); BDF took 14 steps
over the whole Geneva run and stepped the pin through its slot walls (the wheel never turned) —
which is why the compiled loop's switch to BDF gave a wrong answer with status ok.

Checked against closed forms:
- the cap (g + w)/s of a sphere approaching a box, g the bounding spheres' gap, w the thinner half
  extent, s the approach speed;
- the ball rebounds from the plate: an undamped contact returns the impact speed (10 m/s, within the
  1e-5 the kink at first touch costs at rtol 1e-8: docs/contact.md), the ball never gets past the
  plate's face by more than the Hertz penetration and leaves it after the Hertz impact duration;
- the Geneva wheel indexes −180° over the first 1.5 turns of its crank (the pin in a slot from 1/8 to
  3/8 of each turn) on "auto" (DOP853 in the compiled loop, switched to BDF at 0.47 turn, so BDF
  steps the second engagement within the cap) and on BDF, the two histories agreeing (over the whole
  run each within 3e-7 rad of an rtol 1e-10 run: measured); the sweep tier runs the three turns on
  every integrator.
"""
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.integrate import quad

import solver
from solver.contact.element import ContactPair, ContactSet
from solver.forces import BodyFrames

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import make_samples as S  # noqa: E402

SPEED, RADIUS, PLATE = 10.0, 0.01, 0.002


def shot():
    m = solver.Model(name="shot", gravity=(0.0, 0.0, 0.0))
    m.add_body("ball", mass=0.1, inertia=(1e-5,) * 3, velocity=(SPEED, 0.0, 0.0),
               geometry={"shape": "sphere", "radius": RADIUS})
    m.add_body("plate", mass=1.0, inertia=(1e-3,) * 3, position=(1.0, 0.0, 0.0),
               geometry={"shape": "box", "size": [PLATE, 0.2, 0.2]})
    m.add_joint("held", "fixed", "ground", "plate")
    m.add_contact("hit", "plate", "ball", stiffness=1e7, damping=0.0, exponent=1.5)
    return m


def test_the_step_cap_is_the_conservative_advancement_bound():
    m = shot()
    spec = {**m.forces["hit"].to_dict(), "geometry_i": m.bodies["plate"].geometry,
            "geometry_j": m.bodies["ball"].geometry}
    contact = ContactSet([ContactPair(spec, {"ball": 0, "plate": 1})])
    r = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
    v = np.array([[SPEED, 0.0, 0.0], [0.0, 0.0, 0.0]])
    w = np.array([[0.0, 0.0, 3.0], [0.0, 0.0, 0.0]])            # the ball spinning: + |ω| R
    frames = BodyFrames(r, np.stack([np.eye(3)] * 2), v, w)
    bound = np.sqrt(2 * 0.1 ** 2 + (PLATE / 2) ** 2)
    gap = 1.0 - RADIUS - bound
    assert contact.step_cap(frames) == pytest.approx((gap + PLATE / 2) / (SPEED + 3.0 * RADIUS), rel=1e-14)
    assert contact.step_cap(BodyFrames(r, frames.A, 0 * v, 0 * w)) == np.inf


@pytest.mark.parametrize("integrator", ["auto", "rk45", "bdf", pytest.param("radau", marks=pytest.mark.sweep), "adams"])
def test_a_fast_ball_rebounds_from_a_thin_plate_on_every_integrator(integrator):
    m = shot()
    res = solver.simulate(m, t_end=0.3, output_step=0.01, integrator=integrator)
    x = res.body_position("ball")[:, 0]
    face = 1.0 - PLATE / 2 - RADIUS
    penetration = (1.25 * 0.1 * SPEED ** 2 / 1e7) ** (1 / 2.5)      # ½ m v² = k δ^2.5/2.5
    # Hertz impact duration T_c = 2 (δ_max/v) ∫₀¹ dx/√(1 − x^2.5) (Johnson, Contact Mechanics (1985) §11.4)
    duration = 2 * penetration / SPEED * quad(lambda u: 1 / np.sqrt(1 - u ** 2.5), 0, 1)[0]
    assert np.max(x) < face + penetration
    assert x[-1] == pytest.approx(face - SPEED * (0.3 - face / SPEED - duration), abs=5e-5)    # measured 1.1e-5
    v_out = res.body_velocity("ball")[-1, 0]
    assert v_out == pytest.approx(-SPEED, rel=1e-4)


def test_geneva_indexes_on_the_compiled_loop_and_on_bdf_alike():
    model = solver.load_model(ROOT / "sample_models" / "geneva.mbs.json")
    turn = 2 * np.pi / S.GENEVA_SPEED
    play = S.GENEVA_CLEARANCE / (S.GENEVA_CENTRES * np.sin(np.pi / 4))
    angles = []
    for integrator in ("auto", "bdf"):
        # pin out of its second slot at 1 3/8 turns; "auto" switches to BDF at t ≈ 0.23 s (0.47 turn: the
        # brake's stiction holds DOP853), so BDF, within the cap, steps through the second engagement
        res = solver.simulate(model, t_end=1.5 * turn, output_step=5e-3, integrator=integrator)
        angles.append(solver.output(model, "joints.wheel_axis.rotation").evaluate(res, model))
        if integrator == "auto":
            assert any(e["message"].startswith("switched to bdf") for e in res.events), res.events
        assert abs(angles[-1][-1] + np.pi) < play, integrator                # measured 4.4e-3 < 7.1e-3 rad
    assert np.max(np.abs(angles[0] - angles[1])) < 1e-5                       # measured 2.2e-7 rad


@pytest.mark.sweep
@pytest.mark.parametrize("integrator", ["rk45", "bdf", "radau", "adams"])
def test_geneva_indexes_alike_on_every_integrator_path_over_three_turns(integrator):
    """The sample as saved (three turns) on each integrator against the compiled DOP853 loop:
    measured 1.7e-7 (bdf), 2.4e-8 (radau), 1.2e-7 (LSODA, generic path) rad from an rtol 1e-10 run."""
    model = solver.load_model(ROOT / "sample_models" / "geneva.mbs.json")
    reference = solver.simulate(model)
    res = solver.simulate(model, integrator=integrator)
    angle = [solver.output(model, "joints.wheel_axis.rotation").evaluate(r, model) for r in (reference, res)]
    assert np.max(np.abs(angle[1] - angle[0])) < 1e-5
