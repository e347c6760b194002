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
    assert worst_M < 1e-12 and worst_tau < 1e-12


def test_planar_two_link_equals_mujoco(tmp_path):
    worst_M, worst_tau = compare(tmp_path, ACROBOT, np.array([np.pi, np.pi]))
    print(f"acrobot: mass matrix {worst_M:.2e}, inverse dynamics {worst_tau:.2e}")
    assert worst_M < 1e-12 and worst_tau < 1e-12


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
    assert worst_M < 1e-12 and worst_tau < 1e-12


def _merged(wheel_mass, wheel_inertia):
    """An arm with a link fixed to it (its inertial frame moved and rotated) and a second link
    hanging from that fixed link on a revolute joint."""
    ixx, iyy, izz, ixy = wheel_inertia
    return f"""<robot name="r">{MUJOCO_FLAGS}<link name="base"/>{_link("arm", 1.0, "0 0 0.3", "0 0 0", .01, .02, .015)}
      {_link("wheel", wheel_mass, "0.1 0 0.2", "0.3 0.2 0.1", ixx, iyy, izz, ixy)}
      {_link("tip", 0.7, "0.1 0 0", "0 0 0", .01, .01, .01)}
      {_joint("hinge", "revolute", "base", "arm", "0 0 0", axis="0 1 0")}
      {_joint("weld", "fixed", "arm", "wheel", "0.2 0 0.5", "0.4 0 0")}
      {_joint("hinge2", "revolute", "wheel", "tip", "0.3 0 0", axis="1 0 0")}</robot>"""


@pytest.mark.parametrize("mass, inertia, noted", [
    (0.0, (0.2, 0.1, 0.15, 0.01), "mass 0 with a rotational inertia, kept in body 'arm'"),
    (0.5, (0.0, 0.0, 0.0, 0.0), "its inertia alone must be positive definite"),
])
def test_links_merged_over_fixed_joints_keep_their_inertia(tmp_path, mass, inertia, noted):
    """A mass-0 link with an inertia (kept by urdfdom, Pinocchio and MuJoCo; dropped before, a
    5.3e-2 difference in M) and a point mass (no body of its own can hold it) on a fixed joint:
    merged into the arm, the mass matrix equals MuJoCo's, where both stay separate bodies."""
    text = _merged(mass, inertia)
    worst_M, worst_tau = compare(tmp_path, text, np.array([3.0, 3.0]))
    print(f"merged link (mass {mass}): mass matrix {worst_M:.2e}, inverse dynamics {worst_tau:.2e}")
    assert worst_M < 1e-12 and worst_tau < 1e-12
    result = read_urdf(write(tmp_path, text))
    assert list(result.model.bodies) == ["arm", "tip"] and result.model.joints["hinge2"].body_i == "arm"
    assert any(noted in note for note in result.notes)
    dropped = RelativeSystem(read_urdf(write(tmp_path, _merged(0.0, (0, 0, 0, 0)), "plain.urdf")).model)
    q = np.array([0.3, -0.4])
    assert np.max(np.abs(RelativeSystem(result.model).mass(q) - dropped.mass(q))) > 1e-2


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


def _arm_visual(geometry):
    return _one_link(visual=f'<visual><geometry>{geometry}</geometry></visual>')


