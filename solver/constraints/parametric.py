"""Joint constraints with parametric generalized coordinates (Lee, Lee & Bae (2013), §3, eqs. 10–38).

Each joint gets its own coordinates α (its relative translations and rotations, appended to q
after all body coordinates), and is then always **3 translational + 3 rotational equations** in
(q_i, q_j, α) (paper eq. 12):

    r_j + A_j s'_j = r_i + A_i s'_i + A_i C_i d''(α)      (eq. 10, d'' in the joint frame of body i)
    A_j C_j = A_i C_i H''(α)                                (eq. 11)

Translational part (paper eq. 17, written in the joint axes of body i):

    Φ_trn = C_iᵀ A_iᵀ (r_j + A_j s'_j − r_i − A_i s'_i) − d''(α)

  trn0  d'' = 0                  trn1  d'' = [0, 0, α_1]          trn2  d'' = [α_1, α_2, 0]
  (d'' is linear in α: d'' = T α with a constant T; a screw uses T = [0, 0, pitch/2π] on its angle.)

Rotational part.  With the relative rotation R = C_iᵀ A_iᵀ A_j C_j (R_ab = dot product of joint
axis a of body i with joint axis b of body j) and E = H''(α)ᵀ R (= I when the joint closes):

    Φ_rot = ½ vee(E − Eᵀ) = ½ [E_32 − E_23, E_13 − E_31, E_21 − E_12]

  rot0  H'' = I        rot1  H'' = R_z(α)        rot2  H'' = R_z(α_1) R_x(α_2)
  rot3  H'' = R_z(α_1) R_y(α_2) R_x(α_3)

**Deviation from the paper.**  Table 4 writes e.g. rot1 as [f_iᵀh_j, g_iᵀh_j, f_iᵀf_j − cos α]:
the third row's derivative is sin α (eq. 33) and its body part vanishes too at α = 0 — the
assembled configuration, where every joint coordinate is zero — so Φ_q loses rank exactly where
every run starts (and cos α cannot tell +α from −α).  Φ_rot above is the small-rotation vector of
the error rotation E: its Jacobian is full rank at E = I for every α, it is zero iff E = I near the
solution, and it reads the same for rot0…rot3.

Combinations (paper Table 5): revolute trn0+rot1, prismatic trn1+rot0, cylindrical trn1+rot1
(α_1 translation, α_2 rotation), screw trn1+rot1 (one α, the rotation; translation pitch/2π·α),
universal trn0+rot2, planar trn2+rot1 (x, y and the rotation θ about the normal — the paper lists
trn2+rot0, which would lock θ), spherical trn0+rot3, fixed trn0+rot0.  Massless links (distance,
revolute–spherical) have no parametric form and keep their conventional rows.  A driver on a joint
coordinate becomes the trivial row α_k − f(t) (Φ_q a single 1; paper §1).  The rot3 (spherical)
form is singular at α_2 = ±π/2 (gimbal lock of the z-y-x angles); the paper has the same.

Derivatives are exact in R⁴ for the Euler parameters (A(p) is the homogeneous quadratic form of
:mod:`solver.math.rotations`), using

    ∂(aᵀ A(p) b)/∂p = aᵀ B(p, b) = 2 K(a bᵀ) p,     ∂⟨A(p), X⟩/∂p = 2 K(X) p,     ∂²⟨A(p), X⟩/∂p² = 2 K(X)

with ⟨A, X⟩ = Σ A_mn X_mn and the symmetric 4×4 K(X) = [[tr X, vᵀ], [v, X + Xᵀ − tr X I]],
v = vee(X − Xᵀ); and A(p)ᵀA(p) = (pᵀp)² I.  For a row k of Φ_rot, Φ_k = ⟨A_iᵀA_j, G_k⟩ with
G_k = ½ C_i H'' ẽ_k C_jᵀ, so ∂Φ_k/∂p_i = 2 K(A_j G_kᵀ) p_i and ∂Φ_k/∂p_j = 2 K(A_i G_k) p_j.
Velocity terms use Ȧ = 2 A(p, ṗ) (the symmetric bilinear form) and the quadratic part of Ä, 2 A(ṗ).

Everything is evaluated for all joints at once (numpy arrays over joints; H''(α) per group of
joints with the same rotation sequence).
"""
from __future__ import annotations

import numpy as np

