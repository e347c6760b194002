"""Output rows post-processed in compiled code: ``cg_tree_output`` / ``cg_tree_output_solved`` /
``cg_tree_output_open`` (output_tree.c) and ``cg_cartesian_output`` (output_cartesian.c).

The compiled step loop (``segment.c``) writes q, q̇, q̈, λ at each output point; with a
:class:`CompiledOutput` bound (``cg_segment_t.k_output``) it also writes that point's body states,
accelerations, joint reactions, driver forces and energies into arrays of this object, which
:func:`solver.analysis.segments.run_segments` hands to the recorder as a block
(``Recorder.add_rows(post=...)``): no Python per row.  Rows stored one at a time (the start, the
Python step loop's, an output point the compiled loop left to Python) take the same function when
their chunk is taken (:func:`row_output`, ``Recorder.post_rows``, set by ``Run``: one C call per row).  The Python post-processing
(``postprocess_batch`` of the formulation) stays the reference, and tests compare the two
(tests/solver/test_compiled_output.py).

Covered (:func:`compiled_output`), on generated kernels:

- the relative formulation (output_tree.c, compiled in the model's library after tree_bodies.c: an
  open tree's beside articulated.c, a system with constraint rows' beside relative.c) whose force
  elements are all in the generated loads (``cgc_loads``; not the stops, rotational spring-dampers and
  contacts contact.c adds, nor elements evaluated in Python), without couplers on cut joints (between
  tree coordinates: a driver's force less their loads p'(q) λ on its coordinate), reactions by the
  default non-recursive formula (Kim & You (1997) eq. 30).  An open tree without Euler parameters or
  joint armature (:func:`open_tree_solved`) in its articulated-body form R̂_e = K_e Ẏ̂_C − L_e about
  each ground subtree's root CM: the step loop's ``cg_tree_output_solved`` reads the recursion its
  solve just ran at the output point, ``cg_tree_output_open`` runs it first (rows stored one at a
  time).  Every other relative system by ``cg_tree_output``'s composite form, with the cut joints'
  constraint wrenches from λ on their bodies, driver forces by eq. 36 on tree coordinates and −λ on
  cut joints, joint armature's rotor loads and energy (``RelativeSystem._add_rotor_loads``; armature
  on a cut joint has no kernels);
- the Cartesian formulation with rigid bodies, no couplers and no joint armature (a rotor's energy
  ½aθ̇² and its share of a driver's force are not in output_cartesian.c), ``cg_cartesian_output`` in the
  runtime library.

The force elements' potential energy (the energy table's spring column) is not in the kernels: it is
added to the C rows by the elements' own ``potential`` over the rows' body frames
(:func:`solver.forces.element_potential`, all rows of a call at once for the elements that take
stacked states; their loads are not evaluated), as the Python post-processing does.

Every other model's rows are post-processed in Python, as before.
"""
from __future__ import annotations

import ctypes

import numpy as np

from ..forces import BodyFrames, element_potential
from .build import address
from .derive import hook_of

_D, _I, _P = ctypes.c_double, ctypes.c_int, ctypes.c_void_p
TREE, CARTESIAN = "tree", "cartesian"
ROWS = ("r", "A", "v", "w", "a", "alpha", "RF", "RT", "RFj", "RTj")
POST_NAMES = {"RF": "reaction_force", "RT": "reaction_torque", "RFj": "reaction_force_joint",
              "RTj": "reaction_torque_joint"}       # the C arrays → the recorder's columns


class _TreeOutput(ctypes.Structure):
    """``cg_output_t`` of output_tree.c (same fields, same order)."""
    _fields_ = ([("par", _P), ("f", _P), ("u", _P), ("lam", _P), ("gravity", _D * 3), ("nj", _I), ("nd", _I)]
                + [(name, _P) for name in ("joint_edge", "joint_sign", "joint_bi", "joint_bj", "joint_sj",
                                           "joint_Ci", "cut_start", "cut_rows", "driver_col", "driver_edge",
                                           "driver_row", "edge_sout", "wrench", *ROWS, "driver_force", "energy")])


class _CartesianOutput(ctypes.Structure):
    """``cg_cartesian_output_t`` of output_cartesian.c (same fields, same order)."""
    _fields_ = ([(name, _I) for name in ("nb", "nj", "nd")] + [("gravity", _D * 3)]
                + [(name, _P) for name in ("mass", "inertia", "lam", "jac", "jac_at", "joint_bi", "joint_bj", "joint_sj",
                                           "joint_Ci", "row_start", "rows", "driver_row", *ROWS, "driver_force",
                                           "energy")])


