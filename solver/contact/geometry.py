"""Contact shapes and the contact points of shape pairs, in closed form.

A shape is given in body axes (:data:`solver.model.fields.GEOMETRY_SHAPES`): sphere (radius),
box (size: full edge lengths along the body axes), cylinder and capsule (radius, length of the
cylindrical part, axis x|y|z of the body), plane (point, normal: the solid is the half-space
below the plane).  ``offset`` moves a shape's centre from the body's CM.

A pair's contact points are (P, n, δ): n the unit normal pointing from the first shape into the
second (the force on the second body acts along +n), δ > 0 the penetration along n, P the point
midway between the two surfaces, where both bodies' velocities and the forces are taken.

=================  ==========================================================================
pair               contact points
=================  ==========================================================================
plane–sphere       the sphere's centre c: δ = R − n·(c − p)
sphere–sphere      along the line of centres: δ = R₁ + R₂ − |c₂ − c₁|
box–sphere         the box point nearest c (c clamped to the box in its axes), δ = R − distance;
                   c inside the box: the face of least depth, δ = R + depth
plane–box          each corner below the plane (up to 4 on a face; 8 points tested)
plane–capsule      the two end spheres of the capsule's segment
capsule–sphere     the segment point nearest the sphere's centre, then sphere–sphere
plane–cylinder     4 points on each end circle, 90° apart, starting at the circle's deepest point
                   (a cylinder rolling on its side: one point per end; standing: 4 on the face)
plane–mesh         each vertex of the mesh's convex hull below the plane (the mesh file read by
                   trimesh, scaled, at ``offset``)
mesh–mesh          the two convex hulls by the coal collision library (J. Pan, S. Chitta,
                   D. Manocha, "FCL: a general purpose library for collision and proximity
                   queries", ICRA 2012; its maintained successor coal): GJK/EPA gives the
                   penetration δ and the normal, coal's contact patch the overlap polygon on the
                   plane between the surfaces; each polygon vertex is a point with that δ (a face
                   on a face: the overlap's corners; an edge on a face: its two ends)
=================  ==========================================================================

The reversed pairs (sphere–plane, …) swap the shapes and the normal's sign.  Any other pair is a
ModelError naming the contact element's geometry field.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ModelError

AXES = {"x": (1.0, 0.0, 0.0), "y": (0.0, 1.0, 0.0), "z": (0.0, 0.0, 1.0)}
CORNERS = np.array([(x, y, z) for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], dtype=float)


@dataclass(frozen=True)
class Shape:
    """A contact shape in body axes: ``centre`` (the plane's point), ``axis`` (cylinder and capsule
    axis, the plane's normal), ``radius``, ``half`` (half length; a box's half edges (3,))."""
    kind: str
    centre: np.ndarray
    axis: np.ndarray
    radius: float = 0.0
    half: object = 0.0
    vertices: object = None        # a mesh: its convex hull's vertices from the centre, body axes
    faces: object = None           # a mesh: its convex hull's triangles (indices into vertices)

    @classmethod
    def of(cls, geometry: dict):
        """The shape of a geometry dict (already checked by its Field; a mesh's ``file`` a path
        the process can open: :func:`solver.contact.element.contact_spec` resolves it)."""
        kind = geometry["shape"]
        centre = np.array(geometry.get("offset", (0.0, 0.0, 0.0)), dtype=float)
        axis = np.array(AXES[geometry.get("axis", "z")])
        if kind == "mesh":
            vertices, faces = _hull(geometry["file"])
            return cls(kind, centre, axis, vertices=vertices * geometry.get("scale", 1.0), faces=faces)
        if kind == "plane":
            return cls(kind, centre + geometry["point"], np.array(geometry["normal"], dtype=float))
        if kind == "box":
            return cls(kind, centre, axis, half=0.5 * np.array(geometry["size"], dtype=float))
        if kind in ("cylinder", "capsule"):
            return cls(kind, centre, axis, geometry["radius"], 0.5 * geometry["length"])
        return cls(kind, centre, axis, geometry.get("radius", 0.0))

    def bound(self) -> float:
        """Radius of a sphere about ``centre`` that holds the shape (a plane: infinite)."""
        if self.kind == "plane":
            return np.inf
        if self.kind == "box":
            return float(np.linalg.norm(self.half))
        if self.kind == "cylinder":
            return float(np.hypot(self.half, self.radius))
        if self.kind == "mesh":
            return float(np.max(np.linalg.norm(self.vertices, axis=1)))
        return self.half + self.radius          # sphere (half 0), capsule

    def thickness(self) -> float:
        """Half the shape's thinnest extent through its centre: a sphere's or capsule's radius, a
        box's least half edge, a cylinder's least of radius and half length, a mesh's least distance
        from its hull's vertex mean to a face plane (a plane: infinite).  What
        :meth:`solver.contact.element.ContactSet.step_cap` lets a step carry one shape into another."""
        if self.kind == "plane":
            return np.inf
        if self.kind == "box":
            return float(np.min(self.half))
        if self.kind == "cylinder":
            return float(min(self.radius, self.half))
        if self.kind == "mesh":
            v = self.vertices[self.faces]
            n = np.cross(v[:, 1] - v[:, 0], v[:, 2] - v[:, 0])
            n /= np.linalg.norm(n, axis=1, keepdims=True)
            return float(np.min(np.abs(np.einsum("ka,ka->k", n, v[:, 0] - self.vertices.mean(axis=0)))))
        return float(self.radius)

    def placed(self, r, A):
        """The shape on a body at CM position r with rotation A: global centre, axis, axes."""
        return Placed(self, r + A @ self.centre, A @ self.axis, A)


def _hull(path):
    """(vertices, triangles) of the convex hull of the mesh file at ``path`` (trimesh; STL, OBJ, …)."""
    import trimesh
    try:
        hull = trimesh.load(path, force="mesh").convex_hull
        return np.asarray(hull.vertices, dtype=float), np.asarray(hull.faces, dtype=np.int32)
    except (OSError, ValueError, IndexError) as exc:
        raise ModelError(f"mesh file {path}: cannot be read as a mesh ({type(exc).__name__}: {exc})") from None


@dataclass(frozen=True)
class Placed:
    shape: Shape
    c: np.ndarray          # global centre (plane: its point)
    a: np.ndarray          # global axis (plane: its normal)
    A: np.ndarray          # body axes

    @property
    def r(self):
        return self.shape.radius


def _point(c, n, radius, delta):
    """The contact point midway between a round surface at c − radius n and the other surface δ
    further along n."""
    return c - (radius - 0.5 * delta) * n


def plane_sphere(pl: Placed, sp: Placed):
    delta = sp.r - pl.a @ (sp.c - pl.c)
    return [(_point(sp.c, pl.a, sp.r, delta), pl.a, delta)] if delta > 0 else []


def _spheres(ci, ri, cj, rj):
    d = cj - ci
    length = float(np.sqrt(d @ d))
    delta = ri + rj - length
    if delta <= 0 or length == 0.0:           # concentric: no direction to push along
        return []
    n = d / length
    return [(_point(cj, n, rj, delta), n, delta)]


def sphere_sphere(a: Placed, b: Placed):
    return _spheres(a.c, a.r, b.c, b.r)


def box_sphere(bx: Placed, sp: Placed):
    h = bx.shape.half
    x = bx.A.T @ (sp.c - bx.c)
    d = x - np.clip(x, -h, h)
    length = float(np.sqrt(d @ d))
    if length > 0.0:
        delta = sp.r - length
        n = bx.A @ (d / length)
    else:                                     # centre inside: out through the face of least depth
        k = int(np.argmin(h - np.abs(x)))
        delta = sp.r + h[k] - abs(x[k])
        n = bx.A[:, k] * (1.0 if x[k] >= 0 else -1.0)
    return [(_point(sp.c, n, sp.r, delta), n, delta)] if delta > 0 else []


def _below(pl: Placed, points):
    """Contact points of the points (k, 3) of a solid's surface that lie below plane ``pl``."""
    depth = (pl.c - points) @ pl.a
    return [(p + 0.5 * d * pl.a, pl.a, d) for p, d in zip(points, depth) if d > 0]


