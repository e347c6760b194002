"""A run's fixed costs: the start state evaluated once per compiled system
(solver.formulations.workspace.initial_state; a model edit compiles anew and never finds the old start), and the
recorder's first buffer sized to the rows a run expects (solver.analysis.recording), and a short run's rows
written in one call of the compiled step loop (solver.codegen.segment.SHORT_RUN)."""
import numpy as np
import pytest

import solver
from solver.analysis.recording import Recorder
from solver.formulations import workspace


def pendulum(omega=0.0):
    """A rod on a pin at the origin, horizontal, with angular velocity ``omega`` about z."""
    m = solver.Model(name="pendulum", gravity=(0.0, -9.81, 0.0))
    m.add_body("rod", mass=1.0, inertia=(1e-4, 1 / 12, 1 / 12), position=(0.5, 0, 0),
               velocity=(0.0, 0.5 * omega, 0.0), angular_velocity=(0.0, 0.0, omega))
    m.add_joint("pin", "revolute", "ground", "rod", origin=(0, 0, 0), axis=(0, 0, 1))
    m.settings.set("t_end", 0.05)
    m.settings.set("output_step", 0.05)
    return m


def sprung_pendulum(output_step):
    """The pendulum swinging 1 s on a spring-damper to a point above the pin (a force element in the
    generated loads: its potential added to the C rows), an output point every ``output_step``."""
    model = pendulum(omega=1.0)
    model.settings.set("t_end", 1.0)
    model.settings.set("output_step", output_step)
    model.add_spring_damper("spring", "ground", "rod", point_i=(0.0, 1.0, 0.0), point_j=(1.0, 0.0, 0.0),
                            stiffness=30.0, damping=0.5)
    return model


@pytest.mark.parametrize("formulation", ["relative", "cartesian"])
def test_the_start_is_kept_per_compiled_system_and_an_edit_starts_anew(formulation):
    model = pendulum()
    compiled = solver.compile_model(model, formulation=formulation)
    first = solver.simulate(compiled)
    kept = workspace._STARTS[compiled.system]
    assert not kept[0].flags.writeable and not kept[1].flags.writeable    # a run works on its own copy
    fresh = compiled.system.workspace().initial_state()                   # the same as evaluated afresh
    assert all(np.array_equal(a, b) for a, b in zip(kept[:2], fresh[:2])) and kept[2] == fresh[2]
    again = solver.simulate(compiled)                                      # the kept start: the same run
    assert np.array_equal(first.coordinates, again.coordinates)
    assert workspace._STARTS[compiled.system] is kept

    model.bodies["rod"].set("angular_velocity", [0.0, 0.0, 2.0])           # an edit: ω0 = 2 rad/s …
    model.bodies["rod"].set("velocity", [0.0, 1.0, 0.0])
    edited = solver.simulate(model, formulation=formulation)
    assert edited.body_angular_velocity("rod")[0, 2] == pytest.approx(2.0, rel=1e-9)   # … is the new start
    assert first.body_angular_velocity("rod")[0, 2] == 0.0
    # the edited model's run against energy: ½ I_O ω² − m g y_cm constant (I_O = m L²/3 + the rod's 1e-4 … about z: 1/12 + 1/4)
    I_O, y = 1 / 12 + 0.25, edited.body_position("rod")[:, 1]
    w = edited.body_angular_velocity("rod")[:, 2]
    energy = 0.5 * I_O * w ** 2 + 9.81 * y
    assert energy[-1] == pytest.approx(energy[0], abs=1e-6)