def output_kind(system):
    """(TREE or CARTESIAN, None) when the compiled output covers ``system``'s rows, else (None, why)
    (module docstring)."""
    kernels = getattr(system, "kernels", None)
    if kernels is None:
        return None, "not on generated kernels"
    if hasattr(system, "articulated"):
        outside = [f.name for f in system.force_elements if hook_of(f) is None]
        if outside:         # the stops and rotational springs of contact.c, Python's, an interactive run's loads
            return None, (f"force elements outside the generated loads ({', '.join(outside)}: their wrenches are "
                          "not in output_tree.c's Q̂)")
        if system.reactions != "nonrecursive":
            return None, f"reactions by {system.reactions!r} (output_tree.c has eq. 30 only)"
        if any(c.column is None or c.source.column is None for c in system.couplers):
            return None, "a coupler on a cut joint (its load is split between the joints in Python)"
        return (TREE, None) if kernels.pointer("cg_tree_output") else (None, "the library has no cg_tree_output")
    if getattr(system, "armatures", None):
        return None, "joint armature (its rotor's kinetic energy ½aθ̇² is added in Python)"
    if getattr(system, "flex", None):
        return None, "flexible bodies"
    if system.couplers:
        return None, "couplers (their loads are split between joints in Python)"
    if system.param is not None or system.nq != 7 * system.nb:
        return None, "not the conventional Cartesian coordinates"
    return CARTESIAN, None


def open_tree_solved(system):
    """Whether ``system``'s C rows are read from the articulated-body recursion (output_tree.c's
    cg_tree_output_solved / cg_tree_output_open): an open tree (the articulated library) without
    Euler-parameter rows or joint armature (its rotors' loads are not in the articulated L_e); the
    other relative systems take the composite cg_tree_output."""
    return (bool(getattr(system, "articulated", False)) and not system.m
            and not getattr(system, "armatures", None))


def compiled_output(system):
    """Why the output rows of ``system`` are post-processed in Python, or None when compiled code
    does (:func:`output_kind`)."""
    return output_kind(system)[1]


