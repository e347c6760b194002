"""Hostile results files (issue 20, items 2 and 6): a received ``.h5`` is data only.  External
storage, external and soft links, datasets of another dtype or shape than the meta implies and
malformed meta each end in a ModelError naming the dataset or key (``mbs info``: exit 2, one
line); nothing outside the file is read."""
from __future__ import annotations

import json
import os
import shutil

import h5py
import numpy as np
import pytest

import solver
from solver.cli import main


@pytest.fixture(scope="module")
def good(tmp_path_factory):
    m = solver.Model(name="pendulum", gravity=(0, -9.81, 0))
    m.add_body("bob", mass=1.0, inertia=(1e-3, 1e-3, 1e-3), position=(1, 0, 0))
    m.add_joint("pivot", "revolute", "ground", "bob", origin=(0, 0, 0), axis=(0, 0, 1))
    path = tmp_path_factory.mktemp("good") / "good.h5"
    solver.simulate(m, t_end=0.05).save(path)
    return path


@pytest.fixture
def secret(tmp_path):
    """A local file a hostile results file tries to read (its bytes as float64)."""
    path = tmp_path / "secret.bin"
    path.write_bytes(np.arange(1000, dtype=float).tobytes())
    return path


def hostile(good, tmp_path, change):
    path = tmp_path / "hostile.h5"
    shutil.copy(good, path)
    with h5py.File(path, "r+") as f:
        change(f)
    return path


def replace(f, key, **kw):
    del f[key]
    f.create_dataset(key, **kw)


def refused(path, *fragments, capsys=None):
    for lazy in (False, True):
        with pytest.raises(solver.ModelError) as exc:
            solver.load_results(path, lazy=lazy)
        for text in fragments:
            assert text in str(exc.value)
    return str(exc.value)


def test_external_storage_is_refused(good, tmp_path, secret):
    n = h5py.File(good, "r")["t"].shape[0]

    def change(f):
        replace(f, "t", shape=(n,), dtype=float, external=[(str(secret), 0, 8 * n)])
    path = hostile(good, tmp_path, change)
    refused(path, "dataset 't'", "external storage")


def test_external_and_soft_links_are_refused(good, tmp_path, secret):
    other = tmp_path / "other.h5"
    with h5py.File(good, "r") as src, h5py.File(other, "w") as dst:
        dst["secret"] = src["t"][()] + 1.0

    def external(f):
        del f["t"]
        f["t"] = h5py.ExternalLink(str(other), "/secret")
    refused(hostile(good, tmp_path, external), "dataset 't'", "ExternalLink")

    def soft(f):
        del f["conditioning"]
        f["conditioning"] = h5py.SoftLink("/constraint_violation")
    refused(hostile(good, tmp_path, soft), "dataset 'conditioning'", "SoftLink")


@pytest.mark.parametrize("key, make, message", [
    ("q", lambda d: d.astype("S8"), "dataset 'q': must hold floating-point numbers"),
    ("r", lambda d: d[:, :0], "dataset 'r': must have shape"),
    ("A", lambda d: d.reshape(len(d), -1), "dataset 'A': must have shape"),
    ("energy_table", lambda d: d[:, :3], "dataset 'energy_table': must have shape"),
    ("method_code", lambda d: d.astype(float), "dataset 'method_code': must hold integers"),
    ("method_code", lambda d: d + 9, "dataset 'method_code': codes must be"),
    ("step_h", lambda d: d[:-1], "dataset 'step_h': must have shape"),
    ("t", lambda d: d[0], "dataset 't': must be an array of rows"),
])
def test_datasets_of_unexpected_dtype_or_shape(good, tmp_path, key, make, message):
    def change(f):
        data = make(f[key][()])
        replace(f, key, data=data)
    refused(hostile(good, tmp_path, change), message)


@pytest.mark.parametrize("meta, message", [
    ("[1, 2]", "meta: must be a JSON object"),
    ("{", "meta: invalid JSON"),
    ('{"body_names": 5, "joint_names": [], "driver_names": []}', "meta.body_names: must be a list of text"),
    ('{"body_names": ["bob"], "joint_names": ["pivot"]}', "meta.driver_names: is required"),
    ("[" * 5000 + "]" * 5000, "nested too deeply"),
    ('{"body_names": ["bob"], "body_names": ["x"], "joint_names": ["pivot"], "driver_names": []}',
     "duplicate key 'body_names'"),
    ('{"body_names": ["bob"], "joint_names": ["pivot"], "driver_names": [], "events": [{"time": "x"}]}',
     "meta.events"),
    ('{"body_names": ["bob"], "joint_names": ["pivot"], "driver_names": [], "steps": "many"}', "meta.steps"),
    ('{"body_names": ["bob"], "joint_names": ["pivot"], "driver_names": [], "flexible_bodies": [{"name": 1}]}',
     "meta.flexible_bodies"),
])
def test_malformed_meta(good, tmp_path, meta, message, capsys):
    path = hostile(good, tmp_path, lambda f: f.attrs.__setitem__("meta", meta))
    refused(path, message)
    assert main(["info", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("mbs: error:") and "Traceback" not in err


def test_other_attribute_types_are_refused(good, tmp_path, capsys):
    path = hostile(good, tmp_path, lambda f: f.attrs.__setitem__("meta", np.arange(3)))
    refused(path, "meta: must be JSON text")
    path = hostile(good, tmp_path, lambda f: f.attrs.__setitem__("version", "one"))
    refused(path, "version: must be an integer")
    assert main(["info", str(path)]) == 2


def test_a_group_instead_of_a_dataset_and_a_huge_declared_size(good, tmp_path):
    def group(f):
        del f["v"]
        f.create_group("v")
    refused(hostile(good, tmp_path, group), "dataset 'v': is a group")

    def huge(f):                                   # 10^9 rows declared, nothing stored: a tiny file
        n = 10 ** 9
        meta = json.loads(f.attrs["meta"])
        for key in list(f):
            shape = f[key].shape
            rows = n if key not in ("step_t", "step_h") else shape[0]
            replace(f, key, shape=(rows,) + shape[1:], dtype=f[key].dtype, maxshape=(None,) + shape[1:])
        f.attrs["meta"] = json.dumps(meta)
    path = hostile(good, tmp_path, huge)
    assert os.path.getsize(path) < 1_000_000
    with pytest.raises(solver.ModelError, match="bytes, more than the"):
        solver.load_results(path)


def test_a_fifo_is_refused_without_hanging(tmp_path):
    fifo = tmp_path / "r.h5"
    os.mkfifo(fifo)
    with pytest.raises(solver.ModelError, match="FIFO"):
        solver.load_results(fifo)


def test_a_good_file_still_loads_both_ways(good):
    eager, lazy = solver.load_results(good), solver.load_results(good, lazy=True)
    assert np.array_equal(eager.t, lazy.t) and len(eager) > 2
    assert eager.partition_method == lazy.partition_method
