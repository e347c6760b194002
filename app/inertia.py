"""Mass and inertia of a homogeneous display geometry: a box, cylinder or sphere in closed form, or
the solid bounded by a watertight STL/OBJ mesh.

Formulas: solid cuboid I_xx = m (b² + c²)/12 (sides a, b, c along x, y, z); solid cylinder about its
axis m r²/2 and across it m (3 r² + L²)/12; solid sphere 2 m r²/5 (any mechanics handbook).  A mesh's
volume V, centre c = ∫x dV / V and inertia tensor J = ρ ∫(|x−c|² 1 − (x−c)(x−c)ᵀ) dV are surface
integrals by the divergence theorem over its triangles (Mirtich 1996; Eberly 2003), computed by
trimesh (``Trimesh.mass_properties``).
Units: lengths in m, density in kg/m³, mass in kg, inertia in kg·m² at the centre, body axes.
"""
from __future__ import annotations

import math
import os

import numpy as np

import solver


SHAPES = ("box", "cylinder", "sphere")   # closed forms; "mesh" goes through body_from_mesh


def inertia_from_geometry(geometry: dict, density: float):
    """(mass, [Ixx, Iyy, Izz]) of ``geometry``; raises ValueError for shapes without a volume."""
    shape = geometry.get("shape")
    if density <= 0:
        raise ValueError("density must be > 0")
    if shape == "box":
        a, b, c = geometry["size"]
        m = density * a * b * c
        return m, [m * (b * b + c * c) / 12, m * (a * a + c * c) / 12, m * (a * a + b * b) / 12]
    if shape == "cylinder":
        r, length = geometry["radius"], geometry["length"]
        m = density * math.pi * r * r * length
        axial, transverse = m * r * r / 2, m * (3 * r * r + length * length) / 12
        moments = [transverse] * 3
        moments["xyz".index(geometry.get("axis", "z"))] = axial
        return m, moments
    if shape == "sphere":
        r = geometry["radius"]
        m = density * 4.0 / 3.0 * math.pi * r ** 3
        return m, [2.0 * m * r * r / 5.0] * 3
    raise ValueError(f"cannot compute inertia of a '{shape}' geometry (use box, cylinder or sphere)")


def mesh_mass_properties(path: str, scale: float, density: float):
    """(mass, centre of mass, 3×3 inertia tensor at the centre of mass) of the homogeneous solid
    bounded by the STL/OBJ mesh at ``path``, scaled by ``scale``, in the mesh's axes.  The tensor's
    off-diagonal entries are tensor components (−ρ∫xy dV), as the body's inertia field takes them.
    Raises ValueError naming the file when it cannot be read or does not bound a volume."""
    import trimesh
    if density <= 0:
        raise ValueError("density must be > 0")
    name = os.path.basename(path)
    if not os.path.isfile(path):
        raise ValueError(f"mesh file '{path}' not found")
    try:
        solver.open_regular(path, solver.MAX_MESH_BYTES, "mesh file").close()
    except solver.ModelError as exc:
        raise ValueError(str(exc)) from None
    try:
        mesh = trimesh.load(path, force="mesh")
    except Exception as exc:  # trimesh raises many types for a bad file
        raise ValueError(f"cannot read mesh '{name}': {exc}") from None
    if len(mesh.faces) == 0:
        raise ValueError(f"mesh '{name}' has no triangles")
    if not mesh.is_watertight:
        raise ValueError(f"mesh '{name}' is not watertight (it has holes or open edges): "
                         "it bounds no volume, so mass and inertia cannot be computed from it")
    if not mesh.is_winding_consistent:
        raise ValueError(f"mesh '{name}' has inconsistently oriented triangles: it bounds no volume")
    mesh.apply_scale(scale)
    if mesh.volume < 0:  # inside out: all normals point inwards
        mesh.invert()
    mesh.density = density
    return float(mesh.mass), np.array(mesh.center_mass, dtype=float), np.array(mesh.moment_inertia, dtype=float)


def body_from_mesh(body, density: float, folder: str = "") -> list[tuple[str, object]]:
    """(field, value) edits that make ``body`` (geometry shape "mesh") a homogeneous solid of its mesh:
    mass, the full inertia tensor at the mesh's centre of mass, and the body's CM moved onto the
    mesh's centre (position += R (offset + c), offset = −c) so that the mesh stays where it is drawn.
    Relative mesh paths are taken from ``folder`` (the project's folder)."""
    from .simulation import quaternion_matrix
    geometry = body.geometry
    try:
        path = solver.confined(folder or ".", geometry["file"], "geometry.file")
    except solver.ModelError as exc:
        raise ValueError(str(exc)) from None
    mass, c, J = mesh_mass_properties(path, geometry.get("scale", 1.0), density)
    R = quaternion_matrix(body.orientation)
    offset = np.asarray(geometry.get("offset", (0.0, 0.0, 0.0)), dtype=float)
    position = np.asarray(body.position, dtype=float) + R @ (offset + c)
    inertia = [J[0, 0], J[1, 1], J[2, 2], J[0, 1], J[1, 2], J[2, 0]]
    return [("mass", mass), ("inertia", [float(v) for v in inertia]),
            ("position", [float(v) for v in position]),
            ("geometry", {**geometry, "offset": [float(v) for v in -c]})]
