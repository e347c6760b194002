"""Fuzzing the project loader and the model API: every mutation of a sample file is invalid by
construction, and each must end in ``solver.ModelError`` whose problems name the mutated field path
(or, for bytes that are not JSON at all, the line and column); nothing else may raise or hang.

The mutations (issue 11, "Bad input"): wrong types, missing keys, unknown keys, NaN/inf (JSON
tokens, strings, 1e999, integers beyond the float range), negative masses, inertias that are not
positive definite or violate the triangle inequality, zero axes, dangling references, duplicate and
reserved names, invalid drivers (undrivable joint, wrong coordinate, two drivers on one coordinate,
a driver naming itself), huge arrays, truncated JSON and wrong encodings (UTF-16/32, latin-1).
"""
from __future__ import annotations

import json
import os
import signal

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import solver
from solver.io.project import project_from_bytes
from solver.model.project_format import VERSION

SAMPLE_DIR = os.path.join(os.path.dirname(__file__), "..", "..", "sample_models")
RAW = {n: open(os.path.join(SAMPLE_DIR, n), "rb").read() for n in sorted(os.listdir(SAMPLE_DIR))
       if n.endswith(".mbs.json")}
CASE_SECONDS = 5.0          # a case taking longer counts as a hang
CLASSES = {"bodies": solver.Body, "markers": solver.Marker, "joints": solver.Joint, "drivers": solver.Driver}

# Values that are wrong for every field of a kind (the kind's own valid forms excluded).
NOT_A_NUMBER = ["abc", True, [1.0], {"x": 1}, "NaN", "Infinity"]
NOT_A_VECTOR = ["abc", 1.0, [1.0, 2.0], [1.0, "a", 3.0], [1.0, 2.0, 3.0, 4.0], {"x": 1}, [[1.0, 0.0, 0.0]]]
WRONG = {
    "float": NOT_A_NUMBER + [None], "optional_float": NOT_A_NUMBER,
    "name": [12, True, None, "", "a/b", "x" * 201, ["a"]],
    "body": [12, None, "", ["a"], "no_such_body"], "joint": [12, None, "", "no_such_joint"],
    "enum": ["bogus", 3, None, True],
    "vec3": NOT_A_VECTOR + [None], "optional_vec3": NOT_A_VECTOR,
    "vec6": ["abc", [1.0] * 5, [1.0] * 7, [-1.0] * 6],
    "unit_vec3": NOT_A_VECTOR + [None, [0.0, 0.0, 0.0], [1e-13, 0.0, 0.0]],
    "inertia": ["abc", [1.0, 2.0], [1.0, 1.0, "x"], [1.0, 1.0, 1.0, 1.0, 1.0], None],
    "orientation": ["abc", [1.0, 2.0], [[1, 0], [0, 1]], [0.0, 0.0, 0.0, 0.0],
                    [[1, 0, 0], [0, 1, 0], [0, 0, -1]], [[2, 0, 0], [0, 1, 0], [0, 0, 1]]],
    "function": [True, None, [1.0], {"a": 1}, "sin(", "__import__('os')", "t^1000", "x + 1", "",
                 {"t": [0, 1], "values": [0]}, {"t": [1, 0], "values": [0, 1]}],
    "function_vec3": ["abc", [1.0, 2.0], [1.0, 2.0, True], [0, 0, "sin("]],
    "int": [1.5, "3", None, True, -4],
    "geometry": [5, "box", {"shape": "cone"}, {"shape": "box", "size": [-1, 1, 1]},
                 {"shape": "box", "color": [2, 0, 0]}, {"shape": "sphere", "radius": 0},
                 {"shape": "box", "foo": 1}, {"shape": "mesh"}, {"shape": "cylinder", "axis": "w"}],
}
NON_FINITE_TOKENS = ["NaN", "Infinity", "-Infinity", "1e999", "-1e999", "1" + "0" * 400]
NUMERIC_KINDS = ("float", "optional_float", "vec3", "optional_vec3", "vec6", "unit_vec3", "inertia",
                 "orientation", "function", "function_vec3")


class Hang(Exception):
    pass


def _alarm(signum, frame):
    raise Hang(f"a case took more than {CASE_SECONDS} s")


# ---- the file and its elements ------------------------------------------------------------------
def element_class(coll, item):
    return solver.FORCE_CLASSES[item["type"]] if coll == "forces" else CLASSES[coll]


