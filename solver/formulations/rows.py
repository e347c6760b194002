"""The rows a formulation compiles each joint and driver into, as named records.

A :class:`JointRows` is one joint of a Cartesian system (its constraint evaluator, its bodies, the
q columns its equations touch and its rows of Φ); a :class:`DriverRow` is one driver, the
rheonomic constraint θ(q) − f(t) = 0 on a joint coordinate θ (Haug's driving constraints, as in
Lee, Lee & Bae (2013) eq. 1).  A coupler is the same row with f replaced by a polynomial of another
joint's coordinate, θ_j − p(θ_i) = 0 (a DriverRow whose ``source`` is a :class:`CouplerSource`;
f ≡ 0).  The Cartesian and relative formulations build them; the batched evaluators and the code
generator read them by field.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..expressions import time_function
from .system import Equation


@dataclass(frozen=True)
class JointRows:
    """One joint of a Cartesian system.  ``joint``: its
    :class:`~solver.constraints.joints.CartesianJoint`; ``body_i``/``body_j``: body indices (−1:
    ground); ``cols``: the global q columns of its bodies, ``mask``: which of the 14 local columns
    (7 per side) exist; ``rows``: its rows of Φ."""
    joint: Any
    body_i: int
    body_j: int
    cols: np.ndarray
    mask: np.ndarray
    rows: list


@dataclass(frozen=True)
class DriverRow:
    """One driver.  ``joint``: index of the driven joint in the system's joint list;
    ``coordinate``: the joint coordinate it prescribes (a key of
    :data:`solver.constraints.joints.COORDINATES`); ``function``: f(t) (a time function with
    value, d1, d2); ``row``: its row of Φ; ``column`` (relative formulation): the tree column of
    the coordinate when the joint is a tree joint (the row is then q_column − f(t)), else None."""
    joint: int
    coordinate: str
    function: Any
    row: int
    column: int | None = None
    source: CouplerSource | None = None


@dataclass(frozen=True)
class CouplerSource:
    """The leading coordinate θ_i of a coupler row Φ = θ_j − p(θ_i), p(x) = Σ c_k x^k (``coefficients``
    c_0, c_1, …): ``joint`` (index in the system's joint list), ``coordinate``, and (relative
    formulation) ``column``, its tree column or None.  With θ_i's gradient ∇θ_i, rate θ̇_i and
    velocity-quadratic term (θ̈_i = ∇θ_i q̈ + quad_i), the row's terms beside θ_j's own are

        Φ −= p(θ_i),   Φ_q −= p'(θ_i) ∇θ_i,   γ += p'(θ_i) quad_i + p''(θ_i) θ̇_i²

    (γ = −(Φ_q q̇)_q q̇: Φ̈ = ∇θ_j q̈ + quad_j − p' (∇θ_i q̈ + quad_i) − p'' θ̇_i²)."""
    joint: int
    coordinate: str
    coefficients: tuple
    column: int | None = None

    def derivatives(self, x):
        """(p, p', p'') at x (a number or an array), by Horner's rule."""
        p = dp = ddp = 0.0 * x
        for c in reversed(self.coefficients):
            ddp = ddp * x + 2.0 * dp
            dp = dp * x + p
            p = p * x + c
        return p, dp, ddp

    def terms(self, value, grad, quad=None, rate=None):
        """What the leading coordinate adds to the row (class docstring): (ΔΦ, ΔΦ_q, Δγ); Δγ is
        None when ``quad`` is."""
        p, dp, ddp = self.derivatives(value)
        return -p, -dp * grad, None if quad is None else dp * quad + ddp * rate * rate


def coupler_rows(model, joint_pos, equations, column=None):
    """The couplers of ``model`` as rows appended to ``equations``: ([DriverRow with a CouplerSource],
    names).  ``joint_pos``: joint name → index; ``column(joint, coordinate)``: the tree column of a
    joint coordinate or None (relative formulation)."""
    rows, names = [], []
    column = column or (lambda joint, coordinate: None)
    for c in model.couplers.values():
        ci, cj = model.coupler_coordinates(c.name)
        i, j = joint_pos[c.joint_i], joint_pos[c.joint_j]
        source = CouplerSource(i, ci, c.polynomial(), column(i, ci))
        rows.append(DriverRow(j, cj, time_function(0.0), len(equations), column(j, cj), source))
        names.append(c.name)
        equations.append(Equation(c.name, "coupler", f"{cj} of joint '{c.joint_j}' = p({ci} of joint '{c.joint_i}')"))
    return rows, names
