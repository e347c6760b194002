"""``simulate``'s step loop in compiled code: ``cg_segment`` of segment.c, driving dopri.c's
Dormand–Prince pairs, adams.c's variable-order Adams (LSODA's) or bdf.c's variable-order BDF on the compiled reduced right-hand side
(``cg_reduced`` of reduced.c).

:class:`CompiledSegments` holds the buffers of one partition's loop: the integrator state, the
output rows and the steps written by one call, the Newton predictor.  A call (:meth:`advance`)
runs until the end time, a budget of steps or output points, or a condition Python decides
(segment.c's comment lists them; :mod:`solver.analysis.segments` acts on them as ``Run._dynamic``
does).  The time functions the kernels read (driver f, ḟ, f̈; force inputs u) are compiled too
(:func:`time_library`: :mod:`solver.codegen.timefunctions` written as C, one small library cached
by its text), so no Python runs inside a call.
"""
from __future__ import annotations

import contextlib
import ctypes
import hashlib

import numpy as np

from .build import address, announce, compiler, one_unit
from .cache import cache_dir, load_or_build
from .derive import CodegenUnavailable
from .timefunctions import PRELUDE, c_time_function

# integrator settings that step in C where they can (dopri.c's explicit methods, adams.c, bdf.c's BDF) …
COMPILED = {"auto": "dop853", "rk": "dop853", "dop853": "dop853", "rk45": "dopri5", "bdf": "bdf", "adams": "adams"}
# … and what they are in the Python loop
FALLBACK = {"auto": "adams", "rk": "rk", "dop853": "dop853", "rk45": "rk45", "bdf": "bdf", "adams": "adams"}
NAMES = {"dop853": "Dormand–Prince 8(5,3)", "dopri5": "Dormand–Prince 5(4)", "bdf": "BDF/NDF orders 1–5",
         "adams": "Adams–Moulton orders 1–12, BDF when stiff"}
END, BUDGET, STAGE, OUTPUT, QUALITY, STALL, TOO_SMALL, NOT_FINITE, DENSE, STIFF = range(10)    # segment.c's SEG_*
METHODS = {"dop853": 8, "dopri5": 5, "bdf": 1, "adams": 2}   # dopri.c's DP_DOP853, DP_DOPRI5, bdf.c's DP_BDF,
                                                                # adams.c's DP_ADAMS
BDF_HISTORY = 8           # bdf.c's BDF_HISTORY (differences D_0 … D_7)
ADAMS_HISTORY = 13        # adams.c's ADAMS_HISTORY (Nordsieck columns z_0 … z_12)
ADAMS_COEFFICIENTS = ADAMS_HISTORY * (ADAMS_HISTORY + 1) + 4 * ADAMS_HISTORY    # adams.c's ADAMS_COEFFICIENTS
SHORT_RUN = 1000          # output points a run (or what is left of it) writes in one call of cg_segment
_D, _I, _L, _P = ctypes.c_double, ctypes.c_int, ctypes.c_long, ctypes.c_void_p
TIME_FLAGS = ("-O1", "-shared", "-fPIC")
_LIBRARIES = {}              # time-function libraries loaded in this process, by key
# the arrays a call writes its output points into → the recorder's columns (CompiledSegments.write_into)
ROW_COLUMNS = {"out_t": "t", "out_q": "q", "out_qd": "qd", "out_qdd": "qdd", "out_lam": "lam",
               "out_viol": "constraint_violation"}


class _Dopri(ctypes.Structure):
    """``dp_t`` of dopri.c (same fields, same order)."""
    _fields_ = [("n", _I), ("method", _I), ("rtol", _D), ("atol", _D), ("hmax", _D), ("t", _D), ("h", _D),
                ("y", _P), ("f", _P), ("k", _P), ("rcont", _P), ("t_old", _D), ("h_old", _D), ("err_old", _D),
                ("rejected_last", _I), ("dense_ready", _I), ("nfev", _L), ("accepted", _L), ("rejected", _L),
                ("h_rho", _D)]


class _Bdf(ctypes.Structure):
    """``bdf_t`` of bdf.c (same fields, same order)."""
    _fields_ = [("order", _I), ("n_equal_steps", _I), ("jac_fresh", _I), ("lu_valid", _I), ("h_D", _D),
                ("c_lu", _D), ("newton_tol", _D), ("jac_step", _D), ("D", _P), ("J", _P), ("LU", _P), ("piv", _P),
                ("w", _P), ("njev", _L), ("nlu", _L), ("groups", _P), ("comp", _P), ("cstart", _P), ("cidx", _P),
                ("bstart", _P), ("ncomp", _I), ("csize", _I), ("afresh", _I)]


