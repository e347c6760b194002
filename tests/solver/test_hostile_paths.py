"""Received files never make the program read or write outside their folder, and their text never
drives the terminal (issue 30, items 4 and 6): STUDY.json model and results folder, mesh files,
escaped CLI output, a 5000-digit integer named by its field, no RuntimeWarning lines."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import solver
from solver.cli import main
from solver.io.confine import MAX_MESH_BYTES, checked_mesh
from solver.model.project_format import project_to_dict

from test_hostile_limits import beam, pendulum

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")


def write_study(folder, **over):
    pendulum().save(folder / "m.mbs.json")
    data = {"format": "mbs-studio-study", "version": 1, "model": "m.mbs.json",
            "parameters": [{"path": "bodies.bob.mass", "values": [1.0, 2.0]}],
            "responses": [{"kind": "peak_velocity", "target": "bob"}], "fixed": {"settings.t_end": 0.05}}
    data.update(over)
    path = folder / "STUDY.json"
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize("results_dir", ["ABSOLUTE", "../elsewhere", "runs/../../elsewhere", "link"])
def test_study_results_stay_in_the_study_folder(tmp_path, capsys, results_dir):
    folder, elsewhere = tmp_path / "study", tmp_path / "elsewhere"
    folder.mkdir()
    os.symlink(tmp_path, folder / "link")
    results_dir = str(elsewhere) if results_dir == "ABSOLUTE" else results_dir
    assert main(["study", str(write_study(folder, results_dir=results_dir)), "--serial", "--quiet"]) == 2
    assert "results_dir: must be a path inside the folder of the file" in capsys.readouterr().err
    assert not elsewhere.exists() and sorted(os.listdir(tmp_path)) == ["study"]
    # inside the folder: written there; --results-dir (the user's own option) may point anywhere
    assert main(["study", str(write_study(folder, results_dir="runs")), "--serial", "--quiet"]) == 0
    assert sorted(os.listdir(folder / "runs")) == ["variant-0000.h5", "variant-0001.h5"]
    assert main(["study", str(write_study(folder)), "--serial", "--quiet", "--results-dir", str(elsewhere)]) == 0
    assert len(os.listdir(elsewhere)) == 2


def test_a_study_model_outside_the_folder_is_refused(tmp_path, capsys):
    folder = tmp_path / "study"
    folder.mkdir()
    pendulum().save(tmp_path / "outside.mbs.json")
    for model in (str(tmp_path / "outside.mbs.json"), "../outside.mbs.json"):
        assert main(["study", str(write_study(folder, model=model)), "--serial", "--quiet"]) == 2
        assert "model: must be a path inside the folder of the file" in capsys.readouterr().err


@pytest.mark.parametrize("file", ["/etc/passwd.stl", "../x.stl", "C:\\meshes\\x.stl", "a/../../x.obj"])
def test_mesh_paths_must_stay_in_the_project_folder(tmp_path, capsys, file):
    data = project_to_dict(pendulum())
    data["model"]["bodies"][0]["geometry"] = {"shape": "mesh", "file": file}
    path = tmp_path / "m.mbs.json"
    path.write_text(json.dumps(data))
    assert main(["validate", str(path)]) == 2
    assert ("model.bodies[0].geometry: geometry: file must be a path inside the folder of the file"
            in capsys.readouterr().err)


def test_meshes_are_read_only_inside_the_folder_and_size_capped(tmp_path):
    (tmp_path / "part.stl").write_bytes(b"solid x\nendsolid x\n")
    assert checked_mesh(str(tmp_path), "part.stl") == os.path.join(str(tmp_path), "part.stl")
    os.symlink("/etc/hostname", tmp_path / "link.stl")
    with pytest.raises(solver.ModelError, match="geometry.file: .*a link leads outside it"):
        checked_mesh(str(tmp_path), "link.stl")
    with open(tmp_path / "huge.stl", "wb") as fh:             # sparse: no disk used
        fh.truncate(MAX_MESH_BYTES + 1)
    with pytest.raises(solver.ModelError, match="the mesh file is too large"):
        checked_mesh(str(tmp_path), "huge.stl")
    os.mkfifo(tmp_path / "fifo.stl")
    with pytest.raises(solver.ModelError, match="FIFO"):
        checked_mesh(str(tmp_path), "fifo.stl")


# ---- text from files on the terminal -----------------------------------------------------------------
def test_mbs_study_escapes_names_and_paths_from_the_file(tmp_path, capsys):
    folder = tmp_path / "study"
    folder.mkdir()
    model = beam("modes\x1b[2J\u202e.npz")                      # a modes file that is missing
    model.save(folder / "b.mbs.json")
    study = write_study(folder, model="b.mbs.json", parameters=[{"path": "settings.t_end", "values": [0.01]}],
                        responses=[{"kind": "first_frequency", "name": "f\x1b]0;owned\x07\x9b31m"}], fixed={})
    assert main(["study", str(study), "--serial", "--quiet"]) == 3
    out, err = capsys.readouterr()
    assert "f\\x1b]0;owned\\x07\\x9b31m" in out and "\x1b" not in out + err and "\x9b" not in out
    assert "modes\\x1b[2J\\u202e.npz" in err and "\u202e" not in err


def test_mbs_import_notes_are_escaped(tmp_path, capsys, monkeypatch):
    import solver.io.urdf as urdf
    result = urdf.UrdfImport(model=pendulum(), notes=["link '\u202eevil' has no inertia", "joint '\x9b2J'"])
    monkeypatch.setattr(urdf, "import_urdf", lambda *a, **k: result)
    (tmp_path / "r.urdf").write_text("<robot name='r'/>")
    assert main(["import", str(tmp_path / "r.urdf"), "-o", str(tmp_path / "r.mbs.json")]) == 0
    out = capsys.readouterr().out
    assert "note: link '\\u202eevil' has no inertia" in out and "note: joint '\\x9b2J'" in out
    assert "\u202e" not in out and "\x9b" not in out


def test_a_5000_digit_integer_is_named_by_its_field(tmp_path, capsys):
    data = project_to_dict(pendulum())
    data["model"]["bodies"][0]["mass"] = "HUGE"
    path = tmp_path / "m.mbs.json"
    path.write_text(json.dumps(data, indent=1).replace('"HUGE"', "1" + "0" * 5000))
    assert main(["validate", str(path)]) == 2
    assert capsys.readouterr().err.endswith(
        "model.bodies[0].mass: must be finite, got an integer too large for a float\n")


@pytest.mark.parametrize("where, message", [
    (("model", "flexible_bodies", 0, "elements"), "model.flexible_bodies[0].elements: must be <= 200, got an "
                                                  "integer too large to show"),
    (("model", "forces", 0, "force", 0), "model.forces[0].force: a constant time function must be finite, got an "
                                         "integer too large for a float"),
    (("version",), "version: the file is version an integer too large to show, newer than"),
    (("model", "forces", 0, "name"), "model.forces[0].name: must be a string, got an integer too large to show")])
def test_5000_digit_integers_anywhere_are_messages_not_internal_errors(tmp_path, capsys, where, message):
    """Found by bench/fuzz_files.py: a message formatting the integer raised ValueError (exit 3)."""
    model = beam()
    model.add_force("push", "beam", force=(1.0, 0.0, 0.0))
    data = project_to_dict(model)
    node = data
    for key in where[:-1]:
        node = node[key]
    node[where[-1]] = "HUGE"
    path = tmp_path / "m.mbs.json"
    path.write_text(json.dumps(data).replace('"HUGE"', "1" + "0" * 5000))
    assert main(["validate", str(path)]) == 2
    assert message in capsys.readouterr().err


def test_refusals_print_no_runtime_warnings(tmp_path):
    data = project_to_dict(pendulum())
    data["model"]["bodies"][0]["inertia"] = [1e308] * 6           # overflows in the eigenvalue check
    path = tmp_path / "m.mbs.json"
    path.write_text(json.dumps(data))
    for command in ("validate", "run"):
        done = subprocess.run([sys.executable, "-m", "solver", command, str(path)], cwd=ROOT, capture_output=True,
                              text=True, timeout=60)
        assert done.returncode == 2
        assert done.stderr.count("\n") == 1 and done.stderr.startswith("mbs: error:"), done.stderr
        assert "RuntimeWarning" not in done.stderr
