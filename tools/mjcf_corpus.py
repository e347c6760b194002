"""The MJCF corpus of installed packages and its comparison with MuJoCo (tests/solver/test_mjcf.py,
tests/solver/test_mjcf_corpus.py, tools/mjcf_coverage.py).

The corpus: every ``.xml`` file in the ``dm_control`` and ``gymnasium`` packages (the ``test``
extra; only their model and asset files are read).  Each file MuJoCo loads is imported
(``read_mjcf``, limits as data) and compared with MuJoCo's compiled model of the same file.

Coordinate map (our relative formulation's coordinates x from MuJoCo's qpos, qvel = v):
hinge and slide x = qpos − qpos0, ẋ = v; ball (our spherical joint, Euler parameters p of the
outboard marker frame relative to the inboard one, C the outboard marker's axes in the child's
body axes) p = c̄ ⊗ q ⊗ c with c the quaternion of C, ṗ = ½ p ⊗ (0, Cᵀ ω); free (our floating
base: CM displacement d in global axes and p of A A₀ᵀ) d = x_cm − x_cm0, p = q ⊗ q̄₀,
ḋ = v_o + ω_w × (x_cm − x_o), ṗ = ½ q ⊗ (0, ω) ⊗ q̄₀, with ω_w = A ω.  So ẋ = J(q) v, and at constant v
ẍ = J̇ v: ½ ṗ ⊗ (0, w) = −¼ |w|² p for the Euler parameters, ω_w × (ω_w × (x_cm − x_o)) for d.
The kinetic energy ½ ẋᵀ M ẋ = ½ vᵀ Jᵀ M J v gives M_mujoco = Jᵀ M J, and the equations of motion
projected on J (the Euler parameters' norm constraint force is along p, ⊥ J's columns)
qfrc_passive − qfrc_bias = Jᵀ (P − M J̇ v), P our generalized forces (``system.forces``).
What the import notes and does not model (ball and free joints' armature, tendon and fluid forces) is switched off
in MuJoCo's copy of the model for the comparison.
"""
from __future__ import annotations

import glob
import os

import numpy as np

import solver
from solver.formulations.relative import RelativeSystem
from solver.io.mjcf import read_mjcf
from solver.io.mjcf_files import load_spec
from solver.math.rotations import quat_from_matrix, quat_multiply, rotation_matrix
from tools.urdf_corpus import Outcome  # the same record for both corpora


def corpora() -> dict:
    """Corpus name → its root folder."""
    import dm_control
    import gymnasium
    return {"dm_control": os.path.dirname(dm_control.__file__), "gymnasium": os.path.dirname(gymnasium.__file__)}


def files(corpus) -> list:
    """The ``.xml`` files of one corpus, sorted."""
    return sorted(glob.glob(os.path.join(corpora()[corpus], "**", "*.xml"), recursive=True))


def check(corpus, path, states=2, seed=0, visuals=False) -> Outcome:
    """Load ``path`` in MuJoCo (its own loader, unbounded; its warnings as Python warnings, not
    MUJOCO_LOG.TXT) and import it; compare M and the generalized forces at ``states`` random states."""
    import warnings

    import mujoco
    out = Outcome(corpus, path)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            mujoco.MjSpec.from_file(path).compile()
    except Exception as exc:           # noqa: BLE001 — MuJoCo's refusal, recorded
        out.mujoco_error = str(exc).strip().splitlines()[0] if str(exc).strip() else "error"
    try:
        result = read_mjcf(path, visuals=visuals, enforce_limits=False)
    except solver.ModelError as exc:
        out.refused = str(exc).splitlines()[0]
        return out
    if out.mujoco_error is None:
        out.difference, out.force_difference, out.not_compared = compare_dynamics(path, result, states, seed)
    return out


