"""What a parameter study varies: parameter paths, designs (lists, ranges, full-factorial grids,
Latin hypercube and Monte-Carlo samples), template constants and the STUDY.json form
(``docs/studies.md``).

A *path* names one model field the way the project file nests it: ``bodies.crank.mass``,
``forces.S1.stiffness``, ``drivers.D1.expression``, ``settings.rtol``, ``model.gravity``; a vector
component is ``bodies.crank.angular_velocity[2]``.  A name without a dot (``omega``) is a *constant*:
it is substituted for ``{omega}`` in the study's ``templates`` (field path → expression text), so
``"drivers.D1.expression": "{amp}*sin({omega}*t)"`` varies the amplitude and speed of a driver.
Every edit goes through ``Model.set_field`` (or ``Settings.set``), so a bad value fails its variant
with the model's own message.
"""
from __future__ import annotations

import itertools
import math
import os
import re
from dataclasses import dataclass

import numpy as np

from ..errors import ModelError
from ..io.confine import confined
from ..io.files import read_regular
from ..io.jsontext import loads
from ..io.project import load_project
from ..model.elements import Settings
from ..model.fields import show_names, show_problems, show_value
from ..model.design import derived_fields
from ..model.model import COLLECTIONS
from .responses import Response

STUDY_FORMAT = "mbs-studio-study"
STUDY_VERSION = 1
DESIGNS = ("grid", "zip", "lhs", "monte_carlo")
DISTRIBUTIONS = ("uniform", "normal")
MAX_VARIANTS = 100_000
MAX_STUDY_BYTES = 10 * 1024 * 1024
VECTOR_KINDS = ("vec3", "unit_vec3", "optional_vec3", "vec6", "inertia", "function_vec3")
_PLACEHOLDER = re.compile(r"\{([A-Za-z_]\w*)\}")
_PATH = re.compile(r"^(?P<head>.+?)(\[(?P<index>\d+)\])?$")


@dataclass(frozen=True)
class Parameter:
    """One varied quantity: ``values`` (grid and zip designs) or ``distribution`` =
    ``("uniform", low, high)`` / ``("normal", mean, std)`` (lhs and monte_carlo designs)."""
    path: str
    values: tuple = ()
    distribution: tuple = ()

    @property
    def is_constant(self) -> bool:
        return "." not in self.path


