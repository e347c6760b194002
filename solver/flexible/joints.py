"""Joints attached to flexible bodies at finite-element nodes (Kim & Yoo (1997) §2, Shabana §5.8).

A joint side on a flexible body snaps to the node nearest the joint origin (``origin2`` for the
body_j side of distance and revolute–spherical links).  Its marker then moves with the
deformation: in the body frame the marker point is ``ū₀,node + Φ_node a`` and a marker axis c' turns
with the node's small rotation θ = Ψ_node a, c = c' + θ × c' = c' − c̃' Ψ_node a.  Every named joint
vector of :class:`solver.constraints.joints.CartesianJoint` is therefore A(p) ℓ(a) (+ r) with a
body-frame vector linear in the modal coordinates, ℓ(a) = ℓ₀ + D a, and (B linear in p and in ℓ,
Haug eq. 6.3.9)

    v = A ℓ (+ r),    ∂v/∂[r, p, a] = [I, B(p, ℓ), A D],
    v̇ = B(p, ℓ) ṗ + A D ȧ (+ ṙ),     v̈ = ∂v/∂q q̈ + B(ṗ, ℓ) ṗ + 2 B(p, D ȧ) ṗ.

A rigid side is the same with D = 0.  The scalar equations are the conventional ones
(the joint kinds' ``equations``), read by :func:`solver.constraints.forms.scalar` with the
Scalars of :mod:`solver.constraints.primitives` on local coordinates [q_i, a_i, q_j, a_j].  A driver on the joint adds the row θ(q) − f(t) = 0 with
the joint coordinate of ``joints.COORDINATES`` measured between the node frames (rotation
θ = atan2(y_iᵀx_j, x_iᵀx_j), translation z_iᵀd, …), ν = ḟ and γ = −θ_quad + f̈ (a rheonomic
constraint as for rigid bodies, :mod:`solver.formulations.cartesian`).

The runs evaluate all joints at once (:mod:`solver.flexible.batch`, built from this class's node
slots); ``evaluate`` and ``drive`` here are the per-joint reference it is tested against, and the
reactions use ``origin_j`` / ``frame_i``.
"""
from __future__ import annotations

import numpy as np

from ..constraints.forms import scalar
from ..constraints.joints import COORDINATES, CartesianJoint
from ..constraints.primitives import ScalarOps, Vec
from ..math.rotations import B_matrix, rotation_matrix, skew


def slot_kinematics(A, p, ell, D, pd=None, ad=None, named=None):
    """(A ℓ, ∂(A ℓ)/∂p = B(p, ℓ), ∂(A ℓ)/∂a = A D, rate B(p, ℓ) ṗ + A D ȧ, quad B(ṗ, ℓ) ṗ + 2 B(p, D ȧ) ṗ)
    of a slot's body-frame vector ℓ = ℓ(a) (module docstring; a point adds r, ṙ).  D None: a rigid
    slot (the modal terms None, 0).  Rates None without ṗ.  Numbers, or polynomials
    (:mod:`solver.codegen.flexible`, whose ``named`` names the intermediate D ȧ)."""
    B = B_matrix(p, ell)
    AD = None if D is None else A @ D
    if pd is None:
        return A @ ell, B, AD, None, None
    rate = B @ pd
    quad = B_matrix(pd, ell) @ pd
    if D is not None:
        Dad = (named or (lambda x: x))(D @ ad)
        rate = rate + AD @ ad
        quad = quad + 2 * B_matrix(p, Dad) @ pd
    return A @ ell, B, AD, rate, quad


