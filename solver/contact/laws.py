"""Contact force laws at one contact point: compliant normal force and regularized Coulomb friction.

Normal force, penetration δ > 0 and its rate δ̇ (positive while approaching)::

    f_n = max(0, k δ^e + c(δ) δ̇)

with the damping c(δ) ramped in from zero at first touch, so that f_n is continuous there:

* ``impact`` (the Adams IMPACT function, MSC Adams/Solver reference "IMPACT"):
  c(δ) = c_max STEP(δ; 0, 0, d_max, 1), Adams' cubic step (h0 below x0, h1 above x1, h0 + (h1 − h0) Δ²(3 − 2Δ) between, Δ = (x − x0)/(x1 − x0)); the full damping acts from
  the penetration d_max on.  Its restitution has no closed form (it depends on the impact speed,
  the mass, d_max); docs/contact.md gives how to choose c_max.
* ``hunt_crossley`` (K. H. Hunt, F. R. E. Crossley, "Coefficient of restitution interpreted as
  damping in vibroimpact", J. Appl. Mech. 42 (1975) 440–445): c(δ) = λ δ^e.  For a mass striking a
  fixed surface at v_in (no other force during the contact) the exit speed v_out solves exactly

      a (v_in + v_out) = ln[(1 + a v_in)/(1 − a v_out)],   a = λ/k

  (the phase-plane integral of m v dv = −δ^e (k + λ v) dδ over the whole contact, ∫δ^e dδ = 0),
  whatever e and the mass; for small a v_in, e_r = v_out/v_in ≈ 1 − (2/3) a v_in, i.e. λ = (3/2) α k
  gives Hunt & Crossley's e_r ≈ 1 − α v_in.  :func:`hunt_crossley_exit_speed` solves it.

Friction (the Adams contact friction model): the force −μ(|v_t|) f_n v_t/|v_t| at the contact point,
v_t the slip velocity (relative tangential velocity of body j's point over body i's), with::

    μ(s) = STEP(s; −v_s, −μ_s, v_s, μ_s)      for s ≤ v_s   (stiction: 0 at rest, μ_s at v_s)
    μ(s) = STEP(s; v_s, μ_s, v_d, μ_d)        for v_s < s < v_d
    μ(s) = μ_d                                 for s ≥ v_d

A body held by friction creeps at the slip speed s* where μ(s*) f_n equals the tangential load:
the regularization's creep (docs/contact.md).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


from ..math.friction import friction_coefficient
from ..math.impact import step


@dataclass(frozen=True)
class ContactLaw:
    """The numbers of a contact element (:class:`solver.model.elements.Contact`); each field a
    number, or an array of one value per contact point (the methods then evaluate every point)."""
    stiffness: float
    exponent: float
    damping: float
    damping_law: str
    penetration_depth: float
    static_friction: float
    dynamic_friction: float
    stiction_velocity: float
    friction_velocity: float

    @classmethod
    def of(cls, values: dict):
        return cls(**{name: values[name] for name in cls.__dataclass_fields__})

    @classmethod
    def stacked(cls, laws):
        """The laws of several elements as one law of arrays (one value per element)."""
        return cls(**{name: np.array([getattr(law, name) for law in laws]) for name in cls.__dataclass_fields__})

    def take(self, owner):
        """A law of arrays at the elements ``owner`` (each contact point's element)."""
        return type(self)(**{name: getattr(self, name)[owner] for name in self.__dataclass_fields__})

    def damping_at(self, delta):
        """c(δ) (module docstring)."""
        return self.damping * np.where(np.equal(self.damping_law, "hunt_crossley"), delta ** self.exponent,
                                       step(delta, 0.0, 0.0, self.penetration_depth, 1.0))

    def normal_force(self, delta, rate):
        """f_n = max(0, k δ^e + c(δ) δ̇) for a penetration δ > 0 approaching at δ̇."""
        return np.maximum(0.0, self.stiffness * delta ** self.exponent + self.damping_at(delta) * rate)

    def potential(self, delta):
        """Elastic energy k δ^(e+1)/(e+1) stored at penetration δ > 0."""
        return self.stiffness * delta ** (self.exponent + 1.0) / (self.exponent + 1.0)

    def friction_coefficient(self, speed):
        """μ(s) of the slip speed s ≥ 0: the Adams stick–slip law of joint friction too
        (:func:`solver.math.friction.friction_coefficient`)."""
        return friction_coefficient(speed, self.static_friction, self.dynamic_friction, self.stiction_velocity,
                                    self.friction_velocity)

    def dissipative(self):
        """Damping or friction: its work is not all in the potential."""
        return bool(np.any(self.damping > 0.0) or np.any(self.static_friction > 0.0)
                    or np.any(self.dynamic_friction > 0.0))

    def creep_speed(self, ratio):
        """The slip speed s* ≤ v_s at which μ(s*) = ``ratio`` (tangential over normal load) for
        ratio < μ_s: how fast a body held by friction creeps."""
        if not 0.0 <= ratio < self.static_friction:
            raise ValueError(f"ratio {ratio:g} is not below μ_s = {self.static_friction:g}")
        from scipy.optimize import brentq     # imported on use (scipy.optimize: 0.3 s of a first run)
        return brentq(lambda s: float(self.friction_coefficient(s)) - ratio, 0.0, self.stiction_velocity,
                      xtol=1e-15)


def hunt_crossley_exit_speed(v_in, stiffness, damping):
    """v_out of a Hunt–Crossley impact at v_in (module docstring): the root in (0, v_in] of
    a (v_in + v_out) − ln[(1 + a v_in)/(1 − a v_out)] = 0, a = λ/k."""
    a = damping / stiffness
    if a * v_in == 0.0:
        return v_in

    def gap(v_out):
        return a * (v_in + v_out) - math.log((1.0 + a * v_in) / (1.0 - a * v_out))
    from scipy.optimize import brentq
    return brentq(gap, 1e-12 * v_in, min(v_in, (1.0 - 1e-15) / a), xtol=1e-15 * v_in)
