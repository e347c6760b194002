"""URDF import (solver/io/urdf.py): joint-space mass matrix and inverse dynamics against MuJoCo
(which reads the same URDF), the file round trip, meshes, limits, and the refusals.

Coordinate mapping to MuJoCo: by joint name (``mujoco_and_ours`` in tests/solver/robots.py, which
also holds the in-line URDF of the KUKA LBR iiwa 14).
Inverse dynamics in our solver: τ = M(q) q̈ − P(q, q̇) (P: gravity and velocity terms, Kim & You
(1997) eq. 15); MuJoCo: ``mj_inverse`` (constraints disabled, no armature, damping or friction).
"""
from __future__ import annotations

import json

import mujoco                  # the `test` extra: the peer library that reads the same URDF
import numpy as np
import pytest

import solver
from solver.formulations.relative import RelativeSystem
from solver.io.project import load_project
from solver.io.urdf import import_urdf, read_urdf
from robots import IIWA_JOINTS, IIWA_LINKS, MUJOCO_FLAGS, _joint, _link, iiwa_urdf, mujoco_and_ours, write

# A planar 2-link: the acrobot of Spong (1995) as Drake's acrobot.urdf describes it (1 kg links of
# 1 m and 2 m CM offset, massless base that is the ground, continuous joints about y).
ACROBOT = f"""<?xml version="1.0"?>
<robot name="acrobot">{MUJOCO_FLAGS}
  <link name="base_link"/>
  {_link("upper_link", 1.0, "0 0 -0.5", "0 0 0", 1.0, 0.083, 1.0)}
  {_link("lower_link", 1.0, "0 0 -1", "0 0 0", 1.0, 0.33, 1.0)}
  {_joint("shoulder", "continuous", "base_link", "upper_link", "0 0.15 0", axis="0 1 0")}
  {_joint("elbow", "continuous", "upper_link", "lower_link", "0 0.1 -1", axis="0 1 0")}
</robot>
"""


# ---- against MuJoCo -------------------------------------------------------------------------------
def compare(tmp_path, text, limits, states=6, seed=7):
    mj, system, ours = mujoco_and_ours(tmp_path, text)
    data = mujoco.MjData(mj)
    rng = np.random.default_rng(seed)
    n = mj.nv
    worst_M = worst_tau = 0.0
    for _ in range(states):
        q, qd, qdd = rng.uniform(-0.9, 0.9, n) * limits, rng.normal(0, 2.0, n), rng.normal(0, 5.0, n)
        data.qpos[:], data.qvel[:], data.qacc[:] = q, qd, qdd
        mujoco.mj_inverse(mj, data)
        M_mj = np.zeros((n, n))
        mujoco.mj_fullM(mj, data, M_mj)              # MuJoCo 3.3+: (model, data, dst)
        tau_mj = data.qfrc_inverse.copy()

        x, xd, xdd = np.zeros(n), np.zeros(n), np.zeros(n)
        x[ours], xd[ours], xdd[ours] = q, qd, qdd
        M = system.mass(x)[np.ix_(ours, ours)]
        tau = (system.mass(x) @ xdd - system.forces(x, xd, 0.0))[ours]
        worst_M = max(worst_M, np.max(np.abs(M - M_mj)) / np.max(np.abs(M_mj)))
        worst_tau = max(worst_tau, np.max(np.abs(tau - tau_mj)) / np.max(np.abs(tau_mj)))
    return worst_M, worst_tau


def test_iiwa_mass_matrix_and_inverse_dynamics_equal_mujoco(tmp_path):
    limits = np.array([lim for *_, lim in IIWA_JOINTS])
    worst_M, worst_tau = compare(tmp_path, iiwa_urdf(), limits)
    print(f"iiwa: mass matrix {worst_M:.2e}, inverse dynamics {worst_tau:.2e} (relative to the largest entry)")
    assert worst_M < 1e-9 and worst_tau < 1e-9


def test_planar_two_link_equals_mujoco(tmp_path):
    worst_M, worst_tau = compare(tmp_path, ACROBOT, np.array([np.pi, np.pi]))
    print(f"acrobot: mass matrix {worst_M:.2e}, inverse dynamics {worst_tau:.2e}")
    assert worst_M < 1e-9 and worst_tau < 1e-9


