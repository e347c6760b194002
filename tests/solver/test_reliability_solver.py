"""Solver failures end in a clear SolverError (time, elements involved, partial results kept), and
redundant constraints are detected, reported by equation and joint, and their reactions flagged as
not unique.  Cases: a model that cannot assemble, a crank–rocker driven at the rocker past its
range (lock-up), a free motion without inertia (singular mass matrix), a force expression with a
pole (NaN/inf), a planar four-bar of four revolutes and Bricard's overconstrained 6R mechanism."""
from __future__ import annotations

import os

import numpy as np
import pytest

import solver

SAMPLE_DIR = os.path.join(os.path.dirname(__file__), "..", "..", "sample_models")


def _frame_along(v):
    """Rotation whose x axis is along v (in the xy plane)."""
    c, s = v[:2] / np.linalg.norm(v[:2])
    return [[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]]


def crank_rocker():
    """Ground O2–O4 1.0 m, crank 0.3 m, coupler 1.0 m, rocker 0.8 m (Grashof crank–rocker), crank
    vertical at t = 0; the rocker joint D is driven at 1 rad/s.  The rocker's range ends where crank
    and coupler fold (|O2 C| = 0.7 m): 0.6412 rad from the start."""
    O2, O4, B = np.zeros(3), np.array([1.0, 0.0, 0.0]), np.array([0.0, 0.3, 0.0])
    d = np.linalg.norm(O4 - B)
    along = (1.0 - 0.64 + d * d) / (2 * d)
    e = (O4 - B) / d
    C = B + along * e + np.sqrt(1.0 - along ** 2) * np.array([-e[1], e[0], 0.0])
    m = solver.Model(name="crank-rocker", gravity=(0.0, -9.81, 0.0))
    for name, P, Q in (("crank", O2, B), ("coupler", B, C), ("rocker", O4, C)):
        length = np.linalg.norm(Q - P)
        m.add_body(name, mass=1.0, inertia=(1e-4, length ** 2 / 12, length ** 2 / 12 + 1e-4),
                   position=tuple((P + Q) / 2), orientation=_frame_along(Q - P))
    for name, i, j, P in (("A", "ground", "crank", O2), ("B", "crank", "coupler", B),
                          ("C", "coupler", "rocker", C), ("D", "ground", "rocker", O4)):
        m.add_joint(name, "revolute", i, j, origin=tuple(P), axis=(0, 0, 1))
    m.add_driver("rocker_drive", joint="D", expression="t")
    return m


def folded_rocker_angle():
    O4, B0 = np.array([1.0, 0.0]), np.array([0.0, 0.3])

    def C(P, reach):
        d = np.linalg.norm(O4 - P)
        along = (reach ** 2 - 0.64 + d * d) / (2 * d)
        e = (O4 - P) / d
        return P + along * e + np.sqrt(reach ** 2 - along ** 2) * np.array([-e[1], e[0]])
    angle = lambda c: np.arctan2(c[1] - O4[1], c[0] - O4[0])   # noqa: E731
    return angle(C(np.zeros(2), 0.7)) - angle(C(B0, 1.0))


def bricard(L=1.0):
    """Bricard's mechanism (IFToMM benchmark A04 geometry): five 1 m rods and ground closing a loop
    along six edges of a cube, each link perpendicular to its two joint axes and those axes
    perpendicular to each other.  Grübler: 6·5 − 5·6 = 0 DOF; in fact 1 DOF (one redundant
    equation)."""
    V = [(0, 0, 0), (L, 0, 0), (L, L, 0), (L, L, L), (0, L, L), (0, 0, L)]
    axes = [(0, 1, 0), (0, 0, 1), (1, 0, 0), (0, 1, 0), (0, 0, 1), (1, 0, 0)]
    m = solver.Model(name="bricard", gravity=(0.0, -9.81, 0.0))
    for k in range(5):
        P, Q = np.array(V[k], float), np.array(V[k + 1], float)
        rod = np.abs(Q - P) > 0.5
        m.add_body(f"rod{k + 1}", mass=1.0, position=tuple((P + Q) / 2),
                   inertia=tuple(0.01 / 6 if rod[i] else (L * L + 0.01) / 12 for i in range(3)))
    links = ["ground", "rod1", "rod2", "rod3", "rod4", "rod5", "ground"]
    for k in range(6):
        m.add_joint(f"J{k + 1}", "revolute", links[k], links[k + 1], origin=V[k], axis=axes[k])
    return m


# ---- failures ---------------------------------------------------------------------------------
def test_a_model_that_cannot_assemble_names_its_joints():
    m = solver.Model(name="cannot-assemble", gravity=(0, -9.81, 0))
    m.add_body("bar", mass=1.0, inertia=(1e-3, 0.08, 0.08), position=(0.5, 0, 0))
    m.add_joint("pivot", "revolute", "ground", "bar", origin=(0, 0, 0), axis=(0, 0, 1))
    m.add_joint("tie", "distance", "ground", "bar", origin=(0, 0.2, 0), origin2=(1, 0, 0), length=5.0)
    with pytest.raises(solver.SolverError) as exc:      # Cartesian: both joints' equations stay unsatisfied
        solver.simulate(m, t_end=0.1, formulation="cartesian")
    e = exc.value
    assert e.message.startswith("the model cannot be assembled: these constraints cannot all be satisfied")
    assert e.kind == "assembly"            # what a program reads (the GUI picks its advice by it)
    assert e.time == 0.0 and {"pivot", "tie"} <= set(e.elements)
    assert e.results is not None and len(e.results) == 0 and e.results.status == "failed"


