"""The VTK scene of a model: one actor per body, joint and force element, plus the ground grid
and the gravity arrow.

Legend: bodies from their display geometry and colour (a grey ball when they have none);
revolute joints a green cylinder along the axis; prismatic a two-headed orange arrow; cylindrical
both; spherical a red ball; universal two crossed cylinders; fixed a cube; planar a disc normal to
the axis; screw a cylinder with a coil; distance and revolute-spherical links a rod between their
points; springs coils between their points; applied forces arrows; torques curved arrows; bushings
wireframe balls.

Everything is built in world coordinates at the initial configuration; :meth:`Scene.set_body_poses`
then moves each actor with the body it is attached to (``X_WB(t) · X_WB(0)⁻¹``), and rebuilds the
springs between their moving end points.
"""
from __future__ import annotations

import numpy as np
from vtkmodules.vtkRenderingCore import vtkActor, vtkPolyDataMapper, vtkRenderer

import solver

from . import shapes
from .transforms import inverse, pose, quat_to_matrix, to_vtk

BODY_COLOR = (0.62, 0.66, 0.72)
JOINT_COLORS = {"prismatic": (0.95, 0.55, 0.10), "spherical": (0.85, 0.25, 0.25),
                "fixed": (0.45, 0.50, 0.55), "distance": (0.55, 0.55, 0.60)}
JOINT_COLOR = (0.20, 0.72, 0.30)
FORCE_COLOR = (0.80, 0.15, 0.15)
SPRING_COLOR = (0.50, 0.20, 0.65)
HIGHLIGHT = (1.0, 0.84, 0.0)
GRID_COLOR = (0.72, 0.74, 0.78)


class _Item:
    """An actor for one element, attached to a body (None = ground)."""

    def __init__(self, name, actor, body, color):
        self.name, self.actor, self.body, self.color = name, actor, body, color


class _Spring:
    """A coil whose ends ride on two bodies; ``local_i/j`` are the ends in body coordinates."""

    def __init__(self, item, body_i, body_j, local_i, local_j, radius, thickness):
        self.item, self.body_i, self.body_j = item, body_i, body_j
        self.local_i, self.local_j = local_i, local_j
        self.radius, self.thickness = radius, thickness


