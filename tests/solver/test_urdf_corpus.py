"""Real URDF files (pybullet_data and example-robot-data, installed by the ``test`` extra; nothing
downloaded): every robot file MuJoCo loads is imported, and its joint-space mass matrix and its
generalized forces (gravity, velocity terms, joint damping: revolute and prismatic) equal MuJoCo's
to 1e-12 relative at two random states (tools/urdf_corpus.py says how MuJoCo reads the files, how
coordinates are mapped and what the differences are relative to; tools/urdf_coverage.py writes the
table in docs/import.md).

The corpus test reads the models alone (no mesh file); a sample of robots is imported with its
visual meshes as ``mbs import`` does.
"""
from __future__ import annotations

import os
import re
import warnings

import numpy as np
import pytest
import trimesh

from solver import cli
from solver.io.project import load_project

pytest.importorskip("pybullet_data")
pytest.importorskip("mujoco")

from tools import urdf_corpus  # noqa: E402

TOLERANCE = 1e-12
# Refused for their visuals although MuJoCo loads the text without geometry (the reason each must
# be refused for): a 4-number mesh scale, which MuJoCo refuses too when it reads the visuals
# ("attribute 'scale' has too much data"), and so does urdfdom; a mesh path that holds only on
# pybullet's search path (pybullet_data/differential/diff_ring.stl named 'differential/…' from
# inside differential/), not relative to the URDF's folder.
VISUALS_REFUSED = {"racecar/racecar_differential.urdf": r"visual\[0\].geometry.mesh.scale: expected 3 or 1",
                   "differential/diff_ring.urdf": r"mesh 'differential/diff_ring.stl' not found"}


def outcomes():
    """Each robot file's outcome (the model alone, no mesh file read)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [urdf_corpus.check(corpus, path, states=2, visuals=False)
                for corpus in urdf_corpus.corpora() for path in urdf_corpus.files(corpus)]


def _name(o):
    return os.path.relpath(o.path, urdf_corpus.corpora()[o.corpus][0])


def test_every_robot_file_mujoco_loads_imports_and_its_dynamics_equal_mujocos():
    results = outcomes()
    assert len({o.corpus for o in results}) == 2 and len(results) > 150
    loaded = [o for o in results if o.mujoco_error is None]
    failed = [(_name(o), o.refused) for o in loaded
              if o.refused is not None and not re.search(VISUALS_REFUSED.get(_name(o), "^$"), o.refused)]
    assert not failed, failed
    imported = sum(o.refused is None for o in loaded)
    assert imported >= 0.95 * len(loaded)
    compared = [o for o in results if o.difference is not None]
    worst = max(compared, key=lambda o: o.difference)
    worst_Q = max(compared, key=lambda o: o.force_difference)
    print(f"{len(results)} files, MuJoCo loads {len(loaded)}, {imported} of them imported; {len(compared)} compared, "
          f"largest difference: mass matrix {worst.difference:.1e} ({_name(worst)}), generalized forces "
          f"{worst_Q.force_difference:.1e} ({_name(worst_Q)})")
    assert len(compared) > 60
    assert worst.difference <= TOLERANCE and worst_Q.force_difference <= TOLERANCE


# One robot per mesh format and corpus, imported as ``mbs import`` does (tools/urdf_coverage.py
# imports every file with its meshes; about a minute, too long for the suite).
SAMPLE = [("pybullet_data", "kuka_iiwa/model.urdf"),                   # STL
          ("pybullet_data", "quadruped/minitaur_single_motor.urdf"),   # OBJ
          ("example-robot-data", "iris_description/robots/iris.urdf"),  # DAE and STL, package://, a link named with '/'
          ("example-robot-data", "hyq_description/robots/hyq_no_sensors.urdf")]  # DAE


@pytest.mark.parametrize("corpus, name", SAMPLE)
def test_real_robots_import_with_their_meshes(tmp_path, capsys, corpus, name):
    root, package_dir = urdf_corpus.corpora()[corpus]
    path = os.path.join(root, name)
    out = tmp_path / "robot.mbs.json"
    argv = ["import", path, "-o", str(out), "--package-dir", package_dir or os.path.dirname(path)]
    assert cli.main(argv) == 0, capsys.readouterr().err
    model = load_project(out)
    drawn = [b for b in model.bodies.values() if b.geometry["shape"] == "mesh"]
    assert drawn
    for body in drawn:
        mesh = trimesh.load(tmp_path / body.geometry["file"])
        assert len(mesh.faces) > 0 and np.all(np.isfinite(mesh.vertices))
        assert np.max(np.abs(mesh.vertices)) < 2.0          # metres, in the body frame: a robot's part