@pytest.mark.parametrize("text, message", [
    (_one_link(joint_extra='<dynamics damping="lots"/>'), r"joint 'hinge'.dynamics.damping: must be a number"),
    (_one_link(visual='<visual><geometry><mesh filename="../secret.stl"/></geometry></visual>'),
     r"link 'arm'.visual\[0\]: mesh '../secret.stl' is outside the URDF's folder"),
    (_one_link(visual='<visual><geometry><mesh filename="/etc/passwd.stl"/></geometry></visual>'),
     r"link 'arm'.visual\[0\]: mesh '/etc/passwd.stl' is outside"),
    (_one_link(visual='<visual><geometry><mesh filename="missing.stl"/></geometry></visual>'),
     r"link 'arm'.visual\[0\]: mesh 'missing.stl' not found"),
    ("""<robot name="r"><link name="base"/><link name="arm"/>
        <joint name="hinge" type="continuous"><parent link="base"/><child link="arm"/></joint></robot>""",
     r"link 'arm': has no mass \(no <inertial> or mass 0\) but moves on continuous joint 'hinge'"),
    ("<robot name='r'><link name='a'/>", r"not well-formed XML"),
    ('<!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/hostname">]><robot name="&x;"><link name="a"/></robot>',
     r"not well-formed XML \(Attribute references external entity 'x'"),
    (_one_link().replace('type="revolute"', 'type="hinge"'), r"joint 'hinge'.type: must be one of revolute, "),
    (_one_link().replace('<mass value="1.0"/>', '<mass value="heavy"/>'),
     r"link 'arm'.inertial.mass.value: must be a number, got 'heavy'"),
    (_one_link().replace('<mass value="1.0"/>', '<mass value="-1"/>'), r"link 'arm'.inertial.mass.value: must be >= 0"),
    (_one_link().replace('ixx="0.01"', 'ixx="inf"'), r"link 'arm'.inertial.inertia.ixx: must be finite, got 'inf'"),
    (_one_link().replace('<parent link="base"/>', ''), r"joint 'hinge': has no <parent link"),
    (_one_link().replace('izz="0.01"', 'izz="0.05"'), r"body 'arm'.inertia: violates the triangle inequality"),
    ("<sdf/>", r"not a URDF file"),
    (_one_link().replace("</robot>", '<link name="arm"/></robot>'), r"link 'arm': defined twice"),
    (_one_link().replace("</robot>", '<joint name="hinge" type="fixed"><parent link="base"/><child link="x"/></joint>'
                                     '</robot>'), r"joint 'hinge': defined twice"),
    (_one_link().replace('lower="-1" upper="1"', 'lower="1" upper="-1"'), r"joint 'hinge'.upper_limit: must be >="),
    (_one_link().replace('lower="-1"', 'lower="low"'), r"joint 'hinge'.limit.lower: must be a number, got 'low'"),
    # a wrong count of numbers (urdfdom and MuJoCo refuse it; it was silently truncated)
    (_one_link(joint_extra='<origin xyz="0 0 0" rpy="0 0 0 1"/>'),
     r"joint 'hinge'.origin.rpy: expected 3 numbers, got '0 0 0 1'"),
    (_one_link().replace('<origin xyz="0 0 0" rpy="0 0 0"/>', '<origin xyz="0 0 0 0"/>'),
     r"link 'arm'.inertial.origin.xyz: expected 3 numbers, got '0 0 0 0'"),
    (_one_link(joint_extra='<axis xyz="0 1"/>'), r"joint 'hinge'.axis.xyz: expected 3 numbers, got '0 1'"),
    (_arm_visual('<mesh filename="p.stl" scale="1 1 1 1"/>'),
     r"link 'arm'.visual\[0\].geometry.mesh.scale: expected 3 or 1 numbers, got '1 1 1 1'"),
    (_one_link(visual='<visual><geometry><box size="1 1 1"/></geometry><material name="m"><color rgba="1 0 0"/>'
                      '</material></visual>'),
     r"link 'arm'.visual\[0\].material.color.rgba: expected 4 numbers"),
    # NaN, negative, overflowing sizes
    (_arm_visual('<box size="-1 0 nan"/>'), r"link 'arm'.visual\[0\].geometry.box.size: must be >= 0, got '-1'"),
    (_arm_visual('<box size="1 1 nan"/>'), r"link 'arm'.visual\[0\].geometry.box.size: must be finite, got 'nan'"),
    (_arm_visual('<sphere radius="1e308"/>'),
     r"link 'arm'.visual\[0\].geometry.sphere.radius: must be at most 10000 in size, got '1e308'"),
    (_arm_visual('<cylinder radius="0.1"/>'), r"link 'arm'.visual\[0\].geometry.cylinder.length: missing"),
    (_one_link(visual='<visual><origin xyz="1e308 0 0"/><geometry><box size="1 1 1"/></geometry></visual>'),
     r"link 'arm'.visual\[0\].origin.xyz: must be at most 1e\+06 in size, got '1e308'"),
    (_arm_visual('<mesh filename="p.stl" scale="nan nan nan"/>'),
     r"link 'arm'.visual\[0\].geometry.mesh.scale: must be finite, got 'nan'"),
])
def test_unsupported_or_bad_input_is_refused_naming_the_element(tmp_path, text, message):
    (tmp_path / "secret.stl").write_text("solid x\nendsolid x\n")
    sub = tmp_path / "urdf"
    sub.mkdir()
    with pytest.raises(solver.ModelError, match=message):
        read_urdf(write(sub, text))