class FlexibleJoint:
    """One joint with at least one side on a flexible body.

    sides: two tuples (o, acols, body) — o the r/p column offset (None for ground), acols the modal
    columns (empty for rigid sides), body the ModalBody (None for rigid) — and nodes (node or None)."""

    def __init__(self, cj: CartesianJoint, sides, nodes, rows):
        self.cj, self.sides, self.nodes, self.rows = cj, sides, nodes, rows
        self.angle = 0.0             # last joint rotation, for continuous unwrapping
        self.cols = np.concatenate([np.r_[np.arange(o, o + 7), ac] for o, ac, _ in sides if o is not None]
                                   ).astype(int)
        self.width = [0 if o is None else 7 + len(ac) for o, ac, _ in sides]
        self.slots = {}
        for name, (side, local, point) in cj.vector_slots().items():
            body, node = sides[side][2], nodes[side]
            if body is None:
                self.slots[name] = (side, np.asarray(local, float), None, point)
            elif point:
                self.slots[name] = (side, body.mesh.nodes[node].copy(), body.node_phi[node], point)
            else:
                c = np.asarray(local, float)
                self.slots[name] = (side, c, -skew(c) @ body.node_psi[node], point)

    # ---- public API -----------------------------------------------------------------------------
    def reset(self):
        """Forget the last angle (a new run starts at the model's configuration, angle 0)."""
        self.angle = 0.0

    def evaluate(self, q, qd, level, phi, jac, gamma):
        """Fill this joint's rows of phi, jac (and gamma when not None; level ≥ 2 needs qd)."""
        v = self._vectors(q, qd, level)
        for row, spec in zip(self.rows, self.cj.specs):
            s = scalar(spec, v, ScalarOps(self), self.cj.constant)
            phi[row] = s.val
            jac[row, self.cols] = s.grad
            if gamma is not None:
                gamma[row] = -s.quad

    def drive(self, coordinate, fn, row, q, qd, t, level, phi, jac, nu, gamma):
        """Fill the row of a driver θ(q) − f(t) of ``coordinate`` (module docstring); ν when
        level ≥ 1 and γ when level ≥ 2 (needs qd)."""
        s = scalar(COORDINATES[coordinate], self._vectors(q, qd, level), ScalarOps(self), self.cj.constant)
        phi[row] = s.val - fn.value(t)
        jac[row, self.cols] = s.grad
        if nu is not None:
            nu[row] = fn.d1(t)
        if gamma is not None:
            gamma[row] = -s.quad + fn.d2(t)

    def origin_j(self, q):
        """Global position of the joint point on body_j (deformed), where reactions act."""
        return self._value("Pj", q)

    def frame_i(self, q):
        """Global joint-frame axes (columns) on body_i, turned with the node."""
        return np.column_stack([self._value(name, q) for name in ("xi", "yi", "zi")])

    # ---- helpers --------------------------------------------------------------------------------
    def _local(self, name, q):
        """Body-frame vector ℓ(a) = ℓ₀ + D a of a slot (ℓ₀ on ground and rigid sides)."""
        side, l0, D, _ = self.slots[name]
        return l0 if D is None else l0 + D @ q[self.sides[side][1]]

    def _value(self, name, q):
        """Global value A ℓ(a) (+ r for points) of a slot, without derivatives."""
        side, _, _, point = self.slots[name]
        o = self.sides[side][0]
        ell = self._local(name, q)
        if o is None:
            return ell.copy()
        return rotation_matrix(q[o + 3:o + 7]) @ ell + (q[o:o + 3] if point else 0.0)

    def _vectors(self, q, qd, level):
        level = level if qd is not None else 0
        nloc = sum(self.width)
        states = []
        for (o, ac, _), start in zip(self.sides, (0, self.width[0])):
            if o is None:
                states.append(None)
                continue
            p = q[o + 3:o + 7]
            st = {"c": start, "r": q[o:o + 3], "p": p, "A": rotation_matrix(p)}
            if level >= 1:
                st.update(rd=qd[o:o + 3], pd=qd[o + 3:o + 7], ad=qd[ac])
            states.append(st)
        v = {}
        for name, (side, l0, D, point) in self.slots.items():
            st = states[side]
            J = np.zeros((3, nloc))
            if st is None:
                v[name] = Vec(l0.copy(), J, np.zeros(3) if level >= 1 else None,
                              np.zeros(3) if level >= 2 else None)
                continue
            c = st["c"]
            val, B, AD, dv, quad = slot_kinematics(st["A"], st["p"], self._local(name, q), D,
                                                    st.get("pd"), st.get("ad"))
            if point:
                J[:, c:c + 3] = np.eye(3)
                val = val + st["r"]
                dv = None if dv is None else dv + st["rd"]
            J[:, c + 3:c + 7] = B
            if D is not None:
                J[:, c + 7:c + 7 + D.shape[1]] = AD
            v[name] = Vec(val, J, dv, quad if level >= 2 else None)
        v["d"] = v["Pj"] - v["Pi"]
        for name, k in (("ex", 0), ("ey", 1), ("ez", 2)):
            v[name] = Vec(np.eye(3)[k], np.zeros((3, nloc)), np.zeros(3) if level >= 1 else None,
                          np.zeros(3) if level >= 2 else None)
        return v
