"""The compile step: an editable :class:`~solver.model.model.Model` and its settings become a
:class:`CompiledModel` — the formulation's system (flat index arrays; generated C kernels when they
are available) plus the settings it was built for.  ``simulate``, ``linearize`` and
``static_equilibrium`` accept a CompiledModel or a Model (which they compile).

Generated kernels (:mod:`solver.codegen`, Choi & Yoo (2000) §4) are chosen by ``settings.codegen``:

- ``"auto"`` (default): generated kernels whenever a C compiler is found and the model is supported,
  else the generic path; the reason is one notice (``CompiledModel.notices``, the run's "codegen"
  event, the CLI's message).  ``$MBS_CODEGEN=off`` turns "auto" into "off" for a whole process
  (a test suite of many tiny models, a machine where builds are unwanted);
- ``"on"``: the same, but a model that cannot be generated is an error (ModelError);
- ``"off"``: the generic (interpreted) path.

``settings.planar`` (:mod:`solver.formulations.planar`) is resolved here too: "off", or the plane
("xy"/"yz"/"zx", or the one "auto" finds) whose planar joint forms the system is built with; a
notice says which, and names loads the bodies' plane constraints carry.  Generated kernels cover the
planar forms (their equations are read from the same joint kinds).

A build is a phase of its own: ``on_event`` receives ``{"kind": "codegen", "message":
"compiling the model…"}`` before it starts, and ``cancel()`` returning True stops it
(:class:`~solver.errors.Cancelled`), also while the C compiler runs.  Builds are cached by the
model's structure (:mod:`solver.codegen.build`), so parameter edits never rebuild; a model compiled
again unchanged reuses its recent compilation in this process (:mod:`solver.recent_compiles`).
"""
from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, replace

from . import recent_compiles
from .errors import ModelError
from .model.elements import Settings
from .model.fields import FieldProblem
from .formulations.planar import out_of_plane_loads, resolve_plane
from .formulations.system import MechanicalSystem
from .model.model import Model

#: Settings that decide what is compiled; the others (t_end, tolerances, integrator …) are run options.
STRUCTURAL = ("formulation", "constraints", "reactions", "codegen", "planar")


@dataclass(frozen=True)
class CompiledModel:
    """A model compiled for one formulation: ``system`` (a
    :class:`~solver.formulations.system.MechanicalSystem`; runs and analyses evaluate workspaces of
    it and never change it, so one CompiledModel may run in several threads at once), the
    ``settings`` it was built with, ``generated`` (True when its equations run as generated C
    kernels) and ``notices`` (one line each: which path runs and why)."""
    system: MechanicalSystem
    settings: Settings
    generated: bool
    notices: tuple = ()

    def run_settings(self, **overrides) -> Settings:
        """This compilation's settings with run options overridden (non-None values).  A different
        value of a structural setting (formulation, constraints, reactions, codegen, planar) is a ModelError:
        it needs a new compile."""
        s = self.settings.copy()
        overrides = _as_setting_values(overrides)
        if overrides.get("formulation") == "auto":
            overrides = dict(overrides, formulation=None)           # it was resolved at the compile
        changed = [k for k in STRUCTURAL if overrides.get(k) is not None and overrides[k] != s.values[k]]
        if changed:
            raise ModelError([f"simulate: {k} was {s.values[k]!r} when the model was compiled; compile it "
                              f"again for {k}={overrides[k]!r}" for k in changed])
        return _apply(s, {k: v for k, v in overrides.items() if k not in STRUCTURAL})


def resolve_settings(model: Model, **overrides) -> Settings:
    """The model's saved solver settings with the given (non-None) arguments applied."""
    return _apply(model.settings.copy(), overrides)


def codegen_choice(settings) -> str:
    """What ``settings.codegen`` asks for in this process: "auto", "on" or "off" (``$MBS_CODEGEN=off``
    turns "auto" into "off")."""
    choice = settings.values["codegen"]
    if choice == "auto" and os.environ.get("MBS_CODEGEN", "").strip().lower() == "off":
        return "off"
    return choice


def compile_model(model: Model | CompiledModel, settings: Settings | None = None, *,
                  codegen: bool | str | None = None, on_event: Callable[[dict], None] | None = None,
                  cancel: Callable[[], bool] | None = None, **overrides) -> CompiledModel:
    """Compile ``model`` (a Model; a CompiledModel is returned as it is).  ``settings``: the Settings
    to use (default: the model's, with ``overrides`` applied); ``codegen`` (True/False/"auto"/"on"/
    "off") overrides ``settings.codegen``.  Raises ModelError for a bad model or settings and
    :class:`~solver.errors.Cancelled` when ``cancel()`` stops a build."""
    if isinstance(model, CompiledModel):
        return model
    settings = (settings.copy() if settings is not None else model.settings.copy())
    _apply(settings, dict(overrides, codegen=codegen))
    if settings.values["formulation"] == "auto":
        settings.set("formulation", auto_formulation(model, settings))
    choice = codegen_choice(settings)
    key = recent_compiles.key_of(model, settings, choice)
    recent = recent_compiles.recall(key)
    if recent is not None:
        return replace(recent, settings=settings)
    compiled = _compile(model, settings, choice, on_event, cancel)
    recent_compiles.remember(key, compiled)
    return compiled


