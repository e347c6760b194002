"""Generated kernels for flexible bodies (Kim & Yoo (1997): floating frame of reference, modal
coordinates) — the flexible part of :mod:`solver.codegen.derive`.

A flexible body adds to the Cartesian kernels, on its columns [r, p] (7-column block) and a (k modal
coordinates):

    M block = Tᵀ M̂(a) T,   Q = gravity + quadratic velocity − K_aa a − C_aa ȧ
                          (:func:`solver.flexible.floating.mass_block`, ``generalized_forces``)

evaluated here on polynomials of the kernel inputs (:mod:`solver.codegen.poly`) by the same
functions the numeric path calls, with the body's
shape integrals (:class:`solver.flexible.modal.ShapeIntegrals`: m, S₀, S_Φ, E0, E1, E2, J_sec, Z,
M_aa, K_aa, C_aa) as kernel *parameters*.  A joint slot on a flexible body is the body-frame vector
ℓ(a) = ℓ₀ + D a of its node (D = Φ_node for a point, −c̃' Ψ_node for a direction c';
:mod:`solver.flexible.joints`), and its value, gradient, rate and quadratic term come from
:func:`solver.flexible.joints.slot_kinematics`, with the node's mode shapes Φ_node, Ψ_node as
parameters too.  So the cache key (the description) holds the structure — bodies, mode counts,
nodes, node positions ℓ₀ and marker directions c' (geometry, as for rigid bodies) — and editing a
material, a section or the damping ratio reuses the library.  Spring-dampers and applied loads at
flexible nodes act on attachment frames (:func:`attachment_frames`) whose wrenches map to the body's
coordinates by :func:`solver.flexible.loads.attachment_forces`; rotational spring-dampers and
bushings there are not generated (:func:`unsupported`).
"""
from __future__ import annotations

import numpy as np

from ..flexible.floating import configuration_terms, generalized_forces, mass_block
from ..flexible.joints import slot_kinematics
from ..flexible.loads import attachment_forces, attachment_motion
from ..forces import BushingForce, RotationalSpringDamperForce
from ..flexible.modal import ShapeIntegrals
from ..math.rotations import L_matrix, rotation_matrix, skew
from .poly import Poly, defined, named, polys, symbols


def unsupported(system):
    """Why the flexible bodies of ``system`` cannot be generated, or None (:func:`unsupported_forces`)."""
    names = [f.name for f in unsupported_forces(system)]
    if names:
        return ("rotational spring-dampers and bushings on flexible bodies are not generated yet "
                f"({', '.join(names)})")
    return None


def unsupported_forces(system):
    """The force elements that keep ``system``'s flexible bodies from being generated: rotational
    spring-dampers and bushings on their nodes (they need the node frame's rotation exp(Ψ a)~;
    spring-dampers and applied loads are generated)."""
    return [f for f in system.force_elements if isinstance(f, (RotationalSpringDamperForce, BushingForce))
            and max(f.bi, f.bj) >= system.nb]


def field_sizes(k):
    """{field of ShapeIntegrals: shape} of a body with k modes, in parameter order."""
    return {"mass": (), "S0": (3,), "S_phi": (3, k), "E0": (3, 3), "E1": (3, 3, k), "E2": (3, 3, k, k),
            "J_sec": (3, 3), "Z": (3, k, k), "M_aa": (k, k), "K_aa": (k, k), "C_aa": (k, k)}


