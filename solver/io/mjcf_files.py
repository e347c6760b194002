"""The files of an MJCF import, bounded and confined before MuJoCo reads them
(docs/import.md, "Files read").

MuJoCo's own parser reads the model (``mujoco.MjSpec``); this module only decides what it may
read.  Before parsing: the model file is a regular file of at most ``MAX_MJCF_BYTES``, and every
``<include file>`` and ``<asset><model file>`` (found by lxml without entities, DTDs or network,
recursively, at most ``MAX_INCLUDES``) stays in the model's folder (resolved as it is opened: ``..``
and links) and is a regular file within the same cap.  After parsing, before compiling (when MuJoCo reads assets): at most
``MAX_BODIES`` bodies; every mesh, height-field, skin and texture file inside the model's folder,
each at most ``MAX_MESH_BYTES`` and together at most ``MAX_TOTAL_MESH_BYTES``
(:mod:`solver.io.urdf_mesh`'s budgets).  MuJoCo's messages are returned as the ModelError's text;
callers print them through :func:`solver.model.fields.shown_text`.
"""
from __future__ import annotations

import os
import warnings

from ..errors import ModelError
from ..model.fields import shown_text
from ..model.paths import confined
from .files import open_regular, read_regular
from .urdf_mesh import MAX_MESH_BYTES, MAX_TOTAL_MESH_BYTES

MAX_MJCF_BYTES = 20 * 1024 * 1024       # the model file and each included file
MAX_INCLUDES = 200
MAX_BODIES = 10_000


def load_spec(path):
    """``(spec, compiled MjModel, compiler warnings)`` of the MJCF file ``path`` with static
    bodies fused into their parents (``fusestatic``), after the checks of the module docstring."""
    try:
        import mujoco
    except ImportError:
        raise ModelError(f"{path}: reading MJCF needs the mujoco package (pip install mujoco, or the "
                         "project's 'mjcf' extra)") from None
    name = os.path.basename(path)
    if not name.lower().endswith(".xml"):
        raise ModelError(f"{name}: an MJCF file's name must end in .xml (MuJoCo chooses its reader by the extension)")
    folder = os.path.dirname(os.path.abspath(path))
    _check_includes(read_regular(path, MAX_MJCF_BYTES, "MJCF file"), path, folder, [0])
    try:
        spec = mujoco.MjSpec.from_file(os.path.abspath(path))
    except Exception as exc:            # noqa: BLE001 — MuJoCo's parser reports every problem this way
        raise ModelError(f"{name}: MuJoCo cannot read it: {_message(exc)}") from None
    if len(spec.bodies) > MAX_BODIES:
        raise ModelError(f"{name}: {len(spec.bodies)} bodies, more than {MAX_BODIES} (refused; the limit keeps "
                         "an import bounded)")
    _check_assets(spec, folder, name)
    spec.compiler.fusestatic = True
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            mj = spec.compile()
        except Exception as exc:        # noqa: BLE001
            raise ModelError(f"{name}: MuJoCo cannot compile it: {_message(exc)}") from None
    return spec, mj, [str(w.message) for w in caught]


def _check_includes(text, path, folder, count):
    """Every ``<include file>`` and ``<asset><model file>`` of ``text`` (and of the files they name)
    confined and bounded."""
    from lxml import etree
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False)
    try:
        root = etree.fromstring(text, parser)
    except etree.XMLSyntaxError as exc:
        raise ModelError(f"{os.path.basename(path)}: not well-formed XML ({exc})") from None
    for element in root.iter("include", "model"):
        if element.tag == "model" and (element.getparent() is None or element.getparent().tag != "asset"):
            continue                    # only <asset><model file> names another MJCF file
        rel = element.get("file", "")
        count[0] += 1
        if count[0] > MAX_INCLUDES:
            raise ModelError(f"{os.path.basename(path)}: more than {MAX_INCLUDES} <include> elements (refused)")
        full = _inside(folder, rel, f"{os.path.basename(path)}: <{element.tag} file='{rel}'>")
        _check_includes(read_regular(full, MAX_MJCF_BYTES, "included MJCF file"), full, folder, count)


def _check_assets(spec, folder, name):
    """Asset files inside ``folder``, regular, within the byte budgets (module docstring)."""
    total = 0
    for kind, items, sub in (("mesh", spec.meshes, spec.meshdir), ("hfield", spec.hfields, spec.meshdir),
                             ("skin", spec.skins, spec.meshdir), ("texture", spec.textures, spec.texturedir)):
        for k, item in enumerate(items):
            files = [item.file] + (list(getattr(item, "cubefiles", [])) if kind == "texture" else [])
            for f in filter(None, files):
                field = f"{name}: {kind} '{item.name or k}'.file"
                rel = os.path.join(sub, f) if sub and not os.path.isabs(f) else f
                full = _inside(folder, rel, field)
                with open_regular(full, MAX_MESH_BYTES, f"{kind} file") as fh:
                    total += os.fstat(fh.fileno()).st_size
                if total > MAX_TOTAL_MESH_BYTES:
                    raise ModelError(f"{field}: the asset files add up to more than {MAX_TOTAL_MESH_BYTES} bytes "
                                     "(refused)")


def _inside(folder, rel, field):
    """The real path of the asset ``rel`` (relative to ``folder``, as MuJoCo opens it: ``..`` and
    links resolved in order) when it is inside ``folder``; ModelError naming ``field`` otherwise."""
    if os.path.isabs(rel):
        confined(folder, rel, field)            # refused: an absolute path
    root, real = os.path.realpath(folder), os.path.realpath(os.path.join(folder, rel))
    if os.path.commonpath([root, real]) != root:
        raise ModelError(f"{field}: must be a path inside the folder of the file, got {rel!r} (it leads outside it)")
    return real


def _message(exc):
    """MuJoCo's message (it quotes the file's names and values) on one line, control characters escaped."""
    return shown_text(" ".join(str(exc).split()))