# A revolute–prismatic–revolute arm with tilted axes and rotated joint and inertial frames: the
# prismatic mapping (axis, sign, zero) against MuJoCo's slide joint.
RPR = f"""<?xml version="1.0"?>
<robot name="rpr">{MUJOCO_FLAGS}
  <link name="world"/>
  {_link("a", 2.0, "0.1 0 0.2", "0.3 0 0", .05, .04, .03, .002, .001, -.003)}
  {_link("b", 1.5, "0 0.05 0.3", "0 -0.2 0.5", .03, .03, .01, 0, .002, 0)}
  {_link("c", 0.8, "0.2 0 0", "0.1 0.1 0.1", .004, .01, .01, .0005, 0, 0)}
  {_joint("j1", "revolute", "world", "a", "0 0 0.1", "0 0 0.4", "0 0.6 0.8", '<limit lower="-3" upper="3" effort="1" velocity="1"/>')}
  {_joint("j2", "prismatic", "a", "b", "0.2 0 0.3", "0.5 0 0", "1 1 0", '<limit lower="-0.4" upper="0.4" effort="1" velocity="1"/>')}
  {_joint("j3", "revolute", "b", "c", "0 0 0.6", "0 0.7 0", "1 0 0", '<limit lower="-3" upper="3" effort="1" velocity="1"/>')}
</robot>
"""


def test_revolute_prismatic_arm_equals_mujoco(tmp_path):
    worst_M, worst_tau = compare(tmp_path, RPR, np.array([3.0, 0.4, 3.0]))
    print(f"rpr: mass matrix {worst_M:.2e}, inverse dynamics {worst_tau:.2e}")
    assert worst_M < 1e-9 and worst_tau < 1e-9


def test_acrobot_mass_matrix_closed_form(tmp_path):
    """Independent of MuJoCo: Spong's acrobot M(θ2) with l1 = 1, lc1 = 0.5, lc2 = 1, m = 1,
    I1 = 0.083, I2 = 0.33 about the CMs: M11 = I1 + I2 + m lc1² + m (l1² + lc2² + 2 l1 lc2 cos θ2),
    M12 = I2 + m (lc2² + l1 lc2 cos θ2), M22 = I2 + m lc2²."""
    system = RelativeSystem(read_urdf(write(tmp_path, ACROBOT)).model)
    for t2 in (0.0, 0.7, -2.1):
        c = np.cos(t2)
        expected = np.array([[0.083 + 0.33 + 0.25 + 1 + 1 + 2 * c, 0.33 + 1 + c], [0.33 + 1 + c, 0.33 + 1]])
        assert np.allclose(system.mass(np.array([0.3, t2])), expected, rtol=1e-12, atol=1e-12)


# ---- what the import builds -----------------------------------------------------------------------
def test_mapping_of_links_joints_and_limits(tmp_path):
    result = read_urdf(write(tmp_path, iiwa_urdf()))
    m = result.model
    assert list(m.bodies) == [row[0] for row in IIWA_LINKS]                       # tool0 is merged
    assert m.joints["link_0_to_ground"].type == "fixed"
    assert m.joints["joint_ee"].type == "fixed" and m.joints["joint_ee"].body_i == "link_7"
    j2 = m.joints["joint_2"]
    assert (j2.lower_limit, j2.upper_limit, j2.effort_limit, j2.velocity_limit) == (-2.0944, 2.0944, 300.0, 10.0)
    assert np.allclose(j2.origin, [0, 0, 0.36]) and np.allclose(j2.axis, [0, 1, 0], atol=1e-5)
    assert np.allclose(m.gravity, [0, 0, -9.81]) and m.settings.formulation == "relative"
    # link_1's CM: joint_1 frame (0, 0, 0.1575) plus its inertial offset; inertia rotated by rpy
    b1 = m.bodies["link_1"]
    assert np.allclose(b1.position, [0, -0.03, 0.2775])
    from solver.model.fields import inertia_matrix
    R = _rpy(0.1, -0.05, 0.2)
    J_urdf = inertia_matrix([.1, .09, .02, .003, .004, -.002])
    assert np.allclose(inertia_matrix(b1.inertia), R @ J_urdf @ R.T, rtol=1e-12)
    assert any("welded to ground" in note for note in result.notes)


