"""Cartesian (absolute) coordinate formulation, Lee, Lee & Bae (2013) and Kim & Yoo (1997).

Coordinates per body: q_b = [r_b, p_b], CM position and Euler parameters (7 per body) with the
normalization constraint p_bᵀp_b − 1 = 0 in Φ.  Equations of motion (Haug, ch. 11, r–p form):

    [m I, 0; 0, 4 Lᵀ J' L] q̈ + Φ_qᵀ λ = [F + m g ; 2 Lᵀ n' + 8 L̇ᵀ J' L̇ p]

with L = L(p) (ω' = 2 L ṗ), J' the body-frame inertia at the CM, F the applied force and n' the
applied torque in body axes.  Joints are the conventional basic-constraint form
(:mod:`solver.constraints.joints`); drivers are rheonomic constraints θ(q) − f(t) = 0 whose
multipliers give the actuator forces (τ = −λ, Kim & You (1997) §3 / Lee, Lee & Bae (2013)).

``form="parametric"`` (Lee, Lee & Bae (2013) §3) appends each joint's own coordinates α after the body
coordinates, q = [r_1, p_1, …, r_nb, p_nb, α_1, …], and writes every joint as 3 translational + 3
rotational equations in (q_i, q_j, α) (:mod:`solver.constraints.parametric`); a driver becomes the
trivial row α_k − f(t).  α carries no inertia and no applied force (zero rows and columns of M and
Q): it is fixed by the joint's equations, so Nᵀ M N stays positive definite.  Massless links
(distance, revolute–spherical) keep their conventional rows in both forms.  Reactions and driver
forces have the same meaning in both forms (the joint rows carry the actuator's effort to the
bodies: Φ_αᵀ λ_joint = −λ_driver).

Flexible bodies (Kim & Yoo (1997), conventional form only): each has a floating frame [r, p] in the
same 7-column blocks, numbered after the rigid bodies, and its modal coordinates a after all
blocks, q = [r_1, p_1, …, r_F, p_F, …, a_F, …]; their mass blocks, forces and energies come from
:mod:`solver.flexible.floating`, joints touching them are evaluated by
:mod:`solver.flexible.joints` (the batched evaluator keeps the rigid-only joints), and force elements
on them act on attachment frames carried by FE nodes (:mod:`solver.flexible.loads`), numbered after
the rigid bodies in the force elements' frames.
"""
from __future__ import annotations

import functools

import numpy as np

from ..constraints.batch import BatchConstraints
from ..constraints.forms import uses_angle
from ..constraints.joints import COORDINATES, CartesianJoint
from ..constraints.planar import PlanarJoint
from ..constraints.parametric import N_EQ, PARAMETRIC_FORMS, ParametricConstraints, equation_texts
from ..constraints.primitives import BodyState, NLOC
from ..errors import ModelError
from ..expressions import time_function
from ..flexible import compile as flexc
from ..flexible.floating import FloatingBody, flexible_outputs
from ..flexible.batch import FlexibleBatch
from ..flexible.joints import FlexibleJoint
from ..flexible.loads import FlexibleAttachments
from ..forces import BodyFrames, Wrenches, angle_rows, compile_forces, element_potential
from ..math.rotations import L_matrices, L_matrix, quat_from_matrix, rotation_matrices, rotation_matrix
from ..model.fields import inertia_matrix
from ..model.model import GROUND
from .armature import joint_armatures, kinetic_energy
from .planar import plane_joints, planar_model
from .rows import DriverRow, JointRows, coupler_rows
from .system import ConstraintEval, Equation, MechanicalSystem


ALPHA_VELOCITY_WEIGHT = 1e-6     # weight of the joint coordinates' α̇ in the velocity projection
POST_JACOBIAN_ENTRIES = 2_000_000   # postprocess_batch stacks at most this many Φ_q entries (16 MB)


