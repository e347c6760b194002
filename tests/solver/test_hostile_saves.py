"""Hostile folders (issue 20, item 1): a project folder received from someone else may hold links
planted at the names a save writes (``.bak``, the project itself, the results file); saving never
writes through them, keeps the file's mode and cleans the temporary files of a killed save."""
from __future__ import annotations

import os
import stat
import subprocess
import sys
import time

import numpy as np
import pytest

import solver
from solver.cli import main
from solver.io.files import atomic_write


def pendulum(mass=1.0):
    m = solver.Model(name="pendulum", gravity=(0, -9.81, 0))
    m.add_body("bob", mass=mass, inertia=(1e-3, 1e-3, 1e-3), position=(1, 0, 0))
    m.add_joint("pivot", "revolute", "ground", "bob", origin=(0, 0, 0), axis=(0, 0, 1))
    m.settings.set("t_end", 0.05)
    return m


@pytest.fixture
def victim(tmp_path):
    """A file the user owns elsewhere (a shell start-up file, say)."""
    path = tmp_path / "elsewhere" / "bashrc"
    path.parent.mkdir()
    path.write_text("export SAFE=1\n")
    return path


def test_a_planted_bak_link_is_replaced_not_written_through(tmp_path, victim):
    project = tmp_path / "m.mbs.json"
    pendulum(1.0).save(project)
    before = project.read_bytes()
    os.symlink(victim, str(project) + ".bak")
    pendulum(2.0).save(project)
    assert victim.read_text() == "export SAFE=1\n"
    bak = tmp_path / "m.mbs.json.bak"
    assert not bak.is_symlink() and bak.read_bytes() == before
    assert solver.load_model(project).bodies["bob"].mass == 2.0


def test_a_project_that_is_a_link_or_a_folder_is_refused(tmp_path, victim):
    link = tmp_path / "m.mbs.json"
    os.symlink(victim, link)
    with pytest.raises(solver.ModelError, match="m.mbs.json: is a symbolic link; refusing"):
        pendulum().save(link)
    assert victim.read_text() == "export SAFE=1\n" and link.is_symlink()
    folder = tmp_path / "f.mbs.json"
    folder.mkdir()
    with pytest.raises(solver.ModelError, match="is a folder"):
        pendulum().save(folder)
    project = tmp_path / "p.mbs.json"
    pendulum().save(project)
    (tmp_path / "p.mbs.json.bak").mkdir()
    with pytest.raises(solver.ModelError, match=r"p.mbs.json.bak: is a folder"):
        pendulum(3.0).save(project)
    assert solver.load_model(project).bodies["bob"].mass == 1.0
    assert [p for p in os.listdir(tmp_path) if p.startswith(".tmp-")] == []


def test_saving_keeps_the_mode_and_a_new_file_gets_the_umask_default(tmp_path):
    project = tmp_path / "m.mbs.json"
    pendulum().save(project)
    umask = os.umask(0o022)
    os.umask(umask)
    assert stat.S_IMODE(os.stat(project).st_mode) == 0o666 & ~umask      # mkstemp gave 0600
    os.chmod(project, 0o640)
    pendulum(2.0).save(project)
    assert stat.S_IMODE(os.stat(project).st_mode) == 0o640
    assert stat.S_IMODE(os.stat(str(project) + ".bak").st_mode) == 0o640


def test_temporary_files_of_a_killed_save_are_removed(tmp_path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True, check=True)
    pid = int(dead.stdout)
    stale = tmp_path / f".tmp-{pid}-0123abcd-m.mbs.json"
    stale.write_text("half a project")
    mine = tmp_path / f".tmp-{os.getpid()}-0123abcd-m.mbs.json"     # a save of this process going on
    mine.write_text("in progress")
    other = tmp_path / f".tmp-{pid}-0123abcd-other.mbs.json"          # another file's: not ours to clean
    other.write_text("x")
    stale_bak = tmp_path / f".tmp-{pid}-0123abcd-m.mbs.json.bak"
    stale_bak.write_text("half a backup")
    recent = tmp_path / f".tmp-{pid}-4567abcd-m.mbs.json"              # maybe another machine's save
    recent.write_text("just now")
    hour_ago = time.time() - 3600
    for path in (stale, mine, other, stale_bak):
        os.utime(path, (hour_ago, hour_ago))
    pendulum().save(tmp_path / "m.mbs.json")
    assert not stale.exists() and not stale_bak.exists()
    assert mine.exists() and other.exists() and recent.exists()


