"""Compile the generated C with the system compiler into a cached shared library; load with ctypes.

Cache (:mod:`solver.codegen.cache`: a folder writable by this user alone, libraries loaded only from bytes
with their recorded SHA-256): one entry ``<key>`` (``.c``, ``.so`` and ``.json``: derivation and compile
times, the library's SHA-256) per key, the SHA-256 of the model description
(:func:`solver.codegen.derive.describe`: structure and geometry, not the parameters), the source of the
derivation modules and the compiler command.  The model-independent C (the reduced right-hand side, the
integrator and the step loop: reduced.c, dopri.c, segment.c) is compiled once into ``runtime-<key>``
(:func:`runtime_library`, keyed by that source and the compiler command), which every model's library
shares: it calls the model's kernels through the pointers of its problem struct
(:mod:`solver.codegen.reduced`).
"""
from __future__ import annotations

import contextlib
import contextvars
import copy
import ctypes
import hashlib
import json
import os
import re
import shutil
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from ..errors import Cancelled
from .. import forces
from ..constraints import forms
from ..flexible import floating, joints as flexible_joints, loads as flexible_loads, modal
from ..formulations import mobilizers
from ..math import namespace, rotations
from ..math.collector import collection_paused
from ..vehicle import road, speed_control, tire
from . import derive, emit, flexible, force_hooks, poly, relative_layout, tree
from .cache import cache_dir, load_or_build
from .derive import CodegenUnavailable

# Optimisation by what is compiled (measured on the 14-body car, 8,800 lines, and the 200-link chain):
# long straight-line kernels compile 5× faster at -O0 than at -O1 (car 0.3 s vs 1.9 s per unit, chain
# 11 s vs 24 s in all) and their runs are within the noise (car) or 20 % slower (chain), since the
# loops that matter (relative.c, articulated.c; reduced.c in the runtime library) are in fixed code, which keeps -O2
# (articulated.c asks for O3 itself).  Shorter kernels get -O1, where gcc also fuses each sin/cos pair
# into one sincos.  -O1's cost grows faster than the unit (gcc 12, CPU s at -O0 / -O1, load 15): ~500
# lines 0.06 / 0.1–0.2, the 7-DOF arm's tree map units of 965 and 1,015 lines 0.09 / 0.30 and 0.10 /
# 0.43, 1,261–1,500 lines 0.10–0.17 / 0.3–0.8, the 200-link chain's 12,794-line cgt_edges 0.65 / 8.1.
# LONG_UNIT 1100 keeps -O1 where a unit costs ≲ 0.45 s there: the arm's runs ~10 % faster at rtol 1e-4
# (cgt_edges every right-hand side; the same rows bit for bit) for +0.55 s of CPU in its cold build.
KERNEL_FLAGS = ("-O1", "-fPIC")           # units of generated kernels up to LONG_UNIT lines
LONG_KERNEL_FLAGS = ("-O0", "-fPIC")      # longer units
LONG_UNIT = 1100
FIXED_FLAGS = ("-O2", "-fPIC")            # the formulation's fixed C and its layout
# the runtime library (reduced.c, dopri.c, segment.c), compiled once per cache folder, beside the first model's
# derivation: -O1 compiles in 0.30 s of CPU (-O2 0.43 s) and runs as fast.  Its calls of the kernels through
# pointers cost nothing measurable: a level-2 cg_reduced of loops_50 247–261 µs (-O1 and -O2) against 254–271 µs
# with direct calls inside each model's library, of the 14-body car 21.2–22.0 against 21.2–22.1 µs.  reduced.c's
# dense algebra asks for O3 itself (CG_HOT: vectorized row-by-column loops, the same numbers; the 23-body car's
# compiled loop 0.32 → 0.285 s CPU; the library's compile 1.0 → 1.17 s CPU at load 15)
RUNTIME_FLAGS = ("-O1", "-fPIC", "-shared")
# compile time per line by optimisation level, relative to -O0 (measured with gcc 12 on the arm's units:
# -O0 0.06 ms, -O1 0.25 ms, -O2 0.7 ms per line): units start most expensive first
COMPILE_COST = {"-O0": 1, "-O1": 4, "-O2": 12}
CFLAGS = (*KERNEL_FLAGS, *LONG_KERNEL_FLAGS, str(LONG_UNIT), *FIXED_FLAGS)    # in the cache key
JOBS = max(1, os.cpu_count() or 1)        # compilers run at once
HEADER = "#include <math.h>\n#include <string.h>\n"
_FUNCTION = re.compile(r"^void (\w+)\((.*?)\)\n\{\n.*?^\}$", re.S | re.M)
COMPILE_TIMEOUT = 600.0      # s
CANCEL_POLL = 0.05           # s between looks at the cancel flag while the compiler runs
_BUILD = contextvars.ContextVar("codegen_build", default=(None, None, []))  # (on_event, cancel, announced?)
# the runtime library, in this order: the compiled reduced right-hand side and its many-loop band algebra,
# the Dormand–Prince integrator (shared with the FMU), the BDF and the Adams method of the compiled loop,
# the singular-pass rule, simulate's step loop, the compiled contact's broad phase and forces, and the
# Cartesian output rows
RUNTIME_C = tuple(Path(__file__).with_name(name) for name in ("reduced.c", "banded.c", "dopri.c", "bdf.c", "adams.c", "band.c",
                                                              "segment.c",
                                                              "broadphase.c", "contact.c", "output_cartesian.c"))
