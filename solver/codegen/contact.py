"""Contact and joint stops of a generated system in compiled code: ``cc_generalized`` of ``contact.c``.

A model's contact elements are one evaluator, :class:`solver.contact.element.ContactSet`; on
generated kernels its generalized forces are computed by ``contact.c`` (in the runtime library)
inside ``cg_reduced`` at each right-hand side (its ``k_extra``), and so are the stops
(:class:`solver.joint_forces.JointStop`) and rotational spring-dampers
(:class:`solver.forces.RotationalSpringDamperForce`) of the tree joints of the relative
formulation (loads on one column of q each); a model whose other force elements are all
generated keeps the compiled step loop (:mod:`solver.analysis.segments`).  :class:`ContactTables` are the constant arrays
(shapes, laws, mesh vertices, stops; the broad phase's proxies and keys, :func:`sweep_tables` for
``broadphase.c``), built once per system; :class:`CompiledContact` is a run's
struct with its own work arrays (one per compiled reduction, so runs in several threads do not
share them).  The Python evaluators stay the reference: the tests compare the two.
"""
from __future__ import annotations

import ctypes

import numpy as np

from ..contact.element import ContactSet
from ..contact.geometry import PAIRS
from ..forces import RotationalSpringDamperForce
from ..joint_forces import JointStop
from .tree import body_columns, describe_tree

KINDS = {"plane": 0, "sphere": 1, "box": 2, "cylinder": 3, "capsule": 4, "mesh": 5}   # contact.c SH_*
PAIR_CODES = {kinds: code for code, kinds in enumerate(list(PAIRS)[:8])}              # contact.c PR_* (mesh–mesh: Python)
SHAPE_SIZE, LAW_SIZE, STOP_SIZE, SPRING_SIZE = 11, 9, 8, 4                            # CS_, CL_, ST_, SP_SIZE
CARTESIAN, TREE, RELATIVE = 0, 1, 2                                                    # CC_* modes
_INT, _PTR = ctypes.c_int, ctypes.c_void_p


class _Contact(ctypes.Structure):
    """``cc_contact_t`` of contact.c (same fields, same order)."""
    _fields_ = ([(name, _INT) for name in ("nb", "ne", "nq", "mode")]
                + [(name, _PTR) for name in ("bi", "bj", "pair", "swap", "shape", "law", "vstart", "vcount", "verts",
                                             "edges", "generalized", "velocity", "r", "A", "v", "w", "F", "T",
                                             "qc", "qdc", "B", "D", "Tm", "tdqd", "Qc")]
                + [("points", ctypes.c_long), ("energy", ctypes.c_double), ("nst", _INT), ("st_col", _PTR),
                   ("st_par", _PTR), ("nsp", _INT), ("sp_col", _PTR), ("sp_par", _PTR), ("sweep", _PTR),
                   ("cand", _PTR), ("path_start", _PTR), ("path_col", _PTR), ("ng", _INT)]
                + [(name, _PTR) for name in ("glaw", "mgroup", "mbody", "mkind", "mshape", "gstart", "kpair", "kswap",
                                             "link")])


class _Sweep(ctypes.Structure):
    """``cb_sweep_t`` of broadphase.c (same fields, same order)."""
    _fields_ = [("np", _INT), ("pbody", _PTR), ("pshape", _PTR), ("ndirect", _INT), ("direct", _PTR),
                ("nkey", _INT), ("key", _PTR), ("kelem", _PTR), ("order", _PTR), ("x", _PTR), ("lo", _PTR),
                ("hi", _PTR), ("pm_start", _PTR), ("pm_list", _PTR), ("pair", _PTR), ("ctx", _PTR), ("merge", _PTR)]


