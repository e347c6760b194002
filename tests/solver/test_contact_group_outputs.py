"""A contact group's named outputs (solver/outputs.py): ``forces.GROUP.contact_force.MEMBER.x|y|z``,
the total contact force on one member from the others, ``Results.contact_force(GROUP, member=…)``.

Three spheres in a row on a floor, the outer two rolling into the middle one (test_contact_pairs.py's
scene): each member's path is its column of ``contact_force(group)``, and independently the sum of
its pairs' forces (``contact_force(group, pair=…)``: each a separate evaluation of the two members
alone) with the sign of the side it is on; the three totals cancel (the group's forces are internal:
Newton's third law); a declared output and a results file read back lazily give the same values,
and its CSV export has them (``contact_<name>.csv``).
An FMU refuses a contact group and a contact element naming each; a bad group in a file names the
field (the mbs command's exit 2)."""
import csv
import json

import numpy as np
import pytest

import solver
from solver import cli
from solver.outputs import output, output_paths

from test_contact_pairs import NAMES, row_of_spheres


@pytest.fixture(scope="module")
def run():
    model = row_of_spheres()
    res = solver.simulate(model, t_end=0.06, output_step=2e-3)
    assert res.status == "ok"
    return model, res


def test_a_group_offers_each_members_force_components():
    model = row_of_spheres()
    offered = {o.path: o for o in output_paths(model) if o.element == "balls"}
    assert list(offered) == [f"forces.balls.contact_force.{b}.{a}" for b in NAMES for a in "xyz"]
    assert {o.unit for o in offered.values()} == {"N"} and offered["forces.balls.contact_force.c.y"].member == "c"
    with pytest.raises(solver.ModelError, match=r"force element 'balls' offers contact_force.a.x, "
                                                r"contact_force.a.y, .*contact_force.c.z"):
        output(model, "forces.balls.contact_force.x")         # a group's path names its member
    with pytest.raises(solver.ModelError, match="force element 'balls' offers"):
        output(model, "forces.balls.contact_force.ghost.x")


def test_a_members_output_is_its_total_contact_force(run, tmp_path):
    model, res = run
    total = res.contact_force("balls")
    scale = np.max(np.abs(total))
    assert scale > 0
    # independent: each member's pairs evaluated alone, + on the later-listed body, − on the earlier
    pair = {p: res.contact_force("balls", pair=p) for p in (("a", "b"), ("a", "c"), ("b", "c"))}
    summed = {m: sum((1 if m == q else -1) * f for (p, q), f in pair.items() if m in (p, q)) for m in NAMES}
    for k, member in enumerate(NAMES):
        assert np.array_equal(res.contact_force("balls", member=member), total[:, k])
        assert np.max(np.abs(summed[member] - total[:, k])) <= 1e-12 * scale
        for i, axis in enumerate("xyz"):
            path = f"forces.balls.contact_force.{member}.{axis}"
            assert np.array_equal(output(model, path).evaluate(res, model), total[:, k, i])
    assert np.max(np.abs(total.sum(axis=1))) <= 1e-12 * scale        # internal forces cancel
    model.add_output("push_on_b", "forces.balls.contact_force.b.x")
    unit, values = solver.declared_outputs(model, res)["push_on_b"]
    assert unit == "N" and np.array_equal(values, total[:, 1, 0])
    res.save(tmp_path / "row.h5")
    again = solver.load_results(tmp_path / "row.h5", lazy=True)
    assert np.array_equal(output(model, "forces.balls.contact_force.b.x").evaluate(again, model), total[:, 1, 0])
    again.to_csv(tmp_path / "csv")                                   # exported like reactions: one file a contact
    header, values = _csv(tmp_path / "csv" / "contact_balls.csv")
    assert header == ["t [s]"] + [f"{b} F_{a} [N]" for b in NAMES for a in "xyz"]
    assert np.array_equal(values[:, 0], res.t) and np.array_equal(values[:, 1:], total.reshape(len(res.t), 9))
    header, values = _csv(tmp_path / "csv" / "contact_floor_b.csv")
    assert header == ["t [s]", "F_x [N]", "F_y [N]", "F_z [N]"]
    assert np.array_equal(values[:, 1:], res.contact_force("floor_b"))


def _csv(path):
    rows = list(csv.reader(path.open(encoding="utf-8")))
    return rows[0], np.array(rows[1:], dtype=float)


def test_member_is_checked(run):
    _, res = run
    with pytest.raises(solver.ModelError, match=r"^member: 'ghost' is not a body of contact group 'balls' "
                                                r"\(bodies: a, b, c\)"):
        res.contact_force("balls", member="ghost")
    with pytest.raises(solver.ModelError, match="^member: contact 'floor_a' is a contact element"):
        res.contact_force("floor_a", member="a")
    with pytest.raises(solver.ModelError, match="^member: give pair"):
        res.contact_force("balls", pair=("a", "b"), member="b")


def test_an_fmu_refuses_contact_naming_each_element(tmp_path):
    pytest.importorskip("fmpy")                      # the FMU tests' dependency: export needs a C compiler too
    from solver.fmu import export_fmu
    model = row_of_spheres()
    with pytest.raises(solver.ModelError) as exc:
        export_fmu(model, tmp_path / "row.fmu")
    assert exc.value.problems == [*(f"forces.floor_{b}: a contact is not generated as C, so it cannot be in an FMU"
                                    for b in NAMES),
                                  "forces.balls: a contact group is not generated as C, so it cannot be in an FMU"]
    assert not (tmp_path / "row.fmu").exists()
    model.save(tmp_path / "row.mbs.json")
    assert cli.main(["export-fmu", str(tmp_path / "row.mbs.json"), "-o", str(tmp_path / "row.fmu"), "--quiet"]) == 2


@pytest.mark.parametrize("edit, message", [
    (lambda group, bodies: group.update(stiffness=0), "stiffness: must be > 0, got 0"),
    (lambda group, bodies: bodies[1].update(geometry={"shape": "none"}), "bodies: [1] body 'b' has no finite geometry"),
    (lambda group, bodies: group.update(bodies=["a", "ghost"]), "bodies: [1] no body named 'ghost'"),
    (lambda group, bodies: group.update(bodies=["a"]), "bodies: must name at least 2 bodies, got 1"),
])
def test_a_bad_group_in_a_file_names_its_field(tmp_path, edit, message, capsys):
    path = tmp_path / "row.mbs.json"
    row_of_spheres().save(path)
    data = json.loads(path.read_text())
    forces = data["model"]["forces"] = [f for f in data["model"]["forces"] if f["name"] == "balls"]   # no floors
    k = 0
    edit(forces[k], data["model"]["bodies"])
    path.write_text(json.dumps(data))
    with pytest.raises(solver.ModelError) as exc:
        solver.load_model(path)
    assert f"model.forces[{k}].{message}" in exc.value.problems[0]
    assert cli.main(["validate", str(path)]) == 2
    assert f"model.forces[{k}].{message}" in capsys.readouterr().err
