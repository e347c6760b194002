"""The whole reduced right-hand side in compiled code: ``cg_reduced`` of ``reduced.c``.

``cg_reduced`` is in the runtime library every model shares (:func:`solver.codegen.build.runtime_library`)
and calls the model library's kernels through the pointers of its problem struct (KERNEL_POINTERS).
For a :class:`solver.partitioning.partition.Partition` of a :class:`CodegenCartesianSystem`,
:class:`CompiledReduction` solves positions (Newton, Kim & Yoo (1997) eq. 7), velocities (eq. 8) and the
tangent-space accelerations (eq. 13) in one C call, with the same arithmetic as the Python path
(``Partition.positions`` / ``velocities`` / ``accelerations``).  Python only evaluates the time
functions (driver f, ḟ, f̈ and force inputs) and hands buffers over; the buffers are bound once per
partition, so a call costs the C work plus a few microseconds.  Partitions of many loops get the band
algebra of banded.c (:func:`solver.codegen.banded.band_problem`, ``CompiledReduction.band``).
"""
from __future__ import annotations

import ctypes

import numpy as np

from ..partitioning import partition as partitioning
from ..partitioning.partition import NEWTON_STALL, POSITION_TOL, PartitionError, singular_value_ratio
from .banded import band_problem
from .contact import compiled_elements

OK, NO_CONVERGENCE, SINGULAR, NOT_FINITE, MASS_SINGULAR, BRANCH, DYNAMICS_NOT_FINITE = range(7)   # reduced.c's CG_*
MULTIPLIERS = 3      # cg_reduced's level that adds λ to those of q (0), q̇ (1) and q̈, z̈ (2)
_PROBLEMS = {NO_CONVERGENCE: "position Newton did not converge", SINGULAR: "dependent Jacobian block is singular",
             NOT_FINITE: "constraint evaluation produced NaN/inf"}
_KINDS = {NO_CONVERGENCE: "locked", SINGULAR: "singular", NOT_FINITE: "diverged"}     # their SolverError kinds
_INT, _PTR = ctypes.c_int, ctypes.c_void_p


# the struct's kernel pointers and the model library's functions they point to (k_dynamics, k_tree: the
# fixed code's faster paths, NULL when the library has none)
KERNEL_POINTERS = {"k_position": "cg_position", "k_gamma": "cg_gamma", "k_mass": "cg_mass", "k_forces": "cg_forces",
                   "k_dynamics": "cg_dynamics", "k_tree": "cg_tree_accelerations"}


# the packed kernels of a relative or Cartesian library (relative.c, cartesian_packed.c: Φ_q and M in their
# patterns) the band algebra runs on instead
PACKED_KERNELS = {"k_position": "cg_position_packed", "k_dynamics": "cg_dynamics_packed"}


TREE_ARRAYS = ("col_row", "u_start", "u_row", "v_start", "v_row", "u_val", "v_val")   # tree_reduced's partition


class _Problem(ctypes.Structure):
    """``cg_reduced_t`` of reduced.c (same fields, same order)."""
    _fields_ = ([(name, _INT) for name in ("nq", "m", "r", "dof", "na", "ndrv")]
                + [("rows", _PTR), ("nred", _INT)]
                + [(name, _PTR) for name in ("red_rows", "U", "V", "q_ref", "ang_row", "ang_coef", "ang_state",
                                             "drv_row", "par", "f", "fd", "fdd", "u", "Qx")]
                + [("tol", ctypes.c_double), ("max_iter", _INT), ("accept", ctypes.c_double),
                   ("stall", ctypes.c_double)]
                + [(name, _PTR) for name in ("q", "qd", "qdd", "zdd", "lam", "phi", "jac", "ang", "gamma", "M", "Q",
                                             "err", "sigma_min", "amplification")]
                + [(field, _PTR) for field in KERNEL_POINTERS]
                + [(name, _PTR) for name in ("k_extra", "extra", "Qe", "band")]
                + [(name, _PTR) for name in TREE_ARRAYS])


def _columns(X):
    """(start, row, value): the non-zeros of X (dense, or scipy.sparse: a block partition's) by columns (CSC)."""
    if hasattr(X, "tocsc"):
        X = X.tocsc()
        X.eliminate_zeros()
        X.sort_indices()
        return (X.indptr.astype(np.intc), np.ascontiguousarray(X.indices, dtype=np.intc),
                np.ascontiguousarray(X.data, dtype=float))
    cols, rows = np.nonzero(X.T)
    start = np.searchsorted(cols, np.arange(X.shape[1] + 1)).astype(np.intc)
    return start, np.ascontiguousarray(rows, dtype=np.intc), np.ascontiguousarray(X[rows, cols], dtype=float)