class _Adams(ctypes.Structure):
    """``adams_t`` of adams.c (same fields, same order)."""
    _fields_ = [("order", _I), ("wait", _I), ("order_used", _I), ("count", _I), ("held", _I), ("h_z", _D),
                ("rmax", _D), ("crate", _D), ("pdest", _D), ("pdlast", _D), ("z", _P), ("z_old", _P), ("e", _P),
                ("e_prev", _P), ("ewt", _P), ("work", _P), ("el", _P), ("tesco", _P), ("cm1", _P)]


class _Segment(ctypes.Structure):
    """``cg_segment_t`` of segment.c (same fields, same order)."""
    _fields_ = [("s", _P), ("time_fn", _P), ("times", _P), ("n_times", _I), ("next_out", _I), ("bound", _D),
                ("growth_bound", _D),
                ("max_steps", _I), ("max_out", _I), ("stall_steps", _I), ("stall_span", _D), ("window", _P),
                ("window_n", _I), ("window_pos", _I), ("dp", _Dopri), ("started", _I), ("phase", _I),
                ("t_last", _D), ("q_last", _P), ("qd_last", _P), ("q_acc", _P), ("qd_acc", _P), ("q_prev", _P),
                ("qd_prev", _P), ("t_prev", _D), ("sigma_acc", _D), ("row_norm_acc", _D),
                ("amplification_acc", _D), ("y_out", _P),
                ("n_out", _I), ("store_jac", _I), ("out_t", _P), ("out_q", _P), ("out_qd", _P), ("out_qdd", _P),
                ("out_lam", _P), ("out_viol", _P), ("out_jac", _P), ("n_steps", _I), ("step_t", _P), ("step_h", _P),
                ("rhs_count", _L), ("cg_status", _I), ("fail_t", _D), ("fail_y", _P), ("ang_acc", _P),
                ("ang_rate", _P), ("guard", _D), ("shrink", _D), ("branch_refusals", _L), ("out_sigma", _P),
                ("stage_retries", _I), ("stiff_low", _D), ("stiff_high", _D), ("stiff_steps", _I), ("stiff_reset", _I),
                ("stiff_count", _I), ("nonstiff_count", _I), ("band", _P),
                ("k_output", _P), ("output", _P), ("bdf", _Bdf), ("stiff_h", _D), ("stiff_h_rho", _D),
                ("out_cond", _P), ("adams", _Adams), ("ncl", _I), ("nbody", _I), ("col_cluster", _P),
                ("body_cluster", _P), ("cl_parent", _P), ("cl_label", _P), ("body_link", _P)]


class _Band(ctypes.Structure):
    """``cg_band_t`` of band.c (same fields, same order)."""
    _fields_ = [("at", _D), ("clear", _D), ("tries", _I), ("active", _I), ("n_hist", _I), ("refused", _I),
                ("t1", _D), ("s1", _D), ("t2", _D), ("s2", _D), ("t_pass", _D), ("width", _D), ("h_placed", _D),
                ("placed", _L),
                ("refusals", _L)]


def stage_nodes(runtime, method):
    """The stage nodes (fractions of a step, dense output included) of ``method`` ("dop853",
    "dopri5") in dopri.c's tableaus, read from the runtime library (band.c cg_band_nodes)."""
    fn = runtime.cg_band_nodes
    fn.argtypes, fn.restype = [ctypes.c_int, ctypes.c_void_p], ctypes.c_int
    out = np.zeros(16)
    return out[:fn(METHODS[method], out.ctypes.data)].tolist()


