"""The codegen cache runs code (issue 30, item 1): a library planted under an expected name never runs,
a folder or entry that others may write is refused with one notice, a truncated time library is
rebuilt, and the folder is 0700 whatever the umask."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

import solver
from solver import recent_compiles
from solver.codegen import cache
from solver.codegen.build import MODEL_LIBRARIES, compiler, compiler_path, one_unit

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
pytestmark = pytest.mark.skipif(not compiler_path(), reason="no C compiler")
GENUINE = "int answer(void) { return 42; }\n"


def planted(marker):
    """C of a library whose constructor writes ``marker`` (it must never run) and answers 666."""
    return ("#include <stdio.h>\n"
            f'__attribute__((constructor)) static void plant(void) {{ FILE *f = fopen("{marker}", "w"); '
            "if (f) fclose(f); }\n"
            "int answer(void) { return 666; }\n"
            "void mbs_time(double t, double *f, double *fd, double *fdd, double *u) { (void)t; (void)f; (void)fd;"
            " (void)fdd; (void)u; }\n")


def build_library(source, path):
    """Compile ``source`` into the shared library ``path`` (outside any cache)."""
    c_path = path.with_suffix(".c")
    c_path.write_text(source)
    subprocess.run([compiler(), "-shared", "-fPIC", "-o", str(path), str(c_path)], check=True)


def replace(path, data):
    """Replace ``path`` by a new file holding ``data`` (0600, as the cache writes its entries)."""
    tmp = path.with_name(path.name + ".new")
    tmp.write_bytes(data)
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)


def test_a_planted_library_is_never_loaded_and_the_entry_is_rebuilt(tmp_path):
    folder, marker = tmp_path / "cache", tmp_path / "planted-ran"
    key = "time-" + "a" * 32                          # any name the loader expects
    lib, info, hit = cache.load_or_build(folder, key, one_unit(GENUINE, key, ("-shared", "-fPIC")))
    assert not hit and lib.answer() == 42 and len(info["so_sha256"]) == 64
    build_library(planted(marker), tmp_path / "evil.so")
    replace(folder / f"{key}.so", (tmp_path / "evil.so").read_bytes())       # under the expected name
    assert cache.load_entry(folder, key) is None                              # its SHA-256 is not the recorded one
    (folder / f"{key}.json").unlink()
    assert cache.load_entry(folder, key) is None                              # nor without metadata
    lib, _, hit = cache.load_or_build(folder, key, one_unit(GENUINE, key, ("-shared", "-fPIC")))
    assert not hit and lib.answer() == 42
    assert not marker.exists()
    os.symlink(tmp_path / "evil.so", folder / "link.so")                     # a link is never followed
    (folder / "link.json").write_text((folder / f"{key}.json").read_text())
    os.chmod(folder / "link.json", 0o600)
    assert cache.load_entry(folder, "link") is None and not marker.exists()


def pendulum(tmp_path):
    """A pendulum with a time-dependent spring force (so a time library too), saved; its project path."""
    m = solver.Model(name="pendulum", gravity=(0, -9.81, 0))
    m.add_body("bob", mass=1.0, inertia=(1e-3, 1e-3, 1e-3), position=(1, 0, 0))
    m.add_joint("pivot", "revolute", "ground", "bob", origin=(0, 0, 0), axis=(0, 0, 1))
    m.add_spring_damper("S", "ground", "bob", point_i=(0, 1, 0), stiffness=10.0, force="0.5*sin(3*t)")
    path = tmp_path / "m.mbs.json"
    m.save(path)
    return path


def run_codegen(project, folder):
    env = dict(os.environ, MBS_CODEGEN_CACHE=str(folder), PYTHONPATH=ROOT)
    return subprocess.run([sys.executable, "-m", "solver", "run", str(project), "--codegen", "--t-end", "0.05"],
                          capture_output=True, text=True, env=env, timeout=300)


def summary(proc):
    """The lines of a run's summary that are its answer (model, status, method, time, steps)."""
    return proc.stdout.splitlines()[:5]