@pytest.mark.parametrize("rows", [3, 5, 8])
def test_the_recorder_sized_to_the_expected_rows_holds_more_or_fewer(rows):
    """The first output buffer holds the rows a run expects; more go on in further buffers, fewer are
    copied out: the results hold every row in order either way."""
    system = solver.compile_model(pendulum(omega=1.0), codegen="off").system.workspace()
    q, qd, _ = system.initial_state()
    rec = Recorder(system, {}, rows=rows)
    t = np.arange(5) * 0.01
    stacked = [np.tile(x, (5, 1)) * (1 + t[:, None]) for x in (q, qd, qd)]
    lam = np.zeros((5, system.m))
    rec.add(t[0], stacked[0][0], stacked[1][0], stacked[2][0], lam[0], 0.0, 1.0, "qr")
    rec.add_rows(t[1:], *(x[1:] for x in stacked), lam[1:], np.zeros(4), np.ones(4), "qr")
    rec.complete()
    res = rec.build()
    assert np.array_equal(res.t, t) and np.array_equal(res.coordinates, stacked[0])
    assert np.array_equal(res.velocities, stacked[1])
    # every row post-processed: the rod's kinetic energy about its pin ½ (m L²/3) ω², ω = q̇ (relative) or ω_z
    omega = res.body_angular_velocity("rod")[:, 2]
    assert np.allclose(omega, 1 + t, rtol=1e-12)
    assert np.allclose(res.energy["kinetic"], 0.5 * (1 / 12 + 0.25) * omega ** 2, rtol=1e-12)


def test_a_short_run_writes_its_rows_in_one_call_and_the_same_rows(monkeypatch):
    """A run of ≤ SHORT_RUN output points is one call of the compiled step loop; the rows equal those
    of the same run coming back to Python every 100 rows (the call boundaries change nothing)."""
    from solver.codegen import segment
    calls = []
    advance = segment.CompiledSegments.advance

    def counted(self):
        calls.append(1)
        return advance(self)
    model = pendulum(omega=1.0)
    model.settings.set("t_end", 1.0)
    model.settings.set("output_step", 0.002)                 # 501 output points
    compiled = solver.compile_model(model)
    monkeypatch.setattr(segment.CompiledSegments, "advance", counted)
    one = solver.simulate(compiled)
    assert len(calls) == 1 and len(one.t) == 501
    monkeypatch.setattr(segment, "SHORT_RUN", 0)
    calls.clear()
    chunked = solver.simulate(compiled)
    assert len(calls) >= 5
    for name in ("t", "q", "qd", "qdd", "r", "v", "a", "reaction_force", "energy_table", "step_t", "step_h"):
        np.testing.assert_array_equal(one._full(name), chunked._full(name))


def test_a_shared_compiled_system_is_evaluated_in_place_by_one_run_at_a_time(monkeypatch):
    """simulate(model) of an unchanged model recalls the same compiled system (solver.recent_compiles),
    so another run may be evaluating it: a run evaluates the system itself (own_workspace) only while
    it holds the system's claim, else a workspace copy — with the same result."""
    model = pendulum(omega=1.0)
    compiled = solver.compile_model(model)
    system = compiled.system
    reference = solver.simulate(model)
    assert solver.compile_model(model).system is system                    # recalled, shared
    in_place = []
    original = type(system).own_workspace
    monkeypatch.setattr(type(system), "own_workspace", lambda self: in_place.append(self) or original(self))
    held = system.claim()                                                  # another run holds it …
    assert held is not None and system.claim() is None
    try:
        copied = solver.simulate(model)
    finally:
        held.release()
    assert not in_place                                                    # … so this one ran on a copy
    assert np.array_equal(copied.coordinates, reference.coordinates)
    again = solver.simulate(model)                                         # released: in place again
    assert len(in_place) == 1 and in_place[0] is system
    assert np.array_equal(again.coordinates, reference.coordinates)
    claim = system.claim()                                                 # and the run gave it back
    assert claim is not None
    claim.release()


