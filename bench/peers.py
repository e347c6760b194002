"""Speed beside a peer, in one process: the free-falling 7-DOF RRC arm of Kim & You (1997) in MBS
Studio and in MuJoCo (optional ``bench`` extra), at equal tip accuracy.

The arm: ``tools/make_samples.py`` :func:`rrc_arm` bent 0.3 rad at the pitch joints 2, 4, 6, no
drivers, gravity, 5 s, with the solver settings saved in ``sample_models/rrc_arm_case1.mbs.json``
(what a user of the arm runs: relative formulation, codegen "auto", its integrator and tolerances),
and with the solver settings a new model has (``Settings`` defaults).
It swings in the vertical xy plane (the roll joints 1, 3, 5, 7 feel no torque and stay at 0);
tests/solver/test_peers_mujoco.py adds joint rates for a 3-D check of the same comparison.

The MuJoCo model is written from our :class:`~solver.model.model.Model` (:func:`mjcf`): every body
frame sits at its joint's origin with world-aligned axes at the initial configuration, so a body's
``<inertial>`` is its CM offset and its inertia tensor rotated to world axes (A I Aᵀ), and its
``<joint>`` axis is the joint axis in world axes; joint coordinates are zero at the drawn
configuration in both codes and map one to one.  RK4, no damping, armature or contacts.

Work-precision (tip = the far end of link 7; error = max over the 501 output points of |tip − tip_ref|,
over the 101 and 251 points MuJoCo reaches at dt = 0.05 and 0.02 s):
reference = our relative formulation, DOP853 at rtol 1e-12 (cross-checked against MuJoCo RK4 at
dt = 1e-5); MuJoCo RK4 at dt = 5e-2 … 1e-5 driven from Python (``mj_step`` loop, qpos kept at the
output times) and its own time in a C loop (``mujoco.rollout``); MBS Studio with the saved settings
(warm: ``simulate`` of the CompiledModel, and ``simulate(model)`` whose compile step loads the kernels
from the cache as in a new process — the in-process reuse of :mod:`solver.recent_compiles` forgotten
before each round; the cold build is reported apart) and at rtol
1e-4 … 1e-10 (atol = rtol/100) with the saved integrator and with DOP853.  Times are the best of
``--repeat`` rounds, wall and CPU time of the process (the machine is shared: ratios use CPU time).
The tables are Markdown (docs/performance.md);
``--breakdown`` adds where a warm default run spends its time, ``--profile`` a cProfile of it;
``--fixed`` prints only where a warm run at rtol 1e-4 spends its CPU time (:func:`fixed_costs`).

    .venv/bin/python bench/peers.py [--repeat N] [--breakdown] [--profile] [--fixed]
"""
from __future__ import annotations

import argparse
import cProfile
import importlib.util
import io
import os
import pstats
import sys
import tempfile
import time
import timeit
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import solver  # noqa: E402
from solver import recent_compiles  # noqa: E402
from solver.integrators import integrator_class  # noqa: E402
from solver.math.rotations import rotation_matrix  # noqa: E402

PITCH = (0.3, 0.3, 0.3)        # rad at joints 2, 4, 6: the arm starts bent and falls
SETTINGS_FROM = ROOT / "sample_models" / "rrc_arm_case1.mbs.json"
STEPS = (5e-2, 2e-2, 1e-2, 1e-3, 1e-4, 1e-5)   # MuJoCo RK4 steps (multiples or divisors of the output step)
RTOLS = (1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10)
REFERENCE = dict(integrator="rk", rtol=1e-12, atol=1e-14)
DEFAULTS = ("formulation", "partitioning", "integrator", "constraints", "reactions", "rtol", "atol", "max_step",
            "codegen")              # the solver settings a new model has (the "default settings" rows)


