"""The rows a formulation compiles each joint and driver into, as named records.

A :class:`JointRows` is one joint of a Cartesian system (its constraint evaluator, its bodies, the
q columns its equations touch and its rows of Φ); a :class:`DriverRow` is one driver, the
rheonomic constraint θ(q) − f(t) = 0 on a joint coordinate θ (Haug's driving constraints, as in
Lee, Lee & Bae (2013) eq. 1).  The Cartesian and relative formulations build them; the batched
evaluators and the code generator read them by field.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


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
