"""Which reaction components redundant constraints leave undetermined (self-stress states).

With redundant constraint rows (rank Φ_q < rows) the multipliers of M q̈ + Φ_qᵀ λ = Q are fixed only
up to the null space of Φ_qᵀ: λ + S μ satisfies the equations of motion for every μ, where the
columns of S (orthonormal, as many as the partition's redundant rows, :func:`independent_rows`)
span {s : Φ_qᵀ s = 0} — the self-stress states of the overconstrained loops.  The solver reports
the minimum-norm λ (:func:`solver.partitioning.partition.multipliers`).

Every reaction output is affine in λ at a given state: a joint's force and moment in its joint
frame (Kim & Yoo (1997) for the Cartesian form, Kim & You (1997) eqs. 30–31 for the relative one)
and a driver's force (−λ of its row).  Writing one component as c₀ + cᵀλ, it is unique iff it does
not change along any self-stress state:

    ‖Sᵀ c‖ ≤ tol · max ‖c'‖   (c' over the components of the same kind of the element: a joint's
                              three force or three moment components; a driver's force itself),

so a planar loop built with 3D joints has non-unique out-of-plane components only (force along the
plane normal, moments about in-plane axes); its in-plane forces and driving torques are unique.
c is read off the formulation's own post-processing (``system.postprocess_batch``) at the unit
multiplier vectors, so every formulation (Cartesian, relative, generated code) is covered by one
definition.

Words for messages: the components are named by the joint-frame axis (x, y, z); when every motion
the joints allow is planar (all body angular velocities of the mobility modes parallel to one
normal n, all CM velocities normal to it) an axis along n or in the plane adds "out-of-plane" /
"in-plane" (a force along n and a moment about an in-plane axis are out-of-plane).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .partition import independent_rows

JOINT_COMPONENTS = ("force x", "force y", "force z", "moment x", "moment y", "moment z")
DRIVER_COMPONENT = "driver force"
UNIQUE_TOL = 1e-6         # ‖Sᵀc‖ ≤ UNIQUE_TOL ‖c‖: the component is unique
AXIS_TOL = 1e-6           # |e·n| within this of 0 or 1: the axis is in the plane or along its normal


@dataclass
class ReactionUniqueness:
    """The non-unique reaction components at one state.

    components: {joint or driver name: [component names]} (``JOINT_COMPONENTS`` in the joint frame /
    ``DRIVER_COMPONENT``), only elements with at least one; global_components: the same with the
    joints' components in global axes; messages: {name: sentence};
    basis: S (m × k), orthonormal self-stress states; normal: the plane normal of a planar model,
    else None."""
    components: dict = field(default_factory=dict)
    global_components: dict = field(default_factory=dict)
    messages: dict = field(default_factory=dict)
    basis: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    normal: np.ndarray | None = None


def self_stress_basis(jac, tol=1e-9):
    """Orthonormal S (m × k) with Φ_qᵀ S = 0, k = the number of redundant rows of
    :func:`independent_rows` (the same rank decision as the partition): the last k left singular
    vectors of Φ_q."""
    m = jac.shape[0]
    k = len(independent_rows(jac, tol)[1])
    if k == 0:
        return np.zeros((m, 0))
    U = np.linalg.svd(jac, full_matrices=True)[0]
    return U[:, m - k:]


def reaction_maps(system, t, q, qd, qdd):
    """The linear parts of the reaction outputs in λ at one state: {"joint": (m, nj, 6) force and
    moment in the joint frame, "global": (m, nj, 6) the same in global axes, "driver": (m, nd)},
    row i the change of each output when λ_i grows by one (differences of ``postprocess_batch`` at
    λ = 0 and λ = e_i, exact for outputs affine in λ)."""
    m = len(system.equations)
    n = m + 1
    lam = np.vstack([np.zeros(m), np.eye(m)])
    post = system.postprocess_batch(np.full(n, float(t)), np.tile(q, (n, 1)), np.tile(qd, (n, 1)),
                                    np.tile(qdd, (n, 1)), lam)
    joint = np.concatenate([post["reaction_force_joint"], post["reaction_torque_joint"]], axis=2)
    glob = np.concatenate([post["reaction_force"], post["reaction_torque"]], axis=2)
    return {"joint": joint[1:] - joint[0], "global": glob[1:] - glob[0],
            "driver": post["driver_force"][1:] - post["driver_force"][0]}


def nonunique_mask(C, S, tol=UNIQUE_TOL):
    """For component maps C (m × … × g; the last axis a group of components of one kind: a joint's
    3 force or 3 moment components, or 1 driver force): True where ‖Sᵀc‖ > tol · max ‖c'‖ over the
    group — the component changes along a self-stress state by more than round-off of its group
    (a revolute's moment about its axis is zero up to the constraint violation, not arbitrary)."""
    if S.shape[1] == 0:
        return np.zeros(C.shape[1:], dtype=bool)
    proj = np.linalg.norm(np.tensordot(S.T, C, axes=1), axis=0)
    return proj > tol * np.max(np.linalg.norm(C, axis=0), axis=-1, keepdims=True)


def mode_velocities(system, t, q, jac):
    """Body velocities ("r", "v", "w" of ``postprocess_batch``, one row per mode) of an orthonormal
    basis of the velocities u with Φ_q u = 0 for the rows ``jac``; None when there is none."""
    modes = np.linalg.svd(jac, full_matrices=True)[2][len(independent_rows(jac)[0]):]
    n = len(modes)
    if n == 0:
        return None
    return system.postprocess_batch(np.full(n, float(t)), np.tile(q, (n, 1)), modes, np.zeros_like(modes),
                                    np.zeros((n, len(system.equations))))


def plane_normal(system, t, q):
    """n when every motion the joints allow (drivers released) is planar with normal n, else None:
    the mobility modes u (Φ_q u = 0 over the non-driver rows) give body angular velocities all
    parallel to n and CM velocities all normal to it."""
    rows = [k for k, e in enumerate(system.equations) if e.kind != "driver"]
    post = mode_velocities(system, t, q, system.constraints(q, t).jac[rows])
    if post is None:
        return None
    W, V = post["w"].reshape(-1, 3), post["v"].reshape(-1, 3)
    sw = np.linalg.svd(W, full_matrices=True)
    if sw[1][0] == 0 or sw[1][1] > 1e-6 * sw[1][0]:
        return None
    normal = sw[2][0]
    if np.max(np.abs(V @ normal), initial=0.0) > 1e-6 * max(np.max(np.abs(V), initial=0.0), 1e-300):
        return None
    return normal


def joint_frames(maps):
    """Global joint-frame axes (nj, 3, 3; columns x, y, z) recovered from the maps: joint-frame
    components = Frᵀ · global ones, solved by least squares; NaN for a joint whose reactions span
    fewer than 3 directions (its axes are not determined by them)."""
    nj = maps["joint"].shape[1]
    frames = np.full((nj, 3, 3), np.nan)
    for k in range(nj):
        G = np.concatenate([maps["global"][:, k, :3], maps["global"][:, k, 3:]])      # (2m, 3)
        J = np.concatenate([maps["joint"][:, k, :3], maps["joint"][:, k, 3:]])
        if G.size and np.linalg.matrix_rank(G) == 3:
            frames[k] = np.linalg.lstsq(G, J, rcond=None)[0]
    return frames


def component_words(component, axis, normal):
    """"out-of-plane moment x" etc.: the plane word when ``normal`` is known and the component's
    global ``axis`` lies along it or in the plane, else the component name alone."""
    if normal is None or not np.all(np.isfinite(axis)):
        return component
    along = abs(float(np.dot(axis, normal)))
    is_force = component.startswith("force")
    if along > 1 - AXIS_TOL:
        return ("out-of-plane " if is_force else "in-plane ") + component
    if along < AXIS_TOL:
        return ("in-plane " if is_force else "out-of-plane ") + component
    return component


def sentence(name, phrases):
    """"out-of-plane force z and out-of-plane moment x, y of crank_pin are not unique": phrases
    sharing their words before the axis letter are merged."""
    groups: dict[str, list[str]] = {}
    for p in phrases:
        head, _, axis = p.rpartition(" ") if p != DRIVER_COMPONENT else (p, "", "")
        groups.setdefault(head, []).append(axis)
    parts = [head + (" " + ", ".join(axes) if axes[0] else "") for head, axes in groups.items()]
    text = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    verb = "is" if len(phrases) == 1 else "are"
    return f"{text} of {name} {verb} not unique"


def reaction_uniqueness(system, t, q, qd=None, qdd=None, jac=None) -> ReactionUniqueness:
    """The non-unique reaction components at the state (t, q, q̇, q̈) (module docstring)."""
    qd = np.zeros_like(q) if qd is None else qd
    qdd = np.zeros_like(q) if qdd is None else qdd
    jac = system.constraints(q, t).jac if jac is None else jac
    S = self_stress_basis(jac)
    out = ReactionUniqueness(basis=S)
    if S.shape[1] == 0:
        return out
    maps = reaction_maps(system, t, q, qd, qdd)
    m, nj = maps["joint"].shape[:2]
    joint_bad = nonunique_mask(maps["joint"].reshape(m, nj, 2, 3), S).reshape(nj, 6)
    global_bad = nonunique_mask(maps["global"].reshape(m, nj, 2, 3), S).reshape(nj, 6)
    driver_bad = nonunique_mask(maps["driver"][..., None], S)[:, 0]
    out.normal = plane_normal(system, t, q)
    frames = joint_frames(maps) if out.normal is not None else None
    for k, name in enumerate(system.joint_names):
        if global_bad[k].any():
            out.global_components[name] = [c for c, bad in zip(JOINT_COMPONENTS, global_bad[k]) if bad]
        comps = [c for c, bad in zip(JOINT_COMPONENTS, joint_bad[k]) if bad]
        if comps:
            out.components[name] = comps
            out.messages[name] = sentence(name, [
                component_words(c, frames[k][:, JOINT_COMPONENTS.index(c) % 3] if frames is not None else None,
                                out.normal) for c in comps])
    for k, name in enumerate(system.driver_names):
        if driver_bad[k]:
            out.components[name] = out.global_components[name] = [DRIVER_COMPONENT]
            out.messages[name] = sentence(name, [DRIVER_COMPONENT])
    return out
