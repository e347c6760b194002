"""Recursive relative (joint) coordinate formulation — Kim & You (1997) (Kim & You 1997), with the
velocity-transformation DAE of Bae, Yang & Seo (2003) and Choi & Yoo (2000) for closed loops.

Coordinates q are the joint coordinates of the spanning-tree joints
(:mod:`solver.formulations.topology`, :mod:`solver.formulations.mobilizers`).  Every body b has a
state velocity (Kim & You (1997) eq. 6) ``Ŷ_b = [ṙ_b + r̃_b ω_b ; ω_b]`` — the velocity of the body point at
the global origin and ω — which does not depend on the body reference point, so the CM is used.

Forward recursion, tree joint e from parent P to child C (Kim & You (1997) eqs. 1–9):
    A_C = A_P C_in R(q_e) C_outᵀ                                   (1)
    o_e = r_P + A_P s_in + A_P C_in d(q_e),  r_C = o_e − A_C s_out    (2)
    Ŷ_C = Ŷ_P + B_e q̇_e,  B_e = [E Dq + õ_e E H ; E H],  E = A_P C_in  (6)
    Ẏ̂_C = Ẏ̂_P + B_e q̈_e + D_e,  D_e = Ḃ_e q̇_e                        (8)
Body state mass matrix and force (eqs. 11–12), r = CM, J = A J' Aᵀ (global, at the CM):
    M̂ = [m I, −m r̃ ; m r̃, J − m r̃ r̃],
    Q̂ = [f − m ω̃ v ; r̃ (f − m ω̃ v) + n − ω̃ J ω]    (f, n: applied force at the CM + m g, torque)
Backward recursion over the subtree of each tree joint (eqs. 16–17, sums over children c):
    K_e = M̂_C + Σ_c K_c,   L_e = Q̂_C + Σ_c (L_c − K_c D_c)
Joint-space equations of motion M q̈ = P (eq. 15), for a tree:
    M_ea = B_eᵀ K_e B_a  (a an ancestor of e or e itself; 0 for unrelated joints),
    P_e = B_eᵀ (L_e − K_e Σ_{l ∈ path(e)} D_l).
With cut joints, drivers and Euler-parameter normalizations as constraints Φ (Jacobian in joint
coordinates by the chain rule through the tree) the system is M q̈ + Φ_qᵀ λ = P.

Reactions (``postprocess``): the cut-joint constraint wrenches (from their multipliers) act on tree
bodies like applied loads; with them in Q̂ the reaction on the child of tree joint e is
    R̂_e = −L_e + K_e Ẏ̂_C + Σ_{l ∈ subtree(e), l ≠ e} K_l B_l q̈_l        (eq. 30)
    [f ; n_P] = [I 0 ; −P̃ I] R̂_e   (moment about the point P)          (eq. 31)
and the driving force of a driven tree coordinate is τ_e = B_eᵀ R̂_e (eq. 36).  The recursive
Newton–Euler alternative sweeps R̂_e = M̂_C Ẏ̂_C − Q̂_C + Σ_c R̂_c (eq. 28) from the leaves.

Every recursion here works on one state (arrays indexed [body, …]) or on N stacked states (a
leading axis N: rotations (N, nb, 3, 3), B_e (N, 6, n_e), …) with the same code, so
``postprocess_batch`` post-processes a chunk of output points with numpy over the points and
``postprocess`` is its batch of one.  The forward recursion takes the tree edges of one depth and
mobilizer kind at once, the joint reactions (31) every joint at once and the cut-joint wrenches the
cut joints of the same equation forms at once (an extra axis), so a model of many equal loops costs
a few numpy operations per level, not per body; the backward sums still loop over the edges.  Only
the force elements (they take one state's BodyFrames) are evaluated point by point.
"""
from __future__ import annotations

import numpy as np

from ..constraints.forms import atan2_chain, constants_of, scalar
from ..constraints.joints import COORDINATES, CartesianJoint
from ..constraints.planar import PlanarJoint
from ..constraints.primitives import BodyState
from ..errors import ModelError
from ..expressions import time_function
from ..forces import BodyFrames, RotationalSpringDamperForce, angle_rows, compile_forces, element_loads
from ..math.rotations import G_matrix, cross, matvec, quat_from_matrix, rotation_matrix, skew, tmatvec
from ..model.fields import inertia_matrix
from ..model.model import GROUND
from .armature import joint_armatures, kinetic_energy
from .mobilizers import Mobilizer
from .planar import planar_model
from .rows import DriverRow, coupler_rows
from .system import ConstraintEval, Equation, MechanicalSystem
from .topology import build_topology

REACTION_METHODS = ("nonrecursive", "newton-euler")
POST_ENTRIES = 2_000_000      # postprocess_batch holds at most about this many K, M̂, B entries (16 MB)
FRICTION_RTOL, FRICTION_ITERATIONS = 1e-12, 50       # the friction normal loads' fixed point


class Kinematics:
    """Global body states from one forward recursion (per body index b; per tree edge e), of one
    state or of N stacked states (``lead`` = (N,): every array gets that leading axis)."""

    def __init__(self, nb, ne, lead=()):
        self.A = np.empty(lead + (nb, 3, 3))
        self.r = np.empty(lead + (nb, 3))          # CM, global
        self.o = np.empty(lead + (ne, 3))          # joint origin on the child, global
        self.B = [None] * ne                       # 6 × n_e (stacked: N × 6 × n_e)
        self.Y = np.zeros(lead + (nb, 6))          # state velocity Ŷ (eq. 6)
        self.Yd0 = np.zeros(lead + (nb, 6))        # velocity-product part of Ẏ̂ (Σ D along the path)
        self.D = np.zeros(lead + (ne, 6))          # D_e = Ḃ_e q̇_e (eq. 8)
        self.has_velocity = False
        self.K = None                              # K_e (eq. 16), filled on first use
        self.J = None                              # global inertia A J' Aᵀ per body, filled on first use
        self.q = None                              # the joint coordinates of the state(s)
        self.angles = {}                           # tracked angles of force elements (BodyFrames.angles)


class KinematicsCache(dict):
    """The last few forward recursions (:meth:`RelativeSystem.kinematics`), by the bytes of (q, q̇)."""

    def reset(self):
        self.clear()



SPARSE_FIT_MIN = 300     # tree coordinates from which initial_state's velocity fit is solved sparsely (A sparse too)


def sparse_velocity_fit(A, y, w, jac, nu):
    """q̇ of :meth:`RelativeSystem.initial_state`'s fit, min ½ (A q̇ − y)ᵀ W (A q̇ − y) subject to
    Φ_q q̇ = ν (W = diag w), by a sparse LU (SuperLU) of its KKT matrix [[AᵀWA + 1e-12 I, Jᵀ], [J, 0]]
    with J the non-zero rows of Φ_q (a zero row says 0 = ν_i: left out when ν_i = 0); None when that
    matrix is singular (dependent non-zero rows) or the solution's residual is not at round-off
    (1e-10 of ‖K‖ ‖q̇‖ + ‖b‖: a huge multiplier of nearly dependent rows fails it): the caller then
    takes the dense least squares.  The q̇ of every solution of the KKT equations is the same when AᵀWA
    is definite on the null space of Φ_q, so both give the same q̇ to round-off (the dense lstsq costs
    O((nq + m)³): 144 s of CPU for the 1,000-loop four-bar row, docs/performance.md)."""
    import scipy.sparse as sparse
    from scipy.sparse.linalg import splu
    nq = A.shape[1]
    keep = np.any(jac != 0.0, axis=1)
    if np.any(nu[~keep] != 0.0):
        return None
    As = sparse.csr_matrix(A)
    H = As.T @ sparse.diags(w) @ As + 1e-12 * sparse.identity(nq)
    J = sparse.csr_matrix(jac[keep])
    K = sparse.bmat([[H, J.T], [J, None]], format="csc")
    b = np.concatenate([As.T @ (w * y), nu[keep]])
    try:
        x = splu(K).solve(b)
    except RuntimeError:                 # exactly singular
        return None
    scale = abs(K).max() * np.max(np.abs(x[:nq]), initial=0.0) + np.max(np.abs(b), initial=0.0)
    if not np.all(np.isfinite(x)) or np.max(np.abs(K @ x - b)) > 1e-10 * scale:
        return None
    return x[:nq]