def plane_box(pl: Placed, bx: Placed):
    return _below(pl, bx.c + (CORNERS * bx.shape.half) @ bx.A.T)


def plane_mesh(pl: Placed, ms: Placed):
    return _below(pl, ms.c + ms.shape.vertices @ ms.A.T)


_CONVEX = {}     # id(Shape) → (the Shape, its coal Convex): built once per shape


def _convex(shape: Shape):
    """The shape's convex hull as a coal Convex (vertices about its centre, body axes)."""
    found = _CONVEX.get(id(shape))
    if found is None or found[0] is not shape:
        import coal
        bvh = coal.BVHModelOBBRSS()
        bvh.beginModel(len(shape.faces), len(shape.vertices))
        bvh.addVertices(np.ascontiguousarray(shape.vertices, dtype=float))
        bvh.addTriangles(np.ascontiguousarray(shape.faces, dtype=np.int32))
        bvh.endModel()
        bvh.buildConvexHull(True, "Qt")
        found = _CONVEX[id(shape)] = (shape, bvh.convex)
    return found[1]


def mesh_mesh(a: Placed, b: Placed):
    import coal
    ta, tb = coal.Transform3s(a.A, a.c), coal.Transform3s(b.A, b.c)
    ca, cb = _convex(a.shape), _convex(b.shape)
    result = coal.CollisionResult()
    if not coal.collide(ca, ta, cb, tb, coal.CollisionRequest(coal.CollisionRequestFlag.CONTACT, 1), result):
        return []
    request = coal.ContactPatchRequest()
    patches = coal.ContactPatchResult(request)
    coal.computeContactPatch(ca, ta, cb, tb, result, request, patches)
    patch = patches.getContactPatch(0)
    delta = -float(patch.penetration_depth)          # coal: the signed distance, < 0 when they overlap
    if delta <= 0.0:
        return []
    n = np.array(patch.getNormal(), dtype=float)      # from the first shape into the second
    return [(np.array(patch.getPoint(k), dtype=float), n, delta) for k in range(patch.size())]


