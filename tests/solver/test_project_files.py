"""Project files: validation messages name the field, round-trips, atomic save, malformed input."""
import json
import os

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st, HealthCheck

import solver
from solver.io.project import project_from_bytes
from solver.model.project_format import project_to_dict

pytestmark = pytest.mark.numerics   # run again under another BLAS kernel (Makefile)

SAMPLES = sorted(p for p in os.listdir(os.path.join(os.path.dirname(__file__), "..", "..", "sample_models"))
                 if p.endswith(".mbs.json"))
SAMPLE_DIR = os.path.join(os.path.dirname(__file__), "..", "..", "sample_models")


def pendulum():
    m = solver.Model(name="p", gravity=(0, -9.81, 0))
    m.add_body("bob", mass=1.0, inertia=(0.01, 0.01, 0.01), position=(0, -1, 0))
    m.add_joint("pivot", "revolute", "ground", "bob", origin=(0, 0, 0), axis=(0, 0, 1))
    m.add_driver("D", joint="pivot", expression="0.5*sin(2*t)")
    return m


@pytest.mark.parametrize("name", SAMPLES)
def test_sample_round_trip_is_exact(name, tmp_path):
    m = solver.load_model(os.path.join(SAMPLE_DIR, name))
    out = tmp_path / name
    m.save(out)
    m2 = solver.load_model(out)
    assert m2 == m
    with open(os.path.join(SAMPLE_DIR, name)) as saved:          # loading normalizes axes: numbers to round-off
        assert_same_document(json.loads(out.read_text()), json.load(saved), name)


def assert_same_document(made, saved, where):
    """Two JSON documents hold the same structure, the same strings and the same numbers to 1e-12
    relative (a sample's inertia computed on another CPU or BLAS may differ in its last digit; a
    golden file compared as text would fail there)."""
    if isinstance(saved, dict):
        assert isinstance(made, dict) and made.keys() == saved.keys(), where
        for key in saved:
            assert_same_document(made[key], saved[key], f"{where}.{key}")
    elif isinstance(saved, list):
        assert isinstance(made, list) and len(made) == len(saved), where
        for k, (a, b) in enumerate(zip(made, saved)):
            assert_same_document(a, b, f"{where}[{k}]")
    elif isinstance(saved, (int, float)) and not isinstance(saved, bool):
        assert isinstance(made, (int, float)) and made == pytest.approx(saved, rel=1e-12, abs=1e-15), where
    else:
        assert made == saved, where


