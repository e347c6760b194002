"""MJCF import (solver/io/mjcf.py) against MuJoCo reading the same file: joint-space mass matrix
and generalized forces at random states (coordinates mapped by tools/mjcf_corpus.py, its
docstring: hinge/slide q − qpos0, ball and free joints through J and J̇v), a default
``solver.simulate`` run against MuJoCo's RK4 at a small step, the mapping itself, and refusals."""
from __future__ import annotations

import os
import sys

import mujoco                  # the `test` extra: MuJoCo reads the files and is the reference
import numpy as np
import pytest

import solver
from solver.expressions import time_function
from solver.formulations.relative import RelativeSystem
from solver.io.mjcf import import_mjcf, read_mjcf
from solver.io.project import load_project

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from tools import mjcf_corpus  # noqa: E402

# A chain: a hinge with damping, a body with two hinges (an intermediate body), a slide with a
# spring whose springref is not its qpos0, a hinge with a ref (qpos0 ≠ 0) and limits; inertia from
# geoms (capsule, box, sphere, ellipsoid) and an explicit <inertial> with a rotated frame; armature
# on a hinge, on the second joint of a body and on the slide (MuJoCo's qM includes it).
CHAIN = """<mujoco model="chain">
  <compiler angle="radian"/>
  <option gravity="0 0 -9.81"/>
  <worldbody>
    <body name="a" pos="0 0 1" euler="0 0.7 0">
      <joint name="h1" type="hinge" axis="0 1 0" damping="0.05" armature="0.02"/>
      <geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.05"/>
      <body name="b" pos="0 0 -0.5" euler="0.5 0 0">
        <joint name="h2" type="hinge" axis="1 0 0"/>
        <joint name="h3" type="hinge" axis="0 1 0.3" pos="0 0 -0.02" armature="0.01"/>
        <geom type="box" pos="0 0 -0.2" size="0.03 0.05 0.2"/>
        <body name="c" pos="0 0 -0.4">
          <joint name="s" type="slide" axis="0 0.2 1" stiffness="50" springref="0.05" range="-0.3 0.3" armature="0.05"/>
          <geom type="sphere" size="0.08"/>
          <body name="d" pos="0.1 0 0">
            <joint name="h4" type="hinge" axis="1 0 0" ref="0.4" range="-1 2" stiffness="2" springref="0.1"/>
            <inertial pos="0.05 0.02 -0.1" quat="0.9 0.1 0.3 0.2" mass="0.7" diaginertia="0.004 0.003 0.002"/>
            <geom type="ellipsoid" size="0.05 0.03 0.1" pos="0 0 -0.1"/>
          </body>
        </body>
      </body>
    </body>
  </worldbody>
  <actuator><motor joint="h1" gear="2"/></actuator>
</mujoco>
"""

# A floating base with a ball joint (the free and ball coordinate maps).
FLOATING = """<mujoco model="floating">
  <worldbody>
    <body name="base" pos="0.1 -0.2 2" quat="0.8 0.2 -0.3 0.4">
      <freejoint name="root"/>
      <geom type="box" size="0.2 0.1 0.05" pos="0.02 0 0.01"/>
      <body name="arm" pos="0.2 0 0" quat="0.9 0 0.3 0.1">
        <joint name="shoulder" type="ball"/>
        <geom type="capsule" fromto="0 0 0 0.3 0.1 0" size="0.03"/>
        <body name="hand" pos="0.3 0.1 0">
          <joint name="wrist" type="hinge" axis="0 0 1" damping="0.1"/>
          <geom type="cylinder" size="0.04 0.02" pos="0.05 0 0"/>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>
"""

# A gimbal hanging from ground: a ball joint then a body with two hinges (the second with armature),
# tilted at qpos0.
GIMBAL = """<mujoco model="gimbal">
  <worldbody>
    <body name="link" pos="0 0 1" euler="20 30 0">
      <joint name="ball" type="ball" damping="0"/>
      <geom type="capsule" fromto="0 0 0 0.1 0 -0.4" size="0.04"/>
      <body name="tip" pos="0.1 0 -0.4" euler="0 0 40">
        <joint name="t1" type="hinge" axis="1 0 0"/>
        <joint name="t2" type="hinge" axis="0 1 0" armature="0.003"/>
        <geom type="box" size="0.1 0.04 0.02" pos="0.1 0 0"/>
      </body>
    </body>
  </worldbody>
</mujoco>
"""