from ..math.rotations import skew
from ..model.joint_kinds import JOINT_KINDS

# ---- public API ---------------------------------------------------------------------------------

# the parametric form of each joint kind that has one (the entry's ``parametric``; the others keep
# their conventional rows)
PARAMETRIC_FORMS = {name: kind.parametric for name, kind in JOINT_KINDS.items() if kind.parametric is not None}
N_EQ = 6
AXIS_NAMES = "xyz"


def equation_texts(jtype):
    """Descriptions of the six rows of a parametric joint (for Equation owners)."""
    f = PARAMETRIC_FORMS[jtype]
    return ([f"{jtype} translation along joint {a} ({f.trn_kind})" for a in AXIS_NAMES]
            + [f"{jtype} rotation about joint {a} ({f.rot_kind})" for a in AXIS_NAMES])


class ParametricConstraints:
    """Compiled arrays of the parametric joints and the drivers of a CartesianSystem.

    joints: list of (CartesianJoint, bi, bj, rows, alpha_cols) — bi/bj = −1 for ground, rows the
    six equation rows, alpha_cols the q columns of the joint's α; drivers: list of
    (row, alpha column, time function); nb bodies (7 coordinates each, first in q); nq in all."""

    def __init__(self, joints, drivers, nb, nq):
        self.nb, self.nq = nb, nq
        n = self.n = len(joints)
        ground = nb
        self.bi = np.array([ground if bi < 0 else bi for _, bi, _, _, _ in joints], dtype=int)
        self.bj = np.array([ground if bj < 0 else bj for _, _, bj, _, _ in joints], dtype=int)
        self.Ci = np.array([cj.C_i for cj, *_ in joints]).reshape(n, 3, 3)
        self.Cj = np.array([cj.C_j for cj, *_ in joints]).reshape(n, 3, 3)
        self.si = np.array([cj.s_i for cj, *_ in joints]).reshape(n, 3)
        self.sj = np.array([cj.s_j for cj, *_ in joints]).reshape(n, 3)
        self.T = np.zeros((n, 3, 3))
        self.acol = np.full((n, 3), nq, dtype=int)          # column nq = a padding zero
        self.rows = np.array([rows for _, _, _, rows, _ in joints], dtype=int).reshape(n, N_EQ)
        groups = {}
        for k, (cj, bi, bj, rows, acols) in enumerate(joints):
            form = PARAMETRIC_FORMS[cj.type]
            self.acol[k, :len(acols)] = acols
            for axis, a, factor in form.trn:
                self.T[k, axis, a] = cj.pitch if factor == "pitch" else factor
            if form.rot:
                axes = tuple(ax for ax, _ in form.rot)
                groups.setdefault(axes, ([], []))
                groups[axes][0].append(k)
                groups[axes][1].append([a for _, a in form.rot])
        # rotation groups: (joint indices, axes of the factors, α index of each factor)
        self.groups = [(np.array(ks, dtype=int), axes, np.array(las, dtype=int).reshape(len(ks), len(axes)))
                       for axes, (ks, las) in groups.items()]
        self.si_dot_Ci = np.einsum("na,nab->nb", self.si, self.Ci)          # c_aᵀ s'_i
        self.CiT = np.swapaxes(self.Ci, 1, 2).copy()                          # rows c_a
        # local coordinates of a joint: [r_i, p_i, r_j, p_j, α (3, padded)] = 17 columns
        cols = np.concatenate([7 * self.bi[:, None] + np.arange(7), 7 * self.bj[:, None] + np.arange(7),
                               self.acol], axis=1)
        valid = np.concatenate([np.repeat((self.bi != ground)[:, None], 7, 1),
                                np.repeat((self.bj != ground)[:, None], 7, 1), self.acol < nq], axis=1)
        self.cols, self.valid = cols, valid
        flat = self.rows[:, :, None] * nq + cols[:, None, :]
        vmask = np.broadcast_to(valid[:, None, :], flat.shape)
        self.jac_flat, self.jac_mask = flat[vmask], vmask.ravel()
        hflat = cols[:, :, None] * nq + cols[:, None, :]
        hmask = valid[:, :, None] & valid[:, None, :]
        self.hess_flat, self.hess_mask = hflat[hmask], hmask.ravel()
        self.drv_rows = np.array([row for row, _, _ in drivers], dtype=int)
        self.drv_cols = np.array([col for _, col, _ in drivers], dtype=int)
        self.drv_fns = [fn for _, _, fn in drivers]
        self.reset()

    def reset(self):
        """Forget the cached terms of the last configuration."""
        self._cache_q = None
        self._cache = None

    # ---- evaluation -----------------------------------------------------------------------------
    def evaluate(self, q, qd, t, level, phi, jac, nu, gamma):
        """Fill the parametric joint rows and the driver rows of phi, jac (ν, γ when not None)."""
        if self.n:
            self._joints(q, qd, level, phi, jac, gamma)
        if len(self.drv_rows):
            phi[self.drv_rows] = q[self.drv_cols] - np.array([fn.value(t) for fn in self.drv_fns])
            jac[self.drv_rows, self.drv_cols] = 1.0
            if nu is not None:
                nu[self.drv_rows] = [fn.d1(t) for fn in self.drv_fns]
            if gamma is not None:
                gamma[self.drv_rows] = [fn.d2(t) for fn in self.drv_fns]

    def hessian(self, q, lam, H):
        """Add (Φ_qᵀλ)_q of the parametric joint rows to H (driver rows are linear: nothing)."""
        if not self.n:
            return
        k = self._kinematics(q)
        Ai, Aj, pi, pj, D, R, Hm, dH, Ci, Cj = (k[x] for x in ("Ai", "Aj", "pi", "pj", "D", "R", "H", "dH",
                                                                 "Ci", "Cj"))
        ddH = self._second_derivatives(k["al"])
        lam_j = lam[self.rows]                                       # (n, 6)
        mu, rho = lam_j[:, :3], lam_j[:, 3:]
        n = self.n
        L = np.zeros((n, 17, 17))
        ri_, pi_, rj_, pj_, al_ = slice(0, 3), slice(3, 7), slice(7, 10), slice(10, 14), slice(14, 17)
        # translational rows: f = ⟨A_i, D mᵀ⟩ − |p_i|⁴ mᵀs'_i − μᵀTα with m = C_i μ, D = r_j − r_i + A_j s'_j
        m = np.einsum("nab,nb->na", Ci, mu)
        Bim = B_vec(pi, m)                                           # (n, 3, 4) ∂(A_i m)/∂p_i
        pp = np.einsum("na,na->n", pi, pi)
        ms = np.einsum("na,na->n", m, self.si)
        L[:, pi_, pi_] += 2.0 * K_vec(D[:, :, None] * m[:, None, :]) - 4.0 * ms[:, None, None] * (
            pp[:, None, None] * np.eye(4) + 2.0 * pi[:, :, None] * pi[:, None, :])
        L[:, rj_, pi_] += Bim
        L[:, ri_, pi_] -= Bim
        Bjs = B_vec(pj, self.sj)
        L[:, pi_, pj_] += np.einsum("nai,naj->nij", Bim, Bjs)
        um = np.einsum("nab,nb->na", Ai, m)
        L[:, pj_, pj_] += 2.0 * K_vec(um[:, :, None] * self.sj[:, None, :])
        # rotational rows: f = ⟨A_iᵀA_j, G⟩, G = ½ C_i H ρ̃ C_jᵀ
        rt = skew(rho)
        G = 0.5 * np.einsum("nab,nbc,ncd,ned->nae", Ci, Hm, rt, Cj)
        L[:, pi_, pi_] += 2.0 * K_vec(np.einsum("nij,naj->nia", Aj, G))
        L[:, pj_, pj_] += 2.0 * K_vec(np.einsum("nia,nab->nib", Ai, G))
        for x in range(3):
            e = np.zeros(3)
            e[x] = 1.0
            L[:, pi_, pj_] += np.einsum("nai,naj->nij", B_vec(pi, np.broadcast_to(e, (n, 3))), B_vec(pj, G[:, x, :]))
        Gl = 0.5 * np.einsum("nab,nlbc,ncd,ned->nlae", Ci, dH, rt, Cj)   # ∂G/∂α_l
        L[:, pi_, al_] += np.moveaxis(grad_trace(pi[:, None, :], np.einsum("nij,nlaj->nlia", Aj, Gl)), 1, 2)
        L[:, pj_, al_] += np.moveaxis(grad_trace(pj[:, None, :], np.einsum("nia,nlab->nlib", Ai, Gl)), 1, 2)
        L[:, al_, al_] += 0.5 * np.einsum("nk,nlmk->nlm", rho,
                                          asym_vee(np.einsum("nlmab,nac->nlmbc", ddH, R)))
        # symmetric completion of the off-diagonal blocks set above
        for a, b in ((rj_, pi_), (ri_, pi_), (pi_, pj_), (pi_, al_), (pj_, al_)):
            L[:, b, a] = np.swapaxes(L[:, a, b], 1, 2)
        H += np.bincount(self.hess_flat, weights=L.reshape(-1)[self.hess_mask],
                         minlength=self.nq * self.nq).reshape(self.nq, self.nq)

    # ---- helpers --------------------------------------------------------------------------------
    def _kinematics(self, q):
        """Per-joint body quantities at q; A(p) and ½∂A/∂p come from the constant tensor AQ."""
        nb = self.nb
        Qb = q[:7 * nb].reshape(nb, 7)
        r = np.zeros((nb + 1, 3))
        r[:nb] = Qb[:, :3]
        p = np.empty((nb + 1, 4))
        p[:nb] = Qb[:, 3:]
        p[nb] = (1.0, 0.0, 0.0, 0.0)
        A = quad_form(p, p)
        Dh = (p @ _AQ_ROWS).reshape(nb + 1, 4, 9)                   # ½ ∂A/∂p_n, flattened A
        al = np.append(q, 0.0)[self.acol]
        bi, bj = self.bi, self.bj
        Ai, Aj = A[bi], A[bj]
        Ci, Cj = self.Ci, self.Cj
        Ui = Ai @ Ci                                                  # joint axes of body i, global
        D = r[bj] - r[bi] + (Aj @ self.sj[:, :, None])[:, :, 0]
        d = D - (Ai @ self.si[:, :, None])[:, :, 0]
        R = np.swapaxes(Ui, 1, 2) @ (Aj @ Cj)
        Hm, dH, _ = self._rotation(al)
        return dict(A=A, p=p, Dh=Dh, al=al, Ai=Ai, Aj=Aj, ri=r[bi], rj=r[bj], pi=p[bi], pj=p[bj], Ui=Ui,
                    D=D, d=d, R=R, H=Hm, dH=dH, Ci=Ci, Cj=Cj)

    def _joints(self, q, qd, level, phi, jac, gamma):
        if self._cache_q is not None and np.array_equal(q, self._cache_q):
            k, val, J = self._cache           # a right-hand side evaluates positions, then γ at one q
        else:
            k, val, J = self._position_terms(q)
            self._cache_q, self._cache = q.copy(), (k, val, J)
        phi[self.rows] = val
        jac.reshape(-1)[self.jac_flat] = J.reshape(-1)[self.jac_mask]
        if gamma is not None:
            self._gamma(k, qd, gamma)

    def _position_terms(self, q):
        """Kinematics, Φ rows (n, 6) and local Jacobians (n, 6, 17) at q."""
        k = self._kinematics(q)
        Ai, Aj, pi, Ui, D, d, R, Hm, dH, al, Dh = (k[x] for x in ("Ai", "Aj", "pi", "Ui", "D", "d", "R", "H",
                                                                   "dH", "al", "Dh"))
        Ci, Cj = self.Ci, self.Cj
        n = self.n
        UiT = np.swapaxes(Ui, 1, 2)                                   # rows u_a
        val = np.empty((n, N_EQ))
        val[:, :3] = (UiT @ d[:, :, None])[:, :, 0] - (self.T @ al[:, :, None])[:, :, 0]
        val[:, 3:] = 0.5 * asym_vee(np.swapaxes(Hm, 1, 2) @ R)
        J = np.zeros((n, N_EQ, 17))
        J[:, :3, 0:3] = -UiT
        J[:, :3, 7:10] = UiT
        # ∂⟨A(p), X⟩/∂p = 2 X:(½∂A/∂p) for the six rows at once: X_i on body i, X_j on body j
        G = (Ci @ Hm)[:, None] @ _SKEW_E @ np.swapaxes(Cj, 1, 2)[:, None]     # 2 G_k = C_i H ẽ_k C_jᵀ
        Xi = np.empty((n, N_EQ, 3, 3))
        Xj = np.empty((n, N_EQ, 3, 3))
        Xi[:, :3] = D[:, None, :, None] * self.CiT[:, :, None, :]               # D c_aᵀ
        Xi[:, 3:] = 0.5 * Aj[:, None] @ np.swapaxes(G, 2, 3)                     # A_j G_kᵀ
        Xj[:, :3] = UiT[:, :, :, None] * self.sj[:, None, None, :]              # u_a s'_jᵀ
        Xj[:, 3:] = 0.5 * Ai[:, None] @ G                                        # A_i G_k
        J[:, :, 3:7] = 2.0 * Xi.reshape(n, N_EQ, 9) @ np.swapaxes(Dh[self.bi], 1, 2)
        J[:, :, 10:14] = 2.0 * Xj.reshape(n, N_EQ, 9) @ np.swapaxes(Dh[self.bj], 1, 2)
        pp = (pi * pi).sum(1)
        J[:, :3, 3:7] -= (4.0 * pp[:, None] * self.si_dot_Ci)[:, :, None] * pi[:, None, :]   # −|p_i|⁴ c_aᵀs'_i
        J[:, :3, 14:17] = -self.T
        J[:, 3:, 14:17] = 0.5 * np.swapaxes(asym_vee(np.swapaxes(dH, 2, 3) @ R[:, None]), 1, 2)
        return k, val, J

    def _gamma(self, k, qd, gamma):
        """γ = −(velocity-quadratic part of Φ̈) of the joint rows."""
        Ai, Aj, Ui, d, R, Hm, dH, al, Dh = (k[x] for x in ("Ai", "Aj", "Ui", "d", "R", "H", "dH", "al", "Dh"))
        Cj = self.Cj
        n = self.n
        # velocity-quadratic parts: Ȧ = 2 ṗ·(½∂A/∂p), quad(Ä) = 2 A(ṗ)
        nb = self.nb
        QD = qd[:7 * nb].reshape(nb, 7)
        rd = np.zeros((nb + 1, 3))
        rd[:nb] = QD[:, :3]
        pd = np.zeros((nb + 1, 4))
        pd[:nb] = QD[:, 3:]
        Ad = 2.0 * (pd[:, None, :] @ Dh)[:, 0].reshape(nb + 1, 3, 3)
        Aq = 2.0 * quad_form(pd, pd)
        ald = np.append(qd, 0.0)[self.acol]
        Hq = self._rotation(al, ald)[2]
        Vi, Vj, Qi, Qj = Ad[self.bi], Ad[self.bj], Aq[self.bi], Aq[self.bj]
        dd = (rd[self.bj] - rd[self.bi] + (Vj @ self.sj[:, :, None])[:, :, 0]
              - (Vi @ self.si[:, :, None])[:, :, 0])
        dq = (Qj @ self.sj[:, :, None])[:, :, 0] - (Qi @ self.si[:, :, None])[:, :, 0]
        ViT, AiT, QiT = np.swapaxes(Vi, 1, 2), np.swapaxes(Ai, 1, 2), np.swapaxes(Qi, 1, 2)
        quad = np.empty((n, N_EQ))
        quad[:, :3] = (self.CiT @ (QiT @ d[:, :, None] + AiT @ dq[:, :, None] + 2.0 * ViT @ dd[:, :, None]))[:, :, 0]
        Rd = self.CiT @ (ViT @ Aj + AiT @ Vj) @ Cj
        Rq = self.CiT @ (QiT @ Aj + AiT @ Qj + 2.0 * ViT @ Vj) @ Cj
        Hd = np.einsum("nlab,nl->nab", dH, ald)
        quad[:, 3:] = 0.5 * asym_vee(np.swapaxes(Hm, 1, 2) @ Rq + 2.0 * np.swapaxes(Hd, 1, 2) @ Rd
                                     + np.swapaxes(Hq, 1, 2) @ R)
        gamma[self.rows] = -quad

    def _factors(self, al, g, second=False):
        """Factors R_f(β_f), dR_f/dβ and (second=True) d²R_f/dβ² of the rotation group g, with
        R = I + sin β K + (1 − cos β) K², K = ẽ_axis (Rodrigues)."""
        idx, axes, la = self.groups[g]
        beta = al[idx[:, None], la]                                  # (ng, ns)
        s, c = np.sin(beta)[:, :, None, None], np.cos(beta)[:, :, None, None]
        out = []
        for f, ax in enumerate(axes):
            K1, K2 = _SKEW_E[ax], _SKEW_SQ[ax]
            sf, cf = s[:, f], c[:, f]
            out.append((_I3 + sf * K1 + (1 - cf) * K2, cf * K1 + sf * K2,
                        (cf * K2 - sf * K1) if second else None))
        return idx, la, out

    def _rotation(self, al, ald=None):
        """H''(α) (n, 3, 3), ∂H''/∂α_l (n, 3, 3, 3) (zero for absent α) and, with α̇, the
        velocity-quadratic part of Ḧ'', Σ_lm ∂²H''/∂α_l∂α_m α̇_l α̇_m (else None)."""
        n = self.n
        Hm = np.empty((n, 3, 3))
        Hm[:] = _I3
        dH = np.zeros((n, 3, 3, 3))
        Hq = np.zeros((n, 3, 3)) if ald is not None else None
        for g in range(len(self.groups)):
            idx, la, F = self._factors(al, g, second=ald is not None)
            ns = len(F)
            if ns == 1:
                Hm[idx] = F[0][0]
                dH[idx, la[:, 0]] = F[0][1]
            else:
                Hm[idx] = _chain([f[0] for f in F])
                for s in range(ns):
                    dH[idx, la[:, s]] = _chain([f[1] if t == s else f[0] for t, f in enumerate(F)])
            if ald is not None:
                bd = ald[idx[:, None], la]
                acc = 0.0
                for s in range(ns):
                    for t in range(ns):
                        mats = [f[2] if (u == s == t) else f[1] if u in (s, t) else f[0] for u, f in enumerate(F)]
                        acc = acc + _chain(mats) * (bd[:, s] * bd[:, t])[:, None, None]
                Hq[idx] = acc
        return Hm, dH, Hq

    def _second_derivatives(self, al):
        """∂²H''/∂α_l∂α_m (n, 3, 3, 3, 3)."""
        ddH = np.zeros((self.n, 3, 3, 3, 3))
        for g in range(len(self.groups)):
            idx, la, F = self._factors(al, g, second=True)
            ns = len(F)
            for s in range(ns):
                for t in range(ns):
                    mats = [f[2] if (u == s == t) else f[1] if u in (s, t) else f[0] for u, f in enumerate(F)]
                    ddH[idx, la[:, s], la[:, t]] = _chain(mats)
        return ddH


