"""The VTK scene of a model: one actor per body, joint and force element, plus the ground grid,
the gravity arrow and the roads of a vehicle model.

Legend: bodies from their display geometry and colour (a grey ball when they have none);
joints the parts their kind's ``glyph`` names (:func:`app.viewport.shapes.joint_glyph`) in its
``color`` (green by default): revolute a cylinder along the axis; prismatic a two-headed orange
arrow; cylindrical both; spherical a red ball; universal two crossed cylinders; fixed a cube; planar
a disc normal to the axis; screw a cylinder with a coil; distance and revolute-spherical links a rod
between their points; a joint's limits (its stops) a thin arc or segment from the lower to the upper
limit, moving with body_i (:mod:`app.viewport.limit_glyphs`, ``Scene.limits``); springs coils between their points; applied forces arrows; torques curved arrows; bushings
wireframe balls; flexible beams a tube through their finite-element nodes; a road element (it has no
glyph) its surface — flat, bump, ramp or table profile along x, constant across y
(:class:`solver.vehicle.road.RoadSurface` gives the heights) — a strip ROAD_MARGIN beyond the model
on both sides along x, so a car stays on a drawn road while the camera follows it.

Everything is built in world coordinates at the initial configuration; :meth:`Scene.set_body_poses`
then moves each actor with the body it is attached to (``X_WB(t) · X_WB(0)⁻¹``, one shared
``vtkMatrix4x4`` per body updated in place), and rebuilds the springs between their moving end
points.  While an animation plays (:meth:`Scene.set_animating`) the moving solid actors are drawn
as one merged mesh instead (:mod:`app.viewport.merged`).  :meth:`Scene.set_beams` moves a flexible
beam's node points in place: node k is drawn at ``r(t) + A(t) (x_k + s·u_k(t))`` — floating frame
(r, A), undeformed node x_k in that frame, elastic displacement u_k scaled by the deformation scale
factor s (Kim & Yoo (1997), the FFRF position field).  :meth:`Scene.set_beam_scalars` colours the beams by
one value per node (e.g. a stress), interpolated along the tube, with a scalar bar.
"""
from __future__ import annotations

import numpy as np
from vtkmodules.util.numpy_support import numpy_to_vtk, vtk_to_numpy
from vtkmodules.vtkCommonCore import vtkLookupTable
from vtkmodules.vtkCommonMath import vtkMatrix4x4
from vtkmodules.vtkRenderingAnnotation import vtkScalarBarActor
from vtkmodules.vtkRenderingCore import vtkActor, vtkPolyDataMapper, vtkRenderer

import solver

from . import limit_glyphs, shapes
from .merged import MergedMesh
from .picking import Snapper, features, mesh_vertices
from .transforms import beam_frame, inverse, pose, quat_to_matrix, to_vtk

BODY_COLOR = (0.62, 0.66, 0.72)
JOINT_COLOR = (0.20, 0.72, 0.30)       # joints whose kind has no colour of its own (solver.JOINT_KINDS)
FORCE_COLOR = (0.80, 0.15, 0.15)
SPRING_COLOR = (0.50, 0.20, 0.65)
BEAM_COLOR = (0.90, 0.60, 0.20)
POINT_COLOR = (0.90, 0.66, 0.09)
POINT_RADIUS = 0.3      # design points' balls, in glyph sizes
LIMIT_COLOR = (0.85, 0.20, 0.20)
LIMIT_THICKNESS = 0.08  # radius of the limit glyphs' tubes, in glyph sizes
MANY_JOINTS = 50  # above this, joint glyphs get fewer polygons (frame time on software OpenGL)
HIGHLIGHT = (1.0, 0.84, 0.0)
HOVER = (0.55, 0.85, 1.0)
SNAP_COLOR = (0.85, 0.10, 0.75)
GRID_COLOR = (0.72, 0.74, 0.78)
LABEL_COLOR = (0.15, 0.15, 0.18)
ROAD_COLOR = (0.80, 0.78, 0.74)
ROAD_MARGIN = 200.0      # m of road drawn beyond the model along x, both ways (~7 s at 100 km/h)
ROAD_STATIONS = 64       # samples across a road's obstacle (plus its ends), and per model extent elsewhere


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


