"""In-process reuse of compiled models (solver.recent_compiles): an unchanged model compiled again
returns the same compiled system with the new run options; any edit, a structural setting, a
rewritten modes file or a library deleted from the codegen cache compiles anew."""
import os

import numpy as np
import pytest

import solver
from solver import recent_compiles
from solver.flexible.modes_file import export_modes
from solver.formulations.cartesian import CartesianSystem
from test_flexible_modes_file import pendulum_with_spring


def pendulum(length=1.0):
    m = solver.Model(name="pendulum", gravity=(0.0, -9.81, 0.0))
    m.add_body("rod", mass=1.0, inertia=(1e-4, length ** 2 / 12, length ** 2 / 12), position=(length / 2, 0, 0))
    m.add_joint("pin", "revolute", "ground", "rod", origin=(0, 0, 0), axis=(0, 0, 1))
    m.settings.set("t_end", 0.5)
    return m


@pytest.fixture(autouse=True)
def empty():
    recent_compiles.forget()
    yield
    recent_compiles.forget()


def test_an_unchanged_model_reuses_its_compilation_with_the_new_run_options():
    model = pendulum()
    first = solver.compile_model(model)
    again = solver.compile_model(pendulum(), t_end=0.2, rtol=1e-9)        # an equal model, other run options
    assert again.system is first.system and again.notices == first.notices
    assert again.settings.t_end == 0.2 and again.settings.rtol == 1e-9 and first.settings.t_end == 0.5
    a, b = solver.simulate(model), solver.simulate(model)                 # the second run reuses the first's system
    assert np.array_equal(a.coordinates, b.coordinates)
    # the pendulum's period for a small swing from horizontal is not the point; its motion is: θ(0.5) by
    # the energy integral of a uniform rod released horizontally, θ̇² = 3 g sin θ / L
    theta = np.arctan2(-a.body_position("rod")[:, 1], a.body_position("rod")[:, 0])
    omega = np.abs(a.body_angular_velocity("rod")[:, 2])
    assert np.allclose(omega ** 2, 3 * 9.81 * np.sin(theta) / 1.0, rtol=1e-4, atol=1e-6)


def test_edits_and_structural_settings_compile_anew_and_returning_reuses():
    model = pendulum()
    first = solver.compile_model(model)
    model.bodies["rod"].set("mass", 2.0)
    edited = solver.compile_model(model)
    assert edited.system is not first.system
    assert solver.compile_model(model, formulation="cartesian").system is not edited.system
    model.bodies["rod"].set("mass", 1.0)
    assert solver.compile_model(model).system is first.system


def test_only_the_last_compilations_are_kept():
    compiled = [solver.compile_model(pendulum(1.0 + k / 10)) for k in range(recent_compiles.CAPACITY + 1)]
    assert solver.compile_model(pendulum(1.0)).system is not compiled[0].system
    assert solver.compile_model(pendulum(1.0 + recent_compiles.CAPACITY / 10)).system is compiled[-1].system


def test_a_rewritten_modes_file_compiles_anew(tmp_path):
    path = tmp_path / "modes.npz"
    export_modes(path, CartesianSystem(pendulum_with_spring()).flex[0].body)
    model = pendulum_with_spring(modes_file=str(path))
    first = solver.compile_model(model)
    stiffer = pendulum_with_spring()
    stiffer.flexible_bodies["beam"].set("youngs", 4 * stiffer.flexible_bodies["beam"].youngs)
    export_modes(path, CartesianSystem(stiffer).flex[0].body)
    os.utime(path, ns=(os.stat(path).st_atime_ns, os.stat(path).st_mtime_ns + 10**9))    # a later write
    second = solver.compile_model(model)
    assert second.system is not first.system
    ratio = second.system.flex[0].body.omega / first.system.flex[0].body.omega    # √(4 E / E) = 2
    assert np.allclose(ratio, 2.0, rtol=1e-9)


@pytest.mark.usefixtures("module_codegen_cache")
def test_a_generated_library_deleted_from_the_cache_is_built_again(module_codegen_cache):
    model = pendulum()
    first = solver.compile_model(model, codegen="on")
    assert first.generated and solver.compile_model(model, codegen="on").system is first.system
    for path in module_codegen_cache.glob(f"{first.system.codegen_info['key']}.*"):
        path.unlink()
    second = solver.compile_model(model, codegen="on")
    assert second.system is not first.system and second.system.codegen_info["cache_hit"] is False
