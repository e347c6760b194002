"""Declared inputs applied to a model (:class:`~solver.model.elements.ModelInput`): the copy of a
model a run uses, with each input's target time function replaced by the value given for it (or the
input's default).  A value is a number, an expression of t, a table ``{"t": [...], "values": [...]}``
or a Python callable f(t), which is tabulated every 1 ms over the run (a cubic spline through the
samples: exact derivatives of the spline, which a driver's velocity and acceleration need)."""
from __future__ import annotations

import numpy as np

from ..errors import ModelError, Problem

CALLABLE_STEP = 1e-3      # s between the samples of a callable input
MAX_CALLABLE_SAMPLES = 1_000_000    # samples of one callable input (t_end up to 1000 s)


def with_inputs(model, values=None, t_end=1.0):
    """(a copy of ``model`` with every declared input applied).  ``values``: {input name: value};
    names that are not declared inputs are a ModelError listing the declared ones."""
    values = dict(values or {})
    declared = model.inputs
    unknown = [name for name in values if name not in declared]
    if unknown:
        raise ModelError([Problem("simulate", None, "inputs", f"'{name}' is not a declared input (declared: "
                                  f"{', '.join(declared) or 'none'})") for name in unknown])
    if not declared:
        return model
    run = model.copy()
    problems = []
    for name, e in declared.items():
        value = values.get(name, e.default)
        if callable(value):
            if not t_end / CALLABLE_STEP <= MAX_CALLABLE_SAMPLES:
                problems.append(Problem("simulate", None, "inputs", f"'{name}': a callable is sampled every "
                                        f"{CALLABLE_STEP:g} s, more than {MAX_CALLABLE_SAMPLES} samples up to "
                                        f"t_end {t_end:g} s; give a table or an expression instead"))
                continue
            t = np.append(np.arange(0.0, t_end, CALLABLE_STEP), t_end)
            value = {"t": t.tolist(), "values": [float(value(x)) for x in t]}
        try:
            _apply(run, e.target, value)
        except ModelError as exc:
            problems += [Problem(f"inputs '{name}'", name, "target", p.message if p.message else str(p))
                         for p in exc.details]
    if problems:
        raise ModelError(problems)
    return run


def _apply(model, target, value):
    collection, element, what, *component = target.split(".")
    items = getattr(model, collection)
    if element not in items:
        raise ModelError(f"{target}: no {collection[:-1]} named '{element}'")
    e = items[element]
    if collection == "drivers":
        model.set_field(element, "expression", value)
        return
    if not component:
        if "force" not in e.values or not isinstance(e.values["force"], (int, float, str, dict)):
            raise ModelError(f"{target}: '{element}' has no scalar force (a spring-damper, linear actuator or joint actuator does)")
        model.set_field(element, "force", value)
        return
    if what not in e.values or not isinstance(e.values[what], list):
        raise ModelError(f"{target}: '{element}' has no {what} components (an applied force or torque does)")
    components = list(e.values[what])
    components["xyz".index(component[0])] = value
    model.set_field(element, what, components)
