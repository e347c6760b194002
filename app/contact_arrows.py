"""Contact forces drawn as arrows in the viewport during playback: one arrow per contact element at
its contact point (``Results.contact_point``: the points' mean weighted by their normal forces),
along its force on body_j (``Results.contact_force``), its length proportional to the force, the
largest force of the run drawn ARROW_FRACTION of the model's extent long; no arrow while apart.
All arrows are one glyph filter (vtkGlyph3D of a vtkArrowSource) over one point set updated per
frame."""
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


class ContactArrows:
    """The arrows of a run's contact elements in ``renderer`` (none when the run has no contact)."""

    def __init__(self, renderer, results, extent):
        """``extent``: the model's size (m), the length of ARROW_FRACTION⁻¹ × the largest force."""
        self.renderer = renderer
        names = list(results.contact_names)
        self.forces = np.array([results.contact_force(n) for n in names]).reshape(len(names), -1, 3)
        self.points = np.array([results.contact_point(n) for n in names]).reshape(len(names), -1, 3)
        largest = float(np.max(np.linalg.norm(self.forces, axis=2))) if names else 0.0
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
        """(points (n, 3), forces (n, 3)) drawn at output ``index``: the contacts touching then."""
        P, F = self.points[:, index], self.forces[:, index]
        touching = np.isfinite(P).all(axis=1) & (np.linalg.norm(F, axis=1) > 0.0)
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
