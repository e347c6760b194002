"""Polygon data for everything the viewport draws, in world coordinates at the initial configuration.

Sizes scale with ``g``, the glyph size of the scene (a fraction of the model's extent).  Every
function returns a ``vtkPolyData``; none keeps a pipeline alive.
"""
from __future__ import annotations

import os

import numpy as np
from vtkmodules.util.numpy_support import numpy_to_vtk
from vtkmodules.vtkCommonCore import vtkPoints
from vtkmodules.vtkCommonDataModel import vtkCellArray, vtkPolyData, vtkPolyLine
from vtkmodules.vtkCommonTransforms import vtkTransform
from vtkmodules.vtkFiltersCore import vtkAppendPolyData, vtkPolyDataNormals, vtkTubeFilter
from vtkmodules.vtkFiltersGeneral import vtkTransformFilter
from vtkmodules.vtkFiltersSources import (vtkArrowSource, vtkConeSource, vtkCubeSource, vtkCylinderSource,
                                          vtkSphereSource)
from vtkmodules.vtkIOGeometry import vtkOBJReader, vtkSTLReader

import solver


from .transforms import frame_from_axis, pose, to_vtk


# ---- public API -------------------------------------------------------------------------------

def body_shape(geometry: dict, X_WB: np.ndarray, g: float, folder: str = "") -> vtkPolyData:
    """The body's display geometry placed at its pose ``X_WB``; a small ball when it has none
    (or when its mesh file cannot be read).  Relative mesh paths are taken from ``folder``."""
    shape = geometry.get("shape", "none")
    offset = pose(geometry.get("offset", (0.0, 0.0, 0.0)), np.eye(3))
    if shape == "box":
        sx, sy, sz = geometry["size"]
        data = _output(_new(vtkCubeSource, XLength=sx, YLength=sy, ZLength=sz))
    elif shape == "cylinder":
        # vtkCylinderSource is along y: turn it onto the requested axis.
        src = _new(vtkCylinderSource, Radius=geometry["radius"], Height=geometry["length"], Resolution=32)
        turn = {"x": _rot_z(-90.0), "y": np.eye(4), "z": _rot_x(90.0)}[geometry.get("axis", "z")]
        data = _transformed(_output(src), turn)
    elif shape == "sphere":
        data = _output(_new(vtkSphereSource, Radius=geometry["radius"], ThetaResolution=32, PhiResolution=16))
    elif shape == "mesh":
        data = _mesh(folder, geometry["file"], geometry.get("scale", 1.0))
        if data is None:
            data = _output(_new(vtkSphereSource, Radius=0.6 * g))
    else:
        data = _output(_new(vtkSphereSource, Radius=0.6 * g, ThetaResolution=24, PhiResolution=12))
    return with_normals(_transformed(data, X_WB @ offset))


def body_frame(X_WB: np.ndarray, g: float) -> vtkPolyData:
    """Three lines along the body axes (x red, y green, z blue as cell colours)."""
    from vtkmodules.vtkCommonCore import vtkUnsignedCharArray
    points = vtkPoints()
    lines = vtkCellArray()
    colors = vtkUnsignedCharArray()
    colors.SetNumberOfComponents(3)
    colors.SetName("colors")
    origin = X_WB[:3, 3]
    for k, rgb in enumerate(((220, 50, 47), (60, 170, 60), (40, 90, 220))):
        points.InsertNextPoint(*origin)
        points.InsertNextPoint(*(origin + 3.0 * g * X_WB[:3, k]))
        lines.InsertNextCell(2, [2 * k, 2 * k + 1])
        colors.InsertNextTuple3(*rgb)
    data = _polydata(points, lines)
    data.GetCellData().SetScalars(colors)
    return data


