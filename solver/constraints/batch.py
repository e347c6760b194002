"""Batched evaluation of Φ, Φ_q, ν and γ for all joints and drivers of a Cartesian system.

Reads the same equation declarations as the per-joint evaluator (the joint kinds' ``equations``) and
computes them for the whole model with a fixed number of numpy operations, whatever the number
of joints: every equation is a scalar s = f · uᵀw of two *operands*, each the difference of two
*slots* (a body-fixed direction A a' or point r + A s', or a global axis).  With
B_s = ∂(A a'_s)/∂p = Σ_k p_k B(e_k, a'_s) (B is linear in p, Haug eq. 6.3.9):

    slot value      v_s = A a'_s (+ r)             Jacobian  [I (points only), B_s]
    slot rate       v̇_s = B_s ṗ (+ ṙ)               quad term  B(ṗ, a'_s) ṗ
    s = f uᵀw,  ∇s = f (wᵀ∇u + uᵀ∇w),  ṡ = f (u̇ᵀw + uᵀẇ),
    quad(s) = f (wᵀ quad(u) + uᵀ quad(w) + 2 u̇ᵀẇ)            (γ = −quad + f̈ for drivers)

The forms are read by :func:`solver.constraints.forms.scalar` with a backend (:class:`_Rows`) that
compiles each row into a linear combination Σ c_k s_k + Σ c θ − const of those scalars and of joint
angles θ = atan2(y_iᵀx_j, x_iᵀx_j).  Rows that are one scalar are evaluated all at once; rows with
an angle (rotation drivers, screw joints) are finished per row by the chain rule on its two
scalars (:func:`solver.constraints.forms.atan2_chain`).  The result equals the per-joint
evaluator to round-off (tested).  The slot kinematics (``_slot_*`` methods) are the hooks through
which :class:`solver.flexible.batch.FlexibleBatch` moves slots with the nodes of flexible bodies.
"""
from __future__ import annotations

import numpy as np

from ..math.rotations import B_matrix
from .forms import atan2_chain, atan2_quad, scalar
from .joints import COORDINATES

_UNIT4 = np.eye(4)
_GROUND_Q = np.array([0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0])       # r = 0, p = identity
_GROUND_QD = np.zeros(7)


