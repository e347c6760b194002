"""The evaluator of a model's contact elements: a broad phase over all of them, then the exact
contact points of the pairs it keeps (:mod:`solver.contact.geometry`) and the forces of
:mod:`solver.contact.laws` at each point.

At a contact point P with normal n (from body i into body j) and penetration δ, with V_b the
velocity of body b's material point at P and u = V_j − V_i::

    δ̇ = −n·u,   v_t = u − (n·u) n,   F = f_n(δ, δ̇) n − μ(|v_t|) f_n v_t/|v_t|

F acts on body j at P, −F on body i.  The power it dissipates (what leaves the kinetic, gravity
and contact potential energy) is D = −F·u − d/dt[k δ^(e+1)/(e+1)] = (f_n − k δ^e) δ̇ + μ f_n |v_t|:
c(δ) δ̇² + μ f_n |v_t| while f_n > 0, −k δ^e δ̇ (the spring energy lost) while the clip holds f_n
at 0.  The law is stateless (a function of the bodies' positions
and velocities), so a run's contact forces are re-evaluated exactly from its recorded body states
(:func:`contact_history`, ``Results.contact_force``).

Tunnelling: the law acts only where the shapes overlap, so a step that carries a shape through
another from one side to the other sees no contact at either end (BDF stepped the Geneva pin
through its slot walls: the wheel never turned, status ok).  :meth:`ContactSet.step_cap` bounds the
next step by conservative advancement (Mirtich (1996), "Impulse-based dynamic simulation of rigid
body systems", PhD thesis, UC Berkeley): no two points of a pair of finite shapes approach
faster than s = |v_cj − v_ci| + |ω_i| R_i + |ω_j| R_j (centre velocities, bounding radii), so a step

    h ≤ (g + w)/s,   g = max(0, |c_j − c_i| − R_i − R_j),   w = min(thickness_i, thickness_j)

(g the bounding spheres' gap, w the thinner shape's half extent: :meth:`Shape.thickness`) cannot
pass one shape through the other without a step end inside it, where the force and the step
control see the contact.  A plane is a half-space: nothing passes through it, it needs no cap.

Broad phase: each shape has a bounding sphere about its centre (a plane: the half-space).  One
vectorized test of all the model's pairs per evaluation (centre distance ≤ R_i + R_j, or a bounding
sphere's signed distance to a plane ≤ its radius) keeps the pairs that may touch; only those run
their exact query, so n bodies resting apart cost n² cheap comparisons in numpy, not n² queries.
"""
from __future__ import annotations

import os
from typing import NamedTuple

import numpy as np

from ..errors import ModelError
from ..math.rotations import cross
from .geometry import Shape, pair_function
from .laws import ContactLaw


def contact_spec(e, model) -> dict:
    """The plain (JSON) description of contact element ``e`` of ``model``, its geometry resolved
    (its own field, else the body's: ``Contact.shape``; a mesh file's path from the project's
    folder); what the evaluator and the results need."""
    spec = e.to_dict()
    for side in ("i", "j"):
        shape = dict(e.shape(side, model.bodies))
        if shape["shape"] == "mesh":
            shape["file"] = os.path.join(model.base_dir, shape["file"])
        spec[f"geometry_{side}"] = shape
    return spec


class ContactPair:
    """One contact element between two bodies' shapes."""

    def __init__(self, spec: dict, index: dict):
        """spec: :func:`contact_spec`; index: body name → body index (ground: −1)."""
        self.name, self.spec = spec["name"], spec
        self.bi, self.bj = (-1 if spec[key] == "ground" else index[spec[key]] for key in ("body_i", "body_j"))
        self.si, self.sj = (self._shape(spec, side) for side in ("i", "j"))
        self.query, self.swapped = pair_function(self.si.kind, self.sj.kind, f"forces '{self.name}'")
        self.law = ContactLaw.of(spec)

    def _shape(self, spec, side):
        try:
            return Shape.of(spec[f"geometry_{side}"])
        except ModelError as exc:
            raise ModelError(f"forces '{self.name}'.geometry_{side}: {exc}") from None

    def points(self, frames):
        """[(P, n, δ)]: the contact points (module docstring of :mod:`solver.contact.geometry`)."""
        ri, Ai = frames.get(self.bi)[:2]
        rj, Aj = frames.get(self.bj)[:2]
        pi, pj = self.si.placed(ri, Ai), self.sj.placed(rj, Aj)
        if self.swapped:
            return [(P, -n, d) for P, n, d in self.query(pj, pi)]
        return self.query(pi, pj)


def _with_ground(x, row):
    """``x`` (nb, …) with ``row`` appended: index −1 is ground."""
    return np.concatenate([x, row[None]])