RELATIVE_C = Path(__file__).with_name("relative.c")    # relative kernels from the Cartesian ones
TREE_BODIES_C = Path(__file__).with_name("tree_bodies.c")    # the tree's M̂, Q̂, composite K, L (both below)
ARTICULATED_C = Path(__file__).with_name("articulated.c")    # open-tree dynamics in O(n)
OUTPUT_TREE_C = Path(__file__).with_name("output_tree.c")    # the output rows of both (after them, in their unit)
CARTESIAN_PACKED_C = Path(__file__).with_name("cartesian_packed.c")    # a Cartesian library's dense kernels from its packed ones
PRINTER = Path(__file__).with_name("printer.py")       # the C printer (not imported: it imports sympy)
# the modules whose code the generated C comes from (the joint kinematics, the equation forms, the bushing,
# the spring-damper, the tire, the road profiles and the flexible bodies' terms are written once, in
# mobilizers, forms, forces, vehicle and solver.flexible, for numbers and for sympy; force_hooks lays out
# the generated force kinds) and the C printer: editing any of them invalidates the cache
_SOURCES = hashlib.sha256(b"".join([Path(m.__file__).read_bytes() for m in (derive, emit, tree, rotations, mobilizers,
                                                                             force_hooks, forces, forms, namespace, tire, road,
                                                                             speed_control,
                                                                             flexible, poly, floating, flexible_joints,
                                                                             flexible_loads, modal, relative_layout)]
                                   + [p.read_bytes() for p in (RELATIVE_C, TREE_BODIES_C, ARTICULATED_C, OUTPUT_TREE_C,
                                                           CARTESIAN_PACKED_C, PRINTER)])).hexdigest()
MODEL_LIBRARIES = "[0-9a-f]" * 32 + ".so"    # glob of a cache folder's model libraries (not runtime-*, time-*)
_RUNTIME = {}                    # runtime libraries loaded in this process, by path (without .so)
_RUNTIME_LOCK = threading.Lock()


def address(a) -> int:
    """The address of the first element of the numpy array ``a`` (``a.ctypes.data``).  A writable
    C-contiguous array of at least one byte is read through the buffer protocol
    (``ctypes.c_char.from_buffer``: 0.7 µs, where ``a.ctypes.data`` builds numpy's ctypes helper
    object, 3.5 µs on the loaded 2-core machine; a warm run of the arm takes ≈ 50 of them); any
    other array through ``a.ctypes.data``."""
    try:
        return ctypes.addressof(ctypes.c_char.from_buffer(a))
    except (TypeError, ValueError, BufferError):
        return a.ctypes.data


