"""Externally computed modes (.npz, solver.flexible.modes_file): the beam's own modes exported and
imported give the same run; bad files are refused naming the array."""
import numpy as np
import pytest

import solver
from solver.flexible.modes_file import export_modes
from solver.formulations.cartesian import CartesianSystem

SOFT = {"density": 2000.0, "youngs": 5e8, "poisson": 0.3}


def pendulum_with_spring(modes_file=""):
    """A soft beam pinned at one end, swinging under gravity with a spring to its tip, a rigid bob
    on a ball joint at its middle; 2 free–free modes with 2 % damping."""
    m = solver.Model(name="modes-file", gravity=(0.0, -9.81, 0.0))
    m.add_flexible_beam("beam", (0, 0, 0), (0.6, 0.1, 0), section={"height": 0.02, "width": 0.03}, material=SOFT,
                        elements=6, modes=2, damping_ratio=0.02, modes_file=modes_file, interface="free")
    m.add_body("bob", mass=0.3, inertia=(1e-3, 1e-3, 1e-3), position=(0.3, 0.05, 0.05))
    m.add_joint("pin", "revolute", "ground", "beam", origin=(0, 0, 0), axis=(0, 0, 1))
    m.add_joint("ball", "spherical", "beam", "bob", origin=(0.3, 0.05, 0.0))
    m.add_spring_damper("S", "ground", "beam", point_i=(0.8, 0.4, 0.0), point_j=(0.6, 0.1, 0.0),
                        stiffness=150.0, free_length=0.2)
    return m


def test_exported_and_imported_modes_give_the_same_run(tmp_path):
    path = str(tmp_path / "beam_modes.npz")
    own = pendulum_with_spring()
    export_modes(path, CartesianSystem(own).flex[0].body)
    imported = pendulum_with_spring(modes_file=path)
    s = CartesianSystem(imported)
    assert s.flex[0].k == CartesianSystem(own).flex[0].k
    kw = dict(t_end=0.1, output_step=0.01, rtol=1e-7, atol=1e-9, partitioning="qr")
    a, b = solver.simulate(own, **kw), solver.simulate(imported, **kw)
    assert np.max(np.abs(a.coordinates - b.coordinates)) < 1e-8 * np.max(np.abs(a.coordinates))
    assert np.max(np.abs(a.modal_coordinates("beam"))) > 1e-4
    sa, sb = a.node_stress("beam", 3), b.node_stress("beam", 3)
    assert np.max(np.abs(sa - sb)) < 1e-6 * np.max(np.abs(sa))
    # a project file names its modes file relative to its folder (an absolute path is refused there)
    imported.set_field("beam", "modes_file", "beam_modes.npz")
    imported.save(tmp_path / "m.mbs.json")
    assert solver.load_model(tmp_path / "m.mbs.json").flexible_bodies["beam"].modes_file == path
    saved = pendulum_with_spring(modes_file=path)
    saved.save(tmp_path / "absolute.mbs.json")
    with pytest.raises(solver.ModelError, match=r"flexible_bodies\.beam\.modes_file: must be a path inside the folder"):
        solver.simulate(solver.load_model(tmp_path / "absolute.mbs.json"), t_end=0.01)


def test_bad_modes_files_are_refused(tmp_path):
    path = tmp_path / "bad.npz"
    with pytest.raises(solver.ModelError, match="flexible_body 'beam'.modes_file: cannot read"):
        CartesianSystem(pendulum_with_spring(modes_file=str(path)))
    good = tmp_path / "good.npz"
    export_modes(good, CartesianSystem(pendulum_with_spring()).flex[0].body)
    data = dict(np.load(good))
    data["E2"] = data["E2"][..., :1]
    np.savez(path, **data)
    with pytest.raises(solver.ModelError, match=r"'E2' must have shape \(3, 3, 2, 2\)"):
        CartesianSystem(pendulum_with_spring(modes_file=str(path)))
    data = dict(np.load(good))
    data["format"] = "something-else"
    np.savez(path, **data)
    with pytest.raises(solver.ModelError, match="is not a mbs-studio-modes file"):
        CartesianSystem(pendulum_with_spring(modes_file=str(path)))
