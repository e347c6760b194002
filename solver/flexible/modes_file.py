"""Externally computed modes of a flexible body in a ``.npz`` file (the role of an Adams MNF):
mass-normalized nodal mode shapes, their frequencies, the node coordinates and the inertia
invariants of the floating frame of reference formulation (Shabana §5.5–5.6, the quantities of
:mod:`solver.flexible.modal`).  The layout is documented in docs/file-format.md ("Modes file").

Arrays (body frame: the floating frame the model places at the midpoint of start–end, x along
start → end, z along ``z_axis``; n nodes, k modes; SI units):

    format "mbs-studio-modes", version 1
    nodes (n, 3)            node coordinates ū₀,n
    modes (n, 6, k)         nodal translations and small rotations per unit modal coordinate,
                            mass-normalized (Φᵀ M Φ = I) and orthogonal to the rigid-body motions
    frequencies_hz (k,)     natural frequency of each mode (modal stiffness ω² = (2π f)²)
    mass ()                 m = ∫ρ dV
    S0 (3,)                 ∫ρ ū₀ dV
    S_phi (3, k)            ∫ρ φ_l dV
    E1 (3, 3, k)            ∫ρ ū₀,a φ_l,b dV
    E2 (3, 3, k, k)         ∫ρ φ_m,a φ_l,b dV
    inertia (3, 3)          J₀, inertia tensor about the frame origin (undeformed)
    stress_shapes (n, 4, k) optional: axial, bending_y, bending_z, torsion stress per unit a (Pa)

Only a regular file is read (a FIFO or device is refused, never waited on); a relative path is
taken from the project file's folder (``FlexibleBody.modes_file``).
"""
from __future__ import annotations

import math
import zipfile

import numpy as np

from ..errors import ModelError
from ..io.files import open_regular
from ..model.elements import MAX_MODES
from .modal import ModalBody

FORMAT = "mbs-studio-modes"
VERSION = 1
MAX_FILE_BYTES = 1024 ** 3            # the .npz as stored
MAX_ARRAY_BYTES = 1024 ** 3           # its arrays once decompressed and converted to float64 (from their headers)
MAX_MEMBERS = 32                      # members of the archive (the layout has 12 arrays)
DIRECTORY_ENTRY_BYTES = 1024          # central-directory bytes allowed per member (46 + its name + extras)
ARRAYS = ("format", "version", "nodes", "modes", "frequencies_hz", "mass", "S0", "S_phi", "E1", "E2", "inertia",
          "stress_shapes")


class NodeSet:
    """The nodes of an imported body (what joints and force elements attach to)."""

    def __init__(self, nodes):
        self.nodes = np.asarray(nodes, float)
        self.n_nodes = len(self.nodes)

    def nearest_node(self, point_body):
        """Index of the node nearest a body-frame point."""
        return int(np.argmin(np.linalg.norm(self.nodes - np.asarray(point_body, float), axis=1)))


# ---- public API -----------------------------------------------------------------------------------
def export_modes(path, body: ModalBody):
    """Write the reduced body's modes and invariants (module docstring) to ``path`` (.npz)."""
    n, k = body.mesh.n_nodes, body.k
    np.savez(path, format=FORMAT, version=VERSION, nodes=body.mesh.nodes,
             modes=np.concatenate([body.node_phi, body.node_psi], axis=1).reshape(n, 6, k),
             frequencies_hz=body.omega / (2 * np.pi), mass=body.mass, S0=body.S0, S_phi=body.S_phi,
             E1=body.E1, E2=body.E2, inertia=body.inertia(np.zeros(k)), stress_shapes=body.stress_shapes)


def import_modes(path, damping_ratio=0.0, where="modes_file"):
    """The :class:`ModalBody` of a modes file; raises ModelError naming ``where`` and the array
    for a missing or special file, a wrong format or version, or arrays of the wrong shape or
    values.  Shapes and sizes are checked from the archive's array headers before any array is
    decompressed (a small file cannot expand to gigabytes)."""
    data = _read_checked(path, where)
    if not np.all(data["frequencies_hz"] > 0) or not float(data["mass"]) > 0:
        raise ModelError(f"{where}: {path}: 'frequencies_hz' and 'mass' must be > 0")
    if not np.allclose(data["inertia"], data["inertia"].T):
        raise ModelError(f"{where}: {path}: 'inertia' must be symmetric")
    n, k = data["modes"].shape[0], data["modes"].shape[2]
    stress = data.get("stress_shapes", np.zeros((n, 4, k)))
    return ModalBody.from_invariants(NodeSet(data["nodes"]), data["modes"], 2 * np.pi * data["frequencies_hz"],
                                     data["mass"], data["S0"], data["S_phi"], data["E1"], data["E2"],
                                     data["inertia"], stress, damping_ratio)


