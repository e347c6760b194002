"""Real URDF files (pybullet_data and example-robot-data, installed by the ``test`` extra; nothing
downloaded): every robot file MuJoCo loads is imported, and its joint-space mass matrix and its
generalized forces (gravity, velocity terms, joint damping: revolute and prismatic) equal MuJoCo's
to 1e-12 relative at two random states (tools/urdf_corpus.py says how MuJoCo reads the files, how
coordinates are mapped and what the differences are relative to; tools/urdf_coverage.py writes the
table in docs/import.md).

The lean test reads the model alone (no mesh file); the slow one imports every file with its
visual meshes as ``mbs import`` does.
"""
from __future__ import annotations

import functools
import os
import re
import warnings

import pytest

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


@functools.lru_cache(maxsize=None)
def outcomes(visuals):
    """Each robot file's outcome, checked once per session."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [urdf_corpus.check(corpus, path, states=2, visuals=visuals)
                for corpus in urdf_corpus.corpora() for path in urdf_corpus.files(corpus)]


def _name(o):
    return os.path.relpath(o.path, urdf_corpus.corpora()[o.corpus][0])


def _assert_coverage(results):
    loaded = [o for o in results if o.mujoco_error is None]
    failed = [(_name(o), o.refused) for o in loaded
              if o.refused is not None and not re.search(VISUALS_REFUSED.get(_name(o), "^$"), o.refused)]
    assert not failed, failed
    imported = sum(o.refused is None for o in loaded)
    assert imported >= 0.95 * len(loaded)
    return loaded, imported


def test_every_robot_file_mujoco_loads_imports_and_its_dynamics_equal_mujocos():
    results = outcomes(False)
    assert len({o.corpus for o in results}) == 2 and len(results) > 150
    loaded, imported = _assert_coverage(results)
    compared = [o for o in results if o.difference is not None]
    worst = max(compared, key=lambda o: o.difference)
    worst_Q = max(compared, key=lambda o: o.force_difference)
    print(f"{len(results)} files, MuJoCo loads {len(loaded)}, {imported} of them imported; {len(compared)} compared, "
          f"largest difference: mass matrix {worst.difference:.1e} ({_name(worst)}), generalized forces "
          f"{worst_Q.force_difference:.1e} ({_name(worst_Q)})")
    assert len(compared) > 60
    assert worst.difference <= TOLERANCE and worst_Q.force_difference <= TOLERANCE


@pytest.mark.slow
def test_every_robot_file_imports_with_its_visual_meshes():
    """As ``mbs import`` reads them: the visual meshes (STL, OBJ, DAE) too, within the bounds."""
    _assert_coverage(outcomes(True))