def joint_glyph(joint, g: float, sides: int = 24) -> vtkPolyData:
    """A glyph showing the joint's kind and axis at its origin: the parts its kind's ``glyph`` names
    (``solver.JOINT_KINDS``; :data:`GLYPH_PARTS`); ``sides`` of the revolute cylinder (fewer for large
    models: on software OpenGL the frame time grows with the vertex count)."""
    o = np.asarray(joint.origin, dtype=float)
    X = pose(o, frame_from_axis(joint.axis))
    return with_normals(_append([GLYPH_PARTS[part](joint, o, X, g, sides) for part in joint.kind.glyph]))


def _barrel(joint, o, X, g, sides):
    """A cylinder along the axis (revolute)."""
    return _along_z(_output(_new(vtkCylinderSource, Radius=0.6 * g, Height=3.0 * g, Resolution=sides)), X)


def _slide(joint, o, X, g, sides):
    """A two-headed arrow along the axis (prismatic)."""
    return double_arrow(o, joint.axis, 5.0 * g, 0.35 * g)


def _helix(joint, o, X, g, sides):
    """A coil around the axis (screw)."""
    return helix(o - 2.0 * g * X[:3, 2], o + 2.0 * g * X[:3, 2], 0.8 * g, 4, 0.12 * g)


def _ball(joint, o, X, g, sides):
    """A ball at the origin (spherical)."""
    return _output(_new(vtkSphereSource, Center=o, Radius=0.8 * g, ThetaResolution=24, PhiResolution=16))


def _cross(joint, o, X, g, sides):
    """Two thin cylinders along axis and axis2 (universal)."""
    X2 = pose(o, frame_from_axis(joint.axis2))
    return _append([_along_z(_output(_new(vtkCylinderSource, Radius=0.35 * g, Height=3.0 * g)), Y)
                    for Y in (X, X2)])


def _cube(joint, o, X, g, sides):
    """A cube in the joint frame (fixed)."""
    return _transformed(_output(_new(vtkCubeSource, XLength=1.4 * g, YLength=1.4 * g, ZLength=1.4 * g)), X)


def _disc(joint, o, X, g, sides):
    """A flat disc normal to the axis (planar)."""
    return _along_z(_output(_new(vtkCylinderSource, Radius=2.0 * g, Height=0.2 * g, Resolution=32)), X)


def _link(joint, o, X, g, sides):
    """A rod from the origin to origin2 with a ball at origin2 (massless links)."""
    o2 = np.asarray(joint.origin2, dtype=float)
    return _append([tube([o, o2], 0.2 * g), _output(_new(vtkSphereSource, Center=o2, Radius=0.5 * g))])


def _ball_i(joint, o, X, g, sides):
    """A small ball at the origin (the body_i end of a distance link)."""
    return _output(_new(vtkSphereSource, Center=o, Radius=0.5 * g))


GLYPH_PARTS = {"barrel": _barrel, "slide": _slide, "helix": _helix, "ball": _ball, "cross": _cross,
               "cube": _cube, "disc": _disc, "link": _link, "ball_i": _ball_i}


def helix(p_i, p_j, radius: float, turns: float, thickness: float) -> vtkPolyData:
    """A coil spring between two points (a tube along a helix)."""
    p_i, p_j = np.asarray(p_i, dtype=float), np.asarray(p_j, dtype=float)
    d = p_j - p_i
    length = np.linalg.norm(d)
    if length < 1e-12:
        return _output(_new(vtkSphereSource, Center=p_i, Radius=radius))
    R = frame_from_axis(d)
    s = np.linspace(0.0, 1.0, int(24 * turns) + 1)
    ends = (s < 0.08) | (s > 0.92)  # straight lead-in and lead-out
    r = np.where(ends, 0.0, radius)
    phi = 2 * np.pi * turns * s
    local = np.column_stack([r * np.cos(phi), r * np.sin(phi), s * length])
    return tube(p_i + local @ R.T, thickness)