# ---- the model ------------------------------------------------------------------------------------
def make_samples():
    spec = importlib.util.spec_from_file_location("make_samples", ROOT / "tools" / "make_samples.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def free_falling_arm(t_end=5.0, rates=(0.0,) * 7):
    """The arm (no drivers, pitch joints bent 0.3 rad, joint ``rates`` at t = 0) with the arm
    sample's saved solver settings and ``t_end``; returns (model, tip) where tip is the far end
    of link 7 (global, initial configuration)."""
    mod = make_samples()
    model = mod.rrc_arm("rrc-arm-free-fall", pitch=PITCH, rates=rates)
    for key, value in solver.load_model(str(SETTINGS_FROM)).settings.values.items():
        model.settings.set(key, value)
    model.settings.set("t_end", t_end)
    last = model.bodies["link7"].values
    A = rotation_matrix(np.asarray(last["orientation"]))
    tip = np.asarray(last["position"]) + A @ [mod.RRC_LENGTHS[6] / 2, 0.0, 0.0]
    return model, tip


def new_model_settings(model):
    """``model`` with the solver settings a new model has (the Settings defaults of DEFAULTS)."""
    for f in solver.Settings.FIELDS:
        if f.name in DEFAULTS:
            model.settings.set(f.name, f.default)
    return model


def _vec(v):
    return " ".join(f"{x:.17g}" for x in v)


def mjcf(model, dt, tip=None):
    """MJCF text of a tree of revolute and prismatic joints (``body_i`` on the ground side):
    bodies nested along the joints, each body frame at its joint origin with world axes at the
    initial configuration; ``<inertial>``: CM offset and A I Aᵀ; RK4 with step ``dt``, no
    contacts.  ``tip`` (a global point on the last body) becomes the site "tip"."""
    joints = {j.values["body_j"]: j.values for j in model.joints.values()}
    kinds = {"revolute": "hinge", "prismatic": "slide"}
    for j in joints.values():
        if j["type"] not in kinds:
            raise solver.ModelError(f"joint '{j['name']}'.type: {j['type']!r} is not written to MJCF "
                                    "(revolute and prismatic only)")
    if len(joints) != len(model.joints) or set(joints) != set(model.bodies) or model.forces or model.drivers:
        raise solver.ModelError("mjcf: a tree with one joint per body and no force elements or drivers only")
    children = {}
    for body, j in joints.items():
        children.setdefault(j["body_i"], []).append(body)
    last = [name for name in model.bodies if name not in children][-1]

    def body_xml(name, parent_origin, indent):
        b, j = model.bodies[name].values, joints[name]
        origin = np.asarray(j["origin"], float)
        A = rotation_matrix(np.asarray(b["orientation"]))
        inertia = A @ solver.inertia_matrix(b["inertia"]) @ A.T
        full = (inertia[0, 0], inertia[1, 1], inertia[2, 2], inertia[0, 1], inertia[0, 2], inertia[1, 2])
        pad = " " * indent
        lines = [f'{pad}<body name="{name}" pos="{_vec(origin - parent_origin)}">',
                 f'{pad}  <joint name="{j["name"]}" type="{kinds[j["type"]]}" pos="0 0 0" '
                 f'axis="{_vec(j["axis"])}"/>',
                 f'{pad}  <inertial pos="{_vec(np.asarray(b["position"]) - origin)}" mass="{b["mass"]:.17g}" '
                 f'fullinertia="{_vec(full)}"/>']
        if name == last and tip is not None:
            lines.append(f'{pad}  <site name="tip" pos="{_vec(np.asarray(tip) - origin)}"/>')
        lines += [body_xml(c, origin, indent + 2) for c in children.get(name, [])]
        return "\n".join(lines + [f"{pad}</body>"])

    reached, stack = set(), list(children.get(solver.GROUND, []))
    while stack:
        reached.add(stack[-1])
        stack += children.get(stack.pop(), [])
    if reached != set(model.bodies):
        raise solver.ModelError("mjcf: bodies not on a path from ground through body_i → body_j: "
                                + ", ".join(sorted(set(model.bodies) - reached)))
    top = "\n".join(body_xml(c, np.zeros(3), 4) for c in children.get(solver.GROUND, []))
    return (f'<mujoco model="{model.name}">\n  <compiler angle="radian" inertiafromgeom="false"/>\n'
            f'  <option timestep="{dt:.17g}" integrator="RK4" gravity="{_vec(model.gravity)}">\n'
            '    <flag contact="disable" constraint="disable"/>\n  </option>\n'
            f'  <worldbody>\n{top}\n  </worldbody>\n</mujoco>\n')


def coordinate_map(system, mj):
    """Our coordinate index of MuJoCo's dof k (joints matched by name; one dof per joint)."""
    import mujoco
    col = {system.joint_names[edge.joint]: system.cols[e][0]
           for e, edge in enumerate(system.topology.edges) if edge.joint is not None and len(system.cols[e])}
    return np.array([col[mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_JOINT, k)] for k in range(mj.njnt)])