def sweep_tables(pairs, groups=()):
    """broadphase.c's constant arrays for the elements ``pairs`` (ContactPair) and the contact
    ``groups`` (ContactGroupMembers): the proxies (each distinct finite shape of a body: body, centre
    in body axes, bounding radius), the elements listed as they are (a plane side, or one proxy on
    both sides), the others' keys a·np + b (a < b, their proxies) ascending with their elements, and
    each proxy's group members (CSR over the members numbered group after group)."""
    proxies, sides = {}, []

    def proxy(body, shape):
        bound = shape.bound()
        return None if np.isinf(bound) else proxies.setdefault((body, *map(float, shape.centre), float(bound)),
                                                                len(proxies))
    for p in pairs:
        sides.append([proxy(p.bi, p.si), proxy(p.bj, p.sj)])
    members = [proxy(body, shape) for g in groups for body, shape in zip(g.body, g.shapes)]
    n = len(proxies)
    by_proxy = np.argsort(np.array(members, dtype=np.intp), kind="stable")
    counts = np.bincount(np.array(members, dtype=np.intp), minlength=n)
    direct = [e for e, (a, b) in enumerate(sides) if a is None or b is None or a == b]
    keyed = sorted((min(a, b) * n + max(a, b), e) for e, (a, b) in enumerate(sides)
                   if a is not None and b is not None and a != b)
    rows = sorted(proxies.items(), key=lambda item: item[1])
    return {"pbody": np.array([key[0] for key, _ in rows] or [0], dtype=np.intc),
            "pshape": np.array([key[1:] for key, _ in rows] or [0.0], dtype=float).ravel(),
            "direct": np.array(direct or [0], dtype=np.intc),
            "key": np.array([k for k, _ in keyed] or [0], dtype=np.int64),
            "kelem": np.array([e for _, e in keyed] or [0], dtype=np.intc),
            "pm_start": np.concatenate([[0], np.cumsum(counts)]).astype(np.intc),
            "pm_list": np.array(by_proxy if len(by_proxy) else [0], dtype=np.intc)}, (n, len(direct), len(keyed))


def _shape_row(shape):
    half = np.zeros(3)
    half[:np.size(shape.half)] = shape.half
    return [*shape.centre, *shape.axis, shape.radius, *half, shape.bound(), shape.thickness()]


class ContactTables:
    """The constant arrays of a ContactSet (or None), of stops [(JointStop, column)] and of rotational
    spring-dampers [(RotationalSpringDamperForce, column)] (contact.c's tables)."""

    def __init__(self, contact: ContactSet | None, stops, springs=()):
        pairs = contact.pairs if contact is not None else []
        groups = contact.groups if contact is not None else []
        self.ne, self.nst, self.nsp, self.ng = len(pairs), len(stops), len(springs), len(groups)
        self.sweep, (self.np, self.ndirect, self.nkey) = sweep_tables(pairs, groups)
        blocks = [np.zeros((0, 3)) if shape.vertices is None else np.asarray(shape.vertices, dtype=float)
                  for p in pairs for shape in (p.si, p.sj)]
        vcount = [len(b) for b in blocks]
        vstart = np.concatenate([[0], np.cumsum(vcount)[:-1]]) if blocks else [0]
        self.arrays = {
            "bi": np.array([p.bi for p in pairs] or [0], dtype=np.intc),
            "bj": np.array([p.bj for p in pairs] or [0], dtype=np.intc),
            "pair": np.array([PAIR_CODES[(p.sj.kind, p.si.kind) if p.swapped else (p.si.kind, p.sj.kind)]
                              for p in pairs] or [0], dtype=np.intc),
            "swap": np.array([p.swapped for p in pairs] or [0], dtype=np.intc),
            "shape": np.array([_shape_row(s) for p in pairs for s in (p.si, p.sj)] or [0.0], dtype=float).ravel(),
            "law": np.array([_law_row(p.law) for p in pairs] or [0.0], dtype=float).ravel(),
            "vstart": np.array(vstart, dtype=np.intc), "vcount": np.array(vcount or [0], dtype=np.intc),
            "verts": np.concatenate([*blocks, np.zeros((1, 3))]).ravel(),
            "st_col": np.array([col for _, col in stops] or [0], dtype=np.intc),
            "st_par": np.array([_stop_row(stop) for stop, _ in stops] or [0.0], dtype=float).ravel(),
            "sp_col": np.array([col for _, col in springs] or [0], dtype=np.intc),
            "sp_par": np.array([[f.k, f.c, f.theta0, f.preload] for f, _ in springs] or [0.0], dtype=float).ravel(),
            **_group_arrays(groups),
        }