class CompiledOutput:
    """The output rows of one compiled step loop (``rows`` at most per call), or of stacked states
    (:meth:`states`): the context of the C function and the arrays it writes.  ``buffers``: the
    kernel parameter, driver value and input buffers (``par``, ``f``, ``u``) and the multipliers and
    Jacobian (``lam``, ``jac``) at the state the rows are written at — the step loop's
    :class:`solver.codegen.reduced.CompiledReduction` arrays, or the system's kernels."""

    def __init__(self, system, rows, buffers, jac_positions=None):
        self.system = system
        self._positions = jac_positions
        self.kind = kind = output_kind(system)[0]
        nb, nj = system.nb, len(system.joint_names)
        nd = len(system.drivers)
        self.shapes = {"r": (nb, 3), "A": (nb, 3, 3), "v": (nb, 3), "w": (nb, 3), "a": (nb, 3), "alpha": (nb, 3),
                       "RF": (nj, 3), "RT": (nj, 3), "RFj": (nj, 3), "RTj": (nj, 3), "driver_force": (nd,),
                       "energy": (4,)}
        self.buffers = buffers             # kept alive with the context that points to them
        ends = np.array(system.joint_ends if kind == TREE else [(j.body_i, j.body_j) for j in system.joints],
                        dtype=np.intc).reshape(-1, 2)
        cjoints = system.cjoints if kind == TREE else [j.joint for j in system.joints]
        self.tables = {"joint_bi": np.ascontiguousarray(ends[:, 0]) if nj else np.zeros(1, np.intc),
                       "joint_bj": np.ascontiguousarray(ends[:, 1]) if nj else np.zeros(1, np.intc),
                       "joint_sj": np.array([cj.s_j for cj in cjoints], dtype=float).reshape(-1) if nj else np.zeros(3),
                       "joint_Ci": np.array([cj.C_i for cj in cjoints], dtype=float).reshape(-1) if nj else np.zeros(9)}
        gravity = (_D * 3)(*np.asarray(system.gravity, dtype=float))
        if kind == TREE:
            self.tables.update(_tree_tables(system))
            self._struct = _TreeOutput
            self._fixed = dict(gravity=gravity, nj=nj, nd=nd)
            if open_tree_solved(system):          # rows from the recursion of the step loop's solve
                self.function = system.kernels.pointer("cg_tree_output_solved")
                self._row = ctypes.CFUNCTYPE(_I, _P, _P, _P, _P, _I)(system.kernels.pointer("cg_tree_output_open"))
            else:
                self.function = system.kernels.pointer("cg_tree_output")
                self._row = ctypes.CFUNCTYPE(None, _P, _P, _P, _P, _I)(self.function)
        else:
            rows_of = [j.rows + system._driven_rows.get(k, []) for k, j in enumerate(system.joints)]
            # Φ_q(i, c) read for each of those rows on the 7 columns of the joint's body (body_j, else body_i)
            side = [bj if bj >= 0 else bi for bi, bj in ends.tolist()]
            self._cells = (np.repeat([i for r in rows_of for i in r], 7).astype(int),
                           np.concatenate([np.tile(7 * side[k] + np.arange(7), len(r)) for k, r in enumerate(rows_of)]
                                          + [np.zeros(0, dtype=int)]).astype(int))
            self.tables.update(mass=np.ascontiguousarray(system.mass_values, dtype=float),
                               inertia=np.ascontiguousarray(system.inertia, dtype=float).reshape(-1),
                               row_start=np.cumsum([0] + [len(r) for r in rows_of]).astype(np.intc),
                               rows=np.array([i for r in rows_of for i in r] or [0], dtype=np.intc),
                               driver_row=np.array([d.row for d in system.drivers] or [0], dtype=np.intc))
            self._struct = _CartesianOutput
            self._fixed = dict(nb=nb, nj=nj, nd=nd, gravity=gravity)
            self.function = ctypes.cast(system.kernels.runtime.cg_cartesian_output, ctypes.c_void_p).value
            self._row = ctypes.CFUNCTYPE(None, _P, _P, _P, _P, _I)(self.function)
        self._allocate(rows)

    def _allocate(self, rows):
        """Arrays of ``rows`` rows and the C context pointing to them."""
        self.arrays = self._own = {name: np.zeros((rows,) + shape) for name, shape in self.shapes.items()}
        self._fields = names = {field for field, _ in self._struct._fields_}
        pointers = {name: address(a) for name, a in {**self.tables, **self.arrays}.items() if name in names}
        self.context = self._struct(**self._fixed, **pointers)
        self.pointer = ctypes.addressof(self.context)
        self.bind(self.buffers, force=True, jac_positions=self._positions)

    def bind(self, buffers, force=False, jac_positions=None):
        """Read the state's buffers ``buffers`` (``par``, ``f``, ``u``, ``lam`` of a tree; ``lam``, ``jac`` of
        the Cartesian rows): those of the compiled reduction a run's step loop solves with (a kept
        output bound again for the next run's reduction).  ``jac_positions(rows, cols)``: where Φ_q's
        entries are in ``jac`` (−1: none; :meth:`solver.codegen.reduced.CompiledReduction.jac_positions`,
        the Φ_q packed by the band algebra's kernels), None: dense row-major."""
        if buffers is self.buffers and not force:
            return
        self.buffers, self._positions = buffers, jac_positions
        for name in ("par", "f", "u", "lam") if self.kind == TREE else ("lam", "jac"):
            setattr(self.context, name, address(buffers[name]))
        if self.kind != TREE:
            rows, cols = self._cells
            at = rows * self.system.nq + cols if self._positions is None else self._positions(rows, cols)
            self._jac_at = np.ascontiguousarray(np.append(at, 0), dtype=np.intc)
            self.context.jac_at = address(self._jac_at)

    def write_into(self, target):
        """Write the rows into ``target`` ({recorder column: rows}, "energy" among them: the step loop's
        :meth:`~solver.codegen.segment.CompiledSegments.write_into`), or, None, into its own arrays."""
        self.arrays = self._own if target is None else {name: target[POST_NAMES.get(name, name)]
                                                         for name in self.shapes}
        for name, rows in self.arrays.items():
            if name in self._fields:
                setattr(self.context, name, address(rows))

    def rows(self, t, angles=None):
        """The rows written at the times ``t`` (the first len(t)), as the recorder's post-processed
        columns (views) and "energy" (kinetic, gravity, spring, strain), the force elements'
        potential added (module docstring; ``angles``: the tracked angles of the rows, BodyFrames.angles)."""
        post = {POST_NAMES.get(name, name): a[:len(t)] for name, a in self.arrays.items()}
        if self.system.force_elements and len(t):
            frames = BodyFrames(post["r"], post["A"], post["v"], post["w"], angles)
            post["energy"][:, 2] = element_potential(self.system.force_elements, frames, np.shape(t))
        return post

    def states(self, t, q, qd, qdd, lam, angles=None):
        """:meth:`rows` of N consistent states (arrays with a leading axis N), one C call each; the
        Cartesian rows' Φ_q from the position kernel at q (no angle unwrapping: Φ_q does not depend
        on it).  None when the system is no longer covered (an interactive run adds its held loads to
        the force elements after its Run started) or an open tree's recursion fails at a state
        (cg_tree_output_open: singular or not finite; the Python post-processing then takes the rows)."""
        if output_kind(self.system)[0] != self.kind:
            return None
        n = len(t)
        if n > len(self.arrays["energy"]):
            self._allocate(max(n, 2 * len(self.arrays["energy"])))
        k, inputs = self.buffers, self.system._inputs
        q, qd, qdd = (np.ascontiguousarray(x, dtype=float) for x in (q, qd, qdd))
        step = q.strides[0]
        base = [address(x) for x in (q, qd, qdd)]
        for x in range(n):
            if inputs:                 # the force inputs at t (the buffer holds the last evaluation's)
                k["u"][:] = [fn.value(t[x]) for fn in inputs]
            k["lam"][:lam.shape[1]] = lam[x]
            if self.kind == CARTESIAN:
                k["q"][:] = q[x]
                k.call("position")
            if self._row(self.pointer, base[0] + x * step, base[1] + x * step, base[2] + x * step, x) in (0, -1):
                return None            # the tree's recursion singular or not finite there: the rows in Python
        return self.rows(t, angles)