def test_samples_are_what_the_builders_make(tmp_path):
    """Golden files: sample_models/ equals tools/make_samples.py output (numbers to round-off)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("make_samples", os.path.join(SAMPLE_DIR, "..", "tools", "make_samples.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    for name, build in mod.BUILDERS.items():
        path = tmp_path / f"{name}.mbs.json"
        build().save(path)
        with open(os.path.join(SAMPLE_DIR, f"{name}.mbs.json")) as saved:
            assert_same_document(json.loads(path.read_text()), json.load(saved), name)


def test_atomic_save_keeps_old_file_on_crash(tmp_path, monkeypatch):
    path = tmp_path / "m.mbs.json"
    m = pendulum()
    m.save(path)
    before = path.read_text()
    m.add_body("extra", mass=1.0, inertia=(1, 1, 1))

    def boom(*a, **k):
        raise OSError("disk full")
    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        m.save(path)
    monkeypatch.undo()
    assert path.read_text() == before
    assert {p.name for p in tmp_path.iterdir()} <= {"m.mbs.json", "m.mbs.json.bak"}   # no temp file left
    m.save(path)
    assert (tmp_path / "m.mbs.json.bak").read_text() == before


@pytest.mark.parametrize("mutate, message", [
    (lambda d: d["model"]["joints"][0].update(axis=[0, 0, 0]), "model.joints[0].axis: must be a non-zero 3-vector"),
    (lambda d: d["model"]["bodies"][0].update(mass=-1), "model.bodies[0].mass: must be > 0"),
    (lambda d: d["model"]["bodies"][0].update(mass="heavy"), "model.bodies[0].mass: must be a number"),
    (lambda d: d["model"]["bodies"][0].update(inertia=[1, 1, 5]), "triangle inequality"),
    (lambda d: d["model"]["bodies"][0].update(inertia=[1, 1, 1, 2, 0, 0]), "positive definite"),
    (lambda d: d["model"]["joints"][0].update(body_j="nobody"), "model.joints[0].body_j: no body named 'nobody'"),
    (lambda d: d["model"]["joints"][0].update(type="hinge"), "model.joints[0].type: must be one of"),
    (lambda d: d["model"]["drivers"][0].update(expression="__import__('os')"), "model.drivers[0].expression"),
    (lambda d: d["model"]["drivers"][0].update(joint="nojoint"), "no joint named 'nojoint'"),
    (lambda d: d["model"]["bodies"].append(dict(d["model"]["bodies"][0])), "already exists"),
    (lambda d: d["model"]["bodies"][0].update(name="ground"), "reserved"),
    (lambda d: d["model"]["bodies"][0].update(colour=1), "unknown field 'colour'"),
    (lambda d: d.update(version=99), "newer than this program reads"),
    (lambda d: d.update(format="other"), "format: must be 'mbs-studio-project'"),
    (lambda d: d["solver"].update(integrator="euler"), "solver.integrator: must be one of"),
    (lambda d: d["model"].update(bodies=[], joints=[], drivers=[]), "no bodies"),
    (lambda d: d["model"]["bodies"][0].update(mass=-1), "model.bodies[0].mass"),
    (lambda d: d["model"]["bodies"][0].update(geometry={"shape": "cone"}), "shape must be one of"),
])
def test_validation_messages_name_the_field(mutate, message):
    d = project_to_dict(pendulum())
    mutate(d)
    with pytest.raises(solver.ModelError) as exc:
        project_from_bytes(json.dumps(d).encode())
    assert any(message in p for p in exc.value.problems), exc.value.problems


def test_a_broken_element_is_reported_once():
    d = project_to_dict(pendulum())
    d["model"]["bodies"][0]["mass"] = -1
    with pytest.raises(solver.ModelError) as exc:
        project_from_bytes(json.dumps(d).encode())
    assert exc.value.problems == ["model.bodies[0].mass: must be > 0, got -1"]


def test_all_problems_are_collected():
    d = project_to_dict(pendulum())
    d["model"]["bodies"][0]["mass"] = -1
    d["model"]["joints"][0]["axis"] = [0, 0, 0]
    d["solver"]["rtol"] = -1
    with pytest.raises(solver.ModelError) as exc:
        project_from_bytes(json.dumps(d).encode())
    assert len(exc.value.problems) >= 3


@pytest.mark.parametrize("raw, message", [
    (b"", "invalid JSON"), (b"{\"format\": ", "invalid JSON"), (b"\xff\xfe\x00", "not UTF-8"),
    (b"[1, 2]", "must hold a JSON object"), (b"{\"a\": NaN}", "non-finite"), (b"[" * 100000 + b"]" * 100000, "nested"),
])
def test_malformed_files(raw, message):
    with pytest.raises(solver.ModelError) as exc:
        project_from_bytes(raw)
    assert message in str(exc.value)


def test_truncated_files_never_half_load(tmp_path):
    text = open(os.path.join(SAMPLE_DIR, "slider_crank.mbs.json"), "rb").read()
    for cut in range(0, len(text) - 1, max(1, len(text) // 60)):
        with pytest.raises(solver.ModelError):
            project_from_bytes(text[:cut])


JSONISH = st.recursive(st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.floats(allow_nan=True)
                       | st.text(max_size=12), lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=8), c, max_size=4),
                       max_leaves=12)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sample=st.sampled_from(SAMPLES), path=st.lists(st.integers(0, 30), min_size=1, max_size=4), value=JSONISH,
       delete=st.booleans())
@pytest.mark.slow
def test_fuzzed_files_raise_only_model_error(sample, path, value, delete):
    """Replace or delete a random node of a sample file: it loads or raises ModelError, nothing else."""
    d = json.load(open(os.path.join(SAMPLE_DIR, sample)))
    node = d
    for k in path[:-1]:
        keys = list(node) if isinstance(node, dict) else list(range(len(node))) if isinstance(node, list) else []
        if not keys:
            break
        child = node[keys[k % len(keys)]]
        if not isinstance(child, (dict, list)):
            break
        node = child
    keys = list(node) if isinstance(node, dict) else list(range(len(node)))
    if keys:
        key = keys[path[-1] % len(keys)]
        if delete:
            del node[key]
        else:
            node[key] = value
    try:
        raw = json.dumps(d).encode()
    except ValueError:
        return
    try:
        project_from_bytes(raw)
    except solver.ModelError:
        pass


def test_model_api_validation_and_cascade():
    m = pendulum()
    with pytest.raises(solver.ModelError, match="joint 'x'.axis"):
        m.add_joint("x", "revolute", "ground", "bob", axis=(0, 0, 0))
    with pytest.raises(solver.ModelError, match="used by"):
        m.remove("bob")
    removed = m.remove("bob", cascade=True)
    assert [e.name for e, _ in removed] == ["D", "pivot", "bob"]
    assert not m.bodies and not m.joints and not m.drivers


def test_set_field_refuses_bad_values_and_keeps_model():
    m = pendulum()
    before = m.to_dict()
    with pytest.raises(solver.ModelError, match="body 'bob'.mass"):
        m.set_field("bob", "mass", 0.0)
    with pytest.raises(solver.ModelError, match="driver 'D'.expression"):
        m.set_field("D", "expression", "sin(")
    assert m.to_dict() == before
    events = []
    m.subscribe(lambda *e: events.append(e))
    m.set_field("bob", "mass", 2.0)
    m.rename("bob", "ball")
    assert m.joints["pivot"].body_j == "ball"
    assert events == [("changed", "bodies", "bob", "mass"), ("renamed", "bodies", "ball", "bob")]


def test_orientation_accepts_matrix_and_quaternion():
    m = solver.Model()
    c, s = np.cos(0.4), np.sin(0.4)
    b1 = m.add_body("a", mass=1, inertia=(1, 1, 1), orientation=[[c, -s, 0], [s, c, 0], [0, 0, 1]])
    b2 = m.add_body("b", mass=1, inertia=(1, 1, 1), orientation=(np.cos(0.2), 0, 0, np.sin(0.2)))
    assert np.allclose(b1.orientation, b2.orientation)
    with pytest.raises(solver.ModelError, match="proper rotation"):
        m.add_body("c", mass=1, inertia=(1, 1, 1), orientation=[[1, 0, 0], [0, 1, 0], [0, 0, -1]])
