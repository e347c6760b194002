"""A contact group (:class:`solver.model.elements.ContactGroup`): every pair of a set of bodies in
contact by one law, without a list of pairs.

Member a and member b (a listed before b) touch as a contact element with body_i = a, body_j = b
would (:class:`solver.contact.element.ContactPair`: the same closed-form points and law), but the
group holds only its n members (body, shape); the pairs are found at each evaluation by the
bounding spheres' overlap (|c_b − c_a| ≤ R_a + R_b), so memory is O(n) for n(n − 1)/2 pairs.

Python finds them one member at a time against the members after it (numpy over those: O(n²)
comparisons, O(n) memory; the reference evaluator); contact.c finds them in the sort-and-sweep
broad phase of broadphase.c, the members being proxies like the shapes of contact elements.

A run's results hold a group's touching pairs at each output point (:func:`pair_table`,
``Results.contact_pairs``: what the GUI draws as arrows, one per touching pair, and plots): per
pair the sum of its points' forces and their mean weighted by their normal forces, as a contact
element's ``contact_force`` and ``contact_point`` are.

The step cap (conservative advancement, :meth:`ContactSet.step_cap`) over the group's pairs is the
least of (g + w)/s over every pair, computed the same way one member at a time.
"""
from __future__ import annotations

import os
from typing import NamedTuple

import numpy as np

from ..errors import ModelError
from ..math.rotations import cross
from .geometry import Shape, pair_function
from .laws import ContactLaw


def group_spec(e, model) -> dict:
    """The plain (JSON) description of contact group ``e`` of ``model``: its fields and each
    member's geometry (``geometries``, a mesh file's path from the project's folder)."""
    spec = e.to_dict()
    shapes = []
    for name in e.bodies:
        shape = dict(model.bodies[name].geometry)
        if shape["shape"] == "mesh":
            shape["file"] = os.path.join(model.base_dir, shape["file"])
        shapes.append(shape)
    spec["geometries"] = shapes
    return spec


def group_queries(names, kinds, where) -> dict:
    """{(kind_a, kind_b): (query, swapped)} (:func:`solver.contact.geometry.pair_function`) for every
    two shape kinds of a group's members ``names`` of shape ``kinds`` that may meet (a kind with
    itself when two members have it); a ModelError names ``where``.bodies and two members without a
    contact law between them."""
    first, count = {}, {}
    for name, kind in zip(names, kinds):
        first.setdefault(kind, name)
        count[kind] = count.get(kind, 0) + 1
    queries = {}
    for ka, na in first.items():
        for kb, nb in first.items():
            if ka == kb and count[ka] < 2:
                continue
            try:
                queries[ka, kb] = pair_function(ka, kb, where)
            except ModelError:
                other = nb if na != nb else next(x for x, k in zip(names, kinds) if k == kb and x != na)
                raise ModelError(f"{where}.bodies: '{na}' ({ka}) and '{other}' ({kb}) may touch, and there is no "
                                 f"contact between a {ka} and a {kb}") from None
    return queries


def member_pair(spec: dict, pair) -> dict:
    """The spec of the group of two of ``spec``'s members ``pair`` = (a, b), a listed before b: the
    pair (a, b) of the group alone.  A ModelError names what is wrong with ``pair``."""
    names = list(spec["bodies"])
    try:
        a, b = (names.index(x) for x in pair)
    except (TypeError, ValueError):
        raise ModelError(f"pair: must be two bodies of contact group '{spec['name']}' "
                         f"(bodies: {', '.join(names[:10])}{' …' if len(names) > 10 else ''}); got {pair!r}") from None
    if a >= b:
        raise ModelError(f"pair: '{pair[0]}' must be listed before '{pair[1]}' in contact group '{spec['name']}' "
                         "(the force is on the second)")
    return {**spec, "bodies": [names[a], names[b]], "geometries": [spec["geometries"][a], spec["geometries"][b]]}