def time_source(driver_fns, input_fns) -> str:
    """C text of ``void mbs_time(double t, double *f, double *fd, double *fdd, double *u)``: the
    drivers' f, ḟ, f̈ and the inputs' u at t.  Raises TypeError for a function that is not an
    expression or a table (e.g. a Python callable given as an input)."""
    lines = ["#include <math.h>", PRELUDE]
    lines += [c_time_function(fn, f"mbs_driver_{k}") for k, fn in enumerate(driver_fns)]
    lines += [c_time_function(fn, f"mbs_u_{k}") for k, fn in enumerate(input_fns)]
    body = "".join(f"    mbs_driver_{k}(t, v); f[{k}] = v[0]; fd[{k}] = v[1]; fdd[{k}] = v[2];\n"
                   for k in range(len(driver_fns)))
    body += "".join(f"    mbs_u_{k}(t, v); u[{k}] = v[0];\n" for k in range(len(input_fns)))
    lines.append("void mbs_time(double t, double *f, double *fd, double *fdd, double *u)\n{\n    double v[3];\n"
                 f"{body}    (void)v; (void)f; (void)fd; (void)fdd; (void)u;\n}}\n")
    return "\n".join(lines)


def time_library(system):
    """Address of the compiled ``mbs_time`` of the system's drivers and force inputs (None when it
    has none), from the codegen cache (``time-<key>``, checked like every entry:
    :mod:`solver.codegen.cache`) or compiled now (well under a second: a few functions).
    Raises TypeError when a function cannot be written as C, CodegenUnavailable when it does not
    compile or the cache is refused."""
    drivers, inputs = list(system._driver_fns), list(system._inputs)
    if not drivers and not inputs:
        return None
    source = time_source(drivers, inputs)
    key = "time-" + hashlib.sha256("\n".join([source, compiler(), *TIME_FLAGS]).encode()).hexdigest()[:32]
    lib = _LIBRARIES.get(key)
    if lib is None:
        build = one_unit(source, key, TIME_FLAGS, before=announce)
        lib = _LIBRARIES[key] = load_or_build(cache_dir(), key, build)[0]
    return ctypes.cast(lib.mbs_time, ctypes.c_void_p).value


def prepare_time_library(system):
    """Compile the system's time-function library now (in the compile step's visible, cancellable
    build) rather than at the first run; a function without a C form or a failed compile is left
    for the run, whose step loop then says why it runs in Python."""
    with contextlib.suppress(TypeError, CodegenUnavailable):
        time_library(system)


class BandRows:
    """Φ_q[rows] of the output points of a band partition as segment.c writes them: per point the
    band problem's J entries (banded.py: rows in its order, entry e at column ``j_col[e]``), O(nnz)
    where the dense rows are r × nq."""

    def __init__(self, arrays, r, nq):
        self.nnz = int(arrays["j_ptr"][r])
        self.shape = (r, nq)
        self._rows = np.asarray(arrays["pos"])[np.repeat(np.arange(r), np.diff(arrays["j_ptr"][:r + 1]))]
        self._cols = np.asarray(arrays["j_col"][:self.nnz])

    def stack(self, values):
        """The :class:`StackedRows` of ``values`` (N × nnz)."""
        return StackedRows(np.array(values), self)


class StackedRows:
    """N sparse Φ_q[rows] (the partition's order of rows) as the conditioning read-out takes them
    (solver.partitioning.conditioning, as an (N, r, nq) array): ``shape``, ``ndim``, a boolean or integer
    index, iteration (CSR matrices, exact zeros dropped: the matrices csr_matrix makes of the dense rows),
    and the dense array (np.asarray: the SVD of up to SVD_MAX_ROWS rows)."""

    ndim = 3

    def __init__(self, values, rows):
        self.values, self._rows = values, rows
        self.shape = (len(values), *rows.shape)

    def __len__(self):
        return len(self.values)

    def __getitem__(self, index):
        return StackedRows(self.values[index], self._rows)

    def __iter__(self):
        import scipy.sparse as sparse
        for v in self.values:
            J = sparse.csr_matrix((v, (self._rows._rows, self._rows._cols)), shape=self._rows.shape)
            J.eliminate_zeros()
            yield J

    def __array__(self, dtype=None, copy=None):
        out = np.zeros(self.shape)
        out[:, self._rows._rows, self._rows._cols] = self.values
        return out if dtype is None else out.astype(dtype)