def elements(d):
    """(collection, index, path, element dict, class) of every element, in the loader's order."""
    out = []
    for coll in ("bodies", "markers", "joints", "forces", "drivers"):
        for i, item in enumerate(d["model"][coll]):
            out.append((coll, i, f"model.{coll}[{i}]", item, element_class(coll, item)))
    return out


# ---- mutations: each returns (document or raw bytes, accepted problem prefixes) ------------------
def m_wrong_type(data, d):
    coll, i, path, item, cls = data.draw(st.sampled_from(elements(d)))
    f = data.draw(st.sampled_from([f for f in cls.FIELDS if f.kind in WRONG]))
    item[f.name] = data.draw(st.sampled_from(WRONG[f.kind]))
    return d, [f"{path}.{f.name}"]


def m_settings(data, d):
    f = data.draw(st.sampled_from([f for f in solver.Settings.FIELDS if f.name != "name"]))
    d["solver"][f.name] = data.draw(st.sampled_from(WRONG[f.kind] + ([-1.0, 0.0] if f.kind.endswith("float") else [])))
    return d, [f"solver.{f.name}"]


def m_missing_key(data, d):
    choices = [("", k) for k in ("format", "version", "model")]
    choices += [(path, f.name) for _, _, path, item, cls in elements(d) for f in cls.FIELDS
                if f.required and f.name in item]
    choices += [(path, "type") for coll, _, path, _, _ in elements(d) if coll == "forces"]
    path, key = data.draw(st.sampled_from(choices))
    node = d if not path else _node(d, path)
    del node[key]
    return d, [f"{path}.{key}" if path else key]


def m_unknown_key(data, d):
    targets = [("model", d["model"]), ("solver", d["solver"])] + [(p, it) for _, _, p, it, _ in elements(d)]
    if data.draw(st.booleans()):
        key = data.draw(st.sampled_from(["colour", "Model", "name"]))
        d[key] = 1
        return d, [key]
    path, node = data.draw(st.sampled_from(targets))
    node[data.draw(st.sampled_from(["colour", "Mass", "x" * 5000, "__proto__"]))] = 1
    return d, [path]


def m_non_finite(data, d):
    """A NaN/inf token (or 1e999, or an integer beyond float range) in a numeric field."""
    coll, i, path, item, cls = data.draw(st.sampled_from(elements(d)))
    fields = [f for f in cls.FIELDS if f.kind in NUMERIC_KINDS]
    f = data.draw(st.sampled_from(fields))
    vector = f.kind not in ("float", "optional_float", "function")
    token = data.draw(st.sampled_from(NON_FINITE_TOKENS + ['"NaN"', '"inf"']))
    if vector:
        value = item.get(f.name) or f.default_value() or [0.0, 0.0, 0.0]
        value = list(value) if isinstance(value, list) and value and not isinstance(value[0], list) else [0.0] * 3
        k = data.draw(st.integers(0, len(value) - 1))
        value[k] = "@@TOKEN@@"
        item[f.name] = value
    else:
        item[f.name] = "@@TOKEN@@"
    raw = json.dumps(d).replace('"@@TOKEN@@"', token).encode()
    return raw, [f"{path}.{f.name}"]


def m_gravity_or_view(data, d):
    token = data.draw(st.sampled_from(NON_FINITE_TOKENS))
    if data.draw(st.booleans()):
        d["model"]["gravity"] = [0.0, "@@TOKEN@@", 0.0]
        expected = "model.gravity"
    else:
        d["view"] = {"camera": {"position": [1.0, "@@TOKEN@@", 2.0]}}
        expected = "view"
    return json.dumps(d).replace('"@@TOKEN@@"', token).encode(), [expected]


def m_mass(data, d):
    _, _, path, item, _ = data.draw(st.sampled_from([e for e in elements(d) if e[0] == "bodies"]))
    item["mass"] = data.draw(st.sampled_from([0, 0.0, -1.0, -1e-300, -5]) | st.floats(max_value=0.0, allow_nan=False,
                                                                                     allow_infinity=False))
    return d, [f"{path}.mass"]


