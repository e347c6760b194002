"""Check Model: degrees of freedom, redundant constraints and over-/under-driving, before a run.

Counts (conventional joint equations; the rank in the coordinates of the model's formulation,
Cartesian or relative — the DOF n_q − rank Φ_q is the same in both):

    Grübler (Kutzbach):  F_G = 6·n_b − Σ_joints m_j − n_d

with n_b the moving bodies (a flexible body adds its modal coordinates to its 6), m_j the equations of
joint j, n_d the drivers.  F_G ignores geometry; the rank of the constraint Jacobian Φ_q at the
assembled initial configuration does not (Kim & Yoo (1997) §2; one rank-revealing QR of Φ_qᵀ,
:func:`solver.partitioning.self_stress.null_spaces`):

    DOF = n_q − rank Φ_q          (all rows: joints, or cut joints, drivers, Euler-parameter normalization)
    mobility = n_q − rank Φ_q⁰    (Φ_q⁰: the drivers' rows left out — the mechanism itself)
    redundant joint equations r = rows of Φ_q⁰ − rank Φ_q⁰,   so  mobility = F_G⁰ + r

(F_G⁰ = 6·n_b − Σ m_j).  A planar four-bar of revolutes: F_G⁰ = 18 − 20 = −2, mobility 1, r = 3.
With the planar joint forms (``settings.planar``, :mod:`solver.formulations.planar`) the count is
the planar one, F_G = 3·n_b − Σ m_j − n_d with m_j the equations of the joints' planar forms (the
four-bar: 9 − 8 = 1, r = 0).  A model compiled with 3-D forms that has redundant equations and is
planar gets the suggestion to use the planar forms (``planar_suggestion``: the plane).
Redundant equations are told in joint terms by the self-stress states they create
(:mod:`solver.partitioning.self_stress`): the joints carrying them and the reaction components left
undetermined.

A driver is *over-driving* when its row is dependent on the joints' and the other drivers' rows
(rank Φ_q unchanged without it ⟺ some self-stress state has an entry on its row): the mechanism
cannot follow it and the others, or it repeats one.
The model is *under-driven* when it has drivers (a kinematic run is meant) and DOF > 0 remains; the
joints that still move are those whose bodies move relative to each other in some velocity u of the
null space of Φ_q (relative angular velocity ω_j − ω_i, or CM velocity of body j seen from body i,
v_j − v_i − ω_i × (r_j − r_i), above round-off).  Under-driving is a note (a driven vehicle is meant to
be dynamic), over-driving a problem.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..compile import compile_model
from ..errors import SolverError
from ..model.model import GROUND, Model
from ..formulations.planar import planar_equation_counts, planar_plane
from ..partitioning.self_stress import mode_velocities, null_spaces, reaction_uniqueness
from .assembly import assemble_positions


@dataclass
class ModelCheck:
    """The result of :func:`check_model` (module docstring); ``messages`` say it in words."""
    bodies: int                       # moving bodies
    freedoms: int                     # 6 per body (+ the modal coordinates of flexible bodies)
    joint_equations: dict             # {joint: number of equations}
    drivers: list                     # driver names
    grubler: int                      # F_G = freedoms − Σ m_j − n_c − n_d
    grubler_mobility: int             # F_G⁰ = freedoms − Σ m_j − n_c
    dof: int                          # n_q − rank Φ_q
    mobility: int                     # n_q − rank Φ_q⁰ (drivers released)
    redundant: int                    # redundant joint equations r
    redundant_equations: list         # "A: revolute equation 4" … (which rows the pivoting names is arbitrary)
    redundant_joints: list            # the joints carrying self-stress (with non-unique components), in model order
    nonunique_components: dict        # {joint or driver: [components]} (joint frame)
    nonunique_messages: dict          # {name: sentence}
    overdriven: list                  # drivers dependent on the joints and the other drivers
    underdriven: bool                 # drivers present and dof > 0
    moving_joints: list               # joints that still move with the drivers in place (dof > 0)
    assembled: bool                   # the initial configuration was assembled (else: as drawn)
    messages: list = field(default_factory=list)
    plane: str | None = None          # the plane of the planar joint forms compiled (settings.planar), else None
    planar_suggestion: str | None = None   # 3-D forms with redundant equations, and the model is planar here
    couplers: list = field(default_factory=list)   # coupler names (one equation each, n_c)

    @property
    def ok(self) -> bool:
        """No over-driving and an assembled initial configuration (under-driving is a note)."""
        return self.assembled and not self.overdriven


def check_model(model: Model) -> ModelCheck:
    """Grübler count, rank-based DOF at the initial configuration, redundant constraints in joint
    terms, over- and under-driven drivers (module docstring).  Raises ModelError for a model that
    does not compile (every problem by field, as ``Model.check``)."""
    compiled = compile_model(model, codegen="off", constraints="conventional")
    system = compiled.system
    q, _, t = system.initial_state()
    assembled, note = True, ""
    try:
        q = assemble_positions(system, q, t)
    except SolverError as exc:
        involved = f" (involved: {', '.join(exc.elements)})" if exc.elements else ""
        assembled, note = False, f"{exc.message}{involved} — the counts below are at the drawn configuration"
    eqs = system.equations
    jac = system.constraints(q, t).jac
    driver_rows = [k for k, e in enumerate(eqs) if e.kind == "driver"]
    other_rows = [k for k, e in enumerate(eqs) if e.kind != "driver"]
    plane = system.plane
    joint_equations = (planar_equation_counts(model, plane) if plane is not None
                       else {name: len(j.kind.equations) for name, j in model.joints.items()})
    flexible = getattr(system, "flex_layout", [])
    bodies = len(system.body_names) + len(flexible)
    freedoms = (3 if plane is not None else 6) * bodies + sum(f["modes"] for f in flexible)
    n_joint = sum(joint_equations.values()) + len(model.couplers)      # a coupler is one equation
    full = null_spaces(jac)
    free = null_spaces(jac[other_rows]) if driver_rows else full
    # a row depends on the others iff some self-stress state has an entry there
    stressed = np.abs(full.stress).max(axis=1, initial=0.0) > 1e-8
    overdriven = [eqs[k].owner for k in driver_rows if stressed[k]]
    u = reaction_uniqueness(system, t, q, spaces=full, free=free)
    check = ModelCheck(
        bodies=bodies, freedoms=freedoms, joint_equations=joint_equations, drivers=list(system.driver_names),
        grubler=freedoms - n_joint - len(driver_rows), grubler_mobility=freedoms - n_joint,
        dof=system.nq - full.rank, mobility=system.nq - free.rank, redundant=len(free.redundant),
        redundant_equations=[f"{eqs[other_rows[k]].owner}: {eqs[other_rows[k]].text}" for k in free.redundant],
        redundant_joints=[j for j in model.joints if j in u.components],
        nonunique_components=u.components, nonunique_messages=u.messages, overdriven=overdriven,
        underdriven=bool(driver_rows) and system.nq - full.rank > 0,
        moving_joints=_moving_joints(model, system, q, full.modes), assembled=assembled, plane=plane,
        couplers=list(model.couplers))
    if plane is None and check.redundant and (check.redundant_joints or not check.couplers):   # not couplers' alone
        check.planar_suggestion = planar_plane(model, compiled.settings)
    check.messages = _messages(check, note)
    return check


def _moving_joints(model, system, q, modes):
    """Joints whose two bodies move relative to each other in a velocity of ``modes`` (the null
    space of Φ_q; module docstring).  Joints on flexible bodies are not judged (``system.frames``
    holds the rigid bodies only)."""
    if modes.shape[1] == 0:
        return []
    ground = np.zeros((modes.shape[1], 1, 3))                  # body index −1
    r, v, w = (np.concatenate([a, ground], axis=1) for a in mode_velocities(system, q, modes))
    scale = max(np.max(np.abs(v)), np.max(np.abs(w)), 1e-300)
    index = {name: k for k, name in enumerate(system.body_names)}
    index[GROUND] = -1
    moving = []
    for name, joint in model.joints.items():
        if joint.body_i not in index or joint.body_j not in index:
            continue
        bi, bj = index[joint.body_i], index[joint.body_j]
        dw = w[:, bj] - w[:, bi]
        dv = v[:, bj] - v[:, bi] - np.cross(w[:, bi], r[:, bj] - r[:, bi])
        if max(np.max(np.abs(dw)), np.max(np.abs(dv))) > 1e-8 * scale:
            moving.append(name)
    return moving


def _plural(n, word, plural=None):
    return f"{n} " + (word if n == 1 else plural or word + "s")


def _messages(c: ModelCheck, note: str) -> list[str]:
    """The check in words, most important first."""
    out = [note] if note else []
    if c.overdriven:
        out.append(f"Over-driven: {', '.join(c.overdriven)} — each of these drivers depends on the joints and "
                   "the other drivers (with the drivers released the mechanism has "
                   f"{_plural(c.mobility, 'degree')} of freedom for {_plural(len(c.drivers), 'driver')}): "
                   "the mechanism cannot follow them all, or one repeats another. Remove a driver or drive "
                   "another joint.")
    if c.underdriven:
        out.append(f"Under-driven: with its drivers the model keeps {_plural(c.dof, 'degree')} of freedom "
                   f"(joints still moving: {', '.join(c.moving_joints)}), so the run is dynamic in those "
                   "(gravity and forces move them), not a kinematic analysis.")
    driver_term = f" − {_plural(len(c.drivers), 'driver equation')}" if c.drivers else ""
    coupler_term = f" − {_plural(len(c.couplers), 'coupler equation')}" if c.couplers else ""
    planar = f" in the {c.plane} plane" if c.plane else ""
    out.append(f"Grübler (Kutzbach) count{planar}: {c.freedoms} body freedoms "
               f"({_plural(c.bodies, 'moving body', 'moving bodies')}) − "
               f"{sum(c.joint_equations.values())} joint equations{coupler_term}{driver_term} = {c.grubler}.")
    drivers = f"{c.dof} with the drivers, " if c.drivers else ""
    out.append(f"Degrees of freedom from the rank of the constraint Jacobian at the initial configuration: "
               f"{drivers}{c.mobility} for the mechanism itself.")
    if c.redundant:
        couplers = [n for n in c.couplers if n in c.nonunique_components]
        what = " and ".join(w for w, names in (("joints", c.redundant_joints), ("couplers", couplers)) if names)
        out.append(f"{_plural(c.redundant, 'redundant constraint equation')} (Grübler {c.grubler_mobility} vs "
                   f"mobility {c.mobility}): the {what or 'joints'} {', '.join(c.redundant_joints + couplers)} "
                   "over-constrain their loop. The solver handles "
                   "this with minimum-norm multipliers; the reaction components the redundancy leaves "
                   "undetermined are listed below (all others are unique).")
        out += [text[0].upper() + text[1:] + "." for text in c.nonunique_messages.values()]
    if c.planar_suggestion:
        out.append(f"The model is planar (in the {c.planar_suggestion} plane): the solver setting planar = "
                   f"'{c.planar_suggestion}' (or 'auto') compiles its joints in their planar forms, without the "
                   "redundant out-of-plane equations; every reaction component reported is then unique "
                   "(out-of-plane ones are zero).")
    if not c.drivers and c.dof > 0:
        out.append(f"No drivers: a dynamic run in {_plural(c.dof, 'degree')} of freedom.")
    elif c.drivers and not c.overdriven and c.dof == 0:
        out.append("Fully driven: a kinematic analysis (the drivers fix every degree of freedom).")
    return out
