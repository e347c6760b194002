"""Symbolic derivation (polynomials of named intermediates, printed as C) of a relative system's velocity
transformation — Choi & Yoo (2000) §2–4.

Choi & Yoo (2000) writes the Cartesian velocities of the bodies as a linear map of the relative joint
velocities, ``Ẏ = B q̇`` (eq. 5 there; Kim & You (1997) eq. 6 for the state velocities), and generates the
code for one vehicle.  Here, for one model in the relative formulation
(:class:`solver.formulations.relative.RelativeSystem`), the map to the Cartesian body coordinates of
the conventional formulation, q_c = [r_b ; p_b] per body (CM position, unit Euler parameters), is
derived edge by edge along the spanning tree with the geometry baked in as numbers:

    p_C = p_P ⊗ p(C_in) ⊗ p_R(x) ⊗ p(C_out)*,  A_C = A(p_C)                  (Kim & You (1997) eq. 1)
    o_e = r_P + A_P s_in + E d(x),  r_C = o_e − A_C s_out,  E = A_P C_in    (Kim & You (1997) eq. 2)
    B_e = [E Dq + õ_e E H ; E H],  Ŷ_C = Ŷ_P + B_e ẋ                        (Kim & You (1997) eq. 6)
    D_e = Ḃ_e ẋ (the velocity-product terms of :meth:`RelativeSystem.kinematics`)   (Kim & You (1997) eq. 8)

with the joint pieces R, d, H, Dq, a_w, a_d of :meth:`solver.formulations.mobilizers.Mobilizer.kinematics`
— the same code as the numeric recursion, run on :class:`Poly` objects through :class:`Symbols` — and p_R the
Euler parameters of R (half angles for revolute-type joints, x/|x| for spherical and free joints).  From the body state velocity Ŷ_b = J_b q̇ (J_b: the B_e of b's path):

    ṙ_b = Ŷ_b,top − r_b × ω_b,   ṗ_b = ½ G(p_b)ᵀ ω_b            →  q̇_c = T(q) q̇
    T q̈ + Ṫ q̇:  r̈_b = Ẏ̂_top − ṙ_b × ω_b − r_b × ω̇_b,  p̈_b = ½ G(ṗ_b)ᵀ ω_b + ½ G(p_b)ᵀ ω̇_b

where Ṫq̇ takes the velocity-product part Ŷ̇_b = Σ_path D_e.  Three kernels are generated:
``cgt_position(q) → qc, T`` and ``cgt_velocity(q, q̇) → qc, T, q̇_c, Ṫq̇``, which ``relative.c``
turns, with the model's Cartesian kernels (:mod:`solver.codegen.derive`), into the relative ones,
and ``cgt_frames(q, q̇) → r, A, v, ω`` (the body frames force elements evaluated in Python take).
For an open tree without constraint rows one kernel replaces them, ``cgt_edges(q, q̇)`` → per body
[r ; p], [ṙ ; ṗ], A, ω and per edge B_e, D_e, which ``articulated.c`` runs the O(n) articulated-body
recursion on (T, with its O(n²) entries along the paths, is not formed); a relative library has it too,
for its output rows (output_tree.c).
Every quantity is a named intermediate (``t{n}``), so expressions stay small however deep the tree.
The arithmetic between them is that of expanded polynomials of the names (:mod:`solver.codegen.poly`,
plain Python), each printed to C directly; cos, sin and 1/√ of a polynomial and 1/t of a name are
named intermediates too: no sympy object is made (sympy's arithmetic cost most of the build).
"""
from __future__ import annotations

import numpy as np

from ..formulations.mobilizers import Mobilizer
from ..math.rotations import G_matrix, cross, quat_from_matrix, quat_multiply, rotation_matrix, skew
from .derive import _snap
from .emit import definition_c
from .poly import Poly



def describe_tree(system) -> dict:
    """JSON-able description of a RelativeSystem's spanning tree: per edge (parent-before-child)
    parent, child, joint kind, inverted, screw pitch, first column, coordinates, marker frames
    (snapped); per edge its path from the root; per body the edge above it."""
    edges = []
    for e, edge in enumerate(system.topology.edges):
        mob = system.mobs[e]
        edges.append({"parent": edge.parent, "child": edge.child, "kind": mob.kind, "inverted": mob.inverted,
                      "pitch": float(mob.pitch), "col": int(system.cols[e][0]) if mob.n else 0, "n": mob.n,
                      "C_in": [_snap(row) for row in system.C_in[e]], "s_in": _snap(system.s_in[e]),
                      "C_out": [_snap(row) for row in system.C_out[e]], "s_out": _snap(system.s_out[e])})
    return {"nb": system.nb, "nq": system.nq, "edges": edges, "paths": [list(p) for p in system.paths],
            "parent_edge": [int(system.topology.parent_edge[b]) for b in range(system.nb)]}


