"""A damaged codegen cache entry (issue 20, item 6): a run killed while the cache was written, or a
full disk, leaves a truncated library or metadata file; the next codegen run of that model rebuilds
the entry instead of failing on it forever."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

import solver
from solver.codegen.build import MODEL_LIBRARIES, compiler_path

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_codegen(project, cache):
    env = dict(os.environ, MBS_CODEGEN_CACHE=str(cache), PYTHONPATH=ROOT)
    return subprocess.run([sys.executable, "-m", "solver", "run", str(project), "--codegen", "--t-end", "0.02"],
                          capture_output=True, text=True, env=env, timeout=300)


def damage(path, keep):
    """Replace ``path`` by its first ``keep`` bytes (a new file: a loaded library stays mapped)."""
    data = path.read_bytes()[:keep]
    tmp = path.with_name(path.name + ".cut")
    tmp.write_bytes(data)
    os.replace(tmp, path)


@pytest.mark.slow
@pytest.mark.skipif(not compiler_path(), reason="no C compiler")
def test_a_truncated_cache_entry_is_rebuilt(tmp_path, runtime_cache):
    m = solver.Model(name="pendulum", gravity=(0, -9.81, 0))
    m.add_body("bob", mass=1.0, inertia=(1e-3, 1e-3, 1e-3), position=(1, 0, 0))
    m.add_joint("pivot", "revolute", "ground", "bob", origin=(0, 0, 0), axis=(0, 0, 1))
    project = tmp_path / "m.mbs.json"
    m.save(project)
    cache = runtime_cache
    first = run_codegen(project, cache)
    assert first.returncode == 0, first.stderr
    [so] = cache.glob(MODEL_LIBRARIES)
    [meta] = cache.glob(MODEL_LIBRARIES.replace(".so", ".json"))
    whole = so.read_bytes()
    damage(so, len(whole) // 3)
    again = run_codegen(project, cache)
    assert again.returncode == 0 and "Traceback" not in again.stderr
    assert "compiled" in again.stdout.lower() or "generated" in again.stdout.lower(), again.stdout
    assert so.stat().st_size == len(whole)                           # rebuilt in place
    damage(meta, 10)                                                 # half a JSON object
    third = run_codegen(project, cache)
    assert third.returncode == 0 and "Traceback" not in third.stderr
    assert meta.read_text().startswith("{") and meta.read_text().rstrip().endswith("}")
    assert first.stdout.splitlines()[:2] == third.stdout.splitlines()[:2]     # same model, same run
