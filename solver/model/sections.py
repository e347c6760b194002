"""Beam cross-sections and materials, as model data: what a flexible beam body is made of
(:meth:`solver.model.Model.add_flexible_beam` reads them from dicts; :mod:`solver.flexible.beam`
builds the finite elements from them).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import ModelError


@dataclass(frozen=True)
class Section:
    """Beam cross-section: area A (m²), second moments I_y, I_z about the section axes (m⁴),
    torsion constant J (m⁴), and the extreme-fibre distances c_y, c_z and torsion radius c_t (m)
    used for stress recovery."""
    area: float
    Iy: float
    Iz: float
    J: float
    cy: float = 0.0
    cz: float = 0.0
    ct: float = 0.0

    @classmethod
    def from_dict(cls, d, path="section"):
        """``{"area", "Iy", "Iz", "J"[, "cy", "cz", "ct"]}`` or a rectangle ``{"height": h (along y),
        "width": b (along z)}``: A = bh, I_z = bh³/12, I_y = hb³/12, J = β a b³ with a ≥ b the
        sides and β = 1/3 − 0.21 (b/a)(1 − (b/a)⁴/12) (Roark, Table 10.7 case 4)."""
        if not isinstance(d, dict):
            raise ModelError(f"{path}: must be an object, got {type(d).__name__}")
        if "height" in d or "width" in d:
            h, b = _positive(d, "height", path), _positive(d, "width", path)
            a, c = max(h, b), min(h, b)
            beta = 1.0 / 3.0 - 0.21 * (c / a) * (1.0 - (c / a) ** 4 / 12.0)
            return cls(b * h, h * b ** 3 / 12.0, b * h ** 3 / 12.0, beta * a * c ** 3,
                       cy=h / 2.0, cz=b / 2.0, ct=c)
        keys = ("area", "Iy", "Iz", "J")
        vals = [_positive(d, k, path) for k in keys]
        extra = {k: float(d.get(k, 0.0)) for k in ("cy", "cz", "ct")}
        return cls(*vals, **extra)


@dataclass(frozen=True)
class Material:
    """Isotropic material: density ρ (kg/m³), Young's modulus E (Pa), Poisson's ratio ν."""
    density: float
    youngs: float
    poisson: float = 0.3

    @property
    def shear(self):
        return self.youngs / (2.0 * (1.0 + self.poisson))

    @classmethod
    def from_dict(cls, d, path="material"):
        if not isinstance(d, dict):
            raise ModelError(f"{path}: must be an object, got {type(d).__name__}")
        nu = float(d.get("poisson", 0.3))
        if not -1.0 < nu < 0.5:
            raise ModelError(f"{path}.poisson: must be in (−1, 0.5), got {nu:g}")
        return cls(_positive(d, "density", path), _positive(d, "youngs", path), nu)


def _positive(d, key, path):
    v = d.get(key)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0:
        raise ModelError(f"{path}.{key}: must be a number > 0, got {v!r}")
    return float(v)
