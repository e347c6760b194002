"""Vehicle dynamics force elements (Choi & Yoo (2000)): road, tire, speed control.

:mod:`solver.vehicle.evaluators` registers how each kind is evaluated with
:data:`solver.forces.EVALUATORS` (a road applies no load itself: it compiles to nothing and is
looked up by the tires that name it); ``solver/__init__.py`` imports it.
"""
from __future__ import annotations

from .road import PROFILES, RoadSurface
from .speed_control import SpeedControlForce
from .tire import TireForce, TireParameters, TireState, combined_slip_forces, magic_formula

__all__ = ["PROFILES", "RoadSurface", "TireForce", "TireParameters", "TireState", "SpeedControlForce",
           "combined_slip_forces", "magic_formula"]