def _compile(model, settings, choice, on_event, cancel) -> CompiledModel:
    """The compilation of ``model`` with resolved ``settings`` and codegen ``choice`` (compile_model)."""
    plane, notice = resolve_plane(model, settings)
    if settings.formulation == "cartesian" and settings.constraints == "conventional":
        from .formulations.cartesian import check_coupler_branches
        check_coupler_branches(model)
    notices = [notice] if notice else []
    system, generated = None, False
    if choice != "off":
        from .codegen import UNAVAILABLE, codegen_system
        system, message = codegen_system(model, settings, plane, on_event=on_event, cancel=cancel,
                                         strict=choice == "on")
        notices.append(message)
        generated = system is not None
        if system is None and choice == "on":
            raise ModelError(f"settings.codegen: 'on' needs generated kernels, which are unavailable: "
                             f"{message.removeprefix(UNAVAILABLE)}")
    if system is None:
        system = generic_system(model, settings)
    if plane is not None:
        loads = out_of_plane_loads(system, plane)
        if loads:
            notices.append(f"planar: out-of-plane loads of {', '.join(loads)} are carried by the bodies' plane "
                           "constraints (not reported in the joint reactions)")
    return CompiledModel(system, settings, generated, tuple(notices))


def auto_formulation(model, settings) -> str:
    """The formulation "auto" stands for: relative (recursive joint coordinates, Kim & You (1997))
    — on the four-bar row through its singular passes it holds the exact motion where the Cartesian
    formulation folds (docs/performance.md, work–precision) — unless the model needs the Cartesian
    one: flexible bodies, the parametric joint form, the generalized-α integrator, or a coupler with a
    polynomial of degree > 1 of a translation of a joint that closes a loop (a cut joint: the relative
    formulation couples those linearly only; of an angle there, no formulation does)."""
    if model.flexible_bodies or settings.constraints != "conventional" or settings.integrator == "galpha":
        return "cartesian"
    if model.couplers:
        from .constraints.forms import uses_angle
        from .constraints.joints import COORDINATES
        from .formulations.topology import build_topology
        joints = list(model.joints.values())
        cut = {joints[k].name for k in build_topology(list(model.bodies), joints).cut}
        if any(c.joint_i in cut and len(c.polynomial()) > 2
               and not uses_angle(COORDINATES[model.coupler_coordinates(c.name)[0]]) for c in model.couplers.values()):
            return "cartesian"
    return "relative"


def for_analysis(model: Model | CompiledModel, formulation: str | None = None) -> CompiledModel:
    """What a one-shot analysis (static equilibrium, linearization) evaluates a workspace of: a
    CompiledModel as it is (``formulation``, when given, must agree), or a Model compiled on the
    generic path — a few hundred evaluations do not pay for a build."""
    if isinstance(model, CompiledModel):
        model.run_settings(formulation=formulation)
        return model
    return compile_model(model, formulation=formulation, codegen="off")


def generic_system(model, settings):
    """The formulation's interpreted system (no generated code), with the planar joint forms when
    ``settings.planar`` asks for them and the model is planar (:mod:`solver.formulations.planar`)."""
    plane, _ = resolve_plane(model, settings)
    if settings.formulation == "cartesian":
        from .formulations.cartesian import CartesianSystem
        return CartesianSystem(model, form=settings.constraints, plane=plane)
    from .formulations.relative import RelativeSystem
    return RelativeSystem(model, reactions=settings.reactions, plane=plane)


def _as_setting_values(overrides) -> dict:
    """``codegen=True/False`` (the argument of simulate) as the setting's "on"/"off"."""
    value = overrides.get("codegen")
    return dict(overrides, codegen={True: "on", False: "off"}[value]) if isinstance(value, bool) else overrides


def _apply(settings, overrides) -> Settings:
    """``settings`` with the non-None ``overrides`` set: each checked by its field, then all of them
    together (t_end and output_step only make sense as a pair).  Problems name the argument."""
    problems = []
    for key, value in _as_setting_values(overrides).items():
        if value is None:
            continue
        try:
            settings.values[key] = settings.field(key).coerce(value)
        except FieldProblem as p:
            problems.append(settings.problem(key, str(p), settings.name))
        except ModelError as exc:
            problems += exc.details
    if not problems:
        try:
            settings.check()
        except ModelError as exc:
            problems += exc.details
    if problems:
        raise ModelError([p.at("simulate") for p in problems])     # the argument, not the saved setting
    return settings
