"""From a :class:`solver.model.elements.FlexibleBody` to its mesh (or imported nodes), body frame
and reduced body."""
from __future__ import annotations

import numpy as np

from .beam import BeamMesh, Material, Section
from .modal import ModalBody
from .modes_file import import_modes


def reference_frame(fb):
    """(r₀, A₀) of the floating frame at the initial configuration: origin at the midpoint of
    start–end, x along the beam, z along ``z_axis`` made perpendicular to x, y = z × x."""
    start, end = np.asarray(fb.start, float), np.asarray(fb.end, float)
    x = (end - start) / np.linalg.norm(end - start)
    z = np.asarray(fb.z_axis, float)
    z = z - (z @ x) * x
    z /= np.linalg.norm(z)
    return 0.5 * (start + end), np.column_stack([x, np.cross(z, x), z])


def mesh_of(fb):
    """The beam mesh, or for a body with a ``modes_file`` the file's nodes."""
    if fb.modes_file:
        return import_modes(fb.modes_file, where=f"flexible_body '{fb.name}'.modes_file").mesh
    sec = Section(fb.area, fb.Iy, fb.Iz, fb.J, fb.cy, fb.cz, fb.ct)
    mat = Material(fb.density, fb.youngs, fb.poisson)
    length = float(np.linalg.norm(np.subtract(fb.end, fb.start)))
    return BeamMesh(length, sec, mat, fb.elements)


def nearest_node(fb, mesh, point):
    """Node of ``mesh`` nearest a global point (initial configuration)."""
    r0, A0 = reference_frame(fb)
    return mesh.nearest_node(A0.T @ (np.asarray(point, float) - r0))


def modal_body(fb, mesh, interface_nodes=()):
    """The reduced body: Craig–Bampton with ``interface_nodes`` (``interface="craig_bampton"``, the
    default; free–free when the list is empty), free–free modes (``interface="free"``); or the modes
    file's (:mod:`solver.flexible.modes_file`; its modes are used as they are)."""
    if fb.modes_file:
        return import_modes(fb.modes_file, fb.damping_ratio, where=f"flexible_body '{fb.name}'.modes_file")
    cb = fb.interface == "craig_bampton" and len(interface_nodes)
    return ModalBody(mesh, modes=fb.modes, damping_ratio=fb.damping_ratio,
                     interface_nodes=list(interface_nodes) if cb else None)
