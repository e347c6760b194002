"""Kinematic graph of a model → spanning tree (mobilizers) + cut joints (loop closures).

A pure topology step (no kinematics): bodies are nodes, ground is the root, every model joint an
edge.  The spanning tree is grown breadth-first from ground; among the joints that could attach a
new body at the same depth the one with more constraint equations (fewer DOFs) is preferred, then
model order, so e.g. a revolute is put in the tree rather than a spherical joint of the same loop.
Joints of a kind without a mobilizer (:data:`solver.formulations.mobilizers.MOBILIZERS`: massless
links such as ``distance``, joint primitives such as ``inplane``) are never tree joints.  A body (or group of
bodies) not connected to ground gets a 6-DOF ``free`` joint to ground (its first body in model
order is the floating base).  Every joint not in the tree is a cut joint, closed by constraints.

A tree joint whose ``body_i`` is the child (the tree reaches ``body_j`` first) is *inverted*: the
formulation moves body_i relative to body_j with the inverse joint transform, still in the model
joint's own coordinates, and reports reactions on body_j from body_i as the model defines them.
"""
from __future__ import annotations

import heapq
from dataclasses import dataclass

from ..model.model import GROUND
from .mobilizers import MOBILIZERS


@dataclass
class TreeEdge:
    """One mobilizer: ``child`` moves relative to ``parent`` (body indices, −1 = ground).

    joint: index of the model joint, or None for a free joint added for a floating base;
    inverted: the model joint's body_i is the child."""
    parent: int
    child: int
    joint: int | None
    inverted: bool = False


@dataclass
class Topology:
    """edges: tree joints in parent-before-child order; cut: indices of off-tree model joints;
    parent_edge[b]: index in ``edges`` of body b's mobilizer; children[e]: edges whose parent is
    the child of edge e."""
    edges: list
    cut: list
    parent_edge: list
    children: list


def build_topology(body_names, joints):
    """Spanning tree of the body/joint graph (see module docstring).

    body_names: list of body names (index = body index); joints: list of model Joint objects."""
    index = {n: k for k, n in enumerate(body_names)}
    ends = [(index.get(j.body_i, -1) if j.body_i != GROUND else -1,
             index.get(j.body_j, -1) if j.body_j != GROUND else -1) for j in joints]
    adjacency = {b: [] for b in range(-1, len(body_names))}
    for k, (bi, bj) in enumerate(ends):
        if joints[k].type not in MOBILIZERS or bi == bj:
            continue
        adjacency[bi].append(k)
        adjacency[bj].append(k)

    depth = {-1: 0}
    edges = []
    used = set()
    heap = []

    def push_from(b):
        for k in adjacency[b]:
            if k not in used:
                other = ends[k][1] if ends[k][0] == b else ends[k][0]
                if other not in depth:
                    heapq.heappush(heap, (depth[b] + 1, -len(joints[k].kind.equations), k, b, other))

    def grow():
        while heap:
            d, _, k, parent, child = heapq.heappop(heap)
            if child in depth:
                continue
            depth[child] = d
            used.add(k)
            edges.append(TreeEdge(parent, child, k, inverted=(ends[k][0] == child)))
            push_from(child)

    push_from(-1)
    grow()
    for b in range(len(body_names)):
        if b not in depth:                       # floating base: free joint to ground
            depth[b] = 1
            edges.append(TreeEdge(-1, b, None))
            push_from(b)
            grow()
    cut = [k for k in range(len(joints)) if k not in used]
    parent_edge = [0] * len(body_names)
    for e, edge in enumerate(edges):
        parent_edge[edge.child] = e
    children = [[c for c, other in enumerate(edges) if other.parent == edge.child] for edge in edges]
    return Topology(edges, cut, parent_edge, children)
