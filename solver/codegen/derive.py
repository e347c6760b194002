"""Symbolic derivation (sympy) of a Cartesian system's kernels — Choi & Yoo (2000) §4.

Choi & Yoo (2000) (Choi & Yoo 2000, §4.1) generates, for one vehicle, Fortran routines that contain only
the arithmetic its equations need (Mathematica → Fortran).  Here, for one model in the Cartesian
formulation with conventional joints (:mod:`solver.formulations.cartesian`):

    Φ(q, t), Φ_q(q), γ(q, q̇, t)           from the joint kinds' ``equations`` and
                                          ``joints.COORDINATES`` (drivers θ(q) − f(t)) and the
                                          Euler-parameter normalizations pᵀp − 1
    M(q) = diag(m I, 4 Lᵀ J' L)           (Haug ch. 11, the r–p form)
    Q(q, q̇, t) = [F + m g ; 2 Lᵀ Aᵀ T + 8 L̇ᵀ J' L̇ p]

Two steps, so that the cache key covers everything the derivation reads:

* :func:`describe` freezes the system into a JSON-able *description*: structure (bodies, joints,
  rows, driven coordinates, force elements) and geometry (marker axes and points in body frames,
  entries below ``SNAP`` set to 0 so structural zeros drop out of the code).  Geometry is baked in
  as numbers: moving a joint regenerates.
* The physical parameters are kernel *inputs* (:func:`parameters`), so changing them reuses the
  library: per body m, J'00 J'11 J'22 J'01 J'12 J'20; gravity; per joint its screw pitch and
  length/axial/radius constants; per spring-damper k, c, l0, preload; per bushing its six
  stiffnesses and six dampings.  Time functions are evaluated
  numerically and passed in: driver f (in Φ), f̈ (in γ) (ν = ḟ needs no kernel); spring-damper
  force(t) and applied force/torque components.
* :func:`derive` builds the sympy expressions of the four kernels from the description alone.

Joint vectors follow :mod:`solver.constraints.primitives`: a body vector A a' (direction) or
r + A s' (point) has rate B(p, a') ṗ (+ ṙ) and velocity-quadratic term B(ṗ, a') ṗ (Haug eq. 6.3.9);
a scalar s = uᵀw has quad(s) = wᵀquad(u) + uᵀquad(w) + 2 u̇ᵀẇ and γ = −quad(s) (+ f̈ for drivers).
Joint angles θ = atan2(y, x) come out in (−π, π] (output ``ang``); the caller unwraps them.
Generated force elements: spring-dampers, bushings, applied loads, speed controllers and tires on a
flat, half-sine or step road.  The others (rotational spring-dampers, tires on table roads) are
evaluated in Python and added to Q (:func:`interpreted_forces`).  Flexible bodies (floating frame,
modal coordinates after the body blocks) add their mass blocks, forces and node-carried joint slots
through :mod:`solver.codegen.flexible`.
"""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import sympy as sp

from ..constraints.forms import atan2_chain, atan2_quad, constants_of, scalar, uses_angle
from ..constraints.joints import COORDINATES
from . import flexible
from ..math.rotations import B_matrix, L_matrix, cross, rotation_matrix

SNAP = 1e-14            # geometry entries below this (m or unit-vector components) are exact zeros
BODY_PARAMETERS = 7     # m, J'00, J'11, J'22, J'01, J'12, J'20
# solver.math.namespace's functions on symbols (the tire, the road profiles, the spring-damper)
SYMPY_MATH = SimpleNamespace(sin=sp.sin, cos=sp.cos, atan=sp.atan, sqrt=sp.sqrt, pi=sp.pi, piecewise=sp.Piecewise)
KERNELS = ("position", "gamma", "mass", "forces")


class CodegenUnavailable(Exception):
    """Generated kernels cannot be used for this model or on this machine (the message says why)."""


