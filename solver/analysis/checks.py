"""Check Model: degrees of freedom, redundant constraints and over-/under-driving, before a run.

Counts (the model in absolute coordinates, conventional joint equations):

    Grübler (Kutzbach):  F_G = 6·n_b − Σ_joints m_j − n_d

with n_b the moving bodies (a flexible body adds its modal coordinates to its 6), m_j the equations of
joint j, n_d the drivers.  F_G ignores geometry; the rank of the constraint Jacobian Φ_q at the
assembled initial configuration does not (Kim & Yoo (1997) §2, the rank-revealing QR of
:func:`solver.partitioning.partition.independent_rows`):

    DOF = n_q − rank Φ_q          (Φ_q with the Euler-parameter normalization rows; n_q coordinates)
    mobility = n_q − rank Φ_q⁰    (Φ_q⁰: the drivers' rows left out — the mechanism itself)
    redundant joint equations r = Σ m_j + n_norm − rank Φ_q⁰,   so  mobility = F_G⁰ + r

(F_G⁰ = 6·n_b − Σ m_j).  A planar four-bar of revolutes: F_G⁰ = 18 − 20 = −2, mobility 1, r = 3.
Redundant equations are told in joint terms by the self-stress states they create
(:mod:`solver.partitioning.self_stress`): the joints carrying them and the reaction components left
undetermined.

A driver is *over-driving* when its row is dependent on the joints' and the other drivers' rows
(rank Φ_q unchanged without it): the mechanism cannot follow it and the others, or it repeats one.
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
from ..model.model import Model
from ..partitioning.partition import independent_rows
from ..partitioning.self_stress import mode_velocities, reaction_uniqueness
from .assembly import assemble_positions


@dataclass
class ModelCheck:
    """The result of :func:`check_model` (module docstring); ``messages`` say it in words."""
    bodies: int                       # moving bodies
    freedoms: int                     # 6 per rigid body (+ modal coordinates): n_q − n_norm
    joint_equations: dict             # {joint: number of equations}
    drivers: list                     # driver names
    grubler: int                      # F_G = freedoms − Σ m_j − n_d
    grubler_mobility: int             # F_G⁰ = freedoms − Σ m_j
    dof: int                          # n_q − rank Φ_q
    mobility: int                     # n_q − rank Φ_q⁰ (drivers released)
    redundant: int                    # redundant joint equations r
    redundant_equations: list         # "A: revolute equation 4" … (which rows the pivoting names is arbitrary)
    redundant_joints: list            # the joints carrying self-stress, in model order
    nonunique_components: dict        # {joint or driver: [components]} (joint frame)
    nonunique_messages: dict          # {name: sentence}
    overdriven: list                  # drivers dependent on the joints and the other drivers
    underdriven: bool                 # drivers present and dof > 0
    moving_joints: list               # joints that still move with the drivers in place (dof > 0)
    assembled: bool                   # the initial configuration was assembled (else: as drawn)
    messages: list = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """No over-driving and an assembled initial configuration (under-driving is a note)."""
        return self.assembled and not self.overdriven


def _rank(jac):
    return len(independent_rows(jac)[0])


def check_model(model: Model) -> ModelCheck:
    """Grübler count, rank-based DOF at the initial configuration, redundant constraints in joint
    terms, over- and under-driven drivers (module docstring).  Raises ModelError for a model that
    does not compile (every problem by field, as ``Model.check``)."""
    system = compile_model(model, codegen="off", formulation="cartesian", constraints="conventional").system
    q, _, t = system.initial_state()
    assembled, note = True, ""
    try:
        q = assemble_positions(system, q, t)
    except SolverError as exc:
        assembled, note = False, f"{exc.message} — the counts below are at the drawn configuration"
    eqs = system.equations
    jac = system.constraints(q, t).jac
    driver_rows = [k for k, e in enumerate(eqs) if e.kind == "driver"]
    other_rows = [k for k, e in enumerate(eqs) if e.kind != "driver"]
    n_norm = sum(e.kind == "normalization" for e in eqs)
    joint_equations = {name: sum(e.owner == name and e.kind == "joint" for e in eqs) for name in system.joint_names}
    freedoms = system.nq - n_norm
    n_joint = sum(joint_equations.values())
    rank_all, rank_free = _rank(jac), _rank(jac[other_rows])
    redundant_rows = independent_rows(jac[other_rows])[1]
    overdriven = [eqs[k].owner for k in driver_rows
                  if _rank(jac[[r for r in range(len(eqs)) if r != k]]) == rank_all]
    u = reaction_uniqueness(system, t, q)
    support = np.abs(u.basis).max(axis=1) if u.basis.size else np.zeros(len(eqs))
    carrying = {eqs[k].owner for k in np.nonzero(support > 1e-8)[0] if eqs[k].kind == "joint"}
    check = ModelCheck(
        bodies=len(system.body_names) + len(getattr(system, "flex_names", [])), freedoms=freedoms,
        joint_equations=joint_equations, drivers=list(system.driver_names),
        grubler=freedoms - n_joint - len(driver_rows), grubler_mobility=freedoms - n_joint,
        dof=system.nq - rank_all, mobility=system.nq - rank_free, redundant=len(redundant_rows),
        redundant_equations=[f"{eqs[other_rows[k]].owner}: {eqs[other_rows[k]].text}" for k in redundant_rows],
        redundant_joints=[j for j in system.joint_names if j in carrying],
        nonunique_components=u.components, nonunique_messages=u.messages, overdriven=overdriven,
        underdriven=bool(driver_rows) and system.nq - rank_all > 0,
        moving_joints=_moving_joints(system, t, q, jac), assembled=assembled)
    check.messages = _messages(check, note)
    return check


def _moving_joints(system, t, q, jac):
    """Joints whose two bodies move relative to each other in a velocity of the null space of Φ_q
    (module docstring); [] when DOF = 0.  ``system``: a CartesianSystem (its ``joints`` carry the
    body indices, −1 for ground)."""
    post = mode_velocities(system, t, q, jac)
    if post is None:
        return []
    ground = np.zeros((len(post["r"]), 1, 3))                  # body index −1
    r, v, w = (np.concatenate([post[key], ground], axis=1) for key in ("r", "v", "w"))
    scale = max(np.max(np.abs(v)), np.max(np.abs(w)), 1e-300)
    moving = []
    for name, (_, bi, bj, _, _) in zip(system.joint_names, system.joints):
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
    out.append(f"Grübler (Kutzbach) count: {c.freedoms} body freedoms "
               f"({_plural(c.bodies, 'moving body', 'moving bodies')}) − "
               f"{sum(c.joint_equations.values())} joint equations{driver_term} = {c.grubler}.")
    drivers = f"{c.dof} with the drivers, " if c.drivers else ""
    out.append(f"Degrees of freedom from the rank of the constraint Jacobian at the initial configuration: "
               f"{drivers}{c.mobility} for the mechanism itself.")
    if c.redundant:
        joints = ", ".join(c.redundant_joints)
        out.append(f"{_plural(c.redundant, 'redundant constraint equation')} (Grübler {c.grubler_mobility} vs "
                   f"mobility {c.mobility}): the joints {joints} over-constrain their loop. The solver handles "
                   "this with minimum-norm multipliers; the reaction components the redundancy leaves "
                   "undetermined are listed below (all others are unique).")
        out += [text[0].upper() + text[1:] + "." for text in c.nonunique_messages.values()]
    if not c.drivers and c.dof > 0:
        out.append(f"No drivers: a dynamic run in {_plural(c.dof, 'degree')} of freedom.")
    elif c.drivers and not c.overdriven and c.dof == 0:
        out.append("Fully driven: a kinematic analysis (the drivers fix every degree of freedom).")
    return out