def reference_model(path):
    """MuJoCo's compiled model as the import reads it, without what the import notes and does not
    model (the armature, damping and stiffness of ball and free joints, tendon and fluid forces,
    gravity compensation);
    ``mj_setConst`` recomputes what MuJoCo derives from them (the diagonal of simple bodies' M)."""
    import mujoco
    _, mj, _ = load_spec(path)
    for j in range(mj.njnt):
        kind = mujoco.mjtJoint(mj.jnt_type[j]).name
        if kind in ("mjJNT_BALL", "mjJNT_FREE"):
            dof = mj.jnt_dofadr[j]
            mj.dof_damping[dof:dof + (3 if kind == "mjJNT_BALL" else 6)] = 0.0
            mj.dof_armature[dof:dof + (3 if kind == "mjJNT_BALL" else 6)] = 0.0
            mj.jnt_stiffness[j] = 0.0
    mj.tendon_stiffness[:] = 0.0
    mj.tendon_damping[:] = 0.0
    mj.opt.density = mj.opt.viscosity = 0.0
    mj.opt.wind[:] = 0.0
    mj.body_gravcomp[:] = 0.0
    mujoco.mj_setConst(mj, mujoco.MjData(mj))
    return mj


class CoordinateMap:
    """MuJoCo's (qpos, qvel) → our (x, ẋ, J, J̇v) for an imported model (module docstring)."""

    def __init__(self, mj, result, system):
        import mujoco
        self.mj, self.system = mj, system
        self.data = mujoco.MjData(mj)
        names = list(result.model.bodies)
        edge_of_joint = {system.joint_names[edge.joint]: e for e, edge in enumerate(system.topology.edges)
                         if edge.joint is not None}
        free_edge = {names[edge.child]: e for e, edge in enumerate(system.topology.edges) if edge.joint is None}
        self.items = []           # (kind, MuJoCo joint, our columns, extra)
        for j in range(mj.njnt):
            kind = mujoco.mjtJoint(mj.jnt_type[j]).name
            label = mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_JOINT, j) or f"joint{j}"
            if kind == "mjJNT_FREE":
                b = names.index(result.free_bodies[label])
                e = free_edge[names[b]]
                self.items.append(("free", j, system.cols[e], (mj.qpos0[mj.jnt_qposadr[j] + 3:][:4].copy(), b)))
            else:
                e = edge_of_joint[result.joint_names[label]]
                assert not system.topology.edges[e].inverted
                C = system.C_out[e]
                self.items.append((kind, j, system.cols[e], quat_from_matrix(C)))

    def __call__(self, qpos, qvel):
        import mujoco
        mj, d = self.mj, self.data
        d.qpos[:], d.qvel[:] = qpos, qvel
        mujoco.mj_kinematics(mj, d)
        n = self.system.nq
        x, J, Jdv = np.zeros(n), np.zeros((n, mj.nv)), np.zeros(n)
        for kind, j, cols, c in self.items:
            qa, va = mj.jnt_qposadr[j], mj.jnt_dofadr[j]
            if kind in ("mjJNT_HINGE", "mjJNT_SLIDE"):
                x[cols[0]] = qpos[qa] - mj.qpos0[qa]
                J[cols[0], va] = 1.0
            elif kind == "mjJNT_BALL":
                q = qpos[qa:qa + 4] / np.linalg.norm(qpos[qa:qa + 4])
                p = quat_multiply(_conj(c), quat_multiply(q, c))
                x[cols] = p
                Ct = rotation_matrix(c).T
                for k in range(3):
                    J[cols, va + k] = 0.5 * quat_multiply(p, np.r_[0.0, Ct[:, k]])
                w = Ct @ qvel[va:va + 3]
                Jdv[cols] = -0.25 * (w @ w) * p
            else:
                b = mj.jnt_bodyid[j]
                c, ours = c
                q = qpos[qa + 3:qa + 7] / np.linalg.norm(qpos[qa + 3:qa + 7])
                p = quat_multiply(q, _conj(c))
                x[cols[:3]] = d.xipos[b] - self.system.init[ours][0]
                x[cols[3:]] = p
                A = d.xmat[b].reshape(3, 3)
                rc = d.xipos[b] - d.xpos[b]
                J[cols[:3], va:va + 3] = np.eye(3)
                for k in range(3):
                    J[cols[:3], va + 3 + k] = np.cross(A[:, k], rc)
                    J[cols[3:], va + 3 + k] = 0.5 * quat_multiply(q, quat_multiply(np.eye(4)[k + 1], _conj(c)))
                w, ww = qvel[va + 3:va + 6], A @ qvel[va + 3:va + 6]
                Jdv[cols[:3]] = np.cross(ww, np.cross(ww, rc))
                Jdv[cols[3:]] = -0.25 * (w @ w) * p
        return x, J @ qvel, J, Jdv


