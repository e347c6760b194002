"""Speed beside a peer, in one process: the free-falling 7-DOF RRC arm of Kim & You (1997) in MBS
Studio and in MuJoCo (optional ``bench`` extra), at equal tip accuracy.

The arm: ``tools/make_samples.py`` :func:`rrc_arm` bent 0.3 rad at the pitch joints 2, 4, 6, no
drivers, gravity, 5 s, with the solver settings saved in ``sample_models/rrc_arm_case1.mbs.json``
(what a user of the arm runs: relative formulation, codegen "auto", its integrator and tolerances).

The MuJoCo model is written from our :class:`~solver.model.model.Model` (:func:`mjcf`): every body
frame sits at its joint's origin with world-aligned axes at the initial configuration, so a body's
``<inertial>`` is its CM offset and its inertia tensor rotated to world axes (A I Aᵀ), and its
``<joint>`` axis is the joint axis in world axes; joint coordinates are zero at the drawn
configuration in both codes and map one to one.  RK4, no damping, armature or contacts.

Work-precision (tip = the far end of link 7; error = max over the 501 output points of |tip − tip_ref|):
reference = our relative formulation, DOP853 at rtol 1e-12 (cross-checked against MuJoCo RK4 at
dt = 1e-5); MuJoCo RK4 at dt = 1e-2 … 1e-5 driven from Python (``mj_step`` loop, qpos kept at the
output times) and its own time in a C loop (``mujoco.rollout``); MBS Studio with the saved settings
(warm: generated kernels loaded from the cache; the cold build is reported apart) and at rtol
1e-4 … 1e-10 (atol = rtol/100) with the saved integrator and with DOP853.  Times are the best of
``--repeat`` runs (the machine is shared).  ``--markdown`` prints the table for docs/performance.md.

    .venv/bin/python bench/peers.py [--markdown] [--repeat N] [--profile]
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
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import solver  # noqa: E402
from solver.math.rotations import rotation_matrix  # noqa: E402

PITCH = (0.3, 0.3, 0.3)        # rad at joints 2, 4, 6: the arm starts bent and falls
SETTINGS_FROM = ROOT / "sample_models" / "rrc_arm_case1.mbs.json"
STEPS = (5e-2, 2e-2, 1e-2, 1e-3, 1e-4, 1e-5)   # MuJoCo RK4 steps (multiples or divisors of the output step)
RTOLS = (1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10)
REFERENCE = dict(integrator="rk", rtol=1e-12, atol=1e-14)


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
    tip = np.asarray(last["position"]) + rotation_matrix(np.asarray(last["orientation"])) @ [mod.RRC_LENGTHS[6] / 2, 0, 0]
    return model, tip


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
                 f'{pad}  <joint name="{j["name"]}" type="{kinds[j["type"]]}" pos="0 0 0" axis="{_vec(j["axis"])}"/>',
                 f'{pad}  <inertial pos="{_vec(np.asarray(b["position"]) - origin)}" mass="{b["mass"]:.17g}" '
                 f'fullinertia="{_vec(full)}"/>']
        if name == last and tip is not None:
            lines.append(f'{pad}  <site name="tip" pos="{_vec(np.asarray(tip) - origin)}"/>')
        lines += [body_xml(c, origin, indent + 2) for c in children.get(name, [])]
        return "\n".join(lines + [f"{pad}</body>"])

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
    step when the step is longer).  Returns (qpos at those times (N, nq), wall s)."""
    import mujoco
    data = mujoco.MjData(mj)
    every = max(1, int(round(output_step / mj.opt.timestep)))
    n = int(round(t_end / mj.opt.timestep))
    out = np.empty((n // every + 1, mj.nq))
    t0 = time.perf_counter()
    data.qpos[:], data.qvel[:] = q0, qd0
    out[0] = data.qpos
    step = mujoco.mj_step
    for k in range(1, n + 1):
        step(mj, data)
        if k % every == 0:
            out[k // every] = data.qpos
    return out, time.perf_counter() - t0


def mujoco_c_loop(mj, q0, qd0, t_end):
    """MuJoCo's own time: the same steps in its C loop (``mujoco.rollout``, one thread), wall s."""
    import mujoco
    from mujoco import rollout
    data = mujoco.MjData(mj)
    data.qpos[:], data.qvel[:] = q0, qd0
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    state = np.empty(mujoco.mj_stateSize(mj, spec))
    mujoco.mj_getState(mj, data, state, spec)
    n = int(round(t_end / mj.opt.timestep))
    t0 = time.perf_counter()
    rollout.rollout(mj, data, state[None, :], nstep=n)
    return time.perf_counter() - t0


# ---- our runs --------------------------------------------------------------------------------------
def our_tip(res, model, tip):
    """Tip positions (N, 3) of a run: link 7's frame moved from its initial pose."""
    b = model.bodies["link7"].values
    local = rotation_matrix(np.asarray(b["orientation"])).T @ (np.asarray(tip) - b["position"])
    return res.body_position("link7") + np.einsum("nij,j->ni", res.body_rotation("link7"), local)


def timed_run(compiled, repeat, **overrides):
    best, res = np.inf, None
    for _ in range(repeat):
        t0 = time.perf_counter()
        res = solver.simulate(compiled, **overrides)
        best = min(best, time.perf_counter() - t0)
    return res, best


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
    import mujoco
    model, tip = free_falling_arm()
    s = model.settings.values
    compiled = solver.compile_model(model)          # warm the cache (and the kernels) once
    system = compiled.system
    q0, qd0, _ = system.initial_state()
    ref = solver.simulate(compiled, **REFERENCE)
    tip_ref = our_tip(ref, model, tip)
    rows = []

    def row(who, setting, tips, wall, c_wall=None, note="", stride=1):
        """stride: the tips are at every stride-th output time (a MuJoCo step longer than the output step)."""
        err = float(np.max(np.linalg.norm(tips - tip_ref[::stride], axis=1)))
        rows.append(dict(who=who, setting=setting, error=err, wall=wall, c_wall=c_wall, note=note))
        return err

    check = None
    for dt in STEPS:
        mj = mujoco.MjModel.from_xml_string(mjcf(model, dt, tip))
        cols = coordinate_map(system, mj)
        n = repeat if dt > 1e-5 else 1
        qpos, wall = min((mujoco_python_loop(mj, q0[cols], qd0[cols], s["t_end"], s["output_step"])
                          for _ in range(n)), key=lambda r: r[1])
        c_wall = min(mujoco_c_loop(mj, q0[cols], qd0[cols], s["t_end"]) for _ in range(n))
        check = row("MuJoCo RK4", f"dt = {dt:g} s", mujoco_tip(mj, qpos), wall, c_wall,
                    stride=max(1, int(round(dt / s["output_step"]))))
    res, wall = timed_run(compiled, repeat)
    row("MBS Studio", f"saved settings ({s['integrator']}, rtol {s['rtol']:g}, atol {s['atol']:g})",
        our_tip(res, model, tip), wall, note=f"{res.summary()['steps']} steps, {res.summary()['rhs_evaluations']} rhs")
    for integrator in dict.fromkeys((s["integrator"], "rk")):
        for rtol in RTOLS:
            res, wall = timed_run(compiled, repeat, integrator=integrator, rtol=rtol, atol=rtol / 100)
            summ = res.summary()
            row("MBS Studio", f"{integrator}, rtol {rtol:g}", our_tip(res, model, tip), wall,
                note=f"{summ['steps']} steps, {summ['rhs_evaluations']} rhs")
    build = cold_build(model)
    return rows, dict(check=check, build=build, generated=compiled.generated, settings=dict(s),
                      notice=compiled.notices[0] if compiled.notices else "")


def at_equal_error(rows, error):
    """Wall time of MuJoCo RK4 (Python loop, C loop) at the step reaching ``error``: log–log
    interpolation between the two steps around it (the error of RK4 falls like dt⁴)."""
    mj = sorted((r for r in rows if r["who"] == "MuJoCo RK4"), key=lambda r: -r["error"])
    for a, b in zip(mj, mj[1:]):
        if b["error"] <= error <= a["error"]:
            f = np.log(error / a["error"]) / np.log(b["error"] / a["error"])
            return tuple(float(np.exp(np.log(a[k]) + f * np.log(b[k] / a[k]))) for k in ("wall", "c_wall"))
    return None


def table(rows, info):
    head = ("code", "setting", "tip error max m", "wall s", "MuJoCo C loop s", "× MuJoCo RK4 at equal error", "notes")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        ratio = ""
        if r["who"] == "MBS Studio":
            equal = at_equal_error(rows, r["error"])
            ratio = f"{r['wall'] / equal[0]:.1f} (C loop {r['wall'] / equal[1]:.0f})" if equal else "outside the RK4 range"
        cells = (r["who"], r["setting"], f"{r['error']:.2e}", f"{r['wall']:.3f}",
                 "" if r["c_wall"] is None else f"{r['c_wall']:.4f}", ratio, r["note"])
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def profile(top=15):
    """cProfile of a warm default run, top ``top`` functions by own time."""
    model, _ = free_falling_arm()
    compiled = solver.compile_model(model)
    solver.simulate(compiled)
    prof = cProfile.Profile()
    prof.enable()
    solver.simulate(compiled)
    prof.disable()
    buf = io.StringIO()
    pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(top)
    return buf.getvalue().replace(str(ROOT) + "/", "")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--markdown", action="store_true", help="only the table (docs/performance.md)")
    ap.add_argument("--repeat", type=int, default=3, help="best of this many runs (default 3)")
    ap.add_argument("--profile", action="store_true", help="also a cProfile of the warm default run")
    args = ap.parse_args(argv)
    rows, info = study(args.repeat)
    print(table(rows, info))
    print(f"\nReference: relative formulation, DOP853 rtol 1e-12; MuJoCo RK4 at dt = {STEPS[-1]:g} s is "
          f"{info['check']:.1e} m from it.  Saved settings: {info['settings']['formulation']}, "
          f"{'generated kernels' if info['generated'] else 'generic path'} ({info['notice']}); cold build "
          f"{info['build']:.2f} s (not in the wall times).")
    if args.profile:
        print("\n" + profile())


if __name__ == "__main__":
    main()
