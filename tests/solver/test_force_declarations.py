"""The GUI's declarations of the force kinds are data on their classes (solver/model/elements.py):
global points and glyph fields derived from the field declarations, the kinds that attach to
flexible bodies.  The linear actuator attaches to a flexible beam as the spring-damper does: with
k = c = 0 and the same tension it moves the beam identically."""
import numpy as np

import solver
from solver.model.elements import GLYPH_ROLES, PLACEMENT_WORDS
from solver.model.model import attaching_kinds

from test_flexible_loads import SECTION, SOFT


def test_points_and_glyph_fields_come_from_the_field_declarations():
    classes = solver.FORCE_CLASSES
    assert classes["spring_damper"].location_fields() == ("point_i", "point_j")
    assert classes["bushing"].location_fields() == ("origin",) and classes["tire"].location_fields() == ()
    assert solver.Joint.location_fields() == ("origin", "origin2") and solver.Body.location_fields() == ("position",)
    assert classes["force"].glyph_fields() == {"body": "body", "point": "point", "vector": "force"}
    assert classes["torque"].glyph_fields() == {"body": "body", "vector": "torque"}
    for cls in classes.values():
        assert cls.GLYPH is None or cls.GLYPH in GLYPH_ROLES
        words = {v.split(":")[0] for v in cls.NEW.values() if isinstance(v, str) and v.startswith("@")}
        assert words <= {w.split(":")[0] for w in PLACEMENT_WORDS}, cls.KIND
        assert set(cls.NEW) <= {f.name for f in cls.FIELDS}, cls.KIND


def _actuated_beam(kind):
    m = solver.Model(name="flex", gravity=(0.0, -9.81, 0.0))
    m.add_flexible_beam("beam", (0, 0, 0), (0.6, 0, 0), section=SECTION, material=SOFT, elements=4, modes=2,
                        interface="free")
    m.add_joint("pin", "revolute", "ground", "beam", origin=(0, 0, 0), axis=(0, 0, 1))
    m.add(solver.FORCE_CLASSES[kind](name="A", body_i="ground", body_j="beam", point_i=[0.8, 0.3, 0.0],
                                     point_j=[0.6, 0.01, 0.0], force="20*sin(5*t)"))
    return m


def test_linear_actuator_on_a_flexible_beam():
    assert "linear_actuator" in attaching_kinds() and "tire" not in attaching_kinds()
    runs = [solver.simulate(_actuated_beam(kind), t_end=0.2, output_step=0.01, codegen=False)
            for kind in ("linear_actuator", "spring_damper")]
    assert [r.status for r in runs] == ["ok", "ok"]
    assert np.max(np.abs(runs[0].modal_coordinates("beam"))) > 1e-4
    np.testing.assert_allclose(runs[0].coordinates, runs[1].coordinates, rtol=0, atol=1e-12)
