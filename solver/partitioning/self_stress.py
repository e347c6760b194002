"""Which reaction components redundant constraints leave undetermined (self-stress states).

With redundant constraint rows (rank Φ_q < rows) the multipliers of M q̈ + Φ_qᵀ λ = Q are fixed only
up to the null space of Φ_qᵀ: λ + S μ satisfies the equations of motion for every μ, where the
columns of S (orthonormal, as many as the partition's redundant rows, :func:`null_spaces`)
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
Sᵀc and ‖c‖ are read off the formulation's own post-processing (``system.postprocess_batch``, one
batch) at λ along the self-stress states and along probe vectors (the unit vectors, or for large
models a seeded random sketch, :func:`probe_directions`), so every formulation (Cartesian, relative,
generated code) is covered by one definition and the cost does not grow with the number of rows.

Words for messages: the components are named by the joint-frame axis (x, y, z); when every motion
the joints allow is planar (all body angular velocities of the mobility modes parallel to one
normal n, all CM velocities normal to it) an axis along n or in the plane adds "out-of-plane" /
"in-plane" (a force along n and a moment about an in-plane axis are out-of-plane).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from ..math.lazy import sla

from .partition import SPARSE_RANK_MIN, numerical_rank

JOINT_COMPONENTS = ("force x", "force y", "force z", "moment x", "moment y", "moment z")
DRIVER_COMPONENT = "driver force"
COUPLER_COMPONENT = "coupler force"
UNIQUE_TOL = 1e-6         # ‖Sᵀc‖ ≤ UNIQUE_TOL ‖c‖: the component is unique
SKETCH_STRESS = 8         # more self-stress states than this: a random 8-dimensional subspace of them
EXACT_NORMS = 32          # more multipliers than this: ‖c‖ from NORM_PROBES Gaussian probes
NORM_PROBES = 16
AXIS_TOL = 1e-6           # |e·n| within this of 0 or 1: the axis is in the plane or along its normal


@dataclass
class ReactionUniqueness:
    """The non-unique reaction components at one state.

    components: {joint, driver or coupler name: [component names]} (``JOINT_COMPONENTS`` in the joint
    frame / ``DRIVER_COMPONENT`` / ``COUPLER_COMPONENT``), only elements with at least one; global_components: the same with the
    joints' components in global axes; messages: {name: sentence};
    basis: S (m × k), orthonormal self-stress states; normal: the plane normal of a planar model,
    else None."""
    components: dict = field(default_factory=dict)
    global_components: dict = field(default_factory=dict)
    messages: dict = field(default_factory=dict)
    basis: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    normal: np.ndarray | None = None


@dataclass
class NullSpaces:
    """What one rank-revealing QR of Φ_qᵀ tells (:func:`null_spaces`): rank; independent and
    redundant rows (as :func:`independent_rows`); stress: S (m × k) orthonormal, Φ_qᵀ S = 0 (the
    self-stress states); modes: (n × (n − rank)) orthonormal, Φ_q · modes = 0 (the velocities the
    rows allow)."""
    rank: int
    independent: np.ndarray
    redundant: np.ndarray
    stress: np.ndarray
    modes: np.ndarray


def null_spaces(jac, tol=1e-9) -> NullSpaces:
    """Both null spaces of Φ_q (m × n) from the pivoted QR Φ_qᵀ Π = Q R (full Q; the rank decision
    of :func:`independent_rows`): modes = the last n − r columns of Q; a self-stress s has
    R₁₁ y + R₁₂ z = 0 for its entries (y, z) on the independent and redundant rows, so
    B = [−R₁₁⁻¹R₁₂; I] (rows put back in place) spans them; S = its orthonormal basis.  From
    SPARSE_RANK_MIN rows on, where its redundant rows are rows of zeros, the same spaces from a sparse
    factorization (:func:`solver.partitioning.rank.certified_null_spaces`: the same S, another
    orthonormal basis of the modes)."""
    m, n = jac.shape
    if m == 0:
        return NullSpaces(0, np.zeros(0, dtype=int), np.zeros(0, dtype=int), np.zeros((0, 0)), np.eye(n))
    if m >= SPARSE_RANK_MIN:      # the same spaces from the sparse certificate where it answers
        from .rank import certified_null_spaces
        found = certified_null_spaces(jac, tol)
        if found is not None:
            return NullSpaces(*found)
    Q, R, piv = sla.qr(jac.T, pivoting=True)
    r = numerical_rank(np.abs(np.diag(R))[:min(m, n)], (m, n), tol)
    B = np.zeros((m, m - r))
    B[piv[r:]] = np.eye(m - r)
    if r and m > r:
        B[piv[:r]] = -sla.solve_triangular(R[:r, :r], R[:r, r:m])
    S = np.linalg.qr(B)[0] if m > r else B
    return NullSpaces(r, np.sort(piv[:r]), np.sort(piv[r:]), S, Q[:, r:])


def response_rows(t, q, qd, qdd, directions):
    """The ``postprocess_batch`` arguments (t, q, q̇, q̈, λ; each with a leading axis p + 1) whose
    rows are the state at λ = 0 and at λ = each row d of ``directions`` (p × m)."""
    n = len(directions) + 1
    lam = np.vstack([np.zeros(directions.shape[1]), directions])
    return np.full(n, float(t)), np.tile(q, (n, 1)), np.tile(qd, (n, 1)), np.tile(qdd, (n, 1)), lam


PROBE_COLUMNS = ("reaction_force_joint", "reaction_torque_joint", "reaction_force", "reaction_torque",
                 "driver_force")      # the post-processed columns responses_of reads


def responses_of(post):
    """The reaction responses from the post-processed :func:`response_rows`: {"joint": (p, nj, 6)
    force and moment in the joint frame, "global": (p, nj, 6) the same in global axes, "driver":
    (p, nd)} — differences of the rows at λ = d and at λ = 0 (exact for outputs affine in λ)."""
    joint = np.concatenate([post["reaction_force_joint"], post["reaction_torque_joint"]], axis=2)
    glob = np.concatenate([post["reaction_force"], post["reaction_torque"]], axis=2)
    return {"joint": joint[1:] - joint[0], "global": glob[1:] - glob[0],
            "driver": post["driver_force"][1:] - post["driver_force"][0]}


def reaction_responses(system, t, q, qd, qdd, directions):
    """How the reaction outputs change when λ moves along each row d of ``directions`` (p × m) at
    one state (:func:`responses_of`), all in one batch of ``postprocess_batch``."""
    return responses_of(system.postprocess_batch(*response_rows(t, q, qd, qdd, directions)))


def probe_directions(S, rng=None):
    """(P, G): the λ directions whose responses decide uniqueness.  P (k' × m): the self-stress
    states Sᵀ, or for k > ``SKETCH_STRESS`` an orthonormal basis of S·Ω (Ω Gaussian k × SKETCH_STRESS):
    a random subspace of the self-stress space, which a component with Sᵀc ≠ 0 is orthogonal to
    with probability 0.  G (p × m): the unit vectors (m ≤ ``EXACT_NORMS``), else ``NORM_PROBES``
    Gaussian rows scaled by 1/√p, so ‖G c‖ ≈ ‖c‖ (within a factor of about 2 for p = 16; Halko,
    Martinsson & Tropp 2011 — immaterial against the gap between round-off, ~1e-12 ‖c‖, and
    ``UNIQUE_TOL``).  Seeded: the same state gives the same answer."""
    rng = np.random.default_rng(0) if rng is None else rng
    m, k = S.shape
    if k > SKETCH_STRESS:
        P = np.linalg.qr(S @ rng.standard_normal((k, SKETCH_STRESS)))[0].T
    else:
        P = S.T
    G = np.eye(m) if m <= EXACT_NORMS else rng.standard_normal((NORM_PROBES, m)) / np.sqrt(NORM_PROBES)
    return P, G


def nonunique_mask(stress, norms, tol=UNIQUE_TOL):
    """True where a component changes along the self-stress states by more than round-off of its
    group: ‖Pᵀc‖ > tol · max ‖c'‖, from the responses to P (``stress``, p × … × g) and to G
    (``norms``), the last axis a group of components of one kind — a joint's 3 force or 3 moment
    components, or 1 driver force (a revolute's moment about its axis is zero up to the constraint
    violation, not arbitrary)."""
    if len(stress) == 0:
        return np.zeros(stress.shape[1:], dtype=bool)
    proj = np.linalg.norm(stress, axis=0)
    return proj > tol * np.max(np.linalg.norm(norms, axis=0), axis=-1, keepdims=True)


def mode_velocities(system, q, modes):
    """Body states (r, v, ω; each (p, nb, 3)) of the velocities q̇ = the columns of ``modes``
    (``system.frames``)."""
    frames = [system.frames(q, u) for u in modes.T]
    return tuple(np.array([getattr(f, key) for f in frames]).reshape(len(frames), -1, 3) for key in ("r", "v", "w"))


def plane_normal(system, q, modes):
    """n when every velocity of ``modes`` (the mobility modes: Φ_q u = 0 over the non-driver rows)
    is a planar motion with normal n — body angular velocities all parallel to n, CM velocities all
    normal to it — else None."""
    if modes.shape[1] == 0:
        return None
    _, V, W = (a.reshape(-1, 3) for a in mode_velocities(system, q, modes))
    _, sw, axes = np.linalg.svd(W)
    if sw[0] == 0 or np.any(sw[1:] > 1e-6 * sw[0]):          # one body, one mode: W has one row
        return None
    normal = axes[0]
    if np.max(np.abs(V @ normal), initial=0.0) > 1e-6 * max(np.max(np.abs(V), initial=0.0), 1e-300):
        return None
    return normal


def joint_frames(responses):
    """Global axes of every joint's frame (a list of 3 × 3, columns x, y, z) recovered from reaction
    responses: joint-frame components = Frᵀ · global ones, J = G Fr solved by least squares for all
    joints at once (Fr = V Σ⁻¹ Uᵀ J from the SVDs G = U Σ Vᵀ, the rank rule of ``np.linalg.lstsq``:
    σ > ε · max(2p, 3) · σ_max); None for a joint whose responses span fewer than 3 directions (its
    axes are not determined by them)."""
    def stacked(key):                                                              # (nj, 2p, 3)
        r = np.moveaxis(responses[key], 1, 0)
        return np.concatenate([r[..., :3], r[..., 3:]], axis=1)
    G, J = stacked("global"), stacked("joint")
    U, sv, Vt = np.linalg.svd(G, full_matrices=False)
    full = np.sum(sv > np.finfo(float).eps * max(G.shape[1:]) * sv[:, :1], axis=1) == 3
    inv = np.divide(1.0, sv, out=np.zeros_like(sv), where=sv > 0)
    Fr = np.swapaxes(Vt, 1, 2) @ (inv[..., None] * (np.swapaxes(U, 1, 2) @ J))
    return [F if ok else None for F, ok in zip(Fr, full)]


def component_words(component, axis, normal):
    """"out-of-plane moment x" etc.: the plane word when ``normal`` is known and the component's
    global ``axis`` lies along it or in the plane, else the component name alone."""
    if normal is None or axis is None:
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
        head, _, axis = p.rpartition(" ") if p not in (DRIVER_COMPONENT, COUPLER_COMPONENT) else (p, "", "")
        groups.setdefault(head, []).append(axis)
    parts = [head + (" " + ", ".join(axes) if axes[0] else "") for head, axes in groups.items()]
    text = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    verb = "is" if len(phrases) == 1 else "are"
    return f"{text} of {name} {verb} not unique"


@dataclass
class UniquenessProbes:
    """What decides the non-unique components at one state (t, q, q̇, q̈): the null spaces of Φ_q
    (``spaces``) and of its non-driver rows (``free``), and the λ directions P, G
    (:func:`probe_directions`; None without self-stress states).  ``rows()``: the
    ``postprocess_batch`` arguments of their responses, None without self-stress states."""
    t: float
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    spaces: NullSpaces
    free: NullSpaces
    P: np.ndarray | None = None
    G: np.ndarray | None = None

    def rows(self):
        if self.P is None:
            return None
        return response_rows(self.t, self.q, self.qd, self.qdd, np.vstack([self.P, self.G]))


def uniqueness_probes(system, t, q, qd, qdd, spaces=None, free=None) -> UniquenessProbes:
    """The :class:`UniquenessProbes` at (t, q, q̇, q̈) (copies of them); ``spaces``, ``free``: :func:`null_spaces` of Φ_q
    and of its non-driver rows, if known (the same when there are no driver rows)."""
    if spaces is None or free is None:
        jac = system.constraints(q, t).jac
        spaces = null_spaces(jac) if spaces is None else spaces
        if free is None:
            other = [k for k, e in enumerate(system.equations) if e.kind != "driver"]
            free = spaces if len(other) == len(system.equations) else null_spaces(jac[other])
    probes = UniquenessProbes(float(t), *(np.array(x, dtype=float) for x in (q, qd, qdd)), spaces, free)
    if spaces.stress.shape[1]:
        probes.P, probes.G = probe_directions(spaces.stress)
    return probes


def reaction_uniqueness(system, t, q, qd=None, qdd=None, spaces=None, free=None) -> ReactionUniqueness:
    """The non-unique reaction components at the state (t, q, q̇, q̈) (module docstring).
    ``spaces``, ``free``: :func:`null_spaces` of Φ_q and of its non-driver rows, if known."""
    qd = np.zeros_like(q) if qd is None else qd
    qdd = np.zeros_like(q) if qdd is None else qdd
    probes = uniqueness_probes(system, t, q, qd, qdd, spaces, free)
    rows = probes.rows()
    return uniqueness_of(system, probes, None if rows is None else system.postprocess_batch(*rows))


def uniqueness_of(system, probes, post) -> ReactionUniqueness:
    """The non-unique reaction components from ``probes`` (:func:`uniqueness_probes`) and the
    post-processing ``post`` of their rows (``probes.rows``; None without self-stress states)."""
    S = probes.spaces.stress
    out = ReactionUniqueness(basis=S)
    if S.shape[1] == 0:
        return out
    P, G, free, q = probes.P, probes.G, probes.free, probes.q
    resp = responses_of(post)
    stress = {key: r[:len(P)] for key, r in resp.items()}
    norms = {key: r[len(P):] for key, r in resp.items()}
    nj = resp["joint"].shape[1]
    joint_bad, global_bad = (nonunique_mask(stress[key].reshape(len(P), nj, 2, 3),
                                            norms[key].reshape(len(G), nj, 2, 3)).reshape(nj, 6)
                             for key in ("joint", "global"))
    driver_bad = nonunique_mask(stress["driver"][..., None], norms["driver"][..., None])[:, 0]
    out.normal = plane_normal(system, q, free.modes)
    frames = joint_frames(resp) if out.normal is not None and joint_bad.any() else None
    for k, name in enumerate(system.joint_names):
        if global_bad[k].any():
            out.global_components[name] = [c for c, bad in zip(JOINT_COMPONENTS, global_bad[k]) if bad]
        comps = [c for c, bad in zip(JOINT_COMPONENTS, joint_bad[k]) if bad]
        if comps:
            out.components[name] = comps
            frame = None if frames is None else frames[k]
            out.messages[name] = sentence(name, [
                component_words(c, None if frame is None else frame[:, JOINT_COMPONENTS.index(c) % 3], out.normal)
                for c in comps])
    # a coupler's force is −λ of its row: its responses are the probe directions' entries there
    rows = [c.row for c in getattr(system, "couplers", [])]
    coupler_bad = nonunique_mask(-P[:, rows][..., None], -G[:, rows][..., None])[:, 0] if rows else []
    for names, bad, component in ((system.driver_names, driver_bad, DRIVER_COMPONENT),
                                  (getattr(system, "coupler_names", []), coupler_bad, COUPLER_COMPONENT)):
        for k, name in enumerate(names):
            if bad[k]:
                out.components[name] = out.global_components[name] = [component]
                out.messages[name] = sentence(name, [component])
    return out