class CompiledSegments:
    """The compiled step loop of one partition (module docstring).

    ``reduction``: the partition's :class:`solver.codegen.reduced.CompiledReduction`; ``times``: the
    output times (all of the run; ``next_out`` the first still to write); ``bound``, ``growth_bound``:
    fraction · quality_ref and growth · amplification_ref of Partition.degraded (0 and inf: no
    dependent rows); ``window``: the stall watchdog's
    ring of step times, (array, count, position), shared by the partitions of a run; ``branches``:
    the run's :class:`solver.formulations.branches.Branches` (the accepted angles and rates, which a call
    reads and advances); ``stage_retries``: step_rules.STAGE_RETRIES (a failed stage Newton's shorter
    retries); ``stiffness``: (h·ρ band low, high, steps in it, steps outside it that reset the count)
    of segment.c's SEG_STIFF, or None (never); ``band``: (at, clear, tries) of band.c, the stages kept
    out of a singular pass's round-off band (solver.analysis.band_step), or None (never); ``post``: the
    output rows are post-processed in C too (:class:`solver.codegen.output.CompiledOutput`, :meth:`post_rows`);
    ``jac_step``: the BDF Jacobian's relative difference step (step_rules.JACOBIAN_STEP); ``structure``:
    the clusters of the unknowns (:func:`solver.codegen.bdf_structure.clusters`) or None (a dense J)."""

    def __init__(self, reduction, method, time_fn, times, next_out, rtol, atol, max_step, bound, growth_bound,
                 stall, window, branches, stage_retries, stiffness=None, band=None, max_steps=200, max_out=100,
                 post=False, jac_step=1e-7, cache=None, structure=None):
        from ..formulations.branches import BRANCH_GUARD, BRANCH_SHRINK
        self.reduction = reduction
        self.branches = branches
        self._angles = [branches.index[id(cj)] for _, cj, _ in reduction._angle_rows]
        s = reduction.problem
        nq, m, f, r = s.nq, s.m, s.dof, s.r
        # the conditioning read-out in C from COMPILED_ESTIMATE_ROWS rows (banded.c cg_band_row_sigma: the sparse
        # estimates at every row), else from Φ_q[rows] of each row in Python (partitioning/conditioning.py)
        self.row_sigma = reduction.row_sigma
        self.store_jac = r > 0 and not self.row_sigma
        problem = reduction.band           # Φ_q[rows] of a row: the band problem's J entries (O(nnz)), or dense
        self._rows = None if problem is None else BandRows(problem.arrays, r, nq)
        row_size = r * nq if problem is None else self._rows.nnz
        # a short run's rows in one call (SHORT_RUN output points or fewer, its rows within 4 MB: no call back
        # to Python per max_out rows); longer runs come back every max_out rows (progress, cancel)
        rows_left = len(times) - next_out
        if rows_left <= SHORT_RUN and rows_left * (36 * len(reduction.system.body_names) + 4 * nq + m) <= 500_000:
            max_out = max(max_out, rows_left)
        if self.store_jac:                                           # Φ_q[rows] of each row: bounded memory
            max_out = max(1, min(max_out, 2_000_000 // max(1, row_size)))
        self.max_out = max_out
        self.times = np.ascontiguousarray(times, dtype=float)
        self.window = window
        n = 2 * f
        # the buffers (and the compiled output's) of a previous run on this workspace when they fit (``cache``,
        # Run.cache): each is written before it is read (dp_init, start, the rows and steps of a call)
        cache = {} if cache is None else cache
        key = (nq, m, f, row_size, max_out, max_steps, len(self._angles), bool(post), self.store_jac, self.row_sigma)
        kept = cache.get("segments")
        if kept is None or kept[0] != key:
            output = None
            if post:
                from .output import CompiledOutput
                output = CompiledOutput(reduction.system, max_out, reduction.arrays, reduction.jac_positions)
            arrays = self._buffers(nq, m, n, row_size, max_out, max_steps, len(self._angles))
            kept = cache["segments"] = (key, arrays, output, {name: address(v) for name, v in arrays.items()})
        self.arrays, self.output, ptr = kept[1:]
        if self.output is not None:          # its context reads this run's reduction buffers (par, f, u; λ, Φ_q)
            self.output.bind(reduction.arrays, jac_positions=reduction.jac_positions)
        self.y = self.arrays["dp_memory"][:n]
        self.band = None if band is None else _Band(at=band[0], clear=band[1], tries=band[2], t_pass=np.nan, h_placed=np.nan)
        stiff_low, stiff_high, stiff_steps, stiff_reset = stiffness or (0.0, 0.0, 0, 0)
        self.seg = _Segment(s=ctypes.addressof(s), time_fn=time_fn, times=address(self.times),
                            n_times=len(self.times), next_out=next_out, bound=bound, growth_bound=growth_bound,
                            max_steps=max_steps,
                            max_out=max_out, stall_steps=len(window[0]), stall_span=stall, window=address(window[0]),
                            window_n=window[1], window_pos=window[2], store_jac=int(self.store_jac),
                            guard=BRANCH_GUARD, shrink=BRANCH_SHRINK, stage_retries=stage_retries,
                            stiff_low=stiff_low, stiff_high=stiff_high, stiff_steps=stiff_steps, stiff_reset=stiff_reset,
                            band=None if self.band is None else ctypes.addressof(self.band),
                            **{name: ptr[name] for name in ("q_last", "qd_last", "q_acc", "qd_acc", "q_prev", "qd_prev",
                                                            "y_out", "fail_y", "out_t", "out_q", "out_qd", "out_qdd", "out_lam",
                                                            "out_viol", "out_sigma", "out_jac", "step_t", "step_h", "ang_acc",
                                                            "ang_rate")})
        self.seg.out_cond = ptr["out_cond"] if self.row_sigma else None
        self.targets = {name: self.arrays[name] for name in ROW_COLUMNS}     # where a call writes its rows
        if self.output is not None:
            self.seg.k_output, self.seg.output = self.output.function, self.output.pointer
        lib = reduction.system.kernels.runtime
        fn, init = lib.cg_segment, lib.cg_segment_init
        fn.argtypes, fn.restype = [ctypes.c_void_p], ctypes.c_int
        init.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p] + [ctypes.c_double] * 3 + [ctypes.c_void_p] * 2 \
            + [ctypes.c_double, ctypes.c_void_p]
        init.restype = None
        self._fn, self._ptr = fn, ctypes.cast(ctypes.pointer(self.seg), ctypes.c_void_p)
        init(self._ptr, METHODS[method], ptr["dp_memory"], rtol, atol, max_step or np.inf, ptr["bdf_memory"],
             ptr["pivots"], jac_step, ptr["adams_memory"])
        if structure is not None:
            self._structure(n, *structure)

    def _structure(self, n, col_cluster, body_cluster, count):
        """Give BDF the clusters of the unknowns (segment.c segment_groups) and its components' work."""
        self._groups = {"col_cluster": col_cluster, "body_cluster": body_cluster,
                        "cl_parent": np.zeros(count, dtype=np.intc), "cl_label": np.zeros(count, dtype=np.intc),
                        "body_link": np.zeros(max(1, len(body_cluster)), dtype=np.intc),
                        "comp": np.zeros(n, dtype=np.intc), "cstart": np.zeros(n + 1, dtype=np.intc),
                        "cidx": np.zeros(n, dtype=np.intc), "bstart": np.zeros(n + 1, dtype=np.int64)}
        ptr = {name: address(a) for name, a in self._groups.items()}
        seg, bdf = self.seg, self.seg.bdf
        seg.ncl, seg.nbody = count, len(body_cluster)
        for name in ("col_cluster", "body_cluster", "cl_parent", "cl_label", "body_link"):
            setattr(seg, name, ptr[name])
        for name in ("comp", "cstart", "cidx", "bstart"):
            setattr(bdf, name, ptr[name])

    def _buffers(self, nq, m, n, row_size, max_out, max_steps, angles):
        """The arrays of the loop (n = 2 dof; ``angles`` unwrapped angles): its state and what a call writes
        (Φ_q[rows] of each row when stored, ``row_size`` entries: dense r × nq or the band problem's J
        entries; σ_min / σ_max when read out in C)."""
        return {
            "dp_memory": np.zeros(max(1, 28 * n)), "bdf_memory": np.zeros(max(1, (BDF_HISTORY + 7) * n + 2 * n * n)),
            "adams_memory": np.zeros((2 * ADAMS_HISTORY + 4) * n + ADAMS_COEFFICIENTS),
            "q_last": np.zeros(nq), "qd_last": np.zeros(nq),
            "q_acc": np.zeros(nq), "qd_acc": np.zeros(nq), "q_prev": np.zeros(nq), "qd_prev": np.zeros(nq),
            "y_out": np.zeros(max(1, n)), "fail_y": np.zeros(max(1, n)), "out_t": np.zeros(max_out), "out_q": np.zeros((max_out, nq)),
            "out_qd": np.zeros((max_out, nq)), "out_qdd": np.zeros((max_out, nq)),
            "out_lam": np.zeros((max_out, max(1, m))), "out_viol": np.zeros(max_out), "out_sigma": np.zeros(max_out),
            "out_jac": np.zeros((max_out if self.store_jac else 1, max(1, row_size))),
            "out_cond": np.zeros(max_out if self.row_sigma else 1),
            "step_t": np.zeros(max_steps), "step_h": np.zeros(max_steps),
            "ang_acc": np.zeros(max(1, angles)), "ang_rate": np.zeros(max(1, angles)),
            "pivots": np.zeros(max(1, n), dtype=np.intc)}

    def start(self, t, y, q, qd):
        """Start at the consistent state (t, y = [z, ż], q, q̇)."""
        self.seg.dp.t = t
        self.y[:] = y
        self.arrays["q_acc"][:] = q
        self.arrays["qd_acc"][:] = qd
        self.seg.started = 0

    def write_into(self, target):
        """Write the next call's output rows into ``target`` — views of max_out rows of the recorder's
        buffer, {column: rows} (``Recorder.reserve``), the compiled output's columns and "energy"
        included — or, None, into this loop's own arrays (:meth:`rows` reads them either way)."""
        self.targets = {name: self.arrays[name] if target is None else target[column]
                        for name, column in ROW_COLUMNS.items()}
        for name, rows in self.targets.items():
            setattr(self.seg, name, address(rows))
        if self.output is not None:
            self.output.write_into(target)
        self.in_place = target is not None

    in_place = False

    def advance(self):
        """One call of cg_segment; returns its status (END, BUDGET, …).  The accepted angles and their
        rates go in from the run's Branches and come back advanced to the last accepted step."""
        a, b, n = self.arrays, self.branches, len(self._angles)
        a["ang_acc"][:n], a["ang_rate"][:n] = b.angle[self._angles], b.rate[self._angles]
        status = self._fn(self._ptr)
        b.angle[self._angles], b.rate[self._angles] = a["ang_acc"][:n], a["ang_rate"][:n]
        b.t = self.seg.dp.t
        self.window[1:] = self.seg.window_n, self.seg.window_pos
        return status

    # ---- what a call wrote ------------------------------------------------------------------------
    @property
    def t(self):
        """Time of the last accepted step."""
        return self.seg.dp.t

    def rows(self):
        """(t, q, q̇, q̈, λ, max |Φ|, Φ_q[rows] or None, the solves' σ_min(Φ_q[rows] U) estimates) of the
        output points of the last call (views)."""
        a, w, n, s = self.arrays, self.targets, self.seg.n_out, self.reduction.problem
        jac = None
        if self.store_jac:
            jac = a["out_jac"][:n].reshape(n, s.r, s.nq) if self._rows is None else self._rows.stack(a["out_jac"][:n])
        return (w["out_t"][:n], w["out_q"][:n], w["out_qd"][:n], w["out_qdd"][:n], w["out_lam"][:n, :s.m],
                w["out_viol"][:n], jac, a["out_sigma"][:n])

    def conditioning(self):
        """σ_min / σ_max of Φ_q[rows] of the output points of the last call (a view), None when they are
        read out in Python (from :meth:`rows`' Φ_q[rows] and σ_min estimates)."""
        return self.arrays["out_cond"][:self.seg.n_out] if self.row_sigma else None

    def post_rows(self):
        """The post-processed columns of the output points of the last call (views;
        :meth:`solver.codegen.output.CompiledOutput.rows`), None when they are left to Python."""
        return None if self.output is None else self.output.rows(self.targets["out_t"][:self.seg.n_out])

    def steps(self):
        """(t, h) of the steps of the last call (views)."""
        n = self.seg.n_steps
        return self.arrays["step_t"][:n], self.arrays["step_h"][:n]

    def last_row(self):
        """(t, q, q̇) of the last output point of the last call (copies)."""
        t, q, qd = self.rows()[:3]
        return float(t[-1]), q[-1].copy(), qd[-1].copy()

    def accepted(self):
        """(t, q, q̇) of the last accepted step."""
        return self.seg.dp.t, self.arrays["q_acc"].copy(), self.arrays["qd_acc"].copy()

    def failed(self):
        """(t, y) of the failed cg_reduced solve (STAGE, OUTPUT)."""
        return self.seg.fail_t, self.arrays["fail_y"].copy()

    def step_start(self):
        """(t, q, q̇) at the start of the last step."""
        return self.seg.t_prev, self.arrays["q_prev"].copy(), self.arrays["qd_prev"].copy()
