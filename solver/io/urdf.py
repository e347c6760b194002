"""URDF import: a robot description (read by :mod:`solver.io.urdf_xml`) → a
:class:`~solver.model.model.Model`, its visual meshes read within bounds (:mod:`solver.io.urdf_mesh`),
placed in the body frames and written as STL (the mapping is documented in docs/import.md).

The model is built at the URDF's zero configuration, so every joint coordinate of the model is the
URDF joint position (same axis, same sign, zero at zero).  With ``T_L`` the global pose of link L
at q = 0 (``T_child = T_parent · T_origin(joint)``, rpy = R_z(yaw) R_y(pitch) R_x(roll)):

* each link is owned by a body (or by ground): its own, or — merged — the body its parent's owner
  is when it hangs on a ``fixed`` joint and has no mass, or has mass but an inertia that is not
  valid on its own (a point mass); the root link without mass is ground, with mass it is a body
  welded to ground by ``<root>_to_ground``; a massless link on a moving joint is refused;
* a body's mass, CM and inertia are those of its links together (``m = Σ m_L``, CM ``Σ m_L r_L / m``,
  inertia by the parallel-axis theorem; ``r_L = T_L · xyz_in``, a link's inertia at its CM
  ``A_L R_in J_in R_inᵀ A_Lᵀ`` globally, ``R_in`` the rpy of the inertial origin); a link of mass 0
  keeps its rotational inertia (as urdfdom and Pinocchio do); body axes = the owner link's axes;
* joint → joint at the child link's origin, ``axis = A_child · axis_urdf`` (global), body_i = the
  parent's owner, body_j = the child: revolute/continuous → revolute, prismatic → prismatic,
  fixed → fixed, planar → planar (axis = the plane's normal), spherical → spherical, floating → no
  joint (the solver gives a body without a path to ground a free 6-DOF joint); ``<limit>`` → the
  joint's ``*_limit`` fields, lower and upper enforced as stops (``enforce_limits=False``: data
  only); ``<dynamics damping>`` of a revolute/continuous joint → a rotational damper, of a prismatic joint → a translational damper along the axis;
* every ``<visual>`` (mesh STL/OBJ/DAE or box/cylinder/sphere) of the links of one body is placed
  in the body frame (origin at the CM) and the union written as one STL file.

``<mimic joint multiplier offset>`` → a coupler q = multiplier · q_mimic + offset (named
``<joint>_mimic``); a mimic of a joint that is not imported with a coordinate (fixed, floating,
missing) is noted and the joint left independent.

A ``SimpleTransmission`` (one actuator, one joint, an effort interface) → a joint actuator with a
declared input named after the actuator (gain: the mechanical reduction,
:meth:`_Builder._add_transmission`).  ``<dynamics friction="F">`` of a revolute, continuous or
prismatic joint → a joint friction of limit F (N·m or N: the URDF's static friction; μ_s = μ_d = 1 on a
preload F, radius 1, no reaction load; stiction below the law's default 1e-3 rad/s or m/s;
:meth:`_Builder._add_friction`).  Noted, not refused: other transmissions, friction of other joints.
Refused with a ModelError naming the element: malformed
numbers (:mod:`solver.io.urdf_xml`), links that are the child of two joints, and mesh paths that
leave the URDF's folder and the package folder.
"""
from __future__ import annotations

import os

import numpy as np

from ..errors import ModelError
from ..math.rotations import rotation_matrix
from ..model.fields import Field, FieldProblem
from ..model.model import GROUND, Model
from .files import read_regular
from .imported import Imported as UrdfImport
from .imported import Names, add_actuator_input, add_joint_spring_damper, out_folder, save_imported, valid_name
from .urdf_mesh import VisualReader
from .urdf_xml import mesh_filenames, parse_urdf

MAX_URDF_BYTES = 20 * 1024 * 1024
GRAVITY = (0.0, 0.0, -9.81)            # URDF/ROS convention: z up
JOINT_MAP = {"revolute": "revolute", "continuous": "revolute", "prismatic": "prismatic",
             "fixed": "fixed", "planar": "planar", "spherical": "spherical"}
_INERTIA = Field("inertia", "inertia")


