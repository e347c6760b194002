"""Display units of the GUI: the project's unit system (``settings.display_units``: SI, mm-kg-s,
mm-t-s; ``settings.display_angles``: rad or deg) and values typed with a unit (``50 mm``, ``30 deg``,
``2 in``), converted with pint to the SI unit a field declares (``solver.Field.unit``).

The model and its files stay SI; only what the property editor shows and reads is in display units.
A unit string of a field (``"N·m·s/rad"``, ``"kg/m³"``) is turned into a display unit by replacing
its base-unit words: m → mm, kg → t, Pa → MPa, rad → deg (as the unit system says), so a unit
system is a consistent set of base units as in Adams' and RecurDyn's unit settings.
"""
from __future__ import annotations

import functools
import re

import pint

UREG = pint.UnitRegistry()
UREG.define("rev = revolution")

SYSTEMS = {"SI": {}, "mm-kg-s": {"m": "mm", "Pa": "MPa"}, "mm-t-s": {"m": "mm", "kg": "t", "Pa": "MPa"}}
ANGLES = {"rad": {}, "deg": {"rad": "deg"}}
_WORD = re.compile(r"[A-Za-z]+")
# What a typed value may be: one decimal number and a product/quotient of unit words with small
# integer powers ("2 in", "30 deg/s", "5 kN*m", "1e3 kg*m**2").  pint's own parser also evaluates
# arithmetic ("9**9**9 m" would run for ever), so only this form is handed to it.
_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_UNIT_WORD = r"[A-Za-zµΩ°_]+(?:\s*(?:\*\*|\^)\s*-?\d{1,2})?"
_QUANTITY = re.compile(rf"\s*({_NUMBER})\s*({_UNIT_WORD}(?:\s*[*/]?\s*{_UNIT_WORD})*)\s*")
_SUPERSCRIPTS = {"²": "**2", "³": "**3", "⁴": "**4", "·": "*", "√": "sqrt"}


class UnitProblem(ValueError):
    """A typed value whose unit is unknown or does not fit the field (the message says which)."""


def typed_quantity(text: str):
    """A pint Quantity for "number unit" text; None when the text is not of that form; raises
    pint.UndefinedUnitError for an unknown unit word."""
    match = _QUANTITY.fullmatch(pint_text(text))
    if match is None:
        return None
    return float(match.group(1)) * UREG.parse_units(match.group(2))


def pint_text(unit: str) -> str:
    """A field unit string as pint reads it ("kg·m²" → "kg*m**2"; "" and "1" → "")."""
    if unit in ("", "1"):
        return ""
    for char, text in _SUPERSCRIPTS.items():
        unit = unit.replace(char, text)
    return unit


@functools.lru_cache(maxsize=None)
def _factor(display: str, si: str) -> float:
    """Multiplier from a value in ``display`` units to ``si`` units."""
    return float(UREG.Quantity(1.0, pint_text(display)).to(pint_text(si)).magnitude)


class UnitSystem:
    """How SI values are shown: ``system`` in SYSTEMS, ``angles`` in ANGLES."""

    def __init__(self, system: str = "SI", angles: str = "rad"):
        self.system, self.angles = system, angles
        self._words = {**SYSTEMS[system], **ANGLES[angles]}

    @classmethod
    def of(cls, settings) -> "UnitSystem":
        """The display units saved in a model's ``solver.Settings``."""
        return cls(settings.values["display_units"], settings.values["display_angles"])

    def display(self, si_unit: str) -> str:
        """The display unit of a field's SI unit ("N·m/rad" → "N·mm/deg" in mm-kg-s, degrees)."""
        return _WORD.sub(lambda m: self._words.get(m.group(0), m.group(0)), si_unit)

    def quantity(self, si_unit: str) -> "Quantity":
        """The field's Quantity; a unit that depends on the joint it applies to ("N or N·m": a
        translation or a rotation) is shown in SI, as declared (no single display unit fits)."""
        if " or " in si_unit:
            return Quantity(si_unit, si_unit)
        return Quantity(si_unit, self.display(si_unit))


SI = UnitSystem()


class Quantity:
    """One field (component)'s units: values are stored in ``si`` and shown in ``display``."""

    def __init__(self, si: str, display: str):
        self.si, self.display = si, display
        self.factor = _factor(display, si) if pint_text(si) and display != si else 1.0

    @property
    def suffix(self) -> str:
        return "" if self.display in ("", "1") else self.display

    def to_display(self, si_value: float) -> float:
        return si_value / self.factor

    def to_si(self, display_value: float) -> float:
        return display_value * self.factor

    def parse(self, text: str, what: str) -> float:
        """The value of ``text`` in display units: a plain number is in display units, a number with
        a unit is converted; raises :class:`UnitProblem` naming ``what`` (the field)."""
        text = text.strip()
        try:
            return float(text)
        except ValueError:
            pass
        try:
            q = typed_quantity(text)
        except pint.UndefinedUnitError as exc:
            raise UnitProblem(f"{what}: unknown unit {exc.unit_names[0]!r} in {text!r}" if exc.unit_names
                              else f"{what}: unknown unit in {text!r}") from None
        except Exception:  # pint's parser raises several kinds on malformed unit text
            q = None
        if q is None:
            raise UnitProblem(f"{what}: {text!r} is not a number with a unit (e.g. 50 mm)")
        try:
            return float(q.to(pint_text(self.display) or "dimensionless").magnitude)
        except pint.DimensionalityError:
            need = self.display or "a plain number"
            raise UnitProblem(f"{what}: {text!r} is {_dimension(q)}, which cannot be converted to {need} "
                              f"({_dimension(UREG.Quantity(1.0, pint_text(self.si)))})") from None


def _dimension(q) -> str:
    dims = str(q.dimensionality)
    return "dimensionless" if dims == "dimensionless" else f"a {dims.replace('[', '').replace(']', '')}"


def component_units(unit: str, n: int) -> list[str]:
    """The SI unit of each of ``n`` components: "N/m, N·m/rad" gives the first for the first half
    (forces) and the second for the rest (moments)."""
    parts = [p.strip() for p in unit.split(",")]
    if len(parts) == 1:
        return parts * n
    half = n // len(parts)
    return [parts[min(i // half, len(parts) - 1)] for i in range(n)]


def function_value(text: str, si_unit: str):
    """A function field's text as a number in SI when it is one number with a unit that fits the
    field ("30 deg" for a driver of a revolute joint, "2 kN" for a force); None otherwise (it is
    then an expression of t, a plain number or a table, read as before).  ``si_unit`` may offer
    alternatives ("m or rad")."""
    q = _function_quantity(text)
    unit = _fitting_unit(q, si_unit) if q is not None else None
    return None if unit is None else float(q.to(pint_text(unit)).magnitude)


def function_unit_problem(text: str, si_unit: str, what: str) -> str | None:
    """Why ``text``, one number with a unit, does not fit a function field ("50 mm" for a rotation);
    None when it fits or is not such a number (an expression)."""
    q = _function_quantity(text)
    if q is None or not si_unit or _fitting_unit(q, si_unit) is not None:
        return None
    return f"{what}: {text.strip()!r} is {_dimension(q)}, which cannot be converted to {si_unit}"


def _function_quantity(text):
    try:
        q = typed_quantity(text)
    except Exception:  # an unknown unit word, or malformed: an expression of t
        return None
    return None if q is None or q.unitless else q


def _fitting_unit(q, si_unit):
    for unit in si_unit.split(" or "):
        if pint_text(unit) and q.check(UREG.Quantity(1.0, pint_text(unit)).dimensionality):
            return unit
    return None