# A jointless body MuJoCo keeps (a sensor names it, so it is not fused): a fixed joint to its parent.
KEPT = """<mujoco model="kept"><worldbody>
  <body name="a" pos="0 0 1"><joint name="h" type="hinge" axis="0 1 0"/>
    <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03"/>
    <body name="b" pos="0.3 0 0" euler="0 0.4 0"><geom type="box" size="0.05 0.05 0.1" pos="0 0 -0.1"/>
      <body name="c" pos="0 0 -0.2"><joint name="h2" type="hinge" axis="1 0 0"/><geom type="sphere" size="0.05"/>
  </body></body></body></worldbody>
  <sensor><framepos objtype="body" objname="b"/></sensor></mujoco>
"""


def write(tmp_path, text, name="model.xml"):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


# ---- against MuJoCo: M and the generalized forces --------------------------------------------------
@pytest.mark.parametrize("text", [CHAIN, FLOATING, GIMBAL, KEPT], ids=["chain", "floating", "gimbal", "kept"])
def test_mass_matrix_and_forces_equal_mujoco(tmp_path, text):
    path = write(tmp_path, text)
    result = read_mjcf(path, visuals=False, enforce_limits=False)
    if text is KEPT:
        assert result.model.joints["b_weld"].type == "fixed" and list(result.model.bodies) == ["a", "b", "c"]
    dM, dQ, why = mjcf_corpus.compare_dynamics(path, result, states=6, seed=3)
    print(f"{result.model.name}: mass matrix {dM:.2e}, generalized forces {dQ:.2e}")
    assert why is None and dM < 1e-12 and dQ < 1e-12


@pytest.mark.parametrize("name", ["cartpole", pytest.param("acrobot", marks=pytest.mark.sweep),
                                  pytest.param("cheetah", marks=pytest.mark.sweep), "humanoid"])
def test_dm_control_models_equal_mujoco(name):
    import dm_control
    path = os.path.join(os.path.dirname(dm_control.__file__), "suite", f"{name}.xml")
    result = read_mjcf(path, visuals=False, enforce_limits=False)
    dM, dQ, why = mjcf_corpus.compare_dynamics(path, result, states=3, seed=1)
    print(f"{name}: mass matrix {dM:.2e}, generalized forces {dQ:.2e}")
    assert why is None and dM < 1e-12 and dQ < 1e-12


def test_the_coordinate_map_is_checked_by_a_wrong_one(tmp_path):
    """The comparison can fail: with the ball joint's marker rotation left out of the map, M differs."""
    path = write(tmp_path, GIMBAL)
    result = read_mjcf(path, visuals=False)
    system = RelativeSystem(result.model)
    mj = mjcf_corpus.reference_model(path)
    cmap = mjcf_corpus.CoordinateMap(mj, result, system)
    cmap.items = [(k, j, cols, np.array([1.0, 0, 0, 0]) if k == "mjJNT_BALL" else c) for k, j, cols, c in cmap.items]
    qpos, qvel = mjcf_corpus.random_state(mj, np.random.default_rng(0))
    x, xd, J, _ = cmap(qpos, qvel)
    data = mujoco.MjData(mj)
    data.qpos[:] = qpos
    mujoco.mj_forward(mj, data)
    M_mj = np.zeros((mj.nv, mj.nv))
    mujoco.mj_fullM(mj, data, M_mj)
    assert np.max(np.abs(J.T @ system.mass(x) @ J - M_mj)) > 1e-3 * np.max(np.abs(M_mj))


# ---- against MuJoCo: a run ------------------------------------------------------------------------
def mujoco_run(path, times, dt, ctrl=None):
    """Body CM positions of MuJoCo's RK4 run (constraints and contacts off) at ``times``; ``ctrl``:
    a function of t giving the controls, held over each step at their value at its midpoint."""
    mj = mjcf_corpus.reference_model(path)
    mj.opt.timestep = dt
    mj.opt.integrator = mujoco.mjtIntegrator.mjINT_RK4
    mj.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONSTRAINT
    data = mujoco.MjData(mj)
    mujoco.mj_forward(mj, data)
    out, k = [], 0
    for t in times:
        while k * dt < t - 1e-12:
            if ctrl is not None:
                data.ctrl[:] = ctrl((k + 0.5) * dt)
            mujoco.mj_step(mj, data)
            k += 1
        out.append(data.xipos.copy())
    return mj, np.array(out)