class Scene:
    """Actors of one model in ``renderer``; element names map to pickable actors."""

    def __init__(self, renderer: vtkRenderer):
        self.renderer = renderer
        self.items: dict[str, _Item] = {}
        self.frames: list[_Item] = []
        self.decor: list[vtkActor] = []
        self.springs: list[_Spring] = []
        self.initial: dict[str, np.ndarray] = {}
        self.glyph = 0.05
        self.show_frames = False
        self.selected = ""

    # ---- public API ---------------------------------------------------------------------------
    def build(self, model: solver.Model, folder: str = ""):
        """Replace all actors with those of ``model`` (relative mesh paths from ``folder``)."""
        self.clear()
        self.glyph = g = 0.05 * _extent(model)
        self.initial = {n: pose(b.position, quat_to_matrix(b.orientation)) for n, b in model.bodies.items()}
        for name, body in model.bodies.items():
            X = self.initial[name]
            color = tuple(body.geometry.get("color", BODY_COLOR))
            self._add(name, shapes.body_shape(body.geometry, X, g, folder), name, color)
            frame = _actor(shapes.body_frame(X, g), None, pickable=False)
            frame.SetVisibility(self.show_frames)
            self.frames.append(_Item(name, frame, name, None))
            self.renderer.AddActor(frame)
        for name, joint in model.joints.items():
            color = JOINT_COLORS.get(joint.type, JOINT_COLOR)
            self._add(name, shapes.joint_glyph(joint, g), _carrier(joint.body_i, joint.body_j), color)
        for name, force in model.forces.items():
            self._add_force(model, force, g)
        for name, marker in model.markers.items():
            X = pose(marker.position, quat_to_matrix(marker.orientation))
            self._add(name, shapes.body_frame(X, 0.6 * g), marker.body, None)
        self._add_decor(model, g)
        self.highlight(self.selected)

    def clear(self):
        for item in [*self.items.values(), *self.frames]:
            self.renderer.RemoveActor(item.actor)
        for actor in self.decor:
            self.renderer.RemoveActor(actor)
        self.items, self.frames, self.decor, self.springs = {}, [], [], []

    def name_of(self, actor) -> str:
        """Element name of a picked actor ("" if it is not an element's)."""
        for name, item in self.items.items():
            if item.actor is actor:
                return name
        return ""

    def actor(self, name: str) -> vtkActor | None:
        item = self.items.get(name)
        return item.actor if item is not None else None

    def highlight(self, name: str):
        """Colour the selected element's actor; restore the previous one."""
        previous = self.items.get(self.selected)
        if previous is not None and previous.color is not None:
            previous.actor.GetProperty().SetColor(*previous.color)
            previous.actor.GetProperty().SetAmbient(0.1)
        self.selected = name
        item = self.items.get(name)
        if item is not None and item.color is not None:
            item.actor.GetProperty().SetColor(*HIGHLIGHT)
            item.actor.GetProperty().SetAmbient(0.35)

    def set_show_frames(self, show: bool):
        self.show_frames = show
        for item in self.frames:
            item.actor.SetVisibility(show)

    def set_body_poses(self, poses: dict):
        """Move the actors: ``poses`` maps body names to (position (3,), rotation (3, 3)); bodies not
        given stay where they are."""
        current = {n: self._current(n) for n in self.initial}
        for name, (position, rotation) in poses.items():
            if name in self.initial:
                current[name] = pose(np.asarray(position, float), np.asarray(rotation, float))
        moves = {n: current[n] @ inverse(self.initial[n]) for n in self.initial}
        for item in [*self.items.values(), *self.frames]:
            if item.body in moves:
                item.actor.SetUserMatrix(to_vtk(moves[item.body]))
        for spring in self.springs:
            p_i = _point(current, spring.body_i, spring.local_i)
            p_j = _point(current, spring.body_j, spring.local_j)
            data = shapes.helix(p_i, p_j, spring.radius, 8, spring.thickness)
            spring.item.actor.GetMapper().SetInputData(data)

    def reset_poses(self):
        """Back to the initial configuration."""
        self.set_body_poses({n: (X[:3, 3], X[:3, :3]) for n, X in self.initial.items()})

    def model_bounds(self):
        """(xmin, xmax, ymin, ymax, zmin, zmax) of the element actors."""
        b = np.array([np.inf, -np.inf] * 3)
        for item in self.items.values():
            ab = item.actor.GetBounds()
            b[0::2] = np.minimum(b[0::2], ab[0::2])
            b[1::2] = np.maximum(b[1::2], ab[1::2])
        return tuple(b) if np.isfinite(b).all() else (-1.0, 1.0, -1.0, 1.0, -1.0, 1.0)

    # ---- helpers ------------------------------------------------------------------------------
    def _current(self, body):
        m = self.items[body].actor.GetUserMatrix() if body in self.items else None
        if m is None:
            return self.initial[body]
        move = np.array([[m.GetElement(i, j) for j in range(4)] for i in range(4)])
        return move @ self.initial[body]

    def _add(self, name, data, body, color):
        actor = _actor(data, color)
        self.items[name] = _Item(name, actor, body if body != solver.GROUND else None, color)
        self.renderer.AddActor(actor)
        return self.items[name]

    def _add_force(self, model, force, g):
        kind = force.KIND
        if kind == "spring_damper":
            item = self._add(force.name, shapes.helix(force.point_i, force.point_j, 0.6 * g, 8, 0.1 * g),
                             force.body_j, SPRING_COLOR)
            item.body = None  # springs are rebuilt from their ends instead of moved
            self.springs.append(_Spring(item, force.body_i, force.body_j,
                                        self._local(force.body_i, force.point_i),
                                        self._local(force.body_j, force.point_j), 0.6 * g, 0.1 * g))
        elif kind == "rotational_spring_damper":
            joint = model.joints[force.joint]
            self._add(force.name, shapes.spiral(joint.origin, joint.axis, 1.8 * g, 3, 0.1 * g),
                      _carrier(joint.body_i, joint.body_j), SPRING_COLOR)
        elif kind == "bushing":
            item = self._add(force.name, shapes.body_shape({"shape": "sphere", "radius": 0.9 * g},
                                                           pose(force.origin, np.eye(3)), g),
                             _carrier(force.body_i, force.body_j), SPRING_COLOR)
            item.actor.GetProperty().SetRepresentationToWireframe()
        elif kind == "force":
            body = model.bodies[force.body]
            at = body.position if force.point is None else force.point
            self._add(force.name, shapes.arrow(at, _direction(force.force), 5.0 * g, 0.25 * g), force.body,
                      FORCE_COLOR)
        elif kind == "torque":
            body = model.bodies[force.body]
            self._add(force.name, shapes.torque_glyph(np.asarray(body.position), _direction(force.torque), g),
                      force.body, FORCE_COLOR)

    def _local(self, body, point):
        if body == solver.GROUND or body not in self.initial:
            return np.asarray(point, float)
        return (inverse(self.initial[body]) @ np.append(point, 1.0))[:3]

    def _add_decor(self, model, g):
        """Ground grid below the model, perpendicular to gravity, and the gravity arrow."""
        gravity = np.asarray(model.gravity, float)
        up = -gravity / np.linalg.norm(gravity) if np.linalg.norm(gravity) > 0 else np.array([0.0, 1.0, 0.0])
        b = np.array(self.model_bounds()).reshape(3, 2)
        center = b.mean(axis=1)
        corners = np.array([[x, y, z] for x in b[0] for y in b[1] for z in b[2]])
        low = (corners @ up).min() - 2.0 * g
        half = max(0.6 * np.ptp(corners, axis=0).max(), 10 * g)
        spacing = _nice(half / 5.0)
        base = center + (low - center @ up) * up
        grid = _actor(shapes.grid(base, up, half, spacing), GRID_COLOR, pickable=False)
        grid.GetProperty().SetLighting(False)
        arrow_len = 0.35 * half
        if np.linalg.norm(gravity) > 0:
            tip = base + 0.9 * half * _in_plane(up) + arrow_len * up
            arrow = _actor(shapes.arrow(tip, -up, arrow_len, 0.04 * arrow_len), (0.25, 0.25, 0.3), pickable=False)
            self.decor.append(arrow)
        self.decor.append(grid)
        for actor in self.decor:
            self.renderer.AddActor(actor)