class _Beam:
    """A flexible body's tube: ``nodes`` (n, 3) undeformed node positions in its floating frame;
    ``points`` the polyline's vtkPoints, ``xyz`` a writable numpy view of them (n, 3); ``data`` the
    polyline (the tube filter's input, carrying the node scalars)."""

    def __init__(self, item, nodes, points, data):
        self.item, self.nodes, self.points, self.data = item, nodes, points, data
        self.xyz = vtk_to_numpy(points.GetData())


class Scene:
    """Actors of one model in ``renderer``; element names map to pickable actors."""

    def __init__(self, renderer: vtkRenderer):
        self.renderer = renderer
        self.items: dict[str, _Item] = {}
        self.limits: dict[str, _Item] = {}          # joint → its limit glyph (not pickable)
        self.frames: list[_Item] = []
        self.decor: list[vtkActor] = []
        self.roads: dict[str, vtkActor] = {}       # road element → its surface (also in decor)
        self.springs: list[_Spring] = []
        self.beams: dict[str, _Beam] = {}
        self.initial: dict[str, np.ndarray] = {}
        self.current: dict[str, np.ndarray] = {}
        self._inverse: dict[str, np.ndarray] = {}
        self._matrices: dict[str, vtkMatrix4x4] = {}
        self._static_bounds = np.zeros(6)
        self._reach = 0.0
        self.merged: MergedMesh | None = None
        self.animating = False
        self.glyph = 0.05
        self.show_frames = False
        self.selected: set[str] = set()
        self.hovered = ""
        self.snapper = Snapper([])
        self.overlays: dict = {}      # pickable actor drawn over the model → part_at(cell) → (element, part)
        self.snap_marker = _actor(shapes.body_shape({"shape": "sphere", "radius": 1.0}, np.eye(4), 1.0),
                                  SNAP_COLOR, pickable=False)
        self.snap_marker.SetVisibility(False)
        renderer.AddActor(self.snap_marker)
        self.lookup_table = vtkLookupTable()
        self.lookup_table.SetHueRange(0.667, 0.0)  # blue (low) to red (high)
        self.lookup_table.Build()
        self.scalar_bar = _scalar_bar(self.lookup_table)
        renderer.AddViewProp(self.scalar_bar)

    # ---- public API ---------------------------------------------------------------------------
    def build(self, model: solver.Model, folder: str = ""):
        """Replace all actors with those of ``model`` (relative mesh paths from ``folder``)."""
        self.clear()
        self.glyph = g = _glyph_size(model)
        self.initial = {n: pose(b.position, quat_to_matrix(b.orientation)) for n, b in model.bodies.items()}
        for name, beam in model.flexible_bodies.items():
            self.initial[name] = pose(*beam_frame(beam.start, beam.end, beam.z_axis))
            self._add_beam(name, beam, g)
        self.current = dict(self.initial)
        self._inverse = {n: inverse(X) for n, X in self.initial.items()}
        self._matrices = {n: to_vtk(np.eye(4)) for n in self.initial}
        for name, body in model.bodies.items():
            X = self.initial[name]
            color = tuple(body.geometry.get("color", BODY_COLOR))
            self._add(name, shapes.body_shape(body.geometry, X, g, folder), name, color)
            frame = _actor(shapes.body_frame(X, g), None, pickable=False)
            frame.SetVisibility(self.show_frames)
            self.frames.append(_Item(name, frame, name, None))
            self.renderer.AddActor(frame)
        sides = 24 if len(model.joints) <= MANY_JOINTS else 10
        for name, joint in model.joints.items():
            color = joint.kind.color or JOINT_COLOR
            self._add(name, shapes.joint_glyph(joint, _joint_glyph_size(model, joint, g), sides),
                      _carrier(joint.body_i, joint.body_j), color)
            self._add_limit(joint, g)
        for name, force in model.forces.items():
            self._add_force(model, force, g)
        for name, marker in model.markers.items():
            X = pose(marker.position, quat_to_matrix(marker.orientation))
            self._add(name, shapes.body_frame(X, 0.6 * g), marker.body, None)
        for name, point in model.points.items():     # design points: small balls where they are
            ball = {"shape": "sphere", "radius": POINT_RADIUS * g}
            self._add(name, shapes.body_shape(ball, pose(point.position, np.eye(3)), g), solver.GROUND, POINT_COLOR)
        self._add_decor(model, g)
        meshes = {n: mesh_vertices(self.items[n].actor.GetMapper().GetInput())
                  for n, b in model.bodies.items() if b.geometry.get("shape") == "mesh"}
        self.snapper = Snapper(features(model, meshes))
        self.snap_marker.SetScale(0.5 * g)
        self.show_snap(None)
        for item in [*self.items.values(), *self.frames, *self.limits.values()]:
            if item.body in self._matrices:
                item.actor.SetUserMatrix(self._matrices[item.body])
        self._measure()
        self.hovered = ""
        self.highlight(self.selected)

    def clear(self):
        for item in [*self.items.values(), *self.frames, *self.limits.values()]:
            self.renderer.RemoveActor(item.actor)
        for actor in self.decor:
            self.renderer.RemoveActor(actor)
        if self.merged is not None:
            self.renderer.RemoveActor(self.merged.actor)
        self.items, self.frames, self.decor, self.springs, self.beams = {}, [], [], [], {}
        self.limits = {}
        self.merged, self.animating = None, False
        self.scalar_bar.SetVisibility(False)

    def name_of(self, actor) -> str:
        """Element name of a picked actor ("" if it is not an element's)."""
        for name, item in self.items.items():
            if item.actor is actor:
                return name
        return ""

    def pick_of(self, actor, cell: int) -> tuple[str, tuple]:
        """(element, part) of a picked ``actor``'s ``cell``: an element's actor (part ()), or an
        overlay's (``overlays``: the contact arrows, app/contact_arrows.py); ("", ()) if neither."""
        name = self.name_of(actor)
        if name or actor not in self.overlays:
            return name, ()
        return self.overlays[actor](cell)

    def body_of(self, name: str) -> str:
        """The body element ``name``'s actor moves with (solver.GROUND for fixed glyphs, "" if no
        such element is drawn)."""
        item = self.items.get(name)
        if item is None:
            return ""
        if name in self.beams:                 # a flexible body's tube is drawn in world coordinates
            return name
        return item.body if item.body is not None else solver.GROUND

    def motion(self) -> dict:
        """Per body, the 4×4 transform from its initial pose to the pose drawn now."""
        return {n: X @ self._inverse[n] for n, X in self.current.items()}

    def hover(self, name: str):
        """Tint the element under the cursor (the selected one keeps its highlight)."""
        previous, self.hovered = self.hovered, name
        for n in {previous, name}:
            self._paint(n)

    def show_snap(self, point):
        """Show the snap marker (a small ball) at ``point``; None hides it."""
        self.snap_marker.SetVisibility(point is not None)
        if point is not None:
            self.snap_marker.SetPosition(*point)

    def actor(self, name: str) -> vtkActor | None:
        item = self.items.get(name)
        return item.actor if item is not None else None

    def highlight(self, names):
        """Colour the selected elements' actors (a name or several); restore the previous ones."""
        previous, self.selected = self.selected, {names} if isinstance(names, str) else set(names)
        for n in previous | self.selected:
            self._paint(n)
        if self.merged is not None:
            self.merged.set_colors(dict.fromkeys(self.selected, HIGHLIGHT))

    def set_animating(self, animating: bool):
        """Draw the moving solid actors as one mesh (animating: one draw call per frame) or as the
        separate, pickable actors (a model without moving solids has nothing to merge)."""
        solid = [i for i in self.items.values() if i.body in self.initial and i.color is not None
                 and i.actor.GetProperty().GetRepresentationAsString() == "Surface"
                 ] if animating and self.merged is None else []
        if solid:
            self.merged = MergedMesh(solid, self.initial)
            self.merged.set_colors(dict.fromkeys(self.selected, HIGHLIGHT))
            self.renderer.AddActor(self.merged.actor)
        self.animating = bool(animating)
        if self.merged is None:
            return
        if animating:
            self.merged.set_poses(self.current)
        for item in self.merged.items:
            item.actor.SetVisibility(not animating)
        self.merged.actor.SetVisibility(animating)

    def set_show_frames(self, show: bool):
        self.show_frames = show
        for item in self.frames:
            item.actor.SetVisibility(show)

    def set_body_poses(self, poses: dict):
        """Move the actors: ``poses`` maps body names (rigid bodies and the floating frames of
        flexible ones) to (position (3,), rotation (3, 3)); bodies not given stay where they are."""
        for name, (position, rotation) in poses.items():
            if name in self.initial:
                X = self.current[name] = pose(position, rotation)
                self._matrices[name].DeepCopy((X @ self._inverse[name]).ravel())
        if self.animating:
            self.merged.set_poses(self.current)
        for spring in self.springs:
            p_i = _point(self.current, spring.body_i, spring.local_i)
            p_j = _point(self.current, spring.body_j, spring.local_j)
            data = shapes.helix(p_i, p_j, spring.radius, 8, spring.thickness)
            spring.item.actor.GetMapper().SetInputData(data)

    def set_beams(self, beams: dict, scale: float = 1.0):
        """Deform flexible beams: ``beams`` maps names to (r (3,), A (3, 3), u (n, 3)) — floating
        frame and elastic node displacements in it; node k goes to r + A (x_k + scale·u_k)."""
        for name, (r, A, u) in beams.items():
            beam = self.beams.get(name)
            if beam is not None:
                beam.xyz[:] = r + (beam.nodes + scale * np.asarray(u, float)) @ np.asarray(A, float).T
                beam.points.Modified()

    def set_beam_scalars(self, values: dict | None, value_range=(0.0, 1.0), title: str = ""):
        """Colour flexible beams by one value per node: ``values`` maps names to (n,) node values
        (point scalars of the polyline, interpolated along the tube), mapped blue → red over
        ``value_range`` and shown on a scalar bar titled ``title``.  None: body colour again, no bar."""
        for name, beam in self.beams.items():
            mapper = beam.item.actor.GetMapper()
            v = None if values is None else values.get(name)
            if v is None:
                beam.data.GetPointData().RemoveArray("node values")
                mapper.ScalarVisibilityOff()
            else:
                array = numpy_to_vtk(np.ascontiguousarray(v, dtype=float), deep=True)
                array.SetName("node values")
                beam.data.GetPointData().SetScalars(array)
                mapper.SetLookupTable(self.lookup_table)
                mapper.UseLookupTableScalarRangeOn()
                mapper.SetScalarModeToUsePointData()
                mapper.ScalarVisibilityOn()
            beam.data.Modified()
        self.lookup_table.SetTableRange(*value_range)
        self.scalar_bar.SetTitle(title)
        self.scalar_bar.SetVisibility(values is not None and bool(self.beams))

    def beam_scalars(self, name: str) -> np.ndarray | None:
        """The node values flexible body ``name`` is coloured by now (None: body colour)."""
        array = self.beams[name].data.GetPointData().GetScalars()
        return None if array is None else vtk_to_numpy(array).copy()

    def beam_points(self, name: str) -> np.ndarray:
        """The node points drawn now for flexible body ``name`` (n, 3), global."""
        return self.beams[name].xyz.copy()

    def reset_poses(self):
        """Back to the initial configuration (flexible beams undeformed)."""
        self.set_body_poses({n: (X[:3, 3], X[:3, :3]) for n, X in self.initial.items()})
        self.set_beams({n: (self.initial[n][:3, 3], self.initial[n][:3, :3], np.zeros_like(b.nodes))
                        for n, b in self.beams.items()})

    def clipping_bounds(self):
        """Bounds enclosing everything drawn now, from the body origins (cheap: no actor is asked,
        ``vtkRenderer.ResetCameraClippingRange()`` asks every actor, ~20 ms for 400 actors)."""
        b = self._static_bounds.copy()
        if self.current:
            origins = np.array([X[:3, 3] for X in self.current.values()])
            b[0::2] = np.minimum(b[0::2], origins.min(axis=0) - self._reach)
            b[1::2] = np.maximum(b[1::2], origins.max(axis=0) + self._reach)
        return tuple(b)

    def limit_lines(self, joint: str) -> list[np.ndarray]:
        """Joint ``joint``'s limit glyph as drawn now: its polylines (each (n, 3), global: the lines
        the tubes follow, read from the VTK data and moved with body_i); [] when it has none."""
        item = self.limits.get(joint)
        if item is None:
            return []
        data = item.actor.GetMapper().GetInputAlgorithm().GetInputDataObject(0, 0)
        xyz = vtk_to_numpy(data.GetPoints().GetData())
        if item.body in self.current:
            M = self.current[item.body] @ self._inverse[item.body]
            xyz = xyz @ M[:3, :3].T + M[:3, 3]
        ids = vtk_to_numpy(data.GetLines().GetConnectivityArray())
        offsets = vtk_to_numpy(data.GetLines().GetOffsetsArray())
        return [xyz[ids[a:b]] for a, b in zip(offsets[:-1], offsets[1:])]

    def model_bounds(self):
        """(xmin, xmax, ymin, ymax, zmin, zmax) of the element actors."""
        b = np.array([np.inf, -np.inf] * 3)
        for item in self.items.values():
            ab = item.actor.GetBounds()
            b[0::2] = np.minimum(b[0::2], ab[0::2])
            b[1::2] = np.maximum(b[1::2], ab[1::2])
        return tuple(b) if np.isfinite(b).all() else (-1.0, 1.0, -1.0, 1.0, -1.0, 1.0)

    # ---- helpers ------------------------------------------------------------------------------
    def _paint(self, name):
        """An element's colour (and its limit glyph's): highlight if selected, hover tint if under the
        cursor, else its own."""
        for item in (self.items.get(name), self.limits.get(name)):
            if item is None or item.color is None:
                continue
            color, ambient = ((HIGHLIGHT, 0.35) if name in self.selected else (HOVER, 0.3) if name == self.hovered
                              else (item.color, 0.1))
            item.actor.GetProperty().SetColor(*color)
            item.actor.GetProperty().SetAmbient(ambient)

    def _add(self, name, data, body, color, radius=None):
        actor = _actor(data, color) if radius is None else _tube_actor(data, radius, color)
        self.items[name] = _Item(name, actor, body if body != solver.GROUND else None, color)
        self.renderer.AddActor(actor)
        return self.items[name]

    def _measure(self):
        """Bounds of what never moves (decor, ground glyphs, springs at the initial configuration) and
        the reach: how far any moving actor or deformed beam extends from its body's origin."""
        b = np.array([np.inf, -np.inf] * 3)
        reach = 0.0
        moving = [*self.items.values(), *self.limits.values()]
        for actor, body in [(i.actor, i.body) for i in moving] + [(a, None) for a in self.decor]:
            ab = np.array(actor.GetBounds())
            if not np.isfinite(ab).all() or ab[0] > ab[1]:
                continue
            if body in self.initial:
                corners = np.array([[x, y, z] for x in ab[:2] for y in ab[2:4] for z in ab[4:]])
                reach = max(reach, float(np.linalg.norm(corners - self.initial[body][:3, 3], axis=1).max()))
            else:
                b[0::2] = np.minimum(b[0::2], ab[0::2])
                b[1::2] = np.maximum(b[1::2], ab[1::2])
        for spring in self.springs:
            ends = [np.linalg.norm(local) for body, local in ((spring.body_i, spring.local_i),
                                                            (spring.body_j, spring.local_j)) if body in self.initial]
            reach = max([reach] + [float(e) + spring.radius for e in ends])
        for beam in self.beams.values():
            reach = max(reach, 2.0 * float(np.linalg.norm(beam.nodes, axis=1).max()))
        self._static_bounds = b if np.isfinite(b).all() else np.zeros(6)
        self._reach = reach

    def _add_limit(self, joint, g):
        """The joint's limit glyph (:mod:`app.viewport.limit_glyphs`) in ``self.limits``, moving with
        body_i (θ = 0 towards body_j's CM); nothing when its stops do not act."""
        data = limit_glyphs.limit_glyph(joint, self._cm(joint.body_j), g)
        if data is None:
            return
        actor = _tube_actor(data, LIMIT_THICKNESS * g, LIMIT_COLOR)
        actor.SetPickable(False)
        body = joint.body_i if joint.body_i != solver.GROUND else None
        self.limits[joint.name] = _Item(joint.name, actor, body, LIMIT_COLOR)
        self.renderer.AddActor(actor)

    def _add_beam(self, name, beam, g):
        """A tube through the beam's nodes (``elements`` + 1, evenly spaced along its axis)."""
        length = float(np.linalg.norm(np.subtract(beam.end, beam.start)))
        n = int(beam.elements) + 1
        nodes = np.zeros((n, 3))
        nodes[:, 0] = np.linspace(-0.5 * length, 0.5 * length, n)
        X = self.initial[name]
        data, points = shapes.polyline(X[:3, 3] + nodes @ X[:3, :3].T)
        radius = max(np.sqrt(float(beam.area) / np.pi), 0.25 * g)
        item = self._add(name, data, None, BEAM_COLOR, radius=radius)
        self.beams[name] = _Beam(item, nodes, points, data)

    def _add_force(self, model, force, g):
        """The force element's glyph (its class's GLYPH, drawn from the fields its ``glyph_fields()``
        name): a coil between two points, a spiral about a joint axis, a wire sphere, an arrow or a
        curved arrow; None draws nothing.  A role whose field the kind lacks takes the body's CM
        (points), the first body (bodies) or +y (directions)."""
        glyph, roles = force.GLYPH, force.glyph_fields()

        def get(role, default=None):
            name = roles.get(role)
            value = force.values[name] if name else None
            return default if value is None else value

        if glyph == "spring":
            body_i, body_j = get("body_i", solver.GROUND), get("body_j", solver.GROUND)
            point_i, point_j = get("point_i", self._cm(body_i)), get("point_j", self._cm(body_j))
            item = self._add(force.name, shapes.helix(point_i, point_j, 0.6 * g, 8, 0.1 * g), body_j, SPRING_COLOR)
            item.body = None  # springs are rebuilt from their ends instead of moved
            self.springs.append(_Spring(item, body_i, body_j, self._local(body_i, point_i),
                                        self._local(body_j, point_j), 0.6 * g, 0.1 * g))
        elif glyph == "spiral" and get("joint") in model.joints:
            joint = model.joints[get("joint")]
            self._add(force.name, shapes.spiral(joint.origin, joint.axis, 1.8 * g, 3, 0.1 * g),
                      _carrier(joint.body_i, joint.body_j), SPRING_COLOR)
        elif glyph == "bushing":
            body_i, body_j = get("body_i", solver.GROUND), get("body_j", solver.GROUND)
            origin = get("origin", self._cm(body_j))
            item = self._add(force.name, shapes.body_shape({"shape": "sphere", "radius": 0.9 * g},
                                                           pose(origin, np.eye(3)), g),
                             _carrier(body_i, body_j), SPRING_COLOR)
            item.actor.GetProperty().SetRepresentationToWireframe()
        elif glyph == "arrow":
            body = get("body", solver.GROUND)
            self._add(force.name, shapes.arrow(get("point", self._cm(body)), _direction(get("vector", ())),
                                               5.0 * g, 0.25 * g), body, FORCE_COLOR)
        elif glyph == "torque":
            body = get("body", solver.GROUND)
            self._add(force.name, shapes.torque_glyph(self._cm(body), _direction(get("vector", ())), g),
                      body, FORCE_COLOR)

    def _cm(self, body):
        """Where ``body`` (rigid or flexible; ground: the origin) is at the initial configuration."""
        return self.initial[body][:3, 3].copy() if body in self.initial else np.zeros(3)

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
        self._add_roads(model, g)
        for actor in self.decor:
            self.renderer.AddActor(actor)

    def _add_roads(self, model, g):
        """Each road element's surface (not pickable, not part of the fit-all bounds), in
        ``self.roads`` by name.  Stations: ROAD_STATIONS per model extent along the whole strip, plus
        ROAD_STATIONS + 1 across the obstacle (its ends and crest exactly)."""
        self.roads = {}
        b = np.array(self.model_bounds()).reshape(3, 2)
        extent = max(float(np.ptp(b[:2], axis=1).max()), 20.0 * g)
        for name, road in model.forces.items():
            if road.KIND != "road":
                continue
            surface = solver.vehicle.road.RoadSurface(road)
            x_low, x_high = b[0, 0] - ROAD_MARGIN, b[0, 1] + ROAD_MARGIN
            xs = np.linspace(x_low, x_high, int(ROAD_STATIONS * (x_high - x_low) / extent) + 1)
            if road.profile in ("half_sine", "step"):
                obstacle = np.linspace(road.start, road.start + road.obstacle_length, ROAD_STATIONS + 1)
                xs = np.union1d(xs, obstacle[(obstacle > x_low) & (obstacle < x_high)])
            margin = max(0.25 * float(np.ptp(b[1])), 2.0 * g)
            data = shapes.road_strip(xs, [surface.height(x) for x in xs], b[1, 0] - margin, b[1, 1] + margin)
            actor = _actor(data, ROAD_COLOR, pickable=False)
            self.roads[name] = actor
            self.decor.append(actor)


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


