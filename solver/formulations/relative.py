"""Recursive relative (joint) coordinate formulation — seed paper 1 (Kim & You 1997), with the
velocity-transformation DAE of papers 4–5 for closed loops.

Coordinates q are the joint coordinates of the spanning-tree joints
(:mod:`solver.formulations.topology`, :mod:`solver.formulations.mobilizers`).  Every body b has a
state velocity (paper 1 eq. 6) ``Ŷ_b = [ṙ_b + r̃_b ω_b ; ω_b]`` — the velocity of the body point at
the global origin and ω — which does not depend on the body reference point, so the CM is used.

Forward recursion, tree joint e from parent P to child C (paper 1 eqs. 1–9):
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
"""
from __future__ import annotations

import numpy as np

from ..constraints.joints import CartesianJoint
from ..constraints.primitives import BodyState
from ..errors import ModelError
from ..expressions import time_function
from ..forces import BodyFrames, Wrenches, compile_forces
from ..math.rotations import G_matrix, cross, quat_from_matrix, rotation_matrix, skew
from ..model.fields import inertia_matrix
from ..model.model import GROUND
from .mobilizers import Mobilizer
from .system import ConstraintEval, Equation, MechanicalSystem, mechanical_energies
from .topology import build_topology

REACTION_METHODS = ("nonrecursive", "newton-euler")


class Kinematics:
    """Global body states from one forward recursion (per body index b; per tree edge e)."""

    def __init__(self, nb, ne):
        self.A = np.empty((nb, 3, 3))
        self.r = np.empty((nb, 3))          # CM, global
        self.o = np.empty((ne, 3))          # joint origin on the child, global
        self.B = [None] * ne                # 6 × n_e
        self.Y = np.zeros((nb, 6))          # state velocity Ŷ (eq. 6)
        self.Yd0 = np.zeros((nb, 6))        # velocity-product part of Ẏ̂ (Σ D along the path)
        self.D = np.zeros((ne, 6))          # D_e = Ḃ_e q̇_e (eq. 8)
        self.has_velocity = False
        self.K = None                       # K_e (eq. 16), filled on first use