class Buffers:
    """Functions of a loaded library bound once to argument buffers of their own.

    ``self[name]`` is a buffer (float64, written and read by the caller); ``call(name)`` runs the
    function bound as ``name`` on its buffers.  The buffers' addresses are bound once: converting
    numpy arrays per call (``np.ctypeslib.ndpointer`` argtypes, or ``.ctypes.data``) costs 2–40 µs
    per argument here, more than the kernels.  The buffers belong to one run:
    :func:`copy.deepcopy` (a system's workspace, :mod:`solver.formulations.workspace`) gives new
    buffers holding the same values, bound to the same library."""

    def __init__(self, lib, sizes, calls):
        """lib: the loaded library; sizes: {buffer: length}; calls: {name: (symbol, buffer names
        in argument order)}."""
        self.lib, self.signatures = lib, dict(calls)
        self._bind({name: np.zeros(max(1, n)) for name, n in sizes.items()})

    def __getitem__(self, name):
        return self.buffers[name]

    def __deepcopy__(self, memo):
        """New buffers holding the same values: a buffer whose bytes are all zero as a new
        ``np.zeros``, whose pages the system gives only when they are first written (a dense Φ_q of
        the four-bar row at N = 1,000: 80 MB, 0.16 s to copy, never written by the packed kernels)."""
        twin = copy.copy(self)
        twin._bind({name: b.copy() if b.view(np.uint8).any() else np.zeros(b.shape, b.dtype)
                    for name, b in self.buffers.items()})
        return twin

    def call(self, name):
        fn, args = self._calls[name]
        fn(*args)

    def _bind(self, buffers):
        self.buffers = buffers
        self._calls = {}
        at = {name: ctypes.c_void_p(address(b)) for name, b in buffers.items()}   # once per buffer
        for name, (symbol, args) in self.signatures.items():
            fn = getattr(self.lib, symbol)
            fn.argtypes = [ctypes.c_void_p] * len(args)
            fn.restype = None
            self._calls[name] = (fn, tuple(at[a] for a in args))


