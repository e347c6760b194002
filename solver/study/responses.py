"""Responses of a parameter study: named scalar functions of one variant's results (or model).

=========================  ========  ============================================================
kind                       target    value
=========================  ========  ============================================================
max_reaction_force         joint     max over time of |F| of ``joint_reaction`` [N]
max_reaction_torque        joint     max over time of |T| of ``joint_reaction`` [N·m]
peak_acceleration          body      max over time of the CM acceleration magnitude [m/s²]
peak_velocity              body      max over time of the CM speed [m/s]
max_driver_force           driver    max over time of |driver_force| [N or N·m]
final_energy_error         —         |E_total(t_end) − E_total(0)| [J] (no external work assumed)
max_constraint_violation   —         max over time of max |Φ|
first_frequency            —         lowest undamped natural frequency of ``solver.linearize`` at
                                     the initial state [Hz] (NaN when nothing can move); needs no run
=========================  ========  ============================================================

From Python, ``Response(name, function=f)`` takes any ``f(results, model) -> float`` (it must be
picklable, e.g. a module-level function, to run on Dask workers).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..errors import ModelError
from ..model.fields import show_names, show_value

_TARGETS = {"max_reaction_force": "joints", "max_reaction_torque": "joints", "peak_acceleration": "bodies",
            "peak_velocity": "bodies", "max_driver_force": "drivers", "final_energy_error": None,
            "max_constraint_violation": None, "first_frequency": None}
RESPONSE_KINDS = tuple(_TARGETS)


@dataclass(frozen=True)
class Response:
    """A named response: ``kind`` (one of RESPONSE_KINDS) with its ``target`` element, or a custom
    ``function(results, model) -> float``.  ``name`` defaults to ``kind`` or ``kind(target)``."""
    kind: str = "custom"
    target: str | None = None
    name: str | None = None
    function: Callable | None = None

    def __post_init__(self):
        if self.function is None and self.kind not in _TARGETS:
            raise ModelError(f"kind: must be one of {', '.join(RESPONSE_KINDS)}; got {show_value(self.kind)}")
        if self.name is None:
            object.__setattr__(self, "name", self.kind if self.target is None else f"{self.kind}({self.target})")

    @property
    def needs_run(self) -> bool:
        """False for responses of the model alone (no simulation needed)."""
        return self.kind != "first_frequency"

    def problems(self, model) -> list[str]:
        """What is wrong with this response for ``model`` (each 'field: message')."""
        if self.function is not None:
            return [] if callable(self.function) else ["function: must be callable"]
        collection = _TARGETS[self.kind]
        if collection is None:
            return [] if self.target is None else [f"target: {self.kind} takes no target"]
        names = list(getattr(model, collection))
        if self.target not in names:
            return [f"target: {self.kind} needs one of the model's {collection} "
                    f"({show_names(names)}); got {show_value(self.target)}"]
        return []

    def evaluate(self, results, model) -> float:
        """The response of one variant (``results`` is None when no response needs a run)."""
        if self.function is not None:
            return float(self.function(results, model))
        return float(_EVALUATORS[self.kind](results, model, self.target))

    def to_dict(self) -> dict:
        if self.function is not None:
            raise ModelError(f"response '{self.name}': a custom function cannot be written to STUDY.json")
        data = {"kind": self.kind, "target": self.target, "name": self.name}
        return {k: v for k, v in data.items() if v is not None}


def response_choices(model) -> list[Response]:
    """Every built-in response that applies to ``model`` (what the GUI offers)."""
    out = []
    for kind, collection in _TARGETS.items():
        targets = [None] if collection is None else list(getattr(model, collection))
        out += [Response(kind, target) for target in targets]
    return out


# ---- helpers ------------------------------------------------------------------------------------
def _max_norm(a):
    return np.max(np.linalg.norm(a, axis=1))


def _first_frequency(results, model, target):
    from ..analysis.linearize import linearize
    f = linearize(model).frequencies_hz
    return f[0] if len(f) else np.nan


_EVALUATORS = {
    "max_reaction_force": lambda r, m, name: _max_norm(r.joint_reaction(name)[0]),
    "max_reaction_torque": lambda r, m, name: _max_norm(r.joint_reaction(name)[1]),
    "peak_acceleration": lambda r, m, name: _max_norm(r.body_acceleration(name)),
    "peak_velocity": lambda r, m, name: _max_norm(r.body_velocity(name)),
    "max_driver_force": lambda r, m, name: np.max(np.abs(r.driver_force(name))),
    "final_energy_error": lambda r, m, _: abs(r.energy["total"][-1] - r.energy["total"][0]),
    "max_constraint_violation": lambda r, m, _: np.max(r.constraint_violation),
    "first_frequency": _first_frequency,
}
