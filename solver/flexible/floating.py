"""Equations of motion of one flexible body in the floating frame of reference (Shabana,
*Dynamics of Multibody Systems*, 3rd ed., §5.5; Kim & Yoo (1997) eq. 5 with q = [r, p, a]).

A material point is at R = r + A(p) ū, ū = ū₀ + Φ a, so with ω' the body-frame angular velocity

    Ṙ = ṙ − A ũ ω' + A Φ ȧ,     R̈ = r̈ + A(α̃' ū + ω̃'ω̃' ū + 2 ω̃' Φ ȧ + Φ ä).

d'Alembert's principle ∫ρ δRᵀ(R̈ − g) dV = δaᵀ(−K a − C ȧ) + (joint forces) with
δR = δr − A ũ δπ' + A Φ δa gives, in the quasi-velocities [ṙ, ω', ȧ] (Shabana eq. 5.161),

    M̂(a) = [[m I, −A S̃, A S_Φ], [S̃ Aᵀ, J, Γ], [S_Φᵀ Aᵀ, Γᵀ, M_aa]]
    Q_r = m g − A (ω̃'ω̃' S + 2 ω̃' S_Φ ȧ)
    Q_π = S̃ Aᵀ g − ω̃' J ω' − 2 (ω' tr P − Pᵀ ω'),                P_ab = Σ_l Y_ab,l ȧ_l
    Q_a,l = φ̄_lᵀ Aᵀ g − (ω'ᵀ Y_l ω' − |ω'|² tr Y_l) − 2 Σ_m ȧ_m ω'ᵀ Z_:,ml − (K_aa a + C_aa ȧ)_l

(invariants S, J, Γ, Y, Z of :mod:`solver.flexible.modal`; u × (ω × φ) = ω (u·φ) − φ (u·ω) and
∫ρ ũ ω̃ ω̃ ū = ω̃ J ω give the P and J terms).  With ω' = 2 L(p) ṗ and α' = 2 L p̈ (L(ṗ)ṗ = 0,
Haug eq. 6.3.x) the Euler-parameter rows are 2Lᵀ times the π rows and the columns 2L times the
ω' columns, as for the rigid bodies of :mod:`solver.formulations.cartesian`.
Energies: T = ½ ẋᵀ M̂ ẋ, V_g = −gᵀ(m r + A S(a)), U = ½ aᵀ K_aa a.
"""
from __future__ import annotations

import numpy as np

from ..math.rotations import L_matrix, rotation_matrix, skew
from .modal import ModalBody


def configuration_terms(body, a, named=None):
    """(S(a), Y(a), J(a), Γ(a)) of a body (:class:`solver.flexible.modal.ShapeIntegrals`, numbers or
    symbolic: :class:`solver.codegen.poly.Poly`).  ``named``: applied to each array as it is computed (the code generator names
    the entries, so that the expressions built on them stay small)."""
    named = named or (lambda x: x)
    S = named(body.first_moment(a))
    Y = named(body.y_integrals(a))
    return S, Y, named(body.inertia(a)), named(body.coupling(Y))


def mass_block(body, A, L, S, J, G):
    """The body's block of M(q) in its columns [r, p, a]: M = Tᵀ M̂ T with T = diag(I, 2L, I) the map
    [ṙ, ṗ, ȧ] → [ṙ, ω', ȧ] (module docstring), written by blocks:

        [[m I, −2 A S̃ L, A S_Φ], [·, 4 Lᵀ J L, 2 Lᵀ Γ], [·, ·, M_aa]]   (symmetric)

    with S, J, Γ of :func:`configuration_terms`; A = A(p), L = L(p).  Numbers or symbolic."""
    Mrp = -2 * A @ skew(S) @ L
    Mra = A @ body.S_phi
    Mpa = 2 * L.T @ G
    return np.block([[body.mass * np.eye(3, dtype=int), Mrp, Mra], [Mrp.T, 4 * L.T @ J @ L, Mpa],
                     [Mra.T, Mpa.T, body.M_aa]])


