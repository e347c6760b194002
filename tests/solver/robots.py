"""Robot descriptions shared by the tests, written in-line as URDF text (no files, no meshes):
the KUKA LBR iiwa 14 and a Franka Emika Panda arm.  ``MUJOCO_FLAGS`` makes MuJoCo read the same
URDF with the inertias as given (no fused static bodies, no balanced inertias);
``mujoco_and_ours`` reads a URDF into both and maps MuJoCo's joints to our coordinates.

Coordinate mapping to MuJoCo: the model is built at the URDF's zero configuration, so each of our
revolute joint coordinates (a tree joint of the relative formulation, ``RelativeSystem.cols``) is
the URDF joint position, same axis, same sign, same zero — exactly MuJoCo's ``qpos`` of the hinge
of the same name (``jnt_qposadr``).  Only the order can differ; it is mapped by joint name."""
import mujoco
import numpy as np

from solver.formulations.relative import RelativeSystem
from solver.io.urdf import read_urdf

MUJOCO_FLAGS = ('<mujoco><compiler discardvisual="true" fusestatic="false" balanceinertia="false"/>'
                '</mujoco>')


def _link(name, mass, xyz, rpy, ixx, iyy, izz, ixy=0.0, ixz=0.0, iyz=0.0, visual=""):
    return (f'<link name="{name}"><inertial><origin xyz="{xyz}" rpy="{rpy}"/><mass value="{mass}"/>'
            f'<inertia ixx="{ixx}" iyy="{iyy}" izz="{izz}" ixy="{ixy}" ixz="{ixz}" iyz="{iyz}"/></inertial>'
            f'{visual}</link>')


def _joint(name, kind, parent, child, xyz, rpy="0 0 0", axis="0 0 1", limit=""):
    return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
            f'<origin xyz="{xyz}" rpy="{rpy}"/><axis xyz="{axis}"/>{limit}</joint>')


# The KUKA LBR iiwa 14 R820 as in its public description (link masses, CM offsets, principal
# moments, joint origins with their ±π/2 and π rotations and limits); products of inertia and
# rotated inertial frames are added so that the full inertia path (rpy, off-diagonal terms) is
# exercised, plus a tool flange with mass and a massless tool frame on fixed joints.
IIWA_LINKS = [
    ("link_0", 5.0, "-0.1 0 0.07", "0 0 0", .05, .06, .03, .002, 0, 0),
    ("link_1", 4.0, "0 -0.03 0.12", "0.1 -0.05 0.2", .1, .09, .02, .003, -.002, .004),
    ("link_2", 4.0, "0.0003 0.059 0.042", "0 0.3 0", .05, .018, .044, 0, 0, .002),
    ("link_3", 3.0, "0 0.03 0.13", "-0.2 0 0.1", .08, .075, .01, -.001, 0, 0),
    ("link_4", 2.7, "0 0.067 0.034", "0.25 0 0", .03, .01, .029, 0, .001, 0),
    ("link_5", 1.7, "0.0001 0.021 0.076", "0 0 -0.4", .02, .018, .005, 0, 0, -.0015),
    ("link_6", 1.8, "0 0.0006 0.0004", "0.5 0.2 0", .005, .0036, .0047, .0003, 0, 0),
    ("link_7", 0.3, "0 0 0.02", "0 0 0", .001, .001, .001, .0001, 0, 0),
    ("link_ee", 0.2, "0 0 0.01", "0 0.4 0", .0002, .0002, .0003, 0, 0, 0),
]
IIWA_JOINTS = [  # name, parent, child, xyz, rpy, limit (rad)
    ("joint_1", "link_0", "link_1", "0 0 0.1575", "0 0 0", 2.96706),
    ("joint_2", "link_1", "link_2", "0 0 0.2025", "1.5708 0 3.14159", 2.0944),
    ("joint_3", "link_2", "link_3", "0 0.2045 0", "1.5708 0 3.14159", 2.96706),
    ("joint_4", "link_3", "link_4", "0 0 0.2155", "1.5708 0 0", 2.0944),
    ("joint_5", "link_4", "link_5", "0 0.1845 0", "-1.5708 3.14159 0", 2.96706),
    ("joint_6", "link_5", "link_6", "0 0 0.2155", "1.5708 0 0", 2.0944),
    ("joint_7", "link_6", "link_7", "0 0.081 0", "-1.5708 3.14159 0", 3.05433),
]


