"""Fuzzing study files and results files (issue 20): every mutation of a valid file -- values of
the wrong type or size anywhere in the JSON tree or the results meta, removed and unknown keys,
duplicate keys, deep nesting, huge integers, truncation, datasets replaced by other dtypes, shapes,
groups or links -- ends in success or in ``solver.ModelError``; nothing else may raise or hang.  A
results file that loads must also answer every accessor (``mbs info`` reads them).  120 cases
each here (a few seconds); 1500 each passed when this was written."""
from __future__ import annotations

import copy
import functools
import io
import json
import os
import signal
import sys
import tempfile

import h5py
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import solver
from solver.cli import format_summary
from solver.study import load_study

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
from bench.fuzz_files import locations  # noqa: E402  (every (path, value) of a JSON tree)

CASE_SECONDS = 5.0
HOSTILE = [None, True, False, 0, -1, 1.5, -1e308, 1e308, "", "x", "a/b", "\x00", "\x1b[2J", [], {},
           [1.0], [[[[[[1.0]]]]]], {"a": 1}, "bodies.bob.mass", "1/0", 2 ** 70, -(2 ** 70),
           list(range(50))]


class Hang(Exception):
    pass


def _alarm(signum, frame):
    raise Hang(f"a case took more than {CASE_SECONDS} s")


def bounded(fn):
    """Run ``fn`` with a wall-clock alarm: a case that takes longer counts as a hang."""
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, CASE_SECONDS)
    try:
        return fn()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def model():
    m = solver.Model(name="crank", gravity=(0, -9.81, 0))
    m.add_body("bob", mass=1.0, inertia=(1e-3, 1e-3, 1e-3), position=(1, 0, 0))
    m.add_joint("pivot", "revolute", "ground", "bob", origin=(0, 0, 0), axis=(0, 0, 1))
    m.add_driver("D", "pivot", expression="2*sin(t)")
    m.add_spring_damper("S", "ground", "bob", point_i=(0, 1, 0), stiffness=10.0)
    return m


STUDY = {"format": "mbs-studio-study", "version": 1, "model": "m.mbs.json",
         "design": {"type": "grid"},
         "parameters": [{"path": "bodies.bob.mass", "values": [1.0, 2.0]},
                        {"path": "amp", "range": [0.5, 1.0, 3]}],
         "responses": [{"kind": "peak_velocity", "target": "bob"}, "max_constraint_violation"],
         "fixed": {"settings.t_end": 0.1, "forces.S.stiffness": 5.0},
         "templates": {"drivers.D.expression": "{amp}*sin(t)"}, "results_dir": "out"}


def set_at(tree, path, value):
    if not path:
        return value
    parent = tree
    for k in path[:-1]:
        parent = parent[k]
    parent[path[-1]] = value
    return tree


def mutate_json(data, tree):
    """A mutated copy of ``tree`` as JSON text."""
    tree = copy.deepcopy(tree)
    paths = [p for p, _ in locations(tree)]
    kind = data.draw(st.sampled_from(["replace", "delete", "unknown", "duplicate", "deep", "digits",
                                      "truncate", "big_list"]))
    path = data.draw(st.sampled_from(paths))
    if kind == "replace":
        tree = set_at(tree, path, data.draw(st.sampled_from(HOSTILE)))
    elif kind == "delete" and path:
        parent = functools.reduce(lambda t, k: t[k], path[:-1], tree)
        del parent[path[-1]]
    elif kind == "unknown":
        target = functools.reduce(lambda t, k: t[k], path, tree)
        if isinstance(target, dict):
            target[data.draw(st.sampled_from(["x", "", "\x00", "path", "values"]))] = 1
    elif kind == "deep":                       # nested lists, written as text (json.dumps would recurse)
        tree = set_at(tree, path, "__deep__")
    elif kind == "big_list":
        tree = set_at(tree, path, [1.0] * data.draw(st.sampled_from([1000, 100_001])))
    text = json.dumps(tree, allow_nan=True)
    if kind == "deep":
        depth = data.draw(st.integers(60, 100_000))
        text = text.replace('"__deep__"', "[" * depth + "1" + "]" * depth, 1)
    if kind == "duplicate":
        keys = [p[-1] for p in paths if p and isinstance(p[-1], str)]
        key = json.dumps(data.draw(st.sampled_from(keys)))
        text = text.replace(key + ":", f"{key}: 0, {key}:", 1)
    elif kind == "digits":
        text = text.replace("1.0", "1" * data.draw(st.sampled_from([400, 4000, 5000])), 1)
    elif kind == "truncate":
        text = text[:data.draw(st.integers(0, len(text)))]
    return text