@pytest.mark.parametrize("text", [pytest.param(CHAIN, marks=pytest.mark.sweep), GIMBAL], ids=["chain", "gimbal"])
def test_default_run_follows_mujoco_rk4(tmp_path, text):
    """solver.simulate with its defaults (generated kernels, compiled DOP853 loop, rtol 1e-8)
    against MuJoCo's RK4 at h = 2e-4 s over 0.5 s.  RK4's error at h is estimated from the run at
    h/2 (Richardson: e(h) ≈ 16/15 |x_h − x_{h/2}|); our error is of the order of the tolerance
    (rtol · 1 m per unit time, amplified by the motion's sensitivity, ≤ 1e-6 m here).  The chain
    (its kernels take ≈ 5 s to generate and build in a fresh cache) is a sweep test: chain 6.9e-9 m,
    gimbal 9.5e-11 m, MuJoCo's RK4 error ≈ 1e-10 m."""
    path = write(tmp_path, text)
    result = read_mjcf(path, visuals=False, enforce_limits=False)    # MuJoCo's limits are soft: off in both
    res = solver.simulate(result.model, t_end=0.5, output_step=0.05)
    assert res.status == "ok"
    mj, ref = mujoco_run(path, res.t, 2e-4)
    _, fine = mujoco_run(path, res.t, 1e-4)
    rk4_error = 16 / 15 * np.max(np.abs(ref - fine))
    worst = 0.0
    for b in range(1, mj.nbody):
        name = mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_BODY, b)
        worst = max(worst, float(np.max(np.abs(res.body_position(name) - fine[:, b]))))
    moved = float(np.max(np.abs(fine[-1] - fine[0])))
    print(f"{result.model.name}: largest CM difference {worst:.2e} m over a motion of {moved:.2f} m "
          f"(MuJoCo RK4 error ≈ {rk4_error:.1e} m)")
    assert moved > 0.05 and worst < 1e-6 + 10 * rk4_error


# A pendulum on a hinge with a <motor> (gear 2) carrying a slider with a fixed-gain <general>
# actuator (force 1.5 × 3 × ctrl), a ctrlrange; the velocity servo is noted, not imported.
ACTUATED = """<mujoco model="actuated">
  <option gravity="0 0 -9.81"/>
  <worldbody>
    <body name="arm" pos="0 0 1">
      <joint name="hinge" type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0.4 0 -0.2" size="0.03"/>
      <body name="slider" pos="0.4 0 -0.2">
        <joint name="slide" type="slide" axis="1 0 0.5"/>
        <geom type="box" size="0.05 0.04 0.03"/>
      </body>
    </body>
  </worldbody>
  <actuator>
    <motor name="drive" joint="hinge" gear="2" ctrllimited="true" ctrlrange="-1 1"/>
    <general name="push" joint="slide" gear="1.5" gainprm="3"/>
    <velocity name="servo" joint="slide" kv="0"/>
  </actuator>
</mujoco>
"""