@pytest.mark.slow
def test_planted_and_truncated_libraries_in_a_run(tmp_path, runtime_cache):
    project, folder, marker = pendulum(tmp_path), runtime_cache, tmp_path / "planted-ran"
    first = run_codegen(project, folder)
    assert first.returncode == 0, first.stderr
    [model_so] = folder.glob(MODEL_LIBRARIES)
    [time_so] = folder.glob("time-*.so")
    [runtime_so] = folder.glob("runtime-*.so")
    genuine = {p: p.read_bytes() for p in (model_so, time_so, runtime_so)}
    build_library(planted(marker), tmp_path / "evil.so")
    for path in genuine:
        replace(path, (tmp_path / "evil.so").read_bytes())
    again = run_codegen(project, folder)
    assert again.returncode == 0 and "Traceback" not in again.stderr, again.stderr
    assert not marker.exists()
    assert summary(again) == summary(first) and "compiled" in again.stdout
    assert {p: p.read_bytes() for p in genuine} == genuine                    # rebuilt in place
    replace(time_so, genuine[time_so][:len(genuine[time_so]) // 3])           # truncated: used to be SIGBUS
    third = run_codegen(project, folder)
    assert third.returncode == 0 and "Traceback" not in third.stderr, third.stderr
    assert summary(third) == summary(first)
    assert time_so.read_bytes() == genuine[time_so]


def codegen_notices(res):
    return [e["message"] for e in res.events if e["kind"] == "codegen"]


def small_model():
    m = solver.Model(name="pendulum", gravity=(0, -9.81, 0))
    m.add_body("bob", mass=1.0, inertia=(1e-3, 1e-3, 1e-3), position=(1, 0, 0))
    m.add_joint("pivot", "revolute", "ground", "bob", origin=(0, 0, 0), axis=(0, 0, 1))
    return m


@pytest.mark.parametrize("what", ["folder", "entry"])
def test_a_folder_or_entry_others_may_write_is_refused_with_one_notice(what, runtime_cache, monkeypatch):
    folder = runtime_cache
    monkeypatch.setenv("MBS_CODEGEN_CACHE", str(folder))
    monkeypatch.delenv("MBS_CODEGEN", raising=False)        # the product's "auto"
    model = small_model()
    built = solver.simulate(model, t_end=0.05, codegen="auto")
    assert "generated" in codegen_notices(built)[0]
    [so] = folder.glob(MODEL_LIBRARIES)
    target = folder if what == "folder" else so
    os.chmod(target, 0o770 if what == "folder" else 0o620)
    recent_compiles.forget()                                 # (else the in-process compilation is reused)
    refused = solver.simulate(model, t_end=0.05, codegen="auto")
    [notice] = codegen_notices(refused)
    assert notice.startswith("codegen unavailable, generic path used: the codegen cache "), notice
    assert f"{target} is writable by group or others (mode {0o770 if what == 'folder' else 0o620:04o})" in notice
    assert abs(refused.body_position("bob")[-1] - built.body_position("bob")[-1]).max() < 1e-7
    recent_compiles.forget()
    with pytest.raises(solver.ModelError, match="settings.codegen: .*writable by group or others"):
        solver.simulate(model, t_end=0.05, codegen="on")


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
def test_a_folder_of_another_user_is_refused(tmp_path):
    folder = tmp_path / "cache"
    cache.make_folder(folder)
    os.chown(folder, 65534, 65534)
    with pytest.raises(cache.CodegenUnavailable, match=r"cache folder .* is owned by another user \(uid 65534\)"):
        cache.load_or_build(folder, "x", one_unit(GENUINE, "x", ("-shared", "-fPIC")))


def test_umask_000_still_gives_a_0700_folder_and_0600_entries(tmp_path):
    folder = tmp_path / "a" / "b" / "cache"
    old = os.umask(0)
    try:
        lib, _, _ = cache.load_or_build(folder, "k", one_unit(GENUINE, "k", ("-shared", "-fPIC")))
    finally:
        os.umask(old)
    assert lib.answer() == 42
    for path in (tmp_path / "a", tmp_path / "a" / "b", folder):
        assert oct(os.stat(path).st_mode & 0o777) == oct(0o700), path
    assert sorted(p.name for p in folder.iterdir()) == ["k.c", "k.json", "k.so"]
    for path in folder.iterdir():
        assert oct(os.stat(path).st_mode & 0o777) == oct(0o600), path