def describe(system, joints, npar, gravity, snap):
    """(description of the flexible bodies, new parameter count).  ``joints``: derive's joint
    descriptions, whose slots on flexible bodies get the node position or marker direction ℓ₀
    (``snap``-ped: tiny entries are zeros) and a 4th entry {"par": offset of the node's shape
    (3 × k), "k", "ao": first modal column, "direction"}; attachments (force elements at nodes,
    frames nb, nb + 1, …): body, the node's shape offset and ū₀ (node + offset, body frame);
    ``gravity``: offset of g in the parameters."""
    bodies = []
    for fb in system.flex:
        bodies.append({"block": fb.o // 7, "ao": int(fb.ao), "k": int(fb.k), "par": npar})
        npar += sum(int(np.prod(shape)) for shape in field_sizes(fb.k).values())
    nodes = {}                      # "body:node" → parameter offset of [Φ_node, Ψ_node] (6 × k)

    def node_shapes(f, node):
        nonlocal npar
        key = f"{f}:{node}"
        if key not in nodes:
            nodes[key] = npar
            npar += 6 * system.flex[f].k
        return nodes[key]
    for jk, fj in system.flex_joints.items():
        for name, (side, _, D, point) in fj.slots.items():
            if D is None:
                continue
            f = fj.sides[side][0] // 7 - system.nb
            k = system.flex[f].k
            joints[jk]["vectors"][name] = [side, snap(fj.slots[name][1]), bool(point),
                                           {"par": node_shapes(f, fj.nodes[side]) + (0 if point else 3 * k), "k": k,
                                            "ao": int(system.flex[f].ao), "direction": not point}]
    attachments = [{"body": system.flex_names.index(name), "par": node_shapes(system.flex_names.index(name), node),
                    "u0": snap(system.flex[system.flex_names.index(name)].body.mesh.nodes[node] + offset)}
                   for name, node, offset in system.attachments.items]
    return {"bodies": bodies, "nodes": nodes, "attachments": attachments, "gravity": gravity}, npar


def parameters(system, desc, par):
    """Write the flexible bodies' shape integrals and node shapes into ``par`` (describe's layout)."""
    flex = desc.get("flexible")
    if not flex:
        return
    for fb, bd in zip(system.flex, flex["bodies"]):
        o = bd["par"]
        for name, shape in field_sizes(fb.k).items():
            n = int(np.prod(shape))
            par[o:o + n] = np.ravel(getattr(fb.body, name))
            o += n
    for key, o in flex["nodes"].items():
        f, node = (int(x) for x in key.split(":"))
        body, k = system.flex[f].body, system.flex[f].k
        par[o:o + 6 * k] = np.concatenate([np.ravel(body.node_phi[node]), np.ravel(body.node_psi[node])])


def node_vector(s, b, local, point, slot):
    """(value, {q symbol: ∂/∂q}, rate, quad) of a joint slot of body b carried by a flexible node
    (module docstring): 3-vectors of Polys, each entry one definition of derive's symbols ``s``."""
    o, k, ao = 7 * b, slot["k"], slot["ao"]
    r, p, rd, pd = (polys(x) for x in (s.q[o:o + 3], s.q[o + 3:o + 7], s.v[o:o + 3], s.v[o + 3:o + 7]))
    shape = polys(s.c[slot["par"]:slot["par"] + 3 * k]).reshape(3, k)
    c = np.asarray(local, dtype=float)
    D = named(s)(-skew(c) @ shape) if slot["direction"] else shape
    a, ad = polys(s.q[ao:ao + k]), polys(s.v[ao:ao + k])
    val, B, AD, rate, quad = slot_kinematics(_rotation(s, b), p, named(s)(c + D @ a), D, pd, ad, named(s))
    if point:
        val, rate = val + r, rate + rd

    grad = {s.q[o + 3 + j]: named(s)(B[:, j]) for j in range(4)}
    grad.update({s.q[ao + m]: named(s)(AD[:, m]) for m in range(k)})
    if point:
        grad.update({s.q[o + j]: polys(np.eye(3)[j]) for j in range(3)})
    return named(s)(val), grad, named(s)(rate), named(s)(quad)


def mass_outputs(desc, s, out):
    """The flexible bodies' blocks of M (upper triangle, mirrored)."""
    nq = desc["nq"]
    for bd, body, cols in _bodies(desc, s):
        p, a = _configuration(s, bd)
        S, _, J, G = _terms(s, bd, body, a)
        M = mass_block(body, _rotation(s, bd["block"]), L_matrix(p), S, J, G)
        for i, ci in enumerate(cols):
            for j in range(i, len(cols)):
                x = defined(s, M[i, j])
                if x != 0:
                    out["mass"].append(("M", ci * nq + cols[j], x))
                    if j != i:
                        out["mass"].append(("M", cols[j] * nq + ci, x))


def attachment_frames(desc, s):
    """[(r_P, p, A, ṙ_P, ω_P)] of the force elements' attachment frames (frames nb, nb + 1, …),
    sympy symbols (:func:`solver.flexible.loads.attachment_motion`; A is the body's: the
    attachment points carry no offset in their own frames)."""
    frames = []
    for at in (desc.get("flexible") or {}).get("attachments", []):
        bd = desc["flexible"]["bodies"][at["body"]]
        o, ao, k = 7 * bd["block"], bd["ao"], bd["k"]
        phi, psi = _node_shapes(s, at, k)
        r, p, rd, pd = (polys(x) for x in (s.q[o:o + 3], s.q[o + 3:o + 7], s.v[o:o + 3], s.v[o + 3:o + 7]))
        u = _attachment_point(s, at, bd)
        w = named(s)(2 * L_matrix(p) @ pd)
        rP, vP, wP = attachment_motion(r, _rotation(s, bd["block"]), u, phi, psi, rd, w, polys(s.v[ao:ao + k]))
        frames.append((symbols(s, rP), np.array(s.q[o + 3:o + 7], dtype=object),
                       symbols(s, _rotation(s, bd["block"])), symbols(s, vP), symbols(s, wP)))
    return frames


def force_outputs(desc, s, out, F=(), T=()):
    """The flexible bodies' generalized forces: gravity, quadratic velocity, elastic, damping, and
    the wrenches F, T (sympy, global) of the generated force elements at their attachment frames
    (:func:`solver.flexible.loads.attachment_forces`)."""
    for f, (bd, body, cols) in enumerate(_bodies(desc, s)):
        g = polys(s.c[desc["flexible"]["gravity"]:desc["flexible"]["gravity"] + 3])
        p, a = _configuration(s, bd)
        o, ao, k = 7 * bd["block"], bd["ao"], bd["k"]
        S, Y, J, _ = _terms(s, bd, body, a)
        Q = generalized_forces(body, _rotation(s, bd["block"]), L_matrix(p), S, Y, J, a, polys(s.v[o + 3:o + 7]),
                               polys(s.v[ao:ao + k]), g, named(s))
        Q = symbols(s, Q)
        for at, force, torque in zip(desc["flexible"]["attachments"], F, T):
            if at["body"] == f:
                phi, psi = (symbols(s, x) for x in _node_shapes(s, at, k))
                L = L_matrix(np.array(s.q[o + 3:o + 7], dtype=object))
                Q = Q + np.concatenate(attachment_forces(symbols(s, _rotation(s, bd["block"])), L,
                                                         symbols(s, _attachment_point(s, at, bd)), phi, psi,
                                                         force, torque))
        out["forces"] += [("Q", col, x) for col, x in zip(cols, Q)]


# ---- helpers --------------------------------------------------------------------------------------
def _bodies(desc, s):
    """(body description, ShapeIntegrals of parameter polynomials, q columns) of every flexible body."""
    for bd in (desc.get("flexible") or {}).get("bodies", []):
        o, k = bd["par"], bd["k"]
        arrays = {}
        for name, shape in field_sizes(k).items():
            n = int(np.prod(shape))
            arrays[name] = Poly.of(s.c[o]) if not shape else polys(s.c[o:o + n]).reshape(shape)
            o += n
        block, ao = 7 * bd["block"], bd["ao"]
        yield bd, ShapeIntegrals.of(**arrays), list(range(block, block + 7)) + list(range(ao, ao + k))


def _node_shapes(s, at, k):
    """(Φ_n, Ψ_n) (3 × k each, parameter polynomials) of a node's shape parameters at ``at["par"]``."""
    shapes = polys(s.c[at["par"]:at["par"] + 6 * k]).reshape(2, 3, k)
    return shapes[0], shapes[1]


def _attachment_point(s, at, bd):
    """ū_P = ū₀ + Φ_n a of an attachment (named, once per derivation)."""
    cache = s.__dict__.setdefault("flexible_points", {})
    key = id(at)
    if key not in cache:
        phi, _ = _node_shapes(s, at, bd["k"])
        cache[key] = named(s)(np.asarray(at["u0"], dtype=float) + phi @ polys(s.q[bd["ao"]:bd["ao"] + bd["k"]]))
    return cache[key]


def _terms(s, bd, body, a):
    """:func:`configuration_terms` of a body, named, once per derivation (the mass and force kernels
    share them)."""
    cache = s.__dict__.setdefault("flexible_terms", {})
    if bd["block"] not in cache:
        cache[bd["block"]] = configuration_terms(body, a, named(s))
    return cache[bd["block"]]


def _configuration(s, bd):
    o, ao = 7 * bd["block"], bd["ao"]
    return polys(s.q[o + 3:o + 7]), polys(s.q[ao:ao + bd["k"]])


def _rotation(s, block):
    """A(p) of a block, named, once per derivation."""
    cache = s.__dict__.setdefault("flexible_rotations", {})
    if block not in cache:
        cache[block] = named(s)(rotation_matrix(polys(s.q[7 * block + 3:7 * block + 7])))
    return cache[block]
