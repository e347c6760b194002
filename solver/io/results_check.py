"""What a results file (``docs/file-format.md``, "Results file") may hold, checked before any array
is read: a received file is data, never a pointer to other files or a way to exhaust memory.

- every dataset is stored in the file itself: no external storage (raw data in another file), no
  virtual dataset, no soft or external link (each could read, e.g., ``/proc/self/environ`` into
  results that are later saved and shared);
- ``meta`` is a JSON object whose keys have the types the program uses (names are lists of text,
  events objects with a numeric time, …);
- every dataset has the dtype and shape its meta implies: floating point (``method_code``: integer
  codes of ``METHOD_CODES``), ``(N, …)`` with N output points and the item shape of
  :func:`solver.analysis.recording.output_columns` from the names in meta;
- what is read at once stays under ``MAX_LOAD_BYTES`` (declared sizes, checked before reading).

Each problem is a ModelError naming the file and the dataset or meta key.
"""
from __future__ import annotations

import math

from ..errors import ModelError
from ..model.fields import Field, FieldProblem, show_value
from .jsontext import loads

METHOD_CODES = ("lu", "qr", "svd", "kinematic")    # dataset method_code: the partitioning of each output point

MAX_LOAD_BYTES = 2 * 1024 ** 3         # what load_results reads at once (lazy: t, codes, steps)
_TEXT_LISTS = ("body_names", "joint_names", "driver_names", "coupler_names", "redundant", "nonunique_reactions",
               "equations")
_TEXTS = ("status", "message", "model_name", "formulation", "partitioning", "integrator")
_COUNTS = ("steps", "rhs_evaluations")
NAME = Field("name", "name")


def read_meta(f, path) -> dict:
    """The ``meta`` attribute of an open results file, checked (module docstring)."""
    raw = f.attrs.get("meta")
    if isinstance(raw, bytes):
        raw = raw.decode("utf-8", "replace")
    if not isinstance(raw, str):
        raise ModelError(f"{path}: meta: must be JSON text; got {type(raw).__name__}")
    meta = loads(raw, f"{path}: meta")
    if not isinstance(meta, dict):
        raise ModelError(f"{path}: meta: must be a JSON object")
    problems = []
    for key in ("body_names", "joint_names", "driver_names"):
        if key not in meta:
            problems.append(f"meta.{key}: is required")
    for key in _TEXT_LISTS:
        if key in meta and not (isinstance(meta[key], list) and all(isinstance(x, str) for x in meta[key])):
            problems.append(f"meta.{key}: must be a list of text")
    for key in _TEXTS:
        if meta.get(key) is not None and not isinstance(meta[key], str):
            problems.append(f"meta.{key}: must be text")
    for key in _COUNTS:
        if key in meta and not (_is_int(meta[key]) and meta[key] >= 0):
            problems.append(f"meta.{key}: must be a non-negative integer")
    rows = meta.get("coupler_rows", [])
    if not (isinstance(rows, list) and all(_is_int(r) and r >= 0 for r in rows)
            and len(rows) == len(meta.get("coupler_names", []))):
        problems.append("meta.coupler_rows: must be a list of non-negative integers, one per coupler_names")
    if "wall_time" in meta and not (_is_number(meta["wall_time"]) and meta["wall_time"] >= 0):
        problems.append("meta.wall_time: must be a non-negative number")
    for key in ("body_names", "joint_names", "driver_names"):
        names = meta.get(key) if isinstance(meta.get(key), list) else []
        bad = [x for x in names if isinstance(x, str) and not _is_name(x)]
        if bad:
            problems.append(f"meta.{key}: {show_value(bad[0])} is not a valid name (names become CSV "
                            "file names: no slashes, quotes or control characters)")
    events = meta.get("events", [])
    if not isinstance(events, list) or not all(
            isinstance(e, dict) and _is_number(e.get("time", 0.0)) and isinstance(e.get("kind", ""), str)
            and isinstance(e.get("message", ""), str) for e in events):
        problems.append("meta.events: must be a list of {time: number, kind: text, message: text}")
    flex = meta.get("flexible_bodies", [])
    if not isinstance(flex, list) or not all(
            isinstance(b, dict) and isinstance(b.get("name"), str) and _is_name(b["name"]) and _is_int(b.get("modes"))
            and _is_int(b.get("nodes")) and b["modes"] >= 0 and b["nodes"] >= 0 for b in flex):
        problems.append("meta.flexible_bodies: must be a list of {name: text, modes: integer, "
                        "nodes: integer}")
    if problems:
        raise ModelError([f"{path}: {p}" for p in problems])
    return meta