class BatchConstraints:
    """Compiled index arrays for the joint and driver rows of a CartesianSystem."""

    def __init__(self, joints, drivers, nb, m):
        """joints: list of (CartesianJoint, bi, bj, rows); drivers: list of
        :class:`~solver.formulations.rows.DriverRow`; nb bodies (coordinates 7 per body); m rows in all."""
        self.nb, self.nq, self.m = nb, 7 * nb, m
        slots = []                               # (body (nb = ground), local, is_point)
        self.slot_keys = [None] * 3              # (joint index, vector name) of every joint's slot
        ops = []                                 # (slot a, slot b) — value v_a − v_b; b may be the zero slot
        scalars = {}                             # (op u, op w, factor) → index
        self.direct = []                         # (row, scalar, constant)
        self.combined = []                       # (row, joint, [(c, scalar)], [(c, y scalar, x scalar)], constant)
        self.sources = []                        # (row, joint, terms, angles, constant, CouplerSource): couplers' θ_i
        ground = nb
        for k in range(3):
            slots.append((ground, np.eye(3)[k], False))
        rows_of = _Rows(scalars)

        axes_ops = {}
        for name, k in (("ex", 0), ("ey", 1), ("ez", 2)):
            axes_ops[name] = len(ops)
            ops.append((k, -1))
        for jk, (cj, bi, bj, rows) in enumerate(joints):
            body = (ground if bi < 0 else bi, ground if bj < 0 else bj)
            named = dict(axes_ops)
            slot_of = {}
            for name, (side, local, point) in cj.vector_slots().items():
                slot_of[name] = len(slots)
                slots.append((body[side], np.asarray(local, float), point))
                self.slot_keys.append((jk, name))
            for name in ("xi", "yi", "zi", "xj", "yj", "zj"):
                named[name] = len(ops)
                ops.append((slot_of[name], -1))
            named["d"] = len(ops)
            ops.append((slot_of["Pj"], slot_of["Pi"]))
            specs = list(zip(rows, cj.specs)) + [(d.row, COORDINATES[d.coordinate]) for d in drivers if d.joint == jk]
            for row, spec in specs:
                terms, angles, const = scalar(spec, named, rows_of, cj.constant)
                if not angles and len(terms) == 1 and terms[0][0] == 1.0:
                    self.direct.append((row, terms[0][1], const))
                else:
                    self.combined.append((row, cj, terms, angles, const))
            for d in drivers:
                if d.source is not None and d.source.joint == jk:
                    self.sources.append((d.row, cj, *scalar(COORDINATES[d.source.coordinate], named, rows_of,
                                                            cj.constant), d.source))
        scalars = list(scalars)
        self.drivers = [(d.row, d.function) for d in drivers]
        zero = len(slots)                        # the zero slot (ground, a' = 0): v = 0
        slots.append((ground, np.zeros(3), False))
        self.slot_keys.append(None)
        ns = len(slots)
        self.slot_body = np.array([s[0] for s in slots], dtype=int)
        self.slot_local = np.array([s[1] for s in slots]).reshape(ns, 3)
        self.slot_point = np.array([s[2] for s in slots], dtype=float)
        # ∂(r + A a')/∂r of each slot: I for points, 0 for directions
        self.slot_eye = self.slot_point[:, None, None] * np.eye(3)
        # B(e_k, a'_s) for k = 0..3: B_s(p) = Σ_k p_k Bk[s, k]
        self.Bk = b_tensor(self.slot_local)
        self.op_a = np.array([o[0] for o in ops], dtype=int)
        self.op_b = np.array([o[1] if o[1] >= 0 else zero for o in ops], dtype=int)
        self.sc_u = np.array([s[0] for s in scalars], dtype=int)
        self.sc_w = np.array([s[1] for s in scalars], dtype=int)
        self.sc_f = np.array([s[2] for s in scalars])
        # gradient terms: (scalar, slot, sign·factor, operand whose value is the coefficient)
        terms = []
        for k, (u, w, f) in enumerate(scalars):
            for op, other in ((u, w), (w, u)):
                a, b = ops[op]
                for slot, sign in ((a, 1.0), (b, -1.0)):
                    if slot >= 0 and self.slot_body[slot] != ground:
                        terms.append((k, slot, sign * f, other))
        t = np.array(terms, dtype=float).reshape(-1, 4)
        self.t_scalar = t[:, 0].astype(int)
        self.t_slot = t[:, 1].astype(int)
        self.t_coef = t[:, 2]
        self.t_other = t[:, 3].astype(int)
        self.nsc = len(scalars)
        d = np.array(self.direct, dtype=float).reshape(-1, 3)
        self.d_row, self.d_sc, self.d_const = d[:, 0].astype(int), d[:, 1].astype(int), d[:, 2]
        self._index(self._slot_columns())
        self.reset()

    def reset(self):
        """Forget the cached terms of the last configuration."""
        self._cache_q = None
        self._cache = None

    def _slot_columns(self):
        """q columns of each slot's body block [r (3), p (4)] (ns, 7); ground slots read the constant
        block [0, 0, 0, 1, 0, 0, 0] appended at column nq (:meth:`_extended`)."""
        block = np.where(self.slot_body == self.nb, self.nq, 7 * self.slot_body)
        return block[:, None] + np.arange(7)

    def _index(self, cols):
        """Gather indices of the slots' coordinates and scatter indices of the gradient terms: term t
        adds cᵀ ∂v_s/∂q_cols at (scalar, cols of its slot) of a (nsc, nq + 1) array whose last column
        takes the zero weights of padding columns."""
        self.slot_cols = cols
        self.slot_ridx, self.slot_pidx = cols[:, :3], cols[:, 3:7]
        cols = np.where(cols < self.nq, cols, self.nq)[self.t_slot]
        self.t_index = (self.t_scalar[:, None] * (self.nq + 1) + cols).ravel()

    def _extended(self, x, ground):
        """x (q or q̇) over this evaluator's columns followed by the ground block (``ground``)."""
        return np.concatenate([x[:self.nq], ground])

    def _slot_positions(self, q):
        """Position-level slot kinematics at q: Bk (B(e_k, a'_s)), P (p of each slot's body), B (B_s),
        val (v_s) and J (∂v_s/∂ of the slot's columns)."""
        qe = self._extended(q, _GROUND_Q)
        P = qe[self.slot_pidx]                                             # (ns, 4)
        Bk = self._slot_b_tensor(qe)
        B = np.einsum("sk,skij->sij", P, Bk)                               # (ns, 3, 4)
        # A a' = ½ B(p, a') p (A a' is a homogeneous quadratic in p)
        val = 0.5 * np.einsum("sij,sj->si", B, P) + self.slot_point[:, None] * qe[self.slot_ridx]
        return {"Bk": Bk, "P": P, "B": B, "val": val, "J": np.concatenate([self.slot_eye, B], axis=2)}

    def _slot_b_tensor(self, qe):
        """B(e_k, a'_s) of every slot (constant for rigid bodies); qe from :meth:`_extended`."""
        return self.Bk

    def _slot_rates(self, kin, qd):
        """(q̇ extended by :meth:`_extended`, ṗ of each slot's body, v̇_s)."""
        qde = self._extended(qd, _GROUND_QD)
        PD = qde[self.slot_pidx]
        vd = np.einsum("sij,sj->si", kin["B"], PD) + self.slot_point[:, None] * qde[self.slot_ridx]
        return qde, PD, vd

    def _slot_quads(self, kin, qde, PD):
        """Velocity-quadratic part of v̈_s: B(ṗ, a'_s) ṗ."""
        return np.einsum("sk,skij,sj->si", PD, kin["Bk"], PD)

    def _position_terms(self, q):
        """Slot Jacobians, operand values, scalar values and gradients at q (cached: a right-hand
        side evaluates the same q for positions, velocities and accelerations)."""
        if self._cache_q is not None and np.array_equal(q, self._cache_q):
            return self._cache
        kin = self._slot_positions(q)
        val = kin["val"]
        U = val[self.op_a] - val[self.op_b]
        Wu, Ww = U[self.sc_u], U[self.sc_w]
        s_val = self.sc_f * np.einsum("ij,ij->i", Wu, Ww)
        # gradients of all scalars, assembled with one bincount
        c = self.t_coef[:, None] * U[self.t_other]                         # (nt, 3)
        w = np.einsum("ti,tij->tj", c, kin["J"][self.t_slot])
        nq1 = self.nq + 1
        grad = np.bincount(self.t_index, weights=w.ravel(), minlength=self.nsc * nq1).reshape(self.nsc, nq1)[:, :-1]
        self._cache_q = q.copy()
        self._cache = (kin, U, Wu, Ww, s_val, grad)
        return self._cache

    def evaluate(self, q, qd, t, level, phi, jac, nu, gamma):
        """Fill the joint and driver rows of phi, jac (and nu, gamma when not None).  q, q̇ and the
        columns of jac may extend past this evaluator's nq columns (those are left alone)."""
        kin, U, Wu, Ww, s_val, grad = self._position_terms(q)
        s_dot = s_quad = None
        if qd is not None and level >= 1:
            qde, PD, vd = self._slot_rates(kin, qd)
            UD = vd[self.op_a] - vd[self.op_b]
            s_dot = self.sc_f * (np.einsum("ij,ij->i", UD[self.sc_u], Ww) + np.einsum("ij,ij->i", Wu, UD[self.sc_w]))
            if level >= 2:
                vq = self._slot_quads(kin, qde, PD)
                UQ = vq[self.op_a] - vq[self.op_b]
                s_quad = self.sc_f * (np.einsum("ij,ij->i", Ww, UQ[self.sc_u]) + np.einsum("ij,ij->i", Wu, UQ[self.sc_w])
                                      + 2.0 * np.einsum("ij,ij->i", UD[self.sc_u], UD[self.sc_w]))
        phi[self.d_row] = s_val[self.d_sc] - self.d_const
        jac[self.d_row, :self.nq] = grad[self.d_sc]
        if gamma is not None:
            gamma[self.d_row] = -s_quad[self.d_sc]
        scalars = (s_val, grad, s_dot, s_quad)
        for row, cj, terms, angles, const in self.combined:
            phi[row], jac[row, :self.nq], quad = _combination(cj, terms, angles, const, *scalars)
            if gamma is not None:
                gamma[row] = -quad
        for row, cj, terms, angles, const, source in self.sources:     # −p(θ_i) of a coupler row
            value, g, quad = _combination(cj, terms, angles, const, *scalars)
            rate = None if gamma is None else g @ qd[:self.nq]
            dphi, dgrad, dgamma = source.terms(value, g, quad, rate)
            phi[row] += dphi
            jac[row, :self.nq] += dgrad
            if gamma is not None:
                gamma[row] += dgamma
        for row, fn in self.drivers:
            phi[row] -= fn.value(t)
            if nu is not None:
                nu[row] = fn.d1(t)
            if gamma is not None:
                gamma[row] += fn.d2(t)


