"""URDF import: a robot description read by yourdfpy → a :class:`~solver.model.model.Model`, its
visual meshes read, placed and written by trimesh (the mapping is documented in docs/import.md).

The model is built at the URDF's zero configuration, so every joint coordinate of the model is the
URDF joint position (same axis, same sign, zero at zero).  With ``T_L`` the global pose of link L
at q = 0 (``T_child = T_parent · T_origin(joint)``, rpy = R_z(yaw) R_y(pitch) R_x(roll)):

* link with an ``<inertial>`` of positive mass → body: CM ``r = T_L · xyz_in``, body axes = the
  link's axes ``A_L``, inertia at the CM in body axes ``J = R_in J_in R_inᵀ`` (``R_in`` the rpy of
  the inertial origin; URDF ixy… are tensor components, as in the model);
* joint → joint at the child link's origin, ``axis = A_child · axis_urdf`` (global), body_i = parent,
  body_j = child: revolute/continuous → revolute, prismatic → prismatic, fixed → fixed, planar →
  planar (axis = the plane's normal), floating → no joint (the solver gives a body without a path
  to ground a free 6-DOF joint, which constrains nothing either); ``<limit>`` → the joint's
  ``*_limit`` fields, lower and upper enforced as stops (``enforce_limits=False``: data only, the
  joint's ``stops`` false); ``<dynamics damping>`` of a revolute/continuous joint → a rotational damper;
* massless links (no ``<inertial>`` or mass 0): the root becomes ground; one on a fixed joint is
  merged into the body it is fixed to (its joints and visuals move there); one on a moving joint
  is refused (a degree of freedom without inertia has no dynamics);
* a root link with mass is welded to ground by a fixed joint ``<root>_to_ground``;
* every ``<visual>`` (mesh STL/OBJ/DAE or box/cylinder/sphere) of the links of one body is placed
  in the body frame (origin at the CM) and the union written as one STL file.

Refused with a ModelError naming the element: ``<transmission>``, ``<mimic>``, Coulomb
``<dynamics friction>``, damping of a prismatic or planar joint, links that are the child of two
joints, and mesh paths that leave the URDF's folder and the package folder.
"""
from __future__ import annotations

import io
import os
from dataclasses import dataclass, field

import numpy as np

from ..errors import ModelError
from ..math.rotations import rotation_matrix
from ..model.fields import Field, FieldProblem
from ..model.model import GROUND, Model

MAX_URDF_BYTES = 20 * 1024 * 1024
MAX_MESH_BYTES = 200 * 1024 * 1024
GRAVITY = (0.0, 0.0, -9.81)            # URDF/ROS convention: z up
JOINT_MAP = {"revolute": "revolute", "continuous": "revolute", "prismatic": "prismatic",
               "fixed": "fixed", "planar": "planar"}
URDF_JOINT_TYPES = tuple(JOINT_MAP) + ("floating",)
MESH_TYPES = ("stl", "obj", "dae")


@dataclass
class UrdfImport:
    """An imported robot: the model, each body's visual mesh (trimesh, body frame: origin at the
    CM, body axes) and colour, and notes on what was mapped in a way the user should know."""
    model: Model
    meshes: dict = field(default_factory=dict)          # body name → trimesh.Trimesh
    colors: dict = field(default_factory=dict)          # body name → (r, g, b) in [0, 1]
    notes: list = field(default_factory=list)


# ---- public API -------------------------------------------------------------------------------
def read_urdf(path, package_dir=None, enforce_limits=True) -> UrdfImport:
    """Read a URDF file into a model (module docstring); ``package_dir`` resolves ``package://``
    paths.  Files are read only inside the URDF's folder and ``package_dir``.  ``enforce_limits``:
    a ``<limit>``'s lower and upper become stops (False: kept as data only)."""
    path = os.fspath(path)
    root = _parse(path)
    robot = _robot(root, path)
    folders = _Folders(os.path.dirname(os.path.abspath(path)), package_dir)
    return _Builder(robot, folders, enforce_limits).build()


