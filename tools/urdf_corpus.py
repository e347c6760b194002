"""The URDF corpus of installed packages and its comparison with MuJoCo (tests/solver/test_urdf_corpus.py,
tools/urdf_coverage.py).

The corpus: the robot files of ``pybullet_data`` (pybullet's data folder, without its 1,000
generated ``random_urdfs``, which tools/urdf_coverage.py counts apart) and of
``example-robot-data`` (installed by cmeel under ``cmeel.prefix/share/example-robot-data``; its
``package://`` paths resolve in ``cmeel.prefix/share``).  Both come with the ``test`` extra.

MuJoCo reads the same text with ``<visual>`` and ``<collision>`` removed (the dynamics do not
depend on them: MuJoCo's inertia comes from ``<inertial>`` with ``inertiafromgeom="false"``, and
its mesh reader has no DAE) and with the compiler flags that keep the URDF's bodies and inertias
as written: ``fusestatic="false"`` (links on fixed joints stay bodies), ``balanceinertia="false"``
(an inertia breaking the triangle inequality is refused, not changed), ``discardvisual``.
The joint-space mass matrices are compared with coordinates mapped by joint name (docstring of
tests/solver/test_urdf.py), on robots whose joints are all 1-DOF (revolute, continuous,
prismatic) or fixed.
"""
from __future__ import annotations

import glob
import os
import re
import tempfile
from dataclasses import dataclass

import numpy as np

import solver
from solver.formulations.relative import RelativeSystem
from solver.io.urdf import read_urdf

G = 9.81
MUJOCO_COMPILER = ('<mujoco><compiler discardvisual="true" fusestatic="false" balanceinertia="false" '
                   'inertiafromgeom="false"/></mujoco>')
_GEOMETRY = re.compile(r"<(visual|collision)\b(?:[^>]*/>|.*?</\1\s*>)", re.DOTALL)
_ROBOT_TAG = re.compile(r"<robot\b[^>]*?(?<!/)>")


@dataclass
class Outcome:
    """One file: whether MuJoCo loads it, our import's result (None: imported) and the largest
    mass-matrix and generalized-force differences, each relative to MuJoCo's largest entry (None:
    not compared, with why)."""
    corpus: str
    path: str
    mujoco_error: str | None = None
    refused: str | None = None
    difference: float | None = None
    force_difference: float | None = None
    not_compared: str | None = None


def corpora() -> dict:
    """Corpus name → (its root folder, the package folder its ``package://`` paths need or None:
    the URDF's own folder)."""
    import pybullet_data
    out = {"pybullet_data": (pybullet_data.getDataPath(), None)}
    share = _cmeel_share()
    if share is not None:
        out["example-robot-data"] = (os.path.join(share, "example-robot-data", "robots"), share)
    return out


def files(corpus, random_urdfs=False) -> list:
    """The URDF files of one corpus, sorted (pybullet's ``random_urdfs`` only when asked)."""
    root, _ = corpora()[corpus]
    found = sorted(glob.glob(os.path.join(root, "**", "*.urdf"), recursive=True))
    return [f for f in found if ("random_urdfs" in f) == random_urdfs]


def mujoco_text(text: str) -> str:
    """The URDF text MuJoCo reads: geometry removed, the compiler flags inserted."""
    stripped = _GEOMETRY.sub("", text)
    m = _ROBOT_TAG.search(stripped)
    return stripped if m is None else stripped[:m.end()] + MUJOCO_COMPILER + stripped[m.end():]


def load_mujoco(path):
    """MuJoCo's model of the URDF file, or the error text.  MuJoCo's warnings (a ``<mimic>`` it
    ignores) go to MUJOCO_LOG.TXT in the working folder: a temporary one while it reads."""
    import mujoco
    with open(path, "rb") as fh:
        text = fh.read().decode("utf-8", errors="replace")
    here = os.getcwd()
    with tempfile.TemporaryDirectory() as scratch:
        os.chdir(scratch)
        try:
            return mujoco.MjModel.from_xml_string(mujoco_text(text)), None
        except ValueError as exc:
            return None, str(exc).strip().splitlines()[0] if str(exc).strip() else "error"
        finally:
            os.chdir(here)


