"""The relative (recursive) formulation with generated kernels — Choi & Yoo (2000) §4 applied to the
velocity-transformation equations (Kim & You (1997), Bae, Yang & Seo (2003), Choi & Yoo (2000)).

:class:`CodegenRelativeSystem` is a :class:`solver.formulations.relative.RelativeSystem` whose Φ, Φ_q,
γ, M and Q come from one compiled library: the tree map q → (q_c, T, Ṫq̇) derived symbolically
edge by edge (:mod:`solver.codegen.tree`), the model's Cartesian kernels (:mod:`solver.codegen.derive`)
evaluated at q_c, and ``relative.c`` combining them (M = Tᵀ M_c T, Q = Tᵀ(Q_c − M_c Ṫq̇),
cut-joint rows Φ_c,q T).  The reduced right-hand side then runs in C as for the Cartesian
formulation (``reduced.c``).  Post-processing (reactions by eq. 30 or Newton–Euler, driving
forces by eq. 36) is the generic relative one.
"""
from __future__ import annotations

import numpy as np

from ..formulations.cartesian import CartesianSystem
from ..forces import BodyFrames, Wrenches
from ..formulations.relative import RelativeSystem
from .build import Buffers, load_kernels
from .contact import bind_states
from .derive import CodegenUnavailable, describe, input_functions, interpreted_forces, parameters
from .relative_layout import (ROW_CARTESIAN, ROW_COORDINATE, ROW_COUPLER, ROW_NORM, relative_jacobian_pattern,
                              relative_mass_pattern, tree_scatter)
from .system import KernelEquations, cartesian_generalized_forces, coupled_angle_rows
from .tree import describe_tree


def describe_relative(system, cartesian) -> dict:
    """JSON-able description of a RelativeSystem: the Cartesian description of the same model
    (``cartesian``: its CartesianSystem), the tree (:func:`describe_tree`) and what each relative
    constraint row is ([kind, a, b], see relative.c); ``angles``: [relative row, joint, equation form,
    index in the Cartesian kernels' ``ang``] of the rows whose angle is unwrapped.  A system without
    constraint rows but the Euler-parameter normalizations (an open tree: no cut joints, drivers or
    couplers; ``norm_rows`` [row, column of p]) is described for ``articulated.c`` instead
    (formulation ``"articulated"``)."""
    if system.nq == 0:
        raise CodegenUnavailable("the model has no joint coordinates")
    if any(col is None for _, _, _, col in system.armatures):
        raise CodegenUnavailable("joint armature on a cut joint (one closing a loop) is not generated")
    cdesc = describe(cartesian, tree_couplers=True)
    # joint armature (solver.formulations.armature): nq parameters after the Cartesian ones, added to
    # M's diagonal (ARMATURE their offset; −1 without armature, so such models' libraries do not change)
    armature = cdesc["n_parameters"] if system.armatures else -1
    n_parameters = cdesc["n_parameters"] + (system.nq if system.armatures else 0)
    if system.m == len(system.norm_rows):     # an open tree: articulated.c, O(n) per evaluation
        return {"formulation": "articulated", "cartesian": cdesc, "tree": describe_tree(system), "nq": system.nq,
                "m": system.m, "norm_rows": [[int(r), int(c)] for r, c in system.norm_rows], "rows": [],
                "angles": [], "drivers": [], "n_parameters": n_parameters, "n_inputs": cdesc["n_inputs"],
                "armature": armature}
    rows = [None] * system.m
    for k, rel_rows in system.cut:
        for r, c in zip(rel_rows, cartesian.joints[k].rows):
            rows[r] = [ROW_CARTESIAN, c, 0]
    for n, d in enumerate(system.drivers):
        rows[d.row] = ([ROW_COORDINATE, int(d.column), n] if d.column is not None
                       else [ROW_CARTESIAN, cartesian.drivers[n].row, 0])
    for row, col in system.norm_rows:
        rows[row] = [ROW_NORM, int(col), 0]
    couplers = []
    for n, (c, cc) in enumerate(zip(system.couplers, cartesian.couplers)):
        if c.column is not None and c.source.column is not None:      # between tree coordinates: relative.c
            rows[c.row] = [ROW_COUPLER, int(c.column), len(couplers)]
            couplers.append([int(c.source.column), cdesc["couplers"][n]["par"], cdesc["couplers"][n]["n"]])
        else:            # on a cut joint (linear in a cut leading joint: RelativeSystem): the Cartesian kernels' row
            rows[c.row] = [ROW_CARTESIAN, cc.row, 0]
    relative_of = {c: r for r, (kind, c, _) in enumerate(rows) if kind == ROW_CARTESIAN}
    cdesc = dict(cdesc, used_rows=sorted(relative_of))     # only these Cartesian rows are derived
    angles = [[relative_of[c], jk, spec, n] for n, (c, jk, spec) in enumerate(cdesc["angles"]) if c in relative_of]
    return {"formulation": "relative", "cartesian": cdesc, "tree": describe_tree(system), "nq": system.nq,
            "m": system.m, "rows": rows, "row_bodies": _row_bodies(rows, cartesian), "angles": angles,
            "couplers": couplers,
            "drivers": cdesc["drivers"], "n_parameters": n_parameters, "n_inputs": cdesc["n_inputs"],
            "armature": armature}


