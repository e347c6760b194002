"""Force elements on flexible bodies (solver.flexible.loads): the generalized forces against virtual
work and the potential's gradient (finite differences), the Craig–Bampton static tip deflection of a
cantilever against P L³/3EI, and energy conservation with a spring on a flexible pendulum."""
import numpy as np
import pytest

import solver
from solver.analysis.equilibrium import static_equilibrium
from solver.formulations.cartesian import CartesianSystem

SOFT = {"density": 2000.0, "youngs": 5e8, "poisson": 0.3}
SECTION = {"height": 0.02, "width": 0.03}


def fd(f, x, h=1e-6):
    return np.column_stack([(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(len(x))])


def loaded_beam(keep=("S", "B", "F", "T")):
    """A free beam and a rigid block (no gravity) with a spring between them (off-node point), a
    bushing and an applied force and torque at nodes; only the loads named in ``keep``.  Free–free
    modes: the basis must not depend on which loads are kept (Craig–Bampton's would: the load nodes
    join its interface), since the tests subtract the forces of the unloaded beam."""
    m = solver.Model(name="loads", gravity=(0.0, 0.0, 0.0))
    m.add_flexible_beam("beam", (0.1, 0.2, 0.0), (0.9, 0.5, 0.1), section=SECTION, material=SOFT,
                        elements=5, modes=3, z_axis=(0.0, 0.3, 1.0), interface="free")
    m.add_body("block", mass=1.2, inertia=(0.01, 0.02, 0.03), position=(1.2, 0.4, 0.0))
    m.add_spring_damper("S", "block", "beam", point_i=(1.1, 0.5, 0.0), point_j=(0.83, 0.49, 0.11),
                        stiffness=300.0, free_length=0.2)
    m.add_bushing("B", "beam", "block", origin=(0.5, 0.36, 0.05), stiffness=(60, 60, 60, 0, 0, 0))
    m.add_force("F", "beam", force=(1.0, -2.0, 3.0), point=(0.42, 0.3, 0.05))
    m.add_torque("T", "beam", torque=(0.3, 0.2, -0.5), point=(0.9, 0.5, 0.1))
    for name in set(m.forces) - set(keep):
        m.remove(name)
    return m


def random_state(s, rng, scale=0.05, modal=True):
    q0, _, _ = s.initial_state()
    q = q0 + scale * rng.standard_normal(s.nq)
    if not modal:
        q[s.flex[0].ao:] = 0.0
    for k in range(s.nblocks):
        q[7 * k + 3:7 * k + 7] /= np.linalg.norm(q[7 * k + 3:7 * k + 7])
    return q


def without_p_direction(s, v, q):
    """v with each Euler-parameter block's component along p removed (the normalization row's
    multiplier absorbs it)."""
    v = v.copy()
    for k in range(s.nblocks):
        p = q[7 * k + 3:7 * k + 7]
        v[7 * k + 3:7 * k + 7] -= p * (p @ v[7 * k + 3:7 * k + 7])
    return v


def test_spring_and_bushing_forces_are_minus_the_potential_gradient():
    """At rest without gravity Q = −∂(V_spring + V_bushing + U_strain)/∂q (translational bushing
    stiffness only: its potential ½ K δ² is then exact)."""
    s = CartesianSystem(loaded_beam(keep=("S", "B")))
    q = random_state(s, np.random.default_rng(1))
    zero = np.zeros(s.nq)

    def V(x):
        frames = s.attachments.extend(s.frames(x, zero), x, zero)
        return np.atleast_1d(sum(f.potential(frames) for f in s.force_elements)
                             + s.flex[0].energies(x, zero, s.gravity)[2])

    Q = s.forces(q, zero, 0.0)
    diff = without_p_direction(s, Q + fd(V, q)[0], q)
    assert np.max(np.abs(diff)) < 1e-7 * np.max(np.abs(Q))
    assert np.max(np.abs(Q[s.flex[0].ao:])) > 1.0          # the modal coordinates are loaded


def test_applied_force_and_torque_do_their_virtual_work():
    """Q·δq = F·δr_P for the force at its (off-node) point and Q·δq = T·δθ_node for the torque
    (δθ from the node frame's change, at a = 0 where that frame is a rotation)."""
    rng = np.random.default_rng(2)
    for name, modal in (("F", True), ("T", False)):
        s = CartesianSystem(loaded_beam(keep=(name,)))
        q = random_state(s, rng, modal=modal)
        zero = np.zeros(s.nq)
        Q = s.forces(q, zero, 0.0) - CartesianSystem(loaded_beam(keep=())).forces(q, zero, 0.0)
        dq = without_p_direction(s, rng.standard_normal(s.nq), q)      # tangent to |p| = 1
        h = 1e-6
        r, A, _, _ = s.attachments.frames(q, zero)
        rp, Ap, _, _ = s.attachments.frames(q + h * dq, zero)
        rm, Am, _, _ = s.attachments.frames(q - h * dq, zero)
        if name == "F":
            work = np.array([1.0, -2.0, 3.0]) @ (rp[0] - rm[0]) / (2 * h)
        else:
            W = (Ap[0] - Am[0]) @ A[0].T / (2 * h)
            work = np.array([0.3, 0.2, -0.5]) @ np.array([W[2, 1], W[0, 2], W[1, 0]])
        assert Q @ dq == pytest.approx(work, rel=1e-7, abs=1e-9)


@pytest.mark.parametrize("interface", ["craig_bampton", "free"])
def test_cantilever_tip_load_static_deflection(interface):
    """Clamped (fixed joint) at x = 0, tip force P along y: the Craig–Bampton basis with the tip
    node in the interface contains the FE static solution, and cubic Hermite elements make it
    exact, δ = P L³ / 3 E I_z (to 1e-6; P gives δ/L ≈ 1e-4, so the floating frame's rotation adds
    only O(1e-8)).  Free–free modes (2 of them) miss the static correction: 0.52 δ here."""
    L, E, h, b = 1.0, 2e11, 0.02, 0.03
    Iz = b * h**3 / 12
    P = 1e-4 * 3 * E * Iz / L**3
    m = solver.Model(name="cantilever", gravity=(0.0, 0.0, 0.0))
    m.add_flexible_beam("beam", (0, 0, 0), (L, 0, 0), section={"height": h, "width": b},
                        material={"density": 7800.0, "youngs": E}, elements=8, modes=2, interface=interface)
    m.add_joint("clamp", "fixed", "ground", "beam", origin=(0, 0, 0))
    m.add_force("P", "beam", force=(0.0, P, 0.0), point=(L, 0, 0))
    eq = static_equilibrium(m)
    s = CartesianSystem(m)
    r, _, _, _ = s.attachments.frames(eq.q, np.zeros(s.nq))
    exact = P * L**3 / (3 * E * Iz)
    if interface == "craig_bampton":
        assert r[0, 1] == pytest.approx(exact, rel=1e-6)
        assert abs(r[0, 0] - L) < 1e-4 * exact and abs(r[0, 2]) < 1e-9 * exact
    else:                   # a Ritz basis is too stiff: the deflection under the load is smaller
        assert 0.0 < r[0, 1] < 0.6 * exact


def test_energy_is_conserved_with_a_spring_on_a_flexible_pendulum():
    """A soft beam pinned at one end swings under gravity with a spring from ground to a point
    beside its tip (off the node), 2 free–free modes: kinetic + gravity + spring + strain energy stays within 1e-6 of
    the kinetic scale, and the beam deforms."""
    m = solver.Model(name="flex-spring", gravity=(0.0, -9.81, 0.0))
    m.add_flexible_beam("beam", (0, 0, 0), (0.6, 0, 0), section=SECTION, material=SOFT, elements=4, modes=2,
                        interface="free")
    m.add_joint("pin", "revolute", "ground", "beam", origin=(0, 0, 0), axis=(0, 0, 1))
    m.add_spring_damper("S", "ground", "beam", point_i=(0.8, 0.3, 0.0), point_j=(0.6, 0.01, 0.0),
                        stiffness=200.0, free_length=0.2)
    res = solver.simulate(m, t_end=0.3, output_step=0.01, rtol=1e-8, atol=1e-10, partitioning="qr")
    e = res.energy
    assert np.max(e["strain"]) > 0.1 * np.max(e["kinetic"]) and np.max(e["spring"]) > 0.0
    assert np.max(np.abs(e["total"] - e["total"][0])) < 1e-6 * np.max(e["kinetic"])


def test_force_elements_on_flexible_bodies_round_trip_and_markers_are_refused(tmp_path):
    m = loaded_beam()
    m.save(tmp_path / "loads.mbs.json")
    back = solver.load_model(tmp_path / "loads.mbs.json")
    assert back.to_dict()["forces"] == m.to_dict()["forces"]
    with pytest.raises(solver.ModelError, match="marker 'M'.body: 'beam' is a flexible body"):
        m.add_marker("M", "beam")
