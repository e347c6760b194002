"""Beam finite elements and modal reduction (Kim & Yoo (1997)): frequencies against Euler–Bernoulli
closed forms, floating-frame invariants against rigid-body formulas, stress recovery against beam
theory."""
import numpy as np
import pytest

from solver.flexible.beam import BeamMesh, Material, Section
from solver.flexible.modal import ModalBody

STEEL = Material(7800.0, 2.1e11, 0.3)
# in-plane bending (about z) is much softer than out-of-plane, axial and torsion: the lowest
# modes are the x–y bending ones
SECTION = Section(area=1e-4, Iy=1e-6, Iz=1e-10, J=1e-7, cy=0.005, cz=0.01, ct=0.005)
CANTILEVER_BL = (1.875104069, 4.694091133, 7.854757438)      # β_n L roots of 1 + cos βL cosh βL = 0
FREE_FREE_BL = (4.730040745, 7.853204624, 10.99560784)      # roots of 1 − cos βL cosh βL = 0


def analytic(bl, length):
    return np.array(bl) ** 2 * np.sqrt(STEEL.youngs * SECTION.Iz / (STEEL.density * SECTION.area * length**4))


@pytest.mark.parametrize("fixed, roots", [((0,), CANTILEVER_BL), ((), FREE_FREE_BL)])
def test_bending_frequencies_match_euler_bernoulli(fixed, roots):
    mesh = BeamMesh(1.3, SECTION, STEEL, n_elements=10)
    w = mesh.frequencies(fixed_nodes=fixed)
    elastic = w[6:9] if not fixed else w[:3]
    assert np.allclose(elastic, analytic(roots, 1.3), rtol=5e-3)
    if not fixed:
        assert np.all(w[:6] < 1e-3 * w[6])                     # six rigid-body modes


def test_rectangle_section_and_torsion_frequency():
    """Rectangle 20 × 10 mm: A, I by bh³/12; free–free torsion ω = nπ √(GJ/(ρ I_p)) / L."""
    sec = Section.from_dict({"height": 0.02, "width": 0.01})
    assert np.isclose(sec.area, 2e-4) and np.isclose(sec.Iz, 0.01 * 0.02**3 / 12)
    assert np.isclose(sec.Iy, 0.02 * 0.01**3 / 12)
    assert np.isclose(sec.J, 0.229 * 0.02 * 0.01**3, rtol=2e-3)            # Roark: β(a/b = 2) = 0.229
    stiff = Section(area=1e-2, Iy=1e-4, Iz=1e-4, J=2e-7)                    # torsion is the softest mode
    mesh = BeamMesh(1.0, stiff, STEEL, n_elements=20)
    w_t = np.pi * np.sqrt(STEEL.shear * stiff.J / (STEEL.density * (stiff.Iy + stiff.Iz)))
    assert np.isclose(mesh.frequencies()[6], w_t, rtol=5e-3)


def test_invariants_of_the_undeformed_beam_equal_the_rigid_rod():
    """m = ρAL, S₀ = 0 (frame at the midpoint) and J = ρL diag(I_p, I_y + AL²/12, I_z + AL²/12)."""
    L = 0.8
    body = ModalBody(BeamMesh(L, SECTION, STEEL, n_elements=10), modes=3)
    rho, A = STEEL.density, SECTION.area
    assert np.isclose(body.mass, rho * A * L, rtol=1e-13)
    assert np.allclose(body.S0, 0.0, atol=1e-15)
    J_rod = rho * L * np.diag([SECTION.Iy + SECTION.Iz, SECTION.Iy + A * L**2 / 12, SECTION.Iz + A * L**2 / 12])
    assert np.allclose(body.inertia(np.zeros(3)), J_rod, rtol=1e-12, atol=1e-18)
    # free–free modes carry no momentum and no angular momentum about the CM (mean axes)
    assert np.allclose(body.S_phi, 0.0, atol=1e-12)
    assert np.allclose(body.coupling(body.y_integrals(np.zeros(3))), 0.0, atol=1e-12)


def test_modal_reduction_frequencies_mass_and_stiffness():
    mesh = BeamMesh(1.3, SECTION, STEEL, n_elements=10)
    body = ModalBody(mesh, modes=3, damping_ratio=0.02)
    assert np.allclose(body.omega, analytic(FREE_FREE_BL, 1.3), rtol=5e-3)
    assert np.allclose(body.M_aa, np.eye(3), atol=1e-10)
    assert np.allclose(body.K_aa, np.diag(body.omega**2), rtol=1e-9, atol=1e-6)
    assert np.allclose(body.C_aa, np.diag(0.04 * body.omega))
    # the deformed inertia follows from the displaced nodes: W(a) = ∫ρ ū ūᵀ, tr-identity
    a = np.array([1e-2, -2e-2, 5e-3])
    e = mesh.positions() + body.modes @ a
    W = np.einsum("i,abij,j->ab", e, mesh.M_ab, e)
    assert np.allclose(body.inertia(a), np.trace(W) * np.eye(3) - W + body.J_sec, rtol=1e-12)


def test_craig_bampton_basis_spans_the_free_modes():
    """Both beam ends as interface: the orthonormalized Craig–Bampton basis reproduces the first
    free–free frequencies (measured 0.04%, 0.08%, 0.4%) and is mass-orthogonal to the rigid-body motions."""
    mesh = BeamMesh(1.3, SECTION, STEEL, n_elements=10)
    cb = ModalBody(mesh, modes=4, interface_nodes=[0, 10])
    free = ModalBody(mesh, modes=3)
    assert cb.k == 12 + 4 - 6
    assert np.allclose(cb.omega[:3], free.omega, rtol=5e-3) and np.isclose(cb.omega[0], free.omega[0], rtol=1e-3)
    assert np.allclose(cb.S_phi, 0.0, atol=1e-10)


def test_stress_recovery_of_a_tip_loaded_cantilever():
    """Tip force P (+y) on a cantilever: root bending stress on the +y fibre σ = −P L c_y / I_z,
    half of it at mid-span (M linear in x); axial force N: σ = N/A everywhere."""
    L, P, N = 1.0, 3.0, 50.0
    mesh = BeamMesh(L, SECTION, STEEL, n_elements=10)
    free = np.arange(6, mesh.ndof)
    f = np.zeros(mesh.ndof)
    f[mesh.node_dofs(10)[1]] = P
    f[mesh.node_dofs(10)[0]] = N
    x = np.zeros(mesh.ndof)
    x[free] = np.linalg.solve(mesh.K[np.ix_(free, free)], f[free])
    body = ModalBody(mesh, modes=0)
    D = mesh.strain_operators() @ x
    E = STEEL.youngs
    sigma_z = -E * SECTION.cy * D[:, 2]
    assert np.isclose(sigma_z[0], -P * L * SECTION.cy / SECTION.Iz, rtol=1e-9)
    assert np.isclose(sigma_z[5], -0.5 * P * L * SECTION.cy / SECTION.Iz, rtol=1e-9)
    assert np.allclose(E * D[:, 0], N / SECTION.area, rtol=1e-9)
    assert body.stress_shapes.shape == (11, 4, 0)