@pytest.mark.parametrize("controls", [(0.3, -0.5), ("0.5*sin(4*t)", "cos(3*t)")], ids=["constant", "varying"])
def test_actuators_driven_by_inputs_follow_mujoco_rk4(tmp_path, controls):
    """The motor and the general actuator import as joint actuators with inputs 'drive' and 'push'
    (F = gear · gain · ctrl); the default run with those inputs against MuJoCo's RK4 with the same
    ctrl (h = 2e-4 s, 0.5 s).  A constant ctrl is exact in MuJoCo; a varying one is held over each
    step at its midpoint value, a second-order error that the run at h/2 estimates (Richardson,
    4/3 |x_h − x_{h/2}|) beside RK4's; ours is of the order of the tolerance (rtol 1e-8 over a
    motion of ≈ 1 m, ≤ 1e-6 m as in test_default_run_follows_mujoco_rk4; the actuators are in the
    kernels, the step loop in C).  Measured: constant 1.7e-9 m (MuJoCo ≈ 1.4e-10 m), varying
    2.7e-9 m (MuJoCo's midpoint hold ≈ 1.3e-8 m), the slider moved 0.5 and 1.0 m by the actuators."""
    path = write(tmp_path, ACTUATED)
    result = read_mjcf(path, visuals=False)
    assert any("actuator 'servo': not imported: its force depends on the state" in n for n in result.notes)
    assert any("actuator 'drive': its ctrlrange -1 … 1 is not enforced" in n for n in result.notes)
    off = read_mjcf(write(tmp_path, ACTUATED.replace("<option ", '<option><flag actuation="disable"/></option><option '),
                          "off.xml"), visuals=False)
    assert not off.model.inputs and "option: actuation disabled (disableflags); not imported" in off.notes
    inputs = dict(zip(("drive", "push"), controls))
    res = solver.simulate(result.model, inputs=inputs, t_end=0.5, output_step=0.05)
    assert res.status == "ok" and any(e["message"].startswith("step loop in C") for e in res.events)
    functions = [time_function(c) for c in controls]

    def ctrl(t):
        return [f.value(t) for f in functions] + [0.0]            # the servo's ctrl: 0 (kv = 0: no force)
    mj, ref = mujoco_run(path, res.t, 2e-4, ctrl)
    _, fine = mujoco_run(path, res.t, 1e-4, ctrl)
    error = 4 / 3 * np.max(np.abs(ref - fine))
    worst = max(float(np.max(np.abs(res.body_position(name) - fine[:, b]))) for b, name in ((1, "arm"), (2, "slider")))
    idle = solver.simulate(result.model, t_end=0.5, output_step=0.05).body_position("slider")
    moved = float(np.max(np.abs(res.body_position("slider") - idle)))    # what the actuators did
    print(f"actuated: largest CM difference {worst:.2e} m, actuators moved the slider {moved:.2f} m "
          f"(MuJoCo's error ≈ {error:.1e} m)")
    assert moved > 0.01 and worst < 1e-6 + 10 * error


# ---- what the import builds -----------------------------------------------------------------------
def test_mapping_of_joints_limits_springs_and_notes(tmp_path):
    result = read_mjcf(write(tmp_path, CHAIN))
    m = result.model
    assert list(m.bodies) == ["a", "b_h2_link", "b", "c", "d"]        # b's two joints: one intermediate body
    assert m.bodies["b_h2_link"].mass < 1e-15 and m.joints["h2"].body_j == "b_h2_link"
    assert m.joints["h3"].body_i == "b_h2_link" and m.joints["h3"].body_j == "b"
    assert [m.joints[j].type for j in ("h1", "h2", "h3", "s", "h4")] == ["revolute"] * 3 + ["prismatic", "revolute"]
    h4 = m.joints["h4"]                       # range −1..2 about ref 0.4: limits −1.4..1.6 in our coordinate
    assert np.isclose(h4.lower_limit, -1.4) and np.isclose(h4.upper_limit, 1.6) and h4.stops
    assert np.isclose(m.forces["h4_spring"].free_angle, 0.1 - 0.4) and m.forces["h4_spring"].stiffness == 2.0
    assert m.forces["h1_spring"].damping == 0.05
    assert np.allclose(m.gravity, [0, 0, -9.81]) and m.settings.formulation == "relative"
    motor = m.forces["actuator0_motor"]                 # the unnamed <motor joint="h1" gear="2">
    assert (motor.KIND, motor.joint, motor.gain) == ("joint_actuator", "h1", 2.0)
    assert m.inputs["actuator0"].target == "forces.actuator0_motor.force" and m.inputs["actuator0"].default == 0.0
    assert sorted(result.meshes) == ["a", "b", "c", "d"]
    outside = read_mjcf(write(tmp_path, CHAIN.replace('range="-1 2"', 'range="0.5 2"'), "outside.xml"))
    assert any("joint 'h4': qpos0 is outside its range 0.5 … 2" in n for n in outside.notes)


