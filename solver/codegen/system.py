"""A Cartesian system whose Φ, Φ_q, ν, γ, M and Q come from the model's generated kernels.

Everything else — assembly, partitioning, reactions, post-processing, the exact Hessian
(Φ_qᵀλ)_q — is inherited from :class:`solver.formulations.cartesian.CartesianSystem`, so the two
paths differ only in how the equations are evaluated (tests: ≤ 1e-10 relative on the kernels).
"""
from __future__ import annotations

import numpy as np

from ..formulations.cartesian import CartesianSystem
from ..formulations.system import ConstraintEval
from .build import load_kernels
from ..forces import Wrenches
from ..math.rotations import L_matrices
from .derive import describe, input_functions, interpreted_forces, parameters
from .reduced import CompiledReduction


class CodegenCartesianSystem(CartesianSystem):
    """CartesianSystem (conventional form) with compiled kernels; raises
    :class:`solver.codegen.derive.CodegenUnavailable` when they cannot be had."""

    def __init__(self, model):
        super().__init__(model, form="conventional")
        desc = describe(self)
        self.kernels = load_kernels(desc)
        self.codegen_info = self.kernels.info
        self._inputs = input_functions(self)
        self.interpreted = interpreted_forces(self)
        self._driver_rows = np.array([row for *_, row in self.drivers], dtype=int)
        self._driver_fns = [fn for _, _, fn, _ in self.drivers]
        self._angle_rows = [(row, self.joints[jk][0], 1.0 if kind == "driver" else -self.joints[jk][0].pitch)
                            for row, jk, kind in desc["angles"]]
        self.kernels["par"][:] = parameters(self, desc)
        self._drive_t = None           # time of the cached driver values f, ḟ, f̈
        self._drive = [None, None, None]

    # ---- public API -------------------------------------------------------------------------------
    def constraints(self, q, t, qd=None, level=0):
        """Φ, Φ_q (ν, γ) from the kernels; joint angles unwrapped as in the generic path
        (Φ_row += coefficient · (θ_unwrapped − θ_raw), coefficient 1 for drivers, −pitch for screws)."""
        if qd is None:
            level = min(level, 1)
        k = self.kernels
        k["q"][:] = q
        if self._driver_fns:
            k["f"][:] = self._driver_values(t, 0)
        k.call("position")
        phi = k["phi"][:self.m].copy()
        for n, (row, cj, coef) in enumerate(self._angle_rows):
            raw = float(k["ang"][n])
            phi[row] += coef * (cj.unwrap(raw) - raw)
        nu = gamma = None
        if level >= 1:
            nu = np.zeros(self.m)
            if self._driver_fns:
                nu[self._driver_rows] = self._driver_values(t, 1)
        if level >= 2:
            k["qd"][:] = qd
            if self._driver_fns:
                k["f"][:] = self._driver_values(t, 2)
            k.call("gamma")
            gamma = k["gamma"][:self.m].copy()
        return ConstraintEval(phi, k.jac.copy(), nu, gamma)

    def compiled_reduction(self, part):
        """Positions, velocities and accelerations of ``part`` in one C call (reduced.c)."""
        return CompiledReduction(self, part)

    def mass(self, q):
        k = self.kernels
        k["q"][:] = q
        k.call("mass")
        return k.M.copy()

    def forces(self, q, qd, t):
        k = self.kernels
        k["q"][:] = q
        k["qd"][:] = qd
        if self._inputs:
            k["u"][:] = [fn.value(t) for fn in self._inputs]
        k.call("forces")
        Q = k["Q"].copy()
        if self.interpreted:
            Q += self.interpreted_forces(q, qd, t)
        return Q

    def interpreted_forces(self, q, qd, t):
        """Q of the force elements not in the kernels: body wrenches (F at the CM, torque T) mapped
        as in CartesianSystem.forces, [F; 2 Lᵀ Aᵀ T] per body (Haug eq. 11.2.22)."""
        frames = self.frames(q, qd)
        w = Wrenches(self.nb)
        for f in self.interpreted:
            f.apply(t, frames, w)
        Q = np.zeros(self.nq)
        blocks = Q[:7 * self.nb].reshape(self.nb, 7)
        blocks[:, :3] = w.F
        blocks[:, 3:] = 2.0 * np.einsum("bji,bkj,bk->bi", L_matrices(q[:7 * self.nb].reshape(self.nb, 7)[:, 3:]),
                                        frames.A, w.T)
        return Q

    # ---- helpers ----------------------------------------------------------------------------------
    def _driver_values(self, t, order):
        """f (order 0), ḟ (1) or f̈ (2) of every driver at t, cached per t: one right-hand side asks
        for them at the same t in every Newton iteration and again for ν and γ."""
        if t != self._drive_t:
            self._drive_t = t
            self._drive = [None, None, None]
        if self._drive[order] is None:
            self._drive[order] = [(fn.value, fn.d1, fn.d2)[order](t) for fn in self._driver_fns]
        return self._drive[order]