# ---- vectorized Euler-parameter helpers (arrays of joints) --------------------------------------
_SKEW_E = np.array([[[0, 0, 0], [0, 0, -1], [0, 1, 0]],
                    [[0, 0, 1], [0, 0, 0], [-1, 0, 0]],
                    [[0, -1, 0], [1, 0, 0], [0, 0, 0]]], dtype=float)     # ẽ_x, ẽ_y, ẽ_z
_SKEW_SQ = _SKEW_E @ _SKEW_E
_I3 = np.eye(3)


def _quadratic_basis():
    """AQ[m, n] (4, 4, 3, 3), symmetric in (m, n), with A(p) = Σ_mn p_m p_n AQ[m, n]."""
    I4 = np.eye(4)
    AQ = np.empty((4, 4, 3, 3))
    for m in range(4):
        for k in range(4):
            AQ[m, k] = 0.5 * (rotation_vec(I4[m] + I4[k]) - rotation_vec(I4[m]) - rotation_vec(I4[k])) if m != k \
                else rotation_vec(I4[m])
    return AQ


def quad_form(p, w):
    """A(p, w) = Σ_mn p_m w_n AQ[m, n] for p, w (N, 4) → (N, 3, 3); A(p, p) = A(p)."""
    return ((p[:, :, None] * w[:, None, :]).reshape(-1, 16) @ _AQ16).reshape(-1, 3, 3)