def import_urdf(path, out_path, package_dir=None, enforce_limits=True) -> UrdfImport:
    """Read a URDF file, write each body's visual mesh as ``<stem>_meshes/<body>.stl`` beside
    ``out_path`` and save the model as the project ``out_path`` (``*.mbs.json``)."""
    from .project import save_project
    out_path = os.fspath(out_path)
    folder = os.path.dirname(os.path.abspath(out_path))
    if not os.path.isdir(folder):
        raise ModelError(f"{out_path}: folder {folder} does not exist")
    result = read_urdf(path, package_dir, enforce_limits)
    mesh_dir = mesh_folder_name(out_path)
    if result.meshes:
        os.makedirs(os.path.join(folder, mesh_dir), exist_ok=True)
    for body, mesh in result.meshes.items():
        rel = f"{mesh_dir}/{body}.stl"
        mesh.export(os.path.join(folder, rel), file_type="stl")
        geometry = {"shape": "mesh", "file": rel}
        if body in result.colors:
            geometry["color"] = list(result.colors[body])
        result.model.bodies[body].set("geometry", geometry)
    save_project(result.model, out_path)
    return result


def urdf_needs_package_dir(path) -> bool:
    """Whether the URDF file names a ``package://`` resource (so a package folder must be given)."""
    root = _parse(os.fspath(path))
    return any((e.get("filename") or "").startswith("package://") for e in root.iter("mesh"))


def mesh_folder_name(out_path) -> str:
    """``robot.mbs.json`` → ``robot_meshes`` (the folder beside the project holding its meshes)."""
    name = os.path.basename(os.fspath(out_path))
    for ext in (".mbs.json", ".json"):
        if name.endswith(ext):
            name = name[:-len(ext)]
            break
    return f"{name}_meshes"


# ---- reading ----------------------------------------------------------------------------------
def _parse(path):
    """The XML root, parsed without external entities or network; malformed XML is refused (it
    is never 'recovered')."""
    from lxml import etree
    try:
        size = os.path.getsize(path)
        if size > MAX_URDF_BYTES:
            raise ModelError(f"{path}: file is too large ({size} bytes; limit {MAX_URDF_BYTES})")
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError as exc:
        raise ModelError(f"{path}: cannot read ({exc.strerror or exc})") from None
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, remove_comments=True,
                             remove_blank_text=True)
    try:
        root = etree.parse(io.BytesIO(raw), parser).getroot()
    except etree.XMLSyntaxError as exc:
        raise ModelError(f"{path}: not well-formed XML ({exc})") from None
    if root.tag != "robot":
        raise ModelError(f"{path}: not a URDF file (the root element is <{root.tag}>, not <robot>)")
    t = root.find("transmission")
    if t is not None:
        raise ModelError(f"transmission '{t.get('name', '?')}': <transmission> elements are not supported "
                         "(remove them; joints are driven by drivers or forces in the model)")
    return root


def _robot(root, path):
    """yourdfpy's Robot of the parsed XML, element by element (what URDF._parse_robot does, so
    that a bad element is named), validated by yourdfpy."""
    from yourdfpy import URDF, Robot
    robot = Robot(name=root.get("name"))
    for tag, parse, into in (("link", URDF._parse_link, robot.links), ("joint", URDF._parse_joint, robot.joints),
                             ("material", URDF._parse_material, robot.materials)):
        for k, element in enumerate(root.findall(tag)):
            try:
                into.append(parse(element))
            except _PARSE_ERRORS as exc:
                name = element.get("name") or f"#{k + 1}"
                raise ModelError(f"{tag} '{name}': invalid <{tag}> ({_reason(exc)})") from None
    for j in robot.joints:
        if j.type not in URDF_JOINT_TYPES:
            raise ModelError(f"joint '{j.name}'.type: must be one of {', '.join(URDF_JOINT_TYPES)}; got {j.type!r}")
    try:
        urdf = URDF(robot=robot, build_scene_graph=False, load_meshes=False)
    except _PARSE_ERRORS as exc:
        raise ModelError(f"{path}: invalid URDF ({_reason(exc)})") from None
    found = []
    if not urdf.validate(validation_fn=lambda errors: found.extend(errors) or not errors):
        raise ModelError([f"{path}: {getattr(e, 'msg', e)}" for e in found])
    return urdf.robot