# ---- public API -------------------------------------------------------------------------------
def read_urdf(path, package_dir=None, visuals=True, enforce_limits=True) -> UrdfImport:
    """Read a URDF file into a model (module docstring); ``package_dir`` resolves ``package://``
    paths.  Files are read only inside the URDF's folder and ``package_dir``.  ``visuals=False``:
    the model alone (no mesh file is read, ``meshes`` stays empty).  ``enforce_limits``: a
    ``<limit>``'s lower and upper become stops (False: kept as data only, the joint's ``stops``
    false)."""
    path = os.fspath(path)
    robot = parse_urdf(read_regular(path, MAX_URDF_BYTES, "URDF file"), path)
    folders = _Folders(os.path.abspath(path), package_dir)
    return _Builder(robot, folders, visuals, enforce_limits).build()


def import_urdf(path, out_path, package_dir=None, enforce_limits=True) -> UrdfImport:
    """Read a URDF file, write each body's visual mesh as ``<stem>_meshes/<body>.stl`` beside
    ``out_path`` (through the atomic writer, never through a link) and save the model as the
    project ``out_path`` (``*.mbs.json``)."""
    out_folder(out_path)
    return save_imported(read_urdf(path, package_dir, enforce_limits=enforce_limits), out_path)


def urdf_needs_package_dir(path) -> bool:
    """Whether the URDF file names a ``package://`` resource (so a package folder must be given)."""
    path = os.fspath(path)
    names = mesh_filenames(read_regular(path, MAX_URDF_BYTES, "URDF file"), path)
    return any(name.startswith("package://") for name in names)