def body_columns(tree) -> list:
    """Per body, the tree coordinates its T rows can depend on (the columns of the edges on its path
    from the root, ascending): T[7b:7b+7, c] is zero for every other column c."""
    parent_edge = {ed["child"]: e for e, ed in enumerate(tree["edges"])}
    return [sorted(tree["edges"][a]["col"] + j for a in tree["paths"][parent_edge[b]]
                   for j in range(tree["edges"][a]["n"])) for b in range(tree["nb"])]


def tree_source(tree) -> str:
    """C source of ``cgt_position``, ``cgt_velocity``, ``cgt_frames`` and ``cgt_edges`` for
    :func:`describe_tree`'s description (relative.c's inputs; cgt_edges for the output rows of
    output_tree.c).  T is written packed (solver.codegen.relative_layout): body b's 7 × p_b block on
    its path columns (:func:`body_columns`, ascending), row-major, at 7 Σ_{b'<b} p_b'."""
    prog, inputs, body, B, D = _tree_map(tree)
    nb, columns = tree["nb"], body_columns(tree)
    start = np.cumsum([0] + [7 * len(c) for c in columns])
    pos = {"qc": {}, "T": {}}
    vel = {"qdc": {}, "tdqd": {}}
    parent_edge = {ed["child"]: e for e, ed in enumerate(tree["edges"])}
    for b in range(nb):
        s = body[b]
        r, Gt = s["r"], G_matrix(s["p"]).T
        _write(pos["qc"], 7 * b, np.concatenate([r, s["p"]]))
        p, place = len(columns[b]), {c: n for n, c in enumerate(columns[b])}
        for a in tree["paths"][parent_edge[b]]:
            ed = tree["edges"][a]
            for j in range(B[a].shape[1]):
                top, bot = B[a][:3, j], B[a][3:, j]
                for i, val in enumerate(np.concatenate([top - cross(r, bot), Gt.dot(bot) / 2])):
                    pos["T"][int(start[b]) + i * p + place[ed["col"] + j]] = val
        w, vb, pd = s["Y"][3:], s["v"], s["pd"]
        Yd0 = s["Yd0"]
        rdd = Yd0[:3] - cross(vb, w) - cross(r, Yd0[3:])
        pdd = G_matrix(pd).T.dot(w) / 2 + Gt.dot(Yd0[3:]) / 2
        _write(vel["qdc"], 7 * b, np.concatenate([vb, pd]))
        _write(vel["tdqd"], 7 * b, np.concatenate([rdd, pdd]))
    return "\n".join([prog.kernel("cgt_position", "const double *q, double *qc, double *T", pos, inputs),
                      prog.kernel("cgt_velocity", "const double *q, const double *qd, double *qc, double *T, "
                                                  "double *qdc, double *tdqd", {**pos, **vel}, inputs),
                      _frames_kernel(prog, inputs, body, nb), _edges_kernel(prog, inputs, body, B, D, tree)])


def articulated_source(tree) -> str:
    """C source of ``cgt_edges`` (articulated.c's input, also the body frames): per body the
    Cartesian coordinates q_c = [r ; p] and rates [ṙ ; ṗ], the rotation A (row-major) and ω; per
    tree coordinate its column of B_e (6 numbers, Kim & You (1997) eq. 6), per edge D_e (eq. 8).  Code size
    is O(n): nothing is expanded along the paths (no T)."""
    prog, inputs, body, B, D = _tree_map(tree)
    return _edges_kernel(prog, inputs, body, B, D, tree)


def _edges_kernel(prog, inputs, body, B, D, tree):
    """``cgt_edges`` (:func:`articulated_source`) of a derived tree map."""
    out = {"qc": {}, "qdc": {}, "A": {}, "w": {}, "B": {}, "D": {}}
    for b, s in body.items():
        _write(out["qc"], 7 * b, np.concatenate([s["r"], s["p"]]))
        _write(out["qdc"], 7 * b, np.concatenate([s["v"], s["pd"]]))
        _write(out["A"], 9 * b, s["A"].ravel())
        _write(out["w"], 3 * b, s["Y"][3:])
    for e, ed in enumerate(tree["edges"]):
        _write(out["B"], 6 * ed["col"], B[e].T.ravel())
        _write(out["D"], 6 * e, D[e])
    return prog.kernel("cgt_edges", "const double *q, const double *qd, double *qc, double *qdc, double *A, "
                                    "double *w, double *B, double *D", out, inputs)


