"""One mesh for all moving solid actors, drawn instead of them while an animation plays.

On software OpenGL (llvmpipe, the headless and remote-desktop case) every actor costs a draw call
with its own state changes: the 200-body chain's 400 actors took ~50 ms per frame, the same
triangles as one actor ~12 ms.  The mesh keeps each vertex in its body's frame (position x_B and
normal n_B) and the body it rides on; a frame is

    x_W = r_b + A_b x_B,    n_W = A_b n_B

for every vertex at once (numpy), one ``Modified()`` and one draw call.  Colours are per-vertex
(the element's colour, or the highlight colour for the selected element).
"""
from __future__ import annotations

import numpy as np
from vtkmodules.util.numpy_support import numpy_to_vtk, vtk_to_numpy
from vtkmodules.vtkCommonCore import vtkIntArray
from vtkmodules.vtkCommonDataModel import vtkPolyData
from vtkmodules.vtkFiltersCore import vtkAppendPolyData
from vtkmodules.vtkRenderingCore import vtkActor, vtkPolyDataMapper

from . import shapes

_ITEM = "item_index"


class MergedMesh:
    """The solid moving ``items`` (``_Item`` with a body in ``initial`` and a colour) as one actor.

    ``initial``: body name → 4×4 pose X_WB(0) at which the items' polygon data was built.
    """

    def __init__(self, items, initial: dict):
        self.items = list(items)
        self.bodies = sorted({item.body for item in self.items})
        body_index = {b: k for k, b in enumerate(self.bodies)}
        append = vtkAppendPolyData()
        for k, item in enumerate(self.items):
            append.AddInputData(_tagged(item.actor.GetMapper().GetInput(), k))
        append.Update()
        self.data = vtkPolyData()
        self.data.DeepCopy(append.GetOutput())
        pd = self.data.GetPointData()
        self.item_of_vertex = vtk_to_numpy(pd.GetArray(_ITEM)).astype(np.intp)
        self.body_of_vertex = np.array([body_index[item.body] for item in self.items], np.intp)[self.item_of_vertex]
        self.xyz = vtk_to_numpy(self.data.GetPoints().GetData())
        self.normals = vtk_to_numpy(pd.GetNormals())
        X0 = np.array([initial[b] for b in self.bodies]) if self.bodies else np.zeros((0, 4, 4))
        R0 = X0[self.body_of_vertex, :3, :3]
        # Body-frame coordinates: x_B = A₀ᵀ (x_W(0) − r₀), n_B = A₀ᵀ n_W(0).
        self.local_xyz = np.einsum("pji,pj->pi", R0, self.xyz - X0[self.body_of_vertex, :3, 3])
        self.local_normals = np.einsum("pji,pj->pi", R0, self.normals)
        self.colors = np.zeros((len(self.xyz), 3), np.uint8)
        scalars = numpy_to_vtk(self.colors, deep=False)
        scalars.SetName("colors")
        pd.SetScalars(scalars)
        self._scalars = scalars  # keeps the numpy buffer and the VTK array together
        mapper = vtkPolyDataMapper()
        mapper.SetInputData(self.data)
        mapper.SetColorModeToDirectScalars()
        mapper.ScalarVisibilityOn()
        self.actor = vtkActor()
        self.actor.SetMapper(mapper)
        self.actor.SetPickable(False)
        self.actor.GetProperty().SetSpecular(0.25)
        self.actor.GetProperty().SetSpecularPower(20)
        self.actor.SetVisibility(False)
        self.set_colors({})

    def set_poses(self, current: dict):
        """Move every vertex with its body: ``current`` maps body names to 4×4 poses X_WB(t)."""
        if not self.bodies:
            return
        X = np.array([current[b] for b in self.bodies])[self.body_of_vertex]
        self.xyz[:] = np.einsum("pij,pj->pi", X[:, :3, :3], self.local_xyz) + X[:, :3, 3]
        self.normals[:] = np.einsum("pij,pj->pi", X[:, :3, :3], self.local_normals)
        self.data.GetPoints().Modified()
        self.data.GetPointData().GetNormals().Modified()

    def set_colors(self, override: dict):
        """Vertex colours from the items' colours; ``override`` maps item names to another colour."""
        table = np.array([override.get(item.name, item.color) for item in self.items], float).reshape(-1, 3)
        self.colors[:] = np.round(255 * table)[self.item_of_vertex] if len(table) else 0
        self._scalars.Modified()


def _tagged(data, k) -> vtkPolyData:
    """A shallow copy of ``data`` (with normals, named ``Normals``: vtkAppendPolyData drops the
    normals when the inputs name them differently, as a tube's ``TubeNormals``) whose vertices carry
    the item index ``k``."""
    if data.GetPointData().GetNormals() is None:
        data = shapes.with_normals(data)
    copy = vtkPolyData()
    copy.ShallowCopy(data)
    normals = copy.GetPointData().GetNormals()
    if normals.GetName() != "Normals":
        renamed = normals.NewInstance()
        renamed.DeepCopy(normals)
        renamed.SetName("Normals")
        copy.GetPointData().SetNormals(renamed)
    tags = vtkIntArray()
    tags.SetName(_ITEM)
    tags.SetNumberOfTuples(copy.GetNumberOfPoints())
    tags.Fill(k)
    copy.GetPointData().AddArray(tags)
    return copy