# ---- Force element hooks --------------------------------------------------------------------------
class ForceHook:
    """How the kernels contain the force elements of one evaluator class (:data:`HOOKS`): their
    entries in the description's list ``key``, the parameters and time inputs they take, and the
    wrench they add.  An evaluator class without a hook is evaluated in Python
    (:func:`interpreted_forces`)."""

    key = ""                        # the description's list of these elements' entries

    def accepts(self, f) -> bool:
        """Whether the kernels contain element f (e.g. a tire only on a generated road kind)."""
        return True

    def describe(self, f, layout: Layout) -> dict:
        """f's JSON-able entry (geometry, structure), its parameters and inputs allocated from
        ``layout`` in :meth:`parameters` and :meth:`inputs` order."""
        raise NotImplementedError

    def parameters(self, f) -> tuple:
        """f's parameter values (kernel inputs: editing them reuses the library), at its entry's "par"."""
        return ()

    def inputs(self, f) -> list:
        """f's time functions, evaluated numerically and passed in as u at its entry's "input"."""
        return []

    def loads(self, entry, w: SymbolicWrenches):
        """Add the element's wrench, from its description ``entry``, to ``w``."""
        raise NotImplementedError


#: evaluator class (exactly: a subclass evaluates differently) → its hook; the order of the entries
#: is the order of the kinds' loads in the kernels.  Filled by :mod:`solver.codegen.force_hooks`.
HOOKS: dict[type, ForceHook] = {}


def force_hook(cls):
    """Register the decorated ForceHook class as the hook of evaluator class ``cls``."""
    def register(hook_class):
        HOOKS[cls] = hook_class()
        return hook_class
    return register


def hook_of(f):
    """The hook that generates force element f, or None (f is evaluated in Python)."""
    hook = HOOKS.get(type(f))
    return hook if hook is not None and hook.accepts(f) else None


class Layout:
    """Allocates the parameter and time-input vectors' entries, in order."""

    def __init__(self, n_parameters, n_inputs=0):
        self.n_parameters, self.n_inputs = n_parameters, n_inputs

    def parameters(self, n):
        """The offset of n new parameters."""
        self.n_parameters += n
        return self.n_parameters - n

    def inputs(self, n):
        """The offset of n new time inputs."""
        self.n_inputs += n
        return self.n_inputs - n


# ---- Public API -----------------------------------------------------------------------------------
def describe(system) -> dict:
    """JSON-able description of a CartesianSystem (conventional form): everything :func:`derive`
    reads, and the layout of the parameter and time-input vectors.  Raises CodegenUnavailable for
    the parametric form and for force elements that are not generated."""
    if system.form != "conventional":
        raise CodegenUnavailable("only the conventional joint form is generated "
                                 f"(this model uses settings.constraints = {system.form!r})")
    if system.flex and flexible.unsupported(system):
        raise CodegenUnavailable(flexible.unsupported(system))
    nb = system.nb
    npar = BODY_PARAMETERS * nb + 3
    joints, angles = [], []
    for jk, jr in enumerate(system.joints):
        cj, rows = jr.joint, jr.rows
        constants = {}
        for spec in cj.specs:
            for key in constants_of(spec):
                if key not in constants:
                    constants[key] = npar
                    npar += 1
        joints.append({"type": cj.type, "bi": jr.body_i, "bj": jr.body_j, "rows": list(rows),
                       "specs": [list(s) for s in cj.specs], "constants": constants,
                       "vectors": {name: [side, _snap(local), bool(point)]
                                   for name, (side, local, point) in cj.vector_slots().items()}})
        angles += [[row, jk, list(spec)] for row, spec in zip(rows, cj.specs) if uses_angle(spec)]
        angles += [[d.row, jk, list(COORDINATES[d.coordinate])] for d in system.drivers
                   if d.joint == jk and uses_angle(COORDINATES[d.coordinate])]
    drivers = [{"joint": d.joint, "coordinate": list(COORDINATES[d.coordinate]), "row": d.row}
               for d in system.drivers]
    layout = Layout(npar)
    forces = {hook.key: [] for hook in HOOKS.values()}
    for f in system.force_elements:
        hook = hook_of(f)
        if hook is not None:
            forces[hook.key].append(hook.describe(f, layout))
    npar = layout.n_parameters
    flex, npar = (flexible.describe(system, joints, npar, BODY_PARAMETERS * nb, _snap) if system.flex
                  else (None, npar))
    return {"nb": nb, "nq": system.nq, "m": system.m, "joints": joints, "drivers": drivers, "flexible": flex,
            "angles": angles, "norm_rows": list(system.norm_rows), **forces,
            "n_parameters": npar, "n_inputs": layout.n_inputs}


