"""How the vehicle force elements are evaluated (entries of :data:`solver.forces.EVALUATORS`)."""
from __future__ import annotations

from ..forces import evaluator
from .road import RoadSurface
from .speed_control import SpeedControlForce
from .tire import TireForce


@evaluator("road")
def _road(e, model, index, init):
    """A road applies no load itself; the tires that name it look it up."""
    return []


@evaluator("tire")
def _tire(e, model, index, init):
    return [TireForce(e, RoadSurface(model.forces[e.road]), index, init)]


@evaluator("speed_control")
def _speed_control(e, model, index, init):
    return [SpeedControlForce(e, index, init)]
