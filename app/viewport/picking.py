"""What is under the cursor: a body surface point, snapped to a nearby feature.

A :class:`Feature` is a point an engineer builds from: a body's centre of mass, its geometry's
vertices (box corners and face centres, cylinder end-face centres — with the cylinder's axis —,
a sphere's centre, a mesh's vertices), joint origins and markers.  :func:`features` lists them in
world coordinates at the model's initial configuration; :class:`Snapper` projects them to the screen
and returns the one nearest the cursor within ``SNAP_PIXELS`` (ties: the one nearer the camera).

Projection: a world point p goes to normalized device coordinates ndc = (M p̃)₁₋₃ / (M p̃)₄ with M
the camera's composite projection-view matrix (``vtkCamera.GetCompositeProjectionTransformMatrix``),
then to display pixels x = (ndc_x + 1)/2 · width, y = (ndc_y + 1)/2 · height (VTK's display
coordinates, origin bottom left) — the mapping ``vtkRenderer.WorldToDisplay`` applies to one point,
here vectorised over all features.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from vtkmodules.util.numpy_support import vtk_to_numpy

import solver

from .transforms import pose, quat_to_matrix

SNAP_PIXELS = 8.0     # a feature this close to the cursor (display pixels) is snapped to
MAX_MESH_VERTICES = 20000  # mesh vertices offered as features (larger meshes: none, only their CM)
_AXES = {"x": 0, "y": 1, "z": 2}
_PRIORITY = ("point", "joint", "marker", "cm", "end", "face", "centre", "corner", "vertex")


@dataclass(frozen=True)
class Feature:
    """A snappable point: ``kind`` ('cm', 'corner', 'face', 'centre', 'end', 'vertex', 'joint',
    'marker', 'point': a design point),
    the element it belongs to, the body it moves with ('ground' for none), its world point at the
    initial configuration and, for cylinder ends, the cylinder's axis (else None)."""

    kind: str
    element: str
    body: str
    point: tuple
    axis: tuple | None = None

    def label(self) -> str:
        return {"cm": f"CM of {self.element}", "corner": f"corner of {self.element}",
                "face": f"face centre of {self.element}",
                "centre": f"sphere centre of {self.element}", "end": f"end centre of {self.element}",
                "vertex": f"vertex of {self.element}", "joint": f"origin of {self.element}",
                "marker": f"marker {self.element}", "point": f"design point {self.element}"}[self.kind]


@dataclass(frozen=True)
class Pick:
    """Result of a pick: the element under the cursor ("" for none), the body it is part of
    ('ground' for ground-fixed glyphs, "" for empty space), the world point (the snapped feature's
    point, else the surface point hit, else None), the feature snapped to (else None) and the part
    of the element picked (a contact group's arrow: (the member its force is on, the member it comes
    from); else ())."""

    element: str
    body: str
    point: tuple | None
    feature: Feature | None
    part: tuple = ()


def features(model: solver.Model, meshes: dict | None = None) -> list[Feature]:
    """The model's snappable features at its initial configuration; ``meshes`` maps body names
    to their drawn mesh vertices (n, 3), world (only bodies whose geometry is a mesh use it)."""
    out = []
    for name, body in model.bodies.items():
        X = pose(body.position, quat_to_matrix(body.orientation))
        out.append(Feature("cm", name, name, tuple(map(float, body.position))))
        out += _geometry_features(name, body.geometry, X, (meshes or {}).get(name))
    for name, joint in model.joints.items():
        carrier = joint.body_i if joint.body_j == solver.GROUND else joint.body_j
        points = [joint.origin] + ([joint.origin2] if joint.kind.second_point else [])
        out += [Feature("joint", name, carrier, tuple(map(float, p))) for p in points]
    for name, marker in model.markers.items():
        out.append(Feature("marker", name, marker.body, tuple(map(float, marker.position))))
    out += [Feature("point", name, solver.GROUND, tuple(map(float, p.position))) for name, p in model.points.items()]
    return out


def mesh_vertices(polydata) -> np.ndarray:
    """Distinct points of a drawn body's polydata (world), at most ``MAX_MESH_VERTICES``."""
    points = polydata.GetPoints()
    if points is None or points.GetNumberOfPoints() > 4 * MAX_MESH_VERTICES:
        return np.zeros((0, 3))
    xyz = np.unique(np.round(vtk_to_numpy(points.GetData()).astype(float), 12), axis=0)
    return xyz if len(xyz) <= MAX_MESH_VERTICES else np.zeros((0, 3))


