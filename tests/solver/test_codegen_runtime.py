"""The model-independent compiled code (reduced.c, dopri.c, segment.c) is one runtime library per
cache folder, keyed by its source, which every model's library shares; a run on cached kernels never
imports sympy."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import solver
from solver.codegen import build
from solver.codegen.build import MODEL_LIBRARIES, compiler_path

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_models"
pytestmark = [pytest.mark.slow, pytest.mark.skipif(not compiler_path(), reason="no C compiler")]


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("MBS_CODEGEN_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(build, "_RUNTIME", {})         # nothing loaded in this process yet
    return tmp_path / "cache"


@pytest.fixture
def warm_cache(runtime_cache, monkeypatch):
    """``cache`` already holding the runtime's entry (tests/solver/conftest.py): for tests about what
    happens after its first build."""
    monkeypatch.setenv("MBS_CODEGEN_CACHE", str(runtime_cache))
    monkeypatch.setattr(build, "_RUNTIME", {})
    return runtime_cache


def cache_path(lib):
    """The cache file a runtime library loaded in this process came from (it runs from a private copy)."""
    return next(key for key, loaded in build._RUNTIME.items() if loaded is lib).with_suffix(".so")


def damage(path, keep):
    """Replace ``path`` by its first ``keep`` bytes (a new file: a loaded library stays mapped)."""
    tmp = path.with_name(path.name + ".cut")
    tmp.write_bytes(path.read_bytes()[:keep])
    os.replace(tmp, path)


def test_two_models_share_one_runtime_library(cache):
    runs = {}
    for name, formulation in (("slider_crank", "cartesian"), ("rrc_arm_case2", "relative")):
        model = solver.load_model(str(SAMPLES / f"{name}.mbs.json"))
        compiled = solver.compile_model(model, formulation=formulation, codegen="on")
        kernels = compiled.system.kernels
        assert getattr(kernels.lib, "cg_reduced", None) is None            # not in the model's library
        assert kernels.runtime is build.runtime_library()
        runs[name] = solver.simulate(compiled, t_end=0.05), solver.simulate(model, t_end=0.05, codegen=False,
                                                                            formulation=formulation)
    assert len(list(cache.glob(MODEL_LIBRARIES))) == 2
    [runtime] = cache.glob("runtime-*.so")
    # (the process may hold runtime libraries of other cache folders, loaded by earlier tests)
    assert {cache_path(lib) for lib in build._RUNTIME.values() if cache_path(lib).parent == cache} == {runtime}
    for fast, generic in runs.values():                # the runtime called each model's own kernels
        for body in generic.body_names:
            scale = max(1.0, np.abs(generic.body_position(body)).max())
            assert np.abs(fast.body_position(body) - generic.body_position(body)).max() <= 1e-6 * scale


def test_the_runtime_library_is_rebuilt_when_its_source_changes(cache, tmp_path, monkeypatch):
    first = cache_path(build.runtime_library())
    edited = []
    for path in build.RUNTIME_C:
        copy = tmp_path / path.name
        copy.write_text(path.read_text() + ("\n/* edited */\n" if path == build.RUNTIME_C[-1] else ""))
        edited.append(copy)
    monkeypatch.setattr(build, "RUNTIME_C", tuple(edited))
    second = cache_path(build.runtime_library())
    assert second != first and second.parent == first.parent == cache
    assert second.with_suffix(".c").read_text().endswith("/* edited */\n\n")
    assert sorted(cache.glob("runtime-*.so")) == sorted([first, second])
    assert build.runtime_library().cg_reduced is not None


def test_a_truncated_runtime_library_is_rebuilt(warm_cache, monkeypatch):
    so = cache_path(build.runtime_library())
    whole = so.read_bytes()
    damage(so, len(whole) // 3)
    monkeypatch.setattr(build, "_RUNTIME", {})         # a new process
    assert cache_path(build.runtime_library()) == so and so.read_bytes() == whole


def test_a_run_on_cached_kernels_does_not_import_sympy(warm_cache):
    cache = warm_cache
    script = ("import sys, solver\n"
              "res = solver.simulate(solver.load_model(sys.argv[1]), t_end=0.02)\n"
              "print([e['message'] for e in res.events if e['kind'] == 'codegen'][0])\n"
              "print('sympy' in sys.modules)\n")
    env = dict(os.environ, MBS_CODEGEN_CACHE=str(cache), PYTHONPATH=str(ROOT))
    env.pop("MBS_CODEGEN", None)                      # the product's "auto"
    outputs = [subprocess.run([sys.executable, "-c", script, str(SAMPLES / "rrc_arm_case2.mbs.json")],
                              capture_output=True, text=True, env=env, timeout=300) for _ in range(2)]
    assert [p.returncode for p in outputs] == [0, 0], outputs[0].stderr + outputs[1].stderr
    (built, imported), (loaded, again) = (p.stdout.splitlines() for p in outputs)
    assert "generated" in built and imported == "True"
    assert "loaded from the cache" in loaded and again == "False"