def _rpy(r, p, y):
    def rot(axis, a):
        c, s = np.cos(a), np.sin(a)
        i, j = [(1, 2), (2, 0), (0, 1)][axis]
        M = np.eye(3)
        M[i, i], M[i, j], M[j, i], M[j, j] = c, -s, s, c
        return M
    return rot(2, y) @ rot(1, p) @ rot(0, r)


def test_round_trip_through_the_project_file(tmp_path):
    out = tmp_path / "iiwa.mbs.json"
    result = import_urdf(write(tmp_path, iiwa_urdf()), out)
    loaded = load_project(out)
    assert loaded == result.model
    assert json.loads(out.read_text())["model"]["joints"][1]["upper_limit"] == 2.96706
    q = np.linspace(-1, 1, 7)
    assert np.array_equal(RelativeSystem(loaded).mass(q), RelativeSystem(result.model).mass(q))


def test_visual_meshes_are_placed_in_the_body_frame(tmp_path):
    """An STL box of 0.2 m under meshes/, scaled ×2, its visual origin rotated 90° about z and
    moved 0.3 m along x; a sphere on a massless link fixed to the body: both baked into one STL
    in the body frame (origin at the CM 0.1 m above the link origin)."""
    import trimesh
    (tmp_path / "meshes").mkdir()
    trimesh.creation.box(extents=(0.2, 0.1, 0.1)).export(tmp_path / "meshes" / "part.stl")
    text = f"""<robot name="r"><link name="base"/>
      {_link("arm", 1.0, "0 0 0.1", "0 0 0", .01, .01, .01, visual='''<visual>
        <origin xyz="0.3 0 0" rpy="0 0 1.5707963267948966"/><geometry><mesh filename="meshes/part.stl" scale="2 2 2"/>
        </geometry><material name="red"><color rgba="1 0 0 1"/></material></visual>''')}
      <link name="tip"><visual><origin xyz="0 0 0.5"/><geometry><sphere radius="0.05"/></geometry></visual></link>
      {_joint("hinge", "revolute", "base", "arm", "0 0 1", limit='<limit lower="-1" upper="1" effort="5" velocity="2"/>')}
      {_joint("tip_fixed", "fixed", "arm", "tip", "1 0 0")}
    </robot>"""
    out = tmp_path / "out" / "r.mbs.json"
    out.parent.mkdir()
    import_urdf(write(tmp_path, text), out)
    geometry = load_project(out).bodies["arm"].geometry
    assert geometry == {"shape": "mesh", "file": "r_meshes/arm.stl", "scale": 1.0, "color": [1.0, 0.0, 0.0]}
    mesh = trimesh.load(out.parent / "r_meshes" / "arm.stl")
    box, ball = sorted(mesh.split(only_watertight=False), key=lambda p: -p.volume)
    assert np.allclose(box.bounds, [[0.2, -0.2, -0.2], [0.4, 0.2, 0.0]], atol=1e-6)   # rotated: 0.2 × 0.4 × 0.2
    assert np.allclose(ball.bounds.mean(axis=0), [1.0, 0.0, 0.4], atol=1e-6)


@pytest.mark.parametrize("ext", ["stl", "obj", "dae"])
def test_mesh_formats(tmp_path, ext):
    import trimesh
    trimesh.creation.box(extents=(0.1, 0.2, 0.3)).export(tmp_path / f"part.{ext}")
    visual = f'<visual><geometry><mesh filename="part.{ext}"/></geometry></visual>'
    result = read_urdf(write(tmp_path, _one_link(visual=visual)))
    assert np.allclose(result.meshes["arm"].extents, [0.1, 0.2, 0.3]) and len(result.meshes["arm"].faces) == 12