def tree_partition(system, part):
    """reduced.c's tree_reduced arrays (TREE_ARRAYS) for a partition of an articulated library whose
    independent rows are Euler-parameter normalizations (``system.norm_rows``: row, first column of
    its 4), each U column in the columns of its own row (Φ_q[rows] U diagonal), no redundant rows
    and U, V dense or block-sparse (LU and QR partitions of an open tree are: solver/partitioning/block.py);
    None otherwise (the dense reduction)."""
    if part.sparse or len(part.redundant):
        return None
    col_row = np.full(system.nq, -1, dtype=np.intc)
    first = dict(getattr(system, "norm_rows", ()))
    for i, row in enumerate(part.rows):
        if row not in first:
            return None
        col_row[first[row]:first[row] + 4] = i
    (u_start, u_row, u_val), (v_start, v_row, v_val) = _columns(part.U), _columns(part.V)
    owner = np.repeat(np.arange(len(part.rows)), np.diff(u_start))
    if np.any(np.diff(u_start) == 0) or np.any(col_row[u_row] != owner):
        return None
    return {"col_row": col_row, "u_start": u_start, "u_row": np.append(u_row, 0).astype(np.intc),
            "v_start": v_start, "v_row": np.append(v_row, 0).astype(np.intc), "u_val": np.append(u_val, 0.0),
            "v_val": np.append(v_val, 0.0)}


