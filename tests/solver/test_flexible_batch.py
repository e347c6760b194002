"""The batched evaluator of joints on flexible bodies (solver.flexible.batch) against the per-joint one
(solver.flexible.joints.FlexibleJoint, the per-joint reading of the joint kinds' equations) and against finite
differences, on the flexible four-bar of Kim & Yoo (1997) and on a model with every joint type and
driven coordinate on a flexible body."""
import os
import sys
from dataclasses import replace

import numpy as np
import pytest

import solver
from solver.constraints.batch import BatchConstraints
from solver.formulations.cartesian import CartesianSystem

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tools"))
import make_samples  # noqa: E402
from test_flexible_dynamics import random_state  # noqa: E402

SOFT = {"density": 2000.0, "youngs": 5e8, "poisson": 0.3}
SECTION = {"height": 0.02, "width": 0.03}
JOINT_TYPES = ["spherical", "revolute", "fixed", "universal", "cylindrical", "prismatic", "planar", "distance",
               "revolute_spherical", "screw", "inplane"]


def every_joint_model():
    """Two beams and a rigid block; every joint type with the flexible body on side i, on side j and
    (flexible–flexible) on both, and rotation, translation, x and y drivers on flexible joints.  Not an
    assembled mechanism: the constraint functions are evaluated at random states."""
    m = solver.Model(name="every-joint", gravity=(0.0, -9.81, 0.0))
    m.add_flexible_beam("beam", (0.1, 0.2, 0.0), (0.9, 0.5, 0.1), section=SECTION, material=SOFT, elements=6,
                        modes=3, z_axis=(0.0, 0.3, 1.0))
    m.add_flexible_beam("bar", (0.9, 0.5, 0.1), (1.5, 0.1, 0.3), section=SECTION, material=SOFT, elements=4,
                        modes=2, z_axis=(0.2, 0.0, 1.0))
    m.add_body("block", mass=1.2, inertia=(0.01, 0.02, 0.03), position=(1.2, 0.4, 0.0),
               orientation=(0.9, 0.1, -0.3, 0.2))
    pairs = [("beam", "block"), ("block", "bar"), ("beam", "bar"), ("ground", "beam")]
    for k, jtype in enumerate(JOINT_TYPES):
        bi, bj = pairs[k % len(pairs)]
        extra = {"axis2": (1.0, 0.0, -0.2)} if jtype == "universal" else {}
        if jtype in ("distance", "revolute_spherical"):
            extra["origin2"] = (0.5, 0.35, 0.05) if bj == "beam" else (1.3, 0.25, 0.2)
        m.add_joint(f"j_{jtype}", jtype, bi, bj, origin=(0.3 + 0.1 * k, 0.25, 0.05), axis=(0.2, 0.1, 1.0), **extra)
    m.add_driver("spin", joint="j_revolute", expression="0.3*sin(2*t)")
    m.add_driver("push", joint="j_cylindrical", expression="0.05*t**2", coordinate="translation")
    m.add_driver("slide_x", joint="j_planar", expression="0.1*cos(t)", coordinate="x")
    m.add_driver("slide_y", joint="j_planar", expression="0.02*t", coordinate="y")
    return m


MODELS = {"fourbar_singular_flexible": make_samples.fourbar_singular_flexible, "every_joint": every_joint_model}


def per_joint(s, rigid_batch, q, qd, t, level=2):
    """Φ, Φ_q, ν, γ of joints and drivers the per-joint way: rigid joints batched on the body columns,
    every joint on a flexible body by FlexibleJoint.evaluate / drive (the evaluator before batching)."""
    phi, jac = np.zeros(s.m), np.zeros((s.m, s.nq))
    nu = np.zeros(s.m) if level >= 1 else None
    gamma = np.zeros(s.m) if level >= 2 else None
    n7 = 7 * s.nblocks
    if rigid_batch is not None:
        rigid_batch.evaluate(q[:n7], None if qd is None else qd[:n7], t, level, phi, jac[:, :n7], nu, gamma)
    for fj in s.flex_joints.values():
        fj.evaluate(q, qd, level, phi, jac, gamma)
    for d in s.flex_drivers:
        s.flex_joints[d.joint].drive(d.coordinate, d.function, d.row, q, qd, t, level, phi, jac, nu, gamma)
    return phi, jac, nu, gamma


