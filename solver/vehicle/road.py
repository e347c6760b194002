"""Road surface queried by position: flat ground plus one obstacle profile along x (Choi & Yoo (2000) §5).

The road is the global x–y plane at z = ``height`` (vehicle models use z up) plus a profile h(x)
that is constant across y::

    flat       h(x) = 0
    half_sine  h(x) = H sin(π ξ)            for 0 ≤ ξ = (x − x0)/L ≤ 1, else 0
    step       h(x) = H ξ² (3 − 2ξ)         smooth cubic ramp of length L, 0 before, H after
    table      h(x) = f(x)                  the ``table`` field, a number, an expression or a
                                             cubic-spline table written in the variable t (= x)

x0 = ``start``, H = ``obstacle_height``, L = ``obstacle_length``.  The upward unit normal is
n = (−h′, 0, 1)/√(1 + h′²).  The half-sine (Choi & Yoo (2000)'s bump, 0.1 m × 2.5 m) has a slope kink at its
ends; the step is a C¹ ramp so that an integrator never meets a jump in height.
"""
from __future__ import annotations

import math

import numpy as np

from ..expressions import time_function
from ..model.elements import ROAD_PROFILES as PROFILES       # the model layer declares them

__all__ = ["PROFILES", "RoadSurface"]


class RoadSurface:
    """Height z(x) and upward normal of a road element (:class:`solver.model.elements.Road`)."""

    def __init__(self, e):
        self.name = e.name
        self.z0, self.kind = e.height, e.profile
        self.x0, self.H, self.L = e.start, e.obstacle_height, e.obstacle_length
        self.table = time_function(e.table) if self.kind == "table" else None

    def profile(self, x):
        """(h, dh/dx) of the obstacle profile at x (m, dimensionless)."""
        if self.kind == "table":
            return float(self.table.value(x)), float(self.table.d1(x))
        if self.kind == "flat":
            return 0.0, 0.0
        xi = (x - self.x0) / self.L
        if self.kind == "half_sine":
            if 0.0 <= xi <= 1.0:
                return self.H * math.sin(math.pi * xi), self.H * math.pi / self.L * math.cos(math.pi * xi)
            return 0.0, 0.0
        if xi <= 0.0:
            return 0.0, 0.0
        if xi >= 1.0:
            return self.H, 0.0
        return self.H * xi * xi * (3.0 - 2.0 * xi), self.H * 6.0 * xi * (1.0 - xi) / self.L

    def height(self, x, y=0.0):
        """Road height z at (x, y), global (m)."""
        return self.z0 + self.profile(x)[0]

    def normal(self, x, y=0.0):
        """Upward unit normal at (x, y)."""
        slope = self.profile(x)[1]
        return np.array([-slope, 0.0, 1.0]) / math.sqrt(1.0 + slope * slope)