def _tube_actor(data, radius, color):
    """An actor drawing a tube along the lines of ``data``, updated when its points change."""
    actor = _actor(data, color)
    tube = shapes.tube_filter(radius)
    tube.SetInputData(data)
    actor.GetMapper().SetInputConnection(tube.GetOutputPort())
    return actor


def _scalar_bar(lookup_table) -> vtkScalarBarActor:
    """A vertical scalar bar at the right edge of the view (hidden until used)."""
    bar = vtkScalarBarActor()
    bar.SetLookupTable(lookup_table)
    bar.SetNumberOfLabels(5)
    bar.SetLabelFormat("%-#6.3g")
    bar.SetPosition(0.85, 0.15)
    bar.SetWidth(0.12)
    bar.SetHeight(0.7)
    bar.SetBarRatio(0.25)
    bar.SetUnconstrainedFontSize(True)
    bar.SetPickable(False)
    for text, size in ((bar.GetTitleTextProperty(), 14), (bar.GetLabelTextProperty(), 12)):
        text.SetFontSize(size)
        text.SetColor(*LABEL_COLOR)
        text.ShadowOff()
        text.ItalicOff()
    bar.SetVisibility(False)
    return bar


def _carrier(body_i, body_j):
    """The body a joint's glyph moves with: body_j unless it is ground."""
    return body_i if body_j == solver.GROUND else body_j