def parameters(system, desc) -> np.ndarray:
    """The parameter vector of :func:`describe`'s layout, from the system's current values."""
    par = np.zeros(max(1, desc["n_parameters"]))
    for k in range(system.nb):
        J = system.inertia[k]
        par[BODY_PARAMETERS * k:BODY_PARAMETERS * (k + 1)] = (system.mass_values[k], J[0, 0], J[1, 1], J[2, 2],
                                                              J[0, 1], J[1, 2], J[2, 0])
    par[BODY_PARAMETERS * system.nb:BODY_PARAMETERS * system.nb + 3] = system.gravity
    for jr, jd in zip(system.joints, desc["joints"]):
        cj = jr.joint
        for key, index in jd["constants"].items():
            par[index] = cj.constant(key)
    entries = {key: iter(desc[key]) for key in {hook.key for hook in HOOKS.values()}}
    for f in system.force_elements:
        hook = hook_of(f)
        if hook is not None:
            values = hook.parameters(f)
            entry = next(entries[hook.key])
            if len(values):
                par[entry["par"]:entry["par"] + len(values)] = values
    flexible.parameters(system, desc, par)
    return par


def input_functions(system):
    """Time functions whose values form the kernels' input vector u (in :func:`describe`'s order):
    each generated force element's :meth:`ForceHook.inputs` (a spring-damper's force(t), an applied
    load's three components, a speed controller's sin φ and cos φ of its target phase φ = v* t / R)."""
    return [fn for f in system.force_elements for hook in [hook_of(f)] if hook is not None for fn in hook.inputs(f)]


def interpreted_forces(system):
    """The force elements the kernels leave out (those without a hook: rotational spring-dampers,
    tires on table roads, …): evaluated in Python and added to the generated Q."""
    return [f for f in system.force_elements if hook_of(f) is None]


def derive(desc, kernels=KERNELS):
    """(kernels, definitions): kernel outputs as sympy expressions, {kernel: [(output array, flat
    index, expression)]}, and the body-vector quantities they are built on, [(symbol d{n}, terms)]
    (value, rate, quad and ∂/∂p columns of every joint vector and force point, polynomials of the
    inputs; :meth:`_Symbols.define`) followed by the named intermediates [(symbol e{n}, expression)]
    of :meth:`_Symbols.let`.

    Kernels and their inputs (symbols ``q{k}``, ``v{k}`` = q̇_k, ``c{k}`` parameters, ``f{k}`` driver
    values, ``u{k}`` time inputs):
      position(q, c, f) → phi (m), jac (m × nq, row-major), ang (raw joint angles, ``desc['angles']``)
      gamma(q, v, c, f = f̈) → gamma (m)
      mass(q, c) → M (nq × nq)
      forces(q, v, c, u) → Q (nq)
      loads(q, v, c, u) → F, T (3 nb each): per body the applied force at the CM (gravity included)
                          and torque, global axes — what ``forces`` maps to Q (articulated.c's input)
    ``kernels``: the kernels to derive (default: the four every library has)."""
    s = _Symbols(desc)
    out = {k: [] for k in kernels}
    if "position" in out or "gamma" in out:
        _constraint_outputs(desc, s, out)
    for name, outputs in (("mass", _mass_outputs), ("forces", _force_outputs), ("loads", _load_outputs)):
        if name in out:
            outputs(desc, s, out)
    return out, [(sym, terms) for terms, sym in s.definitions.items()] + s.lets


def symbol_arrays(desc):
    """{C argument name: list of its symbols} (the inputs of every kernel)."""
    s = _Symbols(desc)
    return {"q": s.q, "qd": s.v, "par": s.c, "f": s.f, "u": s.u}


# ---- helpers --------------------------------------------------------------------------------------
def _snap(v):
    return [0.0 if abs(x) < SNAP else float(x) for x in np.asarray(v, dtype=float)]


def _number(x):
    """Exact sympy number of a float (integers ±1, 0 kept as integers so they vanish or fold)."""
    return sp.Integer(int(x)) if x in (0.0, 1.0, -1.0) else sp.Float(x)