def test_a_driven_crank_rocker_locks_up_past_the_rocker_range():
    limit = folded_rocker_angle()
    assert limit == pytest.approx(0.64119, abs=1e-5)
    with pytest.raises(solver.SolverError) as exc:
        solver.simulate(crank_rocker(), t_end=2.0, output_step=0.01)
    e = exc.value
    assert e.message.startswith("kinematic analysis failed: position Newton did not converge")
    assert e.kind == "locked"            # what a program reads (the GUI picks its advice by it)
    assert limit < e.time <= limit + 0.01 and e.elements == ("rocker_drive",)
    res = e.results
    assert res.status == "failed" and res.t[-1] < limit < res.t[-1] + 0.01
    np.testing.assert_allclose(res.t, np.arange(len(res)) * 0.01, atol=1e-12)
    # the partial results are good to the last point: the rocker turned by t, the loop is closed
    assert np.max(res.constraint_violation) < 1e-9


def test_a_free_rotation_without_inertia_is_a_singular_mass_matrix():
    """A tip on a spherical joint with inertia 1e-30 kg·m² under a torque: the reduced mass matrix
    is singular; the message names the body (it used to escape as numpy's LinAlgError)."""
    m = solver.Model(name="tiny-inertia", gravity=(0, -9.81, 0))
    m.add_body("arm", mass=1.0, inertia=(0.1, 0.1, 0.1), position=(0.5, 0, 0))
    m.add_body("tip", mass=1.0, inertia=(1e-30, 1e-30, 1e-30), position=(1.0, 0, 0))
    m.add_joint("J1", "revolute", "ground", "arm", origin=(0, 0, 0), axis=(0, 0, 1))
    m.add_joint("J2", "spherical", "arm", "tip", origin=(1.0, 0, 0))
    m.add_torque("T", "tip", torque=(1.0, 1.0, 1.0))
    with pytest.raises(solver.SolverError) as exc:
        solver.simulate(m, t_end=1.0, output_step=0.01)
    e = exc.value
    assert e.message.startswith("the mass matrix is singular")
    assert e.kind == "mass"            # what a program reads (the GUI picks its advice by it)
    assert e.elements == ("tip",) and e.time < 1e-6 and e.results is not None


@pytest.mark.parametrize("expression, late", [("1/(t-0.5)", 1e-3), ("sqrt(0.5-t)", 0.05)])
def test_a_force_with_a_pole_stops_at_the_pole(expression, late):
    """NaN/inf in a force: stopped at once (no futile re-partitions), at the first integrator trial
    time past the pole, naming the force element (it used to escape as scipy's ValueError).  That
    trial is a stage of the step that crosses the pole: within a step (sqrt: the compiled DOP853's
    step there is ≈ 0.03 s, measured first trial 0.5207 s)."""
    m = solver.Model(name="pushed", gravity=(0, -9.81, 0))
    m.add_body("bob", mass=1.0, inertia=(1e-3, 1e-3, 1e-3), position=(1, 0, 0))
    m.add_joint("pivot", "revolute", "ground", "bob", origin=(0, 0, 0), axis=(0, 0, 1))
    m.add_force("push", "bob", force=(0, expression, 0))
    m.add_force("steady", "bob", force=(0, 1.0, 0))
    with pytest.raises(solver.SolverError) as exc:
        solver.simulate(m, t_end=1.0, output_step=0.01)
    e = exc.value
    assert str(e).startswith("non-finite forces/accelerations (NaN or inf in the applied forces) at t = 0.5")
    assert e.kind == "diverged"            # what a program reads (the GUI picks its advice by it)
    assert e.elements == ("push",) and 0.5 <= e.time < 0.5 + late
    # the results are kept up to the last accepted step before the pole: the compiled loop refuses a
    # step with a non-finite stage and retries it shorter (step_rules.STAGE_RETRIES), so sqrt's run
    # creeps up to its pole (output point 0.5 written: sqrt(0) = 0), 1/(t − 0.5)'s stops earlier
    assert e.results.status == "failed" and 0.3 <= e.results.t[-1] <= 0.5