_PARSE_ERRORS = (KeyError, AttributeError, ValueError, TypeError, IndexError)


def _reason(exc):
    """What yourdfpy's parser tripped on, in words."""
    if isinstance(exc, KeyError):
        return f"missing attribute {exc}"
    if isinstance(exc, AttributeError) and "NoneType" in str(exc):
        return "a required child element is missing"
    return str(exc)


class _Folders:
    """Resolves mesh file names inside the URDF's folder and the package folder only."""

    def __init__(self, urdf_dir, package_dir):
        self.urdf_dir = os.path.realpath(urdf_dir)
        self.package_dir = os.path.realpath(package_dir) if package_dir else None
        if package_dir and not os.path.isdir(self.package_dir):
            raise ModelError(f"package folder {package_dir}: no such folder")

    def resolve(self, name, where):
        roots = [self.urdf_dir] + ([self.package_dir] if self.package_dir else [])
        if name.startswith("package://"):
            if self.package_dir is None:
                raise ModelError(f"{where}: mesh '{name}' needs a package folder (--package-dir, or "
                                 "the package folder asked for by File ▸ Import)")
            package, _, rest = name[len("package://"):].partition("/")
            candidates, roots = [os.path.join(self.package_dir, package, rest),
                                 os.path.join(self.package_dir, rest)], [self.package_dir]
        else:
            rel = name[len("file://"):] if name.startswith("file://") else name
            candidates = [os.path.join(self.urdf_dir, rel)]
        for c in candidates:
            real = os.path.realpath(c)
            if not any(os.path.commonpath([real, r]) == r for r in roots):
                raise ModelError(f"{where}: mesh '{name}' is outside the URDF's folder and the package folder "
                                 "(refused)")
            if os.path.isfile(real):
                return real
        raise ModelError(f"{where}: mesh '{name}' not found (looked for {', '.join(candidates)})")


