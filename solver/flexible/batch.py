"""Batched Φ, Φ_q, ν, γ of every joint and driver of a Cartesian system with flexible bodies.

The batched evaluator of :mod:`solver.constraints.batch` (equations read from the joint kinds' ``equations``)
with the slots of joints on flexible bodies moving with their node, as in
:mod:`solver.flexible.joints` (Kim & Yoo (1997) §2): the body-frame vector of a slot is linear in
the body's modal coordinates, ℓ_s(a) = ℓ₀_s + D_s a (D_s = Φ_node for a point, −c̃' Ψ_node for a
direction c'; D_s = 0 on rigid bodies).  B is linear in both arguments (Haug eq. 6.3.9), so with
Bk_s(a) = B(e_k, ℓ₀_s) + Σ_m a_m B(e_k, D_s e_m) every term of the rigid evaluator keeps its form,
and A D_s = ½ Σ_k p_k B(e_k, D_s) p adds the modal columns:

    v_s = A ℓ_s (+ r),          ∂v_s/∂[r, p, a] = [I, B(p, ℓ_s), A D_s],
    v̇_s = B(p, ℓ_s) ṗ + A D_s ȧ (+ ṙ),     quad_s = B(ṗ, ℓ_s) ṗ + 2 B(p, D_s ȧ) ṗ.

Equal to the per-joint evaluator (:class:`solver.flexible.joints.FlexibleJoint`) to round-off
(tests/solver/test_flexible_batch.py).
"""
from __future__ import annotations

import numpy as np

from ..constraints.batch import BatchConstraints, b_tensor


class FlexibleBatch(BatchConstraints):
    """All joints (rigid or on flexible bodies) and drivers of a system with flexible bodies."""

    def __init__(self, joints, drivers, nblocks, m, nq, flexible):
        """joints, drivers: as for :class:`BatchConstraints` (nblocks bodies with [r, p] columns);
        nq all coordinates (modal ones after the 7·nblocks body columns); flexible: {joint index:
        FlexibleJoint} of the joints with a side on a flexible body."""
        super().__init__(joints, drivers, nblocks, m)
        ns = len(self.slot_keys)
        k = max([len(ac) for fj in flexible.values() for _, ac, _ in fj.sides] + [0])
        D = np.zeros((ns, 3, k))
        acols = np.full((ns, k), nq)                 # nq: a zero of the extended q, q̇ (padding)
        for s, key in enumerate(self.slot_keys):
            if key is None or key[0] not in flexible:
                continue
            fj = flexible[key[0]]
            side, local, Ds, _ = fj.slots[key[1]]
            self.slot_local[s] = local
            ac = fj.sides[side][1]
            if Ds is not None:
                D[s, :, :len(ac)] = Ds
                acols[s, :len(ac)] = ac
        self.Bk = b_tensor(self.slot_local)
        BkD = b_tensor(np.moveaxis(D, 2, 1).reshape(-1, 3)).reshape(ns, k, 4, 3, 4)     # B(e_k, D_s e_m)
        self.BkD_a = BkD.reshape(ns, k, 48)                               # contracted with a: Σ_m a_m (…)
        self.BkD_p = BkD.transpose(0, 2, 1, 3, 4).reshape(ns, 4, 12 * k)  # contracted with p: Σ_k p_k (…)
        self.nq = nq
        self._index(np.concatenate([self._slot_columns(), acols], axis=1))

    def _slot_b_tensor(self, qe):
        ns = len(self.BkD_a)
        return self.Bk + (qe[self.slot_cols[:, 7:]][:, None, :] @ self.BkD_a).reshape(ns, 4, 3, 4)

    def _slot_positions(self, q):
        kin = super()._slot_positions(q)
        P = kin["P"]
        ns, k = len(P), self.BkD_a.shape[1]
        BD = (P[:, None, :] @ self.BkD_p).reshape(ns, k, 3, 4)                 # B(p, D_s e_m)
        AD = 0.5 * (BD @ P[:, None, :, None])[..., 0]                          # (A D_s e_m), (ns, k, 3)
        kin["BD"], kin["AD"] = BD, AD
        kin["J"] = np.concatenate([kin["J"], AD.transpose(0, 2, 1)], axis=2)   # [I, B_s, A D_s]
        return kin

    def _slot_rates(self, kin, qd):
        qde, PD, vd = super()._slot_rates(kin, qd)
        return qde, PD, vd + (qde[self.slot_cols[:, 7:]][:, None, :] @ kin["AD"])[:, 0, :]

    def _slot_quads(self, kin, qde, PD):
        BDpd = (kin["BD"] @ PD[:, None, :, None])[..., 0]                      # B(p, D_s e_m) ṗ (ns, k, 3)
        ad = qde[self.slot_cols[:, 7:]]
        return super()._slot_quads(kin, qde, PD) + 2.0 * (ad[:, None, :] @ BDpd)[:, 0, :]