def test_runs_of_a_compiled_model_take_a_finished_runs_workspace_and_give_the_same_rows():
    """simulate(compiled) borrows a workspace a finished run gave back (its run state reset; the step
    loop's buffers and compiled output kept with it): the rows are those of a fresh workspace, bit
    for bit, whatever ran on it before; a run with other settings in between changes nothing."""
    model = sprung_pendulum(0.01)
    compiled = solver.compile_model(model)
    first = solver.simulate(compiled)
    idle = workspace._IDLE[compiled.system]
    assert len(idle) == 1
    space = idle[0][0]
    solver.simulate(compiled, rtol=1e-5, output_step=0.05, t_end=0.3)     # other buffers, the same workspace
    again = solver.simulate(compiled)
    assert workspace._IDLE[compiled.system][0][0] is space
    fresh = solver.simulate(model)             # the compiled system recalled and evaluated in place (own_workspace)
    for name in ("t", "q", "qd", "qdd", "r", "a", "reaction_force", "reaction_torque", "energy_table", "step_t"):
        np.testing.assert_array_equal(first._full(name), again._full(name))
        np.testing.assert_array_equal(first._full(name), fresh._full(name))


def test_rows_written_in_the_recorders_buffer_equal_the_rows_handed_over(monkeypatch):
    """The compiled loop writes rows post-processed in C straight into the recorder's buffer when a
    call's rows fit (Recorder.reserve / commit_rows): the same results, bit for bit, as the rows
    copied in from the loop's own arrays (reserve refused), for a short run (one call) and a run
    that comes back every 100 rows into further buffers."""
    from solver.analysis.recording import Recorder
    model = sprung_pendulum(0.002)
    compiled = solver.compile_model(model)
    written = []
    reserve = Recorder.reserve
    monkeypatch.setattr(Recorder, "reserve", lambda self, n: written.append(n) or reserve(self, n))
    in_place = solver.simulate(compiled)
    chunked = solver.simulate(compiled, rtol=1e-6, t_end=3.0, output_step=0.002)     # 1501 rows: calls of 100
    assert written and len(written) > 2
    monkeypatch.setattr(Recorder, "reserve", lambda self, n: None)
    copied = solver.simulate(compiled)
    copied_chunked = solver.simulate(compiled, rtol=1e-6, t_end=3.0, output_step=0.002)
    for a, b in ((in_place, copied), (chunked, copied_chunked)):
        for name in ("t", "q", "qd", "qdd", "r", "A", "v", "a", "alpha", "reaction_force", "reaction_torque_joint",
                     "energy_table", "conditioning", "method_code", "constraint_violation", "step_t"):
            np.testing.assert_array_equal(a._full(name), b._full(name))


@pytest.mark.parametrize("formulation", ["relative", "cartesian"])
def test_the_compiled_loop_writes_the_start_row_as_the_python_start_solve_does(monkeypatch, formulation):
    """The compiled step loop solves and writes the run's first row itself (segment.c write_start_row):
    no Python solve of the start, and the row — state, accelerations, reactions, energies, λ, the
    conditioning (exact at the start) — equals the one the Python loop (LSODA) solves there with the
    same compiled reduction ("adams" kept in the Python loop as interactive runs keep it: Run.python_loop).
    The Cartesian pendulum has constraint rows (its conditioning read out)."""
    from solver.analysis.dynamics import Run
    model = sprung_pendulum(0.05)
    compiled = solver.compile_model(model, formulation=formulation)
    stored = []
    record = Run._record_output
    monkeypatch.setattr(Run, "_record_output", lambda self, *a, store=True: stored.append(store) or record(self, *a, store=store))
    in_c = solver.simulate(compiled, t_end=0.2)
    assert not stored                                      # the start row never went through Python
    monkeypatch.setattr(Run, "python_loop", ("adams",))
    python = solver.simulate(compiled, t_end=0.2, integrator="adams")
    assert stored and stored[0]                            # LSODA's loop: every row solved in Python
    for name in ("t", "q", "qd", "qdd", "lam", "r", "A", "v", "w", "a", "alpha", "reaction_force", "reaction_torque",
                 "reaction_force_joint", "energy_table", "constraint_violation", "method_code"):
        np.testing.assert_array_equal(in_c._full(name)[0], python._full(name)[0])
    assert in_c._full("conditioning")[0] == pytest.approx(python._full("conditioning")[0], rel=1e-13)