# ---- building ---------------------------------------------------------------------------------
class _Builder:
    """One import: walks the link tree from the root at the zero configuration."""

    def __init__(self, robot, folders, enforce_limits=True):
        self.robot = robot
        self.enforce_limits = enforce_limits
        self.folders = folders
        self.links = {link.name: link for link in robot.links}
        self.materials = {m.name: m for m in robot.materials if m.name}
        try:
            name = Field("name", "name").coerce(robot.name)
        except FieldProblem as p:
            raise ModelError(f"robot '{robot.name}'.name: {p}") from None
        self.model = Model(name=name, gravity=GRAVITY)
        self.model.settings.set("formulation", "relative")
        self.result = UrdfImport(self.model)
        self.pose = {}          # link → 4×4 global pose at q = 0
        self.owner = {}         # link → the model body (or ground) it belongs to
        self.parts = {}         # body → list of trimesh parts in the body frame

    def build(self) -> UrdfImport:
        parent_joint = {}
        for j in self.robot.joints:
            for end in (j.parent, j.child):
                if end not in self.links:
                    raise ModelError(f"joint '{j.name}': link '{end}' is not defined")
            if j.child in parent_joint:
                raise ModelError(f"link '{j.child}': is the child of joints '{parent_joint[j.child].name}' and "
                                 f"'{j.name}' (a URDF is a tree; closed loops are not supported)")
            parent_joint[j.child] = j
        roots = [name for name in self.links if name not in parent_joint]
        if len(roots) != 1:
            raise ModelError(f"robot '{self.robot.name}': needs exactly one root link; found "
                             f"{', '.join(roots) or 'none (the joints form a loop)'}")
        children = {name: [] for name in self.links}
        for j in self.robot.joints:
            children[j.parent].append(j)
        self._add_root(roots[0])
        stack = list(reversed(children[roots[0]]))
        while stack:
            j = stack.pop()
            self._add_joint(j)
            stack += reversed(children[j.child])
        for name in self.links:
            if name not in self.pose:
                raise ModelError(f"link '{name}': not connected to the root link '{roots[0]}'")
        for body, parts in self.parts.items():
            if parts:
                import trimesh
                self.result.meshes[body] = trimesh.util.concatenate(parts)
        return self.result

    def _add_root(self, name):
        self.pose[name] = np.eye(4)
        if self._mass(name) is None:
            self.owner[name] = GROUND
            if self.links[name].visuals:
                self.result.notes.append(f"link '{name}': the root link has no mass and becomes ground; "
                                         "its visuals are not drawn")
            return
        self._add_body(name)
        self.model.add_joint(f"{name}_to_ground", "fixed", GROUND, name, origin=(0.0, 0.0, 0.0))
        self.result.notes.append(f"link '{name}': the root link is welded to ground by joint '{name}_to_ground'")

    def _add_joint(self, j):
        where = f"joint '{j.name}'"
        if j.mimic is not None:
            raise ModelError(f"{where}: <mimic> (following joint '{j.mimic.joint}') is not supported")
        T = self.pose[j.parent] @ (j.origin if j.origin is not None else np.eye(4))
        self.pose[j.child] = T
        massless = self._mass(j.child) is None
        if massless and j.type != "fixed":
            raise ModelError(f"link '{j.child}': has no mass (no <inertial>) but moves on {j.type} {where}; "
                             "give it an <inertial> or make the joint fixed")
        if massless:
            self.owner[j.child] = self.owner[j.parent]
            self._add_visuals(j.child)
            return
        self._add_body(j.child)
        if j.type == "floating":
            self.result.notes.append(f"{where}: floating, so no joint: body '{j.child}' moves freely (6 DOF)")
            return
        axis = T[:3, :3] @ (j.axis if j.axis is not None else np.array([1.0, 0.0, 0.0]))
        self.model.add_joint(j.name, JOINT_MAP[j.type], self.owner[j.parent], j.child, origin=T[:3, 3],
                             axis=axis, **self._limits(j))
        self._add_damping(j, where)

    def _limits(self, j):
        lim = j.limit
        if lim is None or j.type not in ("revolute", "continuous", "prismatic"):
            return {}
        out = {"effort_limit": lim.effort, "velocity_limit": lim.velocity}
        if j.type != "continuous":
            out |= {"lower_limit": lim.lower, "upper_limit": lim.upper}
        return {k: float(v) for k, v in out.items() if v is not None} | ({} if self.enforce_limits else {"stops": False})

    def _add_damping(self, j, where):
        if j.dynamics is None:
            return
        damping, friction = (_attribute(getattr(j.dynamics, a), f"{where}.dynamics.{a}") for a in ("damping", "friction"))
        if friction:
            raise ModelError(f"{where}: <dynamics friction> (Coulomb friction) is not supported; "
                             "set it to 0 or remove it")
        if not damping:
            return
        if j.type not in ("revolute", "continuous"):
            raise ModelError(f"{where}: <dynamics damping> of a {j.type} joint is not supported "
                             "(only revolute and continuous joints)")
        self.model.add_rotational_spring_damper(f"{j.name}_damping", j.name, damping=damping)

    def _mass(self, name):
        """The link's inertial, or None for a massless link."""
        inertial = self.links[name].inertial
        if inertial is None or not inertial.mass:
            return None
        if inertial.inertia is None:
            raise ModelError(f"link '{name}'.inertial: has a mass but no <inertia>")
        return inertial

    def _add_body(self, name):
        inertial = self._mass(name)
        T_in = inertial.origin if inertial.origin is not None else np.eye(4)
        T = self.pose[name]
        R_in = T_in[:3, :3]
        J = R_in @ np.asarray(inertial.inertia, dtype=float) @ R_in.T
        self.model.add_body(name, mass=float(inertial.mass),
                            inertia=(J[0, 0], J[1, 1], J[2, 2], J[0, 1], J[1, 2], J[2, 0]),
                            position=(T @ np.append(T_in[:3, 3], 1.0))[:3], orientation=T[:3, :3])
        self.owner[name] = name
        self.parts[name] = []
        self._add_visuals(name)

    def _body_pose(self, body):
        """Global 4×4 pose of a body frame (origin at the CM, link axes) at q = 0."""
        b = self.model.bodies[body]
        X = np.eye(4)
        X[:3, :3] = rotation_matrix(np.array(b.orientation))
        X[:3, 3] = b.position
        return X

    def _add_visuals(self, link):
        body = self.owner[link]
        visuals = self.links[link].visuals
        if body == GROUND:
            if visuals:
                self.result.notes.append(f"link '{link}': fixed to ground; its visuals are not drawn")
            return
        X = np.linalg.inv(self._body_pose(body)) @ self.pose[link]
        for k, v in enumerate(visuals):
            where = f"link '{link}'.visual[{k}]"
            mesh = self._geometry(v.geometry, where)
            if mesh is None:
                continue
            mesh.apply_transform(X @ (v.origin if v.origin is not None else np.eye(4)))
            self.parts[body].append(mesh)
            color = self._color(v.material)
            if color is not None:
                self.result.colors.setdefault(body, color)

    def _geometry(self, g, where):
        """A trimesh of one visual's geometry in the visual frame (None: no geometry)."""
        import trimesh
        if g is None:
            return None
        if g.box is not None:
            return trimesh.creation.box(extents=np.asarray(g.box.size, dtype=float))
        if g.cylinder is not None:
            return trimesh.creation.cylinder(radius=float(g.cylinder.radius), height=float(g.cylinder.length))
        if g.sphere is not None:
            return trimesh.creation.icosphere(subdivisions=2, radius=float(g.sphere.radius))
        if g.mesh is None:
            return None
        path = self.folders.resolve(g.mesh.filename, where)
        mesh = _read_mesh(path, where)
        if g.mesh.scale is not None:
            S = np.eye(4)
            S[:3, :3] = np.diag(np.broadcast_to(np.asarray(g.mesh.scale, dtype=float), (3,)))
            mesh.apply_transform(S)
        return mesh

    def _color(self, material):
        if material is None:
            return None
        if material.color is None and material.name in self.materials:
            material = self.materials[material.name]
        if material.color is None:
            return None
        return tuple(float(np.clip(c, 0.0, 1.0)) for c in material.color.rgba[:3])