def test_a_failed_write_leaves_no_temporary_file(tmp_path, monkeypatch):
    target = tmp_path / "x.bin"
    monkeypatch.setattr(os, "fsync", lambda fd: (_ for _ in ()).throw(OSError("disk full")))
    with pytest.raises(OSError, match="disk full"):
        atomic_write(target, b"data")
    assert os.listdir(tmp_path) == []


# ---- results files --------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def results():
    return solver.simulate(pendulum(), t_end=0.05)


def test_results_save_refuses_a_link_and_keeps_the_mode(tmp_path, victim, results):
    link = tmp_path / "m.h5"
    os.symlink(victim, link)
    with pytest.raises(solver.ModelError, match="is a symbolic link"):
        results.save(link)
    assert victim.read_text() == "export SAFE=1\n"
    path = tmp_path / "r.h5"
    results.save(path)
    os.chmod(path, 0o604)
    results.save(path)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o604
    lazy = solver.load_results(path, lazy=True)
    lazy.save(link.with_name("copy.h5"))                  # a lazy copy goes the same way
    with pytest.raises(solver.ModelError, match="is a symbolic link"):
        lazy.save(link)
    assert victim.read_text() == "export SAFE=1\n"


def test_streamed_results_refuse_a_link_at_the_target(tmp_path, victim):
    link = tmp_path / "out.h5"
    os.symlink(victim, link)
    with pytest.raises(solver.ModelError, match="^results_path: .*is a symbolic link"):
        solver.simulate(pendulum(), results_path=link)
    assert victim.read_text() == "export SAFE=1\n" and sorted(os.listdir(tmp_path)) == ["elsewhere", "out.h5"]


def test_streamed_results_keep_the_mode_of_the_file_they_replace(tmp_path):
    path = tmp_path / "out.h5"
    solver.simulate(pendulum(), results_path=path)
    os.chmod(path, 0o644)
    res = solver.simulate(pendulum(2.0), results_path=path)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o644
    assert np.all(np.isfinite(res.t)) and len(res) > 2


def test_cli_out_refuses_a_fifo_or_link_with_exit_2(tmp_path, victim, capsys):
    project = tmp_path / "m.mbs.json"
    pendulum().save(project)
    fifo = tmp_path / "out.h5"
    os.mkfifo(fifo)
    assert main(["run", str(project), "--out", str(fifo), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is a FIFO (named pipe); refusing to replace it" in err
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    link = tmp_path / "link.h5"
    os.symlink(victim, link)
    assert main(["run", str(project), "--out", str(link), "--quiet"]) == 2
    assert "is a symbolic link" in capsys.readouterr().err
    assert victim.read_text() == "export SAFE=1\n"


def test_csv_export_refuses_a_planted_link(tmp_path, victim, results, capsys):
    folder = tmp_path / "csv"
    folder.mkdir()
    os.symlink(victim, folder / "body_bob.csv")
    with pytest.raises(solver.ModelError, match="body_bob.csv: is a symbolic link"):
        results.to_csv(folder)
    assert victim.read_text() == "export SAFE=1\n"
    project = tmp_path / "m.mbs.json"
    pendulum().save(project)
    assert main(["run", str(project), "--csv", str(folder), "--quiet"]) == 2
    assert "is a symbolic link" in capsys.readouterr().err and victim.read_text() == "export SAFE=1\n"
    os.unlink(folder / "body_bob.csv")
    assert len(results.to_csv(folder)) == 3
    assert (folder / "body_bob.csv").read_text().startswith("t [s],r_x [m],r_y [m],r_z [m]")


def test_study_out_refuses_a_link_before_running(tmp_path, victim, capsys):
    import json
    pendulum().save(tmp_path / "m.mbs.json")
    study = tmp_path / "s.json"
    study.write_text(json.dumps({"format": "mbs-studio-study", "version": 1, "model": "m.mbs.json",
                                 "parameters": [{"path": "bodies.bob.mass", "values": [1.0, 2.0]}],
                                 "responses": [{"kind": "peak_velocity", "target": "bob"}]}))
    link = tmp_path / "table.csv"
    os.symlink(victim, link)
    assert main(["study", str(study), "--serial", "--quiet", "--out", str(link)]) == 2
    assert "is a symbolic link" in capsys.readouterr().err and victim.read_text() == "export SAFE=1\n"
    out = tmp_path / "ok.csv"
    assert main(["study", str(study), "--serial", "--quiet", "--out", str(out)]) == 0
    assert out.read_text().splitlines()[0].startswith("variant,status,bodies.bob.mass")