class Kernels(Buffers):
    """The model's kernels: ``call(name)`` runs ``cg_<name>`` on the buffers ``q qd par f u``
    (inputs, written by the caller) and the kernel's outputs (``phi jac ang``, ``gamma``, ``M``,
    ``Q``, read by the caller; ``jac`` and ``M`` also as matrices).
    ``info``: key, path, cache_hit, derive_s, compile_s, load_s, subexpressions, c_lines.
    ``runtime``: the runtime library (:func:`runtime_library`) that runs them.

    The dense M (nq², 392 MB for 1000 free bodies) is allocated at its first use (:meth:`need_mass`:
    the mass kernel, a dense or band reduction); an open tree's O(n) reduction never reads it."""

    def __init__(self, lib, info, desc):
        self.info = info
        self.shape = m, nq = desc["m"], desc["nq"]
        sizes = {"q": nq, "qd": nq, "par": desc["n_parameters"], "f": len(desc["drivers"]),
                 "u": desc["n_inputs"], "phi": m, "jac": m * nq, "ang": len(desc["angles"]), "gamma": m,
                 "M": 1, "Q": nq}
        calls = {name: (f"cg_{name}", emit.INPUTS + emit.OUTPUTS[name]) for name in derive.KERNELS}
        super().__init__(lib, sizes, calls)
        self.runtime = runtime_library()
        self._pointers = {}

    def pointer(self, symbol):
        """Address of the library's function ``symbol``; None when the library has none (found once per
        library and symbol: every run asks for its output functions)."""
        if symbol not in self._pointers:       # shared with the workspaces' copies (the same library)
            fn = getattr(self.lib, symbol, None)
            self._pointers[symbol] = None if fn is None else ctypes.cast(fn, ctypes.c_void_p).value
        return self._pointers[symbol]

    def packed_layout(self):
        """{"jac": flat row-major positions of the packed Φ_q's entries, "M": the packed M's} of a Cartesian
        library (cartesian_packed.c's cgp_jac_at, cgp_mass_at: sorted), None for the other libraries."""
        if not hasattr(self, "_layout"):
            read = lambda name: np.array((ctypes.c_int * ctypes.c_int.in_dll(self.lib, f"cgp_{name}").value)  # noqa: E731
                                         .in_dll(self.lib, f"cgp_{name}_at"), dtype=int)
            self._layout = ({"jac": read("jac"), "M": read("mass")} if self.pointer("cg_mass_packed") else None)
        return self._layout

    def need_mass(self):
        """Allocate the dense M buffer (once; the functions are bound to it again).  Call it before
        taking the buffer's address or calling a kernel that writes M."""
        nq = self.shape[1]
        if self.buffers["M"].size != nq * nq:
            self._bind({**self.buffers, "M": np.zeros(nq * nq)})

    def call(self, name):
        if "M" in self.signatures[name][1]:
            self.need_mass()
        super().call(name)

    def _bind(self, buffers):
        super()._bind(buffers)
        m, nq = self.shape
        self.jac = buffers["jac"].reshape(m, nq) if m else np.zeros((0, nq))
        M = buffers["M"]
        self.M = M.reshape(nq, nq) if M.size == nq * nq else None


def compiler() -> str:
    """The C compiler: ``$CC`` (read at each use, so the GUI and a run agree after a change), else ``cc``."""
    return os.environ.get("CC") or "cc"


def compiler_path() -> str:
    """Where :func:`compiler` is installed; "" when it is not found (runs then use the generic path)."""
    return shutil.which(compiler()) or ""


@contextlib.contextmanager
def building(on_event=None, cancel=None):
    """Within this block, a build that is not in the cache tells ``on_event`` ("compiling the
    model…", kind "codegen") and stops with :class:`Cancelled` when ``cancel()`` returns True
    (checked before and after the derivation, and while the C compiler runs, which is then killed)."""
    token = _BUILD.set((on_event, cancel, []))
    try:
        yield
    finally:
        _BUILD.reset(token)


def announce():
    """Tell the build's ``on_event`` that compiling starts ("compiling the model…"), once per build
    (the model's kernels and its time functions may both compile)."""
    on_event, _, announced = _BUILD.get()
    if on_event is not None and not announced:
        announced.append(True)
        on_event({"time": 0.0, "kind": "codegen", "message": "compiling the model…"})


def _check_cancel():
    cancel = _BUILD.get()[1]
    if cancel is not None and cancel():
        raise Cancelled()