class Snapper:
    """The features of one scene, projected and snapped to."""

    def __init__(self, feature_list: list[Feature]):
        self.features = feature_list
        self.points = np.array([f.point for f in feature_list], float).reshape(-1, 3)
        self.body_names = sorted({f.body for f in feature_list})
        self.body_index = np.array([self.body_names.index(f.body) for f in feature_list], int)

    def moved_points(self, motion: dict) -> np.ndarray:
        """Feature points moved with their bodies: ``motion`` maps a body to the 4×4 transform from
        its initial pose to its current one (bodies not in it have not moved)."""
        if not motion or not len(self.points):
            return self.points
        T = np.stack([motion.get(b, np.eye(4)) for b in self.body_names])[self.body_index]
        return np.einsum("nij,nj->ni", T[:, :3, :3], self.points) + T[:, :3, 3]

    def nearest(self, renderer, display_xy, tolerance: float, motion: dict | None = None) -> Feature | None:
        """The feature whose projection is nearest the display point (VTK pixels, origin bottom
        left) within ``tolerance`` pixels; None if there is none."""
        if not self.features:
            return None
        points = self.moved_points(motion or {})
        xy, depth = project(renderer, points)
        distance = np.hypot(*(xy - np.asarray(display_xy, float)).T)
        near = np.flatnonzero(distance <= tolerance)
        if not len(near):
            return None
        # nearest on screen; among those within half a pixel of it, the one nearest the camera;
        # among coincident ones, a joint or marker before a body's feature
        best = near[distance[near] <= distance[near].min() + 0.5]
        best = best[depth[best] <= depth[best].min() + 1e-9]
        i = min(best, key=lambda k: _PRIORITY.index(self.features[k].kind))
        f = self.features[i]
        return Feature(f.kind, f.element, f.body, tuple(map(float, points[i])), f.axis)


def project(renderer, points) -> tuple[np.ndarray, np.ndarray]:
    """Display coordinates (n, 2) (VTK pixels, origin bottom left) and NDC depth (n,) of world
    ``points`` (n, 3) — see the module docstring."""
    camera = renderer.GetActiveCamera()
    M = np.array([[camera.GetCompositeProjectionTransformMatrix(renderer.GetTiledAspectRatio(), -1.0, 1.0)
                   .GetElement(r, c) for c in range(4)] for r in range(4)])
    h = np.column_stack([points, np.ones(len(points))]) @ M.T
    ndc = h[:, :3] / h[:, 3:4]
    x0, y0, x1, y1 = renderer.GetViewport()
    width, height = renderer.GetRenderWindow().GetSize()
    xy = np.column_stack([(x0 + (ndc[:, 0] + 1.0) / 2.0 * (x1 - x0)) * width,
                          (y0 + (ndc[:, 1] + 1.0) / 2.0 * (y1 - y0)) * height])
    return xy, ndc[:, 2]


def view_axis(renderer) -> tuple:
    """The unit vector perpendicular to the screen, towards the viewer (round-off below 1e-12
    cleared, so a standard view gives an exact global axis)."""
    d = -np.asarray(renderer.GetActiveCamera().GetDirectionOfProjection(), float)
    d[np.abs(d) < 1e-12] = 0.0
    return tuple(map(float, d / np.linalg.norm(d)))


# ---- helpers ------------------------------------------------------------------------------------

def _geometry_features(name, geometry, X, mesh) -> list[Feature]:
    """Box corners and face centres, cylinder end centres (with axis), sphere centre, mesh
    vertices — each in the body frame, offset by ``geometry['offset']``, then placed by ``X``."""
    shape = geometry.get("shape", "none")
    offset = np.asarray(geometry.get("offset", (0.0, 0.0, 0.0)), float)
    R, r = X[:3, :3], X[:3, 3]

    def world(local):
        return tuple(map(float, r + R @ (offset + np.asarray(local, float))))

    if shape == "box":
        half = 0.5 * np.asarray(geometry["size"], float)
        corners = [Feature("corner", name, name, world(s * half))
                   for s in np.array([[a, b, c] for a in (-1, 1) for b in (-1, 1) for c in (-1, 1)])]
        faces = [Feature("face", name, name, world(s * half[k] * np.eye(3)[k])) for k in range(3) for s in (-1, 1)]
        return corners + faces
    if shape == "cylinder":
        e = np.eye(3)[_AXES[geometry.get("axis", "z")]]
        axis = tuple(map(float, R @ e))
        return [Feature("end", name, name, world(s * 0.5 * geometry["length"] * e), axis) for s in (-1, 1)]
    if shape == "sphere":
        return [Feature("centre", name, name, world((0.0, 0.0, 0.0)))] if offset.any() else []
    if shape == "mesh" and mesh is not None:
        return [Feature("vertex", name, name, tuple(map(float, p))) for p in mesh]
    return []
