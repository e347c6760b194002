"""Mass and principal inertia of a homogeneous display geometry (box, cylinder, sphere).

Formulas: solid cuboid I_xx = m (b² + c²)/12 (sides a, b, c along x, y, z); solid cylinder about its
axis m r²/2 and across it m (3 r² + L²)/12; solid sphere 2 m r²/5 (any mechanics handbook).
Units: lengths in m, density in kg/m³, mass in kg, inertia in kg·m² at the centre, body axes.
"""
from __future__ import annotations

import math

SHAPES = ("box", "cylinder", "sphere")


def inertia_from_geometry(geometry: dict, density: float):
    """(mass, [Ixx, Iyy, Izz]) of ``geometry``; raises ValueError for shapes without a volume."""
    shape = geometry.get("shape")
    if density <= 0:
        raise ValueError("density must be > 0")
    if shape == "box":
        a, b, c = geometry["size"]
        m = density * a * b * c
        return m, [m * (b * b + c * c) / 12, m * (a * a + c * c) / 12, m * (a * a + b * b) / 12]
    if shape == "cylinder":
        r, length = geometry["radius"], geometry["length"]
        m = density * math.pi * r * r * length
        axial, transverse = m * r * r / 2, m * (3 * r * r + length * length) / 12
        moments = [transverse] * 3
        moments["xyz".index(geometry.get("axis", "z"))] = axial
        return m, moments
    if shape == "sphere":
        r = geometry["radius"]
        m = density * 4.0 / 3.0 * math.pi * r ** 3
        return m, [2.0 * m * r * r / 5.0] * 3
    raise ValueError(f"cannot compute inertia of a '{shape}' geometry (use box, cylinder or sphere)")
