"""The clusters of a compiled BDF's unknowns: the structure of its Jacobian (bdf.c "structure").

The unknowns y = [z, ż] of a partition; f(y) = [ż, z̈].  z̈ of one set of unknowns depends on
another's only through something that couples their coordinates.  Two coordinates of q are in
one cluster when they are on the path of one body from the root (its root subtree: the tree's mass
matrix and the articulated recursion; a Cartesian body's seven), in one row of Φ_q (cut joints,
drivers, couplers), in one column of the partition's V or U (z and the dependent solve), or on the
bodies of one force element other than contact.  Contact couples bodies only while they touch:
segment.c (segment_groups) joins the clusters of the bodies with a contact point at the state of
each Jacobian, and bdf.c estimates J by perturbing one unknown of every joined component at once
(Curtis, Powell & Reid (1974): structurally orthogonal columns) and factors I − cJ block by block.
So a pile of n free spheres that touch in small groups costs a few dozen right-hand sides and
LUs of 12 × 12 blocks per Jacobian instead of 12 n right-hand sides and one dense 12 n LU.

A coupling these rules miss would only make J less exact: BDF's Newton iterations evaluate the
right-hand side itself (a J that is off slows them or makes them fail, and bdf.c then evaluates J
again and halves the step), so the solution keeps its tolerance.  A force element whose bodies are
not known puts every unknown in one cluster (dense J, as without this module).
"""
from __future__ import annotations

import numpy as np

from ..contact.element import ContactSet
from .contact import CARTESIAN, contact_mode
from .tree import body_columns, describe_tree

_BODY_FIELDS = ("bi", "bj", "b")       # force elements' body indices (solver/forces.py, joint_forces.py)


def _bodies(element):
    """The bodies of a force element (its own or its joint coordinate's), or None when unknown."""
    found = [getattr(x, name) for x in (element, getattr(element, "coordinate", None)) if x is not None
             for name in _BODY_FIELDS if isinstance(getattr(x, name, None), (int, np.integer))]
    return found or None


def _pattern(matrix):
    """(rows, columns) of the non-zeros of a dense or scipy.sparse matrix."""
    rows, cols = matrix.nonzero() if hasattr(matrix, "tocsc") else np.nonzero(np.asarray(matrix))
    return np.asarray(rows), np.asarray(cols)


def clusters(system, part, t=0.0):
    """(cluster of each unknown of y = [z, ż] (2 dof,), cluster of each body (nb,; −1: no
    coordinate moves it), number of clusters) of ``part`` (module docstring; Φ_q's pattern at
    (part.q_ref, t)), or None when there is only one (a dense J)."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components
    nq, nb = system.nq, system.nb
    mode = contact_mode(system)
    if mode is None:
        return None
    paths = [list(range(7 * b, 7 * b + 7)) for b in range(nb)] if mode == CARTESIAN else \
        body_columns(describe_tree(system))
    groups = [cols for cols in paths if len(cols)]
    for f in system.force_elements:
        if isinstance(f, ContactSet):
            continue
        bodies = _bodies(f)
        if bodies is None:
            return None
        groups.append([paths[b][0] for b in bodies if b >= 0 and len(paths[b])])
    heads, tails = [], []
    for cols in groups:                          # each group's columns chained to its first
        heads += [cols[0]] * (len(cols) - 1)
        tails += cols[1:]
    for matrix in (system.constraints(part.q_ref, t).jac, part.U, part.V):
        rows, cols = _pattern(matrix)
        if matrix is not part.U and matrix is not part.V:
            rows, cols = cols, rows              # Φ_q: a row's columns; U, V: a column's rows
        first = {}
        for a, b in zip(cols.tolist(), rows.tolist()):
            heads.append(first.setdefault(a, b))
            tails.append(b)
    graph = coo_matrix((np.ones(len(heads)), (heads, tails)), shape=(nq, nq))
    count, label = connected_components(graph, directed=False)
    if count < 2:
        return None
    rows, cols = _pattern(part.V)
    z_first = np.full(part.V.shape[1], -1)
    z_first[cols[::-1]] = rows[::-1]            # each column's first coordinate
    z_cluster = label[z_first]
    used, z_cluster = np.unique(z_cluster, return_inverse=True)
    if len(used) < 2:
        return None
    renumber = np.full(count, -1)
    renumber[used] = np.arange(len(used))
    body = np.array([renumber[label[cols[0]]] if len(cols) else -1 for cols in paths], dtype=np.intc)
    return (np.ascontiguousarray(np.concatenate([z_cluster, z_cluster]), dtype=np.intc), body, len(used))