class RelativeSystem(MechanicalSystem):
    """A model compiled to tree joint coordinates + cut-joint constraints (module docstring)."""

    def __init__(self, model, reactions="nonrecursive", plane=None):
        """plane: None, or "xy"/"yz"/"zx" for the planar joint forms of a planar model
        (:mod:`solver.formulations.planar`: the tree moves the bodies in their planes, cut joints
        keep their in-plane rows)."""
        model.check()
        if not model.bodies:
            raise ModelError("model.bodies: the model has no bodies")
        if model.flexible_bodies:
            raise ModelError("settings 'settings'.formulation: flexible bodies ("
                             + ", ".join(model.flexible_bodies) + ") need formulation='cartesian'")
        if reactions not in REACTION_METHODS:
            raise ModelError(f"reactions: must be one of {', '.join(REACTION_METHODS)}; got {reactions!r}")
        self.reactions = reactions
        self.plane = plane
        if plane is not None:
            model = planar_model(model, plane)
        bodies = list(model.bodies.values())
        self._bodies = [b.copy() for b in bodies]     # its own copies: later model edits cannot reach it
        self.model_name = model.name
        self.body_names = [b.name for b in bodies]
        self.index = {n: k for k, n in enumerate(self.body_names)}
        self.nb = len(bodies)
        self.mass_values = np.array([b.mass for b in bodies])
        self.inertia = np.array([inertia_matrix(b.inertia) for b in bodies])
        self.gravity = model.gravity
        self.init = {k: (np.array(b.position, dtype=float), rotation_matrix(np.array(b.orientation, dtype=float)))
                     for k, b in enumerate(bodies)}

        joints = list(model.joints.values())
        self.joint_names = [j.name for j in joints]
        self.joint_ends = []
        self.cjoints = []
        for j in joints:
            bi = self.index[j.body_i] if j.body_i != GROUND else -1
            bj = self.index[j.body_j] if j.body_j != GROUND else -1
            self.joint_ends.append((bi, bj))
            self.cjoints.append(PlanarJoint(j, self._init_of(bi), self._init_of(bj), plane) if plane is not None
                                else CartesianJoint(j, self._init_of(bi), self._init_of(bj)))
        self.topology = topo = build_topology(self.body_names, joints)
        self._build_tree(joints)

        self.equations = []
        self.cut = []                        # (joint index, rows)
        for k in topo.cut:
            cj = self.cjoints[k]
            rows = list(range(len(self.equations), len(self.equations) + cj.n_eq))
            self.cut.append((k, rows))
            self.equations += [Equation(cj.name, "cut joint", f"{cj.type} equation {r + 1}") for r in range(cj.n_eq)]
        self.drivers = []                    # DriverRow: column = the tree column, or None (on a cut joint)
        self.driver_names = []
        self._edge_of_joint = {edge.joint: e for e, edge in enumerate(topo.edges) if edge.joint is not None}
        self._joint_coordinates = [list(j.coordinates()) for j in joints]
        for d in model.drivers.values():
            coord = model.driver_coordinate(d.name)
            k = self.joint_names.index(d.joint)
            col = self.tree_column(d.joint, coord)
            row = len(self.equations)
            self.drivers.append(DriverRow(k, coord, time_function(d.expression), row, col))
            self.driver_names.append(d.name)
            self.equations.append(Equation(d.name, "driver", f"{coord} of joint '{d.joint}' prescribed"))

        self.couplers, self.coupler_names = coupler_rows(
            model, {n: k for k, n in enumerate(self.joint_names)}, self.equations,
            lambda k, coordinate: self.tree_column(self.joint_names[k], coordinate))
        for name, c in zip(self.coupler_names, self.couplers):
            if c.source.column is None and len(c.source.coefficients) > 2:
                raise ModelError(f"coupler '{name}': joint '{self.joint_names[c.source.joint]}' closes a loop (a cut "
                                 "joint of the relative formulation), which couples it linearly only; a polynomial "
                                 "needs formulation='cartesian'")
        self.norm_rows = []
        for e, mob in enumerate(self.mobs):
            if mob.euler is not None:
                self.norm_rows.append((len(self.equations), self.cols[e][mob.euler]))
                name = self.body_names[topo.edges[e].child]
                self.equations.append(Equation(name, "normalization", "Euler parameter normalization"))
        self.m = len(self.equations)
        self._cut_bodies = sorted({b for k, _ in self.cut for b in self.joint_ends[k] if b >= 0})
        self._joint_ends_array = np.array(self.joint_ends, dtype=int).reshape(-1, 2)
        self._cut_groups = self._group_cut_joints()
        self._needs_kinematics = bool(self.cut) or any(d.column is None for d in self.drivers) or any(
            c.source.column is None for c in self.couplers)
        self.force_elements = compile_forces(model, self.index, self.init)
        self._friction = [f for f in self.force_elements if getattr(f, "reaction_load", False)]
        # (name, column of q) of the rotational spring-dampers on tree joints: θ is the joint coordinate
        self._spring_columns = [(f.name, col) for f in self.force_elements if isinstance(f, RotationalSpringDamperForce)
                                for col in [self.tree_column(f.joint, "rotation")] if col is not None]
        for f in self._friction:          # bound: their normal load is this formulation's reaction
            f.normal = 0.0
        self._cache = KinematicsCache()
        # joint armature (solver.formulations.armature): (joint, coordinate, a, tree column or None)
        self.armatures = [(k, coord, a, self.tree_column(self.joint_names[k], coord))
                          for k, coord, a in joint_armatures(model)]

    # ---- public API: MechanicalSystem -----------------------------------------------------------

    def tree_column(self, joint, coordinate):
        """The column of q that is ``coordinate`` of joint ``joint`` (the joint coordinate a driver
        prescribes, zero at the initial configuration), or None on a cut joint."""
        k = self.joint_names.index(joint)
        if k not in self._edge_of_joint:
            return None
        return self.cols[self._edge_of_joint[k]][self._joint_coordinates[k].index(coordinate)]

    def run_state(self):
        """Force elements with a state, the joints (angle unwrapping of cut joints and drivers on
        them) and the cache of the last forward recursions."""
        return [*super().run_state(), *self.cjoints, self._cache]

    def initial_state(self):
        """q0 = identity of every tree joint; q̇0 = the weighted least-change fit of the model's
        initial body velocities subject to Φ_q q̇ = ν (the same problem the Cartesian formulation
        solves, so both start from the same velocities)."""
        q = np.concatenate([mob.initial() for mob in self.mobs]) if self.nq else np.zeros(0)
        A, y, w = self.velocity_fit(q)
        ev = self.constraints(q, 0.0, level=1)
        sparse_rows = self.nq >= SPARSE_FIT_MIN
        finite = np.all(np.isfinite(A.data if sparse_rows else A)) and np.all(np.isfinite(ev.jac))
        if not (np.any(y) or np.any(ev.nu)) and finite:
            return q, np.zeros(self.nq), 0.0          # at rest: the fit is q̇ = 0 (lstsq's answer, exactly)
        if sparse_rows:                        # many coordinates: the KKT matrix's sparse LU, O(n) for a row of loops
            qd = sparse_velocity_fit(A, y, w, ev.jac, ev.nu) if finite else None
            if qd is not None:
                return q, qd, 0.0
            A = A.toarray()
        H = A.T @ (w[:, None] * A)
        g = A.T @ (w * y)
        m = self.m
        kkt = np.block([[H + 1e-12 * np.eye(self.nq), ev.jac.T], [ev.jac, np.zeros((m, m))]])
        sol, *_ = np.linalg.lstsq(kkt, np.concatenate([g, ev.nu]), rcond=None)
        return q, sol[:self.nq], 0.0

    def velocity_fit(self, q):
        """(A, y, w) of :meth:`initial_state`'s fit ½ (A q̇ − y)ᵀ diag(w) (A q̇ − y) at q: per body its CM
        velocity and ω as rows of A (scipy.sparse CSR from SPARSE_FIT_MIN coordinates on), the model's initial values y, weights 1e6 / 0.25e6 where a value
        was given (1 / 0.25 elsewhere)."""
        kin = self.kinematics(q)
        big = self.nq >= SPARSE_FIT_MIN           # A in sparse rows (O(n) memory for many bodies)
        if big:
            from scipy import sparse
        rows, target, weights = [], [], []
        for b, body in enumerate(self._bodies):
            Jb = self.body_jacobian(kin, b)
            Jb = np.vstack([Jb[:3] - skew(kin.r[b]) @ Jb[3:], Jb[3:]])     # CM velocity, ω
            if big:                          # its non-zeros as (row, column, value): one CSR matrix at the end
                i, j = np.nonzero(Jb)
                rows.append((i + 6 * b, j, Jb[i, j]))
            else:
                rows.append(Jb)
            target += [np.asarray(body.velocity, float), np.asarray(body.angular_velocity, float)]
            weights += [np.full(3, 1e6 if np.any(body.velocity) else 1.0),
                        np.full(3, 0.25e6 if np.any(body.angular_velocity) else 0.25)]
        if not rows:
            A = np.zeros((0, self.nq))
        elif big:
            i, j, v = (np.concatenate(x) for x in zip(*rows))
            A = sparse.csr_matrix((v, (i, j)), shape=(6 * len(rows), self.nq))
        else:
            A = np.vstack(rows)
        return A, np.concatenate(target or [np.zeros(0)]), np.concatenate(weights or [np.zeros(0)])

    def velocity_weights(self):
        """Coordinates of tree joints whose child was given an initial velocity are kept."""
        w = np.ones(self.nq)
        for e, edge in enumerate(self.topology.edges):
            body = self._bodies[edge.child]
            if np.any(body.velocity) or np.any(body.angular_velocity):
                w[self.cols[e]] = 1e6
        return w

    def constraints(self, q, t, qd=None, level=0):
        """Φ, Φ_q (chain rule through the tree), ν, γ: cut joints, drivers, normalizations."""
        level = min(level, 1) if qd is None else level
        kin = self.kinematics(q, qd if level >= 2 else None) if self._needs_kinematics else None
        phi = np.zeros(self.m)
        jac = np.zeros((self.m, self.nq))
        nu = np.zeros(self.m) if level >= 1 else None
        gamma = np.zeros(self.m) if level >= 2 else None
        vel = level >= 2
        for k, rows in self.cut:
            ends, scalars = self._cut_scalars(kin, k, vel)
            for row, s in zip(rows, scalars):
                phi[row] = s.val
                jac[row], quad = self._chain(kin, ends, s, vel)
                if vel:
                    gamma[row] = -quad
        for d in self.drivers + self.couplers:
            row, fn = d.row, d.function
            if d.column is not None:
                phi[row] = q[d.column] - fn.value(t)
                jac[row, d.column] = 1.0
                quad = 0.0
            else:
                ends, s = self._cut_coordinate(kin, d.joint, d.coordinate, vel)
                phi[row] = s.val - fn.value(t)
                jac[row], quad = self._chain(kin, ends, s, vel)
            if nu is not None:
                nu[row] = fn.d1(t)
            if vel:
                gamma[row] = -quad + fn.d2(t)
            if d.source is None:
                continue
            col = d.source.column                 # a coupler: θ_j − p(θ_i), θ_i a tree column or a cut joint's
            if col is not None:
                dphi, dgrad, dgamma = d.source.terms(q[col], 1.0, 0.0 if vel else None, qd[col] if vel else None)
                jac[row, col] += dgrad
            else:
                ends, s = self._cut_coordinate(kin, d.source.joint, d.source.coordinate, vel)
                grad, quad = self._chain(kin, ends, s, vel)
                dphi, dgrad, dgamma = d.source.terms(s.val, grad, quad if vel else None, grad @ qd if vel else None)
                jac[row] += dgrad
            phi[row] += dphi
            if vel:
                gamma[row] += dgamma
        for row, c in self.norm_rows:
            p = q[c:c + 4]
            phi[row] = p @ p - 1.0
            jac[row, c:c + 4] = 2.0 * p
            if vel:
                pd = qd[c:c + 4]
                gamma[row] = -2.0 * (pd @ pd)
        return ConstraintEval(phi, jac, nu, gamma)

    def mass(self, q):
        """M = Bᵀ M̂ B assembled from K_e (Kim & You (1997) eqs. 15–16): for each tree edge e the block row
        B_eᵀ K_e [B_a for a on e's path] in one product (O(n) slices for a chain)."""
        kin = self.kinematics(q)
        K = self._K(kin)
        M = np.zeros((self.nq, self.nq))
        for e, path in enumerate(self.paths):
            ce = self.cols[e]
            if not len(ce):
                continue
            pc = self.path_cols[e]
            blk = (K[e] @ kin.B[e]).T @ np.hstack([kin.B[a] for a in path])
            M[np.ix_(ce, pc)] = blk
            M[np.ix_(pc, ce)] = blk.T
        for k, coord, a, col in self.armatures:        # M += a gᵀg (solver.formulations.armature)
            if col is not None:
                M[col, col] += a
            else:
                g, _ = self._chain(kin, *self._cut_coordinate(kin, k, coord, False), False)
                M += a * np.outer(g, g)
        return M

    def forces(self, q, qd, t):
        """P_e = B_eᵀ (L_e − K_e Σ_path D) (Kim & You (1997) eqs. 15, 17): applied, gravity, velocity
        terms; joint friction with the normal load of :meth:`update_friction_loads`."""
        self.update_friction_loads(q, qd, t)
        return self._applied_forces(q, qd, t)

    def update_friction_loads(self, q, qd, t):
        """Set the normal load N of every joint friction that takes its joint's reaction
        (:class:`solver.joint_forces.JointFriction`) at state (q, q̇, t).  N depends on the
        accelerations, and they on the friction, so this solves the fixed point N = N(q̈(N)): from
        N = 0, solve M q̈ + Φ_qᵀλ = P(N), Φ_q q̈ = γ (least squares: redundant rows), take the
        non-recursive reactions (eq. 30, cut joints from λ) and their N, until N changes by less
        than FRICTION_RTOL of its size (at most FRICTION_ITERATIONS).  The friction acts along the
        joint's free directions, so N moves only through the other bodies' accelerations: the
        iteration contracts by about μ·radius·(mass × arm)/inertia, a few passes."""
        if not self._friction:
            return
        for f in self._friction:
            f.normal = 0.0
        M, ev = self.mass(q), self.constraints(q, t, qd, level=2)
        kkt = np.block([[M, ev.jac.T], [ev.jac, np.zeros((self.m, self.m))]])
        kin = self.kinematics(q, qd)
        for _ in range(FRICTION_ITERATIONS):
            sol = np.linalg.lstsq(kkt, np.concatenate([RelativeSystem._applied_forces(self, q, qd, t), ev.gamma]),
                                  rcond=None)[0]
            rotor = self._cut_rotor_loads(q, qd, sol[:self.nq])
            if self._friction_normals(self._reaction_terms(kin, t, sol[:self.nq], sol[self.nq:], rotor=rotor)[-1]):
                return

    def _friction_normals(self, reactions):
        """Set the friction elements' N from the joint reactions (RF_joint, RT_joint) (…, joints, 3);
        True when no N changed by more than FRICTION_RTOL of the largest."""
        RFj, RTj = reactions
        change = scale = 0.0
        for f in self._friction:
            k = self.joint_names.index(f.joint)
            N = f.normal_load(RFj[..., k, :], RTj[..., k, :])
            change = max(change, float(np.max(np.abs(N - f.normal))))
            scale = max(scale, float(np.max(np.abs(N))))
            f.normal = N
        return change <= FRICTION_RTOL * scale

    def _applied_forces(self, q, qd, t):
        """P of :meth:`forces` with the friction's normal loads as they are."""
        kin = self.kinematics(q, qd)
        K = self._K(kin)
        L = self._L(kin, K, self._Qhat(kin, t))
        P = np.zeros(self.nq)
        for e, edge in enumerate(self.topology.edges):
            if len(self.cols[e]):
                P[self.cols[e]] = kin.B[e].T @ (L[e] - K[e] @ kin.Yd0[edge.child])
        for k, coord, a, col in self.armatures:        # Q −= a gᵀ(ġq̇) on a cut joint's coordinate
            if col is None:
                g, quad = self._chain(kin, *self._cut_coordinate(kin, k, coord, True), True)
                P -= a * quad * g
        return P

    def constraint_hessian(self, q, lam, t):
        """(Φ_qᵀλ)_q for the implicit integrator, by central differences of Φ_qᵀλ (step
        1e-7·max(1, |q_k|): truncation O(h²) and round-off O(ε/h) both near 1e-8 relative).
        Tree-joint driver rows are linear (zero Hessian); cut joints and normalizations are not."""
        n = self.nq
        H = np.empty((n, n))
        for k in range(n):
            h = 1e-7 * max(1.0, abs(q[k]))
            e = np.zeros(n)
            e[k] = h
            H[:, k] = (self.constraints(q + e, t).jac.T @ lam - self.constraints(q - e, t).jac.T @ lam) / (2 * h)
        return 0.5 * (H + H.T)

    def normalize(self, q):
        q = np.array(q, dtype=float)
        for _, c in self.norm_rows:
            q[c:c + 4] /= np.linalg.norm(q[c:c + 4])
        return q

    def postprocess(self, q, qd, qdd, lam, t):
        """Body states, joint reactions, driver forces and energies at one output point — the keys of
        CartesianSystem.postprocess (:meth:`postprocess_batch` of one point, without the stacking)."""
        post = self._post(float(t), *(np.asarray(x, dtype=float) for x in (q, qd, qdd, lam)))
        post["energy"] = tuple(post["energy"])
        return post

    def postprocess_batch(self, t, q, qd, qdd, lam, angles=None):
        """:meth:`postprocess` of N output points (arrays with a leading axis N; "energy" an (N, 4)
        array: kinetic, gravity, spring, 0), numpy over the points (module docstring), in chunks of
        at most about POST_ENTRIES stacked K_e, M̂_b and B_e entries.  ``angles``: {name: (N,)} the
        force elements' unwrapped angles the step loop tracked at the points (``BodyFrames.angles``;
        a spring on a tree joint takes its joint coordinate instead)."""
        step = max(1, POST_ENTRIES // (36 * (self.nb + len(self.mobs)) + 6 * self.nq))
        if len(t) > step:
            parts = [self.postprocess_batch(*(x[i:i + step] for x in (t, q, qd, qdd, lam)),
                                            angles=angle_rows(angles, slice(i, i + step)))
                     for i in range(0, len(t), step)]
            return {key: np.concatenate([part[key] for part in parts]) for key in parts[0]}
        return self._post(*(np.asarray(x, dtype=float) for x in (t, q, qd, qdd, lam)), angles=angles)

    def _post(self, t, q, qd, qdd, lam, angles=None):
        """Post-processing of one state (q: (nq,)) or N stacked ones (q: (N, nq)): body states,
        reactions on body_j at the joint origin (eqs. 30–31, or Newton–Euler eq. 28, with the
        cut-joint wrenches from their multipliers), driver forces (eq. 36 on tree joints, −λ on cut
        joints), energies (kinetic ½ m vᵀv + ½ ω'ᵀJ'ω', gravity −m gᵀr, force elements)."""
        lead = q.shape[:-1]
        kin = self._recursion(q, qd) if q.ndim == 1 else self._distinct_recursion(q, qd)
        kin.angles = angles or {}
        frames = self._frames(kin)
        for f in self._friction:         # the fixed point of update_friction_loads at the given q̈, λ
            f.normal = np.zeros(lead)
        rotor = self._cut_rotor_loads(q, qd, qdd)
        for _ in range(FRICTION_ITERATIONS if self._friction else 0):
            if self._friction_normals(self._reaction_terms(kin, t, qdd, lam, rotor=rotor)[-1]):
                break
        spring = np.zeros(lead)
        Ydd, Rhat, (RF, RT), (RFj, RTj) = self._reaction_terms(kin, t, qdd, lam, spring, rotor=rotor)
        drv = np.zeros(lead + (len(self.drivers),))
        for n, d in enumerate(self.drivers):
            col = d.column
            if col is None:
                drv[..., n] = -lam[..., d.row]
            else:
                e = next(e for e, cols in enumerate(self.cols) if col in cols)
                drv[..., n] = tmatvec(kin.B[e], Rhat[..., e, :])[..., list(self.cols[e]).index(col)]     # eq. (36)
                for c in self.couplers:      # less a coupler's load on the same coordinate, p'(q_col) λ
                    if c.source.column == col:
                        drv[..., n] -= c.source.derivatives(q[..., col])[1] * lam[..., c.row]
        r, v, w = kin.r, frames.v, np.ascontiguousarray(frames.w)
        w_body = tmatvec(kin.A, w)
        energy = np.zeros(lead + (4,))
        energy[..., 0] = 0.5 * (np.einsum("b,...bi,...bi->...", self.mass_values, v, v)
                                + np.einsum("...bi,bij,...bj->...", w_body, self.inertia, w_body))
        energy[..., 0] += kinetic_energy([a for _, _, a, _ in self.armatures], self._armature_rates(q, qd))
        energy[..., 1] = -np.einsum("b,i,...bi->...", self.mass_values, np.asarray(self.gravity, dtype=float), r)
        energy[..., 2] = spring
        return {"r": r, "A": kin.A, "v": v, "w": w,
                "a": Ydd[..., :3] + cross(Ydd[..., 3:], r) + cross(w, v), "alpha": Ydd[..., 3:].copy(),
                "reaction_force": RF, "reaction_torque": RT, "reaction_force_joint": RFj,
                "reaction_torque_joint": RTj, "driver_force": drv, "energy": energy}

    # ---- public API: kinematics (also used by tests and benches) --------------------------------
    def kinematics(self, q, qd=None) -> Kinematics:
        """Forward recursion of positions, state velocities and D_e (Kim & You (1997) eqs. 1–8) of one
        state; cached."""
        qb = q.tobytes()
        key = (qb, None if qd is None else qd.tobytes())
        hit = self._cache.get(key)
        if hit is None and qd is None:          # a pass with velocities holds the positions too
            hit = next((k for (kq, _), k in self._cache.items() if kq == qb), None)
        if hit is not None:
            return hit
        kin = self._recursion(q, qd)
        if len(self._cache) > 8:
            self._cache.clear()
        self._cache[key] = kin
        return kin

    def body_jacobian(self, kin, b):
        """J_b (6 × nq) with Ŷ_b = J_b q̇: the B_e of the joints on b's path to ground."""
        J = np.zeros((6, self.nq))
        for e in self.paths[self.topology.parent_edge[b]]:
            J[:, self.cols[e]] = kin.B[e]
        return J

    def frames(self, q, qd):
        """Global body states (CM position, rotation, CM velocity, ω) as BodyFrames."""
        frames = self._frames(self.kinematics(q, qd))
        return BodyFrames(frames.r.copy(), frames.A.copy(), frames.v, frames.w.copy(), frames.angles)

    def state_mass(self, kin, b):
        """Body state mass matrix M̂_b (Kim & You (1997) eq. 11), global, about the global origin; ``b`` a
        body index or a slice of bodies (stacked along the body axis), of one or N states."""
        m = np.asarray(self.mass_values[b])[..., None, None]
        rt = skew(kin.r[..., b, :])
        out = np.zeros(rt.shape[:-2] + (6, 6))
        out[..., :3, :3] = m * np.eye(3)
        out[..., 3:, :3] = m * rt
        out[..., :3, 3:] = -m * rt
        out[..., 3:, 3:] = self._global_inertia(kin)[..., b, :, :] - m * rt @ rt
        return out

    def _global_inertia(self, kin):
        """J_b = A_b J'_b A_bᵀ of every body (global axes, about the CM), once per kinematics."""
        if kin.J is None:
            kin.J = kin.A @ self.inertia @ np.swapaxes(kin.A, -1, -2)
        return kin.J

    # ---- helpers: tree ----------------------------------------------------------------------------
    def _build_tree(self, joints):
        topo = self.topology
        self.mobs, self.cols, self.C_in, self.s_in, self.C_out, self.s_out = [], [], [], [], [], []
        n = 0
        for edge in topo.edges:
            if edge.joint is None:                               # free joint of a floating base
                r0, A0 = self.init[edge.child]
                mob = Mobilizer("free")
                markers = (np.eye(3), r0.copy(), A0.T.copy(), np.zeros(3))
            else:
                cj, j = self.cjoints[edge.joint], joints[edge.joint]
                mob = Mobilizer(j.type, pitch=cj.pitch, inverted=edge.inverted)
                inner, outer = ((cj.C_j, cj.s_j), (cj.C_i, cj.s_i)) if edge.inverted else \
                    ((cj.C_i, cj.s_i), (cj.C_j, cj.s_j))
                markers = (inner[0], inner[1], outer[0], outer[1])
            self.mobs.append(mob)
            self.cols.append(np.arange(n, n + mob.n))
            n += mob.n
            for lst, val in zip((self.C_in, self.s_in, self.C_out, self.s_out), markers):
                lst.append(val)
        self.nq = n
        # path[e]: tree edges from the root to e (inclusive); subtree[e]: e and all below it
        self.paths = []
        for e, edge in enumerate(topo.edges):
            parent = edge.parent
            self.paths.append((self.paths[topo.parent_edge[parent]] if parent >= 0 else []) + [e])
        self.subtree = [[] for _ in topo.edges]          # a below e ⇔ e on a's path (a ascending)
        for a, path in enumerate(self.paths):
            for e in path:
                self.subtree[e].append(a)
        self.path_cols = [np.concatenate([self.cols[a] for a in path]).astype(int) for path in self.paths]
        self._levels = self._tree_levels()
        # (tree edges, their joints, ±1: the reaction on body_j is −R̂_e for an inverted joint)
        tree = [(e, edge.joint, -1.0 if edge.inverted else 1.0) for e, edge in enumerate(topo.edges)
                if edge.joint is not None]
        self._tree_joints = (np.array([t[0] for t in tree], dtype=int), np.array([t[1] for t in tree], dtype=int),
                             np.array([t[2] for t in tree]).reshape(-1, 1))

    def _init_of(self, b):
        return self.init[b] if b >= 0 else (np.zeros(3), np.eye(3))

    def _recursion(self, q, qd):
        """Forward recursion (Kim & You (1997) eqs. 1–8, module docstring) of one state (q: (nq,)) or of N
        stacked states (q: (N, nq)), a level of the tree at a time: the edges of one depth and one
        mobilizer kind (:meth:`_tree_levels`) along an extra axis G (their parents are done)."""
        lead = q.shape[:-1]
        kin = Kinematics(self.nb, len(self.mobs), lead)
        kin.q = q
        for edges, parents, children, cols, mob, C_in, s_in, C_out, s_out in self._levels:
            grounded = (parents < 0)[:, None]                                   # (G, 1)
            A_P = np.where(grounded[:, :, None], np.eye(3), kin.A[..., parents, :, :])
            r_P = np.where(grounded, 0.0, kin.r[..., parents, :])
            xd = None if qd is None else qd[..., cols]
            R, d, H, Dq, aw, ad = mob.relative(q[..., cols], xd)
            E = A_P @ C_in
            A = E @ R @ np.swapaxes(C_out, -1, -2)
            kin.A[..., children, :, :] = A
            o = r_P + matvec(A_P, s_in) + matvec(E, d)
            kin.o[..., edges, :] = o
            kin.r[..., children, :] = o - matvec(A, s_out)
            Hg = E @ H
            B = np.concatenate([E @ Dq + skew(o) @ Hg, Hg], axis=-2)
            for g, e in enumerate(edges):
                kin.B[e] = B[..., g, :, :]
            if qd is None:
                continue
            YP = np.where(grounded, 0.0, kin.Y[..., parents, :])
            wP = YP[..., 3:]
            kin.Y[..., children, :] = YP + matvec(B, xd)
            Ed, Ew = matvec(E, matvec(Dq, xd)), matvec(E, matvec(H, xd))
            v_o = YP[..., :3] + cross(wP, o) + Ed
            Dbot = cross(wP, Ew) + matvec(E, aw)
            Dtop = cross(wP, Ed) + matvec(E, ad) + cross(v_o, Ew) + cross(o, Dbot)
            D = np.concatenate([Dtop, Dbot], axis=-1)
            kin.D[..., edges, :] = D
            kin.Yd0[..., children, :] = np.where(grounded, 0.0, kin.Yd0[..., parents, :]) + D
        kin.has_velocity = qd is not None
        return kin

    def _reaction_terms(self, kin, t, qdd, lam, spring=None, rotor=None):
        """(Ẏ̂, R̂, (RF, RT) global, (RF, RT) in joint axes) of one or N stacked states: the
        reactions on body_j at the joint origin (eqs. 30–31, or Newton–Euler eq. 28), the cut-joint
        wrenches from their multipliers; ``spring`` receives the force elements' potential;
        ``rotor``: the cut joints' rotor loads (:meth:`_cut_rotor_loads`) or None."""
        Ydd = self._accelerations(kin, qdd)
        K = self._K(kin)
        Qh = self._Qhat(kin, t, spring)
        cut_wrench = self._cut_wrenches(kin, lam)            # on each side body, spatial, per joint
        for k, sides in cut_wrench.items():
            for b, W in zip(self.joint_ends[k], sides):
                if b >= 0:
                    Qh[..., b, :] += W
        self._add_rotor_loads(kin, qdd, Qh)
        if rotor is not None:
            Qh += rotor
        L = self._L(kin, K, Qh)
        if self.reactions == "nonrecursive":
            Rhat = self._reactions_nonrecursive(kin, K, L, Ydd, qdd)
        else:
            Rhat = self._reactions_newton_euler(kin, Qh, Ydd)
        RF, RT, RFj, RTj = self._joint_reactions(kin, Rhat, cut_wrench)
        return Ydd, Rhat, (RF, RT), (RFj, RTj)

    def _tree_levels(self):
        """The tree edges in groups for :meth:`_recursion`: [(edges, parent bodies, child bodies,
        coordinate columns (G × n), the mobilizer, C_in, s_in, C_out, s_out stacked)], one group per
        (depth, mobilizer kind, pitch, inversion), shallower depths first."""
        topo, depth, groups = self.topology, {}, {}
        for e, edge in enumerate(topo.edges):
            P = edge.parent
            depth[e] = depth[topo.parent_edge[P]] + 1 if P >= 0 else 0
            mob = self.mobs[e]
            groups.setdefault((depth[e], mob.kind, mob.pitch, mob.inverted), []).append(e)
        levels = []
        for key in sorted(groups, key=lambda k: k[0]):
            edges = np.array(groups[key], dtype=int)
            mob = self.mobs[edges[0]]
            levels.append((edges, np.array([topo.edges[e].parent for e in edges], dtype=int),
                           np.array([topo.edges[e].child for e in edges], dtype=int),
                           np.array([self.cols[e] for e in edges], dtype=int).reshape(len(edges), mob.n), mob,
                           *(np.array([lst[e] for e in edges], dtype=float) for lst in
                             (self.C_in, self.s_in, self.C_out, self.s_out))))
        return levels

    def _distinct_recursion(self, q, qd):
        """:meth:`_recursion` of N stacked states, done once per run of equal consecutive (q, q̇)
        (byte for byte) and gathered back to the N rows — the probe rows of the non-unique reaction
        components (:mod:`solver.partitioning.self_stress`) repeat one state with different λ, one
        after the other (a comparison of neighbours, not a sort: output rows are all distinct)."""
        both = np.concatenate([q, qd], axis=-1)
        new = np.ones(len(both), dtype=bool)
        new[1:] = np.any(both[1:].view(np.uint64) != both[:-1].view(np.uint64), axis=-1)
        if new.all():
            return self._recursion(q, qd)
        first = np.flatnonzero(new)
        kin = self._recursion(q[first], qd[first])
        back = np.cumsum(new) - 1
        for name in ("A", "r", "o", "Y", "Yd0", "D", "q"):
            setattr(kin, name, getattr(kin, name)[back])
        kin.B = [B[back] for B in kin.B]
        return kin

    def _frames(self, kin):
        """BodyFrames (CM position, rotation, CM velocity ṙ = v_O + ω × r, ω) of a recursion's states,
        with the angles of the rotational spring-dampers on tree joints: their joint coordinate
        (continuous, integrated; ``BodyFrames.angles``)."""
        w = kin.Y[..., 3:]
        return BodyFrames(kin.r, kin.A, kin.Y[..., :3] + cross(w, kin.r), w, {**kin.angles, **self.spring_angles(kin.q)})

    def coordinate_angles(self):
        """The rotational spring-dampers on tree joints: θ is the joint coordinate."""
        return frozenset(name for name, _ in self._spring_columns)

    def spring_angles(self, q):
        """{name: θ} of the rotational spring-dampers on tree joints at the state(s) q: the joint
        coordinate, continuous because integrated (``BodyFrames.angles``)."""
        return {name: q[..., col] for name, col in self._spring_columns}

    def _K(self, kin):
        """K_e = M̂_child + Σ_children K_c (Kim & You (1997) eq. 16); computed once per kinematics."""
        if kin.K is not None:
            return kin.K
        topo = self.topology
        Mh = self.state_mass(kin, slice(None))
        K = [None] * len(topo.edges)
        for e in reversed(range(len(topo.edges))):
            K[e] = Mh[..., topo.edges[e].child, :, :]
            for c in topo.children[e]:
                K[e] = K[e] + K[c]
        kin.K = K
        return K

    def _L(self, kin, K, Qh):
        """L_e = Q̂_child + Σ_children (L_c − K_c D_c) (Kim & You (1997) eq. 17)."""
        topo = self.topology
        L = [None] * len(topo.edges)
        for e in reversed(range(len(topo.edges))):
            L[e] = Qh[..., topo.edges[e].child, :] + sum((L[c] - matvec(K[c], kin.D[..., c, :])
                                                          for c in topo.children[e]), np.zeros(6))
        return L

    def _Qhat(self, kin, t, spring=None):
        """Body state forces Q̂_b (Kim & You (1997) eq. 12) from gravity, force elements and inertia terms;
        ``spring`` (one entry per state), when given, receives the elements' potential energy."""
        frames = self._frames(kin)
        loads, energy = element_loads(self.force_elements, t if kin.r.ndim == 2 else
                                      np.broadcast_to(t, kin.r.shape[:-2]), frames, self.nb, spring is not None)
        F, T = loads.F, loads.T
        if spring is not None:
            spring[...] = energy
        m, w = self.mass_values[:, None], frames.w
        f = F + m * np.asarray(self.gravity, dtype=float) - m * cross(w, frames.v)
        J = self._global_inertia(kin)
        return np.concatenate([f, cross(kin.r, f) + T - cross(w, matvec(J, w))], axis=-1)

    def _accelerations(self, kin, qdd):
        """Ẏ̂_C = Ẏ̂_P + B_e q̈_e + D_e (Kim & You (1997) eq. 8)."""
        Ydd = np.zeros(kin.Y.shape)
        for e, edge in enumerate(self.topology.edges):
            P = edge.parent
            Ydd[..., edge.child, :] = ((Ydd[..., P, :] if P >= 0 else 0.0) + matvec(kin.B[e], qdd[..., self.cols[e]])
                                       + kin.D[..., e, :])
        return Ydd

    def _reactions_nonrecursive(self, kin, K, L, Ydd, qdd):
        """R̂_e = −L_e + K_e Ẏ̂_child + Σ_{l ∈ subtree(e), l ≠ e} K_l B_l q̈_l (Kim & You (1997) eq. 30); the
        subtree sums accumulated from the leaves."""
        topo = self.topology
        ne = len(topo.edges)
        KBq = [matvec(K[l], matvec(kin.B[l], qdd[..., self.cols[l]])) for l in range(ne)]
        below = [None] * ne
        R = np.empty(kin.D.shape)
        for e in reversed(range(ne)):
            below[e] = sum((KBq[c] + below[c] for c in topo.children[e]), np.zeros(6))
            R[..., e, :] = -L[e] + matvec(K[e], Ydd[..., topo.edges[e].child, :]) + below[e]
        return R

    def _reactions_newton_euler(self, kin, Qh, Ydd):
        """R̂_e = M̂_child Ẏ̂_child − Q̂_child + Σ_children R̂_c, leaves first (Kim & You (1997) eq. 28)."""
        topo = self.topology
        Mh = self.state_mass(kin, slice(None))
        R = np.empty(kin.D.shape)
        for e in reversed(range(len(topo.edges))):
            b = topo.edges[e].child
            R[..., e, :] = (matvec(Mh[..., b, :, :], Ydd[..., b, :]) - Qh[..., b, :]
                            + sum((R[..., c, :] for c in topo.children[e]), np.zeros(6)))
        return R

    def _joint_reactions(self, kin, Rhat, cut_wrench):
        """Reaction force and moment on body_j about its joint origin P (eq. 31: n_P = n_O − P × f),
        in global and in joint-frame (body_i's marker) axes, of every joint: tree joints from R̂_e
        (on the child: −R̂_e for an inverted joint), cut joints from their constraint wrenches."""
        lead, nj = kin.r.shape[:-2], len(self.cjoints)
        W = np.zeros(lead + (nj, 6))                        # spatial wrench on body_j
        edges, joints, signs = self._tree_joints
        W[..., joints, :] = signs * Rhat[..., edges, :]
        for k, (Wi, Wj) in cut_wrench.items():
            W[..., k, :] = Wj if self.joint_ends[k][1] >= 0 else -Wi
        # every joint at once: body arrays with ground appended (index −1: r = 0, A = I)
        r = np.concatenate([kin.r, np.zeros(lead + (1, 3))], axis=-2)
        A = np.concatenate([kin.A, np.broadcast_to(np.eye(3), lead + (1, 3, 3))], axis=-3)
        ends = self._joint_ends_array
        s_j = np.array([cj.s_j for cj in self.cjoints]).reshape(nj, 3)
        C_i = np.array([cj.C_i for cj in self.cjoints]).reshape(nj, 3, 3)
        P = r[..., ends[:, 1], :] + matvec(A[..., ends[:, 1], :, :], s_j)
        RF = W[..., :3]
        RT = W[..., 3:] - cross(P, RF)
        Fr = A[..., ends[:, 0], :, :] @ C_i
        return RF, RT, tmatvec(Fr, RF), tmatvec(Fr, RT)

    # ---- helpers: cut joints (Cartesian constraint functions + chain rule) -----------------------
    def _states(self, kin, bodies=None):
        """BodyState (CM position, unit Euler parameters, and rates when known) of the given bodies
        (default all) and ground."""
        states = {-1: BodyState(None)}
        for b in (range(self.nb) if bodies is None else bodies):
            p = quat_from_matrix(kin.A[b])
            x = np.concatenate([kin.r[b], p])
            xd = None
            if kin.has_velocity:
                w = kin.Y[b, 3:]
                xd = np.concatenate([kin.Y[b, :3] + cross(w, kin.r[b]), 0.5 * G_matrix(p).T @ w])
            states[b] = BodyState(0, x, xd)
        return states

    def _cut_scalars(self, kin, k, vel):
        states = self._states_cached(kin)
        bi, bj = self.joint_ends[k]
        return (bi, bj), self.cjoints[k].equations(states[bi], states[bj], 2 if vel else 0)

    def _add_rotor_loads(self, kin, qdd, Qh):
        """The rotors' inertial loads −a θ̈ of tree joints with armature as body wrenches (spatial, into
        Q̂), so that the reactions (eq. 30) are those of the joint alone (as the Cartesian formulation's
        multipliers give them: nothing along a free axis) and a driver's force (eq. 36) includes a θ̈:
        on the child −a θ̈ w, on the parent +a θ̈ w, w = [0 ; z] (revolute: a torque about the axis z) or
        [u ; o × u] (prismatic: a force along u at the joint origin o), so that wᵀB_e = 1.  Cut joints':
        :meth:`_cut_rotor_loads`."""
        for _, _, a, col in self.armatures:
            if col is None:
                continue
            e = next(e for e, cols in enumerate(self.cols) if col in cols)
            b = kin.B[e][..., list(self.cols[e]).index(col)]
            edge = self.topology.edges[e]
            if np.any(b[..., 3:]):
                w = np.concatenate([np.zeros_like(b[..., 3:]), b[..., 3:]], axis=-1)
            else:
                w = np.concatenate([b[..., :3], cross(kin.o[..., e, :], b[..., :3])], axis=-1)
            load = (a * qdd[..., col])[..., None] * w
            Qh[..., edge.child, :] -= load
            if edge.parent >= 0:
                Qh[..., edge.parent, :] += load

    def _cut_rotor_loads(self, q, qd, qdd):
        """The rotors' loads −a θ̈ of cut joints with armature as body wrenches (…, nb, 6), or None:
        −a θ̈ c_b on each of the joint's bodies, c_b the spatial gradient of θ (δθ = c_bᵀ δẐ_b) and
        θ̈ = g q̈ + ġq̇ (:meth:`_chain`), point by point."""
        cut = [(k, coord, a) for k, coord, a, col in self.armatures if col is None]
        if not cut:
            return None
        out = np.zeros(q.shape[:-1] + (self.nb, 6))
        for i in np.ndindex(q.shape[:-1]):
            kin = self.kinematics(q[i], qd[i])
            for k, coord, a in cut:
                ends, s = self._cut_coordinate(kin, k, coord, True)
                g, quad = self._chain(kin, ends, s, True)
                load = a * (g @ qdd[i] + quad)
                for side, b in enumerate(ends):
                    if b >= 0:
                        out[i + (b,)] -= load * self._spatial_gradient(kin, b, s.grad[7 * side:7 * side + 7])
        return out

    def _armature_rates(self, q, qd):
        """θ̇ of each joint with armature (…, n): q̇ of its tree column, g q̇ on a cut joint (point by point)."""
        rates = np.zeros(q.shape[:-1] + (len(self.armatures),))
        for n, (k, coord, _, col) in enumerate(self.armatures):
            if col is not None:
                rates[..., n] = qd[..., col]
                continue
            for i in np.ndindex(q.shape[:-1]):
                kin = self.kinematics(q[i], qd[i])
                rates[i + (n,)] = self._chain(kin, *self._cut_coordinate(kin, k, coord, False), False)[0] @ qd[i]
        return rates

    def _cut_coordinate(self, kin, k, coord, vel):
        states = self._states_cached(kin)
        bi, bj = self.joint_ends[k]
        return (bi, bj), self.cjoints[k].coordinate(coord, states[bi], states[bj], 2 if vel else 0)

    def _states_cached(self, kin):
        if not hasattr(kin, "states"):
            kin.states = self._states(kin, self._cut_bodies)
        return kin.states

    def _spatial_gradient(self, kin, b, grad7):
        """c_b with δΦ = c_bᵀ δẐ_b: [g_r ; r̃ g_r + ½ G(p) g_p] for a body's Cartesian gradient."""
        gr, gp = grad7[:3], grad7[3:]
        p = kin.states[b].p
        return np.concatenate([gr, cross(kin.r[b], gr) + 0.5 * G_matrix(p) @ gp])

    def _chain(self, kin, ends, s, vel):
        """Row of Φ_q in joint coordinates and the velocity-quadratic part of Φ̈ (γ = −quad)."""
        row = np.zeros(self.nq)
        quad = s.quad if vel else 0.0
        for side, b in enumerate(ends):
            if b < 0:
                continue
            g7 = s.grad[7 * side:7 * side + 7]
            c = self._spatial_gradient(kin, b, g7)
            for e in self.paths[self.topology.parent_edge[b]]:
                if len(self.cols[e]):
                    row[self.cols[e]] += c @ kin.B[e]
            if vel:
                st = kin.states[b]
                w = kin.Y[b, 3:]
                quad += c @ kin.Yd0[b] + g7[:3] @ cross(w, st.rd) + 0.5 * g7[3:] @ (G_matrix(st.pd).T @ w)
        return row, quad

    def _cut_wrenches(self, kin, lam):
        """Constraint wrenches −Φ_qᵀλ of the cut joints (and drivers on them) on body_i and body_j,
        spatial form [f ; n about the origin]: −Σ_rows λ_row c_b with c_b the spatial gradients of
        the joint's constraint functions (:class:`_Gradients`); one or N stacked states.  Cut joints
        with the same equation forms (:meth:`_cut_groups`) are done together, along an extra axis."""
        out = {}
        if self._cut_sources:            # a coupler's λ on a cut leading joint: −c_1 λ (linear there)
            lam = np.concatenate([lam, np.stack([-c.source.coefficients[1] * lam[..., c.row]
                                                 for c in self._cut_sources], axis=-1)], axis=-1)
        for joints, rows, specs, constant in self._cut_groups:
            v = self._joint_vectors(kin, joints)
            named = {name: (name, value) for name, value in v.items()}
            ops = _Gradients(v)
            W = np.zeros(kin.r.shape[:-2] + (len(joints), 2, 6))
            for k, spec in enumerate(specs):
                W -= scalar(spec, named, ops, constant)[1] * lam[..., rows[:, k], None, None]
            W = np.where(self._joint_ends_array[joints][:, :, None] >= 0, W, 0.0)
            for g, k in enumerate(joints):
                out[k] = (W[..., g, 0, :], W[..., g, 1, :])
        return {k: out[k] for k, _ in self.cut}

    def _group_cut_joints(self):
        """[(joint indices, rows (G × n), equation forms, constant)]: the cut joints by their forms
        (joint rows, then the rows of drivers and couplers on them) and the constants the forms read.
        A coupler on a cut leading joint reads the multiplier column m + s of :meth:`_cut_wrenches`
        (s: its place in ``_cut_sources``)."""
        drivers_on = {}
        for d in self.drivers + self.couplers:
            if d.column is None:
                drivers_on.setdefault(d.joint, []).append((d.row, COORDINATES[d.coordinate]))
        self._cut_sources = [c for c in self.couplers if c.source.column is None]
        for s, c in enumerate(self._cut_sources):
            drivers_on.setdefault(c.source.joint, []).append((self.m + s, COORDINATES[c.source.coordinate]))
        groups = {}
        for k, rows in self.cut:
            cj = self.cjoints[k]
            pairs = list(zip(rows, cj.specs)) + drivers_on.get(k, [])
            specs = tuple(spec for _, spec in pairs)
            constants = tuple((name, float(cj.constant(name))) for spec in specs for name in constants_of(spec))
            groups.setdefault((specs, constants), (cj.constant, []))[1].append((k, [row for row, _ in pairs]))
        return [(np.array([k for k, _ in members]), np.array([r for _, r in members], dtype=int).reshape(len(members), -1),
                 specs, constant) for (specs, _), (constant, members) in groups.items()]

    def _joint_vectors(self, kin, joints):
        """The named vectors of the equations (:mod:`solver.constraints.joints`) of the joints
        ``joints`` (an index array of G joints), global: marker axes xi…zj, points Pi, Pj, d = Pj − Pi
        and the global axes, as (…, G, 3) arrays."""
        lead, G = kin.r.shape[:-2], len(joints)
        r = np.concatenate([kin.r, np.zeros(lead + (1, 3))], axis=-2)          # ground appended (index −1)
        A = np.concatenate([kin.A, np.broadcast_to(np.eye(3), lead + (1, 3, 3))], axis=-3)
        v = {}
        for tag, side in (("i", 0), ("j", 1)):
            b = self._joint_ends_array[joints, side]
            C = np.array([(self.cjoints[k].C_i, self.cjoints[k].C_j)[side] for k in joints]).reshape(G, 3, 3)
            s = np.array([(self.cjoints[k].s_i, self.cjoints[k].s_j)[side] for k in joints]).reshape(G, 3)
            axes = A[..., b, :, :] @ C
            for n, name in enumerate("xyz"):
                v[name + tag] = axes[..., n]
            v["P" + tag] = r[..., b, :] + matvec(A[..., b, :, :], s)
        v["d"] = v["Pj"] - v["Pi"]
        for n, name in enumerate(("ex", "ey", "ez")):
            v[name] = np.broadcast_to(np.eye(3)[n], lead + (G, 3))
        return v


def _vector_gradient(v, name, c):
    """Spatial gradients (…, 2, 6) on body_i and body_j of cᵀ δu for the named joint vector u:
    with δẐ = [δr_O ; δπ] (δr_O the displacement of the body point at the origin, δπ the virtual
    rotation), a direction a gives [0 ; a × c], a point P gives [c ; P × c]; global axes give 0."""
    g = np.zeros(c.shape[:-1] + (2, 6))
    if name == "d":
        for side, sign, P in ((0, -1.0, v["Pi"]), (1, 1.0, v["Pj"])):
            g[..., side, :3] = sign * c
            g[..., side, 3:] = sign * cross(P, c)
    elif name[1:] in ("i", "j"):
        g[..., "ij".index(name[1]), 3:] = cross(v[name], c)
    return g


class _Gradients:
    """The operations of :func:`solver.constraints.forms.scalar` giving spatial gradients: a vector
    is (name, value (…, 3)), a scalar is (value (…), gradient (…, 2, 6) on body_i and body_j);
    ``v``: the joint's named vectors (:meth:`RelativeSystem._joint_vectors`)."""

    def __init__(self, v):
        self.v = v

    def dot(self, u, w):
        (a, ua), (b, wb) = u, w
        return (np.einsum("...i,...i->...", ua, wb),
                _vector_gradient(self.v, a, wb) + _vector_gradient(self.v, b, ua))

    def half_square(self, u, c):
        a, ua = u
        return 0.5 * (np.einsum("...i,...i->...", ua, ua) - c * c), _vector_gradient(self.v, a, ua)

    @staticmethod
    def shift(s, c):
        return s[0] - c, s[1]

    @staticmethod
    def combine(a, f, b):
        return a[0] + f * b[0], a[1] + f * b[1]

    @staticmethod
    def atan2(y, x):
        gy, gx, *_ = atan2_chain(y[0], x[0])
        return np.arctan2(y[0], x[0]), gy[..., None, None] * y[1] + gx[..., None, None] * x[1]
