"""Project files (``*.mbs.json``): versioned JSON holding the model, solver settings and view.

``{"format": "mbs-studio-project", "version": 1, "model": {...}, "solver": {...}, "view": {...}}``
(documented in ``docs/file-format.md``).  Loading validates everything and reports every problem
with its field path; a malformed, truncated, wrong-typed or newer-version file is refused whole.
Saving is atomic (:mod:`solver.io.files`): write a temporary file beside the target, flush and fsync
it, keep the previous file as ``<name>.bak``, then rename the temporary file over the target; links
at either name are never written through.
"""
from __future__ import annotations

import math
import os

from ..errors import ModelError
from ..model.elements import Settings
from ..model.fields import show_problems, show_value
from ..model.model import Model, model_from_dict
from ..model.project_format import FORMAT, VERSION, features
from .files import read_regular
from .jsontext import loads

MAX_FILE_BYTES = 50 * 1024 * 1024


def save_project(model: Model, path) -> None:
    """Write ``model`` to ``path`` atomically, keeping the previous file as ``path + '.bak'``
    (:meth:`Model.save`)."""
    model.save(path)


def load_project(path) -> Model:
    """Read and validate a project file; raises ModelError listing every problem."""
    path = os.fspath(path)
    model = project_from_bytes(read_regular(path, MAX_FILE_BYTES, "project file"), source=path)
    model.base_dir = os.path.dirname(os.path.abspath(path))   # relative modes files start there
    return model


def project_from_bytes(raw: bytes, source="project") -> Model:
    text = _decode(raw, source)
    constants = []                 # NaN/Infinity tokens: kept as text, then reported by field path

    def constant(token):
        constants.append(token)
        return _Token(token)
    data = loads(text, source, parse_constant=constant)
    if constants:
        raise ModelError(show_problems([f"{path}: non-finite number {token} is not allowed"
                          for path, token in _non_finite_paths(data)]))
    return project_from_dict(data, source)


def _decode(raw: bytes, source) -> str:
    """UTF-8 text (a leading byte-order mark is allowed); other encodings are named, with the
    position of the first byte that is not UTF-8."""
    if raw[:4] in (b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff") or raw[:2] in (b"\xff\xfe", b"\xfe\xff") \
            or b"\x00" in raw[:4]:
        raise ModelError(f"{source}: not UTF-8 text but UTF-16 or UTF-32; save the file as UTF-8")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise ModelError(f"{source}: not UTF-8 text at line {line}, column {column} (byte {exc.start}, "
                         f"0x{raw[exc.start]:02x}); save the file as UTF-8") from None


class _Token(str):
    """A NaN/Infinity token kept as text while locating it."""


def _non_finite_paths(data):
    """(field path, token) of every NaN/Infinity token in parsed JSON (iterative: any depth)."""
    hits, stack = [], [("", data)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, _Token):
            hits.append((path or "project", str(value)))
        elif isinstance(value, dict):
            stack += reversed([(f"{path}.{k}" if path else k, v) for k, v in value.items()])
        elif isinstance(value, list):
            stack += reversed([(f"{path}[{i}]", v) for i, v in enumerate(value)])
    return hits


def project_from_dict(data, source="project") -> Model:
    """Build a model from the parsed file; every problem is collected before raising."""
    if not isinstance(data, dict):
        raise ModelError(f"{source}: the file must hold a JSON object")
    if data.get("format") != FORMAT:
        raise ModelError(f"format: must be '{FORMAT}' (is this an MBS Studio project?); got {show_value(data.get('format'))}")
    version = data.get("version")
    if isinstance(version, bool) or not isinstance(version, int):
        raise ModelError(f"version: must be an integer; got {show_value(version)}")
    if version > VERSION:
        raise ModelError(f"version: the file is version {show_value(version)}, newer than this program reads "
                         f"({VERSION}); update MBS Studio to open it")
    if version < 1:
        raise ModelError(f"version: must be >= 1; got {show_value(version)}")
    problems = []
    for key in data:
        if key not in ("format", "version", "model", "solver", "view"):
            problems.append(f"{_short(key)}: unknown key (valid: format, version, model, solver, view)")
    problems += [f"model.{key}: needs version {v} of the file format; the file says {version}"
                 for key, v in features(data.get("model")).items() if v > version]
    model = None
    if "model" not in data:
        problems.append("model: is required")
    else:
        try:
            model = model_from_dict(data["model"], "model")
        except ModelError as exc:
            problems += exc.details
    settings = data.get("solver", {})
    if not isinstance(settings, dict):
        problems.append("solver: must be an object")
    elif "name" in settings:                     # Settings has a name field, the file does not
        problems.append("solver.name: unknown key")
    else:
        try:
            s = Settings(**{str(k): v for k, v in settings.items()})
        except ModelError as exc:
            problems += [p.at("solver") if p.path in ("settings 'settings'", "settings '?'") else p
                         for p in exc.details]
    view = data.get("view", {})
    if not isinstance(view, dict):
        problems.append("view: must be an object")
    elif not _finite_json(view):
        problems.append("view: must hold only finite numbers, strings, lists and objects")
    if problems:
        raise ModelError(show_problems(problems))
    model.settings = s
    model.view = view
    return model


def _short(text, limit=60):
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _finite_json(value, depth=0):
    if depth > 20:
        return False
    if isinstance(value, dict):
        return all(isinstance(k, str) and _finite_json(v, depth + 1) for k, v in value.items())
    if isinstance(value, list):
        return all(_finite_json(v, depth + 1) for v in value)
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return abs(value) < 1e308                    # converts to a finite float
    return value is None or isinstance(value, (str, bool))
