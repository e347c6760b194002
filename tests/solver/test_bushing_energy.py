"""The bushing's energy account (solver/forces.py ``bushing_potential``): random-mechanism seed 1171.

The bushing's rotational law is the small-rotation one, torque −K_r θ with θ = vee(skew R) =
sin φ u (R = F_iᵀF_j, rotation φ about u).  Its energy used to be reported as ½ θᵀK_r θ = ½ k sin²φ,
while the torque's work about a fixed axis is (uᵀK_r u)(1 − cos φ): seed 1171 (a bushing between
two bodies whose relative rotation is a planar joint's, 0.34 rad) drifted 1.9e-3 J of 19 J on every
path and the reference alike, 33× the sweep's bound.  And an anisotropic K_r has no potential at
all (its torque does work around closed paths of rotations), yet counted as conservative.
"""
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import solver
from solver.analysis.hybrid import energy_conserved
from solver.compile import compile_model
from solver.forces import bushing_loads, bushing_potential

ZERO = np.zeros(3)
K = np.array([0.0, 0.0, 0.0, 1.0, 2.0, 3.0])          # rotational stiffness only, anisotropic


def rotational(R, K):
    """(potential, torque on j) of a bushing with F_i = I, F_j = R, coincident points at rest."""
    f, n = bushing_loads(ZERO, ZERO, np.eye(3), ZERO, ZERO, ZERO, R, ZERO, K, np.zeros(6))
    return bushing_potential(ZERO, np.eye(3), ZERO, R, K), n


def test_potential_is_the_work_of_the_torque_about_a_fixed_axis():
    """Closed form: about a fixed axis u the torque's component along u is −(uᵀK_r u) sin φ, its
    work from φ = 0 −(uᵀK_r u)(1 − cos φ): the potential, for any u and φ (round-off bound)."""
    rng = np.random.default_rng(3)
    for _ in range(20):
        u = rng.normal(size=3)
        u /= np.linalg.norm(u)
        phi = rng.uniform(-3.0, 3.0)
        V, n = rotational(Rotation.from_rotvec(phi * u).as_matrix(), K)
        kuu = u @ (K[3:] * u)
        assert n @ u == pytest.approx(-kuu * np.sin(phi), rel=1e-12, abs=1e-14)
        assert V == pytest.approx(kuu * (1.0 - np.cos(phi)), rel=1e-12, abs=1e-14)


def test_isotropic_torque_is_minus_the_potential_gradient():
    """Isotropic K_r (k = 2): at random rotations the torque equals −∂V/∂φ (global rotation
    increments, central differences of step h: error ≤ k h² ≈ 2e-10, round-off k ε / h ≈ 4e-11)."""
    Kiso = np.array([0.0, 0.0, 0.0, 2.0, 2.0, 2.0])
    rng = np.random.default_rng(5)
    h = 1e-5
    for _ in range(10):
        R = Rotation.from_rotvec(rng.uniform(-1.5, 1.5, size=3)).as_matrix()
        grad = np.array([(rotational(Rotation.from_rotvec(h * e).as_matrix() @ R, Kiso)[0]
                          - rotational(Rotation.from_rotvec(-h * e).as_matrix() @ R, Kiso)[0]) / (2 * h)
                         for e in np.eye(3)])
        assert np.allclose(rotational(R, Kiso)[1], -grad, rtol=0, atol=1e-9)


def closed_path_work(Kr, steps=4000):
    """Work of the torque on j (F_i = I) around the closed path φ(s) = (a cos s, a sin s, b),
    midpoint rule over global rotation increments (error O(steps⁻²))."""
    s = np.linspace(0.0, 2 * np.pi, steps + 1)
    R = Rotation.from_rotvec(np.stack([0.8 * np.cos(s), 0.8 * np.sin(s), 0.3 + 0 * s], axis=1))
    dphi = (R[1:] * R[:-1].inv()).as_rotvec()
    mid = (Rotation.from_rotvec(0.5 * dphi) * R[:-1]).as_matrix()
    zero, eye = np.zeros((steps, 3)), np.broadcast_to(np.eye(3), (steps, 3, 3))
    _, n = bushing_loads(zero, zero, eye, zero, zero, zero, mid, zero, np.concatenate([ZERO, Kr]), np.zeros(6))
    return float(np.sum(n * dphi))


def test_anisotropic_rotational_stiffness_is_not_conservative():
    """The torque's work around a closed path: 0 for isotropic K_r (a potential exists), −0.75 for
    K_r = (1, 2, 3) (none does); so a bushing with anisotropic K_r does not conserve energy."""
    assert abs(closed_path_work(np.array([2.0, 2.0, 2.0]))) < 1e-9
    assert abs(closed_path_work(K[3:])) > 0.1
    m = solver.Model(name="bushing", gravity=(0.0, 0.0, 0.0))
    m.add_body("b", mass=1.0, inertia=(0.1, 0.2, 0.3))
    m.add_bushing("iso", "ground", "b", stiffness=(10.0, 10.0, 10.0, 2.0, 2.0, 2.0))
    assert energy_conserved(compile_model(m, codegen="off").system)
    m.element("iso").set("stiffness", (10.0, 10.0, 10.0, 1.0, 2.0, 3.0))
    assert not energy_conserved(compile_model(m, codegen="off").system)


def test_spinning_bushing_keeps_its_energy():
    """Seed 1171 minimized: a body on a revolute joint to ground, an anisotropic bushing to ground,
    started at 3 rad/s about the axis u (1.5 kg m² about it, uᵀK_r u = 2.25 N m: the bushing's
    largest potential 4.5 J is below the kinetic 6.75 J, so it turns over and over), default path.
    The reported total energy stays within the sweep's bound K × rtol × scale = 300 × 1e-8 × 6.75 J
    (measured 4.6e-8 J; it drifted 4.5 J with the small-rotation energy ½ θᵀK_r θ)."""
    m = solver.Model(name="spin", gravity=(0.0, 0.0, 0.0))
    u = np.array([1.0, 1.0, 1.0]) / np.sqrt(3.0)
    m.add_body("b", mass=1.0, inertia=(1.5, 1.5, 1.5), angular_velocity=tuple(3.0 * u))
    m.add_joint("hinge", "revolute", "ground", "b", axis=tuple(u))
    m.add_bushing("bush", "ground", "b", stiffness=(0.0, 0.0, 0.0, 1.0, 2.25, 3.5))
    res = solver.simulate(m, t_end=2.0)
    total = np.asarray(res.energy["total"])
    assert total[0] == pytest.approx(6.75, rel=1e-12)
    assert np.max(np.abs(total - total[0])) < 300 * 1e-8 * 6.75