class Study:
    """A parameter study on ``model`` (a :class:`solver.Model`, copied).

    ``design``: 'grid' (full factorial, the first parameter varies slowest), 'zip' (the i-th values
    together), 'lhs' (Latin hypercube, scipy.stats.qmc) or 'monte_carlo', the last two drawing
    ``samples`` variants with ``seed``.  ``fixed``: {path: value} applied to every variant (e.g.
    ``{"settings.t_end": 0.2}``); ``templates``: {field path: text with {constant} placeholders};
    ``results_dir``: where each variant writes its full results (``variant-0007.h5``), shared by all
    workers.  Raises ModelError listing every problem (unknown paths, response targets, …)."""

    def __init__(self, model, parameters, responses, design="grid", samples=None, seed=0, fixed=None,
                 templates=None, results_dir=None):
        self.model = model.copy()
        self.parameters = [p if isinstance(p, Parameter) else Parameter(**p) for p in parameters]
        self.responses = [r if isinstance(r, Response) else Response(**r) for r in responses]
        self.design, self.samples, self.seed = design, samples, seed
        self.fixed = dict(fixed or {})
        self.templates = dict(templates or {})
        self.results_dir = None if results_dir is None else os.fspath(results_dir)
        problems = self._problems()
        if problems:
            raise ModelError(show_problems(problems))
        self._variants = self._sample()

    # ---- public API -----------------------------------------------------------------------------
    @property
    def paths(self) -> list[str]:
        return [p.path for p in self.parameters]

    def variants(self) -> list[dict]:
        """The parameter values of each variant, {path: value}, in run order."""
        return [dict(v) for v in self._variants]

    def edits(self, values: dict) -> list[tuple[str, object]]:
        """The (field path, value) edits that make one variant: fixed fields, varied fields, then
        every template with its constants substituted (numbers written with full precision)."""
        merged = {**self.fixed, **values}
        edits = [(path, v) for path, v in merged.items() if "." in path]
        constants = {k: v for k, v in merged.items() if "." not in k}
        for path, text in self.templates.items():
            edits.append((path, _PLACEHOLDER.sub(lambda m: _constant_text(constants[m.group(1)]), text)))
        return edits

    def to_dict(self, model_path=None) -> dict:
        """The STUDY.json form; ``model_path`` names the project file it refers to."""
        params = []
        for p in self.parameters:
            spec = {"path": p.path}
            if p.distribution:
                spec[p.distribution[0]] = list(p.distribution[1:])
            else:
                spec["values"] = list(p.values)
            params.append(spec)
        data = {"format": STUDY_FORMAT, "version": STUDY_VERSION, "model": model_path,
                "design": {k: v for k, v in (("type", self.design), ("samples", self.samples),
                                             ("seed", self.seed)) if v is not None},
                "parameters": params, "responses": [r.to_dict() for r in self.responses],
                "fixed": self.fixed, "templates": self.templates, "results_dir": self.results_dir}
        return {k: v for k, v in data.items() if v not in (None, {})}

    # ---- validation -----------------------------------------------------------------------------
    def _problems(self) -> list[str]:
        problems = []
        if self.design not in DESIGNS:
            problems.append(f"design.type: must be one of {', '.join(DESIGNS)}; got {show_value(self.design)}")
        sampled = self.design in ("lhs", "monte_carlo")
        if sampled and (isinstance(self.samples, bool) or not isinstance(self.samples, int)
                        or not 1 <= self.samples <= MAX_VARIANTS):
            problems.append(f"design.samples: must be an integer from 1 to {MAX_VARIANTS} for "
                            f"{self.design}; got {show_value(self.samples)}")
        if sampled and (isinstance(self.seed, bool) or not isinstance(self.seed, int)
                        or not 0 <= self.seed < 2 ** 63):
            problems.append(f"design.seed: must be an integer from 0 to 2**63 - 1; got {show_value(self.seed)}")
        if not self.parameters:
            problems.append("parameters: a study needs at least one parameter")
        seen = set()
        for i, p in enumerate(self.parameters):
            where = f"parameters[{i}]"
            if not isinstance(p.path, str) or not p.path:
                problems.append(f"{where}.path: must be a model path or a constant name; got {show_value(p.path)}")
                continue
            if p.path in seen or p.path in self.fixed:
                problems.append(f"{where}.path: '{p.path}' is given twice")
            seen.add(p.path)
            problems += self._path_problems(p.path, f"{where}.path")
            problems += _value_problems(p, where, sampled)
        for path in self.fixed:
            problems += self._path_problems(path, f"fixed.{path}")
        constants = {p for p in list(seen) + list(self.fixed) if "." not in p}
        used = set()
        for path, text in self.templates.items():
            problems += self._path_problems(path, f"templates.{path}", template=True)
            names = set(_PLACEHOLDER.findall(text)) if isinstance(text, str) else set()
            if not isinstance(text, str):
                problems.append(f"templates.{path}: must be expression text; got {show_value(text)}")
            for name in sorted(names - constants):
                problems.append(f"templates.{path}: no parameter or fixed constant named '{name}' "
                                f"(constants: {', '.join(sorted(constants)) or 'none'})")
            used |= names
        for name in sorted(constants - used):
            problems.append(f"{name}: a constant (a path without a dot) must appear as {{{name}}} "
                            "in a template")
        names = [r.name for r in self.responses]
        if not self.responses:
            problems.append("responses: a study needs at least one response")
        for i, r in enumerate(self.responses):
            if names.count(r.name) > 1:
                problems.append(f"responses[{i}].name: '{r.name}' is used twice")
            problems += [f"responses[{i}].{p}" for p in r.problems(self.model)]
        if not problems and self.design == "zip" and len({len(p.values) for p in self.parameters}) > 1:
            problems.append("parameters: the zip design needs the same number of values for every "
                            f"parameter; got {', '.join(str(len(p.values)) for p in self.parameters)}")
        if not problems and self.design == "grid" and math.prod(len(p.values) for p in self.parameters) > MAX_VARIANTS:
            problems.append(f"parameters: the grid has more than {MAX_VARIANTS} variants")
        return problems

    def _path_problems(self, path, where, template=False) -> list[str]:
        if not isinstance(path, str) or not path:
            return [f"{where}: must be a non-empty text"]
        if "." not in path:
            return [f"{where}: a template needs a field path"] if template else []
        try:
            field, value = resolve_field(self.model, path)
        except ModelError as exc:
            return [f"{where}: {p}" for p in exc.problems]
        if template and field.kind not in ("function", "function_vec3") and not isinstance(value, str):
            return [f"{where}: '{path}' is a {field.kind} field; templates fill expression fields"]
        return []

    # ---- sampling -------------------------------------------------------------------------------
    def _sample(self) -> list[dict]:
        paths = self.paths
        if self.design == "grid":
            rows = itertools.product(*(p.values for p in self.parameters))
        elif self.design == "zip":
            rows = zip(*(p.values for p in self.parameters))
        else:
            from scipy.stats import norm, qmc
            d = len(paths)
            if self.design == "lhs":
                unit = qmc.LatinHypercube(d, seed=self.seed).random(self.samples)
            else:
                unit = np.random.default_rng(self.seed).random((self.samples, d))
            columns = []
            for k, p in enumerate(self.parameters):
                kind, a, b = p.distribution
                columns.append(a + unit[:, k] * (b - a) if kind == "uniform" else norm.ppf(unit[:, k], a, b))
            rows = np.column_stack(columns).tolist()
        return [dict(zip(paths, row)) for row in rows]