class _Symbols:
    def __init__(self, desc):
        nq = desc["nq"]
        self.q = list(sp.symbols(f"q0:{nq}"))
        self.v = list(sp.symbols(f"v0:{nq}"))
        self.c = list(sp.symbols(f"c0:{max(1, desc['n_parameters'])}"))
        self.f = list(sp.symbols(f"f0:{max(1, len(desc['drivers']))}"))
        self.u = list(sp.symbols(f"u0:{max(1, desc['n_inputs'])}"))
        self._A = {}
        self.definitions = {}        # polynomial terms → symbol d{n}
        self.lets = []               # [(symbol e{n}, sympy expression)]: named intermediates

    def define(self, terms):
        """A symbol standing for the polynomial Σ c·Π symbols (``terms``: [(float c, (symbols…))],
        like monomials already merged); expressions built on it stay small.  Definitions are
        printed as C directly (:func:`solver.codegen.emit.c_source`): building such float-coefficient
        polynomials in sympy costs about a millisecond per term."""
        terms = tuple((c, f) for c, f in terms if c != 0.0)
        if not terms:
            return sp.Integer(0)
        if len(terms) == 1 and terms[0][0] == 1.0 and len(terms[0][1]) == 1:
            return terms[0][1][0]
        if terms not in self.definitions:
            self.definitions[terms] = sp.Symbol(f"d{len(self.definitions)}")
        return self.definitions[terms]

    def let(self, expr):
        """A symbol standing for ``expr`` (numbers and symbols are returned as they are), so that
        expressions built on it stay small — e.g. the Piecewise road height under a tire."""
        expr = sp.sympify(expr)
        if expr.is_Number or expr.is_Symbol:
            return expr
        sym = sp.Symbol(f"e{len(self.lets)}")
        self.lets.append((sym, expr))
        return sym

    def vector(self, v):
        return np.array([self.let(x) for x in v], dtype=object)

    def body(self, b):
        """(r, p, ṙ, ṗ, A) of body b as object arrays of symbols; None for ground (b < 0)."""
        if b < 0:
            return None
        o = 7 * b
        r, p = np.array(self.q[o:o + 3], dtype=object), np.array(self.q[o + 3:o + 7], dtype=object)
        rd, pd = np.array(self.v[o:o + 3], dtype=object), np.array(self.v[o + 3:o + 7], dtype=object)
        if b not in self._A:
            self._A[b] = rotation_matrix(p)
        return r, p, rd, pd, self._A[b]


class _Vec:
    """A 3-vector: value, gradient {q symbol: ∂v/∂q_k (3)}, rate and velocity-quadratic part of
    its second derivative."""

    def __init__(self, val, grad, dot, quad):
        self.val, self.grad, self.dot, self.quad = val, grad, dot, quad

    def __sub__(self, o):
        grad = dict(self.grad)
        for sym, g in o.grad.items():
            grad[sym] = grad[sym] - g if sym in grad else -g
        return _Vec(self.val - o.val, grad, self.dot - o.dot, self.quad - o.quad)


class _Scalar:
    """A scalar: value, gradient {q symbol: ∂s/∂q_k}, rate, velocity-quadratic term."""

    def __init__(self, val, grad, dot, quad):
        self.val, self.grad, self.dot, self.quad = val, grad, dot, quad

    def combine(self, other, factor):
        """self + factor · other."""
        grad = dict(self.grad)
        for sym, g in other.grad.items():
            grad[sym] = grad.get(sym, 0) + factor * g
        return _Scalar(self.val + factor * other.val, grad, self.dot + factor * other.dot,
                       self.quad + factor * other.quad)

    def minus(self, constant):
        """self − constant."""
        return _Scalar(self.val - constant, self.grad, self.dot, self.quad)


def _zeros3():
    return np.array([sp.Integer(0)] * 3, dtype=object)