# ---- helpers --------------------------------------------------------------------------------------
def _read_checked(path, where) -> dict:
    """The arrays of a modes file as floats, after checking the format, version, shapes and total
    size from the ``.npy`` headers in the archive (nothing larger is decompressed)."""
    try:
        fh = open_regular(path, MAX_FILE_BYTES, "modes file")
    except ModelError as exc:
        raise ModelError(f"{where}: cannot read {path}: {str(exc).removeprefix(f'{path}: ')}") from None
    try:
        with fh:
            members, directory = _declared_members(fh)
            if members > MAX_MEMBERS or directory > MAX_MEMBERS * DIRECTORY_ENTRY_BYTES:
                count = members if members < 0xFFFF else "at least 65535"        # 0xFFFF: a ZIP64 count
                raise ModelError(f"{where}: {path}: the archive declares {count} members in a {directory}-byte "
                                 f"directory, more than {MAX_MEMBERS} (a modes file holds {len(ARRAYS)} arrays)")
            with zipfile.ZipFile(fh) as zf:
                members = {info.filename.removesuffix(".npy"): info for info in zf.infolist()
                           if info.filename.removesuffix(".npy") in ARRAYS}
                headers = {key: _header(zf, info) for key, info in members.items()}
                _check_headers(headers, path, where)
                raw = {key: _read_member(zf, members[key]) for key in headers}
    except ModelError:
        raise
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as exc:
        raise ModelError(f"{where}: cannot read {path}: {exc}") from None
    fmt, version = str(raw["format"]), raw["version"]
    if fmt != FORMAT or int(version) != VERSION:
        raise ModelError(f"{where}: {path} is not a {FORMAT} file of version {VERSION} "
                         f"(format {fmt or 'missing'}, version {version})")
    return {key: _array(raw, key, where, path) for key in raw if key not in ("format", "version")}


def _declared_members(fh):
    """(members, central-directory bytes) that the zip's end-of-central-directory record declares,
    read from the file's last 64 KiB before the directory itself is parsed (300 000 members took
    ``zipfile`` 10 s and 260 MB); a missing record is a ValueError.  The directory's size bounds what ``zipfile`` then parses, whatever the count says."""
    fh.seek(0, 2)
    size = fh.tell()
    fh.seek(max(0, size - (22 + 65535)))
    tail = fh.read()
    fh.seek(0)
    at = tail.rfind(b"PK\x05\x06")
    if at < 0 or at + 22 > len(tail):
        raise ValueError("not a zip archive (no end-of-central-directory record)")
    members = int.from_bytes(tail[at + 10:at + 12], "little")
    directory = int.from_bytes(tail[at + 12:at + 16], "little")
    return members, directory


def _header(zf, info):
    """(shape, dtype) from the header of one ``.npy`` member (reads its first bytes only)."""
    with zf.open(info) as member:
        version = np.lib.format.read_magic(member)
        read = {(1, 0): np.lib.format.read_array_header_1_0,
                (2, 0): np.lib.format.read_array_header_2_0}.get(version)
        if read is None:
            raise ValueError(f"'{info.filename}': unsupported .npy version {version}")
        shape, _, dtype = read(member)
    return tuple(shape), dtype


def _read_member(zf, info):
    with zf.open(info) as member:
        return np.lib.format.read_array(member, allow_pickle=False)


def _check_headers(headers, path, where):
    """Format/version present and small, every array of the expected shape (module docstring) and
    numeric, at most ``MAX_MODES`` modes, the total size (read and converted to float64) under
    ``MAX_ARRAY_BYTES``."""
    for key, kinds in (("format", "US"), ("version", "iu")):
        if key not in headers or headers[key][0] != () or headers[key][1].kind not in kinds \
                or headers[key][1].itemsize > 256:
            raise ModelError(f"{where}: {path} is not a {FORMAT} file of version {VERSION} "
                             f"('{key}' missing or not a single {'text' if key == 'format' else 'integer'})")
    problems = []
    for key in ("nodes", "modes"):
        if key not in headers:
            problems.append(f"{where}: {path}: the array '{key}' is missing")
    if problems:
        raise ModelError(problems)
    nodes, modes = headers["nodes"][0], headers["modes"][0]
    n = nodes[0] if len(nodes) == 2 else -1
    k = modes[2] if len(modes) == 3 else -1
    if k > MAX_MODES:
        raise ModelError(f"{where}: {path}: 'modes' declares {k} modes, more than {MAX_MODES}")
    shapes = {"nodes": (n, 3), "modes": (n, 6, k), "frequencies_hz": (k,), "mass": (), "S0": (3,),
              "S_phi": (3, k), "E1": (3, 3, k), "E2": (3, 3, k, k), "inertia": (3, 3)}
    if "stress_shapes" in headers:
        shapes["stress_shapes"] = (n, 4, k)
    for key, shape in shapes.items():
        if key not in headers:
            problems.append(f"{where}: {path}: the array '{key}' is missing")
        elif headers[key][1].kind not in "fiu":
            problems.append(f"{where}: {path}: '{key}' must hold finite numbers (dtype {headers[key][1]})")
        elif n < 1 or k < 0 or headers[key][0] != shape:
            problems.append(f"{where}: {path}: '{key}' must have shape {shape}, got {headers[key][0]}")
    if problems:
        raise ModelError(problems)
    # as read plus as converted to float64 (an int8 array becomes 8 bytes an element)
    size = sum(math.prod(shape) * (dtype.itemsize + 8) for shape, dtype in headers.values())
    if size > MAX_ARRAY_BYTES:
        raise ModelError(f"{where}: {path}: the arrays declare {size} bytes (as read and converted to "
                         f"float64), more than {MAX_ARRAY_BYTES}")


def _array(data, key, where, path):
    value = np.asarray(data[key])
    if value.dtype.kind not in "fiu" or not np.all(np.isfinite(value)):
        raise ModelError(f"{where}: {path}: '{key}' must hold finite numbers")
    return value.astype(float)