def test_dae_units_are_applied(tmp_path):
    """A DAE in millimetres (<unit meter="0.001"/>, as CAD exports often are) is scaled to metres."""
    import trimesh
    trimesh.creation.box(extents=(100.0, 200.0, 300.0)).export(tmp_path / "mm.dae")
    text = (tmp_path / "mm.dae").read_text().replace("<asset>", '<asset><unit name="millimeter" meter="0.001"/>', 1)
    (tmp_path / "mm.dae").write_text(text)
    visual = '<visual><geometry><mesh filename="mm.dae"/></geometry></visual>'
    result = read_urdf(write(tmp_path, _one_link(visual=visual)))
    assert np.allclose(result.meshes["arm"].extents, [0.1, 0.2, 0.3])


def test_package_paths_resolve_in_the_package_folder(tmp_path):
    import trimesh
    pkg = tmp_path / "ws" / "my_robot" / "meshes"
    pkg.mkdir(parents=True)
    trimesh.creation.box(extents=(0.1, 0.1, 0.1)).export(pkg / "b.stl")
    urdf_dir = tmp_path / "desc"
    urdf_dir.mkdir()
    text = f"""<robot name="r">{_link("b", 1.0, "0 0 0", "0 0 0", .01, .01, .01,
               visual='<visual><geometry><mesh filename="package://my_robot/meshes/b.stl"/></geometry></visual>')}
               </robot>"""
    path = write(urdf_dir, text)
    with pytest.raises(solver.ModelError, match=r"link 'b'.visual\[0\]: mesh 'package://.*needs a package folder"):
        read_urdf(path)
    result = read_urdf(path, package_dir=tmp_path / "ws")
    assert np.allclose(result.meshes["b"].extents, [0.1, 0.1, 0.1])


# ---- refusals -------------------------------------------------------------------------------------
def _one_link(extra="", visual="", joint_extra=""):
    return f"""<robot name="r"><link name="base"/>
      {_link("arm", 1.0, "0 0 0", "0 0 0", .01, .01, .01, visual=visual)}
      <joint name="hinge" type="revolute"><parent link="base"/><child link="arm"/>{joint_extra}
        <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>{extra}</robot>"""


@pytest.mark.parametrize("text, message", [
    (_one_link(extra='<transmission name="tr1"><type>x</type></transmission>'),
     r"transmission 'tr1': <transmission> elements are not supported"),
    (_one_link(joint_extra='<mimic joint="other"/>'), r"joint 'hinge': <mimic> \(following joint 'other'\)"),
    (_one_link(joint_extra='<dynamics friction="0.3"/>'), r"joint 'hinge': <dynamics friction>"),
    (_one_link(joint_extra='<dynamics damping="lots"/>'), r"joint 'hinge'.dynamics.damping: must be a number"),
    (_one_link(visual='<visual><geometry><mesh filename="../secret.stl"/></geometry></visual>'),
     r"link 'arm'.visual\[0\]: mesh '../secret.stl' is outside the URDF's folder"),
    (_one_link(visual='<visual><geometry><mesh filename="/etc/passwd.stl"/></geometry></visual>'),
     r"link 'arm'.visual\[0\]: mesh '/etc/passwd.stl' is outside"),
    (_one_link(visual='<visual><geometry><mesh filename="missing.stl"/></geometry></visual>'),
     r"link 'arm'.visual\[0\]: mesh 'missing.stl' not found"),
    ("""<robot name="r"><link name="base"/><link name="arm"/>
        <joint name="hinge" type="continuous"><parent link="base"/><child link="arm"/></joint></robot>""",
     r"link 'arm': has no mass \(no <inertial>\) but moves on continuous joint 'hinge'"),
    ("<robot name='r'><link name='a'/>", r"not well-formed XML"),
    ('<!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/hostname">]><robot name="&x;"><link name="a"/></robot>',
     r"not well-formed XML \(Attribute references external entity 'x'"),
    ("<robot name='my/robot'><link name='a'/></robot>", r"robot 'my/robot'.name: must not contain quotes, slashes"),
    ("<robot><link name='a'/></robot>", r"robot.urdf: The <robot> tag misses a 'name' attribute"),
    (_one_link().replace('type="revolute"', 'type="hinge"'), r"joint 'hinge'.type: must be one of revolute, "),
    (_one_link().replace('<mass value="1.0"/>', '<mass value="heavy"/>'),
     r"link 'arm': invalid <link> \(could not convert string to float: 'heavy'\)"),
    (_one_link().replace('<parent link="base"/>', ''), r"joint 'hinge': invalid <joint> \(a required child"),
    (_one_link().replace('izz="0.01"', 'izz="0.05"'), r"body 'arm'.inertia: violates the triangle inequality"),
    ("<sdf/>", r"not a URDF file"),
    (_one_link().replace('lower="-1" upper="1"', 'lower="1" upper="-1"'), r"joint 'hinge'.upper_limit: must be >="),
])
def test_unsupported_or_bad_input_is_refused_naming_the_element(tmp_path, text, message):
    (tmp_path / "secret.stl").write_text("solid x\nendsolid x\n")
    sub = tmp_path / "urdf"
    sub.mkdir()
    with pytest.raises(solver.ModelError, match=message):
        read_urdf(write(sub, text))