def m_inertia(data, d):
    _, _, path, item, _ = data.draw(st.sampled_from([e for e in elements(d) if e[0] == "bodies"]))
    a = data.draw(st.floats(1e-6, 1e3))
    b = data.draw(st.floats(1e-6, 1e3))
    kind = data.draw(st.sampled_from(["triangle", "negative", "zero", "products"]))
    if kind == "triangle":       # the largest principal moment exceeds the sum of the others
        c = (a + b) * data.draw(st.floats(1.01, 1e3))
        value = data.draw(st.permutations([a, b, c]))
    elif kind == "negative":
        value = [a, b, -data.draw(st.floats(1e-9, 1e3))]
    elif kind == "zero":
        value = [0.0, 0.0, 0.0]
    else:                        # a product of inertia too large: not positive definite
        value = [a, a, a, 1.5 * a, 0.0, 0.0]
    item["inertia"] = list(value)
    return d, [f"{path}.inertia"]


def m_zero_axis(data, d):
    _, _, path, item, _ = data.draw(st.sampled_from([e for e in elements(d) if e[0] == "joints"]))
    key = data.draw(st.sampled_from(["axis", "axis2"]))
    item[key] = data.draw(st.sampled_from([[0.0, 0.0, 0.0], [0, 0, 0], [1e-13, 0.0, -1e-13]]))
    return d, [f"{path}.{key}"]


def m_dangling(data, d):
    refs = [(p, f.name, f.kind) for _, _, p, it, cls in elements(d) for f in cls.FIELDS if f.kind in ("body", "joint")]
    path, key, kind = data.draw(st.sampled_from(refs))
    target = _node(d, path)
    target[key] = data.draw(st.sampled_from(["nobody", "Ground", "ground" if kind == "joint" else "nothing",
                                             target["name"]]))
    return d, [f"{path}.{key}"]


def m_duplicate_name(data, d):
    els = elements(d)
    k = data.draw(st.integers(0, len(els) - 1))
    if data.draw(st.booleans()) or len(els) == 1:
        els[k][3]["name"] = "ground"
        return d, [f"{els[k][2]}.name"]
    j = data.draw(st.integers(0, len(els) - 1).filter(lambda x: x != k))
    els[k][3]["name"] = els[j][3]["name"]
    return d, [f"{els[max(j, k)][2]}.name"]


def m_driver(data, d):
    joints = [e for e in elements(d) if e[0] == "joints"]
    drivers = d["model"]["drivers"]
    _, _, jpath, joint, _ = data.draw(st.sampled_from(joints))
    kind = data.draw(st.sampled_from(["undrivable", "twice", "coordinate", "self"]))
    new = {"name": "fuzz_driver", "joint": joint["name"], "expression": "0.1*t"}
    if kind == "undrivable":
        joint["type"] = data.draw(st.sampled_from(["spherical", "fixed"]))
        drivers.append(new)
        # the new type breaks the force elements on the joint too (a rotational spring-damper needs a rotation)
        return d, [f"model.drivers[{i}].joint" for i, dr in enumerate(drivers) if dr["joint"] == joint["name"]] + [
            f"model.forces[{i}].joint" for i, f in enumerate(d["model"]["forces"]) if f.get("joint") == joint["name"]]
    if kind == "twice":
        # the same coordinate twice: "default" is the joint's first coordinate (a cylindrical joint's
        # rotation, so its translation would be a second, valid driver)
        same = ["default"] + list(solver.JOINT_KINDS[joint["type"]].coordinates[:1])
        drivers += [new, dict(new, name="fuzz_driver2", coordinate=data.draw(st.sampled_from(same)))]
        return d, [f"model.drivers[{len(drivers) - 1}].joint"] + [
            f"model.drivers[{i}].joint" for i, dr in enumerate(drivers) if dr["joint"] == joint["name"]]
    if kind == "coordinate":
        valid = solver.JOINT_KINDS[joint["type"]].coordinates
        new["coordinate"] = data.draw(st.sampled_from([c for c in ("rotation", "translation", "x", "y") if c not in valid]
                                                      + ["sideways"]))
        drivers.append(new)
        path = f"model.drivers[{len(drivers) - 1}]"      # a joint without coordinates is named as such
        return d, [f"{path}.coordinate"] + ([f"{path}.joint"] if not valid else [])
    new["joint"] = new["name"]     # a driver that drives itself
    drivers.append(new)
    return d, [f"model.drivers[{len(drivers) - 1}].joint"]