class ContactPoints(NamedTuple):
    """Contact points as arrays: ``owner`` (m,) the element of each (a pair's index, or a group's:
    len(pairs) + its index), its bodies ``bi``, ``bj`` (−1: ground), P, n (m, 3), δ (m,)."""
    owner: np.ndarray
    bi: np.ndarray
    bj: np.ndarray
    P: np.ndarray
    n: np.ndarray
    delta: np.ndarray


class ContactSet:
    """All contact elements and contact groups (:class:`solver.contact.group.ContactGroupMembers`)
    of a model, evaluated together (module docstring: broad phase; the forces of all contact points
    in one vectorized evaluation).  ``element_names``: the contact elements and groups it evaluates."""

    def __init__(self, pairs, groups=()):
        self.pairs, self.groups = pairs, list(groups)
        self.element_names = [p.name for p in pairs] + [g.name for g in self.groups]
        self.name = self.element_names[0]
        shape = (-1, 3)
        self.bi = np.array([p.bi for p in pairs], dtype=int)
        self.bj = np.array([p.bj for p in pairs], dtype=int)
        self.ci = np.array([p.si.centre for p in pairs]).reshape(shape)
        self.cj = np.array([p.sj.centre for p in pairs]).reshape(shape)
        self.ni = np.array([p.si.axis for p in pairs]).reshape(shape)
        self.nj = np.array([p.sj.axis for p in pairs]).reshape(shape)
        self.Ri = np.array([p.si.bound() for p in pairs], dtype=float)
        self.Rj = np.array([p.sj.bound() for p in pairs], dtype=float)
        self.laws = ContactLaw.stacked([p.law for p in pairs] + [g.law for g in self.groups])
        self._states = None
        finite = np.isfinite(self.Ri) & np.isfinite(self.Rj)
        self.finite = np.flatnonzero(finite)           # the pairs a step could tunnel through (step_cap)
        self.width = np.array([min(p.si.thickness(), p.sj.thickness()) for p in pairs], dtype=float)[finite]

    def bind_states(self, evaluate):
        """Evaluate stacked states with ``evaluate(frames) → (F, T, elastic energy)`` (the compiled
        contact of a generated system, :func:`solver.codegen.contact.bind_states`): the recorder's
        post-processing then takes all of a chunk's states in one call (``stacked``)."""
        self._states = evaluate

    @property
    def stacked(self):
        return self._states is not None

    def step_cap(self, frames):
        """The largest step that cannot carry a shape through another (module docstring:
        conservative advancement) at one state; inf when no pair of finite shapes approaches."""
        cap = min((g.step_cap(frames) for g in self.groups), default=np.inf)
        k = self.finite
        if not len(k):
            return cap
        r, A, v, w = (_with_ground(x, z) for x, z in ((frames.r, np.zeros(3)), (frames.A, np.eye(3)),
                                                       (frames.v, np.zeros(3)), (frames.w, np.zeros(3))))
        bi, bj = self.bi[k], self.bj[k]
        oi, oj = np.einsum("kab,kb->ka", A[bi], self.ci[k]), np.einsum("kab,kb->ka", A[bj], self.cj[k])
        d = r[bj] + oj - r[bi] - oi
        gap = np.maximum(np.sqrt(np.einsum("ka,ka->k", d, d)) - self.Ri[k] - self.Rj[k], 0.0)
        dv = v[bj] + cross(w[bj], oj) - v[bi] - cross(w[bi], oi)
        speed = (np.sqrt(np.einsum("ka,ka->k", dv, dv)) + np.linalg.norm(w[bi], axis=1) * self.Ri[k]
                 + np.linalg.norm(w[bj], axis=1) * self.Rj[k])
        with np.errstate(divide="ignore"):
            return min(cap, float(np.min((gap + self.width) / speed)))

    def candidates(self, frames):
        """Indices of the pairs whose bounding volumes overlap."""
        r = _with_ground(frames.r, np.zeros(3))
        A = _with_ground(frames.A, np.eye(3))
        Ai, Aj = A[self.bi], A[self.bj]
        d = (r[self.bj] + np.einsum("kab,kb->ka", Aj, self.cj)) - (r[self.bi] + np.einsum("kab,kb->ka", Ai, self.ci))
        plane_i, plane_j = np.isinf(self.Ri), np.isinf(self.Rj)
        finite = ~(plane_i | plane_j)
        near = np.zeros(len(self.pairs), dtype=bool)
        near[finite] = np.einsum("ka,ka->k", d[finite], d[finite]) <= (self.Ri[finite] + self.Rj[finite]) ** 2
        near[plane_i] = np.einsum("kab,kb,ka->k", Ai[plane_i], self.ni[plane_i], d[plane_i]) <= self.Rj[plane_i]
        near[plane_j] = -np.einsum("kab,kb,ka->k", Aj[plane_j], self.nj[plane_j], d[plane_j]) <= self.Ri[plane_j]
        return np.flatnonzero(near)

    def points(self, frames, pairs=None, groups=True):
        """ContactPoints of the ``pairs`` (indices; default: the broad phase's candidates) and, with
        ``groups``, of the groups' pairs whose bounds overlap."""
        found = []                                     # (owner, bi, bj, P, n, δ)
        for k in self.candidates(frames) if pairs is None else pairs:
            found.extend((k, self.bi[k], self.bj[k], *point) for point in self.pairs[k].points(frames))
        for g, group in enumerate(self.groups if groups else ()):
            for a, b in group.candidates(frames):
                found.extend((len(self.pairs) + g, group.body[a], group.body[b], *point)
                             for point in group.points(frames, a, b))
        if not found:
            return ContactPoints(*(np.zeros(0, dtype=int),) * 3, np.zeros((0, 3)), np.zeros((0, 3)), np.zeros(0))
        owner, bi, bj, P, n, delta = zip(*found)
        return ContactPoints(*(np.array(x, dtype=int) for x in (owner, bi, bj)),
                             *(np.array(x, dtype=float) for x in (P, n, delta)))

    def forces(self, frames, points):
        """(F (m, 3) on body j, f_n (m,), dissipated power D (m,)) at ContactPoints (module docstring)."""
        r, v, w = (_with_ground(x, np.zeros(3)) for x in (frames.r, frames.v, frames.w))
        bi, bj, P, n, delta = points.bi, points.bj, points.P, points.n, points.delta
        u = v[bj] + cross(w[bj], P - r[bj]) - v[bi] - cross(w[bi], P - r[bi])
        law = self.laws.take(points.owner)
        un = np.einsum("ka,ka->k", n, u)
        fn = law.normal_force(delta, -un)
        vt = u - un[:, None] * n
        speed = np.sqrt(np.einsum("ka,ka->k", vt, vt))
        friction = np.where((speed > 0.0) & (fn > 0.0), law.friction_coefficient(speed) * fn, 0.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            F = fn[:, None] * n - np.where(speed > 0.0, friction / speed, 0.0)[:, None] * vt
        return F, fn, (fn - law.stiffness * delta ** law.exponent) * -un + friction * speed

    def apply(self, t, frames, out):
        if np.ndim(frames.r) > 2:                  # stacked states (``stacked``): compiled
            F, T, _ = self._states(frames)
            out.F += F
            out.T += T
            return
        points = self.points(frames)
        if not len(points.owner):
            return
        F, P = self.forces(frames, points)[0], points.P
        for b, sign in ((points.bj, 1.0), (points.bi, -1.0)):
            body = b >= 0
            np.add.at(out.F, b[body], sign * F[body])
            np.add.at(out.T, b[body], sign * cross(P[body] - frames.r[b[body]], F[body]))

    def potential(self, frames):
        if np.ndim(frames.r) > 2:
            return self._states(frames)[2]
        points = self.points(frames)
        if not len(points.owner):
            return 0.0
        return float(np.sum(self.laws.take(points.owner).potential(points.delta)))

    def conserves_energy(self):
        """No damping and no friction: the contact's work is all in its elastic potential."""
        return not any(p.law.dissipative() for p in [*self.pairs, *self.groups])

    def results_meta(self) -> dict:
        """What a run's results keep to re-evaluate the contact forces (``Results.contact_force``)."""
        return {"contacts": [p.spec for p in [*self.pairs, *self.groups]]}


def contact_history(spec, index, frames, n, pair=None):
    """(force, contact point, dissipated power (n,), pairs) of contact element ``spec`` at each of
    the ``n`` stacked states of ``frames`` (``frames.state(k)``): its force on body j (n, 3), the sum
    over its contact points, their mean weighted by the normal forces (n, 3; NaN while apart), the
    sum of their dissipated powers, and its :class:`~solver.contact.group.ContactPairs` (the rows
    these are read from).  A contact group's spec (``bodies``): with ``pair`` = (a, b), two of its
    members, a before b, the same for that pair (the force on b: the group of those two); without,
    the total force on each member from the others (n, m, 3), no point (None), the power of all its
    pairs and the table of its touching pairs."""
    from .group import ContactGroupMembers, member_pair, pair_table
    if "bodies" not in spec:
        one = ContactSet([ContactPair(spec, index)])
        members, names = [one.bi[0], one.bj[0]], [spec["body_i"], spec["body_j"]]
    else:
        if pair is not None:
            spec = member_pair(spec, pair)
        one = ContactSet([], [ContactGroupMembers(spec, index)])
        members, names = one.groups[0].body, spec["bodies"]
    table = pair_table(one, members, names, frames, n)
    power = np.bincount(table.index, table.power, n)
    if "bodies" in spec and pair is None:
        force = np.zeros((n, len(names), 3))
        np.add.at(force, (table.index, table.b), table.force)
        np.add.at(force, (table.index, table.a), -table.force)
        return force, None, power, table
    force, point = np.zeros((n, 3)), np.full((n, 3), np.nan)
    force[table.index], point[table.index] = table.force, table.point     # one pair: one row per point at most
    return force, point, power, table