def test_equalities_close_loops_and_couple_joints(tmp_path):
    """A four-bar closed by <equality connect>: a spherical joint; a joint equality (MuJoCo:
    q1 − q1₀ = Σ cₖ (q2 − q2₀)ᵏ): a coupler, spinner angle = 2 × crank angle while the loop moves.
    The closed four-bar runs with the constraint held; a joint equality without joint2 holds the
    joint at c₀ (a constant driver)."""
    text = """<mujoco model="fourbar">
      <worldbody>
        <body name="crank" pos="0 0 0"><joint name="j1" type="hinge" axis="0 1 0"/>
          <geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.02"/>
          <body name="coupler" pos="0.2 0 0"><joint name="j2" type="hinge" axis="0 1 0"/>
            <geom type="capsule" fromto="0 0 0 0.3 0 0.4" size="0.02"/></body></body>
        <body name="rocker" pos="0.5 0 0"><joint name="j3" type="hinge" axis="0 1 0"/>
          <geom type="capsule" fromto="0 0 0 0 0 0.4" size="0.02"/>
          <body name="flag" pos="0 0 0.4"><geom type="box" size="0.05 0.01 0.03"/></body></body>
        <body name="spinner" pos="1 0 0"><joint name="j4" type="hinge" axis="0 0 1"/>
          <geom type="box" size="0.1 0.02 0.02"/></body>
      </worldbody>
      <equality>
        <connect name="close" body1="coupler" body2="rocker" anchor="0.3 0 0.4"/>
        <joint name="gear" joint1="j4" joint2="j1" polycoef="0 2 0 0 0"/>
      </equality>
    </mujoco>"""
    result = read_mjcf(write(tmp_path, text))
    m = result.model
    assert m.joints["close"].type == "spherical" and {m.joints["close"].body_i, m.joints["close"].body_j} == \
        {"coupler", "rocker"} and np.allclose(m.joints["close"].origin, [0.5, 0, 0.4])
    gear = m.couplers["gear"]
    assert (gear.joint_i, gear.joint_j, gear.ratio, gear.offset) == ("j1", "j4", 2.0, 0.0)
    res = solver.simulate(m, t_end=0.3, output_step=0.05)
    assert res.status == "ok" and np.max(res.constraint_violation) < 1e-8
    R1, R4 = res.body_rotation("crank"), res.body_rotation("spinner")       # identity at qpos0
    crank = np.arctan2(R1[:, 0, 2], R1[:, 0, 0])                             # about +y
    spinner = np.arctan2(R4[:, 1, 0], R4[:, 0, 0])                           # about +z
    assert np.ptp(crank) > 0.05 and np.max(np.abs(spinner - 2 * crank)) < 1e-8
    held = read_mjcf(write(tmp_path, text.replace('joint2="j1" polycoef="0 2 0 0 0"', 'polycoef="0.3 0 0 0 0"'),
                           "held.xml")).model
    assert held.drivers["gear"].joint == "j4" and float(held.drivers["gear"].expression) == 0.3


def test_import_writes_the_project_and_meshes(tmp_path):
    out = tmp_path / "chain.mbs.json"
    result = import_mjcf(write(tmp_path, CHAIN), out)
    m = load_project(str(out))
    assert m.bodies["a"].geometry["file"] == "chain_meshes/a.stl" and (tmp_path / "chain_meshes" / "a.stl").is_file()
    assert "b_h2_link" not in result.meshes


# ---- refusals ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("text, message", [
    ("<mujoco><worldbody><body><joint type='hinge'/><geom size='0.1'/></body></worldbody>", "not well-formed XML"),
    ("<mujoco><worldbody><body><joint type='spring'/><geom size='0.1'/></body></worldbody></mujoco>",
     "MuJoCo cannot read it"),
    ("<mujoco><include file='../elsewhere.xml'/></mujoco>", "include file='../elsewhere.xml'"),
    ("<mujoco><asset><model name='m' file='/etc/robot.xml'/></asset></mujoco>", "model file='/etc/robot.xml'"),
    ("<mujoco><asset><mesh name='m' file='/etc/passwd'/></asset></mujoco>", "mesh 'm'.file: must be a path inside"),
    ("""<mujoco><worldbody><body name="a"><joint type="hinge"/><geom size="0.1"/></body>
       <body name="b" pos="1 0 0"><joint type="hinge"/><geom size="0.1"/></body></worldbody>
       <equality><weld body1="a" body2="b" relpose="0 0 0 1 0 0 0"/></equality></mujoco>""",
     "not satisfied at qpos0"),
])
def test_bad_files_are_model_errors(tmp_path, text, message):
    with pytest.raises(solver.ModelError) as err:
        read_mjcf(write(tmp_path, text))
    assert message in str(err.value), str(err.value)