class CartesianSystem(MechanicalSystem):
    """A model compiled to absolute coordinates (see module docstring)."""

    FORMS = ("conventional", "parametric")

    def __init__(self, model, form="conventional", plane=None):
        """form: 'conventional' (basic constraints) or 'parametric' (joint coordinates α added);
        plane: None, or "xy"/"yz"/"zx" for the planar joint forms of a planar model
        (:mod:`solver.formulations.planar`: joints in their planar forms, each body held in its
        plane by three rows of its own, kind "plane")."""
        if form not in self.FORMS:
            raise ModelError(f"settings 'settings'.constraints: must be one of {', '.join(self.FORMS)}; got {form!r}")
        model.check()
        self.plane = plane
        if plane is not None:
            model = planar_model(model, plane)
        self.form = form
        bodies = list(model.bodies.values())
        self.model_name = model.name
        self.body_names = [b.name for b in bodies]
        self.index = {n: k for k, n in enumerate(self.body_names)}
        nb = len(bodies)
        self.nb = nb
        self.nq = 7 * nb
        self.mass_values = np.array([b.mass for b in bodies])
        self.inertia = np.array([inertia_matrix(b.inertia) for b in bodies])
        self.gravity = model.gravity
        self.init = {}
        for k, b in enumerate(bodies):
            A0 = rotation_matrix(np.array(b.orientation))
            self.init[k] = (np.array(b.position, dtype=float), A0)
        self._bodies = [b.copy() for b in bodies]     # its own copies: later model edits cannot reach it
        self._setup_flexible(model)

        self.joints = []
        self.joint_names = []
        self.equations = []
        self.alpha_cols = []           # q columns of each joint's α (parametric form; else empty)
        self.alpha_names = []          # "joint.coordinate" of every α column, in order
        parametric = form == "parametric"
        for j in model.joints.values():
            bi = self.index_all[j.body_i] if j.body_i != GROUND else -1
            bj = self.index_all[j.body_j] if j.body_j != GROUND else -1
            cj = (PlanarJoint(j, self._init_of(bi), self._init_of(bj), plane) if plane is not None
                  else CartesianJoint(j, self._init_of(bi), self._init_of(bj)))
            if self._is_flexible(bi) or self._is_flexible(bj):
                self._flexible_joint(j, cj, bi, bj, len(self.equations))
            if parametric and j.type in PARAMETRIC_FORMS:
                coords = PARAMETRIC_FORMS[j.type].coordinates
                self.alpha_cols.append(list(range(self.nq, self.nq + len(coords))))
                self.alpha_names += [f"{j.name}.{c}" for c in coords]
                self.nq += len(coords)
                texts = equation_texts(j.type)
            else:
                self.alpha_cols.append([])
                texts = [f"{j.type} equation {k + 1}" for k in range(cj.n_eq)]
            rows = list(range(len(self.equations), len(self.equations) + len(texts)))
            self.joints.append(JointRows(cj, bi, bj, *self._columns(bi, bj), rows))
            self.joint_names.append(j.name)
            self.equations += [Equation(j.name, "joint", text) for text in texts]
        self.drivers = []
        self.driver_names = []
        joint_pos = {name: k for k, name in enumerate(self.joint_names)}
        for d in model.drivers.values():
            coord = model.driver_coordinate(d.name)
            k = joint_pos[d.joint]
            row = len(self.equations)
            self.drivers.append(DriverRow(k, coord, time_function(d.expression), row))
            self.driver_names.append(d.name)
            self.equations.append(Equation(d.name, "driver", f"{coord} of joint '{d.joint}' prescribed"))
        self.couplers, self.coupler_names = coupler_rows(model, joint_pos, self.equations)
        self.norm_rows = list(range(len(self.equations), len(self.equations) + self.nblocks))
        self.equations += [Equation(n, "normalization", "Euler parameter normalization")
                           for n in self.body_names + self.flex_names]
        self.plane_joints = []         # JointRows of the bodies' plane constraints (planar forms)
        for pj in (plane_joints(model, plane) if plane is not None else []):
            b = self.index[pj.body_j]
            cj = CartesianJoint(pj, self._init_of(-1), self._init_of(b))
            rows = list(range(len(self.equations), len(self.equations) + cj.n_eq))
            self.plane_joints.append(JointRows(cj, -1, b, *self._columns(-1, b), rows))
            self.equations += [Equation(pj.body_j, "plane", f"kept in the {plane} plane ({k + 1}/{cj.n_eq})")
                               for k in range(cj.n_eq)]
        self.m = len(self.equations)
        self.param = None
        if parametric:
            # conventional rows (massless links) through the batched evaluator on the body columns;
            # parametric joints and every driver (all drive a joint with α) through ParametricConstraints
            conv = [(j.joint, j.body_i, j.body_j, j.rows) for j in self.joints if j.joint.type not in PARAMETRIC_FORMS]
            self.batch = BatchConstraints(conv, [], nb, self.m) if conv else None
            pj = [(j.joint, j.body_i, j.body_j, j.rows, ac) for j, ac in zip(self.joints, self.alpha_cols)
                  if j.joint.type in PARAMETRIC_FORMS]
            assert all(len(rows) == N_EQ for _, _, _, rows, _ in pj)
            drv = [(d.row, self._alpha_column(d.joint, d.coordinate), d.function)
                   for d in self.drivers + self.couplers]
            self.param = ParametricConstraints(pj, drv, nb, self.nq)
        else:
            joints = [(j.joint, j.body_i, j.body_j, j.rows) for j in self.joints + self.plane_joints]
            if self.flex_joints:       # slots on flexible bodies move with their nodes (solver.flexible.batch)
                self.batch = FlexibleBatch(joints, self.drivers + self.couplers, self.nblocks, self.m, self.nq,
                                           self.flex_joints)
            else:
                self.batch = (BatchConstraints(joints, self.drivers + self.couplers, self.nblocks, self.m) if joints
                              else None)
        # drivers of joints on flexible bodies (solver.flexible.joints.FlexibleJoint.drive)
        self.flex_drivers = [d for d in self.drivers if d.joint in self.flex_joints]
        for name, c in zip(self.coupler_names, self.couplers):
            for k in (c.joint, c.source.joint):
                if k in self.flex_joints:
                    raise ModelError(f"coupler '{name}': joint '{self.joint_names[k]}' is on a flexible body; "
                                     "couplers relate joints between rigid bodies")
        self._driven_rows = {}
        for d in self.drivers:
            self._driven_rows.setdefault(d.joint, []).append(d.row)
        self.armatures = joint_armatures(model)        # (joint, coordinate, a): solver.formulations.armature
        for k, _, _ in self.armatures:
            if k in self.flex_joints:
                raise ModelError(f"joint '{self.joint_names[k]}'.armature: not modelled on a joint of a flexible body")

    # ---- public API -----------------------------------------------------------------------------
    def run_state(self):
        """Force elements with a state, the joints (angle unwrapping, also on flexible bodies),
        the batched evaluators' and the flexible bodies' caches of the last configuration."""
        return [*super().run_state(), *(j.joint for j in self.joints), *self.flex_joints.values(), *self.flex,
                *(e for e in (self.batch, self.param) if e is not None)]

    def initial_state(self):
        q = np.zeros(self.nq)
        qd = np.zeros(self.nq)
        for k, b in enumerate(self._bodies):
            p = np.array(b.orientation, dtype=float)
            q[7 * k:7 * k + 3] = b.position
            q[7 * k + 3:7 * k + 7] = p
            A = rotation_matrix(p)
            qd[7 * k:7 * k + 3] = b.velocity
            qd[7 * k + 3:7 * k + 7] = 0.5 * L_matrix(p).T @ (A.T @ np.asarray(b.angular_velocity))
        for fb, e in zip(self.flex, self._flex_elements):
            r0, A0 = self.init[fb.o // 7]
            p = quat_from_matrix(A0)
            q[fb.o:fb.o + 3], q[fb.o + 3:fb.o + 7] = r0, p
            qd[fb.o:fb.o + 3] = e.velocity
            qd[fb.o + 3:fb.o + 7] = 0.5 * L_matrix(p).T @ (A0.T @ np.asarray(e.angular_velocity))
        return q, qd, 0.0

    def velocity_weights(self):
        """Coordinates of bodies given a non-zero initial velocity are kept (weight 1e6).

        Joint coordinates α (parametric form) get weight 1e-6: α̇ is then free to follow the
        bodies, and the projection equals the conventional form's (with weight 1 the α̇ terms
        would pull on the user's velocities — the four-bar/slider–crank runs then differed by
        ~1e-5 relative in the initial crank speed; with 1e-6 by ~1e-11)."""
        w = np.ones(self.nq)
        w[self.n_body_cols:] = ALPHA_VELOCITY_WEIGHT
        for k, b in enumerate(self._bodies):
            if np.any(b.velocity):
                w[7 * k:7 * k + 3] = 1e6
            if np.any(b.angular_velocity):
                w[7 * k + 3:7 * k + 7] = 1e6
        return w

    def constraints(self, q, t, qd=None, level=0):
        """Φ, Φ_q (and ν, γ) of joints and drivers (batched, :mod:`solver.constraints.batch`)
        plus the Euler-parameter normalizations p_bᵀp_b − 1."""
        if qd is None:
            level = min(level, 1)
        phi = np.zeros(self.m)
        jac = np.zeros((self.m, self.nq))
        nu = np.zeros(self.m) if level >= 1 else None
        gamma = np.zeros(self.m) if level >= 2 else None
        n7 = 7 * self.nblocks
        if self.param is None:
            if self.batch is not None:
                self.batch.evaluate(q, qd, t, level, phi, jac, nu, gamma)
        else:
            if self.batch is not None:
                self.batch.evaluate(q[:n7], None if qd is None else qd[:n7], t, level, phi, jac[:, :n7],
                                    nu, gamma)
            self.param.evaluate(q, qd, t, level, phi, jac, nu, gamma)
            for c in self.couplers:              # α_j − p(α_i) (rows.CouplerSource)
                col = self._alpha_column(c.source.joint, c.source.coordinate)
                dphi, dgrad, dgamma = c.source.terms(q[col], 1.0, None if gamma is None else 0.0,
                                                     None if gamma is None else qd[col])
                phi[c.row] += dphi
                jac[c.row, col] += dgrad
                if gamma is not None:
                    gamma[c.row] += dgamma
        P = q[:n7].reshape(self.nblocks, 7)[:, 3:]
        rows = np.asarray(self.norm_rows)
        phi[rows] = np.einsum("ij,ij->i", P, P) - 1.0
        jac[rows[:, None], 7 * np.arange(self.nblocks)[:, None] + 3 + np.arange(4)] = 2.0 * P
        if gamma is not None:
            PD = qd[:n7].reshape(self.nblocks, 7)[:, 3:]
            gamma[rows] = -2.0 * np.einsum("ij,ij->i", PD, PD)
        return ConstraintEval(phi, jac, nu, gamma)

    def constraints_per_joint(self, q, t, qd=None, level=0):
        """The same as :meth:`constraints` through the per-joint evaluator (reference path;
        conventional form only)."""
        if self.param is not None or self.flex:
            raise ValueError("constraints_per_joint: the parametric form and flexible bodies have only the "
                             "batched evaluators")
        level = min(level, 1) if qd is None else level
        states = self._states(q, qd if level >= 1 else None)
        phi = np.zeros(self.m)
        jac = np.zeros((self.m, self.nq))
        nu = np.zeros(self.m) if level >= 1 else None
        gamma = np.zeros(self.m) if level >= 2 else None
        slevel = 2 if level >= 2 else (1 if qd is not None and level >= 1 else 0)
        for j in self.joints + self.plane_joints:
            for row, s in zip(j.rows, j.joint.equations(states[j.body_i], states[j.body_j], slevel)):
                phi[row] = s.val
                jac[row, j.cols] = s.grad[j.mask]
                if gamma is not None:
                    gamma[row] = -s.quad
        for d in self.drivers:
            j, row, fn = self.joints[d.joint], d.row, d.function
            s = j.joint.coordinate(d.coordinate, states[j.body_i], states[j.body_j], slevel)
            phi[row] = s.val - fn.value(t)
            jac[row, j.cols] = s.grad[j.mask]
            if nu is not None:
                nu[row] = fn.d1(t)
            if gamma is not None:
                gamma[row] = -s.quad + fn.d2(t)
        for c in self.couplers:
            j, i = self.joints[c.joint], self.joints[c.source.joint]
            sj = j.joint.coordinate(c.coordinate, states[j.body_i], states[j.body_j], slevel)
            si = i.joint.coordinate(c.source.coordinate, states[i.body_i], states[i.body_j], slevel)
            jac[c.row, j.cols] = sj.grad[j.mask]
            grad_i = np.zeros(self.nq)
            grad_i[i.cols] = si.grad[i.mask]
            rate = None if gamma is None else grad_i @ qd
            dphi, dgrad, dgamma = c.source.terms(si.val, grad_i, None if gamma is None else si.quad, rate)
            phi[c.row] = sj.val + dphi
            jac[c.row] += dgrad
            if gamma is not None:
                gamma[c.row] = -sj.quad + dgamma
        for k, row in enumerate(self.norm_rows):
            p = q[7 * k + 3:7 * k + 7]
            phi[row] = p @ p - 1.0
            jac[row, 7 * k + 3:7 * k + 7] = 2.0 * p
            if gamma is not None:
                pd = qd[7 * k + 3:7 * k + 7]
                gamma[row] = -2.0 * (pd @ pd)
        return ConstraintEval(phi, jac, nu, gamma)

    def constraint_hessian(self, q, lam, t):
        """(Φ_qᵀλ)_q, the derivative of the constraint forces w.r.t. q (for implicit integrators)."""
        if self.flex:
            raise ModelError("integrator: flexible bodies need a partitioned integrator (adams, rk, bdf, …), "
                             "not galpha")
        states = self._states(q, None)
        H = np.zeros((self.nq, self.nq))
        for j in self.joints + self.plane_joints:
            if self.param is not None and j.joint.type in PARAMETRIC_FORMS:
                continue                 # parametric rows: below
            for row, s in zip(j.rows, j.joint.equations(states[j.body_i], states[j.body_j], 0)):
                H[np.ix_(j.cols, j.cols)] += s.hess(lam[row])[np.ix_(j.mask, j.mask)]
        if self.param is not None:
            self.param.hessian(q, lam, H)        # driver rows α_k − f(t) are linear
            for c in self.couplers:              # α_j − p(α_i): −p''(α_i) λ at (α_i, α_i)
                col = self._alpha_column(c.source.joint, c.source.coordinate)
                H[col, col] -= c.source.derivatives(q[col])[2] * lam[c.row]
        else:
            for d in self.drivers + self.couplers:
                j = self.joints[d.joint]
                s = j.joint.coordinate(d.coordinate, states[j.body_i], states[j.body_j], 0)
                H[np.ix_(j.cols, j.cols)] += s.hess(lam[d.row])[np.ix_(j.mask, j.mask)]
            for c in self.couplers:              # −p(θ_i): −p' ∇²θ_i − p'' ∇θ_i ∇θ_iᵀ, times λ
                i = self.joints[c.source.joint]
                s = i.joint.coordinate(c.source.coordinate, states[i.body_i], states[i.body_j], 0)
                _, dp, ddp = c.source.derivatives(s.val)
                g = s.grad[i.mask]
                H[np.ix_(i.cols, i.cols)] -= (s.hess(dp * lam[c.row])[np.ix_(i.mask, i.mask)]
                                              + ddp * lam[c.row] * np.outer(g, g))
        for k, row in enumerate(self.norm_rows):
            H[7 * k + 3:7 * k + 7, 7 * k + 3:7 * k + 7] += 2.0 * lam[row] * np.eye(4)
        return H

    def jacobian_pattern(self):
        """:attr:`_pattern` (built at the first call: it depends on the structure only)."""
        return self._pattern

    @functools.cached_property
    def _pattern(self):
        """(rows, cols) of every entry of Φ_q that can be non-zero: a joint's rows (and its drivers')
        on the 7 columns of each of its bodies, a normalization row on its body's Euler parameters.
        The sparse factorizations of :mod:`solver.partitioning.sparse` gather Φ_q through it.  None
        for flexible bodies and joint coordinates (parametric form): their rows are laid out
        differently, and those models keep the dense algebra."""
        if self.flex or self.param is not None:
            return None
        rows, cols = [], []
        for j in self.joints + self.plane_joints:
            for row in j.rows:
                rows += [row] * len(j.cols)
                cols += list(j.cols)
        for d in self.drivers + self.couplers:
            columns = np.unique(np.concatenate([self.joints[k].cols for k in {d.joint, d.source.joint if d.source
                                                                               else d.joint}]))
            rows += [d.row] * len(columns)
            cols += list(columns)
        for k, row in enumerate(self.norm_rows):
            rows += [row] * 4
            cols += list(range(7 * k + 3, 7 * k + 7))
        return np.array(rows, dtype=int), np.array(cols, dtype=int)

    def mass_pattern(self):
        """(indptr, indices): by rows, ascending, the columns of M that can be non-zero — each body's
        translational 3 × 3 and Euler-parameter 4 × 4 blocks (:meth:`mass`), and the columns of a joint
        with armature among themselves (a gᵀg).  The compiled band algebra (codegen/banded.py) forms
        M's products over it.  None where :meth:`jacobian_pattern` is None."""
        if self.jacobian_pattern() is None:
            return None
        blocks = [range(o + a, o + b) for o in range(0, 7 * self.nb, 7) for a, b in ((0, 3), (3, 7))]
        return group_pattern(self.nq, blocks + [self.joints[k].cols for k, _, _ in self.armatures])

    def mass(self, q):
        M = np.zeros((self.nq, self.nq))
        for k in range(self.nb):
            o = 7 * k
            M[o:o + 3, o:o + 3] = self.mass_values[k] * np.eye(3)
            L = L_matrix(q[o + 3:o + 7])
            M[o + 3:o + 7, o + 3:o + 7] = 4.0 * L.T @ self.inertia[k] @ L
        for fb in self.flex:
            fb.mass(q, M)
        for cols, g, _, a in self._armature_terms(q, None):      # M += a gᵀg
            M[np.ix_(cols, cols)] += a * np.outer(g, g)
        return M

    def forces(self, q, qd, t):
        frames = self.force_frames(q, qd)
        w = self._wrenches(t, frames)
        Q = np.zeros(self.nq)
        for k in range(self.nb):
            o = 7 * k
            p, pd = q[o + 3:o + 7], qd[o + 3:o + 7]
            L, Ld = L_matrix(p), L_matrix(pd)
            Q[o:o + 3] = w.F[k] + self.mass_values[k] * self.gravity
            Q[o + 3:o + 7] = 2.0 * L.T @ (frames.A[k].T @ w.T[k]) + 8.0 * Ld.T @ self.inertia[k] @ Ld @ p
        for fb in self.flex:
            fb.forces(q, qd, self.gravity, Q)
        self.attachments.generalized(q, w.F[self.nb:], w.T[self.nb:], Q)
        for cols, g, quad, a in self._armature_terms(q, qd):     # Q −= a gᵀ(ġq̇)
            Q[cols] -= a * quad * g
        return Q

    def _armature_terms(self, q, qd):
        """(columns, g, ġq̇ (0 without qd), a) of each joint with armature (solver.formulations.armature):
        its coordinate θ's gradient on the columns of its bodies, or its α column (parametric form)."""
        if not self.armatures:
            return []
        states, out = None, []          # the body states, built on the first joint that needs them
        for k, coord, a in self.armatures:
            j = self.joints[k]
            if self.param is not None and self.alpha_cols[k]:
                out.append(([self._alpha_column(k, coord)], np.ones(1), 0.0, a))
                continue
            states = self._states(q, qd) if states is None else states
            s = j.joint.coordinate(coord, states[j.body_i], states[j.body_j], 0 if qd is None else 2)
            out.append((j.cols, s.grad[j.mask], 0.0 if qd is None else s.quad, a))
        return out

    def energy(self, q, qd, t):
        """(kinetic, gravity, spring, strain) energy of one state: :meth:`postprocess_batch`'s energy
        columns without its reactions (the hybrid partitioning's energy test asks every few steps)."""
        return self._energies(np.array([t]), q[None], qd[None], *self._body_kinematics(q[None], qd[None]))[0]

    def force_frames(self, q, qd):
        """The rigid bodies' frames followed by those of the force attachment nodes of flexible bodies."""
        return self.attachments.extend(self.frames(q, qd), q, qd)

    def frames(self, q, qd):
        """Global body states (r, A, v, ω = A 2L(p)ṗ) as :class:`solver.forces.BodyFrames`."""
        pose = q[:7 * self.nb].reshape(self.nb, 7)
        rate = qd[:7 * self.nb].reshape(self.nb, 7)
        A = rotation_matrices(pose[:, 3:])
        w = 2.0 * np.einsum("bij,bjk,bk->bi", A, L_matrices(pose[:, 3:]), rate[:, 3:])
        return BodyFrames(pose[:, :3].copy(), A, rate[:, :3].copy(), w)

    def normalize(self, q):
        q = q.copy()
        for k in range(self.nblocks):
            p = q[7 * k + 3:7 * k + 7]
            q[7 * k + 3:7 * k + 7] = p / np.linalg.norm(p)
        return q

    def postprocess(self, q, qd, qdd, lam, t):
        """Body states, joint reactions (on body_j from body_i at the joint origin, global and joint
        frame), driver forces and energies at one output point (:meth:`postprocess_batch` of one)."""
        post = {key: value[0] for key, value in
                self.postprocess_batch(np.array([t]), q[None], qd[None], qdd[None], lam[None]).items()}
        post["energy"] = tuple(post["energy"])
        return post

    def postprocess_batch(self, t, q, qd, qdd, lam, jac=None, angles=None):
        """:meth:`postprocess` of N output points at once (arrays with a leading axis N; "energy" an
        (N, 4) array: kinetic, gravity, spring, strain), vectorized over the points for rigid bodies.
        Reaction of a joint on body_j at its origin P from the body-block constraint forces
        g = −Φ_qᵀλ of that body (rows of the joint and of the drivers on it, and the part of a coupler's
        row along its coordinate: :meth:`_coupler_loads`): F = g_r, torque about the CM A·½L g_p
        (ṗ = ½Lᵀω' ↔ T' = ½ L g_p), moved to P.  ``jac``: Φ_q at the points if known; ``angles``:
        {name: (N,)} the force elements' unwrapped angles the step loop tracked at the points
        (``BodyFrames.angles``; this formulation's q holds no continuous angle)."""
        step = max(1, POST_JACOBIAN_ENTRIES // max(1, self.m * self.nq))
        if jac is None and len(t) > step:         # bound the memory of the stacked Jacobians
            parts = [self.postprocess_batch(t[i:i + step], q[i:i + step], qd[i:i + step], qdd[i:i + step],
                                            lam[i:i + step], angles=angle_rows(angles, slice(i, i + step)))
                     for i in range(0, len(t), step)]
            return {key: np.concatenate([part[key] for part in parts]) for key in parts[0]}
        n, nb = len(t), self.nb
        accels = qdd[:, :7 * nb].reshape(n, nb, 7)
        r, v, A, L2, w_body, w = self._body_kinematics(q, qd)
        alpha = np.einsum("nbij,nbj->nbi", A, np.einsum("nbij,nbj->nbi", L2, accels[..., 3:]))   # L̇ṗ = 0
        if jac is None:
            jac = np.array([self.constraints(qk, tk).jac for qk, tk in zip(q, t)]).reshape(n, self.m, self.nq)
        nj = len(self.joints)
        coupled = self._coupler_loads(q, lam)
        RF, RT, RFj, RTj = (np.zeros((n, nj, 3)) for _ in range(4))
        for k, joint in enumerate(self.joints):
            cj, bi, bj = joint.joint, joint.body_i, joint.body_j
            rows = joint.rows + self._driven_rows.get(k, [])
            if k in self.flex_joints:
                for x in range(n):
                    F, T, Fr = self._flexible_reaction(q[x], jac[x], lam[x], rows, bi, bj, self.flex_joints[k])
                    RF[x, k], RT[x, k], RFj[x, k], RTj[x, k] = F, T, Fr.T @ F, Fr.T @ T
                continue
            side, sign = (bj, 1.0) if bj >= 0 else (bi, -1.0)
            o = 7 * side
            g = -np.einsum("nri,nr->ni", jac[:, rows, o:o + 7], lam[:, rows])
            if k in coupled:
                g += coupled[k][:, o:o + 7]
            F = g[:, :3]
            T_cm = np.einsum("nij,nj->ni", A[:, side], 0.25 * np.einsum("nij,nj->ni", L2[:, side], g[:, 3:]))
            P = r[:, bj] + A[:, bj] @ cj.s_j if bj >= 0 else np.broadcast_to(cj.s_j, (n, 3))
            RF[:, k], RT[:, k] = sign * F, sign * (T_cm + np.cross(r[:, side] - P, F))
            Fr = A[:, bi] @ cj.C_i if bi >= 0 else np.broadcast_to(cj.C_i, (n, 3, 3))
            RFj[:, k] = np.einsum("nji,nj->ni", Fr, RF[:, k])
            RTj[:, k] = np.einsum("nji,nj->ni", Fr, RT[:, k])
        energy = self._energies(t, q, qd, r, v, A, L2, w_body, w, angles)
        post = {"r": np.ascontiguousarray(r), "A": A, "v": np.ascontiguousarray(v), "w": w,
                "a": np.ascontiguousarray(accels[..., :3]), "alpha": alpha,
                "reaction_force": RF, "reaction_torque": RT, "reaction_force_joint": RFj,
                "reaction_torque_joint": RTj, "driver_force": -lam[:, [d.row for d in self.drivers]],
                "energy": energy}
        if self.flex:
            per_point = [flexible_outputs(self.flex, qx) for qx in q]
            post.update({key: np.array([o[key] for o in per_point]) for key in per_point[0]})
        return post

    # ---- helpers --------------------------------------------------------------------------------
    def _coupler_loads(self, q, lam):
        """{joint index: (N, nq)}: −Φ_qᵀλ of the coupler rows split by the joint whose coordinate each
        part differentiates — joint_j's −λ ∇θ_j, joint_i's p'(θ_i) λ ∇θ_i — so that each joint's
        reaction carries the coupler's load along its own coordinate only (a body of both joints, as
        in a serial chain, gets each part through its own joint).  Empty for the parametric form,
        whose joint rows carry the loads (the coupler rows are on the α columns)."""
        out = {}
        if self.param is not None:
            return out
        for x, qx in enumerate(q):
            states = self._states(qx, None)
            for c in self.couplers:
                for k, coordinate, source in ((c.joint, c.coordinate, None), (c.source.joint, c.source.coordinate,
                                                                             c.source)):
                    jr = self.joints[k]
                    s = jr.joint.coordinate(coordinate, states[jr.body_i], states[jr.body_j], 0)
                    scale = 1.0 if source is None else -source.derivatives(s.val)[1]
                    loads = out.setdefault(k, np.zeros((len(q), self.nq)))
                    loads[x, jr.cols] -= scale * lam[x, c.row] * s.grad[jr.mask]
        return out

    def _body_kinematics(self, q, qd):
        """(r, v, A, 2L, ω', ω) of the rigid bodies at N states q, q̇ (N, nq): arrays (N, nb, …)."""
        n, nb = len(q), self.nb
        blocks = q[:, :7 * nb].reshape(n, nb, 7)
        rates = qd[:, :7 * nb].reshape(n, nb, 7)
        A = rotation_matrices(blocks[..., 3:])
        L2 = 2.0 * L_matrices(blocks[..., 3:])
        w_body = np.einsum("nbij,nbj->nbi", L2, rates[..., 3:])                 # ω' = 2 L ṗ
        return blocks[..., :3], rates[..., :3], A, L2, w_body, np.einsum("nbij,nbj->nbi", A, w_body)

    def _energies(self, t, q, qd, r, v, A, L2, w_body, w, angles=None):
        """(N, 4) energies (kinetic, gravity, spring, strain) at N states, from the rigid bodies'
        kinematics (:meth:`_body_kinematics`), the force elements' potentials (their tracked
        ``angles``, {name: (N,)}) and the flexible bodies' energies
        (:meth:`solver.flexible.floating.FloatingBody.energies`)."""
        n, nb = len(t), self.nb
        energy = np.zeros((n, 4))
        energy[:, 0] = 0.5 * (np.einsum("b,nbi,nbi->n", self.mass_values, v, v)
                              + np.einsum("nbi,bij,nbj->n", w_body, self.inertia.reshape(nb, 3, 3), w_body))
        energy[:, 1] = -np.einsum("b,i,nbi->n", self.mass_values, np.asarray(self.gravity, dtype=float), r)
        for x in range(n if self.armatures else 0):        # the rotors' ½ a θ̇², θ̇ = g q̇
            energy[x, 0] += kinetic_energy([a for _, _, a in self.armatures], np.array(
                [g @ qd[x, cols] for cols, g, _, _ in self._armature_terms(q[x], None)]))
        if self.flex:
            for x in range(n):
                frames = self.attachments.extend(BodyFrames(r[x], A[x], v[x], w[x], angle_rows(angles, x)), q[x], qd[x])
                energy[x, 2] = sum(f.potential(frames) for f in self.force_elements)
                for fb in self.flex:
                    energy[x, [0, 1, 3]] += fb.energies(q[x], qd[x], self.gravity)
        else:
            energy[:, 2] = element_potential(self.force_elements, BodyFrames(r, A, v, w, angles), np.shape(t))
        return energy

    def _setup_flexible(self, model):
        """Floating frames (blocks nb … nb+F−1, in self.init) and modal columns of the flexible
        bodies; the reduced bodies are built once the joints (Craig–Bampton interface) are known."""
        self._flex_elements = [e.copy() for e in model.flexible_bodies.values()]
        if self._flex_elements and self.form != "conventional":
            raise ModelError("settings 'settings'.constraints: flexible bodies need the conventional form")
        self.flex_names = [e.name for e in self._flex_elements]
        self.nblocks = self.nb + len(self._flex_elements)
        self.flex_index = {n: self.nb + i for i, n in enumerate(self.flex_names)}
        self.index_all = {**self.index, **self.flex_index}
        interface = {n: set() for n in self.flex_names}
        self._meshes = {}
        for e in self._flex_elements:
            self.init[self.flex_index[e.name]] = flexc.reference_frame(e)
            self._meshes[e.name] = flexc.mesh_of(e)
        # force elements first: their nodes on flexible bodies join the Craig–Bampton interface
        self.attachments = FlexibleAttachments(self.nb, self._flex_elements, self._meshes, self.init)
        self.force_elements = compile_forces(model, {**self.index, **self.attachments.index_entries()},
                                             self.attachments.init)
        for name, node in self.attachments.nodes():
            interface[name].add(node)
        for j in model.joints.values():
            for body, point in ((j.body_i, j.origin), (j.body_j, j.origin2 if j.kind.second_point else j.origin)):
                if body in interface:
                    interface[body].add(flexc.nearest_node(model.flexible_bodies[body], self._meshes[body], point))
        self.flex = []
        ao = 7 * self.nblocks
        for e in self._flex_elements:
            body = flexc.modal_body(e, self._meshes[e.name], sorted(interface[e.name]))
            self.flex.append(FloatingBody(e.name, body, 7 * self.flex_index[e.name], ao))
            ao += body.k
        self.attachments.bind(self.flex)
        self.nq = self.n_body_cols = ao
        self.flex_joints = {}
        self.flex_layout = [{"name": fb.name, "modes": fb.k, "nodes": fb.body.mesh.n_nodes} for fb in self.flex]

    def _is_flexible(self, b):
        return b >= self.nb

    def _flexible_joint(self, j, cj, bi, bj, row0):
        """Compile a joint with a side on a flexible body (:mod:`solver.flexible.joints`)."""
        sides, nodes = [], []
        for b, point in ((bi, j.origin), (bj, j.origin2 if j.kind.second_point else j.origin)):
            if b < 0:
                sides.append((None, np.zeros(0, int), None))
                nodes.append(None)
            elif self._is_flexible(b):
                fb = self.flex[b - self.nb]
                e = self._flex_elements[b - self.nb]
                sides.append((7 * b, np.arange(fb.ao, fb.ao + fb.k), fb.body))
                nodes.append(flexc.nearest_node(e, fb.body.mesh, point))
            else:
                sides.append((7 * b, np.zeros(0, int), None))
                nodes.append(None)
        rows = list(range(row0, row0 + cj.n_eq))
        self.flex_joints[len(self.joints)] = FlexibleJoint(cj, sides, nodes, rows)

    def _flexible_reaction(self, q, jac, lam, rows, bi, bj, fj):
        """The reaction of :meth:`postprocess_batch` for a joint on a flexible body: the point on body_j is the deformed
        node; the joint frame turns with body_i's node."""
        side, sign = (bj, 1.0) if bj >= 0 else (bi, -1.0)
        o = 7 * side
        g = -jac[rows, o:o + 7].T @ lam[rows]
        p = q[o + 3:o + 7]
        T_ref = rotation_matrix(p) @ (0.5 * L_matrix(p) @ g[3:7])
        T = T_ref + np.cross(q[o:o + 3] - fj.origin_j(q), g[:3])
        return sign * g[:3], sign * T, fj.frame_i(q)

    def _alpha_column(self, joint, coordinate):
        """The q column of a joint coordinate's α (parametric form)."""
        return self.alpha_cols[joint][PARAMETRIC_FORMS[self.joints[joint].joint.type].coordinates.index(coordinate)]

    def _init_of(self, b):
        return self.init[b] if b >= 0 else (np.zeros(3), np.eye(3))

    def _columns(self, bi, bj):
        """Global coordinate columns of the 14 local ones, and the mask of those that exist."""
        cols, mask = [], np.zeros(NLOC, dtype=bool)
        for side, b in enumerate((bi, bj)):
            if b >= 0:
                cols += list(range(7 * b, 7 * b + 7))
                mask[7 * side:7 * side + 7] = True
        return np.array(cols, dtype=int), mask

    def _states(self, q, qd):
        states = {k: BodyState(7 * k, q, qd) for k in range(self.nb)}
        states[-1] = BodyState(None)
        return states

    def _wrenches(self, t, frames):
        """Wrenches on the rigid bodies and the flexible attachment frames (``frames`` extended)."""
        w = Wrenches(len(frames.r))
        for f in self.force_elements:
            f.apply(t, frames, w)
        return w


def check_coupler_branches(model):
    """Raise ModelError for a coupler with a polynomial of degree > 1 of an angle: a run in the
    conventional form evaluates it on the right branch, but its post-processing (the leading joint's
    share p'(θ_i) λ of the reactions, :meth:`CartesianSystem._coupler_loads`) cannot tell the branch
    of θ_i from the recorded poses; the relative formulation (θ_i a tree coordinate) and the
    parametric form (θ_i = α) can."""
    for c in model.couplers.values():
        leading = model.coupler_coordinates(c.name)[0]
        if len(c.polynomial()) > 2 and uses_angle(COORDINATES.get(leading, ("dot",))):
            raise ModelError(f"coupler '{c.name}': a polynomial of degree > 1 of an angle needs the relative "
                             "formulation or settings.constraints = 'parametric' (the conventional Cartesian form "
                             "cannot tell the angle's branch when it post-processes the reactions)")


def compile_cartesian(model, form="conventional"):
    """Compile a model for the Cartesian formulation; raises ModelError on invalid models."""
    if not model.bodies and not model.flexible_bodies:
        raise ModelError("model.bodies: the model has no bodies")
    return CartesianSystem(model, form=form)


def group_pattern(n, groups):
    """(indptr, indices), by rows and ascending, of the n × n pattern in which every pair of columns of
    one group is an entry (a mass matrix whose entries couple only the columns of one body or joint)."""
    rows = [set() for _ in range(n)]
    for cols in groups:
        cols = [int(c) for c in cols]
        for c in cols:
            rows[c].update(cols)
    indices = [sorted(r) for r in rows]
    return np.cumsum([0] + [len(r) for r in indices]), np.array([c for r in indices for c in r], dtype=int)
