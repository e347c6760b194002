"""Every eigenvalue of the linearization is reported (issue 18 item 4): the reported modes — a
complex-conjugate pair once, every real eigenvalue on its own — expanded back (λ and λ̄ for a pair)
are exactly the eigenvalues of the first-order form [[0, I], [−M⁻¹K, −M⁻¹C]] built from the
Linearization's own M, C, K (numpy.linalg.eig), with the growing ones flagged ``unstable``; and
against closed forms: the inverted pendulum's ±√(m g d / I_O), the overdamped oscillator's
(−c ± √(c² − 4 k m)) / 2m, a two-mass chain's eig of its hand-assembled M, C, K."""
import os

import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment

import solver
from solver import cli


G = 9.81
SAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "sample_models")
FOURBAR = os.path.join(SAMPLES, "fourbar_singular_flexible.mbs.json")
STAND = (np.cos(np.pi / 4), 0.0, 0.0, np.sin(np.pi / 4))      # body x along +y


def first_order_eigenvalues(M, C, K):
    """eig of [[0, I], [−M⁻¹K, −M⁻¹C]]."""
    f = M.shape[0]
    A = np.block([[np.zeros((f, f)), np.eye(f)], [-np.linalg.solve(M, K), -np.linalg.solve(M, C)]])
    return np.linalg.eigvals(A)


def expanded(lin):
    """The reported eigenvalues with each oscillatory mode's conjugate added back."""
    lam = np.asarray(lin.eigenvalues)
    assert np.all(lam.imag >= 0)
    return np.concatenate([lam, np.conj(lam[lam.imag > 0])])


def mismatch(a, b):
    """Largest |a_i − b_π(i)| over the best one-to-one pairing π (equal sizes required)."""
    assert a.shape == b.shape
    cost = np.abs(a[:, None] - b[None, :])
    rows, cols = linear_sum_assignment(cost)
    return cost[rows, cols].max(initial=0.0)


def assert_all_eigenvalues_reported(lin, rtol=1e-7):
    full = first_order_eigenvalues(lin.M, lin.C, lin.K)
    assert mismatch(expanded(lin), full) < rtol * max(1.0, np.abs(full).max())
    assert len(lin.frequencies_hz) == len(lin.damping_ratios) == len(lin.unstable) == len(lin.eigenvalues)
    assert lin.mode_shapes.shape[1] == len(lin.eigenvalues)


def inverted_pendulum(mass=2.0, inertia=0.05, d=0.7):
    """Compound pendulum standing straight up on a pivot at the origin, CM d above it."""
    m = solver.Model(name="inverted", gravity=(0, -G, 0))
    m.add_body("rod", mass=mass, inertia=(1e-3, inertia, inertia), position=(0, d, 0), orientation=STAND)
    m.add_joint("pivot", "revolute", "ground", "rod", origin=(0, 0, 0), axis=(0, 0, 1))
    return m


def oscillator_chain(masses, stiffness, damping):
    """Masses on prismatic joints along x at x = 1, 2, …; spring–dampers ground–1, 1–2, …"""
    m = solver.Model(name="chain", gravity=(0, 0, 0))
    prev, prev_x = "ground", 0.0
    for i, (mi, k, c) in enumerate(zip(masses, stiffness, damping), 1):
        name, x = f"m{i}", float(i)
        m.add_body(name, mass=mi, inertia=(1e-3, 1e-3, 1e-3), position=(x, 0, 0))
        m.add_joint(f"slide{i}", "prismatic", "ground", name, origin=(x, 0, 0), axis=(1, 0, 0))
        m.add_spring_damper(f"s{i}", prev, name, point_i=(prev_x, 0, 0), point_j=(x, 0, 0), stiffness=k, damping=c)
        prev, prev_x = name, x
    return m


@pytest.mark.parametrize("formulation", ["cartesian", "relative"])
def test_inverted_pendulum_reports_both_real_eigenvalues(formulation):
    """I_O θ̈ − m g d θ = 0: λ = ±√(m g d / I_O), both reported; +a flagged unstable (damping
    ratio −1), −a stable (damping ratio 1)."""
    mass, inertia, d = 2.0, 0.05, 0.7
    lin = solver.linearize(inverted_pendulum(mass, inertia, d), formulation=formulation)
    a = np.sqrt(mass * G * d / (inertia + mass * d * d))
    assert_all_eigenvalues_reported(lin)
    assert np.allclose(np.sort(lin.eigenvalues.real), [-a, a], rtol=1e-6, atol=0)
    assert np.all(lin.eigenvalues.imag == 0)
    up = int(np.argmax(lin.eigenvalues.real))
    assert lin.unstable.tolist() == [k == up for k in range(2)]
    assert lin.damping_ratios[up] == pytest.approx(-1.0) and lin.damping_ratios[1 - up] == pytest.approx(1.0)
    assert np.allclose(lin.frequencies_hz, a / (2 * np.pi), rtol=1e-6)