def _tree_map(tree):
    """(program, kernel inputs, body states, B_e, D_e) of the tree map, edge by edge (module
    docstring).  Body states: p, A, r, Y (state velocity), Yd0 (Σ_path D), v = ṙ, pd = ṗ."""
    prog = _Program()
    q_sym, v_sym = ([_Symbol(f"{x}{k}") for k in range(max(1, tree["nq"]))] for x in "qv")
    q, v = (np.array([Poly({(s,): 1.0}) for s in syms], dtype=object) for syms in (q_sym, v_sym))
    body = {}                                   # b → dict(p, A, r, Y, Yd0, v, pd)
    B, D = {}, {}                               # edge → 6 × n, 6 object arrays
    ground = {"p": np.array([1.0, 0, 0, 0]).astype(object), "A": np.eye(3).astype(object),
              "r": np.zeros(3).astype(object), "Y": np.zeros(6).astype(object), "Yd0": np.zeros(6).astype(object)}
    for e, ed in enumerate(tree["edges"]):
        P = body[ed["parent"]] if ed["parent"] >= 0 else ground
        mob = Mobilizer(ed["kind"], pitch=ed["pitch"], inverted=ed["inverted"])
        x, xd = q[ed["col"]:ed["col"] + mob.n], v[ed["col"]:ed["col"] + mob.n]
        R, d, H, Dq, aw, ad, pR = mob.kinematics(x, xd, Symbols(prog), quaternion=True)
        C_in, C_out = np.array(ed["C_in"], dtype=float), np.array(ed["C_out"], dtype=float)
        E = prog.array(P["A"].dot(C_in))
        p_in, p_out = quat_from_matrix(C_in), quat_from_matrix(C_out)
        p_out_conj = np.array([p_out[0], -p_out[1], -p_out[2], -p_out[3]])
        pC = prog.array(quat_multiply(quat_multiply(quat_multiply(P["p"], p_in), pR), p_out_conj))
        AC = prog.array(rotation_matrix(pC))
        o = prog.array(P["r"] + P["A"].dot(np.array(ed["s_in"])) + E.dot(d))
        rC = prog.array(o - AC.dot(np.array(ed["s_out"])))
        Hg = prog.array(E.dot(H))
        B[e] = prog.array(np.vstack([E.dot(Dq) + skew(o).dot(Hg), Hg]))
        child = {"p": pC, "A": AC, "r": rC}
        # velocities (the emitter keeps what each kernel needs)
        YP, wP = P["Y"], P["Y"][3:]
        Y = child["Y"] = prog.array(YP + B[e].dot(xd))
        Ed, Ew = prog.array(E.dot(Dq.dot(xd))), prog.array(E.dot(H.dot(xd)))
        v_o = YP[:3] + cross(wP, o) + Ed
        Dbot = prog.array(cross(wP, Ew) + E.dot(aw))
        Dtop = cross(wP, Ed) + E.dot(ad) + cross(v_o, Ew) + cross(o, Dbot)
        D[e] = prog.array(np.concatenate([Dtop, Dbot]))
        child["Yd0"] = prog.array(P["Yd0"] + D[e])
        child["v"] = prog.array(Y[:3] - cross(rC, Y[3:]))
        child["pd"] = prog.array(G_matrix(pC).T.dot(Y[3:]) / 2)
        body[ed["child"]] = child
    inputs = {**{sym: f"q[{k}]" for k, sym in enumerate(q_sym)}, **{sym: f"qd[{k}]" for k, sym in enumerate(v_sym)}}
    return prog, inputs, body, B, D


def _frames_kernel(prog, inputs, body, nb):
    """``cgt_frames(q, q̇ → r, A, v, ω)``: the body frames force elements evaluated in Python take."""
    frames = {"r": {}, "A": {}, "v": {}, "w": {}}            # CM, rotation (row-major), v, ω
    for b in range(nb):
        s = body[b]
        _write(frames["r"], 3 * b, s["r"])
        _write(frames["v"], 3 * b, s["v"])
        _write(frames["w"], 3 * b, s["Y"][3:])
        _write(frames["A"], 9 * b, s["A"].ravel())
    return prog.kernel("cgt_frames", "const double *q, const double *qd, double *r, double *A, double *v, "
                                     "double *w", frames, inputs)


def _write(entries, offset, values):
    """entries[offset + i] = values[i]."""
    for i, val in enumerate(values):
        entries[offset + i] = val