# ---- Public API: paths and files ----------------------------------------------------------------
def parse_path(path: str):
    """``(collection, element, field, index)`` of a field path (element None for settings and
    model, index None for a whole field).  Element names may contain dots: the collection is the
    first segment and the field the last."""
    m = _PATH.match(path)
    head, index = m.group("head"), m.group("index")
    parts = head.split(".", 1)
    if parts[0] in ("settings", "model"):
        collection, element, field = parts[0], None, parts[1] if len(parts) > 1 else ""
    else:
        collection = parts[0]
        element, _, field = parts[1].rpartition(".") if len(parts) > 1 else ("", "", "")
    return collection, element, field, None if index is None else int(index)


def resolve_field(model, path):
    """The declared Field of ``path`` and its current value in ``model`` (the component for an
    indexed path); raises ModelError naming what is wrong and the valid choices."""
    collection, element, field_name, index = parse_path(path)
    if collection == "settings":
        field = Settings.field(field_name) if field_name != "name" else None
        value = model.settings.values.get(field_name)
    elif collection == "model":
        if field_name != "gravity":
            raise ModelError(f"'{path}': the model's only parameter is model.gravity")
        field, value = model.GRAVITY_FIELD, model.gravity.tolist()
    elif collection in COLLECTIONS:
        elements = getattr(model, collection)
        if element not in elements:
            raise ModelError(f"'{path}': no element named '{element}' in {collection} "
                             f"({show_names(elements)})")
        e = elements[element]
        field = e.field(field_name) if field_name != "name" else None
        value = e.values.get(field_name)
    else:
        raise ModelError(f"'{path}': must start with {', '.join(COLLECTIONS)}, settings or model "
                         "(or be a constant name without dots)")
    if field is None:
        raise ModelError(f"'{path}': names cannot be varied")
    if index is not None:
        if field.kind not in VECTOR_KINDS or not isinstance(value, list):
            raise ModelError(f"'{path}': [{index}] needs a vector field; {field.name} is {field.kind}")
        if index >= len(value):
            raise ModelError(f"'{path}': index {index} is out of range (the field has {len(value)} components)")
        value = value[index]
    return field, value