class ContactGroupMembers:
    """The members of one contact group: body indices ``body`` (n,), shapes, bounding radii, the
    closed-form query of each pair of shape kinds, the group's law."""

    def __init__(self, spec: dict, index: dict):
        """spec: :func:`group_spec`; index: body name → body index."""
        self.name, self.spec = spec["name"], spec
        where = f"forces '{self.name}'"
        self.names = list(spec["bodies"])
        self.body = np.array([index[b] for b in self.names], dtype=int)
        try:
            self.shapes = [Shape.of(g) for g in spec["geometries"]]
        except ModelError as exc:
            raise ModelError(f"{where}.bodies: {exc}") from None
        self.queries = group_queries(self.names, [s.kind for s in self.shapes], where)
        self.centre = np.array([s.centre for s in self.shapes])
        self.bound = np.array([s.bound() for s in self.shapes])
        self.width = np.array([s.thickness() for s in self.shapes])
        if not np.all(np.isfinite(self.bound)):
            raise ModelError(f"{where}.bodies: a group's bodies need finite shapes (a plane touches through contact "
                             "elements)")
        self.law = ContactLaw.of(spec)

    def __len__(self):
        return len(self.names)

    def world_centres(self, frames):
        """The members' shape centres r_b + A_b c (n, 3)."""
        return frames.r[self.body] + np.einsum("kab,kb->ka", frames.A[self.body], self.centre)

    def candidates(self, frames):
        """[(a, b)], a < b: the member pairs whose bounding spheres overlap."""
        x, R = self.world_centres(frames), self.bound
        found = []
        for a in range(len(self) - 1):
            d = x[a + 1:] - x[a]
            near = np.einsum("ka,ka->k", d, d) <= (R[a] + R[a + 1:]) ** 2
            found.extend((a, a + 1 + int(k)) for k in np.flatnonzero(near))
        return found

    def points(self, frames, a, b):
        """[(P, n, δ)] of member a (side i) on member b (side j)."""
        si, sj = self.shapes[a], self.shapes[b]
        ba, bb = self.body[a], self.body[b]
        pi, pj = si.placed(frames.r[ba], frames.A[ba]), sj.placed(frames.r[bb], frames.A[bb])
        query, swapped = self.queries[si.kind, sj.kind]
        if swapped:
            return [(P, -n, d) for P, n, d in query(pj, pi)]
        return query(pi, pj)

    def step_cap(self, frames):
        """The least (g + w)/s over the member pairs (module docstring; inf when none approaches)."""
        x = self.world_centres(frames)
        b = self.body
        v = frames.v[b] + cross(frames.w[b], x - frames.r[b])
        spin = np.linalg.norm(frames.w[b], axis=1) * self.bound
        cap = np.inf
        for a in range(len(self) - 1):
            rest = slice(a + 1, None)
            d, dv = x[rest] - x[a], v[rest] - v[a]
            gap = np.maximum(np.sqrt(np.einsum("ka,ka->k", d, d)) - self.bound[a] - self.bound[rest], 0.0)
            speed = np.sqrt(np.einsum("ka,ka->k", dv, dv)) + spin[a] + spin[rest]
            with np.errstate(divide="ignore"):
                cap = min(cap, float(np.min((gap + np.minimum(self.width[a], self.width[rest])) / speed)))
        return cap


class ContactPairs(NamedTuple):
    """The touching pairs of a contact group (or element) at a run's output points, one row per
    output point and pair, in output order, pairs sorted within a point: ``index`` (P,) the output
    point, ``a``, ``b`` (P,) the pair's members (indices into ``bodies``, a < b; a contact element:
    0 = body_i, 1 = body_j), ``point`` (P, 3) its contact points' mean weighted by their normal
    forces (global; NaN where all are 0), ``force`` (P, 3) the sum of its points' forces on b from
    a (global axes), ``power`` (P,) the power they dissipate; ``bodies`` the member names."""
    index: np.ndarray
    a: np.ndarray
    b: np.ndarray
    point: np.ndarray
    force: np.ndarray
    power: np.ndarray
    bodies: tuple


def pair_table(one, members, names, frames, n) -> ContactPairs:
    """ContactPairs of the contact set ``one`` (one contact element, or one group: its pairs found by
    the bounding spheres as in a run) at the ``n`` stacked states of ``frames``; ``members`` (m,) the
    body index of each member (ground −1), ``names`` their names.  For each pair with contact
    points P_k, forces F_k, normal forces f_k: F = Σ F_k, P = Σ f_k P_k / Σ f_k
    (:func:`solver.contact.element.contact_history` reduces these rows to a contact's force)."""
    lookup = np.full(max(int(np.max(members)), 0) + 2, -1)
    lookup[np.asarray(members, dtype=int)] = np.arange(len(members))      # body index → member (−1: last slot)
    rows = []
    for k in range(n):
        state = frames.state(k)
        points = one.points(state, pairs=range(len(one.pairs)))
        if not len(points.owner):
            continue
        F, fn, D = one.forces(state, points)
        pairs, at = np.unique(np.column_stack([lookup[points.bi], lookup[points.bj]]), axis=0, return_inverse=True)
        at, p = at.reshape(-1), len(pairs)
        force, moment = np.zeros((p, 3)), np.zeros((p, 3))
        np.add.at(force, at, F)
        np.add.at(moment, at, fn[:, None] * points.P)
        weight = np.bincount(at, fn, p)
        with np.errstate(divide="ignore", invalid="ignore"):
            point = np.where(weight[:, None] > 0.0, moment / weight[:, None], np.nan)
        rows.append((np.full(p, k), pairs[:, 0], pairs[:, 1], point, force, np.bincount(at, D, p)))
    if not rows:
        return ContactPairs(*(np.zeros(0, dtype=int),) * 3, np.zeros((0, 3)), np.zeros((0, 3)), np.zeros(0),
                            tuple(names))
    return ContactPairs(*(np.concatenate(x) for x in zip(*rows)), tuple(names))