# ---- redundant constraints ----------------------------------------------------------------------
def test_planar_fourbar_of_revolutes_reports_redundant_equations():
    m = solver.load_model(os.path.join(SAMPLE_DIR, "fourbar.mbs.json"))
    res = solver.simulate(m, t_end=0.05, output_step=0.01)
    # which three of the twelve out-of-plane equations the pivoted QR calls redundant depends on the
    # last bits of Φ_q (generated or generic, the BLAS): three of them, out-of-plane ones (3–5)
    redundant = res.redundant_equations
    assert len(redundant) == 3 and all(e.split(": ")[1] in ("revolute equation 3", "revolute equation 4",
                                                             "revolute equation 5") for e in redundant)
    assert res.nonunique_reactions == ["A", "B", "C", "D"]
    [event] = [e for e in res.events if e["kind"] == "redundant"]
    assert event["message"] == (f"3 redundant constraint equation(s): {'; '.join(redundant)} — their reactions use "
                                "minimum-norm multipliers")
    assert res.status == "ok" and np.max(res.constraint_violation) < 1e-9


def test_bricard_mechanism_moves_with_one_redundant_equation():
    m = bricard()
    res = solver.simulate(m, t_end=0.5, output_step=0.01)
    # one equation of the symmetric loop is redundant; which one the pivoting names is arbitrary
    # (it changed with the LAPACK build), so only its count and kind are fixed
    [redundant] = res.redundant_equations
    assert redundant.split(":")[0] in {f"J{k}" for k in range(1, 7)} and ": revolute equation " in redundant
    assert res.nonunique_reactions == ["J1", "J2", "J3", "J4", "J5", "J6"]
    assert np.max(res.constraint_violation) < 1e-9
    # it is mobile (Grübler says rigid): the middle rod falls and turns, energy is conserved
    r3 = res.body_position("rod3")
    assert np.linalg.norm(r3[-1] - r3[0]) > 0.05
    e = res.energy["total"]
    assert np.max(np.abs(e - e[0])) < 1e-3 * np.max(np.abs(res.energy["kinetic"]))
    F, T = res.joint_reaction("J1")      # the minimum-norm reactions, finite
    assert np.all(np.isfinite(F)) and np.all(np.isfinite(T))


# ---- results files ----------------------------------------------------------------------------
def test_a_failing_results_save_keeps_the_old_file(tmp_path, monkeypatch):
    m = solver.load_model(os.path.join(SAMPLE_DIR, "pendulum.mbs.json"))
    first = solver.simulate(m, t_end=0.02, output_step=0.01)
    path = tmp_path / "run.h5"
    first.save(path)
    before = path.read_bytes()
    second = solver.simulate(m, t_end=0.05, output_step=0.01)

    def disk_full(*args):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(os, "replace", disk_full)
    with pytest.raises(OSError, match="No space left"):
        second.save(path)
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["run.h5"]          # no temporary file left
    assert len(solver.load_results(path)) == 3


def test_a_newton_failure_at_an_output_point_redoes_the_step(monkeypatch):
    """Positions that cannot be solved at an output point (the integrator's dense output between
    accepted steps) restart the integration from the last accepted state, like a failure inside a
    step, instead of escaping as an exception; the results equal an undisturbed run.  The sample's
    "adams" is scipy's LSODA in the Python loop here (Run.python_loop): its output rows are solved in
    Python, where this rule lives (the compiled loop writes its rows in C)."""
    from solver.analysis.dynamics import Run
    from solver.partitioning.partition import PartitionError
    monkeypatch.setattr(Run, "python_loop", ("adams",))
    model = solver.load_model(os.path.join(SAMPLE_DIR, "slider_crank.mbs.json"))
    reference = solver.simulate(model, t_end=0.3)
    original, failed = Run._record_output, []

    def flaky(self, part, t, y, **options):
        if t > 0.15 and not failed:
            failed.append(t)
            raise PartitionError("position Newton did not converge (test)")
        return original(self, part, t, y, **options)
    monkeypatch.setattr(Run, "_record_output", flaky)
    res = solver.simulate(model, t_end=0.3)
    assert failed and any("at the output point" in e["message"] for e in res.events)
    assert np.array_equal(res.t, reference.t)
    for body in model.bodies:
        assert np.abs(res.body_position(body) - reference.body_position(body)).max() < 1e-6


def test_a_conservative_run_whose_energy_drifts_warns():
    """A conservative run whose total energy drifts more than 1e-2 of its scale warns (the rigid
    singular four-bar sample at rtol 1e-7 leaves a singular pass on the other assembly branch with
    status "ok" and drift 0.18 on this machine: docs/performance.md, tolerance grid).  Checked where
    the drift is far from the threshold whatever the CPU rounds: a pendulum over 10 s at rtol 0.1
    (drift 0.38) warns, at rtol 1e-6 (drift 4.3e-5) it does not."""
    m = solver.Model(name="pendulum", gravity=(0.0, -9.81, 0.0))
    m.add_body("bob", mass=1.0, inertia=(1e-3, 1e-3, 1e-3), position=(1.0, 0.0, 0.0))
    m.add_joint("pivot", "revolute", "ground", "bob", origin=(0, 0, 0), axis=(0, 0, 1))
    warnings = {rtol: [e["message"] for e in solver.simulate(m, t_end=10.0, rtol=rtol, atol=rtol).events
                       if e["kind"] == "warning" and "energy" in e["message"]] for rtol in (1e-6, 1e-1)}
    assert warnings[1e-6] == []
    [message] = warnings[1e-1]
    assert message.startswith("the total energy of this conservative model drifted by")