def _ends(s: Placed):
    return s.c - s.shape.half * s.a, s.c + s.shape.half * s.a


def plane_capsule(pl: Placed, cp: Placed):
    return [p for end in _ends(cp) for p in plane_sphere(pl, Placed(cp.shape, end, cp.a, cp.A))]


def capsule_sphere(cp: Placed, sp: Placed):
    s = np.clip((sp.c - cp.c) @ cp.a, -cp.shape.half, cp.shape.half)
    return _spheres(cp.c + s * cp.a, cp.r, sp.c, sp.r)


def plane_cylinder(pl: Placed, cy: Placed):
    n, a = pl.a, cy.a
    radial = n - (n @ a) * a
    size = float(np.sqrt(radial @ radial))
    if size > 1e-9:
        u = -radial / size                    # towards the plane: the deepest rim direction
    else:                                     # standing on an end: any direction across the axis
        u = np.cross(a, cy.A[:, int(np.argmin(np.abs(cy.A.T @ a)))])
        u /= np.linalg.norm(u)
    v = np.cross(a, u)
    rim = cy.r * np.array([u, v, -u, -v])
    return _below(pl, np.concatenate([end + rim for end in _ends(cy)]))


PAIRS = {("plane", "sphere"): plane_sphere, ("sphere", "sphere"): sphere_sphere, ("box", "sphere"): box_sphere,
         ("plane", "box"): plane_box, ("plane", "capsule"): plane_capsule,
         ("capsule", "sphere"): capsule_sphere, ("plane", "cylinder"): plane_cylinder, ("plane", "mesh"): plane_mesh,
         ("mesh", "mesh"): mesh_mesh}


def pair_function(kind_i, kind_j, where):
    """(function, swapped) giving the contact points of shapes kind_i, kind_j (normal from i into
    j: a swapped pair's function takes (j, i) and its normals are reversed); ``where``: the
    element's path for the ModelError of a pair without a closed form."""
    if (kind_i, kind_j) in PAIRS:
        return PAIRS[kind_i, kind_j], False
    if (kind_j, kind_i) in PAIRS:
        return PAIRS[kind_j, kind_i], True
    pairs = ", ".join(f"{a}–{b}" for a, b in PAIRS)
    raise ModelError(f"{where}.geometry_j: no contact between a {kind_i} and a {kind_j} (pairs: {pairs})")