def spiral(origin, axis, radius: float, turns: float, thickness: float) -> vtkPolyData:
    """A flat spiral (rotational spring) around ``axis`` at ``origin``."""
    R = frame_from_axis(axis)
    s = np.linspace(0.15, 1.0, int(24 * turns) + 1)
    phi = 2 * np.pi * turns * s
    local = np.column_stack([radius * s * np.cos(phi), radius * s * np.sin(phi), np.zeros_like(s)])
    return tube(np.asarray(origin, dtype=float) + local @ R.T, thickness)


def tube(points, radius: float) -> vtkPolyData:
    """A tube along a polyline."""
    f = tube_filter(radius)
    f.SetInputData(polyline(points)[0])
    f.Update()
    return f.GetOutput()


def polyline(points) -> tuple[vtkPolyData, vtkPoints]:
    """One polyline through ``points`` (n, 3), and its vtkPoints (move them to reshape the line)."""
    pts = vtkPoints()
    pts.SetData(numpy_to_vtk(np.ascontiguousarray(points, dtype=float), deep=True))
    line = vtkPolyLine()
    line.GetPointIds().SetNumberOfIds(len(points))
    for i in range(len(points)):
        line.GetPointIds().SetId(i, i)
    cells = vtkCellArray()
    cells.InsertNextCell(line)
    return _polydata(pts, cells), pts


def tube_filter(radius: float) -> vtkTubeFilter:
    """The filter that turns lines into capped tubes of ``radius`` (connect its input)."""
    return _new(vtkTubeFilter, Radius=radius, NumberOfSides=10, Capping=True)


def arrow(start, direction, length: float, radius: float) -> vtkPolyData:
    """An arrow of ``length`` from ``start`` along ``direction``."""
    d = np.asarray(direction, dtype=float)
    if np.linalg.norm(d) < 1e-12:
        d = np.array([0.0, 1.0, 0.0])
    R = frame_from_axis(d)
    # vtkArrowSource is a unit arrow along x: map x to the direction, scaled to the length.
    M = pose(start, np.column_stack([R[:, 2], R[:, 0], R[:, 1]]) * length)
    src = _new(vtkArrowSource, TipRadius=radius / length * 2.2, ShaftRadius=radius / length, TipLength=0.3,
                         TipResolution=16, ShaftResolution=12)
    return with_normals(_transformed(_output(src), M))


def double_arrow(center, axis, length: float, radius: float) -> vtkPolyData:
    """A two-headed arrow of total ``length`` centred at ``center`` (prismatic joints)."""
    a = np.asarray(axis, dtype=float) / np.linalg.norm(axis)
    c = np.asarray(center, dtype=float)
    return _append([arrow(c, a, length / 2, radius), arrow(c, -a, length / 2, radius)])


def torque_glyph(origin, axis, g: float) -> vtkPolyData:
    """A ring around ``axis`` with a cone showing the sense of rotation."""
    R = frame_from_axis(axis)
    phi = np.linspace(0.0, 1.6 * np.pi, 40)
    r = 1.5 * g
    ring = np.column_stack([r * np.cos(phi), r * np.sin(phi), np.zeros_like(phi)]) @ R.T + origin
    tangent = R @ np.array([-np.sin(phi[-1]), np.cos(phi[-1]), 0.0])
    cone = _output(_new(vtkConeSource, Center=ring[-1] + 0.4 * g * tangent, Direction=tangent, Height=0.8 * g,
                                 Radius=0.35 * g, Resolution=16))
    return _append([tube(ring, 0.12 * g), cone])


def grid(center, up, half_size: float, spacing: float) -> vtkPolyData:
    """Square grid of lines perpendicular to ``up`` centred at ``center``."""
    R = frame_from_axis(up)
    n = max(1, int(round(half_size / spacing)))
    ticks = np.arange(-n, n + 1) * spacing
    pts = vtkPoints()
    lines = vtkCellArray()
    for k, t in enumerate(ticks):
        for a, b in (((t, -ticks[-1]), (t, ticks[-1])), ((-ticks[-1], t), (ticks[-1], t))):
            i = pts.InsertNextPoint(*(center + R[:, 0] * a[0] + R[:, 1] * a[1]))
            j = pts.InsertNextPoint(*(center + R[:, 0] * b[0] + R[:, 1] * b[1]))
            lines.InsertNextCell(2, [i, j])
    return _polydata(pts, lines)