def cache_key(desc) -> str:
    text = json.dumps({"description": desc, "sources": _SOURCES, "compiler": [compiler(), *CFLAGS]}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def load_kernels(desc) -> Kernels:
    """The compiled kernels of a description, from the cache or derived and compiled now (the runtime
    library, when it is not in the cache either, compiles meanwhile in a thread of its own).
    Raises CodegenUnavailable when there is no compiler, compilation fails or the cache is refused
    (:mod:`solver.codegen.cache`)."""
    t0 = time.perf_counter()
    folder = cache_dir()
    key = cache_key(desc)

    def build(tmp):
        threading.Thread(target=_prepare_runtime).start()     # (a run that ends first waits for it)
        return _generate(desc, tmp, key)

    lib, info, hit = load_or_build(folder, key, build)
    info.update(cache_hit=hit, path=str(folder / f"{key}.so"))
    try:
        kernels = Kernels(lib, info, desc)
    except AttributeError as exc:
        raise CodegenUnavailable(f"cannot load the compiled library {folder / key}.so: {exc}") from None
    info["load_s"] = time.perf_counter() - t0
    return kernels


# ---- helpers --------------------------------------------------------------------------------------
def runtime_source() -> str:
    """The C text of the runtime library: RUNTIME_C's files (the FMU compiles it too)."""
    return "".join(p.read_text() + "\n" for p in RUNTIME_C)


def runtime_library():
    """The runtime library (``cg_reduced``, ``cg_segment``), loaded once per process, from the cache
    (``runtime-<key>.so``, the key the SHA-256 of its source and the compiler command) or compiled
    now.  Raises CodegenUnavailable when it does not compile or load."""
    source = runtime_source()
    key = "runtime-" + hashlib.sha256(json.dumps([source, compiler(), *RUNTIME_FLAGS]).encode()).hexdigest()[:32]
    folder = cache_dir()
    with _RUNTIME_LOCK:
        lib = _RUNTIME.get(folder / key)
        if lib is None:
            lib = _RUNTIME[folder / key] = _load_runtime(source, folder, key)
        return lib


def _prepare_runtime():
    """runtime_library() for its side effect (in a thread, beside a model's build); a failure is
    raised again, to the caller, when the kernels ask for the library."""
    with contextlib.suppress(CodegenUnavailable):
        runtime_library()


def _load_runtime(source, folder, key):
    return load_or_build(folder, key, one_unit(source, key, RUNTIME_FLAGS))[0]


def one_unit(source, key, flags, before=lambda: None):
    """The build (for :func:`solver.codegen.cache.load_or_build`) of a library of one C unit:
    ``before()``, then ``source`` compiled with ``flags`` into ``<key>.so``."""
    def build(tmp):
        before()
        c_path = tmp / f"{key}.c"
        c_path.write_text(source)
        _run_compilers([[compiler(), *flags, "-o", str(tmp / f"{key}.so"), str(c_path), "-lm"]])
        return {}
    return build


def _generate(desc, tmp, key) -> dict:
    """Derive and compile the kernels of ``desc`` into ``tmp/<key>.c`` and ``tmp/<key>.so``; their metadata."""
    announce()
    _check_cancel()
    t0 = time.perf_counter()
    formulation = desc.get("formulation")
    fixed = {"articulated": _articulated_layout, "relative": _relative_layout}.get(formulation, lambda d: "")(desc)
    with ThreadPoolExecutor(max_workers=4) as pool:
        # the fixed unit (its layout is known from the description) compiles while the kernels are
        # derived, and each part of the kernels while the next part is derived
        compiling = [pool.submit(contextvars.copy_context().run, _objects, _fixed_units(fixed), tmp, "fixed")]
        parts, n_sub = [], 0
        with collection_paused():
            for k, (text, n, *fixed_part) in enumerate({"articulated": _articulated_kernels,
                                                        "relative": _relative_kernels}.get(formulation,
                                                                                           _cartesian_library)(desc)):
                _check_cancel()
                parts.append(text)
                n_sub += n
                units = _fixed_units(text) if fixed_part else _units(text)      # (text, n, True): fixed code
                compiling.append(pool.submit(contextvars.copy_context().run, _objects, units, tmp, f"part{k}_"))
        source = "\n".join([*parts, fixed])
        t1 = time.perf_counter()
        so_tmp = tmp / f"{key}.so"
        (tmp / f"{key}.c").write_text(source)
        objects = [o for job in compiling for o in job.result()]
        _run_compilers([[compiler(), "-shared", "-o", str(so_tmp), *objects, "-lm"]])
        t2 = time.perf_counter()
    return {"key": key, "derive_s": t1 - t0, "compile_s": t2 - t1, "subexpressions": n_sub,
            "c_lines": source.count("\n")}


def _fixed_units(fixed) -> list:
    """[(C text, flags)]: the formulation's fixed code (relative.c, articulated.c with their layout,
    which declare the generated functions they call; FIXED_FLAGS); the Cartesian formulation's
    (cartesian_packed.c) comes after its kernels (:func:`_cartesian_library`)."""
    return [(HEADER + fixed, FIXED_FLAGS)] if fixed.strip() else []


def _units(generated) -> list:
    """[(C text, flags)]: the generated kernels (straight-line functions) in at most JOBS units of
    about equal length, compiled with KERNEL_FLAGS (LONG_KERNEL_FLAGS beyond LONG_UNIT lines)."""
    functions = [m.group(0) for m in _FUNCTION.finditer(generated)]
    buckets = [[] for _ in range(min(JOBS, max(1, len(functions))))]
    for text in sorted(functions, key=len, reverse=True):          # longest first onto the lightest unit
        min(buckets, key=lambda b: sum(map(len, b))).append(text)
    units = [HEADER + "\n".join(b) for b in buckets if b]
    return [(u, LONG_KERNEL_FLAGS if u.count("\n") > LONG_UNIT else KERNEL_FLAGS) for u in units]


def _objects(units, folder, name) -> list:
    """Compile the units to objects ``<name><k>.o`` in ``folder``, JOBS compilers at a time, the most
    expensive first (lines × COMPILE_COST of their optimisation level); their paths."""
    objects, commands = [], []
    cost = lambda u: -u[0].count("\n") * COMPILE_COST.get(u[1][0], 1)      # noqa: E731
    for k, (text, flags) in enumerate(sorted(units, key=cost)):
        c_path, o_path = folder / f"{name}{k}.c", folder / f"{name}{k}.o"
        c_path.write_text(text)
        commands.append([compiler(), *flags, "-c", "-o", str(o_path), str(c_path)])
        objects.append(str(o_path))
    _run_compilers(commands)
    return objects


def _run_compilers(commands):
    """Run the compiler commands, JOBS at once; all are killed on cancel, on the first failure or
    after COMPILE_TIMEOUT.  Raises CodegenUnavailable naming a failed command and its last errors."""
    waiting, running = list(commands), []
    deadline = time.monotonic() + COMPILE_TIMEOUT
    try:
        while waiting or running:
            while waiting and len(running) < JOBS:
                cmd = waiting.pop(0)
                try:
                    running.append((cmd, subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                                          text=True)))
                except FileNotFoundError:
                    raise CodegenUnavailable(f"no C compiler: '{compiler()}' was not found (set CC to a C "
                                             "compiler)") from None
            try:                     # until the oldest compiler ends, CANCEL_POLL at most
                running[0][1].wait(timeout=CANCEL_POLL)
            except subprocess.TimeoutExpired:
                pass
            _check_cancel()
            if time.monotonic() > deadline:
                raise CodegenUnavailable(f"'{compiler()}' took more than {COMPILE_TIMEOUT:.0f} s")
            for cmd, p in [r for r in running if r[1].poll() is not None]:
                if p.returncode != 0:
                    raise _failure(cmd, p)
                running.remove((cmd, p))
                p.communicate()
    finally:
        for _, p in running:
            p.kill()
            p.communicate()