# ---- the command ------------------------------------------------------------------------------------
def test_mbs_import_dispatches_on_the_root_element(tmp_path, capsys):
    """``mbs import`` reads a file whose root element is <mujoco> as MJCF (a ``.urdf`` is URDF);
    a refused one is exit 2 with MuJoCo's message, control characters escaped."""
    from solver import cli
    source = write(tmp_path, CHAIN, "chain.xml")
    out = tmp_path / "chain.mbs.json"
    assert cli.main(["import", source, "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "imported 'chain': 5 bodies, 5 joints, 4 forces" in printed
    assert "note: actuator 'actuator0': → joint actuator 'actuator0_motor' on joint 'h1'" in printed
    assert list(load_project(str(out)).bodies) == ["a", "b_h2_link", "b", "c", "d"]
    bad = write(tmp_path, "<mujoco><worldbody><body name='x\u202e'><joint type='spring'/></body></worldbody></mujoco>",
                "bad.xml")
    assert cli.main(["import", bad, "-o", str(tmp_path / "bad.mbs.json")]) == 2
    assert read_mjcf(write(tmp_path, "<mujoco/>", "unnamed.xml")).model.name == "unnamed"      # no model name
    err = capsys.readouterr().err
    assert "bad.xml: MuJoCo cannot read it" in err and "\u202e" not in err
    assert cli.main(["import", source, "-o", str(out), "--package-dir", str(tmp_path)]) == 2
    other = write(tmp_path, CHAIN, "chain.mjcf")
    assert cli.main(["import", other, "-o", str(out)]) == 2 and "must end in .xml" in capsys.readouterr().err


def test_mesh_geoms_are_drawn_from_mujocos_compiled_mesh(tmp_path):
    """A mesh file (an off-centre box, scaled by the <mesh>) read by MuJoCo within the import's
    bounds, drawn in the body frame: the box about the body's CM, its colour from the material."""
    import trimesh
    (tmp_path / "parts").mkdir()
    box = trimesh.creation.box(extents=(0.1, 0.2, 0.3))
    box.apply_translation((1.0, 0.0, 0.0))
    box.export(tmp_path / "parts" / "box.stl")
    text = """<mujoco model="meshy"><compiler meshdir="parts"/>
      <asset><mesh name="box" file="box.stl" scale="2 2 2"/><material name="red" rgba="0.9 0.1 0.1 1"/></asset>
      <worldbody><body name="slab" pos="0 0 1" euler="0 0 30"><joint type="hinge" axis="0 1 0"/>
        <geom type="mesh" mesh="box" material="red"/></body></worldbody></mujoco>"""
    result = read_mjcf(write(tmp_path, text))
    mesh = result.meshes["slab"]
    assert np.allclose(mesh.bounds, [[-0.1, -0.2, -0.3], [0.1, 0.2, 0.3]], atol=1e-9)
    assert np.allclose(result.colors["slab"], (0.9, 0.1, 0.1))
    assert np.allclose(result.model.bodies["slab"].position, [2 * np.cos(np.pi / 6), 2 * np.sin(np.pi / 6), 1.0])


def test_asset_and_size_bounds_hold_before_mujoco_reads(tmp_path, monkeypatch):
    """A mesh reached through a link that leaves the folder, more bodies than the bound, and drawn
    geoms above the vertex budget are refused before the work (as MuJoCo would open them)."""
    import trimesh

    from solver.io import mjcf_files, urdf_mesh
    outside = tmp_path / "outside"
    outside.mkdir()
    trimesh.creation.box().export(outside / "box.stl")
    model = tmp_path / "model"
    model.mkdir()
    (model / "parts").symlink_to(outside)
    text = """<mujoco><asset><mesh name="m" file="parts/box.stl"/></asset><worldbody><body>
      <joint type="hinge"/><geom type="mesh" mesh="m"/></body></worldbody></mujoco>"""
    with pytest.raises(solver.ModelError, match="mesh 'm'.file: must be a path inside the folder.*leads outside"):
        read_mjcf(write(model, text))
    monkeypatch.setattr(mjcf_files, "MAX_BODIES", 3)
    with pytest.raises(solver.ModelError, match="bodies, more than 3"):
        read_mjcf(write(tmp_path, CHAIN))
    monkeypatch.setattr(mjcf_files, "MAX_BODIES", 10_000)
    monkeypatch.setattr(urdf_mesh, "MAX_VERTICES", 100)
    with pytest.raises(solver.ModelError, match="more than 100 vertices"):
        read_mjcf(write(tmp_path, CHAIN))
    assert read_mjcf(write(tmp_path, CHAIN), visuals=False).model.bodies        # the model alone draws nothing