@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_every_mutated_study_file_loads_or_is_refused(data):
    with tempfile.TemporaryDirectory() as folder:
        model().save(os.path.join(folder, "m.mbs.json"))
        path = os.path.join(folder, "s.json")
        with open(path, "w", encoding="utf-8", errors="surrogatepass") as fh:
            fh.write(mutate_json(data, STUDY))

        def case():
            try:
                study = load_study(path)
            except solver.ModelError as exc:
                assert exc.problems and all(isinstance(p, str) and len(p) < 2000 for p in exc.problems)
                assert len(exc.problems) <= 21
                return
            for values in study.variants()[:3]:
                study.edits(values)
        bounded(case)


# ---- results files --------------------------------------------------------------------------------
@functools.lru_cache(maxsize=1)
def good_results() -> bytes:
    buf = io.BytesIO()
    res = solver.simulate(model(), t_end=0.05)
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "r.h5")
        res.save(path)
        buf.write(open(path, "rb").read())
    return buf.getvalue()


DTYPES = [np.float64, np.float32, np.int8, np.int64, "S4", np.complex128, np.bool_]


def mutate_results(data, path):
    with h5py.File(path, "r+") as f:
        keys = sorted(f)
        kind = data.draw(st.sampled_from(["meta", "attr", "dtype", "shape", "delete", "group", "soft",
                                          "external", "truncate", "values"]))
        key = data.draw(st.sampled_from(keys))
        if kind == "meta":
            meta = json.loads(f.attrs["meta"])
            f.attrs["meta"] = mutate_json(data, meta)
        elif kind == "attr":
            name = data.draw(st.sampled_from(["format", "version", "meta"]))
            f.attrs[name] = data.draw(st.sampled_from([1, -1, 2 ** 40, "x", b"\xff", np.arange(3), 1.5, "{}"]))
        elif kind == "dtype":
            old = f[key][()]
            del f[key]
            f[key] = old.astype(data.draw(st.sampled_from(DTYPES)))
        elif kind == "shape":
            old = f[key][()]
            del f[key]
            shape = data.draw(st.sampled_from([(), (0,), (1,), (len(old) + 1,), (len(old), 2), (len(old), 1, 1, 1)]))
            f[key] = np.zeros(shape)
        elif kind == "delete":
            del f[key]
        elif kind == "group":
            del f[key]
            f.create_group(key)
        elif kind == "soft":
            del f[key]
            f[key] = h5py.SoftLink("/" + data.draw(st.sampled_from(keys)))
        elif kind == "external":
            del f[key]
            f[key] = h5py.ExternalLink("/etc/hostname", "/x")
        elif kind == "values":
            arr = f[key][()]
            if arr.size:
                arr = arr.copy()
                arr.flat[data.draw(st.integers(0, arr.size - 1))] = data.draw(st.sampled_from(
                    [-1, 100, 127] if arr.dtype.kind in "iu" else [np.nan, np.inf, -1.0, 1e6]))
                f[key][...] = arr
        return kind


def exercise(res):
    """Every accessor ``mbs info`` and the GUI use."""
    format_summary(res)
    res.summary()
    res.energy, res.constraint_violation, res.partition_method, res.step_sizes, res.conditioning
    res.coordinates, res.velocities, res.accelerations, res.multipliers
    for b in res.body_names:
        res.body_position(b), res.body_rotation(b), res.body_velocity(b), res.body_acceleration(b)
    for j in res.joint_names:
        res.joint_reaction(j), res.joint_reaction(j, "joint")
    for d in res.driver_names:
        res.driver_force(d)


@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_every_mutated_results_file_loads_or_is_refused(data):
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "r.h5")
        with open(path, "wb") as fh:
            fh.write(good_results())
        if mutate_results(data, path) == "truncate":
            size = os.path.getsize(path)
            with open(path, "r+b") as fh:
                fh.truncate(data.draw(st.integers(0, size - 1)))
        lazy = data.draw(st.booleans())

        def case():
            try:
                res = solver.load_results(path, lazy=lazy)
            except solver.ModelError as exc:
                assert exc.problems and all(isinstance(p, str) for p in exc.problems)
                return
            try:
                exercise(res)
            finally:
                if res.path is not None:
                    res._source.close()
        bounded(case)


@pytest.mark.parametrize("name", ["\x1b[2J", "a/b"])
def test_a_loaded_results_file_never_has_names_that_escape_a_folder(name, tmp_path):
    path = tmp_path / "r.h5"
    path.write_bytes(good_results())
    with h5py.File(path, "r+") as f:
        meta = json.loads(f.attrs["meta"])
        meta["joint_names"] = [name]
        f.attrs["meta"] = json.dumps(meta)
    with pytest.raises(solver.ModelError, match="meta.joint_names"):
        solver.load_results(path)