def _failure(cmd, proc) -> CodegenUnavailable:
    tail = " ".join(proc.stderr.read().strip().splitlines()[-3:])
    return CodegenUnavailable(f"'{' '.join(cmd[:4])} …' failed (exit {proc.returncode}): {tail}")


def _cartesian_kernels(desc, prefix="cg_", kernels=derive.KERNELS, index=None, names=None, layout=None):
    """(C of the Cartesian kernels ``<prefix>position`` … of a description — ``names``: {kernel: C name}
    otherwise —, subexpressions); ``kernels``: :func:`derive.derive`'s.  Φ_q (``jac``) and M are
    written packed: each output entry at ``index(output, flat index)`` (relative.c's layout,
    relative_layout.cartesian_packing), or, None, Φ_q's and M's entries at their places in the sorted
    lists of the entries the derivation writes, those lists (flat row-major indices) put in ``layout``
    as "jac" and "M" (a Cartesian library's, cartesian_packed.c).  Nothing is cleared (emit.c_source)."""
    kernels, definitions = derive.derive(desc, kernels)
    if index is None:
        layout.update({out: sorted({i for outputs in kernels.values() for o, i, _ in outputs if o == out})
                       for out in ("jac", "M")})
        place = {out: {i: e for e, i in enumerate(flat)} for out, flat in layout.items()}
        index = lambda out, i: place[out][i] if out in place else i      # noqa: E731
    kernels = {name: [(out, index(out, i), e) for out, i, e in outputs] for name, outputs in kernels.items()}
    return emit.c_source(kernels, definitions, derive.symbol_arrays(desc), prefix=prefix, names=names)


