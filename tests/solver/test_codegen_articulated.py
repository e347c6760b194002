"""Open trees in the relative formulation with generated kernels: the articulated-body recursion of
solver/codegen/articulated.c against the generic recursive path (STYLE §9).

A relative system without constraint rows (no cut joints, drivers or Euler parameters) compiles to
the O(n) library: the tree map's B_e, D_e and body states (tree.py ``cgt_edges``), the Cartesian
loads (derive.py ``loads``) and the articulated-body forward dynamics.  Checked here: M, Q and
q̈ = M⁻¹Q at random states against RelativeSystem (1e-10), with every joint type without Euler
parameters, an inverted joint, a branch and the force elements evaluated in Python; trajectories
and reactions against the generic run; energy conservation of a 30-link chain; code that grows
linearly with the chain.
"""
import numpy as np
import pytest

import solver
from solver.codegen import CodegenRelativeSystem
from solver.partitioning.choose import build_partition
from test_codegen import rel_err
import test_codegen_relative
from test_codegen_relative import compare_runs, random_states
from tools.scale_models import chain

pytestmark = pytest.mark.usefixtures("module_codegen_cache")


def open_tree():
    """A branched open tree: revolute to ground, then prismatic, cylindrical, universal and screw
    down one branch, planar and an inverted revolute (body_i the child) down another; rotated
    bodies with products of inertia; a spring-damper between branches and one to ground, a force
    at a point and a torque (time functions), a bushing, and a rotational spring-damper (evaluated
    in Python, enters the recursion as a generalized force)."""
    m = solver.Model(name="open-tree", gravity=(0.4, -9.81, 0.3))
    orientations = [(np.cos(0.3), 0.2, np.sin(0.3), 0.1), (0.9, -0.1, 0.3, 0.2), None, (0.8, 0.4, -0.2, 0.3),
                    (0.7, 0.1, 0.1, -0.5), None, (0.6, 0.3, 0.5, 0.1)]
    for k, o in enumerate(orientations):
        m.add_body(f"b{k}", mass=1.0 + 0.3 * k, inertia=(0.1 + 0.01 * k, 0.2, 0.25, 0.01, -0.02, 0.005),
                   position=(0.2 * k, 0.1 * k * k, -0.05 * k), orientation=o)
    m.add_joint("rev", "revolute", "ground", "b0", origin=(0.0, 0.1, 0.0), axis=(0, 0, 1))
    m.add_joint("pri", "prismatic", "b0", "b1", origin=(0.1, 0.1, 0.0), axis=(0.4, 1.0, 0.0))
    m.add_joint("cyl", "cylindrical", "b1", "b2", origin=(0.3, 0.2, 0.0), axis=(1, 0, 1))
    m.add_joint("uni", "universal", "b2", "b3", origin=(0.5, 0.4, -0.1), axis=(0, 0, 1), axis2=(1.0, -0.4, 0.0))
    m.add_joint("scr", "screw", "b3", "b4", origin=(0.8, 1.0, 0.0), axis=(0.2, 0.3, 1.0), pitch=0.05)
    m.add_joint("pla", "planar", "b0", "b5", origin=(0.9, 1.4, -0.2), axis=(0, 1, 0))
    m.add_joint("inv", "revolute", "b6", "b5", origin=(1.0, 1.6, -0.3), axis=(1, 1, 0))
    m.add_spring_damper("spr", "b1", "b5", point_i=(0.2, 0.0, 0.1), point_j=(1.0, 1.5, -0.2), stiffness=200.0,
                        damping=3.0, free_length=0.9, preload=5.0, force="10*sin(4*t)")
    m.add_spring_damper("gsp", "ground", "b4", point_i=(0.0, 1.0, 0.0), point_j=(0.8, 1.6, -0.2), stiffness=50.0)
    m.add_force("F", "b3", force=("5*sin(3*t)", 2.0, -1.0), point=(0.7, 0.8, -0.1))
    m.add_torque("T", "b6", torque=(0.0, 0.1, "0.2*cos(t)"))
    m.add_bushing("bus", "b2", "b6", origin=(0.6, 0.7, -0.1), stiffness=(400.0, 300.0, 200.0, 30.0, 20.0, 10.0),
                  damping=(4.0, 3.0, 2.0, 0.3, 0.2, 0.1))
    m.add_rotational_spring_damper("rsd", "rev", stiffness=20.0, damping=0.5, free_angle=0.2)
    return m


MODELS = {"open tree": open_tree, "chain of 12": lambda: chain(12)}


def systems(name):
    return test_codegen_relative.systems(name, MODELS)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(MODELS))