def test_transmission_mimic_and_friction_are_noted_not_refused(tmp_path):
    """A <transmission> that is not a SimpleTransmission is noted, a <mimic> of a missing joint leaves
    the joint independent, Coulomb friction becomes a joint friction of that limit; each with a note
    naming the element."""
    text = _one_link(extra='<transmission name="tr1"><type>x</type></transmission>',
                     joint_extra='<mimic joint="other" multiplier="2"/><dynamics friction="0.3"/>')
    result = read_urdf(write(tmp_path, text))
    assert result.model.joints["hinge"].type == "revolute"
    friction = result.model.forces["hinge_friction"]
    assert friction.KIND == "joint_friction" and friction.joint == "hinge" and friction.preload == 0.3
    assert (friction.static_coefficient, friction.dynamic_coefficient, friction.radius) == (1.0, 1.0, 1.0)
    assert not friction.reaction_load
    notes = "\n".join(result.notes)
    assert "transmission 'tr1': not imported: type x with 0 joints and 0 actuators" in notes
    assert "joint 'hinge': follows joint 'other' (<mimic>)" in notes and "not enforced" in notes
    assert "joint 'hinge': <dynamics friction> 0.3 → joint friction 'hinge_friction'" in notes


@pytest.mark.parametrize("friction", [4.0, 12.0])
def test_prismatic_friction_holds_or_slides_as_coulomb_predicts(tmp_path, friction):
    """A 1 kg link on a vertical prismatic joint under gravity with <dynamics friction="F">, default
    path: F = 12 N > m g holds it (the regularized law creeps below its stiction speed v_s = 1e-3 m/s,
    so |s| ≤ v_s t); F = 4 N < m g lets it slide with a = g − F/m.  While the slip speed is below v_s
    the friction is at most F, so the slide leads the closed form by at most (F/m)·t_s·t with
    t_s = v_s/(g − F/m), the time to reach v_s."""
    text = _one_link(joint_extra='<axis xyz="0 0 1"/>' + f'<dynamics friction="{friction}"/>')
    model = read_urdf(write(tmp_path, text.replace('type="revolute"', 'type="prismatic"'))).model
    t, g, v_s = 0.4, 9.81, 1e-3
    res = solver.simulate(model, t_end=t, output_step=0.1)
    assert res.status == "ok"
    drop = model.bodies["arm"].position[2] - res.body_position("arm")[-1][2]
    if friction > g:
        assert abs(drop) <= v_s * t
    else:
        a = g - friction
        assert drop == pytest.approx(0.5 * a * t**2, abs=friction * v_s / a * t + 1e-6)


SIMPLE = """<transmission name="{name}"><type>transmission_interface/SimpleTransmission</type>
  <joint name="hinge"><hardwareInterface>hardware_interface/{interface}</hardwareInterface></joint>
  <actuator name="{name}_motor"><mechanicalReduction>{reduction}</mechanicalReduction></actuator></transmission>"""