def rigid_only_batch(s):
    rigid = [k for k in range(len(s.joints)) if k not in s.flex_joints]
    if not rigid:
        return None
    renum = {k: n for n, k in enumerate(rigid)}
    joints = [s.joints[k] for k in rigid]
    return BatchConstraints([(j.joint, j.body_i, j.body_j, j.rows) for j in joints],
                            [replace(d, joint=renum[d.joint]) for d in s.drivers if d.joint in renum], s.nblocks, s.m)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_batched_flexible_joints_equal_the_per_joint_evaluator(name):
    s = CartesianSystem(MODELS[name]())
    assert type(s.batch).__name__ == "FlexibleBatch"
    joint_rows = np.array(sorted(r for j in s.joints for r in j.rows) + [d.row for d in s.drivers])
    reference = rigid_only_batch(s)
    rng = np.random.default_rng(11)
    for k in range(5):
        q, qd = random_state(s, rng, scale=0.1)
        t = 0.1 + 0.37 * k
        ev = s.constraints(q, t, qd, level=2)
        for new, old in zip((ev.phi, ev.jac, ev.nu, ev.gamma), per_joint(s, reference, q, qd, t)):
            new, old = new[joint_rows], old[joint_rows]
            assert np.max(np.abs(new - old)) <= 1e-12 * max(1.0, np.max(np.abs(old)))
        ev1 = s.constraints(q, t, level=1)                 # the position-level call (Newton) too
        assert np.array_equal(ev1.phi, ev.phi) and np.array_equal(ev1.jac, ev.jac)


def fd(f, x, h=1e-6):
    return np.column_stack([(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(len(x))])


@pytest.mark.parametrize("seed", [1, 2])
def test_every_flexible_joint_type_jacobian_nu_gamma_equal_finite_differences(seed):
    rng = np.random.default_rng(seed)
    s = CartesianSystem(every_joint_model())
    q, qd = random_state(s, rng, scale=0.1)
    t, h = 0.4, 1e-5
    ev = s.constraints(q, t, qd, level=2)
    J = fd(lambda x: s.constraints(x, t).phi, q, h)          # modal columns reach |Φ_q| ~ 1e3
    assert np.max(np.abs(ev.jac - J)) < 1e-8 * np.max(np.abs(J))
    nu = -(s.constraints(q, t + h).phi - s.constraints(q, t - h).phi) / (2 * h)
    assert np.allclose(ev.nu, nu, rtol=1e-6, atol=1e-7)
    # γ = −(Φ_q q̇)_q q̇ − 2Φ_qt q̇ − Φ_tt: second difference of Φ along (q̇, 1) in (q, t)
    hh = 1e-4
    phi = [s.constraints(q + c * hh * qd, t + c * hh).phi for c in (-1, 0, 1)]
    phi2 = (phi[0] - 2 * phi[1] + phi[2]) / hh**2
    assert np.allclose(ev.gamma, -phi2, rtol=1e-5, atol=1e-5 * max(1.0, np.abs(phi2).max()))


@pytest.mark.slow
def test_flexible_fourbar_run_equals_the_per_joint_run():
    """The first 0.4 s of the sample (saved settings: adams, hybrid, rtol 1e-6) with the batched
    evaluator and with the per-joint one swapped in: the same trajectory to round-off propagated by
    the integrator (the runs take the same steps here; later, through the singular passes, their
    step sequences part and the difference grows to ~3e-6 m at 2 s, 15× below the run's own error
    against an rtol 1e-9 run)."""
    model = make_samples.fourbar_singular_flexible()
    batched = solver.simulate(model, t_end=0.4)
    compiled = solver.compile_model(model, codegen=False)
    s = compiled.system
    reference = rigid_only_batch(s)
    rows = [r for j in s.joints for r in j.rows] + [d.row for d in s.drivers]
    batched_constraints = s.constraints

    def per_joint_constraints(q, t, qd=None, level=0):
        ev = batched_constraints(q, t, qd, level)
        per = per_joint(s, reference, q, qd, t, level if qd is not None else min(level, 1))
        for new, old in zip((ev.phi, ev.jac, ev.nu, ev.gamma), per):
            if new is not None:
                new[rows] = old[rows]
        return ev
    s.constraints = per_joint_constraints
    old = solver.simulate(compiled, t_end=0.4)
    assert np.array_equal(old.t, batched.t)
    assert np.max(np.abs(old.coordinates - batched.coordinates)) < 1e-9
    assert np.max(np.abs(old.velocities - batched.velocities)) < 1e-7