def test_open_trees_compile_to_the_articulated_library(name):
    generic, generated = systems(name)
    assert generic.m == 0 and generated.articulated
    expected = ["RotationalSpringDamperForce"] if name == "open tree" else []
    assert [type(f).__name__ for f in generated.interpreted] == expected


@pytest.mark.parametrize("name", list(MODELS))
def test_mass_forces_frames_and_accelerations_equal_the_generic_path(name):
    """M (composite, eq. 15–16), Q (eq. 17) and the body frames to 1e-10; q̈ of the compiled
    reduction (articulated recursion, the rotational spring as τ) against M⁻¹Q of the generic path."""
    generic, generated = systems(name)
    for q, qd, t in random_states(generic, 3, count=4):
        M, Q = generic.mass(q), generic.forces(q, qd, t)
        assert rel_err(generated.mass(q), M) < 1e-10
        assert rel_err(generated.forces(q, qd, t), Q) < 1e-10
        mine, ref = generated.frames(q, qd), generic.frames(q, qd)
        for key in ("r", "A", "v", "w"):
            assert np.allclose(getattr(mine, key), getattr(ref, key), atol=1e-12), key
        part = build_partition("qr", generated, q, t)
        reduction = generated.compiled_reduction(part)
        assert reduction.solve(t, np.concatenate([q - part.q_ref, qd]), q, 2)
        assert np.allclose(reduction.q, q, atol=1e-15) and np.allclose(reduction.qd, qd, atol=1e-15)
        assert rel_err(reduction.qdd, np.linalg.solve(M, Q)) < 1e-10
        assert np.array_equal(reduction.zdd, reduction.qdd)


def test_interpreted_forces_are_the_generalized_forces_of_their_wrenches():
    """B_eᵀ Σ_subtree Ŵ (cg_tree_generalized) of the rotational spring equals its share of the
    generic Q (the generic forces with and without the element)."""
    generic, generated = systems("open tree")
    q, qd, t = next(random_states(generic, 7, 1))
    elements = generic.force_elements
    full = generic.forces(q, qd, t)
    generic.force_elements = [f for f in elements if type(f).__name__ != "RotationalSpringDamperForce"]
    try:
        without = generic.forces(q, qd, t)
    finally:
        generic.force_elements = elements
    assert rel_err(generated.interpreted_forces(q, qd, t), full - without) < 1e-10


@pytest.mark.slow
@pytest.mark.parametrize("name", list(MODELS))
def test_trajectories_and_reactions_equal_the_generic_run(name):
    """Body positions 1e-8, joint reactions 1e-6 (test_codegen_relative.compare_runs)."""
    compare_runs(MODELS[name](), 0.3, output_step=0.05, integrator="rk", rtol=1e-10, atol=1e-12)


@pytest.mark.slow
def test_thirty_link_chain_conserves_energy():
    """1 s of a falling 30-link chain with generated kernels: kinetic + potential energy constant to
    1e-7 of the energy that changes form (rk, rtol 1e-10)."""
    res = solver.simulate(chain(30), t_end=1.0, output_step=0.05, formulation="relative", codegen=True,
                          integrator="rk", rtol=1e-10, atol=1e-12)
    e = res.energy
    total = np.asarray(e["kinetic"]) + np.asarray(e["potential"])
    assert np.ptp(total) < 1e-7 * np.ptp(np.asarray(e["kinetic"]))


@pytest.mark.slow
def test_generated_code_grows_linearly_with_the_chain():
    """No expansion along the paths: every ten links add the same code (a T-based library adds
    5/3 as much from 20 to 30 links as from 10 to 20: it grows with n²)."""
    lines = [CodegenRelativeSystem(chain(n)).codegen_info["c_lines"] for n in (10, 20, 30)]
    assert abs((lines[2] - lines[1]) / (lines[1] - lines[0]) - 1.0) < 0.05, lines


@pytest.mark.slow
@pytest.mark.parametrize("integrator", ["bdf", "radau"])
def test_implicit_integrators_keep_their_steps_on_a_long_chain(integrator):
    """Run._jacobian (forward differences scaled by max(1, |y_k|)): 0.05 s of the 50-link chain in
    about a hundred steps.  With scipy's own estimate (steps √ε·atol on the velocities at rest)
    Newton stalled: 8299 BDF / 3458 Radau steps, 4·10⁵ evaluations."""
    res = solver.simulate(chain(50), t_end=0.05, output_step=0.01, formulation="relative", codegen=True,
                          integrator=integrator, rtol=1e-6, atol=1e-8)
    assert res.meta["steps"] < 300, res.meta["steps"]
    reference = solver.simulate(chain(50), t_end=0.05, output_step=0.01, formulation="relative", codegen=True,
                                integrator="rk", rtol=1e-10, atol=1e-12)
    assert rel_err(res.body_position("L50"), reference.body_position("L50")) < 1e-4