def check(corpus, path, states=2, seed=0, visuals=True) -> Outcome:
    """Load ``path`` in MuJoCo and import it; compare the mass matrices at ``states`` random states
    (the limits imported as data: MuJoCo's constraints, joint limits among them, are off here)."""
    _, package_dir = corpora()[corpus]
    out = Outcome(corpus, path)
    mj, out.mujoco_error = load_mujoco(path)
    try:
        result = read_urdf(path, package_dir=package_dir or os.path.dirname(path), visuals=visuals,
                           enforce_limits=False)
    except solver.ModelError as exc:
        out.refused = str(exc).splitlines()[0]
        return out
    if mj is not None:
        out.difference, out.force_difference, out.not_compared = compare_dynamics(mj, result, states, seed)
    return out


def compare_dynamics(mj, result, states, seed):
    """``(dM, dQ, None)``: the largest |M_ours − M_mujoco| / max |M_mujoco| and the largest
    |Q_ours − Q_mujoco| of the generalized forces (gravity, velocity terms, joint damping: ours
    ``system.forces`` without the joint friction of ``<dynamics friction>`` — MuJoCo's friction loss,
    a constraint force, not in qfrc_passive —, MuJoCo's ``qfrc_passive − qfrc_bias``) relative to the
    larger of max |Q_mujoco|
    and g · max |M_mujoco| (the forces of robots whose joint axes are all vertical are ≈ 0), over
    ``states`` random states (q uniform in ±1, q̇ standard normal); or ``(None, None, why not)``."""
    import mujoco
    kinds = {int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE)}
    if any(int(t) not in kinds for t in mj.jnt_type):
        return None, None, "a free, ball or planar joint"
    if mj.nv == 0:
        return None, None, "no degree of freedom"
    model = result.model.copy()
    for name in [n for n, f in model.forces.items() if f.KIND == "joint_friction"]:
        model.remove(name)
    system = RelativeSystem(model)
    if system.nq != mj.nv:
        return None, None, f"{system.nq} coordinates here, {mj.nv} in MuJoCo"
    col = {system.joint_names[edge.joint]: system.cols[e][0]
           for e, edge in enumerate(system.topology.edges) if edge.joint is not None and len(system.cols[e])}
    names = [mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_JOINT, k) for k in range(mj.njnt)]
    ours = np.array([col[result.joint_names[n]] for n in names])      # our coordinate of MuJoCo's joint k
    assert list(mj.jnt_qposadr) == list(mj.jnt_dofadr) == list(range(mj.njnt))
    data = mujoco.MjData(mj)
    rng = np.random.default_rng(seed)
    worst = worst_Q = 0.0
    for _ in range(states):
        q, qd = rng.uniform(-1.0, 1.0, mj.nv), rng.normal(0.0, 1.0, mj.nv)
        data.qpos[:], data.qvel[:] = q, qd
        mujoco.mj_forward(mj, data)
        M_mj = np.zeros((mj.nv, mj.nv))
        mujoco.mj_fullM(mj, data, M_mj)
        Q_mj = data.qfrc_passive - data.qfrc_bias
        x, xd = np.zeros(mj.nv), np.zeros(mj.nv)
        x[ours], xd[ours] = q, qd
        M = system.mass(x)[np.ix_(ours, ours)]
        Q = system.forces(x, xd, 0.0)[ours]
        worst = max(worst, float(np.max(np.abs(M - M_mj)) / np.max(np.abs(M_mj))))
        scale = max(np.max(np.abs(Q_mj)), G * np.max(np.abs(M_mj)))      # Q ≈ 0 when gravity is along all axes
        worst_Q = max(worst_Q, float(np.max(np.abs(Q - Q_mj)) / scale))
    return worst, worst_Q, None


def _cmeel_share():
    """``…/site-packages/cmeel.prefix/share`` when example-robot-data is installed, else None."""
    from importlib import metadata
    try:
        dist = metadata.distribution("example-robot-data")
    except metadata.PackageNotFoundError:
        return None
    share = os.path.join(str(dist.locate_file("")), "cmeel.prefix", "share")
    return share if os.path.isdir(share) else None
