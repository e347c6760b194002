"""Small hostile files that used to exhaust the machine, and special files and paths (issue 20,
items 4 and 5): limits are checked before anything is allocated, only regular files are read, and
a modes file's relative path starts at the project file's folder."""
from __future__ import annotations

import json
import os
import time
import zipfile

import numpy as np
import pytest

import solver
from solver.cli import main
from solver.flexible.modes_file import export_modes
from solver.formulations.cartesian import CartesianSystem
from solver.io.project import project_from_dict
from solver.model.project_format import project_to_dict
from solver.study import study_from_dict

SOFT = {"density": 2000.0, "youngs": 5e8, "poisson": 0.3}


def pendulum():
    m = solver.Model(name="pendulum", gravity=(0, -9.81, 0))
    m.add_body("bob", mass=1.0, inertia=(1e-3, 1e-3, 1e-3), position=(1, 0, 0))
    m.add_joint("pivot", "revolute", "ground", "bob", origin=(0, 0, 0), axis=(0, 0, 1))
    return m


def beam(modes_file=""):
    m = solver.Model(name="beam", gravity=(0.0, -9.81, 0.0))
    m.add_flexible_beam("beam", (0, 0, 0), (0.6, 0.1, 0), section={"height": 0.02, "width": 0.03},
                        material=SOFT, elements=4, modes=2, modes_file=modes_file)
    m.add_joint("pin", "revolute", "ground", "beam", origin=(0, 0, 0), axis=(0, 0, 1))
    m.settings.set("t_end", 0.01)
    return m


# ---- error lists ----------------------------------------------------------------------------------
def test_thousands_of_dangling_references_give_a_short_error_quickly():
    n = 4000
    data = project_to_dict(pendulum())
    data["model"]["bodies"] = [dict(data["model"]["bodies"][0], name=f"body{i:05d}") for i in range(n)]
    data["model"]["joints"] = [dict(data["model"]["joints"][0], name=f"j{i}", body_j=f"missing{i}")
                               for i in range(n)]
    start = time.process_time()
    with pytest.raises(solver.ModelError) as exc:
        project_from_dict(data)
    elapsed = time.process_time() - start
    problems = exc.value.problems
    assert len(problems) == 21 and problems[-1] == f"... and {n - 20} more problems"
    assert problems[0] == ("model.joints[0].body_j: no body named 'missing0' (bodies: ground, "
                           + ", ".join(f"body{i:05d}" for i in range(19)) + f" and {n + 1 - 20} more)")
    assert max(map(len, problems)) < 400 and elapsed < 3.0      # was 4000 × 4000 names


