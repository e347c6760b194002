"""Force element kinds go through one registry: each class in ``solver.FORCE_CLASSES`` declares its
fields, LABEL and GLYPH, and ``solver.forces.EVALUATORS`` how it is evaluated; an unregistered kind
is an error, never a silent fallback.  The linear actuator (a force table along a line, added as
one class plus one evaluator entry) shows the path end to end: file, numbers, generated kernels.

Closed form of the actuator test: a block of mass m on a horizontal prismatic rail (gravity across
the rail) pulled by a tension table F(t) through a point on the rail's axis: m ẍ = F(t), so
x(t) = x0 + ∫₀ᵗ (t − s) F(s)/m ds.  With the table of F = a + b t (linear: the spline is exact),
x(t) = x0 + (a t²/2 + b t³/6)/m."""
from __future__ import annotations

import numpy as np
import pytest

import solver
from solver import forces

MASS, A, B = 2.0, 3.0, 1.5


def actuated_block():
    m = solver.Model(name="actuator", gravity=(0.0, -9.81, 0.0))
    m.add_body("block", mass=MASS, inertia=(0.01, 0.01, 0.01), position=(1.0, 0.0, 0.0))
    m.add_joint("rail", "prismatic", "ground", "block", origin=(1.0, 0.0, 0.0), axis=(1.0, 0.0, 0.0))
    times = list(np.linspace(0.0, 1.0, 6))
    m.add(solver.FORCE_CLASSES["linear_actuator"](
        name="ram", body_i="ground", body_j="block", point_i=(5.0, 0.0, 0.0), point_j=(1.0, 0.0, 0.0),
        force={"t": times, "values": [A + B * t for t in times]}))
    return m


def test_every_kind_is_registered_with_label_and_glyph():
    assert set(solver.FORCE_TYPES) == set(solver.FORCE_CLASSES) == set(forces.EVALUATORS)
    for kind, cls in solver.FORCE_CLASSES.items():
        assert cls.KIND == kind and cls.LABEL and cls.GLYPH in ("spring", "spiral", "bushing", "arrow", "torque", None)


def test_an_unregistered_kind_is_an_error(monkeypatch):
    from solver import recent_compiles
    recent_compiles.forget()          # a compilation of the same model by an earlier test would be reused
    monkeypatch.delitem(forces.EVALUATORS, "linear_actuator")
    with pytest.raises(solver.ModelError, match="forces 'ram'.type: no evaluator is registered for 'linear_actuator'"):
        solver.simulate(actuated_block(), t_end=0.1, codegen=False)


def test_linear_actuator_moves_the_block_as_the_closed_form(tmp_path):
    model = actuated_block()
    model.save(tmp_path / "a.mbs.json")
    back = solver.load_model(tmp_path / "a.mbs.json")
    assert back == model and back.forces["ram"].LABEL == "Linear actuator"
    res = solver.simulate(back, t_end=1.0, output_step=0.05, rtol=1e-10, atol=1e-12, codegen=False)
    t = np.asarray(res.t)
    x = np.asarray(res.body_position("block"))[:, 0]
    np.testing.assert_allclose(x, 1.0 + (A * t**2 / 2 + B * t**3 / 6) / MASS, atol=1e-8)
    tension = A + B * t                                      # the rail carries no axial force
    force, _ = res.joint_reaction("rail")
    assert np.abs(np.asarray(force)[:, 0]).max() < 1e-6 * tension.max()


def test_generated_kernels_evaluate_the_actuator(monkeypatch, runtime_cache):
    monkeypatch.setenv("MBS_CODEGEN_CACHE", str(runtime_cache))
    model = actuated_block()
    generic = solver.simulate(model, t_end=1.0, output_step=0.05, rtol=1e-10, atol=1e-12, codegen=False)
    generated = solver.simulate(model, t_end=1.0, output_step=0.05, rtol=1e-10, atol=1e-12, codegen="on")
    assert [e for e in generated.events if e["kind"] == "codegen"][0]["message"].startswith("codegen: compiled")
    np.testing.assert_allclose(generated.body_position("block"), generic.body_position("block"), atol=1e-9)


def test_energy_test_of_hybrid_partitioning_reads_the_evaluators():
    """A spring without damping or actuator force conserves energy; an actuator never does."""
    from solver.analysis.hybrid import energy_conserved
    from solver.compile import compile_model
    model = actuated_block()
    assert not energy_conserved(compile_model(model, codegen="off").system)
    model.remove("ram")
    model.add_spring_damper("s", "ground", "block", point_i=(5.0, 0.0, 0.0), point_j=(1.0, 0.0, 0.0),
                            stiffness=10.0)
    assert energy_conserved(compile_model(model, codegen="off").system)
    model.set_field("s", "damping", 0.5)
    assert not energy_conserved(compile_model(model, codegen="off").system)
