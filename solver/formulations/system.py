"""What every formulation compiles a model into: a constrained mechanical system

    M(q) q̈ + Φ_qᵀ λ = Q(q, q̇, t),   Φ(q, t) = 0,   Φ_q q̇ = ν,   Φ_q q̈ = γ

(Lee, Lee & Bae (2013) eq. 1, Kim & Yoo (1997) eq. 5, Choi & Yoo (2000) eqs. 1–3).  The partitioning methods, integrators and
analyses only see this interface; the Cartesian and relative formulations implement it.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..partitioning.partition import POSITION_TOL
from .workspace import borrow, claim, give_back, reset, workspace


@dataclass
class ConstraintEval:
    """Constraint quantities at one state: Φ, Φ_q, and (when asked) ν = −Φ_t and γ."""
    phi: np.ndarray
    jac: np.ndarray
    nu: np.ndarray | None = None
    gamma: np.ndarray | None = None


@dataclass
class Equation:
    """Who owns a constraint row: the element (joint, driver, body) and a short description."""
    owner: str
    kind: str            # "joint", "driver", "normalization", "cut joint", ...
    text: str


class MechanicalSystem:
    """Interface of a compiled model (see module docstring).  Attributes:

    nq: number of coordinates; equations: list of Equation (one per row of Φ);
    body_names: names of the bodies in result order; joint_names, driver_names;
    force_elements: the evaluators of the model's force elements (:mod:`solver.forces`).
    """
    nq: int
    equations: list
    body_names: list
    joint_names: list
    driver_names: list
    force_elements: list

    def initial_state(self):
        """(q0, q̇0, t0) from the model's initial positions and velocities (not yet assembled)."""
        raise NotImplementedError

    def run_state(self) -> list:
        """What an evaluation changes: force elements with a state (a rotational spring's
        continuous angle); formulations add joints whose angle is unwrapped (rotation drivers,
        screw joints), caches of the last evaluation and the generated kernels' buffers.  This is
        what :meth:`workspace` copies; an object with ``reset()`` remembers something from one
        evaluation to the next, and reset() forgets it."""
        return [f for f in self.force_elements if hasattr(f, "reset")]

    def coordinate_angles(self) -> frozenset:
        """Names of the force elements whose unwrapped angle is a coordinate of q (integrated, so
        continuous: no branch to choose, :mod:`solver.formulations.branches` does not track them).
        None here; the relative formulation's rotational spring-dampers on tree joints."""
        return frozenset()

    def workspace(self) -> "MechanicalSystem":
        """This system for one run (or analysis): a copy sharing everything fixed at compile time
        and owning fresh, reset copies of :meth:`run_state` (:mod:`solver.formulations.workspace`).
        A run evaluates its workspace, never the compiled system itself, so runs of one compiled
        system may go on at the same time and each starts from the model's configuration."""
        return workspace(self, self.run_state())

    def borrow_workspace(self):
        """(workspace, cache) for one run: a :meth:`workspace` a finished run gave back
        (:meth:`give_back_workspace`), its run state reset, or a new one
        (:func:`solver.formulations.workspace.borrow`)."""
        return borrow(self, self.run_state())

    def give_back_workspace(self, space, cache):
        """Keep a finished run's borrowed workspace (and its cache) for the next run."""
        give_back(self, space, cache)

    def own_workspace(self) -> "MechanicalSystem":
        """This system itself, its run state reset in place as :meth:`workspace` resets the copies:
        the workspace of a caller that holds :meth:`claim` (``simulate`` of a Model).  The same
        evaluations without finding what to share — a plan made once per system, which a system
        evaluated by one run at a time does not need."""
        reset(self.run_state())
        return self

    def claim(self):
        """The lock that lets one run at a time evaluate this system itself (:meth:`own_workspace`),
        acquired without waiting, or None when another run holds it (that caller then evaluates a
        :meth:`workspace`).  A compiled system may be reached by several callers at once — the
        in-process reuse of compilations (:mod:`solver.recent_compiles`) hands the same system to
        every compile of an unchanged model — so owning it is decided here, not by who compiled it.
        The caller releases the lock when its run ends."""
        return claim(self)

    def constraints(self, q, t, qd=None, level=0) -> ConstraintEval:
        """Φ and Φ_q; with level ≥ 1 also ν; level ≥ 2 (needs q̇) also γ."""
        raise NotImplementedError

    def mass(self, q) -> np.ndarray:
        raise NotImplementedError

    def forces(self, q, qd, t) -> np.ndarray:
        """Generalized applied and velocity-quadratic forces Q."""
        raise NotImplementedError

    def velocity_weights(self) -> np.ndarray:
        """Weights of each velocity coordinate when the initial velocities are made consistent:
        large for coordinates the user gave explicitly, so those are kept."""
        return np.ones(self.nq)

    def postprocess(self, q, qd, qdd, lam, t) -> dict:
        """Per-output-point quantities: body states, joint reactions, driver forces, energies."""
        raise NotImplementedError

    def postprocess_batch(self, t, q, qd, qdd, lam) -> dict:
        """:meth:`postprocess` of N output points (arrays with a leading axis N), stacked; the key
        "energy" becomes an (N, 4) array.  Formulations override it with a vectorized version."""
        posts = [self.postprocess(*point) for point in zip(q, qd, qdd, lam, t)]
        return {key: np.array([p[key] for p in posts]) for key in (posts[0] if posts else {})}

    def energy(self, q, qd, t) -> np.ndarray:
        """(kinetic, gravity, spring, strain) energy of one consistent state: the energy columns of
        :meth:`postprocess_batch` (formulations may override it with a cheaper evaluation)."""
        zeros = np.zeros((1, len(q)))
        return self.postprocess_batch(np.array([t]), q[None], qd[None], zeros, np.zeros((1, self.m)))["energy"][0]

    def force_frames(self, q, qd):
        """The body states force elements act on (:class:`solver.forces.BodyFrames`): the bodies'
        frames, plus whatever extra points a formulation attaches forces to."""
        return self.frames(q, qd)

    def compiled_reduction(self, part, tol=POSITION_TOL):
        """The reduced equations of partition ``part`` in compiled code (an object with ``solve``,
        see :class:`solver.codegen.reduced.CompiledReduction`; ``tol``: its position Newton's
        bound), or None: the Python path is used."""
        return None

    def normalize(self, q):
        """Project q back onto coordinate manifolds (e.g. unit Euler parameters); default none."""
        return q