def _vector(s, b, local, point):
    """A a' (direction) or r + A s' of body b (b < 0: ground, A = I, at rest); ∂(A a')/∂p = B(p, a')."""
    state = s.body(b)
    if state is None:
        return _Vec(np.array([_number(x) for x in local], dtype=object), {}, _zeros3(), _zeros3())
    r, p, rd, pd, _ = state
    val, columns, dot, quad = _rotated(p, pd, local)
    grad = {s.q[7 * b + 3 + k]: np.array([s.define(t) for t in columns[k]], dtype=object) for k in range(4)}
    if point:
        val = [t + [(1.0, (r[i],))] for i, t in enumerate(val)]
        dot = [t + [(1.0, (rd[i],))] for i, t in enumerate(dot)]
        grad.update({s.q[7 * b + k]: np.eye(3, dtype=int)[k].astype(object) for k in range(3)})
    val, dot, quad = (np.array([s.define(t) for t in x], dtype=object) for x in (val, dot, quad))
    return _Vec(val, grad, dot, quad)


def _rotated(p, pd, local):
    """Polynomial terms (see :meth:`_Symbols.define`) of A(p) a', of the columns of
    B(p, a') = ∂(A a')/∂p, of B(p, a') ṗ and of B(ṗ, a') ṗ.  B is linear in p: B(p, a') = Σ_l p_l B_l
    with B_l = B(e_l, a') (numbers, Haug eq. 6.3.9), and A a' = ½ B(p, a') p."""
    Bl = np.array([B_matrix(np.eye(4)[l], np.asarray(local, dtype=float)) for l in range(4)])   # (l, i, k)
    val = [_terms({(k, l): 0.5 * Bl[l, i, k] for k in range(4) for l in range(4)}, p, p) for i in range(3)]
    columns = [[_terms({(l,): Bl[l, i, k] for l in range(4)}, p) for i in range(3)] for k in range(4)]
    dot = [_terms({(l, k): Bl[l, i, k] for k in range(4) for l in range(4)}, p, pd) for i in range(3)]
    quad = [_terms({(l, k): Bl[l, i, k] for k in range(4) for l in range(4)}, pd, pd) for i in range(3)]
    return val, columns, dot, quad


def _terms(coefficients, *factors):
    """[(c, (factors[0][i0], factors[1][i1], …))] from {(i0, i1, …): c}, like monomials merged
    (summed numerically) when the factors are the same symbols."""
    merged = {}
    for index, c in coefficients.items():
        key = tuple(sorted(index)) if len(factors) == 2 and factors[0] is factors[1] else index
        merged[key] = merged.get(key, 0.0) + float(c)
    return [(c, tuple(f[i] for f, i in zip(factors, key))) for key, c in merged.items() if c != 0.0]


def _dot(u, w, factor=1):
    """s = factor · uᵀw: ∇s = factor (wᵀ∇u + uᵀ∇w), quad(s) = factor (wᵀquad(u) + uᵀquad(w) + 2 u̇ᵀẇ)."""
    val = sum(u.val[k] * w.val[k] for k in range(3))
    grad = {}
    for x, y in ((u, w), (w, u)):
        for sym, g in x.grad.items():
            grad[sym] = grad.get(sym, 0) + factor * sum(g[k] * y.val[k] for k in range(3))
    dot = sum(u.dot[k] * w.val[k] + u.val[k] * w.dot[k] for k in range(3))
    quad = sum(w.val[k] * u.quad[k] + u.val[k] * w.quad[k] + 2 * u.dot[k] * w.dot[k] for k in range(3))
    return _Scalar(factor * val, grad, factor * dot, factor * quad)


class _SymbolOps:
    """The operations of :func:`solver.constraints.forms.scalar` on symbols (:class:`_Scalar`);
    ``raw``: the angle θ = atan2(y, x) in (−π, π] of the form read, if it has one."""

    def __init__(self):
        self.raw = None

    dot = staticmethod(_dot)

    @staticmethod
    def half_square(u, c):
        return _dot(u, u, sp.Rational(1, 2)).minus(c ** 2 / 2)

    @staticmethod
    def shift(s, c):
        return s.minus(c)

    @staticmethod
    def combine(a, f, b):
        return a.combine(b, f)

    def atan2(self, y, x):
        """θ with the chain rule of :func:`solver.constraints.forms.atan2_chain`."""
        chain = gy, gx, *_ = atan2_chain(y.val, x.val)
        quad = atan2_quad(chain, y.dot, x.dot, y.quad, x.quad)
        grad = {sym: gy * y.grad.get(sym, 0) + gx * x.grad.get(sym, 0) for sym in {**y.grad, **x.grad}}
        self.raw = sp.atan2(y.val, x.val)
        return _Scalar(self.raw, grad, gy * y.dot + gx * x.dot, quad)