class RelativeSystem(MechanicalSystem):
    """A model compiled to tree joint coordinates + cut-joint constraints (module docstring)."""

    def __init__(self, model, reactions="nonrecursive"):
        model.check()
        if not model.bodies:
            raise ModelError("model.bodies: the model has no bodies")
        if model.flexible_bodies:
            raise ModelError("settings 'settings'.formulation: flexible bodies ("
                             + ", ".join(model.flexible_bodies) + ") need formulation='cartesian'")
        if reactions not in REACTION_METHODS:
            raise ModelError(f"reactions: must be one of {', '.join(REACTION_METHODS)}; got {reactions!r}")
        self.reactions = reactions
        bodies = list(model.bodies.values())
        self._bodies = bodies
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
            self.cjoints.append(CartesianJoint(j, self._init_of(bi), self._init_of(bj)))
        self.topology = topo = build_topology(self.body_names, joints)
        self._build_tree(joints)

        self.equations = []
        self.cut = []                        # (joint index, rows)
        for k in topo.cut:
            cj = self.cjoints[k]
            rows = list(range(len(self.equations), len(self.equations) + cj.n_eq))
            self.cut.append((k, rows))
            self.equations += [Equation(cj.name, "cut joint", f"{cj.type} equation {r + 1}") for r in range(cj.n_eq)]
        self.drivers = []                    # (joint index, coord name, fn, row, tree column or None)
        self.driver_names = []
        edge_of_joint = {edge.joint: e for e, edge in enumerate(topo.edges) if edge.joint is not None}
        for d in model.drivers.values():
            coord = model.driver_coordinate(d.name)
            k = self.joint_names.index(d.joint)
            col = None
            if k in edge_of_joint:
                e = edge_of_joint[k]
                col = self.cols[e][list(joints[k].coordinates()).index(coord)]
            row = len(self.equations)
            self.drivers.append((k, coord, time_function(d.expression), row, col))
            self.driver_names.append(d.name)
            self.equations.append(Equation(d.name, "driver", f"{coord} of joint '{d.joint}' prescribed"))
        self.norm_rows = []
        for e, mob in enumerate(self.mobs):
            if mob.euler is not None:
                self.norm_rows.append((len(self.equations), self.cols[e][mob.euler]))
                name = self.body_names[topo.edges[e].child]
                self.equations.append(Equation(name, "normalization", "Euler parameter normalization"))
        self.m = len(self.equations)
        self._cut_bodies = sorted({b for k, _ in self.cut for b in self.joint_ends[k] if b >= 0})
        self._needs_kinematics = bool(self.cut) or any(col is None for *_, col in self.drivers)
        self.force_elements = compile_forces(model, self.index, self.init)
        self._cache = {}

    # ---- public API: MechanicalSystem -----------------------------------------------------------
    def initial_state(self):
        """q0 = identity of every tree joint; q̇0 = the weighted least-change fit of the model's
        initial body velocities subject to Φ_q q̇ = ν (the same problem the Cartesian formulation
        solves, so both start from the same velocities)."""
        q = np.concatenate([mob.initial() for mob in self.mobs]) if self.nq else np.zeros(0)
        kin = self.kinematics(q)
        rows, target, weights = [], [], []
        for b, body in enumerate(self._bodies):
            Jb = self.body_jacobian(kin, b)
            rows.append(Jb[:3] - skew(kin.r[b]) @ Jb[3:])          # CM velocity
            rows.append(Jb[3:])                                    # ω
            target += [np.asarray(body.velocity, float), np.asarray(body.angular_velocity, float)]
            weights += [np.full(3, 1e6 if np.any(body.velocity) else 1.0),
                        np.full(3, 0.25e6 if np.any(body.angular_velocity) else 0.25)]
        A, y, w = np.vstack(rows), np.concatenate(target), np.concatenate(weights)
        H = A.T @ (w[:, None] * A)
        g = A.T @ (w * y)
        ev = self.constraints(q, 0.0, level=1)
        m = self.m
        kkt = np.block([[H + 1e-12 * np.eye(self.nq), ev.jac.T], [ev.jac, np.zeros((m, m))]])
        sol, *_ = np.linalg.lstsq(kkt, np.concatenate([g, ev.nu]), rcond=None)
        return q, sol[:self.nq], 0.0

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
        for k, coord, fn, row, col in self.drivers:
            if col is not None:
                phi[row] = q[col] - fn.value(t)
                jac[row, col] = 1.0
                quad = 0.0
            else:
                ends, s = self._cut_coordinate(kin, k, coord, vel)
                phi[row] = s.val - fn.value(t)
                jac[row], quad = self._chain(kin, ends, s, vel)
            if nu is not None:
                nu[row] = fn.d1(t)
            if vel:
                gamma[row] = -quad + fn.d2(t)
        for row, c in self.norm_rows:
            p = q[c:c + 4]
            phi[row] = p @ p - 1.0
            jac[row, c:c + 4] = 2.0 * p
            if vel:
                pd = qd[c:c + 4]
                gamma[row] = -2.0 * (pd @ pd)
        return ConstraintEval(phi, jac, nu, gamma)

    def mass(self, q):
        """M = Bᵀ M̂ B assembled from K_e (paper 1 eqs. 15–16): for each tree edge e the block row
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
        return M

    def forces(self, q, qd, t):
        """P_e = B_eᵀ (L_e − K_e Σ_path D) (paper 1 eqs. 15, 17): applied, gravity, velocity terms."""
        kin = self.kinematics(q, qd)
        K = self._K(kin)
        L = self._L(kin, K, self._Qhat(kin, t))
        P = np.zeros(self.nq)
        for e, edge in enumerate(self.topology.edges):
            if len(self.cols[e]):
                P[self.cols[e]] = kin.B[e].T @ (L[e] - K[e] @ kin.Yd0[edge.child])
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
        """Body states, joint reactions (eqs. 30–31 or Newton–Euler), driver forces (eq. 36 on tree
        joints, −λ on cut joints) and energies — the keys of CartesianSystem.postprocess."""
        kin = self.kinematics(q, qd)
        frames = self.frames(q, qd)
        Ydd = self._accelerations(kin, qdd)
        K = self._K(kin)
        Qh = self._Qhat(kin, t)
        cut_wrench = self._cut_wrenches(kin, lam)            # on each side body, spatial, per joint
        for k, (bi, bj) in cut_wrench.items():
            for b, W in ((self.joint_ends[k][0], bi), (self.joint_ends[k][1], bj)):
                if b >= 0:
                    Qh[b] += W
        L = self._L(kin, K, Qh)
        if self.reactions == "nonrecursive":
            Rhat = self._reactions_nonrecursive(kin, K, L, Ydd, qdd)
        else:
            Rhat = self._reactions_newton_euler(kin, Qh, Ydd)
        acc = np.array([Ydd[b, :3] + cross(Ydd[b, 3:], kin.r[b]) + cross(frames.w[b], frames.v[b])
                        for b in range(self.nb)])
        alpha = Ydd[:, 3:].copy()
        nj = len(self.cjoints)
        RF, RT, RFj, RTj = (np.zeros((nj, 3)) for _ in range(4))
        states = self._states(kin)
        for e, edge in enumerate(self.topology.edges):
            if edge.joint is None:
                continue
            k = edge.joint
            sign = -1.0 if edge.inverted else 1.0             # R̂_e acts on the child
            RF[k], RT[k] = self._at_origin_j(k, sign * Rhat[e], states)
        for k, (Wi, Wj) in cut_wrench.items():
            bi, bj = self.joint_ends[k]
            RF[k], RT[k] = self._at_origin_j(k, Wj if bj >= 0 else -Wi, states)
        for k, cj in enumerate(self.cjoints):
            Fr = cj.frame(states[self.joint_ends[k][0]])
            RFj[k], RTj[k] = Fr.T @ RF[k], Fr.T @ RT[k]
        drv = np.zeros(len(self.drivers))
        edge_of_col = {c: e for e in range(len(self.cols)) for c in self.cols[e]}
        for n, (k, coord, fn, row, col) in enumerate(self.drivers):
            if col is None:
                drv[n] = -lam[row]
            else:
                e = edge_of_col[col]
                drv[n] = (kin.B[e].T @ Rhat[e])[list(self.cols[e]).index(col)]     # eq. (36)
        kinetic, potential_g, spring = mechanical_energies(frames, self.mass_values, self.inertia,
                                                           self.gravity, self.force_elements)
        return {"r": frames.r, "A": frames.A, "v": frames.v, "w": frames.w, "a": acc, "alpha": alpha,
                "reaction_force": RF, "reaction_torque": RT, "reaction_force_joint": RFj,
                "reaction_torque_joint": RTj, "driver_force": drv,
                "energy": (kinetic, potential_g, spring, 0.0)}

    # ---- public API: kinematics (also used by tests and benches) --------------------------------
    def kinematics(self, q, qd=None) -> Kinematics:
        """Forward recursion of positions, state velocities and D_e (paper 1 eqs. 1–8); cached."""
        qb = q.tobytes()
        key = (qb, None if qd is None else qd.tobytes())
        hit = self._cache.get(key)
        if hit is None and qd is None:          # a pass with velocities holds the positions too
            hit = next((k for (kq, _), k in self._cache.items() if kq == qb), None)
        if hit is not None:
            return hit
        kin = Kinematics(self.nb, len(self.mobs))
        for e, edge in enumerate(self.topology.edges):
            mob, c, C_in, s_in, C_out, s_out = (self.mobs[e], self.cols[e], self.C_in[e], self.s_in[e],
                                                self.C_out[e], self.s_out[e])
            P, ch = edge.parent, edge.child
            A_P, r_P = (kin.A[P], kin.r[P]) if P >= 0 else (np.eye(3), np.zeros(3))
            x = q[c]
            xd = None if qd is None else qd[c]
            R, d, H, Dq, aw, ad = mob.relative(x, xd)
            E = A_P @ C_in
            kin.A[ch] = E @ R @ C_out.T
            o = r_P + A_P @ s_in + E @ d
            kin.o[e] = o
            kin.r[ch] = o - kin.A[ch] @ s_out
            Hg = E @ H
            B = np.vstack([E @ Dq + skew(o) @ Hg, Hg])
            kin.B[e] = B
            if qd is None:
                continue
            YP = kin.Y[P] if P >= 0 else np.zeros(6)
            wP = YP[3:]
            kin.Y[ch] = YP + B @ xd
            Ed, Ew = E @ (Dq @ xd), E @ (H @ xd)
            v_o = YP[:3] + cross(wP, o) + Ed
            Dbot = cross(wP, Ew) + E @ aw
            Dtop = cross(wP, Ed) + E @ ad + cross(v_o, Ew) + cross(o, Dbot)
            kin.D[e] = np.concatenate([Dtop, Dbot])
            kin.Yd0[ch] = (kin.Yd0[P] if P >= 0 else 0.0) + kin.D[e]
        kin.has_velocity = qd is not None
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
        kin = self.kinematics(q, qd)
        w = kin.Y[:, 3:].copy()
        v = kin.Y[:, :3] + np.cross(w, kin.r)
        return BodyFrames(kin.r.copy(), kin.A.copy(), v, w)

    def state_mass(self, kin, b):
        """Body state mass matrix M̂_b (paper 1 eq. 11), global, about the global origin."""
        m, A, rt = self.mass_values[b], kin.A[b], skew(kin.r[b])
        out = np.zeros((6, 6))
        out[0, 0] = out[1, 1] = out[2, 2] = m
        out[3:, :3] = m * rt
        out[:3, 3:] = -m * rt
        out[3:, 3:] = A @ self.inertia[b] @ A.T - m * rt @ rt
        return out

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
        self.subtree = [[a for a in range(len(topo.edges)) if e in self.paths[a]] for e in range(len(topo.edges))]
        self.path_cols = [np.concatenate([self.cols[a] for a in path]).astype(int) for path in self.paths]

    def _init_of(self, b):
        return self.init[b] if b >= 0 else (np.zeros(3), np.eye(3))

    def _K(self, kin):
        """K_e = M̂_child + Σ_children K_c (paper 1 eq. 16); computed once per kinematics."""
        if kin.K is not None:
            return kin.K
        topo = self.topology
        K = [None] * len(topo.edges)
        for e in reversed(range(len(topo.edges))):
            K[e] = self.state_mass(kin, topo.edges[e].child)
            for c in topo.children[e]:
                K[e] = K[e] + K[c]
        kin.K = K
        return K

    def _L(self, kin, K, Qh):
        """L_e = Q̂_child + Σ_children (L_c − K_c D_c) (paper 1 eq. 17)."""
        topo = self.topology
        L = [None] * len(topo.edges)
        for e in reversed(range(len(topo.edges))):
            L[e] = Qh[topo.edges[e].child] + sum((L[c] - K[c] @ kin.D[c] for c in topo.children[e]), np.zeros(6))
        return L

    def _Qhat(self, kin, t):
        """Body state forces Q̂_b (paper 1 eq. 12) from gravity, force elements and inertia terms."""
        frames = BodyFrames(kin.r, kin.A, kin.Y[:, :3] + np.cross(kin.Y[:, 3:], kin.r), kin.Y[:, 3:])
        wr = Wrenches(self.nb)
        for f in self.force_elements:
            f.apply(t, frames, wr)
        Qh = np.empty((self.nb, 6))
        for b in range(self.nb):
            m, w, v, r = self.mass_values[b], frames.w[b], frames.v[b], kin.r[b]
            J = kin.A[b] @ self.inertia[b] @ kin.A[b].T
            f = wr.F[b] + m * self.gravity - m * cross(w, v)
            Qh[b, :3] = f
            Qh[b, 3:] = cross(r, f) + wr.T[b] - cross(w, J @ w)
        return Qh

    def _accelerations(self, kin, qdd):
        """Ẏ̂_C = Ẏ̂_P + B_e q̈_e + D_e (paper 1 eq. 8)."""
        Ydd = np.zeros((self.nb, 6))
        for e, edge in enumerate(self.topology.edges):
            P = edge.parent
            Ydd[edge.child] = (Ydd[P] if P >= 0 else 0.0) + kin.B[e] @ qdd[self.cols[e]] + kin.D[e]
        return Ydd

    def _reactions_nonrecursive(self, kin, K, L, Ydd, qdd):
        """R̂_e = −L_e + K_e Ẏ̂_child + Σ_{l ∈ subtree(e), l ≠ e} K_l B_l q̈_l (paper 1 eq. 30)."""
        topo = self.topology
        KBq = [K[l] @ (kin.B[l] @ qdd[self.cols[l]]) for l in range(len(topo.edges))]
        R = np.empty((len(topo.edges), 6))
        for e, edge in enumerate(topo.edges):
            R[e] = -L[e] + K[e] @ Ydd[edge.child] + sum((KBq[l] for l in self.subtree[e] if l != e), np.zeros(6))
        return R

    def _reactions_newton_euler(self, kin, Qh, Ydd):
        """R̂_e = M̂_child Ẏ̂_child − Q̂_child + Σ_children R̂_c, leaves first (paper 1 eq. 28)."""
        topo = self.topology
        R = np.empty((len(topo.edges), 6))
        for e in reversed(range(len(topo.edges))):
            b = topo.edges[e].child
            R[e] = self.state_mass(kin, b) @ Ydd[b] - Qh[b] + sum((R[c] for c in topo.children[e]), np.zeros(6))
        return R

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
        """Constraint wrenches of the cut joints (and drivers on them) on body_i and body_j,
        spatial form [f ; n about the origin], from −Φ_qᵀλ (Cartesian gradients)."""
        out = {}
        drivers_on = {}
        for k, coord, fn, row, col in self.drivers:
            if col is None:
                drivers_on.setdefault(k, []).append((coord, row))
        for k, rows in self.cut:
            ends, scalars = self._cut_scalars(kin, k, False)
            items = list(zip(rows, scalars))
            for coord, row in drivers_on.get(k, []):
                items.append((row, self._cut_coordinate(kin, k, coord, False)[1]))
            W = [np.zeros(6), np.zeros(6)]
            for side, b in enumerate(ends):
                if b < 0:
                    continue
                g = -sum(s.grad[7 * side:7 * side + 7] * lam[row] for row, s in items)
                W[side] = self._spatial_gradient(kin, b, g)
            out[k] = (W[0], W[1])
        return out

    def _at_origin_j(self, k, W, states):
        """Spatial wrench [f ; n_O] → (force, moment about the joint origin attached to body_j)."""
        P = self.cjoints[k].origin_j(states[self.joint_ends[k][1]])
        return W[:3], W[3:] - cross(P, W[:3])
