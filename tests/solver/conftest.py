"""Fixtures shared by the solver tests."""
import os
import shutil
from pathlib import Path

import pytest

SESSION_CACHE = os.environ["MBS_CODEGEN_CACHE"]      # the session's folder (tests/conftest.py), read at import


@pytest.fixture(scope="module")
def module_codegen_cache(tmp_path_factory):
    """A codegen cache folder of this test module's own (``MBS_CODEGEN_CACHE``): the module's builds
    and cache hits of models are its own, whatever other modules built before (the runtime library's
    entry is there from the start: :func:`seed_runtime`)."""
    path = seed_runtime(tmp_path_factory.mktemp("codegen-cache"))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MBS_CODEGEN_CACHE", str(path))
        yield path


@pytest.fixture
def runtime_cache(tmp_path):
    """A new codegen cache folder ``tmp_path / "cache"`` holding the runtime library's entry
    (:func:`seed_runtime`)."""
    return seed_runtime(tmp_path / "cache")


def seed_runtime(folder):
    """``folder`` made a codegen cache folder (0700, as the cache makes it) that already holds the
    runtime library's entry, copied from the session's cache (built there once if no test had built
    it): tests about a model's entries start from the warm runtime every run after ``make setup``
    has, instead of compiling the runtime again (≈ 1.4 CPU s a time).  Tests about the runtime's
    own entry start from an empty folder instead."""
    from solver.codegen import build, cache
    cache.make_folder(folder)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MBS_CODEGEN_CACHE", SESSION_CACHE)
        try:
            build.runtime_library()
        except build.CodegenUnavailable:            # (no compiler: an empty folder, as before)
            return folder
    for path in Path(SESSION_CACHE).glob("runtime-*"):
        if path.is_file() and not path.is_symlink():
            shutil.copy2(path, folder / path.name)          # (0600 kept)
    return folder
