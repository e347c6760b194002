"""A run evaluates its own workspace of the compiled system (``MechanicalSystem.workspace``): the
continuous joint angles (the unwrapping memory of rotation drivers and screw joints), the
rotational springs' angles, the caches and the generated kernels' buffers are the run's, so a
CompiledModel run twice gives the same results twice — also after a run that turned a driven crank
through several revolutions — two threads may run one CompiledModel at the same time, and the
compiled system itself is never changed by a run or an analysis."""
from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import brentq

import solver

RUN = {"t_end": 1.5, "output_step": 0.1}     # one and a half turns of the crank (its angle 3π, unwrapped)


def turning_crank(formulation):
    m = solver.Model(name="turning", gravity=(0.0, -9.81, 0.0))
    m.add_body("crank", mass=1.0, inertia=(0.01, 0.01, 0.01), position=(0.25, 0.0, 0.0))
    m.add_body("arm", mass=0.5, inertia=(0.01, 0.01, 0.01), position=(0.75, 0.0, 0.0))
    m.add_joint("pivot", "revolute", "ground", "crank", origin=(0.0, 0.0, 0.0), axis=(0.0, 0.0, 1.0))
    m.add_joint("elbow", "revolute", "crank", "arm", origin=(0.5, 0.0, 0.0), axis=(0.0, 0.0, 1.0))
    m.add_driver("motor", joint="pivot", expression="2*pi*t")             # one turn a second
    m.add_rotational_spring_damper("wrist", "elbow", stiffness=5.0)
    m.settings.set("formulation", formulation)
    return m


@pytest.mark.parametrize("formulation, codegen", [("cartesian", "off"), ("relative", "off"), ("cartesian", "on")])
def test_a_compiled_model_gives_the_same_run_twice(formulation, codegen, runtime_cache, monkeypatch):
    monkeypatch.setenv("MBS_CODEGEN_CACHE", str(runtime_cache))
    compiled = solver.compile_model(turning_crank(formulation), codegen=codegen)
    first = solver.simulate(compiled, **RUN)
    second = solver.simulate(compiled, **RUN)
    assert first.status == second.status == "ok"
    for body in ("crank", "arm"):
        np.testing.assert_allclose(second.body_position(body), first.body_position(body), atol=1e-12)
    np.testing.assert_allclose(second.driver_force("motor"), first.driver_force("motor"), atol=1e-9)
    angle = np.unwrap(np.arctan2(first.body_position("crank")[:, 1], first.body_position("crank")[:, 0]))
    assert angle[-1] - angle[0] == pytest.approx(3 * np.pi, abs=1e-6)    # it did turn one and a half times


def test_editing_the_model_after_compiling_does_not_change_the_compiled_model():
    """A CompiledModel holds its own copy of what it needs: moving a body or changing its initial
    velocity in the editable model afterwards leaves the compiled runs as they were."""
    model = turning_crank("cartesian")
    model.remove("motor")
    compiled = solver.compile_model(model, codegen="off")
    before = solver.simulate(compiled, t_end=0.2, output_step=0.1)
    model.set_field("arm", "velocity", (0.0, 3.0, 0.0))
    model.set_field("crank", "angular_velocity", (0.0, 0.0, 5.0))
    after = solver.simulate(compiled, t_end=0.2, output_step=0.1)
    np.testing.assert_allclose(after.body_position("arm"), before.body_position("arm"), atol=1e-12)
    assert not np.allclose(solver.simulate(model, t_end=0.2, output_step=0.1, codegen=False).body_position("arm"),
                           before.body_position("arm"), atol=1e-6)


# ---- helpers ------------------------------------------------------------------------------------
def plain(x, levels=8):
    """The numbers, arrays and strings an object holds, recursively (``levels`` deep) through its
    containers and the attributes of the solver's own objects (other objects by their type name)."""
    if isinstance(x, np.ndarray):
        return x.copy()
    if isinstance(x, (bool, int, float, str, bytes, type(None))):
        return x
    if levels == 0:
        return type(x).__name__
    if isinstance(x, dict):
        return {repr(k): plain(v, levels - 1) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [plain(v, levels - 1) for v in x]
    if type(x).__module__.startswith("solver.") and hasattr(x, "__dict__"):
        return {k: plain(v, levels - 1) for k, v in vars(x).items()}
    return type(x).__name__


def assert_same(a, b, where="run state"):
    """a and b (from :func:`plain`) are equal, arrays bit for bit."""
    assert type(a) is type(b), where
    if isinstance(a, np.ndarray):
        np.testing.assert_array_equal(a, b, err_msg=where)
    elif isinstance(a, dict):
        assert a.keys() == b.keys(), where
        for k in a:
            assert_same(a[k], b[k], f"{where}.{k}")
    elif isinstance(a, list):
        assert len(a) == len(b), where
        for k, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, f"{where}[{k}]")
    else:
        assert a == b, where


