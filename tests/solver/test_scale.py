"""Generated large models (issue 11, Scale): tools/scale_models.py builds an n-link chain and a
row of n four-bar loops; small members of both families move as their closed-form pendulum, and
the 200-link chain and the 50-loop mechanism (sample_models/scale/) validate and run from the CLI."""
from __future__ import annotations

import importlib.util
import json
import os
import sys

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import solver
from solver.cli import main
from test_project_files import assert_same_document

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
sys.path.insert(0, ROOT)
from tools.scale_models import chain, main as write_model, planar_loops  # noqa: E402
SCALE_DIR = os.path.join(ROOT, "sample_models", "scale")
G = 9.81


def make_samples():
    spec = importlib.util.spec_from_file_location("make_samples", os.path.join(ROOT, "tools", "make_samples.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def pendulum_angle(J, G_moment, theta0, t):
    """θ(t) of J θ̈ = −G sin θ from rest at θ0 (scipy, tight tolerances)."""
    sol = solve_ivp(lambda _, y: (y[1], -G_moment / J * np.sin(y[0])), (0.0, t[-1]), (theta0, 0.0),
                    t_eval=t, rtol=1e-11, atol=1e-12)
    return sol.y[0]


def tilt_from_down(A):
    """Angle (about +z) of body x from straight down, for rotations (N, 3, 3)."""
    return np.arctan2(A[:, 0, 0], -A[:, 1, 0])


@pytest.mark.parametrize("n, formulation", [(3, "relative"), (2, "cartesian")])
def test_planar_loops_swing_as_their_closed_form_pendulum(n, formulation):
    """Every rocker turns by the same θ(t) and the couplers only translate: J θ̈ = −G sin θ with
    J = (n+1)(m ℓ²/12 + m ℓ²/4) + n m ℓ², G = g m ℓ ((n+1)/2 + n) (tools/scale_models.py).
    Measured: |Δθ| ≤ 1.5e-9 rad (relative), 4.7e-10 (Cartesian); energy drift ≤ 1.1e-9."""
    m, length, tilt = 0.1, 0.3, 0.5
    res = solver.simulate(planar_loops(n), t_end=0.4, output_step=0.02, formulation=formulation,
                          rtol=1e-9, atol=1e-11)
    J = (n + 1) * (m * length**2 / 12 + m * length**2 / 4) + n * m * length**2
    theta = pendulum_angle(J, G * m * length * ((n + 1) / 2 + n), tilt, res.t)
    assert np.ptp(theta) > 0.3                               # it really swings
    for k in range(n + 1):
        assert np.max(np.abs(tilt_from_down(res.body_rotation(f"R{k}")) - theta)) < 1e-7, k
    for k in range(1, n + 1):
        assert np.max(np.abs(res.body_rotation(f"C{k}") - np.eye(3))) < 1e-9, k
    assert res.redundant_equations and res.summary()["energy_drift"] < 1e-7


def test_a_one_link_chain_is_the_rod_pendulum():
    """chain(1): J = m ℓ²/3, G = g m ℓ/2 about the pivot (measured |Δθ| 1.4e-10 rad); the 3-link
    chain conserves energy (drift 1.4e-11)."""
    m, length = 0.1, 0.1
    res = solver.simulate(chain(1), t_end=0.3, output_step=0.01, rtol=1e-10, atol=1e-12)
    theta = pendulum_angle(m * length**2 / 3, G * m * length / 2, 0.5, res.t)
    assert np.max(np.abs(tilt_from_down(res.body_rotation("L1")) - theta)) < 1e-8
    three = solver.simulate(chain(3), t_end=0.2, output_step=0.01, formulation="relative", rtol=1e-9, atol=1e-11)
    assert three.summary()["energy_drift"] < 1e-8


def test_scale_samples_are_what_the_builders_make(tmp_path):
    """Golden files: sample_models/scale/ equals tools/make_samples.py (SCALE_BUILDERS) output, and
    the generator's command line writes the same model."""
    mod = make_samples()
    for name, build in mod.SCALE_BUILDERS.items():
        path = tmp_path / f"{name}.mbs.json"
        build().save(path)
        with open(os.path.join(SCALE_DIR, f"{name}.mbs.json")) as saved:
            assert_same_document(json.loads(path.read_text()), json.load(saved), name)
    write_model(["loops", "4", str(tmp_path / "loops_4.mbs.json")])
    assert solver.load_model(tmp_path / "loops_4.mbs.json") == planar_loops(4)


@pytest.mark.parametrize("name, bodies, joints, dof, t_end", [("chain_200", 200, 200, 200, 0.001),
                                                              ("loops_50", 101, 151, 1, 0.01)])
@pytest.mark.slow
def test_scale_samples_validate_and_run_from_the_cli(name, bodies, joints, dof, t_end, tmp_path, capsys):
    """``mbs validate`` and a short ``mbs run --out`` (streamed to HDF5) end with exit code 0.
    Measured: 2.7 s (chain_200, 0.001 s) and 2.6 s (loops_50, 0.01 s), relative formulation; up
    to 9 s on 2 cores shared by other jobs."""
    path = os.path.join(SCALE_DIR, f"{name}.mbs.json")
    assert main(["validate", path]) == 0
    assert capsys.readouterr().out.startswith(f"ok: {bodies} bodies, {joints} joints")
    out = tmp_path / "run.h5"
    assert main(["run", path, "--t-end", str(t_end), "--output-step", str(t_end / 2), "--out", str(out),
                 "--quiet"]) == 0
    res = solver.load_results(out)
    assert res.status == "ok" and len(res) == 3 and len(res.body_names) == bodies
    assert any(e["message"].startswith(f"QR partition, {dof} independent coordinates") for e in res.events)
    assert res.summary()["max_constraint_violation"] < 1e-9
