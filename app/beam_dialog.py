"""Model ▸ Add Flexible Beam…: the beam's ends, a section from its dimensions, a material and the
discretization, as the field values of a ``FlexibleBody`` (:class:`solver.FlexibleBody`).

Section properties (x along the beam, y and z the section axes; I_z governs bending in x–y):

* solid rectangle, height h along y and width b along z: computed by the solver's own
  :meth:`solver.Section.from_dict` — A = bh, I_z = bh³/12, I_y = hb³/12,
  J = β a c³ with a ≥ c the sides and β = 1/3 − 0.21 (c/a)(1 − (c/a)⁴/12) (Roark's approximation,
  Young & Budynas, Roark's Formulas for Stress and Strain, Table 10.7 case 4), c_y = h/2, c_z = b/2,
  c_t = c;
* solid circle, diameter d: A = πd²/4, I_y = I_z = πd⁴/64, J = πd⁴/32, c_y = c_z = c_t = d/2;
* tube, outer diameter D and wall t (inner d = D − 2t): A = π(D² − d²)/4, I_y = I_z = π(D⁴ − d⁴)/64,
  J = π(D⁴ − d⁴)/32, c_y = c_z = c_t = D/2.
"""
from __future__ import annotations

import math

import numpy as np
from PySide6.QtWidgets import (QComboBox, QDialog, QDialogButtonBox, QFormLayout, QHBoxLayout, QSpinBox,
                               QStackedWidget, QWidget)

import solver

from .field_editors import SciSpinBox
from .units import SI

SECTIONS = ("rectangle", "circle", "tube")
# name -> (density kg/m³, Young's modulus Pa, Poisson's ratio); "custom" keeps what is typed.
MATERIALS = {"steel": (7850.0, 210e9, 0.3), "aluminium": (2700.0, 70e9, 0.33)}
_SECTION_DIMENSIONS = {"rectangle": ("b", "h"), "circle": ("d",), "tube": ("D", "t")}


def section_properties(kind: str, **dims) -> dict:
    """{"area", "Iy", "Iz", "J", "cy", "cz", "ct"} of a ``kind`` section (see the module docstring)
    from its dimensions in m: rectangle b, h; circle d; tube D, t.  Raises solver.ModelError naming
    the dimension that is not positive (or a tube wall thicker than the radius)."""
    for key in _SECTION_DIMENSIONS[kind]:
        if not dims[key] > 0.0:
            raise solver.ModelError(f"section.{key}: must be > 0, got {dims[key]:g}")
    if kind == "rectangle":
        s = solver.Section.from_dict({"height": dims["h"], "width": dims["b"]}, "section")
        return {"area": s.area, "Iy": s.Iy, "Iz": s.Iz, "J": s.J, "cy": s.cy, "cz": s.cz, "ct": s.ct}
    outer = dims["d"] if kind == "circle" else dims["D"]
    inner = 0.0
    if kind == "tube":
        if dims["t"] > outer / 2.0:
            raise solver.ModelError(f"section.t: the wall must be at most D/2 = {outer / 2.0:g} m, got {dims['t']:g}")
        inner = outer - 2.0 * dims["t"]
    second = math.pi * (outer ** 4 - inner ** 4) / 64.0
    return {"area": math.pi * (outer ** 2 - inner ** 2) / 4.0, "Iy": second, "Iz": second, "J": 2.0 * second,
            "cy": outer / 2.0, "cz": outer / 2.0, "ct": outer / 2.0}


class BeamDialog(QDialog):
    """The form; :meth:`values` gives the FlexibleBody fields (start, end, z_axis, the section's
    properties, density, youngs, poisson, elements, modes)."""

    def __init__(self, suggestion: dict, parent=None):
        super().__init__(parent)
        self.setWindowTitle("Add flexible beam")
        form = QFormLayout(self)
        length = SI.quantity("m")
        self.points = {}
        for end in ("start", "end"):
            row = QHBoxLayout()
            spins = []
            for axis, value in zip("xyz", suggestion[end]):
                spin = SciSpinBox(self, length, f"{end}.{axis}")
                spin.set_si_value(float(value))
                row.addWidget(spin)
                spins.append(spin)
            self.points[end] = spins
            form.addRow(end, row)
        self.section = QComboBox(self)
        self.section.addItems(SECTIONS)
        self.dimensions, pages = {}, QStackedWidget(self)
        defaults = {"b": 0.02, "h": 0.02, "d": 0.02, "D": 0.03, "t": 0.003}
        for kind in SECTIONS:
            page = QWidget(pages)
            page_form = QFormLayout(page)
            for key in _SECTION_DIMENSIONS[kind]:
                spin = SciSpinBox(page, length, key)
                spin.set_si_value(defaults[key])
                page_form.addRow(key, spin)
                self.dimensions[(kind, key)] = spin
            pages.addWidget(page)
        self.section.currentIndexChanged.connect(pages.setCurrentIndex)
        form.addRow("section", self.section)
        form.addRow(pages)
        self.material = QComboBox(self)
        self.material.addItems([*MATERIALS, "custom"])
        self.material_fields = {}
        for key, unit in (("density", "kg/m³"), ("youngs", "Pa"), ("poisson", "")):
            spin = SciSpinBox(self, SI.quantity(unit), key)
            form.addRow(key, spin)
            self.material_fields[key] = spin
        self.material.currentTextChanged.connect(self._material_chosen)
        form.addRow("material", self.material)
        self._material_chosen(self.material.currentText())
        self.elements, self.modes = QSpinBox(self), QSpinBox(self)
        self.elements.setRange(1, 1000)
        self.elements.setValue(10)
        self.modes.setRange(0, 100)
        self.modes.setValue(2)
        form.addRow("elements", self.elements)
        form.addRow("modes", self.modes)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)

    def _material_chosen(self, name: str):
        """A named material fills (and locks) density, Young's modulus and Poisson's ratio; custom unlocks them."""
        for key, spin in self.material_fields.items():
            if name in MATERIALS:
                spin.set_si_value(MATERIALS[name][("density", "youngs", "poisson").index(key)])
            spin.setReadOnly(name in MATERIALS)

    def values(self) -> dict:
        """The FlexibleBody field values; raises solver.ModelError naming a bad section dimension."""
        kind = self.section.currentText()
        dims = {key: self.dimensions[(kind, key)].si_value() for key in _SECTION_DIMENSIONS[kind]}
        start, end = ([s.si_value() for s in self.points[e]] for e in ("start", "end"))
        axis = np.subtract(end, start)
        # z_axis: global z unless the beam runs along it, then global y (FlexibleBody makes it ⟂ x).
        z_axis = [0.0, 1.0, 0.0] if np.linalg.norm(np.cross(axis, [0.0, 0.0, 1.0])) <= 1e-9 * np.linalg.norm(axis) \
            else [0.0, 0.0, 1.0]
        return {"start": start, "end": end, "z_axis": z_axis, **section_properties(kind, **dims),
                **{key: spin.si_value() for key, spin in self.material_fields.items()},
                "elements": self.elements.value(), "modes": self.modes.value()}