def _conj(p):
    return np.array([p[0], -p[1], -p[2], -p[3]])


def compare_dynamics(path, result, states, seed):
    """``(dM, dQ, None)``: the largest |Jᵀ M J − M_mujoco| / max |M_mujoco| and the largest
    |Jᵀ (P − M J̇ v) − (qfrc_passive − qfrc_bias)| relative to the larger of its max |·| and
    g · max |M_mujoco|, without the joint friction (MuJoCo's friction loss, a constraint force), over ``states`` random states (hinge and slide q uniform in ±1 about qpos0, ball
    and free orientations uniform, v standard normal); or ``(None, None, why not)``."""
    import mujoco
    mj = reference_model(path)
    if mj.nv == 0:
        return None, None, "no degree of freedom"
    model = result.model.copy()
    for name in [n for n, f in model.forces.items() if f.KIND == "joint_friction"]:
        model.remove(name)        # MuJoCo's friction loss is a constraint force, not in qfrc_passive
    system = RelativeSystem(model)
    if system.topology.cut:
        return None, None, "closed loops (equality constraints)"
    cmap = CoordinateMap(mj, result, system)
    data = mujoco.MjData(mj)
    rng = np.random.default_rng(seed)
    worst = worst_Q = 0.0
    for _ in range(states):
        qpos, qvel = random_state(mj, rng)
        data.qpos[:], data.qvel[:] = qpos, qvel
        mujoco.mj_forward(mj, data)
        M_mj = np.zeros((mj.nv, mj.nv))
        mujoco.mj_fullM(mj, data, M_mj)
        Q_mj = data.qfrc_passive - data.qfrc_bias
        x, xd, J, Jdv = cmap(qpos, qvel)
        M = system.mass(x)
        M_ours = J.T @ M @ J
        Q_ours = J.T @ (system.forces(x, xd, 0.0) - M @ Jdv)
        scale = max(np.max(np.abs(Q_mj)), 9.81 * np.max(np.abs(M_mj)))
        worst = max(worst, float(np.max(np.abs(M_ours - M_mj)) / np.max(np.abs(M_mj))))
        worst_Q = max(worst_Q, float(np.max(np.abs(Q_ours - Q_mj)) / scale))
    return worst, worst_Q, None


def random_state(mj, rng):
    """qpos, qvel: hinge and slide qpos0 ± U(1), ball and free orientations uniform (a normalized
    Gaussian 4-vector), free positions qpos0 ± U(1), qvel standard normal."""
    import mujoco
    qpos = mj.qpos0 + rng.uniform(-1.0, 1.0, mj.nq)
    for j in range(mj.njnt):
        a = mj.jnt_qposadr[j]
        kind = mujoco.mjtJoint(mj.jnt_type[j]).name
        if kind in ("mjJNT_BALL", "mjJNT_FREE"):
            o = a if kind == "mjJNT_BALL" else a + 3
            q = rng.normal(size=4)
            qpos[o:o + 4] = q / np.linalg.norm(q)
    return qpos, rng.normal(0.0, 1.0, mj.nv)