def _attribute(text, where):
    """An optional number attribute yourdfpy keeps as text (None when absent)."""
    if text is None:
        return None
    try:
        return float(text)
    except ValueError:
        raise ModelError(f"{where}: must be a number, got {text!r}") from None


def _read_mesh(path, where):
    """One triangle mesh from an STL, OBJ or DAE file (all its parts in the file's frame, in
    metres: a DAE's ``<unit>`` is applied, STL and OBJ are taken as metres as URDF says); no other
    file (textures, materials) is opened."""
    import trimesh
    ext = os.path.splitext(path)[1].lower().lstrip(".")
    if ext not in MESH_TYPES:
        raise ModelError(f"{where}: mesh '{os.path.basename(path)}' is .{ext}; supported: "
                         f"{', '.join('.' + e for e in MESH_TYPES)}")
    if os.path.getsize(path) > MAX_MESH_BYTES:
        raise ModelError(f"{where}: mesh '{os.path.basename(path)}' is larger than {MAX_MESH_BYTES} bytes")
    try:
        with open(path, "rb") as fh:
            loaded = trimesh.load(fh, file_type=ext, force="mesh", process=False)
    except Exception as exc:            # noqa: BLE001 — any reader failure is a bad file
        raise ModelError(f"{where}: cannot read mesh '{os.path.basename(path)}' ({type(exc).__name__}: {exc})") from None
    if not isinstance(loaded, trimesh.Trimesh) or len(loaded.faces) == 0:
        raise ModelError(f"{where}: mesh '{os.path.basename(path)}' has no triangles")
    if loaded.units not in (None, "meters"):           # a DAE's <unit meter="0.001"/>: to metres
        try:
            loaded.convert_units("meters")
        except (ValueError, KeyError) as exc:
            raise ModelError(f"{where}: mesh '{os.path.basename(path)}' has units {loaded.units!r} ({exc})") from None
    return loaded
