"""Contact between two meshes (solver/contact/geometry.py mesh_mesh: the convex hulls by coal's
GJK/EPA and contact patch): a cube resting flat on a slab gives the plane–box closed form's contact
points (the cube's 4 lower corners, the same penetration, midway between the surfaces), and a cube
read from an STL file resting on a slab read from another carries its weight (static force =
m g, the cube at rest at the closed-form penetration (m g/(4k))^(1/e) of each corner)."""
import numpy as np
import pytest

import solver
from solver.contact.geometry import Shape, pair_function

coal = pytest.importorskip("coal")
trimesh = pytest.importorskip("trimesh")
K, E, MASS, G = 1e6, 1.5, 1.0, 9.81
EPA = 1e-8          # m: what the penetration and points of coal's GJK/EPA may be off by (measured 1e-9)


@pytest.fixture
def meshes(tmp_path):
    trimesh.creation.box(extents=(0.1, 0.1, 0.1)).export(tmp_path / "cube.stl")
    trimesh.creation.box(extents=(1.0, 0.1, 1.0)).export(tmp_path / "slab.stl")
    return tmp_path


def test_a_cube_flat_on_a_slab_touches_at_the_plane_box_corners(meshes):
    cube = Shape.of({"shape": "mesh", "file": str(meshes / "cube.stl")})
    slab = Shape.of({"shape": "mesh", "file": str(meshes / "slab.stl"), "offset": (0.0, -0.05, 0.0)})
    box = Shape.of({"shape": "box", "size": (0.1, 0.1, 0.1)})
    plane = Shape.of({"shape": "plane", "point": (0.0, 0.0, 0.0), "normal": (0.0, 1.0, 0.0)})
    r, A = np.array([0.2, 0.05 - 3e-4, -0.1]), np.eye(3)
    f, swapped = pair_function("mesh", "mesh", "forces 'c'")
    found = f(slab.placed(np.zeros(3), np.eye(3)), cube.placed(r, A))
    expected = pair_function("plane", "box", "forces 'c'")[0](plane.placed(np.zeros(3), np.eye(3)), box.placed(r, A))
    assert not swapped and len(found) == len(expected) == 4
    key = lambda point: tuple(np.round(point[0], 9))          # noqa: E731 (the same corners, any order)
    for (P, n, d), (Pe, ne, de) in zip(sorted(found, key=key), sorted(expected, key=key)):
        # within coal's GJK/EPA tolerance (measured 1e-9 m)
        assert np.allclose(P, Pe, rtol=0, atol=EPA) and np.allclose(n, ne, atol=1e-9) and abs(d - de) < EPA


def test_a_mesh_cube_rests_on_a_mesh_slab_carrying_its_weight(meshes):
    sink = (MASS * G / (4 * K)) ** (1 / E)
    m = solver.Model(name="cube-on-slab", gravity=(0.0, -G, 0.0))
    m.base_dir = meshes
    m.add_body("cube", mass=MASS, inertia=(MASS * 0.01 / 6,) * 3, position=(0.0, 0.05 - sink, 0.0),
               geometry={"shape": "mesh", "file": "cube.stl"})
    m.add_contact("c", "ground", "cube", stiffness=K, exponent=E, damping=1e3, friction=(0.5, 0.4),
                  geometry_i={"shape": "mesh", "file": "slab.stl", "offset": (0.0, -0.05, 0.0)})
    res = solver.simulate(m, t_end=0.1, output_step=0.01)
    F = res.contact_force("c")
    # k δ^e at a penetration off by EPA: the force off by e·EPA/δ (1.1e-4; measured 1.2e-5 at the start,
    # 8e-9 at the end)
    assert np.max(np.abs(F[:, 1] / (MASS * G) - 1.0)) < E * EPA / sink
    assert np.max(np.abs(F[:, [0, 2]])) < 1e-9 * MASS * G
    assert np.max(np.abs(res.body_position("cube") - res.body_position("cube")[0])) < EPA