def _joint_vectors(jd, s):
    bodies = (jd["bi"], jd["bj"])
    v = {name: _Vec(*flexible.node_vector(s, bodies[slot[0]], *slot[1:])) if len(slot) > 3
         else _vector(s, bodies[slot[0]], *slot[1:]) for name, slot in jd["vectors"].items()}
    v["d"] = v["Pj"] - v["Pi"]
    for k, name in enumerate(("ex", "ey", "ez")):
        v[name] = _vector(s, -1, np.eye(3)[k], False)
    return v


def _scalar(spec, v, jd, s):
    """The equation or coordinate ``spec`` as (scalar, raw angle or None); constants are parameters."""
    def constant(key):
        return s.c[jd["constants"][key]] if isinstance(key, str) else _number(key)
    ops = _SymbolOps()
    return scalar(spec, v, ops, constant), ops.raw


def _constraint_outputs(desc, s, out):
    nq = desc["nq"]
    q_index = {sym: k for k, sym in enumerate(s.q)}
    rows = {}                            # row → (scalar, raw angle, driver index or None)
    used = desc.get("used_rows")         # the rows the caller reads (relative.c: cut joints); None: all
    wanted = (lambda row: True) if used is None else set(used).__contains__
    vectors = {}

    def joint_vectors(jk):
        if jk not in vectors:
            vectors[jk] = _joint_vectors(desc["joints"][jk], s)
        return vectors[jk]
    for jk, jd in enumerate(desc["joints"]):
        for row, spec in zip(jd["rows"], jd["specs"]):
            if wanted(row):
                rows[row] = (*_scalar(spec, joint_vectors(jk), jd, s), None)
    for dk, dd in enumerate(desc["drivers"]):
        if wanted(dd["row"]):
            jd = desc["joints"][dd["joint"]]
            rows[dd["row"]] = (*_scalar(dd["coordinate"], joint_vectors(dd["joint"]), jd, s), dk)
    for b, row in enumerate(desc["norm_rows"]):
        if not wanted(row):
            continue
        p = s.q[7 * b + 3:7 * b + 7]
        pd = s.v[7 * b + 3:7 * b + 7]
        rows[row] = (_Scalar(sum(x * x for x in p) - 1, {x: 2 * x for x in p}, 0, 2 * sum(x * x for x in pd)),
                     None, None)
    angle_of = {row: k for k, (row, _, _) in enumerate(desc["angles"])}
    for row in sorted(rows):
        x, raw, dk = rows[row]
        out["position"].append(("phi", row, x.val - s.f[dk] if dk is not None else x.val))
        out["gamma"].append(("gamma", row, -x.quad + s.f[dk] if dk is not None else -x.quad))
        for sym in sorted(x.grad, key=q_index.get):
            if x.grad[sym] != 0:
                out["position"].append(("jac", row * nq + q_index[sym], x.grad[sym]))
        if row in angle_of:
            out["position"].append(("ang", angle_of[row], raw))


def _inertia(s, b):
    c = s.c[BODY_PARAMETERS * b:BODY_PARAMETERS * (b + 1)]
    return c[0], np.array([[c[1], c[4], c[6]], [c[4], c[2], c[5]], [c[6], c[5], c[3]]], dtype=object)


def _mass_outputs(desc, s, out):
    nq = desc["nq"]
    for b in range(desc["nb"]):
        o = 7 * b
        m, J = _inertia(s, b)
        for k in range(3):
            out["mass"].append(("M", (o + k) * nq + o + k, m))
        L = L_matrix(s.q[o + 3:o + 7])
        Mpp = 4 * L.T.dot(J).dot(L)
        for i in range(4):
            for k in range(i, 4):
                out["mass"].append(("M", (o + 3 + i) * nq + o + 3 + k, Mpp[i, k]))
                if k != i:
                    out["mass"].append(("M", (o + 3 + k) * nq + o + 3 + i, Mpp[i, k]))
    flexible.mass_outputs(desc, s, out)


