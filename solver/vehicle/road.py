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

from ..expressions import time_function
from ..math.namespace import NUMPY_MATH
from ..model.elements import ROAD_PROFILES as PROFILES       # the model layer declares them

__all__ = ["PROFILES", "RoadSurface", "road_normal", "road_profile"]


def road_profile(kind, x, x0, H, L, m=NUMPY_MATH):
    """(h, h′) at x of the profiles flat, half_sine and step (module docstring), written once for
    numbers (:class:`RoadSurface`) and for the code generator's sympy Piecewise (``m``:
    :mod:`solver.math.namespace`).  The table profile is numeric only."""
    if kind == "flat":
        return 0, 0
    xi = (x - x0) / L
    if kind == "half_sine":
        inside = (xi >= 0) & (xi <= 1)
        return (m.piecewise((H * m.sin(m.pi * xi), inside), (0, True)),
                m.piecewise((H * m.pi / L * m.cos(m.pi * xi), inside), (0, True)))
    return (m.piecewise((0, xi <= 0), (H, xi >= 1), (H * xi * xi * (3 - 2 * xi), True)),
            m.piecewise((0, xi <= 0), (0, xi >= 1), (6 * H * xi * (1 - xi) / L, True)))


def road_normal(slope, m=NUMPY_MATH):
    """Upward unit normal n = (−h′, 0, 1)/√(1 + h′²) of a road of slope h′ (numbers or sympy)."""
    norm = m.sqrt(1 + slope * slope)
    return m.vector([-slope / norm, 0, 1 / norm])


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
        return road_profile(self.kind, x, self.x0, self.H, self.L)

    def surface(self, x, y=0.0):
        """(road height z, slope dh/dx) at (x, y), global (m, dimensionless)."""
        h, slope = self.profile(x)
        return self.z0 + h, slope

    def height(self, x, y=0.0):
        """Road height z at (x, y), global (m)."""
        return self.surface(x, y)[0]

    def normal(self, x, y=0.0):
        """Upward unit normal at (x, y)."""
        return road_normal(self.profile(x)[1])