def test_cli_validate_lists_twenty_problems_and_the_count(tmp_path, capsys):
    data = project_to_dict(pendulum())
    data["model"]["bodies"] = [dict(data["model"]["bodies"][0], name=f"b{i}", mass=-1.0) for i in range(50)]
    path = tmp_path / "m.mbs.json"
    path.write_text(json.dumps(data))
    assert main(["validate", str(path)]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 21 and lines[-1].endswith("... and 31 more problems")   # 50 masses, 1 joint
    assert main(["run", str(path)]) == 2
    assert "(and 50 more problems;" in capsys.readouterr().err


# ---- sizes before allocation ----------------------------------------------------------------------
def study_dict(tmp_path, **over):
    project = tmp_path / "m.mbs.json"
    pendulum().save(project)
    data = {"format": "mbs-studio-study", "version": 1, "model": "m.mbs.json",
            "parameters": [{"path": "bodies.bob.mass", "values": [1.0, 2.0]}],
            "responses": [{"kind": "peak_velocity", "target": "bob"}]}
    data.update(over)
    return data


def test_a_study_range_is_counted_before_it_is_made(tmp_path):
    data = study_dict(tmp_path, parameters=[{"path": "bodies.bob.mass", "range": [1.0, 2.0, 2e8]}])
    start = time.process_time()
    with pytest.raises(solver.ModelError, match=r"parameters\[0\].range: .*integer num from 1 to 100000"):
        study_from_dict(data, str(tmp_path))
    assert time.process_time() - start < 1.0
    data = study_dict(tmp_path, parameters=[{"path": "bodies.bob.mass", "values": [1.0] * 100_001}])
    with pytest.raises(solver.ModelError, match=r"parameters\[0\].values: more than 100000 values"):
        study_from_dict(data, str(tmp_path))


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/null"])
def test_special_files_are_not_read_as_projects(tmp_path, device, capsys):
    with pytest.raises(solver.ModelError, match="character device, not a regular file"):
        solver.load_model(device)
    os.symlink(device, tmp_path / "device.mbs.json")          # a link inside the study's folder
    data = study_dict(tmp_path, model="device.mbs.json")
    with pytest.raises(solver.ModelError, match="model: must be a path inside the folder of the file"):
        study_from_dict(data, str(tmp_path))
    data = study_dict(tmp_path, model=device)
    with pytest.raises(solver.ModelError, match="model: must be a path inside the folder of the file, got the "
                                                "absolute path"):
        study_from_dict(data, str(tmp_path))
    study = tmp_path / "s.json"
    study.write_text(json.dumps(data))
    assert main(["study", str(study), "--serial", "--quiet"]) == 2
    assert "absolute path" in capsys.readouterr().err
    assert main(["study", device, "--serial", "--quiet"]) == 2


def test_a_fifo_project_or_study_does_not_hang(tmp_path, capsys):
    fifo = tmp_path / "m.mbs.json"
    os.mkfifo(fifo)
    start = time.perf_counter()
    assert main(["validate", str(fifo)]) == 2
    assert main(["study", str(fifo), "--serial"]) == 2
    assert "FIFO" in capsys.readouterr().err and time.perf_counter() - start < 30.0


# ---- modes files ----------------------------------------------------------------------------------
def write_npz_headers(path, arrays):
    """An .npz whose members declare ``arrays`` {name: (shape, dtype or value)}: a value is stored,
    a declared shape gets only its header and a few bytes (as a crafted file would)."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, spec in arrays.items():
            with zf.open(name + ".npy", "w") as fh:
                if isinstance(spec, np.ndarray):
                    np.lib.format.write_array(fh, spec)
                else:
                    np.lib.format.write_array_header_1_0(
                        fh, {"descr": "<f8", "fortran_order": False, "shape": spec})
                    fh.write(b"\0" * 64)


def test_a_modes_file_declaring_gigabytes_is_refused_from_its_headers(tmp_path):
    good = tmp_path / "good.npz"
    export_modes(good, CartesianSystem(beam()).flex[0].body)
    arrays = dict(np.load(good))
    n, k = 200_000, 150                          # modes: 1.4 GB as stored, 2.9 GB read and converted
    bomb = dict(arrays, nodes=(n, 3), modes=(n, 6, k), frequencies_hz=(k,), S_phi=(3, k), E1=(3, 3, k),
                E2=(3, 3, k, k), stress_shapes=(n, 4, k))
    path = tmp_path / "bomb.npz"
    write_npz_headers(path, bomb)
    assert os.path.getsize(path) < 100_000
    with pytest.raises(solver.ModelError, match=r"the arrays declare \d+ bytes \(as read and converted to float64\), more than"):
        CartesianSystem(beam(str(path)))
    wrong = dict(arrays, E2=(3, 3, 400_000, 400_000))               # 11 TB declared for one array
    write_npz_headers(path, wrong)
    with pytest.raises(solver.ModelError, match=r"'E2' must have shape \(3, 3, 2, 2\), got \(3, 3, 400000, 400000\)"):
        CartesianSystem(beam(str(path)))
    write_npz_headers(path, dict(arrays, version=np.array("1")))
    with pytest.raises(solver.ModelError, match="'version' missing or not a single integer"):
        CartesianSystem(beam(str(path)))


def test_a_fifo_modes_file_is_refused_by_mbs_run(tmp_path, capsys):
    fifo = tmp_path / "modes.npz"
    os.mkfifo(fifo)
    project = tmp_path / "m.mbs.json"
    beam("modes.npz").save(project)
    start = time.perf_counter()
    assert main(["run", str(project), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "modes_file: cannot read" in err and "FIFO" in err
    assert time.perf_counter() - start < 30.0


def test_modes_paths_start_at_the_project_folder(tmp_path, monkeypatch):
    folder = tmp_path / "project"
    folder.mkdir()
    export_modes(folder / "beam.npz", CartesianSystem(beam()).flex[0].body)
    beam("beam.npz").save(folder / "m.mbs.json")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "beam.npz").write_bytes(b"not the file")          # what the working directory holds
    monkeypatch.chdir(elsewhere)
    model = solver.load_model(folder / "m.mbs.json")
    assert model.to_dict()["flexible_bodies"][0]["modes_file"] == "beam.npz"   # the file is unchanged
    assert model.flexible_bodies["beam"].modes_file == str(folder / "beam.npz")
    a = solver.simulate(model)
    b = solver.simulate(model.copy())
    assert len(a) > 1 and np.array_equal(a.coordinates, b.coordinates)
    assert main(["run", str(folder / "m.mbs.json"), "--quiet"]) == 0
