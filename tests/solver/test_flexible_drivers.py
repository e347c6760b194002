"""Drivers on joints that attach flexible bodies (solver.flexible.joints.FlexibleJoint.drive): the
driver row's Jacobian, ν and γ against finite differences, and the actuator's work against the
energy it puts into a spun-up flexible beam."""
import numpy as np
import pytest

import solver
from solver.formulations.cartesian import CartesianSystem

pytestmark = pytest.mark.numerics   # run again under another BLAS kernel (Makefile)

SOFT = {"density": 2000.0, "youngs": 5e8, "poisson": 0.3}
SECTION = {"height": 0.02, "width": 0.03}
SPIN = "0.6*(t - sin(2*pi*t)/(2*pi))"        # rotation with a smooth start: θ̇ = 0.6 (1 − cos 2πt)


def driven_model():
    """A beam on a driven revolute joint to ground and a rigid block on a driven cylindrical joint
    at its other end (rotation and translation rows through the node frames)."""
    m = solver.Model(name="driven-flex", gravity=(0.0, 0.0, 0.0))
    m.add_flexible_beam("beam", (0.0, 0.0, 0.0), (0.8, 0.0, 0.0), section=SECTION, material=SOFT,
                        elements=4, modes=3)
    m.add_body("slider", mass=0.5, inertia=(0.01, 0.01, 0.01), position=(0.8, 0.0, 0.0))
    m.add_joint("hub", "revolute", "ground", "beam", origin=(0, 0, 0), axis=(0, 0, 1))
    m.add_joint("sleeve", "cylindrical", "beam", "slider", origin=(0.8, 0, 0), axis=(1, 0, 0))
    m.add_driver("spin", joint="hub", expression=SPIN)
    m.add_driver("push", joint="sleeve", expression="0.05*sin(3*t)", coordinate="translation")
    return m


def test_driver_rows_equal_finite_differences():
    rng = np.random.default_rng(5)
    s = CartesianSystem(driven_model())
    q0, _, _ = s.initial_state()
    q = q0 + 0.05 * rng.standard_normal(s.nq)
    qd = rng.standard_normal(s.nq)
    for k in range(s.nblocks):
        p = q[7 * k + 3:7 * k + 7]
        p /= np.linalg.norm(p)
        qd[7 * k + 3:7 * k + 7] -= p * (p @ qd[7 * k + 3:7 * k + 7])
    t, h = 0.3, 1e-6
    rows = [d.row for d in s.flex_drivers]
    assert len(rows) == 2
    ev = s.constraints(q, t, qd, level=2)
    J = np.column_stack([(s.constraints(q + h * e, t).phi - s.constraints(q - h * e, t).phi)[rows] / (2 * h)
                         for e in np.eye(s.nq)])
    assert np.allclose(ev.jac[rows], J, rtol=1e-6, atol=1e-7)
    nu = -(s.constraints(q, t + h).phi - s.constraints(q, t - h).phi)[rows] / (2 * h)
    assert np.allclose(ev.nu[rows], nu, rtol=1e-6, atol=1e-7)
    # γ = −(Φ_q q̇)_q q̇ − 2Φ_qt q̇ − Φ_tt: second difference D(k) of Φ along (q̇, 1) in (q, t).  One
    # difference carries an O(k²) error (1e-4 of γ ≈ −1.6e4 at k = 1e-4: the tolerance such a check
    # needs depends on the machine's rounding); Richardson's R(k) = (4 D(k/2) − D(k))/3 leaves O(k⁴),
    # and R(2k) − R(k) (15× the error of R(k)) plus the round-off ε |Φ| / (k/2)² bounds it
    def second(k):
        phi = [s.constraints(q + c * k * qd, t + c * k).phi[rows] for c in (-1, 0, 1)]
        return (phi[0] - 2 * phi[1] + phi[2]) / k**2, np.max(np.abs(phi))
    (d4, size), (d2, _), (d1, _) = second(4e-4), second(2e-4), second(1e-4)
    coarse, fine = (4 * d2 - d4) / 3, (4 * d1 - d2) / 3
    bound = np.abs(fine - coarse) + 1e3 * np.finfo(float).eps * size / 0.5e-4**2
    assert np.all(np.abs(ev.gamma[rows] + fine) <= bound), (ev.gamma[rows], -fine, bound)


@pytest.mark.slow
def test_actuator_work_equals_the_energy_of_a_spun_up_flexible_beam():
    """A soft beam spun up about its root by a rotation driver (no gravity, no damping): the work
    ∫ τ θ̇ dt of the driver torque equals the kinetic + strain energy gained (trapezoidal rule on
    2 ms outputs: 1.1e-5 measured, 1e-4 asserted), and the beam bends (strain ≈ 4 % of kinetic)."""
    m = driven_model()
    m.remove("push")
    m.remove("sleeve")
    m.remove("slider")
    res = solver.simulate(m, t_end=0.5, output_step=0.002, rtol=1e-7, atol=1e-9, partitioning="qr")
    tau = res.driver_force("spin")
    rate = 0.6 * (1 - np.cos(2 * np.pi * res.t))
    work = np.concatenate([[0.0], np.cumsum(0.5 * np.diff(res.t) * (tau[1:] * rate[1:] + tau[:-1] * rate[:-1]))])
    e = res.energy["total"] - res.energy["total"][0]
    assert np.max(res.energy["strain"]) > 0.01 * np.max(res.energy["kinetic"])
    assert np.max(np.abs(work - e)) < 1e-4 * np.max(np.abs(e))


@pytest.mark.slow
def test_driven_screw_on_a_flexible_beam_advances_by_its_lead():
    """A screw joint at the tip of a clamped beam (its equations read like every other form,
    solver.constraints.forms), driven θ = 2t²: the slider advances pitch/2π · θ along the beam (the
    beam's axial give under the slider's inertia is ~1e-8 m)."""
    m = solver.Model(name="flex-screw", gravity=(0.0, 0.0, 0.0))
    m.add_flexible_beam("beam", (0.0, 0.0, 0.0), (0.8, 0.0, 0.0), section=SECTION, material=SOFT,
                        elements=2, modes=1)
    m.add_body("slider", mass=0.5, inertia=(0.01, 0.01, 0.01), position=(0.8, 0.0, 0.0))
    m.add_joint("hub", "fixed", "ground", "beam", origin=(0, 0, 0))
    m.add_joint("sleeve", "screw", "beam", "slider", origin=(0.8, 0, 0), axis=(1, 0, 0), pitch=0.01)
    m.add_driver("turn", joint="sleeve", expression="2*t^2")
    res = solver.simulate(m, t_end=0.3, output_step=0.05, rtol=1e-8, atol=1e-10)
    x = np.asarray(res.body_position("slider"))[:, 0]
    np.testing.assert_allclose(x, 0.8 + 0.01 / (2 * np.pi) * 2 * np.asarray(res.t) ** 2, rtol=0, atol=1e-6)
