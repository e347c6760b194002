"""Fixtures shared by the solver tests."""
import pytest


@pytest.fixture(scope="module")
def module_codegen_cache(tmp_path_factory):
    """A codegen cache folder of this test module's own (``MBS_CODEGEN_CACHE``): the module's builds
    and cache hits are its own, whatever other modules built before."""
    path = tmp_path_factory.mktemp("codegen-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MBS_CODEGEN_CACHE", str(path))
        yield path
