"""Systems whose Φ, Φ_q, ν, γ, M and Q come from the model's generated kernels.

:class:`KernelEquations` holds what both generated formulations share (the kernel calls, joint-angle
unwrapping, driver values, the compiled reduced right-hand side); :class:`CodegenCartesianSystem`
adds it to :class:`solver.formulations.cartesian.CartesianSystem`, and
:class:`solver.codegen.relative.CodegenRelativeSystem` to the relative formulation.  Everything else —
assembly, partitioning, reactions, post-processing — is inherited from the generic system, so the
two paths differ only in how the equations are evaluated (tests: ≤ 1e-10 relative on the kernels).
"""
from __future__ import annotations

import numpy as np

from ..constraints.forms import angle_coefficient
from ..formulations.cartesian import CartesianSystem
from ..formulations.system import ConstraintEval
from .build import load_kernels
from ..forces import Wrenches
from ..math.rotations import L_matrices
from .contact import bind_states
from .derive import describe, input_functions, interpreted_forces, parameters
from ..partitioning.partition import POSITION_TOL
from .reduced import CompiledReduction


class KernelEquations:
    """The equations of a system from its kernels.  The host class sets ``kernels`` (a loaded
    :class:`solver.codegen.build.Kernels`), ``_inputs`` (time functions of the input vector u),
    ``interpreted`` (force elements evaluated in Python, :meth:`interpreted_forces`),
    ``_driver_rows``/``_driver_fns`` (rows and time functions of the drivers, model order) and
    ``_angle_rows`` ([(row, CartesianJoint, coefficient)] in the kernels' ``ang`` order)."""

    def _bind_drivers(self, driver_rows, driver_fns):
        self._driver_rows = np.array(driver_rows, dtype=int)
        self._driver_fns = list(driver_fns)
        self._drive = DriverValues(self._driver_fns)

    def run_state(self):
        """The generic system's run state, the kernels' buffers and the cached driver values."""
        return [*super().run_state(), self.kernels, self._drive]

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

    def kernel_jacobian_pattern(self):
        """(rows, cols) of every entry of the kernels' Φ_q that can be non-zero, by rows, columns
        ascending, or None when unknown (the compiled reduction's band algebra, codegen/banded.py, needs
        it): the entries the Cartesian kernels write (their packed layout, within the system's
        jacobian_pattern), None where that is None (flexible bodies).  The relative system overrides this."""
        layout = self._packed_layout()
        return None if layout is None else divmod(layout["jac"], self.nq)

    def kernel_mass_pattern(self):
        """(indptr, indices) of the entries of the kernels' M that can be non-zero (by rows, columns
        ascending; the packed M's order), or None (dense), as :meth:`kernel_jacobian_pattern`."""
        layout = self._packed_layout()
        if layout is None:
            return None
        rows, cols = divmod(layout["M"], self.nq)
        return np.searchsorted(rows, np.arange(self.nq + 1)), cols

    def _packed_layout(self):
        pattern = getattr(self, "jacobian_pattern", None)
        return self.kernels.packed_layout() if pattern is not None and pattern() is not None else None

    def compiled_reduction(self, part, tol=POSITION_TOL):
        """Positions, velocities and accelerations of ``part`` in one C call (reduced.c); ``tol``: the
        position Newton's bound.  A sparse partition (solver.partitioning.sparse: too many rows for
        the dense algebra) only with the band algebra (banded.c), else None (its SuperLU solves in
        Python)."""
        reduction = CompiledReduction(self, part, tol)
        return reduction if reduction.band is not None or not part.sparse else None

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

    # ---- helpers ----------------------------------------------------------------------------------
    def _driver_values(self, t, order):
        """f (order 0), ḟ (1) or f̈ (2) of every driver at t (:class:`DriverValues`)."""
        return self._drive.at(t, order)


class DriverValues:
    """f, ḟ, f̈ of the drivers at the last time asked for: one right-hand side asks for them at the
    same t in every Newton iteration and again for ν and γ."""

    def __init__(self, functions):
        self.functions = functions
        self.reset()

    def reset(self):
        self.t = None
        self.values = [None, None, None]

    def at(self, t, order):
        """f (order 0), ḟ (1) or f̈ (2) of every driver at t."""
        if t != self.t:
            self.t = t
            self.values = [None, None, None]
        if self.values[order] is None:
            self.values[order] = [(fn.value, fn.d1, fn.d2)[order](t) for fn in self.functions]
        return self.values[order]


def cartesian_generalized_forces(elements, frames, q, t):
    """Q in the Cartesian coordinates (r, p per body) of the wrenches of ``elements`` (F at the CM,
    torque T): [F; 2 Lᵀ Aᵀ T] per body (Haug eq. 11.2.22), as CartesianSystem.forces maps them."""
    nb = len(frames.r)
    w = Wrenches(nb)
    for f in elements:
        f.apply(t, frames, w)
    Q = np.zeros(7 * nb)
    blocks = Q.reshape(nb, 7)
    blocks[:, :3] = w.F
    blocks[:, 3:] = 2.0 * np.einsum("bji,bkj,bk->bi", L_matrices(q[:7 * nb].reshape(nb, 7)[:, 3:]), frames.A, w.T)
    return Q


class CodegenCartesianSystem(KernelEquations, CartesianSystem):
    """CartesianSystem (conventional form) with compiled kernels; raises
    :class:`solver.codegen.derive.CodegenUnavailable` when they cannot be had."""

    def __init__(self, model, plane=None):
        super().__init__(model, form="conventional", plane=plane)
        desc = describe(self)
        self.kernels = load_kernels(desc)
        self.codegen_info = self.kernels.info
        self._inputs = input_functions(self)
        self.interpreted = interpreted_forces(self)
        self._bind_drivers([d.row for d in self.drivers], [d.function for d in self.drivers])
        self._angle_rows = coupled_angle_rows(self.couplers, [(row, jk, self.joints[jk].joint, spec)
                                                              for row, jk, spec in desc["angles"]])
        self.kernels["par"][:] = parameters(self, desc)
        bind_states(self)

    def interpreted_forces(self, q, qd, t, elements=None):
        """Q of the force elements not in the kernels (:func:`cartesian_generalized_forces`), all nq
        entries; ``elements``: those of them to evaluate (default: all).  The bodies' rigid
        coordinates lead q, a flexible body's modal coordinates follow and take nothing from these
        elements (they act on the rigid bodies' frames; fuzz seeds 1061 and 1108 crashed adding 14
        entries to 23)."""
        Q = np.zeros(len(q))
        rigid = cartesian_generalized_forces(self.interpreted if elements is None else elements, self.frames(q, qd),
                                             q, t)
        Q[:len(rigid)] = rigid
        return Q


def coupled_angle_rows(couplers, entries) -> list:
    """[(row, CartesianJoint, coefficient)] of the angle entries [(row, joint index, its CartesianJoint,
    equation form)]: Φ_row += coefficient · (θ_unwrapped − θ_raw), the coefficient the form's (1 for
    drivers, −pitch for screws), times −c_1 for the leading angle θ_i of a coupler row (``couplers``:
    the system's) θ_j − c_0 − c_1 θ_i (generated only when linear in an angle)."""
    scale = {(c.row, c.source.joint): -(c.source.coefficients + (0.0, 0.0))[1] for c in couplers}
    return [(row, cj, scale.get((row, jk), 1.0) * angle_coefficient(spec, cj.constant)) for row, jk, cj, spec in entries]
