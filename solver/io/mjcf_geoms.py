"""An MJCF model's geoms as display meshes (trimesh) in the frame of the body that draws them.

Sizes follow MuJoCo's compiled model (``geom_size``: half sizes; ``fromto`` already resolved):
box → extents 2·size; sphere → radius size[0]; capsule → radius size[0], cylinder part 2·size[1];
cylinder → radius size[0], height 2·size[1]; ellipsoid → a unit sphere scaled by size[0:3]; mesh →
the vertices and faces MuJoCo compiled (scaled and moved into the mesh's own frame, the one
``geom_pos``/``geom_quat`` place), so no mesh file is read twice.  Planes, height fields and SDFs
are not drawn.  Every mesh is charged to the import's vertex and face budgets
(:class:`solver.io.urdf_mesh.VisualReader`) before it is made.
"""
from __future__ import annotations

import numpy as np

from .urdf_mesh import SPHERE_SUBDIVISIONS

DRAWN_GROUPS = 3            # MuJoCo's viewer shows geom groups 0, 1 and 2 by default


def geom_mesh(mj, g, budget, where):
    """The trimesh of geom ``g`` of the compiled model ``mj`` in the geom's frame, or the reason
    it is not drawn (a string)."""
    import mujoco
    import trimesh
    kind = mujoco.mjtGeom(mj.geom_type[g])
    size = mj.geom_size[g]
    G = mujoco.mjtGeom
    if kind == G.mjGEOM_MESH:
        mesh_id = mj.geom_dataid[g]
        v0, nv = mj.mesh_vertadr[mesh_id], mj.mesh_vertnum[mesh_id]
        f0, nf = mj.mesh_faceadr[mesh_id], mj.mesh_facenum[mesh_id]
        budget.charge(nv, nf, where)
        return trimesh.Trimesh(mj.mesh_vert[v0:v0 + nv].astype(float), mj.mesh_face[f0:f0 + nf], process=False)
    if kind == G.mjGEOM_BOX:
        mesh = trimesh.creation.box(extents=2.0 * size)
    elif kind == G.mjGEOM_SPHERE:
        mesh = trimesh.creation.icosphere(subdivisions=SPHERE_SUBDIVISIONS, radius=size[0])
    elif kind == G.mjGEOM_ELLIPSOID:
        mesh = trimesh.creation.icosphere(subdivisions=SPHERE_SUBDIVISIONS, radius=1.0)
        mesh.apply_scale(size)
    elif kind == G.mjGEOM_CAPSULE:
        mesh = trimesh.creation.capsule(height=2.0 * size[1], radius=size[0])
    elif kind == G.mjGEOM_CYLINDER:
        mesh = trimesh.creation.cylinder(radius=size[0], height=2.0 * size[1])
    else:
        return f"a {kind.name[len('mjGEOM_'):].lower()} is not drawn"
    budget.charge(len(mesh.vertices), len(mesh.faces), where)
    return mesh


def geom_color(mj, g):
    """The geom's colour as MuJoCo draws it: its material's rgba when it has one, else its own."""
    rgba = mj.mat_rgba[mj.geom_matid[g]] if mj.geom_matid[g] >= 0 else mj.geom_rgba[g]
    return tuple(float(np.clip(c, 0.0, 1.0)) for c in rgba[:3])
