"""Output rows post-processed in compiled code: ``cg_tree_output`` of ``output.c``.

The compiled step loop (``segment.c``) writes q, q̇, q̈, λ at each output point; with a
:class:`CompiledOutput` bound (``cg_segment_t.k_output``) it also writes that point's body states,
accelerations, joint reactions (Kim & You (1997) eqs. 8, 30, 31) and energies into arrays of this
object, which :func:`solver.analysis.segments.run_segments` hands to the recorder as a block
(``Recorder.add_rows(post=...)``): no Python per row.  Rows stored one at a time (the start, the
Python step loop's, an output point the compiled loop left to Python) take the same function through
:func:`row_output` (``Recorder.post_row``, set by ``Run``).  The Python post-processing
(``RelativeSystem.postprocess_batch``) stays the reference, and tests compare the two
(tests/solver/test_compiled_output.py).

Covered (:func:`compiled_output`): open trees of the relative formulation on generated kernels (the
articulated library: no cut joints, drivers, couplers or Euler parameters) without force elements
(their potential energy is not in the kernels), reactions by the default non-recursive formula.  Every other model's rows are post-processed in
Python, as before.
"""
from __future__ import annotations

import ctypes

import numpy as np

_D, _I, _P = ctypes.c_double, ctypes.c_int, ctypes.c_void_p
ROWS = ("r", "A", "v", "w", "a", "alpha", "RF", "RT", "RFj", "RTj", "energy")
POST_NAMES = {"RF": "reaction_force", "RT": "reaction_torque", "RFj": "reaction_force_joint",
              "RTj": "reaction_torque_joint"}       # output.c's arrays → the recorder's columns


class _Output(ctypes.Structure):
    """``cg_output_t`` of output.c (same fields, same order)."""
    _fields_ = ([("par", _P), ("f", _P), ("u", _P), ("gravity", _D * 3), ("nj", _I)]
                + [(name, _P) for name in ("joint_edge", "joint_sign", "joint_bi", "joint_bj", "joint_sj",
                                           "joint_Ci", *ROWS)])


def compiled_output(system):
    """Why the output rows of ``system``'s compiled step loop are post-processed in Python, or None
    when ``cg_tree_output`` covers them (module docstring)."""
    if not getattr(system, "articulated", False) or getattr(system, "kernels", None) is None:
        return "not an open tree of the relative formulation on generated kernels"
    if system.reactions != "nonrecursive":
        return f"reactions by {system.reactions!r} (output.c has eq. 30 only)"
    if system.force_elements:
        return "force elements (their potential energy is evaluated in Python)"
    if system.kernels.pointer("cg_tree_output") is None:
        return "the model library has no cg_tree_output"
    return None


class CompiledOutput:
    """The output rows of one compiled step loop (``rows`` at most per call), or of single states
    (:meth:`row`): the context of ``cg_tree_output`` and the arrays it writes.  ``par``, ``f``, ``u``:
    the kernel parameter, driver value and input buffers the solves use (the step loop's
    :class:`solver.codegen.reduced.CompiledReduction` arrays, or the system's kernels)."""

    def __init__(self, system, rows, par, f, u):
        nb, nj = system.nb, len(system.joint_names)
        edge_of = {int(edge.joint): e for e, edge in enumerate(system.topology.edges) if edge.joint is not None}
        sign = {int(edge.joint): -1.0 if edge.inverted else 1.0 for edge in system.topology.edges
                if edge.joint is not None}
        shapes = {"r": (nb, 3), "A": (nb, 3, 3), "v": (nb, 3), "w": (nb, 3), "a": (nb, 3), "alpha": (nb, 3),
                  "RF": (nj, 3), "RT": (nj, 3), "RFj": (nj, 3), "RTj": (nj, 3), "energy": (4,)}
        self.arrays = {name: np.zeros((rows,) + shape) for name, shape in shapes.items()}
        ends = np.array(system.joint_ends, dtype=np.intc).reshape(-1, 2)
        self.tables = {"joint_edge": np.array([edge_of[k] for k in range(nj)] or [0], dtype=np.intc),
                       "joint_sign": np.array([sign[k] for k in range(nj)] or [0.0]),
                       "joint_bi": np.ascontiguousarray(ends[:, 0]) if nj else np.zeros(1, np.intc),
                       "joint_bj": np.ascontiguousarray(ends[:, 1]) if nj else np.zeros(1, np.intc),
                       "joint_sj": np.array([cj.s_j for cj in system.cjoints], dtype=float).reshape(-1) if nj
                       else np.zeros(3),
                       "joint_Ci": np.array([cj.C_i for cj in system.cjoints], dtype=float).reshape(-1) if nj
                       else np.zeros(9)}
        self.inputs = (par, f, u)          # kept alive with the context that points to them
        self.context = _Output(par=par.ctypes.data, f=f.ctypes.data, u=u.ctypes.data,
                               gravity=(_D * 3)(*np.asarray(system.gravity, dtype=float)), nj=nj,
                               **{name: a.ctypes.data for name, a in {**self.tables, **self.arrays}.items()})
        self.function = system.kernels.pointer("cg_tree_output")
        self.pointer = ctypes.addressof(self.context)
        self._state = np.zeros((3, system.nq))
        self._call = ctypes.CFUNCTYPE(None, _P, _P, _P, _P, _I)(self.function)
        self._args = (self.pointer, *(ctypes.c_void_p(x.ctypes.data) for x in self._state), 0)

    def rows(self, n):
        """The first n rows written, as the recorder's post-processed columns (views) and "energy"
        (kinetic, gravity, spring, strain)."""
        post = {POST_NAMES.get(name, name): a[:n] for name, a in self.arrays.items()}
        post["driver_force"] = np.zeros((n, 0))
        return post

    def row(self, q, qd, qdd):
        """:meth:`rows` (one row, the first) of the consistent state (q, q̇, q̈)."""
        self._state[0], self._state[1], self._state[2] = q, qd, qdd
        self._call(*self._args)
        return self.rows(1)


def row_output(system):
    """A :class:`CompiledOutput` of single rows of ``system`` (its kernels' buffers), None when its
    rows are post-processed in Python (:func:`compiled_output`)."""
    if compiled_output(system) is not None:
        return None
    k = system.kernels
    return CompiledOutput(system, 1, k["par"], k["f"], k["u"])