def apply_edit(model, path, value):
    """Set the field named by ``path`` through the model's validated setters (ModelError if bad)."""
    collection, element, field_name, index = parse_path(path)
    if index is not None:
        whole = path[:path.rindex("[")]
        current = list(resolve_field(model, whole)[1])
        current[index] = value
        value = current
    if collection == "settings":
        model.settings.set(field_name, value)
    elif collection == "model":
        model.gravity = value
    else:
        model.set_field(element, field_name, value)


def parameter_paths(model) -> list[str]:
    """Every path a study can vary in ``model`` (numbers, vector components, expressions), derived
    from the field declarations — what the GUI offers."""
    out = []
    for collection in COLLECTIONS:
        for name, e in getattr(model, collection).items():
            used = e.used_fields() if hasattr(e, "used_fields") else [f.name for f in e.FIELDS]
            derived = derived_fields(e)          # they follow design points: vary the points
            for f in e.FIELDS:
                value, base = e.values[f.name], f"{collection}.{name}.{f.name}"
                if f.name not in used or f.name in derived:
                    continue
                if f.kind in ("float", "optional_float", "function"):
                    out.append(base)
                elif f.kind in VECTOR_KINDS and f.kind != "unit_vec3" and isinstance(value, list):
                    out += [f"{base}[{k}]" for k in range(len(value))]
    out += [f"model.gravity[{k}]" for k in range(3)]
    return out + [f"settings.{f.name}" for f in Settings.FIELDS if f.kind in ("float", "optional_float")]


def load_study(path) -> Study:
    """Read a STUDY.json file (``docs/studies.md``); its model path is relative to the file."""
    path = os.fspath(path)
    raw = read_regular(path, MAX_STUDY_BYTES, "study file")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ModelError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    return study_from_dict(loads(text, path), os.path.dirname(os.path.abspath(path)))


def study_from_dict(data, base_dir=".") -> Study:
    """Build a Study from its STUDY.json form; relative paths are taken from ``base_dir``."""
    if not isinstance(data, dict):
        raise ModelError("study: must be a JSON object")
    problems = []
    if data.get("format") != STUDY_FORMAT:
        problems.append(f"format: must be '{STUDY_FORMAT}'; got {show_value(data.get('format'))}")
    if data.get("version") != STUDY_VERSION:
        problems.append(f"version: this program reads version {STUDY_VERSION}; got {show_value(data.get('version'))}")
    known = {"format", "version", "model", "design", "parameters", "responses", "fixed", "templates",
             "results_dir"}
    problems += [f"{k}: unknown key (valid: {', '.join(sorted(known))})" for k in data if k not in known]
    if not isinstance(data.get("model"), str) or not data["model"] or "\0" in data["model"]:
        problems.append("model: must be the path of a project file (*.mbs.json)")
    if data.get("results_dir") is not None and (not isinstance(data["results_dir"], str)
                                                or not data["results_dir"] or "\0" in data["results_dir"]):
        problems.append("results_dir: must be the path of a folder")
    design = data.get("design", {"type": "grid"})
    if not isinstance(design, dict) or set(design) - {"type", "samples", "seed"}:
        problems.append("design: must be an object with type, samples and seed")
    parameters = [_parameter_from_dict(p, f"parameters[{i}]", problems)
                  for i, p in enumerate(_list(data, "parameters", problems))]
    responses = []
    for i, r in enumerate(_list(data, "responses", problems)):
        try:
            responses.append(Response(**r) if isinstance(r, dict) else Response(kind=r))
        except (ModelError, TypeError) as exc:
            problems.append(f"responses[{i}]: {_short(str(exc))}")
    for key in ("fixed", "templates"):
        if not isinstance(data.get(key, {}), dict):
            problems.append(f"{key}: must be an object of field path → value")
    if problems:
        raise ModelError(show_problems(problems))
    # the model and the results folder stay in the study's folder (a received STUDY.json never
    # makes the program read or write elsewhere: solver.io.confine)
    model_path = confined(base_dir, data["model"], "model")
    results_dir = data.get("results_dir")
    results_dir = None if results_dir is None else confined(base_dir, results_dir, "results_dir")
    model = load_project(model_path)
    return Study(model, parameters, responses, design=design.get("type", "grid"),
                 samples=design.get("samples"), seed=design.get("seed", 0), fixed=data.get("fixed"),
                 templates=data.get("templates"), results_dir=results_dir)