def test_zero_friction_and_damping_are_accepted(tmp_path):
    """As in the UR robots' URDFs: <dynamics damping="0.0" friction="0.0"/> adds nothing."""
    m = read_urdf(write(tmp_path, _one_link(joint_extra='<dynamics damping="0.0" friction="0.0"/>'))).model
    assert not m.forces


def test_revolute_damping_becomes_a_rotational_damper(tmp_path):
    m = read_urdf(write(tmp_path, _one_link(joint_extra='<dynamics damping="0.7"/>'))).model
    damper = m.forces["hinge_damping"]
    assert damper.KIND == "rotational_spring_damper" and damper.joint == "hinge" and damper.damping == 0.7


def test_planar_joint_keeps_its_normal_and_three_coordinates(tmp_path):
    text = f"""<robot name="r"><link name="world"/>{_link("puck", 2.0, "0 0 0", "0 0 0", .1, .1, .1)}
      <joint name="slide" type="planar"><parent link="world"/><child link="puck"/><origin xyz="0 0 1" rpy="1.5707963267948966 0 0"/>
      <axis xyz="0 0 1"/></joint></robot>"""
    m = read_urdf(write(tmp_path, text)).model
    joint = m.joints["slide"]
    assert joint.type == "planar" and np.allclose(joint.axis, [0, -1, 0]) and np.allclose(joint.origin, [0, 0, 1])
    assert RelativeSystem(m).nq == 3


def test_floating_joint_leaves_the_body_free(tmp_path):
    text = f"""<robot name="r"><link name="world"/>{_link("base", 2.0, "0 0 0", "0 0 0", .1, .1, .1)}
      <joint name="float" type="floating"><parent link="world"/><child link="base"/></joint></robot>"""
    result = read_urdf(write(tmp_path, text))
    assert not result.model.joints and RelativeSystem(result.model).nq == 7     # x, y, z + Euler parameters
    assert any("floating" in note for note in result.notes)


# ---- the command line -----------------------------------------------------------------------------
def test_cli_import_writes_the_project_and_refuses_bad_input_with_one_line(tmp_path, capsys):
    from solver import cli
    urdf = write(tmp_path, iiwa_urdf())
    out = tmp_path / "iiwa.mbs.json"
    assert cli.main(["import", str(urdf), "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    assert f"imported 'iiwa14': 9 bodies, 9 joints, 0 forces -> {out}" in printed
    assert "note: link 'link_0': the root link is welded to ground" in printed
    assert load_project(out) == read_urdf(urdf).model
    bad = write(tmp_path, _one_link(joint_extra='<mimic joint="x"/>'), "bad.urdf")
    for argv, message in [
        (["import", str(bad), "-o", str(tmp_path / "b.mbs.json")], "joint 'hinge': <mimic> (following joint 'x')"),
        (["import", str(tmp_path / "none.urdf"), "-o", str(out)], "none.urdf: no such file"),
        (["import", str(urdf), "-o", str(tmp_path / "no" / "x.mbs.json")], "does not exist"),
        (["import", str(urdf), "-o", str(out), "--package-dir", str(tmp_path / "nope")], "no such folder"),
    ]:
        assert cli.main(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith("mbs: error: ") and err.count("\n") == 1 and message in err, err
    assert not (tmp_path / "b.mbs.json").exists()
