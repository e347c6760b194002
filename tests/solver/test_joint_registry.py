"""The joint-kind registry (solver.JOINT_KINDS): every entry is complete and consistent with the
layers that read it, and an unknown kind is a ModelError naming the field."""
import pytest

import solver
from solver.constraints.joints import CONSTANTS, COORDINATES
from solver.formulations.mobilizers import MOBILIZERS, Mobilizer

FORMS = {"dot": 4, "half_square": 3, "screw": 1}
VECTORS = {"xi", "yi", "zi", "xj", "yj", "zj", "d", "ex", "ey", "ez"}


@pytest.mark.parametrize("name", solver.JOINT_TYPES)
def test_entry_is_complete(name):
    kind = solver.JOINT_KINDS[name]
    assert kind.name == name and kind.label and kind.glyph and kind.icon
    assert set(kind.fields) <= {f.name for f in solver.Joint.FIELDS}
    assert set(kind.coordinates) <= set(COORDINATES)
    assert kind.equations, "a joint kind constrains something"
    for spec in kind.equations:
        assert len(spec) == FORMS[spec[0]]
        for arg in spec[1:]:
            assert arg in VECTORS or arg in CONSTANTS or isinstance(arg, float)
    if kind.parametric is not None:              # drivers map the kind's coordinates onto the α
        assert set(kind.coordinates) <= set(kind.parametric.coordinates)


@pytest.mark.parametrize("name", [n for n in solver.JOINT_TYPES if n in MOBILIZERS])
def test_mobilizer_moves_as_many_ways_as_the_equations_leave(name):
    """6 − (number of equations) = mobilizer coordinates (− 1 for Euler parameters' normalization)."""
    mob = Mobilizer(name)
    kind = solver.JOINT_KINDS[name]
    assert 6 - len(kind.equations) == mob.n - (mob.euler is not None)


def test_free_mobilizer_is_no_model_kind():
    assert set(MOBILIZERS) - set(solver.JOINT_KINDS) == {"free"}


def test_unknown_kind_is_a_model_error_naming_the_field():
    m = solver.Model()
    m.add_body("b", mass=1.0, inertia=(1, 1, 1))
    with pytest.raises(solver.ModelError) as e:
        m.add_joint("j", "hinge", "ground", "b")
    assert any(p.field == "type" for p in e.value.details)
    assert "hinge" in str(e.value)


def test_what_forms_read():
    """The probe of solver.constraints.forms: the constants a form reads, whether it holds the joint
    angle and with what coefficient (the generated kernels unwrap θ with it)."""
    from solver.constraints.forms import angle_coefficient, constants_of, uses_angle
    constants = {"pitch": 0.25, "length": 2.0, 0.0: 0.0}.__getitem__
    assert constants_of(("screw",)) == ("pitch",) and constants_of(("half_square", "d", "length")) == ("length",)
    assert constants_of(("dot", "xi", "d", 0.0)) == ()
    assert [uses_angle(s) for s in (("screw",), ("angle",), ("dot", "zi", "d", 0.0))] == [True, True, False]
    assert angle_coefficient(("screw",), constants) == -0.25 and angle_coefficient(("angle",), constants) == 1.0
    with pytest.raises(ValueError, match="unknown equation form 'cone'"):
        uses_angle(("cone",))
