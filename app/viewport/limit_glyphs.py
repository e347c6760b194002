"""The viewport's glyph of a joint's limits (its stops): where the limited coordinate may go.

A joint whose stops act (``Joint.stop_coordinate()`` is not None: limits set, ``stops`` true, a
kind with stops) gets a glyph drawn in body_i's frame (it moves with body_i, the base the joint
coordinate is measured from):

- rotation θ (revolute, cylindrical limited in rotation): an arc of radius ARC_RADIUS·g around the
  joint axis at the origin, in the plane normal to it, from the lower to the upper limit, with a
  radial tick at each limit that is set.  θ = 0 is the assembly configuration; the angle is measured
  right-handed about the axis, as the solver measures it (θ = atan2(y_iᵀx_j, x_iᵀx_j),
  solver/constraints/joints.py).  θ = 0 points from the origin towards body_j's CM projected on
  the plane (:func:`reference_direction`), so the arc shows where body_j can swing;
- translation s (prismatic, cylindrical limited in translation; s = z_iᵀd): a segment parallel to
  the axis at OFFSET·g beside it from origin + lower·axis to origin + upper·axis (true length), a
  cross of two ticks normal to the axis at each limit that is set (seen from any side).

A one-sided limit spans from the limit to the assembly configuration (0), ticked at the limit only.
A range of more than a turn draws one turn from the lower limit; a translation is drawn within
±REACH·g of the origin (a limit beyond it has no tick), so a huge limit never swamps the view.
The glyph is lines (the scene draws them as thin tubes); :func:`limit_lines` gives them as point
arrays, :func:`limit_glyph` as vtkPolyData.
"""
from __future__ import annotations

import numpy as np
from vtkmodules.util.numpy_support import numpy_to_vtk
from vtkmodules.vtkCommonCore import vtkPoints
from vtkmodules.vtkCommonDataModel import vtkCellArray, vtkPolyData

from .transforms import frame_from_axis

ARC_RADIUS = 2.4      # arc radius in glyph sizes (outside the revolute barrel, 0.6 g)
TICK = 0.8            # tick length in glyph sizes
OFFSET = 1.2          # the translation segment's distance from the axis, in glyph sizes
ARC_STEP = np.radians(3.0)   # at most 3° between the arc's points
REACH = 40.0          # a translation glyph is drawn within ±REACH·g (twice the model's extent) of the origin


def span(joint) -> tuple[float, float] | None:
    """(low, high) the glyph spans on the limited coordinate: the limits, a missing one replaced by
    0 (the assembly configuration); None when the joint's stops do not act."""
    if joint.stop_coordinate() is None:
        return None
    lower, upper = joint.lower_limit, joint.upper_limit
    low = lower if lower is not None else min(0.0, upper)
    high = upper if upper is not None else max(0.0, lower)
    return float(low), float(high)


def reference_direction(axis, origin, toward) -> np.ndarray:
    """θ = 0 of the arc: the unit vector from ``origin`` to ``toward`` (body_j's CM) in the plane normal
    to ``axis``; the x axis of ``frame_from_axis(axis)`` when that point is on the axis."""
    z = np.asarray(axis, float) / np.linalg.norm(axis)
    v = np.asarray(toward, float) - np.asarray(origin, float)
    v = v - (v @ z) * z
    n = np.linalg.norm(v)
    return v / n if n > 1e-9 * max(1.0, np.linalg.norm(toward)) else frame_from_axis(z)[:, 0]


def limit_lines(joint, toward, g: float) -> list[np.ndarray]:
    """The glyph's polylines (each (n, 3), global, at the assembly configuration): the arc or segment
    first, then the ticks of the set limits (lower first; one per limit on an arc, two on a segment);
    [] when the joint's stops do not act.
    ``toward``: body_j's CM (the arc's θ = 0); ``g`` the scene's glyph size."""
    s = span(joint)
    if s is None:
        return []
    o = np.asarray(joint.origin, float)
    z = np.asarray(joint.axis, float) / np.linalg.norm(joint.axis)
    set_limits = [v for v in (joint.lower_limit, joint.upper_limit) if v is not None]
    if joint.stop_coordinate() == "rotation":
        x = reference_direction(z, o, toward)
        y = np.cross(z, x)
        r = ARC_RADIUS * g

        def at(theta, radius):
            return o + radius * (np.cos(theta) * x + np.sin(theta) * y)

        high = min(s[1], s[0] + 2.0 * np.pi)          # more than a turn: one turn (and both ticks)
        thetas = np.linspace(s[0], high, max(2, int(np.ceil((high - s[0]) / ARC_STEP)) + 1))
        arc = np.array([at(t, r) for t in thetas])
        ticks = [np.array([at(t, r - 0.5 * TICK * g), at(t, r + 0.5 * TICK * g)]) for t in set_limits]
        return [arc, *ticks]
    across = frame_from_axis(z)[:, :2]
    side = OFFSET * g * across[:, 0]
    low, high = np.clip(s, -REACH * g, REACH * g)
    segment = np.array([o + side + low * z, o + side + high * z])
    ticks = [np.array([o + side + v * z - 0.5 * TICK * g * e, o + side + v * z + 0.5 * TICK * g * e])
             for v in set_limits if abs(v) <= REACH * g for e in across.T]
    return [segment, *ticks]


def limit_glyph(joint, toward, g: float) -> vtkPolyData | None:
    """:func:`limit_lines` as one vtkPolyData of lines (None when there is nothing to draw)."""
    lines = limit_lines(joint, toward, g)
    if not lines:
        return None
    points = vtkPoints()
    points.SetData(numpy_to_vtk(np.ascontiguousarray(np.vstack(lines), dtype=float), deep=True))
    cells = vtkCellArray()
    start = 0
    for line in lines:
        cells.InsertNextCell(len(line), list(range(start, start + len(line))))
        start += len(line)
    data = vtkPolyData()
    data.SetPoints(points)
    data.SetLines(cells)
    return data
