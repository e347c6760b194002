"""Force elements on stacked states (solver.forces.element_loads): one call over N states equals N
single-state calls, for the stacked elements (spring-damper with force(t), bushing, applied force and
torque) and the state-by-state ones (rotational spring-damper: its angle unwraps in order); their
potential alone (element_potential) equals element_loads' energy."""
import numpy as np

import solver
from solver.forces import BodyFrames, element_loads, element_potential
from solver.formulations.cartesian import CartesianSystem


def loaded_model():
    m = solver.Model(name="loads", gravity=(0.0, -9.81, 0.0))
    m.add_body("a", mass=1.0, inertia=(0.1, 0.2, 0.3), position=(0.0, 0.0, 0.0))
    m.add_body("b", mass=2.0, inertia=(0.2, 0.2, 0.1), position=(0.5, 0.2, 0.1), orientation=(0.9, 0.1, 0.3, 0.2))
    m.add_joint("hinge", "revolute", "a", "b", origin=(0.3, 0.1, 0.0), axis=(0, 0, 1))
    m.add_spring_damper("spr", "a", "b", point_i=(0.1, 0.0, 0.0), point_j=(0.6, 0.3, 0.1), stiffness=200.0,
                        damping=3.0, free_length=0.4, preload=5.0, force="10*sin(4*t)")
    m.add_spring_damper("ground_spring", "ground", "a", point_i=(0.0, 1.0, 0.0), point_j=(0.0, 0.0, 0.0),
                        stiffness=50.0)
    m.add_bushing("bus", "a", "b", origin=(0.4, 0.2, 0.0), stiffness=(400.0, 300.0, 200.0, 30.0, 20.0, 10.0),
                  damping=(4.0, 3.0, 2.0, 0.3, 0.2, 0.1))
    m.add_force("F", "b", force=("5*sin(3*t)", 2.0, -1.0), point=(0.7, 0.3, 0.1))
    m.add_torque("T", "a", torque=(0.0, 0.1, "0.2*cos(t)"))
    m.add_rotational_spring_damper("rot", "hinge", stiffness=3.0, damping=0.2, free_angle=0.3)
    return m


def random_frames(system, n, seed):
    rng = np.random.default_rng(seed)
    states = []
    for _ in range(n):
        q = rng.standard_normal(system.nq)
        q.reshape(system.nb, 7)[:, 3:] /= np.linalg.norm(q.reshape(system.nb, 7)[:, 3:], axis=1)[:, None]
        states.append(system.frames(q, rng.standard_normal(system.nq)))
    return BodyFrames(*(np.stack([getattr(f, k) for f in states]) for k in ("r", "A", "v", "w"))), states


def test_stacked_loads_equal_state_by_state():
    model = loaded_model()
    stacked_system, single_system = CartesianSystem(model), CartesianSystem(model)   # own unwrapping states
    t = np.linspace(0.0, 2.0, 7)
    frames, states = random_frames(stacked_system, len(t), seed=3)
    assert [getattr(f, "stacked", False) for f in stacked_system.force_elements] == [True, True, True, True, True,
                                                                                      False]
    loads, energy = element_loads(stacked_system.force_elements, t, frames, stacked_system.nb, potential=True)
    for x, one in enumerate(states):
        single, e = element_loads(single_system.force_elements, float(t[x]), one, single_system.nb, potential=True)
        assert np.allclose(loads.F[x], single.F, rtol=0, atol=1e-12 * np.abs(single.F).max())
        assert np.allclose(loads.T[x], single.T, rtol=0, atol=1e-12 * np.abs(single.T).max())
        assert abs(energy[x] - e) <= 1e-12 * abs(e)
    # the energy alone (the compiled output rows' column): the same sums, the rotational spring's branch
    # following the states in the same order (fresh systems: their own unwrapping states; on these states
    # a potential taken after all the loads, its branch from the last state, differs)
    frames, _ = random_frames(stacked_system, len(t), seed=4)
    with_loads, alone = CartesianSystem(model), CartesianSystem(model)
    energy = element_loads(with_loads.force_elements, t, frames, with_loads.nb, potential=True)[1]
    np.testing.assert_array_equal(element_potential(alone.force_elements, frames, t.shape), energy)


def test_spring_with_coincident_points_exerts_no_force():
    model = solver.Model(name="coincident")
    model.add_body("a", mass=1.0, inertia=(0.1, 0.1, 0.1), position=(0.0, 0.0, 0.0))
    model.add_spring_damper("spr", "ground", "a", point_i=(0.0, 0.0, 0.0), point_j=(0.0, 0.0, 0.0),
                            stiffness=10.0, free_length=0.5, preload=2.0)
    system = CartesianSystem(model)
    q, qd, _ = system.initial_state()
    loads, energy = element_loads(system.force_elements, 0.0, system.frames(q, qd), system.nb, potential=True)
    assert not loads.F.any() and not loads.T.any()
    assert energy == 0.5 * 10.0 * 0.25 - 2.0 * 0.5