def _point(current, body, local):
    if body == solver.GROUND or body not in current:
        return np.asarray(local, float)
    return (current[body] @ np.append(local, 1.0))[:3]


def _direction(components):
    """Direction of a force/torque whose components are numbers (expressions count as zero)."""
    components = components if isinstance(components, (list, tuple)) else ()
    v = np.array([c if isinstance(c, (int, float)) else 0.0 for c in components], float)
    return v if v.shape == (3,) and np.linalg.norm(v) > 0 else np.array([0.0, 1.0, 0.0])


def _extent(model) -> float:
    """Characteristic size of the model: spread of its points and size of its geometry (m)."""
    points = [b.position for b in model.bodies.values()] + [j.origin for j in model.joints.values()]
    points += [f.values[k] for f in model.forces.values() for k in f.location_fields()
               if f.values[k] is not None]
    spread = np.ptp(np.array(points, float), axis=0).max() if points else 0.0
    return max(spread, max((_geometry_size(b.geometry) for b in model.bodies.values()), default=0.0), 0.2)


def _geometry_size(geo) -> float:
    """Largest dimension of a body's display geometry (0 when it has none)."""
    return max(list(geo.get("size", [])) + [2 * geo.get("radius", 0.0), geo.get("length", 0.0), 0.0])


def _glyph_size(model) -> float:
    """Glyph size g: 5 % of the model's extent, but at most a quarter of the median body size, so the
    joint glyphs of a long chain of small links stay smaller than the links (and do not pile up)."""
    g = 0.05 * _extent(model)
    sizes = [s for s in (_geometry_size(b.geometry) for b in model.bodies.values()) if s > 0]
    return min(g, 0.25 * float(np.median(sizes))) if sizes else g


def _joint_glyph_size(model, joint, g) -> float:
    """A joint's glyph size: the scene's ``g``, but at most a quarter of the smaller of the bodies it
    joins (their display geometry), so a small link is never hidden by its joints however large the
    scene is."""
    sizes = [_geometry_size(model.bodies[b].geometry) for b in (joint.body_i, joint.body_j) if b in model.bodies]
    sizes = [s for s in sizes if s > 0]
    return min(g, 0.25 * min(sizes)) if sizes else g


def _nice(x):
    """1, 2 or 5 times a power of ten, near x."""
    e = 10 ** np.floor(np.log10(x))
    return min((m * e for m in (1, 2, 5, 10)), key=lambda v: abs(v - x))


def _in_plane(up):
    helper = np.array([1.0, 0.0, 0.0]) if abs(up[0]) < 0.9 else np.array([0.0, 0.0, 1.0])
    v = helper - (helper @ up) * up
    return v / np.linalg.norm(v)