def _tree_tables(system):
    """output_tree.c's joint and driver tables of a RelativeSystem (cg_output_t): per joint its tree edge
    and sign (−1: inverted), or −1 and (cut_start, cut_rows) the rows of a cut joint and of the drivers on
    it (RelativeSystem._group_cut_joints without couplers); per driver its tree column and edge, or −1 and
    its row; per edge its joint's origin on the child (the rotors' loads); the joints' wrench work array."""
    nj = len(system.joint_names)
    edges = system.topology.edges
    edge_of = {int(edge.joint): e for e, edge in enumerate(edges) if edge.joint is not None}
    sign = {int(edge.joint): -1.0 if edge.inverted else 1.0 for edge in edges if edge.joint is not None}
    rows = dict(system.cut)
    for d in system.drivers:
        if d.column is None:
            rows[d.joint] = rows[d.joint] + [d.row]
    cut_rows = [rows.get(k, []) for k in range(nj)]
    edge_of_col = {int(c): e for e, cols in enumerate(system.cols) for c in cols}
    drivers = [(int(d.column), edge_of_col[int(d.column)], d.row) if d.column is not None else (-1, -1, d.row)
               for d in system.drivers] or [(0, 0, 0)]
    return {"joint_edge": np.array([edge_of.get(k, -1) for k in range(nj)] or [0], dtype=np.intc),
            "joint_sign": np.array([sign.get(k, 1.0) for k in range(nj)] or [0.0]),
            "cut_start": np.cumsum([0] + [len(r) for r in cut_rows]).astype(np.intc),
            "cut_rows": np.array([i for r in cut_rows for i in r] or [0], dtype=np.intc),
            **{name: np.ascontiguousarray(column, dtype=np.intc)
               for name, column in zip(("driver_col", "driver_edge", "driver_row"), zip(*drivers))},
            "edge_sout": np.array(system.s_out, dtype=float).reshape(-1),
            "wrench": np.zeros(6 * max(1, nj))}


class _RowBuffers(dict):
    """The system's kernel buffers and a multiplier buffer of its own, for :func:`row_output`."""

    def __init__(self, kernels, m):
        super().__init__({name: kernels[name] for name in ("par", "f", "u", "jac", "q")}, lam=np.zeros(max(1, m)))
        self.kernels = kernels

    def call(self, name):
        self.kernels.call(name)


def row_output(system, cache=None):
    """A :class:`CompiledOutput` of stacked states of ``system`` (its kernels' buffers), None when its
    rows are post-processed in Python (:func:`compiled_output`).  ``cache``: a dict of objects bound
    to this workspace (``Run.cache``), where the output is kept for the workspace's next run."""
    if compiled_output(system) is not None:
        return None
    cache = {} if cache is None else cache
    if "row_output" not in cache:
        cache["row_output"] = CompiledOutput(system, 64, _RowBuffers(system.kernels, system.m))
    return cache["row_output"]