def _cartesian_library(desc):
    """Yields the parts of a Cartesian library: its kernels with Φ_q and M packed (cg_position_packed,
    cg_mass_packed: :func:`_cartesian_kernels`' own layout), then the fixed code after that layout,
    known only now (cartesian_packed.c: the dense cg_position, cg_mass, and cg_dynamics_packed),
    marked as fixed code."""
    layout = {}
    yield _cartesian_kernels(desc, names={"position": "cg_position_packed", "mass": "cg_mass_packed"}, layout=layout)
    defines = {"CGP_M": desc["m"], "CGP_NQ": desc["nq"], "CGP_NJ": len(layout["jac"]), "CGP_NM": len(layout["M"])}
    yield "\n".join([*(f"#define {name} {v}\n#define {name}1 {max(1, v)}" for name, v in defines.items()),
                     *(f"const int cgp_{name} = {len(layout[out])};\n"       # read by build.Kernels.packed_layout
                       f"const int cgp_{name}_at[] = {{{', '.join(map(str, layout[out])) or '0'}}};"
                       for name, out in (("jac", "jac"), ("mass", "M"))),
                     CARTESIAN_PACKED_C.read_text()]), 0, True


def _table(name, values):
    return f"static const int {name}[] = {{{', '.join(str(v) for v in values) or '0'}}};"


def _csr(name, lists):
    """Tables ``<name>_start`` (len(lists) + 1 offsets) and ``<name>`` (the lists' items, concatenated)
    of a list of integer lists: item i's entries are ``name[name_start[i] .. name_start[i+1])``."""
    starts = np.cumsum([0] + [len(x) for x in lists]).tolist()
    return _table(f"{name}_start", starts), _table(name, [v for x in lists for v in x])


def _articulated_kernels(desc):
    """Yields the parts (generated C, subexpressions) of an open tree, each as soon as it is derived:
    the Cartesian ``cgc_loads``, the tree map's ``cgt_edges`` (:func:`solver.codegen.tree.articulated_source`).
    ``desc``: :func:`solver.codegen.relative.describe_relative`."""
    cdesc = desc["cartesian"]
    kernels, definitions = derive.derive(cdesc, kernels=("loads",))
    yield emit.c_source(kernels, definitions, derive.symbol_arrays(cdesc), prefix="cgc_")
    yield tree.articulated_source(desc["tree"]), 0


# an open tree's fixed code: articulated.c's 6 × 6 loops (and tree_bodies.c's) unrolled and vectorized, 2× faster
# than -O2; a relative system's output rows (tree_bodies.c, output_tree.c after relative.c), once per output
# row: -O1 compiles them in 0.1 s where -O3 takes 0.26 s (the four-bar's library, 0.22 against 0.38 s in all)
ARTICULATED_O3 = '#pragma GCC optimize("O3")'
OUTPUT_O1 = '#pragma GCC optimize("O1")'


