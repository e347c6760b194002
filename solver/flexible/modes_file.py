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
"""
from __future__ import annotations

import numpy as np

from ..errors import ModelError
from .modal import ModalBody

FORMAT = "mbs-studio-modes"
VERSION = 1


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
    for a missing file, a wrong format or version, or arrays of the wrong shape or values."""
    try:
        with np.load(path, allow_pickle=False) as f:
            data = {key: f[key] for key in f.files}
    except (OSError, ValueError) as exc:
        raise ModelError(f"{where}: cannot read {path}: {exc}") from None
    fmt, version = str(data.get("format", "")), data.get("version")
    if fmt != FORMAT or version is None or int(version) != VERSION:
        raise ModelError(f"{where}: {path} is not a {FORMAT} file of version {VERSION} "
                         f"(format {fmt or 'missing'}, version {version})")
    nodes = _array(data, "nodes", where, path)
    n = nodes.shape[0] if nodes.ndim == 2 else -1
    modes = _array(data, "modes", where, path)
    k = modes.shape[2] if modes.ndim == 3 else -1
    shapes = {"nodes": (n, 3), "modes": (n, 6, k), "frequencies_hz": (k,), "mass": (), "S0": (3,),
              "S_phi": (3, k), "E1": (3, 3, k), "E2": (3, 3, k, k), "inertia": (3, 3)}
    if "stress_shapes" in data:
        shapes["stress_shapes"] = (n, 4, k)
    problems = []
    for key, shape in shapes.items():
        value = _array(data, key, where, path)
        if n < 1 or k < 0 or value.shape != shape:
            problems.append(f"{where}: {path}: '{key}' must have shape {shape}, got {value.shape}")
    if problems:
        raise ModelError(problems)
    if not np.all(data["frequencies_hz"] > 0) or not float(data["mass"]) > 0:
        raise ModelError(f"{where}: {path}: 'frequencies_hz' and 'mass' must be > 0")
    if not np.allclose(data["inertia"], data["inertia"].T):
        raise ModelError(f"{where}: {path}: 'inertia' must be symmetric")
    stress = data.get("stress_shapes", np.zeros((n, 4, k)))
    return ModalBody.from_invariants(NodeSet(nodes), modes, 2 * np.pi * data["frequencies_hz"], data["mass"],
                                     data["S0"], data["S_phi"], data["E1"], data["E2"], data["inertia"],
                                     stress, damping_ratio)


# ---- helpers --------------------------------------------------------------------------------------
def _array(data, key, where, path):
    if key not in data:
        raise ModelError(f"{where}: {path}: the array '{key}' is missing")
    value = np.asarray(data[key])
    if value.dtype.kind not in "fiu" or not np.all(np.isfinite(value)):
        raise ModelError(f"{where}: {path}: '{key}' must hold finite numbers")
    return value.astype(float)