def relative_parameters(system, cartesian, desc):
    """The parameter vector of :func:`describe_relative`'s layout: the Cartesian kernels' parameters,
    then (when ``desc["armature"]`` ≥ 0) each coordinate's armature."""
    par = parameters(cartesian, desc["cartesian"])
    if desc["armature"] < 0:
        return par
    arm = np.zeros(system.nq)
    for _, _, a, col in system.armatures:
        arm[col] += a
    return np.concatenate([par[:desc["armature"]], arm])


def _row_bodies(rows, cartesian) -> list:
    """Per relative row, the bodies whose 7 Cartesian columns its Cartesian row a can touch (from the
    Φ_q pattern of the Cartesian system, ascending; [] for the other row kinds): relative.c reads
    only those blocks of Φ_c,q (every body when the system has no pattern)."""
    pattern = cartesian.jacobian_pattern()
    if pattern is None:
        return [list(range(cartesian.nb)) if kind == ROW_CARTESIAN else [] for kind, _, _ in rows]
    bodies = {}
    for r, c in zip(*(p.tolist() for p in pattern)):
        bodies.setdefault(r, set()).add(c // 7)
    return [sorted(bodies.get(a, ())) if kind == ROW_CARTESIAN else [] for kind, a, _ in rows]


class CodegenRelativeSystem(KernelEquations, RelativeSystem):
    """RelativeSystem with compiled kernels; raises :class:`CodegenUnavailable` when they cannot be
    had."""

    def __init__(self, model, reactions="nonrecursive", plane=None):
        super().__init__(model, reactions=reactions, plane=plane)
        cartesian = CartesianSystem(model, form="conventional", plane=plane)
        desc = describe_relative(self, cartesian)
        self.kernels = load_kernels(desc)
        self.codegen_info = self.kernels.info
        self._inputs = input_functions(self)
        self.interpreted = interpreted_forces(self)
        self._bind_drivers([d.row for d in self.drivers], [d.function for d in self.drivers])
        self._angle_rows = coupled_angle_rows(self.couplers, [(row, jk, self.cjoints[jk], spec)
                                                              for row, jk, spec, _ in desc["angles"]])
        self.kernels["par"][:] = relative_parameters(self, cartesian, desc)
        self.articulated = desc["formulation"] == "articulated"
        self._kernel_pattern = None if self.articulated else relative_jacobian_pattern(desc)
        self._mass_pattern = None if self.articulated else relative_mass_pattern(desc)
        nc, nb, nq = 7 * self.nb, self.nb, self.nq
        sizes = {"q": nq, "qd": nq, "A": 9 * nb, "w": 3 * nb}
        if self.articulated:
            sizes.update(qc=nc, qdc=nc, B=6 * nq, D=6 * nb, F=3 * nb, T=3 * nb, Q=nq)
            calls = {"edges": ("cgt_edges", ("q", "qd", "qc", "qdc", "A", "w", "B", "D")),
                     "generalized": ("cg_tree_generalized", ("qc", "B", "F", "T", "Q"))}
        else:
            self._t_at = tree_scatter(desc)                 # the packed T's entries in the dense T
            sizes.update(r=3 * nb, v=3 * nb, qc=nc, T=len(self._t_at[0]), qdc=nc, tdqd=nc)
            calls = {"frames": ("cgt_frames", ("q", "qd", "r", "A", "v", "w")),
                     "velocity": ("cgt_velocity", ("q", "qd", "qc", "T", "qdc", "tdqd"))}
        self._tree = Buffers(self.kernels.lib, sizes, calls)
        bind_states(self)

    def kernel_jacobian_pattern(self):
        """(rows, cols) of every entry of the kernels' Φ_q that can be non-zero
        (:func:`relative_jacobian_pattern`)."""
        return self._kernel_pattern

    def jacobian_pattern(self):
        """The kernels' Φ_q pattern (None for an articulated library): a partition of many rows takes
        the sparse factorizations (solver.partitioning.choose), as the Cartesian formulation's."""
        return self._kernel_pattern

    def kernel_mass_pattern(self):
        """(indptr, indices): by rows, the columns of the kernels' M that can be non-zero
        (:func:`relative_mass_pattern`)."""
        return self._mass_pattern

    def run_state(self):
        """The run state of a generated system and the tree map's buffers."""
        return [*super().run_state(), self._tree]

    def cartesian_state(self, q, qd):
        """(q_c, T, q̇_c, Ṫq̇) of the generated tree map: body coordinates [r, p] of the Cartesian
        formulation, q̇_c = T q̇, and the velocity-product part of q̈_c; T dense (7 nb × nq, made from
        the kernels' packed T: a new array), the others views of shared buffers.  Not for an
        articulated library (no T there)."""
        b = self._call_tree("velocity", q, qd)
        T = np.zeros((7 * self.nb, self.nq))
        T[self._t_at] = b["T"]
        return b["qc"], T, b["qdc"], b["tdqd"]

    def frames(self, q, qd):
        """Global body states (CM, rotation, CM velocity, ω) from the generated tree map."""
        nb = self.nb
        if self.articulated:
            b = self._call_tree("edges", q, qd)
            r, v = b["qc"].reshape(nb, 7)[:, :3], b["qdc"].reshape(nb, 7)[:, :3]
        else:
            b = self._call_tree("frames", q, qd)
            r, v = b["r"].reshape(nb, 3), b["v"].reshape(nb, 3)
        return BodyFrames(r.copy(), b["A"].reshape(nb, 3, 3).copy(), v.copy(), b["w"].reshape(nb, 3).copy(),
                          self.spring_angles(np.array(q, dtype=float)))

    def interpreted_forces(self, q, qd, t, elements=None):
        """Generalized forces of the force elements not in the kernels (tires on table roads,
        rotational springs): Tᵀ Q_c of their Cartesian generalized forces at the body states of the
        tree map, or, for an articulated library, B_eᵀ Σ_subtree Ŵ_b of their body wrenches.  Joint
        friction takes the normal load of :meth:`RelativeSystem.update_friction_loads` first.
        ``elements``: those of them to evaluate (default: all)."""
        elements = self.interpreted if elements is None else elements
        self.update_friction_loads(q, qd, t)
        frames = self.frames(q, qd)
        if self.articulated:
            w = Wrenches(self.nb)
            for f in elements:
                f.apply(t, frames, w)
            b = self._tree                  # q_c and B of this state: frames() ran cgt_edges
            b["F"][:] = w.F.ravel()
            b["T"][:] = w.T.ravel()
            b.call("generalized")
            return b["Q"].copy()
        b = self._call_tree("velocity", q, qd)               # Tᵀ Q_c over the packed T's entries
        rows, cols = self._t_at
        Qc = cartesian_generalized_forces(elements, frames, b["qc"], t)
        return np.bincount(cols, weights=b["T"] * Qc[rows], minlength=self.nq)

    # ---- helpers ----------------------------------------------------------------------------------
    def _call_tree(self, name, q, qd):
        b = self._tree
        b["q"][:] = q
        b["qd"][:] = qd
        b.call(name)
        return b