def generalized_forces(body, A, L, S, Y, J, a, pd, ad, g, named=None):
    """Q of the body's columns [r, p, a]: gravity, quadratic-velocity, elastic and damping forces
    (module docstring; Euler-parameter rows 2Lᵀ Q_π), ω' = 2 L ṗ, with S, Y, J of
    :func:`configuration_terms`.  Numbers or symbolic, as :func:`mass_block` (``named``: as for
    :func:`configuration_terms`, applied to ω' and Q_π)."""
    named = named or (lambda x: x)
    w = named(2 * L @ pd)
    gb = A.T @ g
    W = skew(w)
    Qr = body.mass * g - A @ (W @ W @ S + 2 * W @ (body.S_phi @ ad))
    P = Y @ ad
    Qpi = named(skew(S) @ gb - W @ J @ w - 2 * (w * np.trace(P) - P.T @ w))
    Qa = (body.S_phi.T @ gb - (np.einsum("a,abl,b->l", w, Y, w) - (w @ w) * np.einsum("aal->l", Y))
          - 2 * np.einsum("m,c,cml->l", ad, w, body.Z) - body.K_aa @ a - body.C_aa @ ad)
    return np.concatenate([Qr, 2 * L.T @ Qpi, Qa])


class FloatingBody:
    """One flexible body's terms at its coordinate columns: r, p at ``o`` … ``o+7``, a at ``ao``."""

    def __init__(self, name, body: ModalBody, o, ao):
        self.name, self.body, self.o, self.ao = name, body, o, ao
        self.k = body.k
        self.cols = np.r_[np.arange(o, o + 7), np.arange(ao, ao + body.k)]
        self._block = np.ix_(self.cols, self.cols)
        self.reset()

    # ---- public API -----------------------------------------------------------------------------
    def reset(self):
        """Forget the cached configuration terms (:meth:`_terms`)."""
        self._at = None            # [p, a] of the cached configuration terms

    def split(self, x):
        o, ao = self.o, self.ao
        return x[o:o + 3], x[o + 3:o + 7], x[ao:ao + self.k]

    def mass(self, q, M):
        """Add this body's block of M(q) (:func:`mass_block`)."""
        M[self._block] += self._terms(q)["M"]

    def forces(self, q, qd, g, Q):
        """Add gravity, quadratic-velocity, elastic and damping forces (:func:`generalized_forces`)."""
        _, _, a = self.split(q)
        _, pd, ad = self.split(qd)
        c = self._terms(q)
        Q[self.cols] += generalized_forces(self.body, c["A"], c["L"], c["S"], c["Y"], c["J"], a, pd, ad,
                                           np.asarray(g, dtype=float))

    def energies(self, q, qd, g):
        """(kinetic, gravity potential, strain) of this body: T = ½ q̇ᵀ M q̇ over its columns."""
        r, _, a = self.split(q)
        c = self._terms(q)
        x = qd[self.cols]
        return 0.5 * x @ c["M"] @ x, -g @ (self.body.mass * r + c["A"] @ c["S"]), self.body.strain_energy(a)

    # ---- helpers --------------------------------------------------------------------------------
    def _terms(self, q):
        """A(p), L(p), S, Y, J (:func:`configuration_terms`) and the mass block M at q; cached for the last [p, a] (a
        right-hand side asks for the mass matrix and the forces at the same configuration)."""
        key = np.concatenate([q[self.o + 3:self.o + 7], q[self.ao:self.ao + self.k]])
        if self._at is not None and np.array_equal(key, self._at):
            return self._cached
        p, a = key[:4], key[4:]
        A, L = rotation_matrix(p), L_matrix(p)
        S, Y, J, G = configuration_terms(self.body, a)
        M = mass_block(self.body, A, L, S, J, G)
        self._at = key
        self._cached = {"A": A, "L": L, "S": S, "Y": Y, "J": J, "M": M}
        return self._cached


def flexible_outputs(bodies, q):
    """Per-output values of the flexible bodies: floating frames (flex_r, flex_A), modal
    coordinates (flex_a, all bodies concatenated), nodal elastic displacements in the body frame
    (flex_disp, all nodes concatenated) and nodal stresses (flex_stress: axial, bending_y,
    bending_z, torsion)."""
    r, A, a, disp, stress = [], [], [], [], []
    for fb in bodies:
        rb, p, ab = fb.split(q)
        r.append(rb)
        A.append(rotation_matrix(p))
        a.append(ab)
        disp.append(np.einsum("nik,k->ni", fb.body.node_phi, ab))
        stress.append(np.einsum("nik,k->ni", fb.body.stress_shapes, ab))
    return {"flex_r": np.array(r), "flex_A": np.array(A), "flex_a": np.concatenate(a),
            "flex_disp": np.concatenate(disp), "flex_stress": np.concatenate(stress)}