# ---- timing --------------------------------------------------------------------------------------
def clock():
    """(wall, CPU time of this process) now, seconds."""
    return np.array([time.perf_counter(), time.process_time()])


# ---- MuJoCo runs -----------------------------------------------------------------------------------
def mujoco_tip(mj, qpos):
    """Tip positions (N, 3) of the joint positions qpos (N, nq)."""
    import mujoco
    data = mujoco.MjData(mj)
    site = mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_SITE, "tip")
    out = np.empty((len(qpos), 3))
    for n, q in enumerate(qpos):
        data.qpos[:] = q
        mujoco.mj_kinematics(mj, data)
        out[n] = data.site_xpos[site]
    return out


def mujoco_python_loop(mj, q0, qd0, t_end, output_step):
    """RK4 driven as users drive it: ``mj_step`` in a Python loop, qpos kept every output step (every
    step when the step is longer).  Returns (qpos at those times (N, nq), [wall, CPU] s)."""
    import mujoco
    data = mujoco.MjData(mj)
    every = max(1, int(round(output_step / mj.opt.timestep)))
    n = int(round(t_end / mj.opt.timestep))
    out = np.empty((n // every + 1, mj.nq))
    t0 = clock()
    data.qpos[:], data.qvel[:] = q0, qd0
    out[0] = data.qpos
    step = mujoco.mj_step
    for k in range(1, n + 1):
        step(mj, data)
        if k % every == 0:
            out[k // every] = data.qpos
    return out, clock() - t0


def mujoco_c_loop(mj, q0, qd0, t_end):
    """MuJoCo's own time: the same steps in its C loop (``mujoco.rollout``, one thread), [wall, CPU] s."""
    import mujoco
    from mujoco import rollout
    data = mujoco.MjData(mj)
    data.qpos[:], data.qvel[:] = q0, qd0
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    state = np.empty(mujoco.mj_stateSize(mj, spec))
    mujoco.mj_getState(mj, data, state, spec)
    n = int(round(t_end / mj.opt.timestep))
    t0 = clock()
    rollout.rollout(mj, data, state[None, :], nstep=n)
    return clock() - t0


# ---- our runs --------------------------------------------------------------------------------------
def our_tip(res, model, tip):
    """Tip positions (N, 3) of a run: link 7's frame moved from its initial pose."""
    b = model.bodies["link7"].values
    local = rotation_matrix(np.asarray(b["orientation"])).T @ (np.asarray(tip) - b["position"])
    return res.body_position("link7") + np.einsum("nij,j->ni", res.body_rotation("link7"), local)


def cold_build(model):
    """Seconds to compile the arm into a fresh codegen cache (derivation + C compiler)."""
    old = os.environ.get("MBS_CODEGEN_CACHE")
    with tempfile.TemporaryDirectory(prefix="mbs-peers-cache-") as cache:
        os.environ["MBS_CODEGEN_CACHE"] = cache
        try:
            t0 = time.perf_counter()
            solver.compile_model(model)
            return time.perf_counter() - t0
        finally:
            if old is None:
                os.environ.pop("MBS_CODEGEN_CACHE")
            else:
                os.environ["MBS_CODEGEN_CACHE"] = old


# ---- the study -------------------------------------------------------------------------------------
def study(repeat=3):
    """Every case (MuJoCo RK4 per step, ours per setting) run in ``repeat`` round-robin rounds, so
    that all see the same load of a shared machine; the best wall time of each is kept.  A round
    runs ours once and MuJoCo's millisecond runs three times; MuJoCo at dt = 1e-5 s runs once.
    Each time is [wall, CPU time of the process]: on a busy machine the CPU time is the fairer one
    (a 60 ms run is preempted more often than a 3 ms one, even in its best round)."""
    import mujoco
    model, tip = free_falling_arm()
    s = model.settings.values
    compiled = solver.compile_model(model)          # warm the cache (and the kernels) once
    system = compiled.system
    q0, qd0, _ = system.initial_state()
    tip_ref = our_tip(solver.simulate(compiled, **REFERENCE), model, tip)

    def mujoco_case(dt):
        mj = mujoco.MjModel.from_xml_string(mjcf(model, dt, tip))
        cols = coordinate_map(system, mj)

        def run():
            qpos, wall = mujoco_python_loop(mj, q0[cols], qd0[cols], s["t_end"], s["output_step"])
            c_wall = mujoco_c_loop(mj, q0[cols], qd0[cols], s["t_end"])
            return mujoco_tip(mj, qpos), max(1, int(round(dt / s["output_step"]))), wall, c_wall, ""
        return "MuJoCo RK4", f"dt = {dt:g} s", run, (0 if dt < 1e-4 else 1 if dt < 1e-3 else 3)

    def our_case(setting, target=compiled, **overrides):
        def run():
            recent_compiles.forget()        # simulate(model) compiles as a new process does (cache load)
            t0 = clock()
            res = solver.simulate(target, **overrides)
            wall = clock() - t0
            summ = res.summary()
            note = f"{summ['steps']} steps, {summ['rhs_evaluations']} rhs"
            return our_tip(res, model, tip), 1, wall, None, note
        return "MBS Studio", setting, run, 1

    default_model = new_model_settings(free_falling_arm()[0])
    d = default_model.settings.values
    default_compiled = solver.compile_model(default_model)
    cases = [mujoco_case(dt) for dt in STEPS]
    cases.append(our_case(f"default settings ({d['integrator']}, rtol {d['rtol']:g}, atol {d['atol']:g}), "
                          "simulate(compiled)", target=default_compiled))
    cases.append(our_case("the same, simulate(model): its compile step (a codegen cache hit) included", target=default_model))
    cases.append(our_case(f"saved settings ({s['integrator']}, rtol {s['rtol']:g}, atol {s['atol']:g}), "
                          "simulate(compiled)"))
    cases.append(our_case("the same, simulate(model): its compile step (a codegen cache hit) included", target=model))
    cases += [our_case(f"{integrator}, rtol {rtol:g}", integrator=integrator, rtol=rtol, atol=rtol / 100)
              for integrator in dict.fromkeys((d["integrator"], s["integrator"], "rk")) for rtol in RTOLS]
    best = {}
    for r in range(repeat):
        for k, (_, _, run, calls) in enumerate(cases):
            for _ in range(calls if calls or r else 1):
                tips, stride, wall, c_wall, note = run()
                old = best.setdefault(k, (tips, stride, wall, c_wall, note))
                best[k] = old[:2] + (np.minimum(old[2], wall), None if c_wall is None else np.minimum(old[3], c_wall),
                                     note)
    rows = []
    for k, (who, setting, _, _) in enumerate(cases):
        tips, stride, wall, c_wall, note = best[k]
        err = float(np.max(np.linalg.norm(tips - tip_ref[::stride], axis=1)))
        rows.append(dict(who=who, setting=setting, error=err, wall=wall, c_wall=c_wall, note=note))
    check = rows[len(STEPS) - 1]["error"]
    return rows, dict(check=check, build=cold_build(model), load=os.getloadavg()[0], generated=compiled.generated,
                      settings=dict(s), notice=compiled.notices[0] if compiled.notices else "")


def at_equal_error(rows, error):
    """CPU time of MuJoCo RK4 (Python loop, C loop) at the step reaching ``error``: log–log
    interpolation between the two steps around it (the error of RK4 falls like dt⁴)."""
    mj = sorted((r for r in rows if r["who"] == "MuJoCo RK4"), key=lambda r: -r["error"])
    for a, b in zip(mj, mj[1:]):
        if b["error"] <= error <= a["error"]:
            f = np.log(error / a["error"]) / np.log(b["error"] / a["error"])
            return tuple(float(np.exp(np.log(a[k][1]) + f * np.log(b[k][1] / a[k][1]))) for k in ("wall", "c_wall"))
    return None


def table(rows):
    head = ("code", "setting", "tip error max m", "wall ms", "CPU ms", "MuJoCo C loop CPU ms",
            "× MuJoCo RK4 at equal error (CPU; its Python loop / C loop)", "notes")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        ratio = ""
        if r["who"] == "MBS Studio":
            equal = at_equal_error(rows, r["error"])
            ratio = f"{r['wall'][1] / equal[0]:.1f} / {r['wall'][1] / equal[1]:.1f}" if equal else "outside the range"
        cells = (r["who"], r["setting"], f"{r['error']:.2e}", f"{1e3 * r['wall'][0]:.1f}", f"{1e3 * r['wall'][1]:.1f}",
                 "" if r["c_wall"] is None else f"{1e3 * r['c_wall'][1]:.2f}", ratio, r["note"])
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def best_of(fn, repeat, number=1):
    """Best CPU time of ``repeat`` × ``number`` calls of fn, seconds per call."""
    return min(timeit.repeat(fn, number=number, repeat=repeat, timer=time.process_time)) / number


def breakdown(repeat=5):
    """Where the time of a warm default run goes, each part timed on its own (CPU time, s):
    the whole run, the run without its output points (outputs at 0 and t_end only), a run of one
    output step (the fixed cost of a run), the BLAS thread limit every run enters, the
    post-processing of the output rows, one right-hand side at three levels (Run._rhs, the
    compiled reduction's solve, the bare C call), one LSODA dense output, the Jacobians LSODA asks
    for, and MuJoCo's RK4 step."""
    import mujoco
    from solver.analysis import dynamics
    from solver.analysis.threads import single_threaded_blas
    from solver.partitioning.choose import build_partition

    model, tip = free_falling_arm()
    compiled = solver.compile_model(model)
    s, system = compiled.settings.values, compiled.system
    res = solver.simulate(compiled)
    out = {"run": best_of(lambda: solver.simulate(compiled), repeat),
           "run_no_outputs": best_of(lambda: solver.simulate(compiled, output_step=s["t_end"]), repeat),
           "run_one_step": best_of(lambda: solver.simulate(compiled, t_end=s["output_step"]), repeat, 5)}

    def blas():
        with single_threaded_blas():
            pass
    out["blas_limit"] = best_of(blas, repeat, 10)
    rows = (res.t, res.coordinates, res.velocities, res.accelerations, res.multipliers)
    out["postprocess"] = best_of(lambda: system.postprocess_batch(*rows), repeat)
    out["postprocess_one"] = best_of(lambda: system.postprocess_batch(*(a[:1] for a in rows)), repeat, 10)

    q, qd, _ = system.initial_state()
    part = build_partition(s["partitioning"], system, q, 0.0)
    reduction = system.compiled_reduction(part)
    y = np.concatenate([part.z_of(q), part.V.T @ qd])
    run = dynamics.Run(system, compiled.settings)
    run._compiled, run.q_last = reduction, q
    n = 2000
    out["rhs_run"] = best_of(lambda: run._rhs(part, 0.1, y), repeat, n)
    out["rhs_solve"] = best_of(lambda: reduction.solve(0.1, y, q, 2), repeat, n)
    out["rhs_c"] = best_of(lambda: reduction._fn(reduction._problem_ptr, reduction._y_ptr, 2), repeat, n)

    ode = integrator_class(s["integrator"])(lambda t, yy: run._rhs(part, t, yy), 0.0, y, 1.0,
                                       rtol=s["rtol"], atol=s["atol"])
    for _ in range(10):
        ode.step()
    out["dense"] = best_of(lambda: ode.dense_output()(ode.t - 0.5 * (ode.t - ode.t_old)), repeat, n)

    jacobians = []           # spectral radius of each Jacobian LSODA asks for

    def counted(self, *args):
        J = original(self, *args)
        jacobians.append(np.abs(np.linalg.eigvals(J)).max())
        return J
    original, dynamics.Run._jacobian = dynamics.Run._jacobian, counted
    try:
        summary = solver.simulate(compiled).summary()
    finally:
        dynamics.Run._jacobian = original
    out.update(steps=summary["steps"], rhs=summary["rhs_evaluations"], jacobians=len(jacobians),
               jacobian_rhs=len(jacobians) * (len(y) + 1), outputs=len(res.t),
               radius=(min(jacobians, default=0.0), max(jacobians, default=0.0)))

    mj = mujoco.MjModel.from_xml_string(mjcf(model, 1e-2, tip))
    cols = coordinate_map(system, mj)
    steps = round(s["t_end"] / 1e-2)
    out["mujoco_step"] = min(mujoco_c_loop(mj, q[cols], qd[cols], s["t_end"])[1] for _ in range(repeat)) / steps
    return out


def breakdown_table(b):
    ms, us = 1e3, 1e6
    lines = ["| part of a warm default run | CPU time |", "|---|---|",
             f"| whole run (5 s, {b['outputs']} output points, {b['steps']} steps, {b['rhs']} right-hand sides) | "
             f"{b['run'] * ms:.1f} ms |",
             f"| the same run with output points at 0 and 5 s only | {b['run_no_outputs'] * ms:.1f} ms |",
             f"| → {b['outputs'] - 2} output points | {(b['run'] - b['run_no_outputs']) * ms:.1f} ms "
             f"({(b['run'] - b['run_no_outputs']) / (b['outputs'] - 2) * us:.0f} µs each) |",
             f"|   of which post-processing of the rows (postprocess_batch: bodies, reactions, energy) | "
             f"{b['postprocess'] * ms:.1f} ms ({b['postprocess_one'] * ms:.2f} ms for one row) |",
             f"|   of which LSODA dense output (interpolant + one evaluation) | {b['dense'] * us:.1f} µs each |",
             f"| fixed cost of a run (one output step simulated) | {b['run_one_step'] * ms:.2f} ms |",
             f"|   of which the BLAS thread limit (threadpoolctl, entered by every run) | "
             f"{b['blas_limit'] * ms:.2f} ms |",
             f"| one right-hand side: Run._rhs / CompiledReduction.solve / bare C call (ctypes) | "
             f"{b['rhs_run'] * us:.1f} / {b['rhs_solve'] * us:.1f} / {b['rhs_c'] * us:.1f} µs |",
             f"| right-hand sides spent on LSODA's Jacobians ({b['jacobians']} Jacobians of "
             f"{b['jacobian_rhs'] // max(1, b['jacobians'])}; their spectral radius {b['radius'][0]:.0f}–"
             f"{b['radius'][1]:.0f} s⁻¹) | {b['jacobian_rhs']} of {b['rhs']} |",
             f"| MuJoCo RK4 step in its C loop (4 evaluations) | {b['mujoco_step'] * us:.1f} µs |"]
    return "\n".join(lines)


def peer_versions():
    """Which peer codes are installed, with versions: MuJoCo is compared above; Pinocchio and Exudyn are
    named when installed (no comparison of them is written yet)."""
    out = []
    for module, name, compared in (("mujoco", "MuJoCo", True), ("pinocchio", "Pinocchio", False),
                                   ("exudyn", "Exudyn", False)):
        spec = importlib.util.find_spec(module)
        if spec is None:
            out.append(f"{name} not installed")
            continue
        version = getattr(importlib.import_module(module), "__version__", "?")
        out.append(f"{name} {version}" + ("" if compared else " installed, not compared here"))
    return ", ".join(out)


FIXED_PARTS = (     # (module, class or None, function, label): the pieces of a run outside its C step loop
    ("solver.codegen.segment", "CompiledSegments", "advance", "the compiled step loop with its output rows (C)"),
    ("solver.formulations.system", "MechanicalSystem", "borrow_workspace",
     "the run's workspace of the compiled system (a finished run's, reset)"),
    ("solver.analysis.recording", "Recorder", "__init__", "the recorder's set-up"),
    ("solver.codegen.output", None, "row_output", "the compiled output of rows stored one at a time"),
    ("solver.analysis.dynamics", "Run", "begin", "the start: initial state, assembly, velocities, partition"),
    ("solver.analysis.dynamics", "Run", "_record", "the first output row (Python)"),
    ("solver.codegen.segment", "CompiledSegments", "__init__", "the step loop's buffers and its compiled output"),
    ("solver.analysis.segments", None, "_store_rows", "the rows of each call handed to the recorder"),
    ("solver.analysis.dynamics", "Run", "_finish", "the last rows taken, the energy account"),
    ("solver.analysis.recording", "Recorder", "build", "the Results built"))


def fixed_costs(repeat=40, rtol=1e-4):
    """Where a warm ``simulate(compiled)`` of the arm at ``rtol`` (atol rtol/100, the new-model
    integrator) spends its CPU time: each piece of FIXED_PARTS timed inside the run (best of
    ``repeat`` runs per piece), the whole run, and the run's output step alone."""
    model, _ = free_falling_arm()
    for f in solver.Settings.FIELDS:
        if f.name in DEFAULTS:
            model.settings.set(f.name, f.default)
    compiled = solver.compile_model(model)
    times, originals = {}, []

    def timed(owner, name, label):
        original = getattr(owner, name)

        def wrapper(*args, **kwargs):
            t0 = time.process_time()
            try:
                return original(*args, **kwargs)
            finally:
                times[label] = times.get(label, 0.0) + time.process_time() - t0
        originals.append((owner, name, original))
        setattr(owner, name, wrapper)
    for module, cls, name, label in FIXED_PARTS:
        mod = importlib.import_module(module)
        owner = getattr(mod, cls) if cls else mod
        timed(owner, name, label)
    best = {}
    try:
        for _ in range(repeat):
            times.clear()
            t0 = time.process_time()
            solver.simulate(compiled, rtol=rtol, atol=rtol / 100)
            best["whole run"] = min(best.get("whole run", np.inf), time.process_time() - t0)
            for label, t in times.items():
                best[label] = min(best.get(label, np.inf), t)
    finally:
        for owner, name, original in reversed(originals):
            setattr(owner, name, original)
    s = compiled.settings.values
    best["one output step simulated"] = best_of(
        lambda: solver.simulate(compiled, rtol=rtol, atol=rtol / 100, t_end=s["output_step"]), repeat)
    lines = [f"| warm simulate(compiled) of the arm, auto rtol {rtol:g} | CPU ms (best of {repeat}) |", "|---|---|"]
    lines += [f"| {label} | {1e3 * best[label]:.3f} |" for label in
              ["whole run", "one output step simulated", *(label for *_, label in FIXED_PARTS)] if label in best]
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3, help="best of this many runs (default 3)")
    ap.add_argument("--breakdown", action="store_true", help="also where a warm default run spends its time")
    ap.add_argument("--profile", action="store_true", help="also a cProfile of a warm default run")
    ap.add_argument("--fixed", action="store_true", help="only where a warm run at rtol 1e-4 spends its time")
    args = ap.parse_args(argv)
    if args.fixed:
        print(fixed_costs())
        print(f"\nLoad average: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores.")
        return
    rows, info = study(args.repeat)
    print(table(rows))
    print(f"\nReference: relative formulation, DOP853 rtol 1e-12; MuJoCo RK4 at dt = {STEPS[-1]:g} s is "
          f"{info['check']:.1e} m from it.  Saved settings: {info['settings']['formulation']}, "
          f"{'generated kernels' if info['generated'] else 'generic path'} ({info['notice']}); cold build "
          f"{info['build']:.2f} s (not in the wall times).  Load average during the run: {info['load']:.1f} "
          f"on {os.cpu_count()} cores.  Peers: {peer_versions()}.")
    if args.breakdown:
        print("\n" + breakdown_table(breakdown(max(args.repeat, 5))))
    if args.profile:
        model, _ = free_falling_arm()
        compiled = solver.compile_model(model)
        solver.simulate(compiled)
        prof = cProfile.Profile()
        prof.runcall(solver.simulate, compiled)
        buf = io.StringIO()
        pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(15)
        print("\n" + buf.getvalue().replace(str(ROOT) + "/", ""))


if __name__ == "__main__":
    main()