def _chain(mats):
    out = mats[0]
    for m in mats[1:]:
        out = out @ m
    return out


def rotation_vec(p):
    """A(p) for p (..., 4), the homogeneous quadratic form (see solver.math.rotations)."""
    e0, e1, e2, e3 = np.moveaxis(p, -1, 0)
    A = np.stack([e0*e0 + e1*e1 - e2*e2 - e3*e3, 2*(e1*e2 - e0*e3), 2*(e1*e3 + e0*e2),
                  2*(e1*e2 + e0*e3), e0*e0 - e1*e1 + e2*e2 - e3*e3, 2*(e2*e3 - e0*e1),
                  2*(e1*e3 - e0*e2), 2*(e2*e3 + e0*e1), e0*e0 - e1*e1 - e2*e2 + e3*e3], axis=-1)
    return A.reshape(p.shape[:-1] + (3, 3))


def B_vec(p, a):
    """B(p, a') = ∂(A(p) a')/∂p for p (..., 4), a (..., 3) → (..., 3, 4) (Haug eq. 6.3.9)."""
    e0, e1, e2, e3 = np.moveaxis(p, -1, 0)
    a1, a2, a3 = np.moveaxis(a, -1, 0)
    s = e1 * a1 + e2 * a2 + e3 * a3
    B = np.stack([e0 * a1 - e3 * a2 + e2 * a3, s, e1 * a2 - e2 * a1 + e0 * a3, e1 * a3 - e3 * a1 - e0 * a2,
                  e3 * a1 + e0 * a2 - e1 * a3, e2 * a1 - e1 * a2 - e0 * a3, s, e2 * a3 - e3 * a2 + e0 * a1,
                  -e2 * a1 + e1 * a2 + e0 * a3, e3 * a1 - e1 * a3 + e0 * a2, e3 * a2 - e2 * a3 - e0 * a1, s],
                 axis=-1)
    return 2.0 * B.reshape(B.shape[:-1] + (3, 4))


