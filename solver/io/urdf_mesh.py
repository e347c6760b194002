"""The visual geometry of a URDF import, read within bounds: mesh files (STL, OBJ, DAE) and boxes,
cylinders, spheres as trimesh meshes in the visual frame.

Every size is bounded before the work: a mesh file is read at most once per import (later visuals
naming it get a copy) from an open regular file of at most ``MAX_MESH_BYTES`` bytes,
``MAX_TOTAL_MESH_BYTES`` over all files; a zip archive (a ``.dae`` that is a zipped COLLADA, which
pycollada would unzip without limit) is refused before it is decoded; a mesh whose instances
(a DAE's nodes may place one geometry many times) would exceed the import's vertex or face budget
is refused before they are copied; at most ``MAX_VISUALS`` visuals are drawn.  No other file
(an OBJ's material library, a DAE's textures) is opened.
"""
from __future__ import annotations

import io
import os

import numpy as np

from ..errors import ModelError
from .files import open_regular

MESH_TYPES = ("stl", "obj", "dae")
MAX_MESH_BYTES = 64 * 1024 * 1024           # one mesh file
MAX_TOTAL_MESH_BYTES = 256 * 1024 * 1024    # all mesh files of one import
MAX_VISUALS = 2000                          # visuals of one import
MAX_VERTICES = 4_000_000                    # vertices of all drawn visuals of one import
MAX_FACES = 8_000_000                       # triangles of all drawn visuals of one import
MAX_COORDINATE = 1.0e6                      # m: the largest |vertex coordinate| of a mesh file
SPHERE_SUBDIVISIONS = 2                     # icosphere: 162 vertices, 320 triangles
_ZIP_MAGIC = b"PK\x03\x04"


class VisualReader:
    """One import's visual geometry: each call of :meth:`geometry` returns a new trimesh in the
    visual frame and charges its size to the import's budgets."""

    def __init__(self, visuals, where):
        """``visuals``: how many visuals the import will draw (refused above ``MAX_VISUALS``
        before any is made); ``where`` names the robot in that message."""
        if visuals > MAX_VISUALS:
            raise ModelError(f"{where}: {visuals} visuals, more than {MAX_VISUALS} (refused; the limit keeps an "
                             "import bounded)")
        self.files = {}         # real path → trimesh.Trimesh as read (file frame, metres)
        self.bytes_read = 0
        self.vertices = self.faces = 0

    def geometry(self, visual, path, where):
        """The trimesh of ``visual`` (a :class:`~solver.io.urdf_xml.Visual` with a geometry);
        ``path`` is the resolved mesh file of a mesh visual.  A mesh is charged before it is copied."""
        import trimesh
        if visual.kind == "mesh":
            source = self._read(path, where)
            self.charge(len(source.vertices), len(source.faces), where)
            mesh = source.copy()
            S = np.eye(4)
            S[:3, :3] = np.diag(visual.scale)
            mesh.apply_transform(S)
            return mesh
        if visual.kind == "box":
            mesh = trimesh.creation.box(extents=np.asarray(visual.size, dtype=float))
        elif visual.kind == "cylinder":
            mesh = trimesh.creation.cylinder(radius=visual.size[0], height=visual.size[1])
        else:
            mesh = trimesh.creation.icosphere(subdivisions=SPHERE_SUBDIVISIONS, radius=visual.size[0])
        self.charge(len(mesh.vertices), len(mesh.faces), where)
        return mesh

    def charge(self, vertices, faces, where, commit=True):
        """Add a mesh's size to the budgets (``commit=False``: only check that it fits)."""
        if self.vertices + vertices > MAX_VERTICES or self.faces + faces > MAX_FACES:
            raise ModelError(f"{where}: the visuals have more than {MAX_VERTICES} vertices or {MAX_FACES} "
                             "triangles in all (refused; the limit keeps an import bounded)")
        if commit:
            self.vertices += vertices
            self.faces += faces

    def _read(self, path, where):
        if path not in self.files:
            self.files[path] = self._load(path, where)
        return self.files[path]

    def _load(self, path, where):
        """One triangle mesh from an STL, OBJ or DAE file (all its parts in the file's frame, in
        metres: a DAE's ``<unit>`` is applied, STL and OBJ are taken as metres as URDF says)."""
        import trimesh
        name = os.path.basename(path)
        ext = os.path.splitext(path)[1].lower().lstrip(".")
        if ext not in MESH_TYPES:
            raise ModelError(f"{where}: mesh '{name}' is .{ext}; supported: {', '.join('.' + e for e in MESH_TYPES)}")
        with open_regular(path, MAX_MESH_BYTES, "mesh file") as fh:
            size = os.fstat(fh.fileno()).st_size
            if self.bytes_read + size > MAX_TOTAL_MESH_BYTES:
                raise ModelError(f"{where}: mesh '{name}': the mesh files add up to more than "
                                 f"{MAX_TOTAL_MESH_BYTES} bytes (refused)")
            raw = fh.read(MAX_MESH_BYTES + 1)
        self.bytes_read += len(raw)
        if len(raw) > MAX_MESH_BYTES:
            raise ModelError(f"{where}: mesh '{name}' is larger than {MAX_MESH_BYTES} bytes")
        if raw.startswith(_ZIP_MAGIC):
            raise ModelError(f"{where}: mesh '{name}' is a zip archive (a zipped COLLADA file is not read; "
                             "unzip it and name the .dae inside)")
        try:
            loaded = trimesh.load(io.BytesIO(raw), file_type=ext, process=False)
        except Exception as exc:            # noqa: BLE001 — any reader failure is a bad file
            raise ModelError(f"{where}: cannot read mesh '{name}' ({type(exc).__name__}: {exc})") from None
        loaded = _in_metres(loaded, where, name)
        if isinstance(loaded, trimesh.Scene):
            instances = [loaded.geometry[g] for _, g in (loaded.graph[n] for n in loaded.graph.nodes_geometry)]
            instances = [g for g in instances if isinstance(g, trimesh.Trimesh)]
            self.charge(sum(len(g.vertices) for g in instances), sum(len(g.faces) for g in instances), where,
                         commit=False)
            loaded = loaded.to_mesh() if instances else None
        if not isinstance(loaded, trimesh.Trimesh) or len(loaded.faces) == 0:
            raise ModelError(f"{where}: mesh '{name}' has no triangles")
        if not np.all(np.isfinite(loaded.vertices)):
            raise ModelError(f"{where}: mesh '{name}' has vertices that are not finite numbers")
        if np.max(np.abs(loaded.vertices)) > MAX_COORDINATE:
            raise ModelError(f"{where}: mesh '{name}' has vertices farther than {MAX_COORDINATE:g} m from its origin")
        return loaded


def _in_metres(loaded, where, name):
    """A DAE's ``<unit meter="0.001"/>``: the mesh (or scene) scaled to metres."""
    if loaded.units in (None, "meters"):
        return loaded
    try:
        return loaded.convert_units("meters")
    except (ValueError, KeyError) as exc:
        raise ModelError(f"{where}: mesh '{name}' has units {loaded.units!r} ({exc})") from None