# ---- helpers ------------------------------------------------------------------------------------
def _list(data, key, problems):
    items = data.get(key, [])
    if not isinstance(items, list):
        problems.append(f"{key}: must be a list")
        return []
    return items


def _parameter_from_dict(spec, where, problems):
    """Parameter from {"path", and one of values / range [start, stop, num] / uniform / normal}."""
    if not isinstance(spec, dict):
        problems.append(f"{where}: must be an object with a path")
        return Parameter("?")
    forms = [k for k in spec if k != "path"]
    if len(forms) != 1 or forms[0] not in ("values", "range") + DISTRIBUTIONS:
        problems.append(f"{where}: give the path and exactly one of values, range, uniform, normal; "
                        f"got {', '.join(forms) or 'none'}")
        return Parameter(str(spec.get("path")))
    form, value = forms[0], spec[forms[0]]
    if form == "values":
        if isinstance(value, list) and len(value) > MAX_VARIANTS:
            problems.append(f"{where}.values: more than {MAX_VARIANTS} values")
            return Parameter(spec.get("path"))
        return Parameter(spec.get("path"), values=tuple(value) if isinstance(value, list) else value)
    if not (isinstance(value, list) and len(value) in (2, 3) and all(_is_number(x) for x in value)):
        problems.append(f"{where}.{form}: must be a list of numbers ({'start, stop, num' if form == 'range' else 'two numbers'})")
        return Parameter(spec.get("path"))
    if form == "range":
        if len(value) != 3 or value[2] != int(value[2]) or not 1 <= value[2] <= MAX_VARIANTS:
            problems.append(f"{where}.range: must be [start, stop, num] with an integer num from 1 to "
                            f"{MAX_VARIANTS} (the points are counted before they are made)")
            return Parameter(spec.get("path"))
        return Parameter(spec.get("path"), values=tuple(np.linspace(float(value[0]), float(value[1]),
                                                                     int(value[2])).tolist()))
    return Parameter(spec.get("path"), distribution=(form, *map(float, value)))


def _value_problems(p: Parameter, where, sampled) -> list[str]:
    if sampled:
        d = p.distribution
        if len(d) != 3 or d[0] not in DISTRIBUTIONS or not all(_is_number(x) for x in d[1:]):
            return [f"{where}: the lhs and monte_carlo designs need a distribution "
                    "(uniform [low, high] or normal [mean, std])"]
        if d[0] == "uniform" and not d[1] < d[2]:
            return [f"{where}.uniform: needs low < high; got [{d[1]:g}, {d[2]:g}]"]
        if d[0] == "normal" and not d[2] > 0:
            return [f"{where}.normal: needs std > 0; got {d[2]:g}"]
        return []
    if not isinstance(p.values, tuple) or not p.values:
        return [f"{where}.values: must be a non-empty list (grid and zip designs)"]
    return []


def _is_number(x):
    """A finite number that converts to a float (an integer of 400 digits does not)."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return False
    try:
        return math.isfinite(float(x))
    except OverflowError:
        return False


def _short(text, limit=300):
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _constant_text(value):
    """A constant as expression text: the shortest repr that reads back to the same float."""
    if _is_number(value):
        return repr(float(value))
    return f"({value})"