def assert_identical(a, b):
    """Two Results hold the same numbers, bit for bit, from the same number of steps."""
    assert a.status == b.status == "ok"
    for name in ("t", "coordinates", "velocities", "accelerations", "multipliers", "constraint_violation"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    for body in ("crank", "arm"):
        np.testing.assert_array_equal(a.body_position(body), b.body_position(body))
    np.testing.assert_array_equal(a.driver_force("motor"), b.driver_force("motor"))
    np.testing.assert_array_equal(a.joint_reaction("elbow"), b.joint_reaction("elbow"))
    assert (a.meta["steps"], a.meta["rhs_evaluations"]) == (b.meta["steps"], b.meta["rhs_evaluations"])


def at_once(compiled, n=2):
    """n runs of ``compiled`` started together in n threads: (their Results, the order in which
    their output points came)."""
    start, results, errors, order = threading.Barrier(n), [None] * n, [], []

    def run(k):
        try:
            start.wait()
            results[k] = solver.simulate(compiled, **RUN, progress=lambda t, t_end: order.append(k))
        except BaseException as exc:      # noqa: BLE001 — re-raised in the main thread
            errors.append(exc)
    threads = [threading.Thread(target=run, args=(k,)) for k in range(n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=600)
    if errors:
        raise errors[0]
    return results, order


def concurrent_runs_match_sequential(compiled):
    first = solver.simulate(compiled, **RUN)
    before = plain(compiled.system.run_state())
    (a, b), order = at_once(compiled)
    switches = sum(x != y for x, y in zip(order, order[1:]))
    assert switches >= 3, f"the two runs did not overlap (output points in the order {order})"
    assert_identical(a, first)
    assert_identical(b, first)
    assert_same(plain(compiled.system.run_state()), before)
    angle = np.unwrap(np.arctan2(a.body_position("crank")[:, 1], a.body_position("crank")[:, 0]))
    assert angle[-1] - angle[0] == pytest.approx(3 * np.pi, abs=1e-6)


# ---- a run owns its workspace ---------------------------------------------------------------------
@pytest.mark.parametrize("formulation", [pytest.param("cartesian", marks=(pytest.mark.slow, pytest.mark.sweep)), "relative"])
def test_two_threads_running_one_compiled_model_give_the_sequential_results(formulation):
    """Generic kernels: two runs of one CompiledModel in two threads at the same time (their output
    points interleave) give the results of a run alone, bit for bit, and leave the compiled
    system's run state as it was."""
    concurrent_runs_match_sequential(solver.compile_model(turning_crank(formulation), codegen="off"))


@pytest.mark.slow
@pytest.mark.parametrize("formulation", ["cartesian", "relative"])
def test_two_threads_running_one_generated_model_give_the_sequential_results(formulation, tmp_path, monkeypatch):
    """The same with generated kernels: each run has its own kernel buffers (and unwrapping
    memory, and compiled contact/spring work arrays) on the one loaded library.  Stepped in the
    Python loop (LSODA, kept there as interactive runs keep it: Run.python_loop), whose output points
    interleave one by one (the compiled loop, which "adams" takes too where the relative formulation's
    compiled spring allows it, hands a run's points over per call)."""
    from solver.analysis.dynamics import Run
    monkeypatch.setenv("MBS_CODEGEN_CACHE", str(tmp_path))
    monkeypatch.setattr(Run, "python_loop", ("adams",))
    model = turning_crank(formulation)
    model.settings.set("integrator", "adams")
    compiled = solver.compile_model(model, codegen="on")
    assert compiled.generated
    concurrent_runs_match_sequential(compiled)


@pytest.mark.parametrize("formulation", ["cartesian", "relative"])
def test_a_run_leaves_the_compiled_system_unchanged(formulation):
    """After one and a half turns of the crank (its angle 3π, unwrapped) the compiled system's
    joints and spring still hold the angle 0 of the model's configuration (the run's workspace
    turned), and the whole system — its run state and everything else — is what it was before the
    run."""
    compiled = solver.compile_model(turning_crank(formulation), codegen="off")
    system = compiled.system
    before = plain(system, levels=30)
    res = solver.simulate(compiled, **RUN)
    assert np.unwrap(np.arctan2(res.body_position("crank")[:, 1], res.body_position("crank")[:, 0]))[-1] \
        == pytest.approx(3 * np.pi, abs=1e-6)
    assert_same(plain(system, levels=30), before, "system")
    joints = [h for h in system.run_state() if hasattr(h, "unwrap")]
    springs = [h for h in system.run_state() if hasattr(h, "rotation")]
    assert len(joints) == 2 and len(springs) == 1
    assert [j.angle for j in joints] == [0.0, 0.0] and springs[0].angle == 0.0
    workspace = system.workspace()
    assert workspace is not system and workspace.run_state()[0] is not system.run_state()[0]
    assert workspace.equations is system.equations and workspace.mass_values is system.mass_values   # shared


def hanging_arm():
    """The equilibrium angle φ of the crank model's arm about the elbow at t = 0 (the crank held at
    0 by the motor): k φ = −m g l cos φ, l = 0.25 m from the elbow to the arm's CM."""
    k, m, g, l = 5.0, 0.5, 9.81, 0.25
    return brentq(lambda x: k * x + m * g * l * np.cos(x), -np.pi / 2, 0.0)


@pytest.mark.parametrize("formulation", [pytest.param("cartesian", marks=(pytest.mark.slow, pytest.mark.sweep)), "relative"])
def test_linearize_and_equilibrium_during_and_after_a_run(formulation):
    """static_equilibrium and linearize of a CompiledModel while a run of it is halfway through
    its one and a half turns (held in its progress callback at t = 0.75 s, its workspace's angles at 1.5π),
    and after it, give what they gave before the run, bit for bit (the equilibrium angle of
    :func:`hanging_arm` to 1e-6); the run's results are those of a run alone.  (The linearization
    is at the static equilibrium, where the motor turns the crank at 2π rad/s.)"""
    compiled = solver.compile_model(turning_crank(formulation), codegen="off")
    eq0 = solver.static_equilibrium(compiled)
    lin0 = solver.linearize(compiled, state="equilibrium")
    alone = solver.simulate(compiled, **RUN)
    halfway, analysed, out, errors = threading.Event(), threading.Event(), [], []

    def progress(t, t_end):
        if t >= 0.75 and not halfway.is_set():
            halfway.set()
            analysed.wait(timeout=120)

    def run():
        try:
            out.append(solver.simulate(compiled, **RUN, progress=progress))
        except BaseException as exc:      # noqa: BLE001 — re-raised in the main thread
            errors.append(exc)
    thread = threading.Thread(target=run)
    thread.start()
    assert halfway.wait(timeout=300)
    during = solver.static_equilibrium(compiled), solver.linearize(compiled, state="equilibrium")
    analysed.set()
    thread.join(timeout=600)
    if errors:
        raise errors[0]
    assert_identical(out[0], alone)
    after = solver.static_equilibrium(compiled), solver.linearize(compiled, state="equilibrium")
    for eq, lin in (during, after):
        np.testing.assert_array_equal(eq.q, eq0.q)
        assert eq.residual == eq0.residual and eq.iterations == eq0.iterations
        for name in ("M", "C", "K", "eigenvalues", "frequencies_hz", "mode_shapes", "q", "body_rotations"):
            np.testing.assert_array_equal(getattr(lin, name), getattr(lin0, name), err_msg=name)
    A = lin0.body_rotations[lin0.body_names.index("arm")]
    assert np.arctan2(A[1, 0], A[0, 0]) == pytest.approx(hanging_arm(), abs=1e-6)
    assert eq0.residual < 1e-9 and len(lin0.frequencies_hz) == 1 and lin0.frequencies_hz[0] > 0


SAMPLES = Path(__file__).resolve().parents[2] / "sample_models"


@pytest.mark.parametrize("sample, settings", [
    ("fourbar_singular_flexible", {"formulation": "cartesian"}),
    ("fourbar", {"formulation": "cartesian", "constraints": "parametric"}),
    ("vehicle_cae_tc", {"formulation": "cartesian"}),
    ("vehicle_cae_tc", {"formulation": "relative"}),
])
def test_a_workspace_owns_its_run_state_and_shares_the_rest(sample, settings):
    """A workspace's run state (flexible joints and bodies, the parametric and batched evaluators,
    joints, caches) is its own — the same kinds, none of the compiled system's objects — and
    evaluating it (Φ, Φ_q, γ, M, Q at the initial state) leaves the compiled system's run state as
    it was and gives the compiled system's numbers; the equation table, the masses and the force
    elements without a state are shared."""
    system = solver.compile_model(solver.load_model(SAMPLES / f"{sample}.mbs.json"), codegen="off",
                                  **settings).system
    before = plain(system.run_state())
    ws = system.workspace()
    mine, theirs = ws.run_state(), system.run_state()
    assert [type(h) for h in mine] == [type(h) for h in theirs] and len(mine) >= 4
    assert not {id(h) for h in mine} & {id(h) for h in theirs}
    assert ws.equations is system.equations and ws.mass_values is system.mass_values
    stateless = [f for f in system.force_elements if not hasattr(f, "reset")]
    assert all(any(f is g for g in ws.force_elements) for f in stateless)
    q, qd, t = ws.initial_state()
    ev = ws.constraints(q, t, qd, level=2)
    values = (ev.phi, ev.jac, ev.gamma, ws.mass(q), ws.forces(q, qd, t))
    assert_same(plain(system.run_state()), before)
    again = system.workspace()
    ev = again.constraints(q, t, qd, level=2)
    for a, b in zip(values, (ev.phi, ev.jac, ev.gamma, again.mass(q), again.forces(q, qd, t))):
        np.testing.assert_array_equal(a, b)


def _reachable(root):
    """{id: object} of every object reachable from ``root`` through the objects a workspace follows
    (the built-in containers and the solver's own classes), by a plain walk."""
    from solver.formulations.workspace import _followed, _references
    seen, stack = {id(root): root}, [root]
    while stack:
        for r in _references(stack.pop()):
            if id(r) not in seen:
                seen[id(r)] = r
                if _followed(r):
                    stack.append(r)
    return seen


@pytest.mark.parametrize("formulation", ["cartesian", "relative"])
def test_a_workspace_copies_exactly_what_leads_to_its_run_state(formulation):
    """The workspace's definition checked against a plain reading of it: the objects of the copy
    that are not the compiled system's are exactly one copy of each object from which the run
    state can be reached (found here by a walk from every followed object, independent of the
    plan's reversed edges and of its shallow copies); every other object is the compiled system's
    own.  Runs on two workspaces of one system then never share a changing object."""
    from tools.scale_models import fourbar_row
    model = turning_crank(formulation) if formulation == "cartesian" else fourbar_row(3)
    system = solver.compile_model(model, codegen="off", formulation=formulation).system
    state = {id(obj) for obj in system.run_state()}
    everything = _reachable(system)
    leads = {key for key, obj in everything.items() if state & set(_reachable(obj))}
    assert state <= leads and id(system) in leads
    for twin in (system.workspace(), system.workspace()):
        mine = _reachable(twin)
        copies = set(mine) - set(everything)
        assert len(copies) == len(leads)
        assert set(mine) & set(everything) == set(everything) - leads
        assert sorted(type(mine[k]).__name__ for k in copies) == sorted(type(everything[k]).__name__ for k in leads)


def test_a_copy_of_kernel_buffers_holds_the_same_values_in_buffers_of_its_own():
    """codegen.build.Buffers in a workspace: each buffer equal to the original's bit for bit (a
    buffer whose bytes are all zero is new zeros, not a copy; −0.0 is not such a byte) and none shared."""
    import copy
    from solver.codegen.build import Buffers
    kernels = Buffers(None, {"par": 3, "jac": 1000, "q": 2, "u": 2}, {})
    kernels["par"][:] = [1.5, -0.0, 2.0]
    kernels["u"][:] = -0.0
    twin = copy.deepcopy(kernels)
    for name in ("par", "jac", "q", "u"):
        assert twin[name] is not kernels[name] and twin[name].dtype == kernels[name].dtype
        np.testing.assert_array_equal(twin[name], kernels[name])
    assert np.signbit(twin["par"][1]) and np.signbit(twin["u"]).all()
    twin["jac"][5] = 1.0
    assert not kernels["jac"].any()


def test_runs_at_the_same_time_share_one_blas_limit():
    """single_threaded_blas of runs that overlap (A starts, B starts, A ends, B ends — no nesting):
    BLAS stays at one thread until the last run ends, then the thread counts from before the first
    are back (threadpoolctl's own limiter would restore A's original counts at A's end, and B would
    restore 1 for good)."""
    from threadpoolctl import threadpool_info, threadpool_limits
    from solver.analysis.threads import single_threaded_blas

    def counts():
        return sorted(lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas")
    with threadpool_limits(limits=2, user_api="blas"):
        outside = counts()
        assert outside and set(outside) == {2}
        a, b = single_threaded_blas(), single_threaded_blas()
        a.__enter__()
        b.__enter__()
        assert set(counts()) == {1}
        a.__exit__(None, None, None)
        assert set(counts()) == {1}
        b.__exit__(None, None, None)
        assert counts() == outside
