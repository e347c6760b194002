"""Contact forces drawn as arrows in the viewport during playback: one arrow per touching pair at
its contact point, along its force, as MuJoCo draws one per active contact — a contact element's
pair (body_i, body_j), and each touching pair of a contact group's members, both read from
``Results.contact_pairs`` (the pair's points' mean weighted by their normal forces, the sum of its
forces on the second body; what ``contact_point`` / ``contact_force`` give).  Its length is
proportional to the force, the largest force of the run (of any contact) drawn ARROW_FRACTION of
the model's extent long; no arrow while apart.  At most MAX_ARROWS arrows a frame, the largest
forces (a group of 1000 spheres at rest touches thousands of pairs).  All arrows are one glyph
filter (vtkGlyph3D of a vtkArrowSource) over one point set updated per frame."""
from __future__ import annotations

import numpy as np
from vtkmodules.util.numpy_support import numpy_to_vtk
from vtkmodules.vtkCommonCore import vtkPoints
from vtkmodules.vtkCommonDataModel import vtkPolyData
from vtkmodules.vtkFiltersCore import vtkGlyph3D
from vtkmodules.vtkFiltersSources import vtkArrowSource
from vtkmodules.vtkRenderingCore import vtkActor, vtkPolyDataMapper

ARROW_COLOR = (0.95, 0.55, 0.1)
ARROW_FRACTION = 0.25
MAX_ARROWS = 200


class ContactArrows:
    """The arrows of a run's contact elements and groups in ``renderer`` (none when nothing touches)."""

    def __init__(self, renderer, results, extent):
        """``extent``: the model's size (m), the length of ARROW_FRACTION⁻¹ × the largest force."""
        self.renderer = renderer
        tables = [results.contact_pairs(n) for n in [*results.contact_names, *results.contact_group_names]]
        index = np.concatenate([np.zeros(0, dtype=int), *(t.index for t in tables)])
        order = np.argsort(index, kind="stable")                  # the rows of all contacts by output point
        self.points = np.concatenate([np.zeros((0, 3)), *(t.point for t in tables)])[order]
        self.forces = np.concatenate([np.zeros((0, 3)), *(t.force for t in tables)])[order]
        self.starts = np.searchsorted(index[order], np.arange(len(results.t) + 1))
        largest = float(np.max(np.linalg.norm(self.forces, axis=1), initial=0.0))
        self.scale = ARROW_FRACTION * extent / largest if largest > 0.0 else 0.0
        self.actor = None
        if self.scale > 0.0:
            self._build()

    def _build(self):
        self.data = vtkPolyData()
        arrow = vtkArrowSource()
        glyph = vtkGlyph3D()
        glyph.SetInputData(self.data)
        glyph.SetSourceConnection(arrow.GetOutputPort())
        glyph.SetVectorModeToUseVector()
        glyph.SetScaleModeToScaleByVector()
        glyph.OrientOn()
        glyph.SetScaleFactor(self.scale)
        mapper = vtkPolyDataMapper()
        mapper.SetInputConnection(glyph.GetOutputPort())
        actor = vtkActor()
        actor.SetMapper(mapper)
        actor.SetPickable(False)
        actor.GetProperty().SetColor(*ARROW_COLOR)
        self.renderer.AddActor(actor)
        self.actor, self.glyph = actor, glyph

    def frame(self, index):
        """(points (n, 3), forces (n, 3)) drawn at output ``index``: the pairs touching then, the
        MAX_ARROWS largest forces when more touch."""
        rows = slice(self.starts[index], self.starts[index + 1])
        P, F = self.points[rows], self.forces[rows]
        size = np.linalg.norm(F, axis=1)
        touching = np.flatnonzero(np.isfinite(P).all(axis=1) & (size > 0.0))
        if len(touching) > MAX_ARROWS:
            touching = touching[np.argpartition(-size[touching], MAX_ARROWS - 1)[:MAX_ARROWS]]
        return P[touching], F[touching]

    def show(self, index):
        """Place the arrows at output ``index``."""
        if self.actor is None:
            return
        P, F = self.frame(index)
        points = vtkPoints()
        points.SetData(numpy_to_vtk(np.ascontiguousarray(P, dtype=float), deep=True))
        self.data.SetPoints(points)
        vectors = numpy_to_vtk(np.ascontiguousarray(F, dtype=float), deep=True)
        vectors.SetName("force")
        self.data.GetPointData().SetVectors(vectors)
        self.data.Modified()

    def remove(self):
        if self.actor is not None:
            self.renderer.RemoveActor(self.actor)
            self.actor = None