def _tree_layout(desc):
    """The layout tree_bodies.c reads (NB, NQ, NQ1, the edge tables, body_edge) of a relative description."""
    cdesc, tree_desc = desc["cartesian"], desc["tree"]
    edges = tree_desc["edges"]
    return [f"#define NB {cdesc['nb']}", f"#define NQ {desc['nq']}", f"#define NQ1 {max(1, desc['nq'])}",
            _table("edge_parent", [tree_desc["parent_edge"][ed["parent"]] if ed["parent"] >= 0 else -1
                                   for ed in edges]),
            _table("edge_child", [ed["child"] for ed in edges]), _table("edge_col", [ed["col"] for ed in edges]),
            _table("edge_n", [ed["n"] for ed in edges]), _table("body_edge", tree_desc["parent_edge"])]


def _articulated_layout(desc):
    """The fixed C of an open tree: its layout, tree_bodies.c, articulated.c and output_tree.c."""
    edges = desc["tree"]["edges"]
    layout = [*_tree_layout(desc), f"#define ARMATURE {desc.get('armature', -1)}"]
    norm_row = {col: row for row, col in desc["norm_rows"]}
    euler = [mobilizers.MOBILIZERS[ed["kind"]].euler for ed in edges]
    layout += [_table("edge_euler", [-1 if eu is None else eu for eu in euler]),
               _table("edge_row", [-1 if eu is None else norm_row[ed["col"] + eu] for ed, eu in zip(edges, euler)])]
    return "\n".join([*layout, ARTICULATED_O3, TREE_BODIES_C.read_text(), ARTICULATED_C.read_text(),
                      OUTPUT_TREE_C.read_text()])


def _relative_kernels(desc):
    """Yields the parts (generated C, subexpressions) of a relative system, each as soon as it is
    derived: the Cartesian kernels as ``cgc_*``, the tree map (:mod:`solver.codegen.tree`).
    ``desc``: :func:`solver.codegen.relative.describe_relative`."""
    yield _cartesian_kernels(desc["cartesian"], prefix="cgc_",                 # into zeroed work arrays, packed
                             kernels=(*derive.KERNELS, "loads"), index=relative_layout.cartesian_packing(desc))
    yield tree.tree_source(desc["tree"]), 0


def _relative_layout(desc):
    """The fixed C of a relative system: its layout, relative.c, and the output rows (tree_bodies.c,
    output_tree.c)."""
    cdesc = desc["cartesian"]
    rows = desc["rows"]
    columns = tree.body_columns(desc["tree"])
    tables = relative_layout.layout_tables(desc)
    sizes = {"NT": 7 * sum(map(len, columns)), "NJC": 7 * sum(map(len, desc["row_bodies"])),
             "NJ": len(tables["jp_col"]), "NM": len(tables["mp_col"]), "PMAX": max(map(len, columns), default=0)}
    layout = [*_tree_layout(desc), "#define NC (7 * NB)", f"#define ARMATURE {desc.get('armature', -1)}",
              f"#define MC1 {max(1, cdesc['m'])}", f"#define MR {len(rows)}",
              f"#define NAC1 {max(1, len(cdesc['angles']))}", f"#define NAR {len(desc['angles'])}",
              *(f"#define {name}1 {max(1, size)}" for name, size in sizes.items()),
              *(_table(name, values) for name, values in tables.items()),
              _table("row_kind", [r[0] for r in rows]), _table("row_a", [r[1] for r in rows]),
              _table("row_b", [r[2] for r in rows]), _table("ang_src", [a[3] for a in desc["angles"]]),
              *(_table(f"cpl_{key}", [c[k] for c in desc.get("couplers", [])]) for k, key in enumerate(("col", "par", "n"))),
              *_csr("body_col", columns), *_csr("row_body", desc["row_bodies"])]
    return "\n".join([*layout, RELATIVE_C.read_text(), OUTPUT_O1, TREE_BODIES_C.read_text(), OUTPUT_TREE_C.read_text()])