def test_flexible_fourbar_sample_keeps_the_growing_swing():
    """The flexible four-bar sample released 10° above its singular position: at t = 0 the swing
    is a real pair ±a (a ≈ 1.581 1/s), both reported and +a flagged; the coupler's modes are
    oscillatory and stable; nothing else is unstable."""
    model = solver.load_model(FOURBAR)
    lin = solver.linearize(model)
    assert_all_eigenvalues_reported(lin)
    real = np.sort(lin.eigenvalues[lin.eigenvalues.imag == 0].real)
    assert len(real) == 2 and real[0] == pytest.approx(-real[1], rel=1e-6)
    assert real[1] == pytest.approx(1.5808, rel=1e-3) and lin.growth_tolerance < 0.1
    assert lin.unstable.tolist() == list(lin.eigenvalues.real > 1.0)
    assert np.count_nonzero(lin.unstable) == 1
    oscillatory = lin.eigenvalues.imag > 0
    assert oscillatory.sum() == len(lin.eigenvalues) - 2 and np.all(lin.frequencies_hz[oscillatory] > 20.0)


def test_overdamped_oscillator_reports_two_negative_real_eigenvalues():
    """m ẍ + c ẋ + k x = 0 with c > 2√(k m): λ = (−c ± √(c² − 4 k m)) / 2m, both real, both stable."""
    mass, k, c = 1.3, 400.0, 100.0
    lin = solver.linearize(oscillator_chain([mass], [k], [c]))
    assert_all_eigenvalues_reported(lin)
    exact = (-c + np.array([-1.0, 1.0]) * np.sqrt(c * c - 4 * k * mass)) / (2 * mass)
    assert np.allclose(np.sort(lin.eigenvalues.real), exact, rtol=1e-6, atol=0)
    assert np.all(lin.eigenvalues.imag == 0) and not lin.unstable.any()
    assert np.allclose(lin.damping_ratios, 1.0)


def test_chain_with_an_overdamped_and_an_oscillatory_mode():
    """Two masses, a strong damper on the first: eig of the hand-assembled first-order form
    M = diag(m₁, m₂), K = [[k₁+k₂, −k₂], [−k₂, k₂]], C = [[c₁, 0], [0, 0]] has two negative reals and
    one conjugate pair; the linearization reports all three, each once."""
    m1, m2, k1, k2, c1 = 1.0, 0.5, 300.0, 80.0, 60.0
    lin = solver.linearize(oscillator_chain([m1, m2], [k1, k2], [c1, 0.0]))
    assert_all_eigenvalues_reported(lin)
    exact = first_order_eigenvalues(np.diag([m1, m2]), np.array([[c1, 0.0], [0.0, 0.0]]),
                                    np.array([[k1 + k2, -k2], [-k2, k2]]))
    assert np.count_nonzero(np.abs(exact.imag) < 1e-9) == 2 and np.all(exact.real < 0)
    assert mismatch(expanded(lin), exact) < 1e-6 * np.abs(exact).max()
    assert len(lin.eigenvalues) == 3 and not lin.unstable.any()


def test_cli_flags_the_unstable_mode(capsys):
    """`mbs linearize` of the flexible four-bar sample prints the +a row marked "unstable"."""
    assert cli.main(["linearize", FOURBAR]) == 0
    out = capsys.readouterr().out
    assert ", 1 unstable" in out.splitlines()[0]
    flagged = [line for line in out.splitlines() if line.endswith("unstable") and line.lstrip()[:1].isdigit()]
    assert len(flagged) == 1 and "-1" in flagged[0].split()[2]       # damping ratio −1
    assert float(flagged[0].split()[3]) == pytest.approx(1.5808, rel=1e-3)


def test_a_free_spin_is_not_flagged():
    """A stiff steel beam between two ball joints spins freely about its axis (a double zero
    eigenvalue); the finite differences split it by ≈ √‖ΔG‖ (here about 1.4 rad/s, the beam's
    modes reach 16 000 rad/s), below the growth tolerance estimated from G(h) − G(2h): listed,
    not unstable."""
    m = solver.Model(name="spinning", gravity=(0, 0, 0))
    m.add_flexible_beam("beam", (0, 0, 0), (1, 0, 0), section={"height": 0.02, "width": 0.03},
                        material={"density": 7800.0, "youngs": 2e11}, modes=6)
    m.add_joint("a", "spherical", "ground", "beam", origin=(0, 0, 0))
    m.add_joint("b", "spherical", "ground", "beam", origin=(1, 0, 0))
    lin = solver.linearize(m)
    assert_all_eigenvalues_reported(lin)
    spin = lin.eigenvalues[np.argmin(np.abs(lin.eigenvalues))]
    assert 1e-3 < abs(spin) < lin.growth_tolerance < 10.0
    assert not lin.unstable.any()
    assert lin.frequencies_hz[1] == pytest.approx(np.pi**2 * np.sqrt(2e11 * 0.03 * 0.02**3 / 12 / (7800 * 6e-4))
                                                  / (2 * np.pi), rel=1e-3)
