"""Contact forces drawn as arrows in the viewport during playback: one arrow per touching pair at
its contact point, along its force, as MuJoCo draws one per active contact — a contact element's
pair (body_i, body_j), and each touching pair of a contact group's members, both read from
``Results.contact_pairs`` (the pair's points' mean weighted by their normal forces, the sum of its
forces on the second body; what ``contact_point`` / ``contact_force`` give).  Its length is
proportional to the force, the largest force of the run (of any contact) drawn ARROW_FRACTION of
the model's extent long; no arrow while apart.  At most MAX_ARROWS arrows a frame, the largest
forces (a group of 1000 spheres at rest touches thousands of pairs).  All arrows are one glyph
filter (vtkGlyph3D of a vtkArrowSource) over one point set updated per frame, drawn over the model
(the viewport's overlay renderer: an arrow from a contact point runs inside a body) and pickable:
a click on one picks its contact (a group's with the pair as its part: :meth:`ContactArrows.part_at`)."""
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

    def __init__(self, renderer, scene, results, extent):
        """``renderer``: the overlay renderer; ``scene``: the viewport's Scene (picking);
        ``extent``: the model's size (m), the length of ARROW_FRACTION⁻¹ × the largest force."""
        self.renderer, self.scene = renderer, scene
        self.groups = results.contact_group_names
        self.names = [*results.contact_names, *results.contact_group_names]
        self.tables = [results.contact_pairs(n) for n in self.names]
        empty = {"point": np.zeros((0, 3)), "force": np.zeros((0, 3))}
        rows = {x: np.concatenate([empty.get(x, np.zeros(0, int)), *(getattr(t, x) for t in self.tables)])
                for x in ("index", "a", "b", "point", "force")}
        rows["owner"] = np.concatenate([np.zeros(0, int), *(np.full(len(t.index), k) for k, t in enumerate(self.tables))])
        order = np.argsort(rows["index"], kind="stable")          # the rows of all contacts by output point
        self.rows = {x: v[order] for x, v in rows.items()}
        self.starts = np.searchsorted(self.rows["index"], np.arange(len(results.t) + 1))
        self.shown = np.zeros(0, dtype=int)                       # the rows drawn now
        largest = float(np.max(np.linalg.norm(self.rows["force"], axis=1), initial=0.0))
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
        glyph.GeneratePointIdsOn()                                # "InputPointIds": the arrow of each glyph point
        mapper = vtkPolyDataMapper()
        mapper.SetInputConnection(glyph.GetOutputPort())
        actor = vtkActor()
        actor.SetMapper(mapper)
        actor.GetProperty().SetColor(*ARROW_COLOR)
        self.renderer.AddActor(actor)
        self.scene.overlays[actor] = self.part_at
        self.actor, self.glyph = actor, glyph

    def drawn(self, index):
        """The rows drawn at output ``index``: the pairs touching then, the MAX_ARROWS largest forces
        when more touch."""
        rows = np.arange(self.starts[index], self.starts[index + 1])
        P, F = self.rows["point"][rows], self.rows["force"][rows]
        size = np.linalg.norm(F, axis=1)
        touching = np.flatnonzero(np.isfinite(P).all(axis=1) & (size > 0.0))
        if len(touching) > MAX_ARROWS:
            touching = touching[np.argpartition(-size[touching], MAX_ARROWS - 1)[:MAX_ARROWS]]
        return rows[touching]

    def frame(self, index):
        """(points (n, 3), forces (n, 3)) drawn at output ``index`` (:meth:`drawn`)."""
        rows = self.drawn(index)
        return self.rows["point"][rows], self.rows["force"][rows]

    def show(self, index):
        """Place the arrows at output ``index``."""
        if self.actor is None:
            return
        self.shown = self.drawn(index)
        points = vtkPoints()
        points.SetData(numpy_to_vtk(np.ascontiguousarray(self.rows["point"][self.shown]), deep=True))
        self.data.SetPoints(points)
        vectors = numpy_to_vtk(np.ascontiguousarray(self.rows["force"][self.shown]), deep=True)
        vectors.SetName("force")
        self.data.GetPointData().SetVectors(vectors)
        self.data.Modified()

    def part_at(self, cell) -> tuple[str, tuple]:
        """(contact, part) of the arrow drawn with the glyph filter's output ``cell``: part = (the
        body its force is on, the body it comes from) for a contact group's pair, () for a contact
        element (its force is on body_j)."""
        output = self.glyph.GetOutput()
        arrow = int(output.GetPointData().GetArray("InputPointIds").GetValue(output.GetCell(cell).GetPointId(0)))
        row = self.shown[arrow]
        k = int(self.rows["owner"][row])
        table = self.tables[k]
        if k < len(self.names) - len(self.groups):
            return self.names[k], ()
        return self.names[k], (table.bodies[self.rows["b"][row]], table.bodies[self.rows["a"][row]])

    def remove(self):
        if self.actor is not None:
            self.renderer.RemoveActor(self.actor)
            self.scene.overlays.pop(self.actor, None)
            self.actor = None
