"""Paths written inside received files (a study's model and results folder, a body's mesh) stay in
the folder of the file that names them: an absolute path, or one that leaves the folder by ``..`` or
through a symbolic link, is refused naming the field (docs/reliability.md, "Hostile and broken
files").  Meshes are read only as regular files of at most :data:`MAX_MESH_BYTES`."""
from __future__ import annotations


from ..model.paths import confined
from .files import open_regular

MAX_MESH_BYTES = 256 * 1024 ** 2        # an STL/OBJ the GUI reads (a 5-million-triangle binary STL)


def checked_mesh(folder, path, field="geometry.file") -> str:
    """The full path of the mesh ``path`` of a project in ``folder`` after checking that it is
    inside the folder, a regular file and at most MAX_MESH_BYTES (ModelError otherwise)."""
    full = confined(folder or ".", path, field)
    open_regular(full, MAX_MESH_BYTES, "mesh file").close()
    return full