def road_strip(xs, heights, y_low: float, y_high: float) -> vtkPolyData:
    """A road surface along x: the profile z = ``heights`` at the stations ``xs`` (increasing),
    constant across y from ``y_low`` to ``y_high``, as a strip of quads (two points per station)."""
    xs, zs = np.asarray(xs, dtype=float), np.asarray(heights, dtype=float)
    n = len(xs)
    points = np.empty((2 * n, 3))
    points[0::2] = np.column_stack([xs, np.full(n, y_low), zs])
    points[1::2] = np.column_stack([xs, np.full(n, y_high), zs])
    pts = vtkPoints()
    pts.SetData(numpy_to_vtk(points, deep=True))
    quads = vtkCellArray()
    for k in range(n - 1):
        quads.InsertNextCell(4, [2 * k, 2 * k + 2, 2 * k + 3, 2 * k + 1])
    data = vtkPolyData()
    data.SetPoints(pts)
    data.SetPolys(quads)
    return with_normals(data)


# ---- helpers ------------------------------------------------------------------------------------

def _new(cls, **properties):
    """A VTK object with ``Set<Name>(value)`` called for each keyword (works on every VTK 9)."""
    obj = cls()
    for key, value in properties.items():
        getattr(obj, f"Set{key}")(value)
    return obj


def _polydata(points, lines) -> vtkPolyData:
    data = vtkPolyData()
    data.SetPoints(points)
    data.SetLines(lines)
    return data


def _output(source) -> vtkPolyData:
    source.Update()
    return source.GetOutput()


def _transformed(data, X) -> vtkPolyData:
    t = vtkTransform()
    t.SetMatrix(to_vtk(X))
    f = _new(vtkTransformFilter, Transform=t)
    f.SetInputData(data)
    f.Update()
    return f.GetOutput()


def _along_z(data, X):
    """Place a y-axis source (cylinders) along the z axis of pose X."""
    return _transformed(data, X @ _rot_x(90.0))


def _rot_x(deg):
    c, s = np.cos(np.radians(deg)), np.sin(np.radians(deg))
    return pose((0, 0, 0), np.array([[1, 0, 0], [0, c, -s], [0, s, c]]))


def _rot_z(deg):
    c, s = np.cos(np.radians(deg)), np.sin(np.radians(deg))
    return pose((0, 0, 0), np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]]))


def _append(parts) -> vtkPolyData:
    f = vtkAppendPolyData()
    for p in parts:
        f.AddInputData(p)
    f.Update()
    return f.GetOutput()


def with_normals(data) -> vtkPolyData:
    f = _new(vtkPolyDataNormals, Splitting=True, FeatureAngle=40.0)
    f.SetInputData(data)
    f.Update()
    return f.GetOutput()


def _mesh(folder, file, scale):
    """Read the STL or OBJ file ``file`` of the project in ``folder`` scaled by ``scale``; None if
    missing, unreadable, outside the folder, not a regular file or larger than MAX_MESH_BYTES
    (:func:`solver.checked_mesh`)."""
    ext = os.path.splitext(file)[1].lower()
    if ext not in (".stl", ".obj"):
        return None
    try:
        path = solver.checked_mesh(folder, file)
    except solver.ModelError:
        return None
    reader = vtkSTLReader() if ext == ".stl" else vtkOBJReader()
    reader.SetFileName(path)
    reader.Update()
    data = reader.GetOutput()
    if data.GetNumberOfPoints() == 0:
        return None
    return _transformed(data, np.diag([scale, scale, scale, 1.0]))