def test_a_simple_transmission_becomes_a_joint_actuator_with_an_input(tmp_path):
    """A SimpleTransmission (reduction 50, effort interface) on the hinge: joint actuator
    'tr_motor_motor' with gain 50 and the input 'tr_motor'.  The arm's CM is on the hinge (no
    gravity torque): u = 0.002 N·m gives θ = 50 u t²/(2 I_xx) = 5 t² (I_xx = 0.01), to the
    integrator's tolerance.  A position interface is noted, a reduction that is not a number refused."""
    text = _one_link(extra=SIMPLE.format(name="tr", interface="EffortJointInterface", reduction=50) +
                     SIMPLE.format(name="pos", interface="PositionJointInterface", reduction=1))
    result = read_urdf(write(tmp_path, text))
    m = result.model
    motor = m.forces["tr_motor_motor"]
    assert (motor.KIND, motor.joint, motor.gain) == ("joint_actuator", "hinge", 50.0)
    assert list(m.inputs) == ["tr_motor"] and m.inputs["tr_motor"].target == "forces.tr_motor_motor.force"
    assert any("transmission 'pos': not imported: its interface hardware_interface/PositionJointInterface" in n
               for n in result.notes)
    res = solver.simulate(m, inputs={"tr_motor": 0.002}, t_end=0.3, output_step=0.1, codegen=False)
    axis = np.array([1.0, 0.0, 0.0])
    theta = np.array([np.arctan2(R[2, 1], R[1, 1]) for R in res.body_rotation("arm")])   # about x
    exact = 5.0 * res.t ** 2
    np.testing.assert_allclose(theta, exact, rtol=0, atol=1e-7 * exact.max())
    np.testing.assert_allclose(res.body_angular_velocity("arm") @ axis, 10.0 * res.t, rtol=0, atol=1e-7 * 3)
    bad = _one_link(extra=SIMPLE.format(name="tr", interface="EffortJointInterface", reduction="fifty"))
    with pytest.raises(solver.ModelError, match=r"transmission 'tr'.actuator 'tr_motor'.mechanicalReduction: "
                                                r"expected a finite number, got 'fifty'"):
        read_urdf(write(tmp_path, bad, "bad.urdf"))


def test_a_mimic_joint_becomes_a_coupler(tmp_path):
    """<mimic joint="a" multiplier="-0.5" offset="0.2">: the coupler q_b = −0.5 q_a + 0.2 (URDF and model
    coordinates are both zero at the imported configuration); with a driven: q_b follows it to the
    Newton tolerance, the assembly taking b to its offset at t = 0."""
    text = f"""<robot name="mimic"><link name="base"/>
      {_link("wa", 1.0, "0 0 0", "0 0 0", .02, .02, .01)}{_link("wb", 1.0, "0 0 0", "0 0 0", .02, .02, .01)}
      {_joint("a", "continuous", "base", "wa", "0 0 0")}
      <joint name="b" type="continuous"><parent link="base"/><child link="wb"/><origin xyz="1 0 0"/>
        <axis xyz="0 0 1"/><mimic joint="a" multiplier="-0.5" offset="0.2"/></joint></robot>"""
    result = read_urdf(write(tmp_path, text))
    m = result.model
    (coupler,) = m.couplers.values()
    assert (coupler.name, coupler.joint_i, coupler.joint_j, coupler.ratio, coupler.offset) == ("b_mimic", "a", "b",
                                                                                               -0.5, 0.2)
    assert not any("mimic" in n for n in result.notes)
    m.add_driver("motor", "a", expression="2*t")
    res = solver.simulate(m, t_end=1.0, output_step=0.25, codegen="off")
    A = res.body_rotation("wb")
    q_b = np.unwrap(np.arctan2(A[:, 1, 0], A[:, 0, 0]))
    assert np.max(np.abs(q_b - (0.2 - 0.5 * 2 * res.t))) < 1e-9


@pytest.mark.parametrize("prefix", ['<?xml version="0.0" ?>\n', '\n\n  <?xml version="1.0" encoding="utf-8"?>\n',
                                    '\ufeff<?xml version=\'1.0\'?>'])
def test_declarations_that_mujoco_and_pybullet_accept(tmp_path, prefix):
    """pybullet_data's files declare XML version 0.0 (26 of them), two have blank lines before the
    declaration: MuJoCo, urdfdom and pybullet read them, and so does the import."""
    m = read_urdf(write(tmp_path, prefix + _one_link())).model
    assert list(m.bodies) == ["arm"]


def test_names_are_made_valid_and_unique(tmp_path):
    """URDF links and joints have separate name spaces (z1, anymal_c, so100 and pybullet's minitaur
    name a joint like a link) and allow slashes (iris: 'iris__/imu_link'); the model has one name
    space without slashes: renamed, noted, and the joint map says where each joint went."""
    text = _one_link().replace('name="r"', 'name="my/robot"').replace('name="arm"', 'name="a/rm"')
    text = text.replace('<child link="arm"/>', '<child link="a/rm"/>').replace('name="hinge"', 'name="a_rm"')
    text = text.replace("</robot>", '<link name="tip"/><joint name="tip" type="fixed"><parent link="a/rm"/>'
                                    '<child link="tip"/><axis xyz="0 0 0"/></joint></robot>')
    result = read_urdf(write(tmp_path, text))
    m = result.model
    assert m.name == "my_robot" and list(m.bodies) == ["a_rm"] and list(m.joints) == ["a_rm_joint"]
    assert result.joint_names == {"a_rm": "a_rm_joint"}
    assert read_urdf(write(tmp_path, "<robot><link name='a'/></robot>", "ur3.urdf")).model.name == "ur3"
    assert "link 'a/rm': named 'a_rm' in the model" in "\n".join(result.notes)


