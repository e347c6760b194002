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


class FloatingBody:
    """One flexible body's terms at its coordinate columns: r, p at ``o`` … ``o+7``, a at ``ao``."""

    def __init__(self, name, body: ModalBody, o, ao):
        self.name, self.body, self.o, self.ao = name, body, o, ao
        self.k = body.k
        self.cols = np.r_[np.arange(o, o + 7), np.arange(ao, ao + body.k)]

    # ---- public API -----------------------------------------------------------------------------
    def split(self, x):
        o, ao = self.o, self.ao
        return x[o:o + 3], x[o + 3:o + 7], x[ao:ao + self.k]

    def quasi_mass(self, A, a):
        """M̂(a) in the quasi-velocities [ṙ, ω', ȧ] (module docstring), with Γ(a) and Y(a)."""
        b, k = self.body, self.k
        S = b.first_moment(a)
        Y = b.y_integrals(a)
        G = b.coupling(Y)
        Mh = np.zeros((6 + k, 6 + k))
        Mh[:3, :3] = b.mass * np.eye(3)
        Mh[:3, 3:6] = -A @ skew(S)
        Mh[3:6, :3] = Mh[:3, 3:6].T
        Mh[:3, 6:] = A @ b.S_phi
        Mh[6:, :3] = Mh[:3, 6:].T
        Mh[3:6, 3:6] = b.inertia(a)
        Mh[3:6, 6:] = G
        Mh[6:, 3:6] = G.T
        Mh[6:, 6:] = b.M_aa
        return Mh, S, Y

    def mass(self, q, M):
        """Add this body's block of M(q) (Euler-parameter rows/columns mapped by 2L)."""
        _, p, a = self.split(q)
        Mh, _, _ = self.quasi_mass(rotation_matrix(p), a)
        T = self._map(p)
        M[np.ix_(self.cols, self.cols)] += T.T @ Mh @ T

    def forces(self, q, qd, g, Q):
        """Add gravity, quadratic-velocity, elastic and damping forces (module docstring)."""
        b = self.body
        _, p, a = self.split(q)
        _, pd, ad = self.split(qd)
        A = rotation_matrix(p)
        w = 2.0 * L_matrix(p) @ pd
        S = b.first_moment(a)
        Y = b.y_integrals(a)
        J = b.inertia(a)
        gb = A.T @ g
        W = skew(w)
        Qr = b.mass * g - A @ (W @ W @ S + 2.0 * W @ (b.S_phi @ ad))
        P = Y @ ad
        Qpi = skew(S) @ gb - W @ J @ w - 2.0 * (w * np.trace(P) - P.T @ w)
        Qa = (b.S_phi.T @ gb - (np.einsum("a,abl,b->l", w, Y, w) - (w @ w) * np.einsum("aal->l", Y))
              - 2.0 * np.einsum("m,c,cml->l", ad, w, b.Z) - b.K_aa @ a - b.C_aa @ ad)
        Q[self.cols] += np.concatenate([Qr, 2.0 * L_matrix(p).T @ Qpi, Qa])

    def energies(self, q, qd, g):
        """(kinetic, gravity potential, strain) of this body."""
        r, p, a = self.split(q)
        _, pd, ad = self.split(qd)
        A = rotation_matrix(p)
        Mh, S, _ = self.quasi_mass(A, a)
        x = np.concatenate([qd[self.o:self.o + 3], 2.0 * L_matrix(p) @ pd, ad])
        return 0.5 * x @ Mh @ x, -g @ (self.body.mass * r + A @ S), self.body.strain_energy(a)

    # ---- helpers --------------------------------------------------------------------------------
    def _map(self, p):
        """[ṙ, ω', ȧ] = T [ṙ, ṗ, ȧ]."""
        k = self.k
        T = np.zeros((6 + k, 7 + k))
        T[:3, :3] = np.eye(3)
        T[3:6, 3:7] = 2.0 * L_matrix(p)
        T[6:, 7:] = np.eye(k)
        return T


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