def _frame(s, b):
    """(r, p, A, v, ω) of a body, ω = A (2 L(p) ṗ) as in CartesianSystem.frames; None for ground."""
    st = s.body(b)
    if st is None:
        return None
    r, p, rd, pd, A = st
    return r, p, A, rd, A.dot(2 * L_matrix(p).dot(pd))


class SymbolicWrenches:
    """Per-body force at the CM and torque, global axes, on the kernel symbols ``s`` — what
    :class:`solver.forces.Wrenches` is for numbers; ``frames``: :func:`_frame` of every body and
    attachment frame; ``m``: the :mod:`solver.math.namespace` functions on symbols."""

    def __init__(self, s, frames, F, T):
        self.s, self.frames, self.F, self.T = s, frames, F, T
        self.m = _math(s)

    def at_point(self, b, force, point):
        """Add ``force`` acting at global ``point`` of body b (nothing for ground, b < 0)."""
        if b >= 0:
            self.F[b] = self.F[b] + force
            self.T[b] = self.T[b] + cross(point - self.frames[b][0], force)

    def torque(self, b, torque):
        if b >= 0:
            self.T[b] = self.T[b] + torque

    def point(self, b, local):
        """Global position and velocity of body b's point ``local`` (:func:`_point`)."""
        return _point(self.s, self.frames[b] if b >= 0 else None, local)


def _point(s, frame, local):
    """Global position and velocity of a body point (ground: the constant point, at rest)."""
    if frame is None:
        return np.array([_number(x) for x in local], dtype=object), _zeros3()
    r, p, _, v, w = frame
    arm = np.array([s.define(t) for t in _rotated(p, p, local)[0]], dtype=object)
    return r + arm, v + cross(w, arm)


def _body_loads(desc, s):
    """(frames, F, T): per body the applied force at the CM (gravity included) and torque, global
    axes, of every generated force element (:meth:`ForceHook.loads`, kind by kind in :data:`HOOKS`
    order)."""
    nb = desc["nb"]
    g = np.array(s.c[BODY_PARAMETERS * nb:BODY_PARAMETERS * nb + 3], dtype=object)
    frames = [_frame(s, b) for b in range(nb)] + flexible.attachment_frames(desc, s)
    F = [_inertia(s, b)[0] * g for b in range(nb)] + [_zeros3() for _ in frames[nb:]]
    T = [_zeros3() for _ in frames]

    w = SymbolicWrenches(s, frames, F, T)
    for hook in HOOKS.values():
        for entry in desc[hook.key]:
            hook.loads(entry, w)
    return frames, F, T


def _force_outputs(desc, s, out):
    """Q by :meth:`CartesianSystem.forces`: [F ; 2 Lᵀ Aᵀ T + 8 L̇ᵀ J' L̇ p] per body."""
    frames, F, T = _body_loads(desc, s)
    for b in range(desc["nb"]):
        o = 7 * b
        p, pd = s.q[o + 3:o + 7], s.v[o + 3:o + 7]
        _, J = _inertia(s, b)
        L, Ld = L_matrix(p), L_matrix(pd)
        Qp = 2 * L.T.dot(frames[b][2].T.dot(T[b])) + 8 * Ld.T.dot(J.dot(Ld.dot(np.array(p, dtype=object))))
        for k in range(3):
            out["forces"].append(("Q", o + k, F[b][k]))
        for k in range(4):
            out["forces"].append(("Q", o + 3 + k, Qp[k]))
    flexible.force_outputs(desc, s, out, F[desc["nb"]:], T[desc["nb"]:])


def _load_outputs(desc, s, out):
    """F and T of :func:`_body_loads` as outputs (3 per body each)."""
    _, F, T = _body_loads(desc, s)
    for b in range(desc["nb"]):
        for k in range(3):
            out["loads"] += [("F", 3 * b + k, F[b][k]), ("T", 3 * b + k, T[b][k])]


def _math(s):
    """The namespace of :mod:`solver.math.namespace` on symbols, intermediates named by ``s``
    (:meth:`_Symbols.let`); a gate is a Piecewise (each component of a vector named)."""
    def gate(condition, x):
        if isinstance(x, np.ndarray):
            return s.vector([gate(condition, e) for e in x])
        return sp.Piecewise((x, condition), (0, True))
    return SimpleNamespace(**vars(SYMPY_MATH), let=s.let, vector=s.vector, gate=gate)