def _actor(data, color, pickable=True):
    mapper = vtkPolyDataMapper()
    mapper.SetInputData(data)
    actor = vtkActor()
    actor.SetMapper(mapper)
    if color is not None:
        mapper.ScalarVisibilityOff()
        actor.GetProperty().SetColor(*color)
    else:
        actor.GetProperty().SetLineWidth(2.0)
        actor.GetProperty().SetLighting(False)
    actor.GetProperty().SetSpecular(0.25)
    actor.GetProperty().SetSpecularPower(20)
    actor.SetPickable(pickable)
    return actor


def _carrier(body_i, body_j):
    """The body a joint's glyph moves with: body_j unless it is ground."""
    return body_i if body_j == solver.GROUND else body_j


def _point(current, body, local):
    if body == solver.GROUND or body not in current:
        return np.asarray(local, float)
    return (current[body] @ np.append(local, 1.0))[:3]


def _direction(components):
    """Direction of a force/torque whose components are numbers (expressions count as zero)."""
    v = np.array([c if isinstance(c, (int, float)) else 0.0 for c in components], float)
    return v if np.linalg.norm(v) > 0 else np.array([0.0, 1.0, 0.0])


def _extent(model) -> float:
    """Characteristic size of the model: spread of its points and size of its geometry (m)."""
    points = [b.position for b in model.bodies.values()] + [j.origin for j in model.joints.values()]
    points += [f.values[k] for f in model.forces.values() for k in ("point_i", "point_j", "origin")
               if k in f.values]
    sizes = [0.0]
    for b in model.bodies.values():
        geo = b.geometry
        sizes += list(geo.get("size", [])) + [2 * geo.get("radius", 0.0), geo.get("length", 0.0)]
    spread = np.ptp(np.array(points, float), axis=0).max() if points else 0.0
    return max(spread, max(sizes), 0.2)


def _nice(x):
    """1, 2 or 5 times a power of ten, near x."""
    e = 10 ** np.floor(np.log10(x))
    return min((m * e for m in (1, 2, 5, 10)), key=lambda v: abs(v - x))


def _in_plane(up):
    helper = np.array([1.0, 0.0, 0.0]) if abs(up[0]) < 0.9 else np.array([0.0, 0.0, 1.0])
    v = helper - (helper @ up) * up
    return v / np.linalg.norm(v)
