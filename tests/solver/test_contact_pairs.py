"""``Results.contact_pairs`` (solver.contact.group.pair_table): a contact group's touching pairs at
each output point, what the GUI draws as arrows.  Three spheres in a row on a floor, the outer two
rolling into the middle one: each row is its pair's ``contact_force(group, pair=…)`` and
``contact_point`` (a separate evaluation of the two members alone), the point of two equal
spheres is the middle of their centres (closed form), the rows summed per member are
``contact_force(group)``, a contact element's rows are its force and point, and a results file read
back lazily gives the same rows."""
import numpy as np

import solver

R = 0.05
LAW = dict(stiffness=1e6, damping=50.0, exponent=1.5, friction=(0.3, 0.3))
NAMES = ("a", "b", "c")


def row_of_spheres():
    m = solver.Model(name="row", gravity=(0, -9.81, 0))
    for name, x, v in zip(NAMES, (-0.12, 0.0, 0.12), (0.6, 0.0, -0.6)):
        m.add_body(name, mass=0.5, inertia=(5e-4,) * 3, position=(x, R, 0.0), velocity=(v, 0.0, 0.0),
                   angular_velocity=(0.0, 0.0, -v / R), geometry={"shape": "sphere", "radius": R})
        m.add_contact(f"floor_{name}", "ground", name, **LAW,
                      geometry_i={"shape": "plane", "point": (0, 0, 0), "normal": (0, 1, 0)})
    m.add_contact_group("balls", list(NAMES), **LAW)
    return m


def test_a_groups_rows_are_its_pairs_forces_and_points(tmp_path):
    res = solver.simulate(row_of_spheres(), t_end=0.06, output_step=2e-3)
    assert res.status == "ok"
    rows = res.contact_pairs("balls")
    assert rows.bodies == NAMES and np.all(rows.a < rows.b) and np.all(np.diff(rows.index) >= 0)
    met = {(int(a), int(b)) for a, b, f in zip(rows.a, rows.b, rows.force) if np.any(f)}
    assert met == {(0, 1), (1, 2)}                                  # the outer balls hit the middle one
    scale = np.max(np.abs(rows.force))
    for a, b in met:
        mine = (rows.a == a) & (rows.b == b)
        pair = (NAMES[a], NAMES[b])
        force, point = res.contact_force("balls", pair=pair), res.contact_point("balls", pair=pair)
        expected = np.zeros_like(force)
        expected[rows.index[mine]] = rows.force[mine]
        assert np.max(np.abs(expected - force)) <= 1e-12 * scale
        assert np.allclose(rows.point[mine], point[rows.index[mine]], rtol=0, atol=1e-12, equal_nan=True)
        middle = (res.body_position(NAMES[a]) + res.body_position(NAMES[b]))[rows.index[mine]] / 2
        touching = np.isfinite(rows.point[mine]).all(axis=1)
        assert np.allclose(rows.point[mine][touching], middle[touching], rtol=0, atol=1e-12)
    total = np.zeros((len(res.t), 3, 3))
    np.add.at(total, (rows.index, rows.b), rows.force)
    np.add.at(total, (rows.index, rows.a), -rows.force)
    assert np.max(np.abs(total - res.contact_force("balls"))) <= 1e-12 * scale
    assert np.allclose(np.bincount(rows.index, rows.power, len(res.t)), res.contact_dissipation("balls"),
                       rtol=0, atol=1e-12 * np.max(np.abs(rows.power)))
    floor = res.contact_pairs("floor_a")                            # a contact element: its one pair
    assert floor.bodies == ("ground", "a") and set(floor.a) <= {0} and set(floor.b) <= {1}
    assert np.array_equal(floor.force, res.contact_force("floor_a")[floor.index])
    res.save(tmp_path / "row.h5")
    again = solver.load_results(tmp_path / "row.h5", lazy=True).contact_pairs("balls")
    assert all(np.array_equal(x, y, equal_nan=True) for x, y in zip(again[:-1], rows[:-1])) and again.bodies == NAMES