LAW_FIELDS = ("stiffness", "exponent", "damping", "damping_law", "penetration_depth", "static_friction",
              "dynamic_friction", "stiction_velocity", "friction_velocity")        # contact.c CL_SIZE, in order


def _law_row(law):
    return [float(getattr(law, name) == "hunt_crossley") if name == "damping_law" else getattr(law, name)
            for name in LAW_FIELDS]


def _group_arrays(groups):
    """contact.c's group tables: per group its law and first member; per member (group after group)
    its group, body, shape kind and shape row; the pair kind of each two shape kinds (−1: none in C)."""
    kpair, kswap = np.full(len(KINDS) ** 2, -1, dtype=np.intc), np.zeros(len(KINDS) ** 2, dtype=np.intc)
    for (a, b), code in PAIR_CODES.items():
        kpair[KINDS[a] * len(KINDS) + KINDS[b]] = kpair[KINDS[b] * len(KINDS) + KINDS[a]] = code
        kswap[KINDS[b] * len(KINDS) + KINDS[a]] = int(a != b)
    sizes = [len(g) for g in groups]
    return {"glaw": np.array([_law_row(g.law) for g in groups] or [0.0], dtype=float).ravel(),
            "gstart": np.concatenate([[0], np.cumsum(sizes)]).astype(np.intc),
            "mgroup": np.array(np.repeat(np.arange(len(groups)), sizes) if groups else [0], dtype=np.intc),
            "mbody": np.array(np.concatenate([g.body for g in groups]) if groups else [0], dtype=np.intc),
            "mkind": np.array([KINDS[s.kind] for g in groups for s in g.shapes] or [0], dtype=np.intc),
            "mshape": np.array([_shape_row(s) for g in groups for s in g.shapes] or [0.0], dtype=float).ravel(),
            "kpair": kpair, "kswap": kswap}


def _in_c(pair):
    """contact.c has the pair's query."""
    return ((pair.sj.kind, pair.si.kind) if pair.swapped else (pair.si.kind, pair.sj.kind)) in PAIR_CODES


def _group_in_c(group):
    """contact.c has the queries of every two shape kinds of the group's members."""
    return all((b, a) in PAIR_CODES if swapped else (a, b) in PAIR_CODES for (a, b), (_, swapped) in group.queries.items())


def _stop_row(stop):
    lower, upper = stop.limits
    return [lower or 0.0, upper or 0.0, float(lower is not None), float(upper is not None), *stop.law]


def contact_mode(system):
    """How contact.c gets the body frames of ``system`` (CARTESIAN, TREE, RELATIVE), or None when it
    cannot (flexible bodies: the contact stays in Python)."""
    if getattr(system, "flex", None) or getattr(system, "nblocks", system.nb) != system.nb:
        return None
    if hasattr(system, "articulated"):
        return TREE if system.articulated else RELATIVE
    return CARTESIAN if system.nq >= 7 * system.nb else None


def split_interpreted(system):
    """(the ContactSet or None, the stops [(JointStop, column of q)], the rotational spring-dampers
    [(element, column)], the force elements left to Python) of a generated system: contact.c
    evaluates the first three."""
    interpreted = list(getattr(system, "interpreted", None) or [])
    if not interpreted or contact_mode(system) is None:
        return None, [], [], interpreted
    contact = next((f for f in interpreted if isinstance(f, ContactSet)), None)
    if contact is not None and not (all(_in_c(p) for p in contact.pairs) and all(map(_group_in_c, contact.groups))):
        contact = None                                # a pair contact.c has not (mesh–mesh): all in Python
    column = getattr(system, "tree_column", None)

    def on_columns(kind, coordinate):
        if column is None:
            return []
        found = [(f, column(f.name if kind is JointStop else f.joint, coordinate(f))) for f in interpreted
                 if isinstance(f, kind)]
        return [(f, col) for f, col in found if col is not None]
    stops = on_columns(JointStop, lambda f: f.coordinate.coordinate)
    springs = on_columns(RotationalSpringDamperForce, lambda f: "rotation")
    compiled = {id(contact)} | {id(f) for f, _ in stops + springs}
    return contact, stops, springs, [f for f in interpreted if id(f) not in compiled]