def _combination(cj, terms, angles, const, s_val, grad, s_dot, s_quad):
    """(value, gradient, velocity-quadratic term or None) of Σ c s + Σ c θ − constant, the angles
    θ = atan2(y, x) of joint ``cj`` unwrapped and differentiated by the chain rule."""
    parts = [(c, s_val[k], grad[k], None if s_quad is None else s_quad[k]) for c, k in terms]
    for c, ys, xs in angles:
        y, x = s_val[ys], s_val[xs]
        chain = gy, gx, *_ = atan2_chain(y, x)
        quad = None if s_quad is None else atan2_quad(chain, s_dot[ys], s_dot[xs], s_quad[ys], s_quad[xs])
        parts.append((c, cj.unwrap(np.arctan2(y, x)), gy * grad[ys] + gx * grad[xs], quad))
    quad = None if s_quad is None else sum(c * quad for c, _, _, quad in parts)
    return sum(c * v for c, v, _, _ in parts) - const, sum(c * g for c, _, g, _ in parts), quad


def b_tensor(vectors):
    """B(e_k, a') for k = 0..3 of a stack of body-frame vectors a' (n, 3) → (n, 4, 3, 4): B(p, a') =
    Σ_k p_k B(e_k, a') since B is linear in p (Haug eq. 6.3.9).  B_matrix is element-wise in the
    components of a', so all vectors go through it at once (the same operations as one at a time)."""
    columns = np.asarray(vectors, dtype=float).reshape(-1, 3).T                 # (3, n): a'_x, a'_y, a'_z
    return np.moveaxis(np.array([B_matrix(_UNIT4[k], columns) for k in range(4)]), -1, 0)


class _Rows:
    """The operations of :func:`solver.constraints.forms.scalar` compiling a row: vectors are operand
    indices, a scalar is ([(c, scalar index)], [(c, y scalar, x scalar)], constant) — Σ c s + Σ c θ −
    constant; ``scalars`` maps (op u, op w, factor) to its index (each product computed once)."""

    def __init__(self, scalars):
        self.scalars = scalars

    def dot(self, u, w, f=1.0):
        return [(1.0, self.scalars.setdefault((u, w, f), len(self.scalars)))], [], 0.0

    def half_square(self, u, c):
        return self.dot(u, u, 0.5)[:2] + (0.5 * c * c,)

    @staticmethod
    def shift(s, c):
        return s[0], s[1], s[2] + c

    @staticmethod
    def combine(a, f, b):
        return (a[0] + [(f * c, k) for c, k in b[0]], a[1] + [(f * c, y, x) for c, y, x in b[1]], a[2] + f * b[2])

    @staticmethod
    def atan2(y, x):
        (_, ys), = y[0]
        (_, xs), = x[0]
        return [], [(1.0, ys, xs)], 0.0
