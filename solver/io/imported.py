"""What the importers (URDF: :mod:`solver.io.urdf`, MJCF: :mod:`solver.io.mjcf`) share: the result
of an import, valid model names, a joint's passive spring–damper, an actuator as a joint actuator
with a declared input, and the project written with its meshes beside it (docs/import.md)."""
from __future__ import annotations

import os
import stat
import unicodedata
from dataclasses import dataclass, field

import numpy as np

from ..errors import ModelError
from ..model.model import GROUND, Model
from .files import atomic_write

MAX_REACH = 1.0e3                      # m: the largest travel a prismatic joint's spring–damper is sized for


@dataclass
class Imported:
    """An imported model: the model, each body's visual mesh (trimesh, body frame: origin at the
    CM, body axes) and colour, and notes on what was mapped in a way the user should know."""
    model: Model
    meshes: dict = field(default_factory=dict)          # body name → trimesh.Trimesh
    colors: dict = field(default_factory=dict)          # body name → (r, g, b) in [0, 1]
    notes: list = field(default_factory=list)
    joint_names: dict = field(default_factory=dict)     # source joint → model joint (renamed when needed)
    free_bodies: dict = field(default_factory=dict)     # source free joint → the body it leaves free (MJCF)


def valid_name(name):
    """``name`` as a valid model name: quotes, slashes, tabs, line breaks and control characters
    replaced by ``_``, at most 200 characters, ``ground`` (the fixed frame) → ``ground_link``."""
    text = "".join("_" if c in "\n\r\t/\\\"'" or unicodedata.category(c) in ("Cc", "Cf", "Cs") else c
                   for c in name).strip()[:200] or "unnamed"
    return "ground_link" if text == GROUND else text


class Names:
    """The names a model has so far (ground included); notes every renaming in ``notes``."""

    def __init__(self, notes):
        self.taken = {GROUND}
        self.notes = notes

    def unique(self, kind, name):
        """The model's name for the source's ``kind`` (link, joint, body …) ``name``: the same when
        it is a valid model name not taken yet (a source may have separate name spaces, the model
        has one), else made valid and unique (noted)."""
        new = base = valid_name(name)
        if new in self.taken:
            new = base = f"{base}_{kind}"
        k = 1
        while new in self.taken:
            k += 1
            new = f"{base}{k}"
        self.taken.add(new)
        if new != name:
            self.notes.append(f"{kind} '{name}': named '{new}' in the model (a model name is unique and has no "
                              "quotes, slashes or control characters)")
        return new


def add_joint_spring_damper(model, name, joint, kind, body_i, body_j, origin, axis, damping, stiffness=0.0,
                            free=0.0, travel=0.0):
    """The passive load along a joint's coordinate, −k (x − x_free) − c ẋ, as a force element
    ``name``; returns a note for the user, or None.

    revolute: a rotational spring–damper on the model joint ``joint`` (free angle ``free``).  prismatic: a translational spring–damper between a point on ``body_i`` a length L
    behind ``origin`` on ``axis`` and ``origin`` on ``body_j``: its length is L + s, so its rate is
    ṡ and its force −k (s − free) − c ṡ along the axis while s > −L (L = 1 m + ``travel``, at most
    1 + MAX_REACH m)."""
    if kind == "revolute":
        model.add_rotational_spring_damper(name, joint, stiffness=stiffness, damping=damping, free_angle=free)
        return None
    u = np.asarray(axis, float) / np.linalg.norm(axis)
    reach = 1.0 + min(MAX_REACH, travel)
    origin = np.asarray(origin, float)
    model.add_spring_damper(name, body_i, body_j, point_i=origin - reach * u, point_j=origin,
                            stiffness=stiffness, damping=damping, free_length=reach + free)
    return (f"the translational spring–damper '{name}' along the axis (exact while the slide stays above "
            f"{-reach:g} m)")


def add_actuator_input(model, names, label, joint, gain):
    """An imported actuator on a model joint: the joint actuator ``<label>_motor`` (F = gain·u
    along the joint's coordinate) and the declared input ``label`` (u, default 0) whose value
    ``simulate(inputs={label: …})`` gives; returns (input name, force name).  MJCF ``<motor>`` and
    fixed-gain ``<general>`` actuators (gain = gear × gainprm[0]) and URDF SimpleTransmissions
    (gain = mechanicalReduction) import through here."""
    force = names.unique("force", f"{label}_motor")
    model.add_joint_actuator(force, joint, force=0.0, gain=gain)
    name = names.unique("input", label)
    model.add_input(name, f"forces.{force}.force", default=0.0)
    return name, force


def mesh_folder_name(out_path) -> str:
    """``robot.mbs.json`` → ``robot_meshes`` (the folder beside the project holding its meshes)."""
    name = os.path.basename(os.fspath(out_path))
    for ext in (".mbs.json", ".json"):
        if name.endswith(ext):
            name = name[:-len(ext)]
            break
    return f"{name}_meshes"


def out_folder(out_path) -> str:
    """The existing folder the project ``out_path`` is written in (ModelError when it does not exist)."""
    folder = os.path.dirname(os.path.abspath(os.fspath(out_path)))
    if not os.path.isdir(folder):
        raise ModelError(f"{out_path}: folder {folder} does not exist")
    return folder


def save_imported(result: Imported, out_path):
    """Write each body's mesh as ``<stem>_meshes/<body>.stl`` beside ``out_path`` (through the
    atomic writer, never through a link), point the body's geometry at it and save the model as
    the project ``out_path``."""
    from .project import save_project
    out_path = os.fspath(out_path)
    folder = out_folder(out_path)
    mesh_dir = mesh_folder_name(out_path)
    if result.meshes:
        _mesh_folder(os.path.join(folder, mesh_dir))
    for body, mesh in result.meshes.items():
        rel = f"{mesh_dir}/{body}.stl"
        atomic_write(os.path.join(folder, rel), mesh.export(file_type="stl"), keep_backup=False)
        geometry = {"shape": "mesh", "file": rel}
        if body in result.colors:
            geometry["color"] = list(result.colors[body])
        result.model.bodies[body].set("geometry", geometry)
    save_project(result.model, out_path)
    return result


def _mesh_folder(path):
    """Create the meshes folder, or accept it when it is a real folder (a link is refused)."""
    try:
        os.mkdir(path)
        return
    except FileExistsError:
        pass
    if not stat.S_ISDIR(os.lstat(path).st_mode):
        raise ModelError(f"{path}: is not a folder (a link or a file); refusing to write meshes there")