def m_huge_array(data, d):
    n = data.draw(st.sampled_from([5, 1000, 100_000]))
    kind = data.draw(st.sampled_from(["vector", "collection", "table"]))
    if kind == "vector":
        vectors = ("vec3", "unit_vec3", "inertia", "orientation")
        _, _, path, item, cls = data.draw(st.sampled_from([e for e in elements(d)
                                                           if any(f.kind in vectors for f in e[4].FIELDS)]))
        f = data.draw(st.sampled_from([f for f in cls.FIELDS if f.kind in vectors]))
        item[f.name] = [0.5] * n
        return d, [f"{path}.{f.name}"]
    if kind == "collection":
        bodies = d["model"]["bodies"]
        copies = min(n, 300)
        bodies += [dict(bodies[0]) for _ in range(copies)]
        return d, [f"model.bodies[{len(bodies) - copies}].name"]
    ts = [0.01 * k for k in range(n)]
    ts[-1] = ts[-2]                # one time that does not increase
    d["model"]["forces"].append({"type": "torque", "name": "fuzz_torque", "body": d["model"]["bodies"][0]["name"],
                                 "torque": [0.0, 0.0, {"t": ts, "values": [0.0] * n}]})
    return d, [f"model.forces[{len(d['model']['forces']) - 1}].torque"]


def m_top_level(data, d):
    key, value = data.draw(st.sampled_from([
        ("format", "mbs-studio"), ("format", None), ("version", "1"), ("version", 1.0), ("version", True),
        ("version", 0), ("version", VERSION + 1), ("version", None), ("model", []), ("model", "x"), ("solver", []),
        ("solver", 5), ("view", [1]), ("view", "x"), ("model.bodies", {}), ("model.joints", "J"),
        ("model.forces", None), ("model.name", 5), ("model.gravity", [0, 0]), ("model.bodies[0]", 5),
        ("model.joints[0]", []), ("solver.name", "s")]))
    if "." in key:
        parent, _, last = key.rpartition(".")
        if "[" in last:
            coll, idx = last[:-1].split("[")
            _node(d, parent)[coll][int(idx)] = value
        else:
            _node(d, parent)[last] = value
    else:
        d[key] = value
    return d, [key]


def m_not_an_object(data, d):
    raw = data.draw(st.sampled_from([b"[]", b"5", b'"project"', b"null", b"true"]))
    return raw, ["project: the file must hold a JSON object"]


def m_truncated(data, d, raw):
    cut = data.draw(st.integers(0, len(raw) - 2))
    return raw[:cut], ["project: invalid JSON at line "]


def m_encoding(data, d):
    d["model"]["name"] = "Kräfte-Übung"
    text = json.dumps(d, ensure_ascii=False)
    enc = data.draw(st.sampled_from(["utf-16", "utf-16-le", "utf-16-be", "utf-32", "latin-1", "cp1252"]))
    if enc in ("latin-1", "cp1252"):
        return text.encode(enc), ["project: not UTF-8 text at line "]
    return text.encode(enc), ["project: not UTF-8 text but UTF-16 or UTF-32"]


MUTATIONS = [m_wrong_type, m_settings, m_missing_key, m_unknown_key, m_non_finite, m_gravity_or_view, m_mass,
             m_inertia, m_zero_axis, m_dangling, m_duplicate_name, m_driver, m_huge_array, m_top_level,
             m_not_an_object, m_truncated, m_encoding]


def _node(d, path):
    node = d
    for part in path.replace("]", "").replace("[", ".").split("."):
        node = node[int(part)] if part.isdigit() else node[part]
    return node


def _names_a_path(problem, prefixes):
    """The problem starts with one of the expected field paths (followed by ':', '.' or '['), or
    with one of the expected message starts (those end in a space or are whole messages)."""
    for p in prefixes:
        rest = problem[len(p):] if problem.startswith(p) else None
        if rest is not None and (rest[:1] in (":", ".", "[") or p.endswith(" ") or p.endswith("UTF-32")
                                 or rest == ""):
            return True
    return False