def test_spherical_joint(tmp_path):
    m = read_urdf(write(tmp_path, _one_link().replace('type="revolute"', 'type="spherical"'))).model
    assert m.joints["hinge"].type == "spherical" and RelativeSystem(m).nq == 4     # Euler parameters


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
    bad = write(tmp_path, _one_link(joint_extra='<origin rpy="0 0 0 1"/>'), "bad.urdf")
    scale = write(tmp_path, _arm_visual('<mesh filename="p.stl" scale="1 1 1 1"/>'), "scale.urdf")
    axis = write(tmp_path, _one_link(joint_extra='<axis xyz="1 0"/>'), "axis.urdf")
    for argv, message in [
        (["import", str(bad), "-o", str(tmp_path / "b.mbs.json")], "joint 'hinge'.origin.rpy: expected 3 numbers"),
        (["import", str(scale), "-o", str(tmp_path / "b.mbs.json")], "link 'arm'.visual[0].geometry.mesh.scale"),
        (["import", str(axis), "-o", str(tmp_path / "b.mbs.json")], "joint 'hinge'.axis.xyz: expected 3 numbers"),
        (["import", str(tmp_path / "none.urdf"), "-o", str(out)], "none.urdf: no such file"),
        (["import", str(urdf), "-o", str(tmp_path / "no" / "x.mbs.json")], "does not exist"),
        (["import", str(urdf), "-o", str(out), "--package-dir", str(tmp_path / "nope")], "no such folder"),
    ]:
        assert cli.main(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith("mbs: error: ") and err.count("\n") == 1 and message in err, err
    assert not (tmp_path / "b.mbs.json").exists()


# ---- hostile files (issue #30 item 3): every size bounded, nothing written through a link -----------
def _boxes(n, filename="part.stl"):
    visual = f'<visual><geometry><mesh filename="{filename}"/></geometry></visual>'
    return _one_link(visual=visual * n)


def test_a_zipped_dae_is_refused_before_it_is_decoded(tmp_path):
    """pycollada unzips a .dae that is a zip archive without limit (3 MB → 2.2 GB)."""
    import zipfile
    with zipfile.ZipFile(tmp_path / "bomb.dae", "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("bomb.dae", "<COLLADA>" + " " * 100_000 + "</COLLADA>")
    with pytest.raises(solver.ModelError, match=r"link 'arm'.visual\[0\]: mesh 'bomb.dae' is a zip archive"):
        read_urdf(write(tmp_path, _boxes(1, "bomb.dae")))


def test_a_mesh_file_is_read_once_and_the_visuals_are_bounded(tmp_path, monkeypatch):
    import trimesh
    from solver.io import urdf_mesh
    trimesh.creation.box(extents=(0.1, 0.2, 0.3)).export(tmp_path / "part.stl")
    loads = []
    real_load = trimesh.load
    monkeypatch.setattr(trimesh, "load", lambda *a, **k: loads.append(1) or real_load(*a, **k))
    result = read_urdf(write(tmp_path, _boxes(5)))
    assert len(loads) == 1 and len(result.meshes["arm"].faces) == 5 * 12
    # the vertices of all drawn visuals (one STL box: 36 unmerged vertices) are bounded before copying
    monkeypatch.setattr(urdf_mesh, "MAX_VERTICES", 100)
    with pytest.raises(solver.ModelError, match=r"link 'arm'.visual\[2\]: the visuals have more than 100 vertices"):
        read_urdf(write(tmp_path, _boxes(3)))
    # a DAE's instances are counted before its scene is flattened
    trimesh.creation.box(extents=(0.1, 0.2, 0.3)).export(tmp_path / "part.dae")
    monkeypatch.setattr(urdf_mesh, "MAX_VERTICES", 7)
    with pytest.raises(solver.ModelError, match=r"link 'arm'.visual\[0\]: the visuals have more than 7 vertices"):
        read_urdf(write(tmp_path, _boxes(1, "part.dae")))
    # the number of visuals is bounded before any is made (20,000 spheres took 41 s)
    monkeypatch.setattr(urdf_mesh, "MAX_VISUALS", 3)
    loads.clear()
    with pytest.raises(solver.ModelError, match=r"robot 'r': 4 visuals, more than 3"):
        read_urdf(write(tmp_path, _boxes(4)))
    assert not loads


def test_a_mesh_with_vertices_that_are_not_numbers_or_too_far_is_refused(tmp_path):
    (tmp_path / "nan.stl").write_text("solid x\nfacet normal 0 0 1\nouter loop\nvertex nan 0 0\nvertex 1 0 0\n"
                                      "vertex 0 1 0\nendloop\nendfacet\nendsolid x\n")
    with pytest.raises(solver.ModelError, match=r"mesh 'nan.stl' has vertices that are not finite numbers"):
        read_urdf(write(tmp_path, _boxes(1, "nan.stl")))
    (tmp_path / "far.obj").write_text("v 1e300 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n")
    with pytest.raises(solver.ModelError, match=r"mesh 'far.obj' has vertices farther than 1e\+06 m from its origin"):
        read_urdf(write(tmp_path, _boxes(1, "far.obj")))


def test_import_never_writes_through_a_planted_link(tmp_path):
    """The meshes folder as a link to another folder is refused; a link planted at a mesh file's
    name is refused by the atomic no-follow writer; the link targets are unchanged."""
    import os
    import trimesh
    trimesh.creation.box(extents=(0.1, 0.2, 0.3)).export(tmp_path / "part.stl")
    urdf = write(tmp_path, _boxes(1))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = tmp_path / "out"
    out.mkdir()
    os.symlink(elsewhere, out / "r_meshes")
    with pytest.raises(solver.ModelError, match=r"r_meshes: is not a folder \(a link or a file\)"):
        import_urdf(urdf, out / "r.mbs.json")
    assert not list(elsewhere.iterdir()) and not (out / "r.mbs.json").exists()
    os.unlink(out / "r_meshes")
    (out / "r_meshes").mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    os.symlink(victim, out / "r_meshes" / "arm.stl")
    with pytest.raises(solver.ModelError, match=r"arm.stl: is a symbolic link; refusing to replace it"):
        import_urdf(urdf, out / "r.mbs.json")
    assert victim.read_text() == "keep me" and not (out / "r.mbs.json").exists()


def test_prismatic_damping_is_a_damper_along_the_axis(tmp_path):
    """<dynamics damping="c"> of a prismatic joint: generalized force −c ṡ on the slide, at
    positive and negative slides (the damper is a spring-damper along the axis, no stiffness)."""
    text = _one_link(joint_extra='<axis xyz="0 0.6 0.8"/><dynamics damping="2.5"/>')
    text = text.replace('type="revolute"', 'type="prismatic"')
    result = read_urdf(write(tmp_path, text))
    assert result.model.forces["hinge_damping"].KIND == "spring_damper"
    system = RelativeSystem(result.model)
    for s, sd in ((0.0, 1.3), (0.7, -0.4), (-0.9, 2.0)):
        Q = system.forces(np.array([s]), np.array([sd]), 0.0) - system.forces(np.array([s]), np.array([0.0]), 0.0)
        assert Q == pytest.approx([-2.5 * sd], rel=1e-12, abs=1e-12)


def test_a_robot_without_links_is_an_empty_model(tmp_path):
    """pybullet's torus_deform.urdf holds only a <deformable>: MuJoCo loads an empty model."""
    result = read_urdf(write(tmp_path, '<robot name="torus"><deformable name="t"/></robot>'))
    assert not result.model.bodies and any("has no <link>" in note for note in result.notes)


def test_the_number_of_links_is_bounded_before_they_are_read(tmp_path, monkeypatch):
    from solver.io import urdf_xml
    monkeypatch.setattr(urdf_xml, "MAX_ELEMENTS", 3)
    links = "".join(f'<link name="l{k}"/>' for k in range(4))
    with pytest.raises(solver.ModelError, match=r"robot.urdf: 4 <link> elements, more than 3"):
        read_urdf(write(tmp_path, f'<robot name="r">{links}</robot>'))