def _path_columns(system):
    """{path_start, path_col}: per body the columns of T's non-zeros in its rows (the coordinates of the
    joints on its path from the root, :func:`solver.codegen.tree.body_columns`), CSR; once per system."""
    cached = getattr(system, "_contact_paths", None)
    if cached is None:
        columns = body_columns(describe_tree(system))
        cached = system._contact_paths = {
            "path_start": np.array(np.concatenate([[0], np.cumsum([len(c) for c in columns])]), dtype=np.intc),
            "path_col": np.array([c for cols in columns for c in cols] or [0], dtype=np.intc)}
    return cached


def compiled_elements(system):
    """(CompiledContact or None: a new one, for a run, the force elements left to Python)."""
    contact, stops, springs, rest = split_interpreted(system)
    if contact is None and not stops and not springs:
        return None, rest
    return CompiledContact(system, contact, stops, springs), rest


class CompiledContact:
    """A run's ``cc_contact_t``: the system's tables, its own work arrays; ``pointers()`` for
    cg_reduced (k_extra, extra), :meth:`generalized` to evaluate Q from Python."""

    def __init__(self, system, contact: ContactSet | None, stops=(), springs=()):
        key = (id(contact), tuple(col for _, col in stops), tuple(col for _, col in springs))
        cached = getattr(system, "_contact_tables", None)
        if cached is None or cached[0] != key:
            cached = system._contact_tables = (key, ContactTables(contact, stops, springs))
        tables = cached[1]
        k = system.kernels
        nb, nq = system.nb, system.nq
        mode = contact_mode(system)
        nc = 7 * nb
        paths = _path_columns(system) if mode == RELATIVE else {"path_start": np.zeros(1, dtype=np.intc),
                                                                "path_col": np.zeros(1, dtype=np.intc)}
        self.work = {"r": np.zeros(3 * nb), "A": np.zeros(9 * nb), "v": np.zeros(3 * nb), "w": np.zeros(3 * nb),
                     "F": np.zeros(3 * nb), "T": np.zeros(3 * nb), "qc": np.zeros(nc), "qdc": np.zeros(nc),
                     "B": np.zeros(6 * max(1, nq)), "D": np.zeros(6 * nb),
                     "Tm": np.zeros(max(1, 7 * int(paths["path_start"][-1]))),    # T packed: 7 × p_b per body
                     "tdqd": np.zeros(nc), "Qc": np.zeros(nc)}
        self.work["cand"] = np.zeros(max(1, tables.ne), dtype=np.intc)
        self.work.update(paths)
        self.tables = tables
        self._sweep, self._sweep_work = self._new_sweep()
        self.struct = _Contact(nb=nb, ne=tables.ne, nq=nq, mode=mode, nst=tables.nst, nsp=tables.nsp, ng=tables.ng,
                               edges=k.pointer("cgt_edges"), generalized=k.pointer("cg_tree_generalized"),
                               velocity=k.pointer("cgt_velocity"), sweep=ctypes.addressof(self._sweep),
                               **{name: a.ctypes.data for name, a in {**tables.arrays, **self.work}.items()})
        self.runtime = k.runtime
        self._fn = k.runtime.cc_generalized
        self._fn.argtypes = [_PTR, _PTR, _PTR, _PTR]
        self._fn.restype = _INT
        self._Q = np.zeros(nq)

    def _new_sweep(self):
        """(a ``cb_sweep_t`` on the tables with work arrays of its own, those arrays)."""
        t = self.tables
        work = {"order": np.arange(max(1, t.np), dtype=np.intc), "x": np.zeros(3 * max(1, t.np)),
                "lo": np.zeros(max(1, t.np)), "hi": np.zeros(max(1, t.np)), "merge": np.zeros(max(1, t.nkey), dtype=np.intc)}
        sweep = _Sweep(np=t.np, ndirect=t.ndirect, nkey=t.nkey,
                       **{name: a.ctypes.data for name, a in {**t.sweep, **work}.items()})
        return sweep, work

    def candidates(self, frames):
        """The elements whose bounding volumes overlap at the body frames (:class:`solver.forces.BodyFrames`
        of one state), ascending: ``cc_candidates``, the broad phase's sweep and each element's test."""
        for name in ("r", "A"):
            self.work[name][:] = np.ravel(getattr(frames, name))
        out = np.zeros(max(1, self.tables.ne), dtype=np.intc)
        fn = self.runtime.cc_candidates
        fn.argtypes = [_PTR, _PTR]
        fn.restype = _INT
        n = fn(ctypes.byref(self.struct), out.ctypes.data) if self.tables.ne else 0
        return out[:n].copy()

    def step_cap(self, frames):
        """``cc_step_cap`` at the body frames (:class:`solver.forces.BodyFrames` of one state):
        :meth:`ContactSet.step_cap` in C."""
        for name in ("r", "A", "v", "w"):
            self.work[name][:] = np.ravel(getattr(frames, name))
        fn = self.runtime.cc_step_cap
        fn.argtypes = [_PTR]
        fn.restype = ctypes.c_double
        return fn(ctypes.byref(self.struct))

    def pointers(self):
        """{k_extra, extra}: the fields of cg_reduced_t that make it call this evaluator."""
        return {"k_extra": ctypes.cast(self._fn, _PTR).value,
                "extra": ctypes.cast(ctypes.pointer(self.struct), _PTR).value}

    def generalized(self, q, qd):
        """Q of the contact elements at (q, q̇) (a copy)."""
        q, qd = (np.ascontiguousarray(x, dtype=float) for x in (q, qd))
        self._fn(ctypes.byref(self.struct), q.ctypes.data, qd.ctypes.data, self._Q.ctypes.data)
        return self._Q.copy()

    def states(self, frames):
        """(F, T (…, nb, 3), elastic energy (…)) of the contact elements at stacked body frames
        (:class:`solver.forces.BodyFrames` with leading axes): ``cc_states`` on a copy of the struct."""
        lead = frames.r.shape[:-2]
        n, nb = int(np.prod(lead)), self.struct.nb
        r, A, v, w = (np.ascontiguousarray(np.reshape(x, (n, -1)), dtype=float)
                      for x in (frames.r, frames.A, frames.v, frames.w))
        F, T, V = np.zeros((n, nb, 3)), np.zeros((n, nb, 3)), np.zeros(n)
        one = _Contact.from_buffer_copy(self.struct)
        sweep, work = self._new_sweep()            # the caller's own work (a run may evaluate beside it)
        cand = np.zeros(max(1, self.tables.ne), dtype=np.intc)
        one.sweep, one.cand = ctypes.addressof(sweep), cand.ctypes.data
        fn = self.runtime.cc_states
        fn.argtypes = [_PTR, _INT] + [_PTR] * 7
        fn.restype = None
        fn(ctypes.byref(one), n, *(a.ctypes.data for a in (r, A, v, w, F, T, V)))
        return F.reshape(lead + (nb, 3)), T.reshape(lead + (nb, 3)), V.reshape(lead)


def bind_states(system):
    """Give the system's ContactSet the compiled evaluation of stacked states (the recorder's
    post-processing: :meth:`ContactSet.apply` on stacked frames)."""
    contact = split_interpreted(system)[0]
    if contact is not None:
        contact.bind_states(CompiledContact(system, contact).states)