# ---- the tests ----------------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("mutate", MUTATIONS, ids=lambda m: m.__name__)
@settings(max_examples=3, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_every_mutated_sample_is_refused_with_its_field_path(mutate, data):
    """Each mutation applied to every sample in each example (every (sample, mutation) pair is
    refused at least three times per run, its element, field and value drawn anew each time)."""
    for sample in sorted(RAW):
        raw = RAW[sample]
        doc = json.loads(raw)
        mutated, prefixes = mutate(data, doc, raw) if mutate is m_truncated else mutate(data, doc)
        if isinstance(mutated, dict):
            mutated = json.dumps(mutated).encode()
        previous = signal.signal(signal.SIGALRM, _alarm)
        signal.setitimer(signal.ITIMER_REAL, CASE_SECONDS)
        try:
            with pytest.raises(solver.ModelError) as exc:
                project_from_bytes(mutated)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
        problems = exc.value.problems
        assert problems and all(isinstance(p, str) and p for p in problems), sample
        assert any(_names_a_path(p, prefixes) for p in problems), (sample, mutate.__name__, prefixes, problems[:5])


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_model_api_refuses_bad_values_and_keeps_the_model(data):
    """The same wrong values through ``Model.set_field`` (what the GUI calls): ModelError naming
    ``kind 'name'.field``, and the model is unchanged."""
    sample = data.draw(st.sampled_from(sorted(RAW)))
    model = project_from_bytes(RAW[sample])
    before = model.to_dict()
    element = data.draw(st.sampled_from([e for e in model.elements()]))
    f = data.draw(st.sampled_from([f for f in element.FIELDS if f.kind in WRONG]))
    value = data.draw(st.sampled_from([v for v in WRONG[f.kind] if v not in ("no_such_body", "no_such_joint")]
                                      + ["ground" if f.kind == "name" else "nobody"]))
    with pytest.raises(solver.ModelError) as exc:
        model.set_field(element.name, f.name, value)
    assert any(p.startswith(f"{element.KIND} '{element.name}'.{f.name}:") for p in exc.value.problems), exc.value.problems
    assert model.to_dict() == before


def test_a_driven_joint_cannot_be_made_undrivable_through_the_api():
    model = project_from_bytes(RAW["fourbar.mbs.json"])
    with pytest.raises(solver.ModelError) as exc:
        model.set_field("A", "type", "spherical")
    assert exc.value.problems == ["driver 'crank_drive'.joint: a spherical joint has no coordinate that can be driven"]
    assert model.joints["A"].type == "revolute"


@pytest.mark.parametrize("raw, problems", [
    (b'{"format": "mbs-studio-project", "version": 1, "model": {"gravity": [0, NaN, 0]}, "view": {"z": [Infinity]}}',
     ["model.gravity[1]: non-finite number NaN is not allowed", "view.z[0]: non-finite number Infinity is not allowed"]),
    ('{"format": "mbs-studio-project", "version": 1,\n "model": {"name": "Grüße"}}'.encode("latin-1"),
     ["project: not UTF-8 text at line 2, column 23 (byte 69, 0xfc); save the file as UTF-8"]),
    ('{"format": "x"}'.encode("utf-16"), ["project: not UTF-8 text but UTF-16 or UTF-32; save the file as UTF-8"]),
    (b'{"format": "mbs-studio-project", "version": 1, "model": {"gravity": [0, 1' + b"0" * 400 + b', 0]}}',
     ["model.gravity: must be finite, got an integer too large for a float"]),
    (b'{"format": "mbs-studio-project", "version": 1, "model": {}, "solver": {"name": "s"}}',
     ["solver.name: unknown key", "model.bodies: the model has no bodies"]),
])
def test_loader_messages(raw, problems):
    with pytest.raises(solver.ModelError) as exc:
        project_from_bytes(raw)
    assert sorted(exc.value.problems) == sorted(problems)


def test_utf8_with_byte_order_mark_loads():
    """Editors on Windows write a BOM: the file is still UTF-8 and loads."""
    m = project_from_bytes(b"\xef\xbb\xbf" + RAW["pendulum.mbs.json"])
    assert m == project_from_bytes(RAW["pendulum.mbs.json"])


@pytest.mark.parametrize("field, value, stored", [
    ("axis", [1e308, 1e308, 0.0], [2 ** -0.5, 2 ** -0.5, 0.0]),
])
def test_huge_but_finite_axes_normalize(field, value, stored):
    """An axis near the float limit used to overflow to a zero axis and load."""
    m = solver.Model()
    m.add_body("b", mass=1.0, inertia=(1, 1, 1))
    j = m.add_joint("j", "revolute", "ground", "b", **{field: value})
    assert j.axis == pytest.approx(stored, rel=1e-15)
    b = m.add_body("c", mass=1.0, inertia=(1, 1, 1), orientation=(1e300, 1e300, 0.0, 0.0))
    assert b.orientation == pytest.approx([2 ** -0.5, 2 ** -0.5, 0.0, 0.0], rel=1e-15)