class CompiledReduction:
    """Reduced equations of one partition, evaluated by ``cg_reduced``.

    After :meth:`solve` the attributes ``q``, ``qd``, ``qdd``, ``zdd``, ``lam`` and ``phi``, ``jac``,
    ``M``, ``Q`` at that state (views of the shared buffers: copy what you keep) hold the consistent
    state at (t, y); q̈, z̈, M and Q only after a level-2 solve, λ after a level-3 one (MULTIPLIERS).  λ is
    the minimum-norm solution of Φ_qᵀλ = Q − M q̈ (the least-squares λ of the generic path)."""

    MULTIPLIERS = MULTIPLIERS       # the level of :meth:`solve` that adds λ (for callers that do not import this module)

    def __init__(self, system, part, tol=POSITION_TOL, max_iter=25):
        k = system.kernels
        self.system = system
        nq, m, f = system.nq, system.m, part.dof
        self._angle_rows = system._angle_rows
        self._drivers = len(system._driver_fns)
        pointers = {field: k.pointer(symbol) for field, symbol in KERNEL_POINTERS.items()}
        tree = tree_partition(system, part) if pointers["k_tree"] else None
        if tree is None:               # the dense reduction (an SVD partition of an open tree)
            pointers["k_tree"] = None
            k.need_mass()              # the dense and band reductions write M (tree_reduced never does)
        # many loops: the band algebra of banded.c (a sparse basis of U's range, S = Φ_q[rows] B banded),
        # on the packed kernels where the library has them (relative.c, cartesian_packed.c: Φ_q and M in
        # their patterns)
        packed = all(k.pointer(symbol) for symbol in PACKED_KERNELS.values())
        self.band = band_problem(system, part, packed=packed) if tree is None else None
        self.arrays = {
            "rows": np.ascontiguousarray(part.rows, dtype=np.intc),
            "red_rows": np.array(list(part.redundant) or [0], dtype=np.intc),
            # dense U for the dense reduction, V for it and the band one; tree_reduced reads them by
            # columns (tree's arrays)
            **({"U": np.zeros(1), "V": np.zeros(1)} if tree is not None else
               {"U": np.zeros(1) if self.band is not None else np.ascontiguousarray(part.U, dtype=float),
                "V": np.ascontiguousarray(part.V, dtype=float)}),
            "q_ref": np.ascontiguousarray(part.q_ref, dtype=float),
            "ang_row": np.array([row for row, _, _ in self._angle_rows] or [0], dtype=np.intc),
            "ang_coef": np.array([coef for _, _, coef in self._angle_rows] or [0.0]),
            "ang_state": np.zeros(max(1, len(self._angle_rows))),
            "drv_row": np.array(list(system._driver_rows) or [0], dtype=np.intc),
            "par": k["par"], "u": k["u"],
            "f": np.zeros(max(1, self._drivers)), "fd": np.zeros(max(1, self._drivers)),
            "fdd": np.zeros(max(1, self._drivers)), "Qx": np.zeros(nq),
            "q": np.zeros(nq), "qd": np.zeros(nq), "qdd": np.zeros(nq), "zdd": np.zeros(max(1, f)),
            "lam": np.zeros(max(1, m)),
            "phi": k["phi"], "jac": k["jac"], "ang": k["ang"], "gamma": k["gamma"], "M": k["M"], "Q": k["Q"],
            "err": np.zeros(1), "sigma_min": np.zeros(1), "amplification": np.zeros(1), "Qe": np.zeros(nq),
        }
        # contact and joint stops in C (contact.c) at each solve; the rest of the interpreted elements in Python
        self.contact, self._python_forces = compiled_elements(system)
        self.arrays.update(tree or {})
        self._packed = None
        if self.band is not None and packed:
            rows, cols = system.kernel_jacobian_pattern()
            m_ptr, m_col = system.kernel_mass_pattern()
            self._packed = {"jac": (rows, cols), "M": (np.repeat(np.arange(nq), np.diff(m_ptr)), m_col)}
            self.arrays.update(jac=np.zeros(max(1, len(rows))), M=np.zeros(max(1, len(m_col))))
            pointers.update({field: k.pointer(symbol) for field, symbol in PACKED_KERNELS.items()})
        self.problem = _Problem(nq=nq, m=m, r=len(part.rows), dof=f, na=len(self._angle_rows), ndrv=self._drivers,
                                nred=len(part.redundant),
                                tol=max(tol, part.roundoff_tol), max_iter=max_iter, accept=POSITION_TOL,
                                stall=NEWTON_STALL,
                                **{name: a.ctypes.data for name, a in self.arrays.items()},
                                **pointers,
                                **(self.contact.pointers() if self.contact else {}),
                                band=ctypes.addressof(self.band.struct_) if self.band else None)
        self._fn = k.runtime.cg_reduced
        self._fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int]
        self._fn.restype = ctypes.c_int
        self._problem_ptr = ctypes.cast(ctypes.pointer(self.problem), ctypes.c_void_p)
        # the conditioning read-out's σ estimates of Φ_q[rows] in C (banded.c cg_band_row_sigma) from
        # COMPILED_ESTIMATE_ROWS rows (the Python path's SVD up to SVD_MAX_ROWS costs more than the run there)
        # where J Jᵀ is narrow in the band's order
        self.row_sigma = (len(part.rows) >= partitioning.COMPILED_ESTIMATE_ROWS and self.band is not None
                          and self.band.gw >= 0)
        self._sigma = np.zeros(2)
        self._row_sigma_fn = k.runtime.cg_band_row_sigma
        self._row_sigma_fn.argtypes, self._row_sigma_fn.restype = [ctypes.c_void_p, ctypes.c_void_p], ctypes.c_int
        self._y = np.zeros(max(1, 2 * f))
        self._y_ptr = ctypes.c_void_p(self._y.ctypes.data)
        self.q, self.qd, self.qdd = self.arrays["q"], self.arrays["qd"], self.arrays["qdd"]
        self.zdd = self.arrays["zdd"][:f]
        self.lam = self.arrays["lam"][:m]
        self.phi, self.Q = k["phi"][:m], k["Q"]
        self._shape = (m, nq)
        self._inputs = system._inputs

    @property
    def jac(self):
        """Φ_q (m × nq) at the last solved state: the kernels' buffer, or made dense from the packed one
        (a new array)."""
        return self._dense("jac") if self._packed else self.system.kernels.jac

    def jac_copy(self):
        """Φ_q at the last solved state as an array of the caller's own (:attr:`jac` is one already when
        made dense from the packed kernels)."""
        return self.jac if self._packed else self.jac.copy()

    @property
    def M(self):
        """M (nq × nq) at the last level-2 solve, as :attr:`jac`."""
        return self._dense("M") if self._packed else self.system.kernels.M

    def jac_positions(self, rows, cols):
        """Where the entries (rows, cols) of Φ_q are in this reduction's ``jac`` buffer: row-major, or
        their index in the kernels' packed pattern, −1 for entries outside it (always zero)."""
        rows, cols = np.asarray(rows, dtype=int), np.asarray(cols, dtype=int)
        nq = self._shape[1]
        if not self._packed:
            return rows * nq + cols
        prows, pcols = self._packed["jac"]
        keys = prows * nq + pcols
        wanted = rows * nq + cols
        if not len(keys):
            return np.full(len(wanted), -1)
        e = np.minimum(np.searchsorted(keys, wanted), len(keys) - 1)
        return np.where(keys[e] == wanted, e, -1)

    def _dense(self, name):
        rows, cols = self._packed[name]
        m, nq = self._shape
        out = np.zeros((m, nq) if name == "jac" else (nq, nq))
        out[rows, cols] = self.arrays[name][:len(rows)]
        return out

    def solve(self, t, y, q_guess, level):
        """Consistent q (level 0), + q̇ (1), + q̈ and z̈ (2), + λ (3: MULTIPLIERS) at (t, y = [z, ż]).  Raises PartitionError
        when the partition cannot represent the configuration (the caller re-partitions); returns
        False when the accelerations are not finite or NᵀMN is singular (the caller diagnoses with
        the Python path), True otherwise."""
        a = self.arrays
        self._y[:len(y)] = y
        a["q"][:] = q_guess
        if self._drivers:
            a["f"][:] = self.system._driver_values(t, 0)
            if level >= 1:
                a["fd"][:] = self.system._driver_values(t, 1)
            if level >= 2:
                a["fdd"][:] = self.system._driver_values(t, 2)
        if level >= 2 and self._inputs:
            a["u"][:] = [fn.value(t) for fn in self._inputs]
        if level >= 2 and self._python_forces:
            # forces the kernels leave out need the solved state: positions and velocities first,
            # then the accelerations from there (Newton then stops at its first evaluation)
            self._call(1)
            a["Qx"][:] = self.system.interpreted_forces(a["q"], a["qd"], t, self._python_forces)
        return self._call(level)

    @property
    def sigma_min(self):
        """Estimate of σ_min(Φ_q U) over the independent rows at the last solved state: levels 1 and 3
        (a level-2 solve, a right-hand side, leaves it: reduced.c SIGMA_AT, cg_reduced_sigma)."""
        return float(self.arrays["sigma_min"][0])

    @property
    def conditioning(self):
        """σ_min / σ_max of Φ_q[rows] at the last solved state from banded.c's cg_band_row_sigma
        (solver.partitioning.singular_estimates' algorithm in C, the estimates the partition's
        singularity() computes above SVD_MAX_ROWS rows, here from COMPILED_ESTIMATE_ROWS; segment.c writes the
        same per output row), or
        None where :attr:`row_sigma` is False (the caller computes it in Python)."""
        if not self.row_sigma or not self._row_sigma_fn(self._problem_ptr, self._sigma.ctypes.data):
            return None
        return float(singular_value_ratio(self._sigma[0], self._sigma[1]))

    def row_sigma_min(self):
        """σ_min of Φ_q[rows] at the last solved state estimated from above (cg_band_row_sigma: an upper
        bound, what Partition.degraded's cheap test takes, as segment.c's SEG_QUALITY does), or None
        where :attr:`row_sigma` is False."""
        if not self.row_sigma or not self._row_sigma_fn(self._problem_ptr, self._sigma.ctypes.data):
            return None
        return float(self._sigma[0])

    @property
    def amplification(self):
        """‖N‖_F (N = ∂q/∂z, :meth:`Partition.amplification`) at the last solved state (level ≥ 1)."""
        return float(self.arrays["amplification"][0])

    def failure(self, status):
        """The PartitionError of a cg_reduced status that means the partition cannot represent the
        configuration, else None."""
        if status not in _PROBLEMS:
            return None
        detail = f" (max |Φ| = {self.arrays['err'][0]:.3g})" if status == NO_CONVERGENCE else ""
        return PartitionError(_PROBLEMS[status] + detail, kind=_KINDS[status])

    def load_angles(self):
        """The joints' unwrapped angles into the C unwrapping state (before a C call) …"""
        state = self.arrays["ang_state"]
        for n, (_, cj, _) in enumerate(self._angle_rows):
            state[n] = cj.angle

    def store_angles(self):
        """… and back (after it)."""
        state = self.arrays["ang_state"]
        for n, (_, cj, _) in enumerate(self._angle_rows):
            cj.angle = float(state[n])

    def _call(self, level):
        self.load_angles()
        status = self._fn(self._problem_ptr, self._y_ptr, level)
        self.store_angles()
        problem = self.failure(status)
        if problem is not None:
            raise problem
        return status == OK