def iiwa_urdf():
    parts = ['<?xml version="1.0"?><robot name="iiwa14">', MUJOCO_FLAGS]
    parts += [_link(*row) for row in IIWA_LINKS]
    parts.append('<link name="tool0"/>')
    for name, parent, child, xyz, rpy, lim in IIWA_JOINTS:
        parts.append(_joint(name, "revolute", parent, child, xyz, rpy,
                            limit=f'<limit lower="{-lim}" upper="{lim}" effort="300" velocity="10"/>'))
    parts.append(_joint("joint_ee", "fixed", "link_7", "link_ee", "0 0 0.045", "0 0 0.3"))
    parts.append(_joint("joint_tool0", "fixed", "link_ee", "tool0", "0 0 0.02", "0 0 0"))
    return "\n".join(parts + ["</robot>"])


# The Franka Emika Panda arm: joint origins and limits of Franka's published kinematics (d1 = 0.333,
# d3 = 0.316, a3 = 0.0825, d5 = 0.384, a6 = 0.088, flange 0.107 m) and link masses and CM offsets as
# in pybullet_data's franka_panda/panda.urdf (its inertias, 0.1 kg·m² about every axis, kept); the
# hand rigidly on the flange, rotated −45° about its axis; the fingers left out (a <mimic> pair).
PANDA_LINKS = [
    ("panda_link0", 2.9, "0 0 0.05"), ("panda_link1", 2.7, "0 -0.04 -0.05"), ("panda_link2", 2.73, "0 -0.04 0.06"),
    ("panda_link3", 2.04, "0.01 0.01 -0.05"), ("panda_link4", 2.08, "-0.03 0.03 0.02"),
    ("panda_link5", 3.0, "0 0.04 -0.12"), ("panda_link6", 1.3, "0.04 0 0"), ("panda_link7", 0.2, "0 0 0.08"),
    ("panda_hand", 0.81, "0 0 0.04"),
]
PANDA_JOINTS = [  # name, parent, child, xyz, rpy, lower, upper (rad)
    ("panda_joint1", "panda_link0", "panda_link1", "0 0 0.333", "0 0 0", -2.9671, 2.9671),
    ("panda_joint2", "panda_link1", "panda_link2", "0 0 0", "-1.5707963268 0 0", -1.8326, 1.8326),
    ("panda_joint3", "panda_link2", "panda_link3", "0 -0.316 0", "1.5707963268 0 0", -2.9671, 2.9671),
    ("panda_joint4", "panda_link3", "panda_link4", "0.0825 0 0", "1.5707963268 0 0", -3.1416, 0.0),
    ("panda_joint5", "panda_link4", "panda_link5", "-0.0825 0.384 0", "-1.5707963268 0 0", -2.9671, 2.9671),
    ("panda_joint6", "panda_link5", "panda_link6", "0 0 0", "1.5707963268 0 0", -0.0873, 3.8223),
    ("panda_joint7", "panda_link6", "panda_link7", "0.088 0 0", "1.5707963268 0 0", -2.9671, 2.9671),
]


def panda_urdf():
    parts = ['<?xml version="1.0"?><robot name="panda">', MUJOCO_FLAGS]
    parts += [_link(name, mass, xyz, "0 0 0", 0.1, 0.1, 0.1) for name, mass, xyz in PANDA_LINKS]
    for name, parent, child, xyz, rpy, lower, upper in PANDA_JOINTS:
        parts.append(_joint(name, "revolute", parent, child, xyz, rpy,
                            limit=f'<limit lower="{lower}" upper="{upper}" effort="87" velocity="2.175"/>'))
    parts.append(_joint("panda_hand_joint", "fixed", "panda_link7", "panda_hand", "0 0 0.107", "0 0 -0.7853981634"))
    return "\n".join(parts + ["</robot>"])


def write(tmp_path, text, name="robot.urdf"):
    path = tmp_path / name
    path.write_text(text)
    return path


def mujoco_and_ours(tmp_path, text):
    mj = mujoco.MjModel.from_xml_string(text)
    mj.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONSTRAINT)
    model = read_urdf(write(tmp_path, text), enforce_limits=False).model     # MuJoCo's constraints are off too
    system = RelativeSystem(model)
    names = [mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_JOINT, k) for k in range(mj.njnt)]
    col = {system.joint_names[edge.joint]: system.cols[e][0]
           for e, edge in enumerate(system.topology.edges) if edge.joint is not None and len(system.cols[e])}
    ours = np.array([col[n] for n in names])         # our coordinate of MuJoCo's dof k
    assert mj.nv == mj.nq == system.nq == len(names)
    assert list(mj.jnt_qposadr) == list(range(mj.njnt))
    return mj, system, ours
