"""Vehicle dynamics force elements (Choi & Yoo (2000)): road, tire, speed control.

:func:`compile_vehicle_element` turns a model element of one of the kinds in ``KINDS`` into the
force evaluators :func:`solver.forces.compile_forces` collects (a road applies no load itself:
it compiles to nothing and is looked up by the tires that name it).
"""
from __future__ import annotations

from .road import PROFILES, RoadSurface
from .speed_control import SpeedControlForce
from .tire import TireForce, TireParameters, TireState, combined_slip_forces, magic_formula

KINDS = ("road", "tire", "speed_control")


def compile_vehicle_element(e, model, index, init):
    """Force evaluators (a list, empty for a road) of vehicle element ``e``."""
    if e.KIND == "tire":
        return [TireForce(e, RoadSurface(model.forces[e.road]), index, init)]
    if e.KIND == "speed_control":
        return [SpeedControlForce(e, index, init)]
    return []


__all__ = ["KINDS", "PROFILES", "RoadSurface", "TireForce", "TireParameters", "TireState",
           "SpeedControlForce", "combined_slip_forces", "magic_formula", "compile_vehicle_element"]