# ---- helpers --------------------------------------------------------------------------------------
class Symbols:
    """The operations of :meth:`Mobilizer.kinematics` on object arrays of :class:`Poly` (polynomials
    of named intermediates): cos, sin, 1/√ and every bound intermediate become named
    subexpressions of ``prog`` (shared by all kernels)."""

    def __init__(self, prog):
        self.prog = prog

    @staticmethod
    def zeros(*shape):
        return np.zeros(shape).astype(object)

    def cos(self, e):
        return self.prog.function("cos({})", _scalar(e))

    def sin(self, e):
        return self.prog.function("sin({})", _scalar(e))

    def rsqrt(self, v):
        return self.prog.function("1.0/sqrt({})", _scalar(v))

    def bind(self, a):
        return self.prog.array(a) if np.ndim(a) else self.prog.let(_scalar(a))

    number = staticmethod(float)


def _scalar(e):
    """The object in a 0-d object array (``x[..., k]`` of a 1-d one is such an array), else ``e``."""
    return e.item() if isinstance(e, np.ndarray) and e.ndim == 0 else e


class _Symbol:
    """A kernel input or named intermediate as a factor of Poly monomials (which sort their factors
    by ``name``, as they do sympy symbols'): its C name only, no sympy object."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name


class _Name(Poly):
    """The Poly of one named intermediate (1 · t{n}); dividing by it multiplies by its reciprocal,
    itself a named intermediate (e.g. 2 G(p) / |p|² of :func:`solver.formulations.mobilizers._euler_parameters`)."""

    __slots__ = ("prog",)

    def __init__(self, symbol, prog):
        super().__init__({(symbol,): 1.0})
        self.prog = prog

    def __rtruediv__(self, other):
        return other * self.prog.function("1.0/{}", self)


class _Program:
    """Straight-line program: every non-trivial polynomial (:class:`Poly`) or function of one is
    bound to a fresh symbol ``t{n}``, identical ones to the same symbol; each is printed as C
    directly (no sympy expression is built)."""

    def __init__(self):
        self.values = {}                 # symbol → (C format, Poly of inputs and earlier symbols)
        self._names = {}                 # (C format, frozen polynomial terms) → its symbol
        self._text = {}                  # symbol → (its value's C, the symbols it reads): printed once

    def let(self, x):
        """A number or a Poly (±1 · one symbol kept as it is) for Poly or number ``x``; otherwise a
        :class:`_Name` standing for ``x``."""
        if not isinstance(x, Poly):
            return float(x)
        terms = x.terms
        if not terms:
            return 0.0
        if len(terms) == 1:
            (m, c), = terms.items()
            if not m:
                return c
            if len(m) == 1 and c in (1.0, -1.0):
                return x
        return self.function("{}", x)

    def function(self, form, x):
        """A :class:`_Name` standing for the C ``form`` (e.g. ``"cos({})"``) of Poly or number ``x``."""
        x = Poly.of(x)
        key = (form, frozenset(x.terms.items()))
        sym = self._names.get(key)
        if sym is None:
            sym = self._names[key] = _Symbol(f"t{len(self.values)}")
            self.values[sym] = (form, x)
        return _Name(sym, self)

    def array(self, a):
        a = np.asarray(a, dtype=object)
        return np.vectorize(self.let, otypes=[object])(a) if a.size else a

    def kernel(self, name, args, outputs, inputs):
        """C function ``name(args)`` writing outputs {array: {flat index: Poly or number}}.  Only the
        inputs ({symbol: C text}) and intermediates the outputs need are emitted, in the order they
        were made."""
        writes = [(out, index, self._definition(Poly.of(x))) for out, entries in outputs.items()
                  for index, x in entries.items()]
        needed, stack = set(), [sym for *_, (_, reads) in writes for sym in reads]
        while stack:
            sym = stack.pop()
            if sym not in needed:
                needed.add(sym)
                if sym in self.values:
                    stack.extend(self._c(sym)[1])
        lines = [f"void {name}({args})", "{"]
        lines += [f"    const double {sym.name} = {text};" for sym, text in inputs.items() if sym in needed]
        lines += [f"    const double {sym.name} = {self._c(sym)[0]};" for sym in self.values if sym in needed]
        lines += [f"    {out}[{index}] = {text};" for out, index, (text, _) in writes]
        lines.append("}")
        return "\n".join(lines)

    def _c(self, sym):
        """(C, symbols read) of the value bound to ``sym``, printed once for all kernels."""
        if sym not in self._text:
            form, x = self.values[sym]
            text, reads = self._definition(x)
            self._text[sym] = form.format(text), reads
        return self._text[sym]

    @staticmethod
    def _definition(poly):
        """(C, symbols read) of a Poly: the symbol itself for 1 · symbol, 0.0 for zero."""
        if not poly.terms:
            return "0.0", set()
        if len(poly.terms) == 1:
            (m, c), = poly.terms.items()
            if c == 1.0 and len(m) == 1:
                return m[0].name, {m[0]}
        return definition_c([(c, m) for m, c in poly.terms.items()], None)   # (no sympy: no printer)