def asym_vee(X):
    """vee(X − Xᵀ) = [X_32 − X_23, X_13 − X_31, X_21 − X_12] for X (..., 3, 3)."""
    return np.stack([X[..., 2, 1] - X[..., 1, 2], X[..., 0, 2] - X[..., 2, 0], X[..., 1, 0] - X[..., 0, 1]], axis=-1)


def K_vec(X):
    """K(X) with ⟨A(p), X⟩ = pᵀ K(X) p: [[tr X, vᵀ], [v, X + Xᵀ − tr X I]], v = vee(X − Xᵀ)."""
    tr = np.trace(X, axis1=-2, axis2=-1)
    v = asym_vee(X)
    K = np.empty(X.shape[:-2] + (4, 4))
    K[..., 0, 0] = tr
    K[..., 0, 1:] = v
    K[..., 1:, 0] = v
    K[..., 1:, 1:] = X + np.swapaxes(X, -1, -2) - tr[..., None, None] * np.eye(3)
    return K


def grad_trace(p, X):
    """∂⟨A(p), X⟩/∂p = 2 K(X) p for p (..., 4), X (..., 3, 3) → (..., 4)."""
    tr = np.trace(X, axis1=-2, axis2=-1)
    v = asym_vee(X)
    e0, e = p[..., 0], p[..., 1:]
    out = np.empty(np.broadcast_shapes(p.shape, X.shape[:-2] + (4,)))
    out[..., 0] = 2.0 * (tr * e0 + np.einsum("...a,...a->...", v, e))
    out[..., 1:] = 2.0 * (v * e0[..., None] + np.einsum("...ab,...b->...a", X + np.swapaxes(X, -1, -2), e)
                          - tr[..., None] * e)
    return out


def grad_outer(p, a, b):
    """∂(aᵀ A(p) b)/∂p = aᵀ B(p, b) = 2 K(a bᵀ) p for p (..., 4), a, b (..., 3) → (..., 4)."""
    tr = np.einsum("...a,...a->...", a, b)
    v = np.cross(b, a)
    e0, e = p[..., 0], p[..., 1:]
    be = np.einsum("...a,...a->...", b, e)
    ae = np.einsum("...a,...a->...", a, e)
    shape = np.broadcast_shapes(p.shape[:-1], a.shape[:-1], b.shape[:-1]) + (4,)
    out = np.empty(shape)
    out[..., 0] = 2.0 * (tr * e0 + np.einsum("...a,...a->...", v, e))
    out[..., 1:] = 2.0 * (v * e0[..., None] + a * be[..., None] + b * ae[..., None] - tr[..., None] * e)
    return out


_AQ = _quadratic_basis()
_AQ16 = _AQ.reshape(16, 9)
_AQ_ROWS = _AQ.reshape(4, 36)          # p @ _AQ_ROWS = ½ ∂A/∂p_n (row n, A flattened)