def check_datasets(f, path, meta, keys, step_keys, lazy) -> None:
    """Check the datasets ``keys`` of an open results file against ``meta`` (module docstring)."""
    import h5py
    datasets = {}
    for key in keys:
        link = f.get(key, getlink=True)
        if link is None:
            raise ModelError(f"{path}: dataset '{key}': is missing")
        if not isinstance(link, h5py.HardLink):
            raise ModelError(f"{path}: dataset '{key}': is a {type(link).__name__} (a link to other "
                             "data); only data stored in the file is read")
        ds = f[key]
        if not isinstance(ds, h5py.Dataset):
            raise ModelError(f"{path}: dataset '{key}': is a group, not a dataset")
        if ds.external or ds.is_virtual:
            raise ModelError(f"{path}: dataset '{key}': has {'external' if ds.external else 'virtual'} "
                             "storage (data in other files); only data stored in the file is read")
        integer = key == "method_code"
        if ds.dtype.kind not in ("iu" if integer else "f"):
            raise ModelError(f"{path}: dataset '{key}': must hold {'integers' if integer else 'floating-point numbers'}; "
                             f"got dtype {ds.dtype}")
        datasets[key] = ds
    n = _rows(datasets["t"], "t", path)
    nb, nj, nd = (len(meta[k]) for k in ("body_names", "joint_names", "driver_names"))
    flex = meta.get("flexible_bodies", [])
    nf, nk, nn = len(flex), sum(b["modes"] for b in flex), sum(b["nodes"] for b in flex)
    nq = _width(datasets["q"], "q", path)
    m = _width(datasets["lam"], "lam", path)
    shapes = {"t": (), "q": (nq,), "qd": (nq,), "qdd": (nq,), "lam": (m,), "r": (nb, 3), "A": (nb, 3, 3),
              "v": (nb, 3), "w": (nb, 3), "a": (nb, 3), "alpha": (nb, 3), "reaction_force": (nj, 3),
              "reaction_torque": (nj, 3), "reaction_force_joint": (nj, 3), "reaction_torque_joint": (nj, 3),
              "driver_force": (nd,), "energy_table": (6,), "constraint_violation": (), "conditioning": (),
              "method_code": (), "flex_r": (nf, 3), "flex_A": (nf, 3, 3), "flex_a": (nk,),
              "flex_disp": (nn, 3), "flex_stress": (nn, 4), "step_t": (), "step_h": ()}
    steps = _rows(datasets[step_keys[0]], step_keys[0], path)
    for key, ds in datasets.items():
        want = ((steps,) if key in step_keys else (n,)) + shapes[key]
        if ds.shape != want:
            raise ModelError(f"{path}: dataset '{key}': must have shape {want} (from t and meta); "
                             f"got {ds.shape}")
    eager = datasets.values() if not lazy else [datasets[k] for k in ("t", "method_code", *step_keys)]
    declared = sum(ds.size * ds.dtype.itemsize for ds in eager)
    if declared > MAX_LOAD_BYTES:
        raise ModelError(f"{path}: the datasets declare {declared} bytes, more than the {MAX_LOAD_BYTES} "
                         "read at once" + ("" if lazy else " (load_results(..., lazy=True) reads slices)"))
    codes = datasets["method_code"][()]
    if codes.size and (codes.min() < 0 or codes.max() >= len(METHOD_CODES)):
        raise ModelError(f"{path}: dataset 'method_code': codes must be 0..{len(METHOD_CODES) - 1}")


# ---- helpers --------------------------------------------------------------------------------------
def _rows(ds, key, path):
    if ds.ndim < 1:
        raise ModelError(f"{path}: dataset '{key}': must be an array of rows; got shape {ds.shape}")
    return ds.shape[0]


def _width(ds, key, path):
    if ds.ndim != 2:
        raise ModelError(f"{path}: dataset '{key}': must have shape (N, n); got {ds.shape}")
    return ds.shape[1]


def _is_name(text):
    try:
        return NAME.coerce(text) == text
    except FieldProblem:
        return False


def _is_int(x):
    return isinstance(x, int) and not isinstance(x, bool)


def _is_number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