class _Folders:
    """Resolves mesh file names inside the URDF's folder and the package folder only."""

    def __init__(self, urdf_path, package_dir):
        self.stem = os.path.splitext(os.path.basename(urdf_path))[0]
        self.urdf_dir = os.path.realpath(os.path.dirname(urdf_path))
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
    """One import: the link tree from the root at the zero configuration, links grouped into
    bodies, then bodies, joints and visuals added."""

    def __init__(self, robot, folders, visuals=True, enforce_limits=True):
        self.robot = robot
        self.draw = visuals
        self.enforce_limits = enforce_limits
        self.folders = folders
        self.links = {link.name: link for link in robot.links}
        for kind, items in (("link", robot.links), ("joint", robot.joints)):
            seen = set()
            for item in items:
                if item.name in seen:
                    raise ModelError(f"{kind} '{item.name}': defined twice")
                seen.add(item.name)
        self.model = Model(name=valid_name(robot.name or folders.stem), gravity=GRAVITY)
        self.model.settings.set("formulation", "relative")
        self.result = UrdfImport(self.model)
        self.notes = self.result.notes
        if not robot.name:
            self.notes.append(f"robot: the <robot> element has no name; the model is named '{self.model.name}'")
        elif self.model.name != robot.name:
            self.notes.append(f"robot '{robot.name}': named '{self.model.name}' (a model name has no quotes, slashes "
                              "or control characters)")
        self.taken = Names(self.notes)   # the model's names so far
        self.names = {}         # body link or joint (kind, URDF name) → its name in the model
        self.pose = {}          # link → 4×4 global pose at q = 0
        self.owner = {}         # link → the link whose body it belongs to (None: ground)
        self.order = []         # links from the root, parents first
        self.parts = {}         # body → its visual meshes placed in the body frame
        self.parent_joint = {}  # link → the joint it is the child of

    def build(self) -> UrdfImport:
        if not self.links:
            self.notes.append(f"robot '{self.robot.name}': has no <link>; the model is empty")
            return self.result
        root, children = self._tree()
        self._group(root, children)
        members = {}            # body (its owner link) → its links, parents first
        for link in self.order:
            if self.owner[link] is not None:
                members.setdefault(self.owner[link], []).append(link)
        for body, links in members.items():
            self._add_body(body, links)
        if self.owner[root] is not None:
            weld = self._name("joint", f"{root}_to_ground")
            self.model.add_joint(weld, "fixed", GROUND, self._body(root), origin=(0.0, 0.0, 0.0))
            self.notes.append(f"link '{root}': the root link is welded to ground by joint '{weld}'")
        for link in self.order[1:]:
            self._add_joint(self.parent_joint[link])
        for link in self.order[1:]:
            self._add_mimic(self.parent_joint[link])
        for t in self.robot.transmissions:
            self._add_transmission(t)
        if self.draw:
            drawn = sum(len(self.links[link].visuals) for link in self.order if self.owner[link] is not None)
            self.visuals = VisualReader(drawn, f"robot '{self.robot.name}'")
            for link in self.order:
                self._add_visuals(link)
        if self.parts:
            import trimesh
            self.result.meshes = {self.names["link", body]: trimesh.util.concatenate(parts)
                                  for body, parts in self.parts.items()}
        return self.result

    def _tree(self):
        """The root link and each link's child joints; checks that the links form one tree."""
        for j in self.robot.joints:
            for end in (j.parent, j.child):
                if end not in self.links:
                    raise ModelError(f"joint '{j.name}': link '{end}' is not defined")
            if j.child in self.parent_joint:
                raise ModelError(f"link '{j.child}': is the child of joints '{self.parent_joint[j.child].name}' "
                                 f"and '{j.name}' (a URDF is a tree; closed loops are not supported)")
            self.parent_joint[j.child] = j
        roots = [name for name in self.links if name not in self.parent_joint]
        if len(roots) != 1:
            raise ModelError(f"robot '{self.robot.name}': needs exactly one root link; found "
                             f"{', '.join(roots) or 'none (the joints form a loop)'}")
        children = {name: [] for name in self.links}
        for j in self.robot.joints:
            children[j.parent].append(j)
        return roots[0], children

    def _group(self, root, children):
        """Poses at q = 0 and the owner of every link (module docstring)."""
        self.pose[root] = np.eye(4)
        self.owner[root] = self._owner(root, None, None)
        if self.owner[root] is None and self.links[root].visuals:
            self.notes.append(f"link '{root}': the root link becomes ground; its visuals are not drawn")
        self.order.append(root)
        stack = list(reversed(children[root]))
        while stack:
            j = stack.pop()
            self.pose[j.child] = self.pose[j.parent] @ j.origin
            self.owner[j.child] = self._owner(j.child, j, self.owner[j.parent])
            self.order.append(j.child)
            stack += reversed(children[j.child])
        for name in self.links:
            if name not in self.pose:
                raise ModelError(f"link '{name}': not connected to the root link '{root}'")

    def _owner(self, link, j, parent):
        """The link whose body owns ``link``, which hangs on joint ``j`` (None: the root link,
        welded to ground) below a link owned by ``parent`` (None: ground): its own, or ``parent``
        when it is merged over a fixed joint or the weld (no mass, or an inertia that is not
        valid alone)."""
        mass = self._mass(link)
        if j is not None and j.type != "fixed":
            if mass == 0.0:
                raise ModelError(f"link '{link}': has no mass (no <inertial> or mass 0) but moves on "
                                 f"{j.type} joint '{j.name}'; give it an <inertial> or make the joint fixed")
            return link
        over = f"fixed joint '{j.name}'" if j is not None else "the root link, welded to ground"
        if mass == 0.0:
            if np.any(self._inertia(link)):
                kept = "fixed to ground, so it has no effect" if parent is None else f"kept in body '{parent}'"
                self.notes.append(f"link '{link}': mass 0 with a rotational inertia, {kept} ({over}; as urdfdom "
                                  "and Pinocchio keep it)")
            return parent
        try:
            _INERTIA.coerce(list(self._inertia(link)[[0, 1, 2, 0, 1, 2], [0, 1, 2, 1, 2, 0]]))
            return link
        except FieldProblem as p:
            into = "ground" if parent is None else f"body '{parent}'"
            self.notes.append(f"link '{link}': its inertia alone {p}; merged into {into} ({over})")
            return parent

    def _name(self, kind, name):
        """The model's name for the URDF ``kind`` (link, joint) ``name``: the same when it is a
        valid model name not taken yet (URDF links and joints have separate name spaces, the model
        has one), else made valid and unique (noted)."""
        new = self.names[kind, name] = self.taken.unique(kind, name)
        return new

    def _body(self, link):
        """The model name of the body (or ground) owning ``link``."""
        owner = self.owner[link]
        return GROUND if owner is None else self.names["link", owner]

    def _mass(self, name):
        inertial = self.links[name].inertial
        return 0.0 if inertial is None else inertial.mass

    def _inertia(self, name):
        """The link's inertia at its CM in its inertial frame (zeros when not given)."""
        inertial = self.links[name].inertial
        if inertial is None or inertial.inertia is None:
            if inertial is not None and inertial.mass > 0.0:
                raise ModelError(f"link '{name}'.inertial: has a mass but no <inertia>")
            return np.zeros((3, 3))
        return inertial.inertia

    def _add_body(self, body, links):
        """The body of link ``body`` and the ``links`` it owns (itself and those merged into it):
        mass, CM, inertia together."""
        parts = []                  # (mass, global CM, global inertia at that CM)
        for name in links:
            inertial = self.links[name].inertial
            if inertial is None:
                continue
            T = self.pose[name] @ inertial.origin
            R = T[:3, :3]
            parts.append((inertial.mass, T[:3, 3], R @ self._inertia(name) @ R.T))
        m = sum(p[0] for p in parts)
        c = sum(p[0] * p[1] for p in parts) / m
        J = sum(p[2] + p[0] * (np.dot(p[1] - c, p[1] - c) * np.eye(3) - np.outer(p[1] - c, p[1] - c))
                for p in parts)
        A = self.pose[body][:3, :3]
        J = A.T @ J @ A
        self.model.add_body(self._name("link", body), mass=float(m), position=c, orientation=A,
                            inertia=(J[0, 0], J[1, 1], J[2, 2], J[0, 1], J[1, 2], J[2, 0]))

    def _add_mimic(self, j):
        """A joint's <mimic>: the coupler q_j = multiplier · q_mimic + offset (both URDF coordinates
        are zero at the imported configuration, as the model's are)."""
        if j.mimic is None:
            return
        names = self.result.joint_names
        follower, leader = names.get(j.name), names.get(j.mimic)
        coordinates = [n is not None and self.model.joints[n].coordinates() for n in (follower, leader)]
        if not all(coordinates):
            self.notes.append(f"joint '{j.name}': follows joint '{j.mimic}' (<mimic>), but "
                              f"{'it' if not coordinates[0] else repr(j.mimic)} is not imported as a joint with a "
                              "coordinate; the mimic relation is not enforced")
            return
        self.model.add_coupler(self._name("coupler", f"{j.name}_mimic"), leader, follower,
                               ratio=j.mimic_multiplier, offset=j.mimic_offset)

    def _add_transmission(self, t):
        """A SimpleTransmission of one actuator on one revolute, continuous or prismatic joint with an
        effort interface (or none named): joint effort = mechanicalReduction × actuator effort (as
        ros_control's SimpleTransmission), a joint actuator with a declared input named after the
        actuator (:func:`~solver.io.imported.add_actuator_input`).  Other transmissions, and position
        or velocity interfaces (a controller the model does not have), are noted."""
        where = f"transmission '{t.name}'"
        joint = self.result.joint_names.get(t.joints[0][0]) if len(t.joints) == 1 else None
        interfaces = t.joints[0][1] if len(t.joints) == 1 else []
        why = None
        if not t.type.endswith("SimpleTransmission") or len(t.actuators) != 1:
            why = f"type {t.type or 'unset'} with {len(t.joints)} joints and {len(t.actuators)} actuators " \
                  "(a SimpleTransmission of one actuator on one joint is imported)"
        elif joint is None or self.model.joints[joint].type not in ("revolute", "prismatic"):
            why = f"joint '{t.joints[0][0]}' is not imported as a revolute or prismatic joint"
        elif interfaces and not any("Effort" in h for h in interfaces):
            why = f"its interface {', '.join(interfaces)} needs a controller the model does not have"
        if why is not None:
            self.notes.append(f"{where}: not imported: {why}")
            return
        label, reduction = t.actuators[0]
        name, force = add_actuator_input(self.model, self.taken, label or t.name, joint, reduction)
        self.notes.append(f"{where}: → joint actuator '{force}' on joint '{joint}' (effort {reduction:g} × the "
                          f"input '{name}'; default 0)")

    def _add_joint(self, j):
        where = f"joint '{j.name}'"
        if self.owner[j.child] != j.child:
            for what, value in (("damping", j.damping), ("friction", j.friction)):
                if value:
                    self.notes.append(f"{where}: <dynamics {what}> of a fixed joint has no effect")
            return
        if j.type == "floating":
            self.notes.append(f"{where}: floating, so no joint: body '{j.child}' moves freely (6 DOF)")
            return
        T = self.pose[j.child]
        ignored = j.type in ("fixed", "spherical") and not np.any(j.axis)     # the axis has no role there
        axis = T[:3, :3] @ (np.array([0.0, 0.0, 1.0]) if ignored else j.axis)
        name = self._name("joint", j.name)
        self.result.joint_names[j.name] = name
        self.model.add_joint(name, JOINT_MAP[j.type], self._body(j.parent), self._body(j.child), origin=T[:3, 3],
                             axis=axis, **self._limits(j))
        if j.damping:
            self._add_damping(j, name, where, T[:3, 3], axis)
        if j.friction:
            self._add_friction(j, name, where)

    def _add_friction(self, j, joint, where):
        """``<dynamics friction="F">``: the URDF's static friction force or torque F of the joint as a
        joint friction whose limit is F whatever the load (μ_s = μ_d = 1 on a preload F at radius 1:
        :class:`solver.model.elements.JointFriction`), at the stick–slip law's default speeds."""
        if j.type not in ("revolute", "continuous", "prismatic"):
            self.notes.append(f"{where}: <dynamics friction> {j.friction:g} of a {j.type} joint is not modelled")
            return
        name = self._name("force", f"{joint}_friction")
        self.model.add_joint_friction(name, joint, static_coefficient=1.0, dynamic_coefficient=1.0,
                                      preload=j.friction, radius=1.0, reaction_load=False)
        self.notes.append(f"{where}: <dynamics friction> {j.friction:g} → joint friction '{name}' (limit "
                          f"{j.friction:g}, stiction below 1e-3 per s)")

    def _limits(self, j):
        if j.type not in ("revolute", "continuous", "prismatic"):
            return {}
        keep = ("effort", "velocity") if j.type == "continuous" else ("lower", "upper", "effort", "velocity")
        out = {f"{k}_limit": v for k, v in j.limit.items() if k in keep}
        return out if self.enforce_limits else out | {"stops": False}

    def _add_damping(self, j, joint, where, origin, axis):
        """Joint damping (:func:`~solver.io.imported.add_joint_spring_damper`, stiffness 0)."""
        if j.type not in ("revolute", "continuous", "prismatic"):
            self.notes.append(f"{where}: <dynamics damping> of a {j.type} joint is not modelled")
            return
        travel = max([abs(j.limit.get(k, 0.0)) for k in ("lower", "upper")])
        note = add_joint_spring_damper(self.model, self._name("force", f"{joint}_damping"), joint, JOINT_MAP[j.type],
                                       self._body(j.parent), self._body(j.child), origin, axis, j.damping,
                                       travel=travel)
        if note:
            self.notes.append(f"{where}: <dynamics damping> as {note}")

    def _body_pose(self, body):
        """Global 4×4 pose of a body frame (origin at the CM, link axes) at q = 0."""
        b = self.model.bodies[self.names["link", body]]
        X = np.eye(4)
        X[:3, :3] = rotation_matrix(np.array(b.orientation))
        X[:3, 3] = b.position
        return X

    def _add_visuals(self, link):
        body = self.owner[link]
        visuals = self.links[link].visuals
        if body is None:
            if visuals and link != self.order[0]:
                self.notes.append(f"link '{link}': fixed to ground; its visuals are not drawn")
            return
        X = np.linalg.inv(self._body_pose(body)) @ self.pose[link]
        for k, v in enumerate(visuals):
            where = f"link '{link}'.visual[{k}]"
            if v.kind is None:
                self.notes.append(f"{where}: no box, cylinder, sphere or mesh geometry; not drawn")
                continue
            path = self.folders.resolve(v.filename, where) if v.kind == "mesh" else None
            mesh = self.visuals.geometry(v, path, where)
            mesh.apply_transform(X @ v.origin)
            self.parts.setdefault(body, []).append(mesh)
            color = self._color(v)
            if color is not None:
                self.result.colors.setdefault(self.names["link", body], color)

    def _color(self, v):
        rgba = v.rgba if v.rgba is not None else self.robot.materials.get(v.material)
        return None if rgba is None else tuple(float(np.clip(c, 0.0, 1.0)) for c in rgba[:3])
