"""A run-time speed scale of a model's drivers: the drivers follow their motions f on a warped time τ.

With a scale s(t) ≥ 0 held piecewise constant (changed between an interactive run's chunks),

    τ(t) = τ_k + s_k (t − t_k)   on [t_k, t_{k+1}),   τ_0 = 0, τ_{k+1} = τ_k + s_k (t_{k+1} − t_k),

so dτ/dt = s_k and d²τ/dt² = 0 inside a piece, and a driven coordinate follows

    θ(t) = f(τ),   θ̇ = s_k f'(τ),   θ̈ = s_k² f''(τ)

(the chain rule).  τ is continuous, so the driven positions are; a change of s is a jump of the
driven rates (as a motor's speed set-point jumps): the run resolves the velocities at that instant
(:class:`solver.analysis.interactive.InteractiveRun`).  s = 1 from t = 0 is the model's own motion.

:func:`warp_drivers` puts :class:`Warped` functions in the places a run's workspace evaluates its
drivers (the generated systems' driver values, the formulations' DriverRow functions); a warped
function has no C form (:func:`solver.codegen.timefunctions.c_time_function` refuses it), so a run
with warped drivers steps in the Python loop — correct, only slower than the compiled loop.
"""
from __future__ import annotations

import bisect
import dataclasses


class TimeWarp:
    """τ(t) of a piecewise-constant speed scale (module docstring): pieces (t_k, τ_k, s_k)."""

    def __init__(self):
        self.starts, self.taus, self.scales = [0.0], [0.0], [1.0]

    def set_scale(self, t, scale):
        """From t on, dτ/dt = scale (a piece started at t replaces the last when it starts at t)."""
        tau = self.tau(t)
        if self.starts[-1] == t:
            self.starts.pop(), self.taus.pop(), self.scales.pop()
        self.starts.append(t)
        self.taus.append(tau)
        self.scales.append(float(scale))

    @property
    def scale(self):
        return self.scales[-1]

    def _piece(self, t):
        return max(bisect.bisect_right(self.starts, t) - 1, 0)

    def tau(self, t):
        k = self._piece(t)
        return self.taus[k] + self.scales[k] * (t - self.starts[k])

    def rate(self, t):
        return self.scales[self._piece(t)]


class Warped:
    """A time function f on the warped time: value f(τ), d1 s·f'(τ), d2 s²·f''(τ)."""

    def __init__(self, function, warp):
        self.function, self.warp = function, warp

    def __repr__(self):
        return f"{self.function!r} at the driver speed scale"

    def value(self, t):
        return self.function.value(self.warp.tau(t))

    def d1(self, t):
        return self.warp.rate(t) * self.function.d1(self.warp.tau(t))

    def d2(self, t):
        return self.warp.rate(t) ** 2 * self.function.d2(self.warp.tau(t))


def warp_drivers(system, warp):
    """Make a run's workspace ``system`` evaluate its drivers on ``warp``'s time.  Returns False when
    its constraints keep the driver functions where this does not reach (the generic Cartesian
    formulation's batched and parametric constraint sets): nothing changed then."""
    generated = hasattr(system, "_driver_fns")
    if not generated and (getattr(system, "batch", None) is not None or getattr(system, "param", None) is not None):
        return False
    system.drivers = [dataclasses.replace(d, function=Warped(d.function, warp)) for d in system.drivers]
    if generated:
        from ..codegen.system import DriverValues
        system._driver_fns = [Warped(fn, warp) for fn in system._driver_fns]
        system._drive = DriverValues(system._driver_fns)
    return True
