"""The ``inplane`` joint primitive, added as one registry entry (solver.JOINT_KINDS) with its one
equation z_iᵀd = 0: the file round trip, a point mass sliding down a frictionless inclined plane
(closed form: acceleration g sin α along the slope, normal force m g cos α), the Cartesian and
relative formulations (where it is a cut joint: it has no mobilizer) agreeing, and generated
kernels equal to the generic ones."""
import math

import numpy as np
import pytest

import solver
from solver.formulations.relative import RelativeSystem

G, MASS, ALPHA = 9.81, 2.0, math.radians(25.0)
NORMAL = np.array([math.sin(ALPHA), 0.0, math.cos(ALPHA)])      # of the inclined plane
DOWN_SLOPE = np.array([math.cos(ALPHA), 0.0, -math.sin(ALPHA)])


def inclined_plane(spin=0.0):
    m = solver.Model(name="inclined-plane", gravity=(0.0, 0.0, -G))
    m.add_body("puck", mass=MASS, inertia=(0.01, 0.02, 0.03), position=(0.1, 0.2, 0.3),
               angular_velocity=tuple(spin * NORMAL + (0.0, 0.5 * spin, 0.0)))
    m.add_joint("plane", "inplane", "ground", "puck", origin=(0.1, 0.2, 0.3), axis=tuple(NORMAL))
    return m


def test_file_round_trip(tmp_path):
    first, second = tmp_path / "a.mbs.json", tmp_path / "b.mbs.json"
    inclined_plane().save(str(first))
    back = solver.load_model(str(first))
    assert back.joints["plane"].type == "inplane" and back.joints["plane"].used_fields()[-1] == "axis"
    back.save(str(second))
    assert first.read_text() == second.read_text()


@pytest.mark.parametrize("formulation", ["cartesian", "relative"])
def test_point_mass_slides_down_the_slope_at_g_sin_alpha(formulation):
    res = solver.simulate(inclined_plane(), formulation=formulation, t_end=1.0, output_step=0.05,
                          rtol=1e-10, atol=1e-12)
    t = np.asarray(res.t)
    expected = np.array([0.1, 0.2, 0.3]) + 0.5 * G * math.sin(ALPHA) * t[:, None] ** 2 * DOWN_SLOPE
    np.testing.assert_allclose(np.asarray(res.body_position("puck")), expected, rtol=0, atol=1e-8)
    force, _ = res.joint_reaction("plane")          # on the puck: the plane pushes it off along the normal
    np.testing.assert_allclose(np.asarray(force), np.tile(MASS * G * math.cos(ALPHA) * NORMAL, (len(t), 1)),
                               rtol=0, atol=1e-6)


def test_it_is_a_cut_joint_of_the_relative_formulation():
    system = RelativeSystem(inclined_plane())
    assert [k for k, _ in system.cut] == [0] and [m.kind for m in system.mobs] == ["free"]
    assert system.nq - len(system.norm_rows) - len(system.cut[0][1]) == 5          # 5 degrees of freedom


def test_cartesian_equals_relative_for_a_spinning_puck():
    model = inclined_plane(spin=3.0)
    model.joints["plane"].set("origin", (0.15, 0.2, 0.3))          # the sliding point off the CM
    runs = [solver.simulate(model, formulation=f, t_end=1.0, output_step=0.05, rtol=1e-10, atol=1e-12)
            for f in ("cartesian", "relative")]
    for quantity in ("body_position", "body_rotation"):
        a, b = (np.asarray(getattr(r, quantity)("puck")) for r in runs)
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-7)
    np.testing.assert_allclose(*(np.asarray(r.joint_reaction("plane")[0]) for r in runs), rtol=0, atol=1e-5)


@pytest.mark.slow
def test_generated_kernels_equal_the_generic_ones(cache):
    from test_codegen import check_kernels, rel_err
    from test_codegen_relative import KERNEL_RTOL, random_states
    from solver.codegen import CodegenRelativeSystem
    model = inclined_plane(spin=3.0)
    check_kernels(model, seed=11)
    generic, generated = RelativeSystem(model), CodegenRelativeSystem(model)
    for q, qd, t in random_states(generic, 5):
        a, b = generated.constraints(q, t, qd, level=2), generic.constraints(q, t, qd, level=2)
        assert max(rel_err(x, y) for x, y in ((a.phi, b.phi), (a.jac, b.jac), (a.gamma, b.gamma))) < KERNEL_RTOL


@pytest.fixture
def cache(runtime_cache, monkeypatch):
    monkeypatch.setenv("MBS_CODEGEN_CACHE", str(runtime_cache))
    return runtime_cache


def test_redundant_with_a_revolute_on_one_body():
    """A pendulum whose bob is also held in its swing plane by an inplane joint: the joint is
    redundant (its reaction is not unique), the run still gives the pendulum's motion."""
    m = solver.Model(gravity=(0.0, -G, 0.0))
    m.add_body("bob", mass=1.0, inertia=(1e-3, 1e-3, 1e-3), position=(1.0, 0.0, 0.0))
    m.add_joint("pivot", "revolute", "ground", "bob", origin=(0.0, 0.0, 0.0), axis=(0.0, 0.0, 1.0))
    m.add_joint("plane", "inplane", "ground", "bob", origin=(1.0, 0.0, 0.0), axis=(0.0, 0.0, 1.0))
    alone = solver.simulate(m, t_end=0.3, output_step=0.05)
    m.remove("plane")
    plain = solver.simulate(m, t_end=0.3, output_step=0.05)
    np.testing.assert_allclose(alone.body_position("bob"), plain.body_position("bob"), rtol=0, atol=1e-8)
