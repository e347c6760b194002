"""Tire force element: vertical contact force from penetration of the wheel disc into the road and
longitudinal / lateral forces from the Magic Formula with combined slip (Choi & Yoo (2000) §5;
H. B. Pacejka, *Tire and Vehicle Dynamics*, 3rd ed., 2012).

Geometry (global, z up).  The wheel body's CM is the wheel centre c; a = A a′ its spin axis;
n the road's upward normal under c.  The disc's lowest point is P = c + R d with
d = −(n − (n·a)a)/|n − (n·a)a|; penetration δ = (z_road(P) − P_z) n_z (exact on a flat road);
the forces act at the contact point P + δ n on the road surface.
Contact axes: e_x = a × n / |a × n| (forward for a positive spin about a), e_y = n × e_x.

Contact velocity.  V = v_c + ω_⊥ × (P − c) with ω_⊥ = ω − (ω·a)a: the velocity of the contact
point carried by the wheel without its spin, so that δ̇ = −n·V and the slip velocities
v_x = e_x·V, v_y = e_y·V; Ω = ω·a is the spin rate.

Forces on the wheel, applied at P::

    F_z = max(0, k δ + c δ̇)  for δ > 0, else 0                       (contact loss)
    κ = (Ω R − v_x)/ṽ,   α = arctan(−v_y/ṽ),   ṽ = √(v_x² + v_ε²)    (slips, regularized at rest)
    F_x0 = MF(κ; B_x, C_x, μF_z, E_x),  F_y0 = MF(α; B_y, C_y, μF_z, E_y)
    MF(x; B, C, D, E) = D sin[C arctan{Bx − E(Bx − arctan Bx)}]        (Pacejka 2012 eq. 4.49)
    B_x = c_κ/(C_x μ),  B_y = c_α/(C_y μ)   so that ∂F_x0/∂κ = c_κ F_z and ∂F_y0/∂α = c_α F_z at 0
    F_x = G_xα F_x0,  G_xα = cos[arctan(B_xα α)],  B_xα = r_Bx1 cos[arctan(r_Bx2 κ)]
    F_y = G_yκ F_y0,  G_yκ = cos[arctan(B_yκ κ)],  B_yκ = r_By1 cos[arctan(r_By2 α)]
                                   (combined slip, Pacejka 2012 §4.3.2 eqs. 4.E50–4.E63 without
                                    shifts and camber, C_xα = C_yκ = 1)
    F = F_x e_x + F_y e_y + F_z n
    rolling resistance torque  −f_r F_z R s(Ω) a,   s(Ω) = ΩR/√((ΩR)² + v_ε²)
    aligning torque            M_z n,  M_z = −t(α) F_y,  t(α) = t_0/√(1 + (B_y α)²)  (pneumatic trail)

v_ε (``low_speed``) makes the slips smooth through standstill: below it the slip forces act like
viscous dampers (F_x ≈ c_κ F_z (ΩR − v_x)/v_ε).  No relaxation length: the slip forces follow
the slips instantly (adequate above walking speed; documented in docs/vehicle.md).
Potential energy of the tire spring: ½ k δ² while in contact.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..math.namespace import NUMPY_MATH, along, dot
from ..math.rotations import cross, matvec
from .road import road_normal

FLAT = 1e-9        # |n − (n·a)a| below this: the wheel lies flat on the road, no rolling contact


# The tire's formulas are written once, for numbers (NUMPY_MATH) and for the code generator's sympy
# expressions (solver.codegen.derive passes its namespace, solver.math.namespace).


def magic_formula(x, B, C, D, E, m=NUMPY_MATH):
    """Pacejka's Magic Formula y = D sin[C arctan{Bx − E(Bx − arctan Bx)}] (2012, eq. 4.49)."""
    Bx = B * x
    return D * m.sin(C * m.atan(Bx - E * (Bx - m.atan(Bx))))


def combined_slip_forces(kappa, alpha, Fz, p, m=NUMPY_MATH):
    """(F_x, F_y) for slip ratio κ, slip angle α (rad) and vertical load F_z (N) with parameters
    ``p`` (a :class:`TireParameters`), per the module docstring."""
    D = p.friction * Fz
    Fx0 = magic_formula(kappa, p.Bx, p.shape_x, D, p.curvature_x, m)
    Fy0 = magic_formula(alpha, p.By, p.shape_y, D, p.curvature_y, m)
    Gxa = m.cos(m.atan(p.rbx1 * m.cos(m.atan(p.rbx2 * kappa)) * alpha))
    Gyk = m.cos(m.atan(p.rby1 * m.cos(m.atan(p.rby2 * alpha)) * kappa))
    return Gxa * Fx0, Gyk * Fy0


def tire_moments(Fz, Fy, spin, alpha, p, m=NUMPY_MATH):
    """(rolling-resistance moment about the wheel axis, aligning moment about the normal):
    M_r = −f_r F_z R ω R / √((ωR)² + v_ε²), M_z = −t_p F_y / √(1 + (B_y α)²) (module docstring)."""
    rolling = -p.rolling_resistance * Fz * p.radius * spin / m.sqrt(spin * spin + p.low_speed ** 2)
    return rolling, -p.trail / m.sqrt(1 + (p.By * alpha) ** 2) * Fy


@dataclass(frozen=True)
class TireParameters:
    """The numbers of a tire element (:class:`solver.model.elements.Tire`) with B_x, B_y derived."""
    radius: float
    stiffness: float
    damping: float
    friction: float
    slip_stiffness: float
    cornering_stiffness: float
    shape_x: float
    shape_y: float
    curvature_x: float
    curvature_y: float
    rbx1: float
    rbx2: float
    rby1: float
    rby2: float
    rolling_resistance: float
    trail: float
    low_speed: float

    @classmethod
    def of(cls, e):
        return cls(**{name: e.values[name] for name in cls.__dataclass_fields__})

    @property
    def Bx(self):
        return self.slip_stiffness / (self.shape_x * self.friction)

    @property
    def By(self):
        return self.cornering_stiffness / (self.shape_y * self.friction)


@dataclass
class TireState:
    """Contact quantities of one tire at one instant (global vectors); numbers, or the code
    generator's sympy expressions."""
    touching: bool         # the disc penetrates the road: δ > 0 and the wheel does not lie flat
    contact: bool          # touching and pressed, k δ + c δ̇ > 0: the forces act
    delta: float           # penetration (m), ≤ 0 when airborne
    delta_dot: float       # penetration rate (m/s)
    kappa: float           # slip ratio
    alpha: float           # slip angle (rad)
    Fx: float              # forces in the contact axes, 0 out of contact
    Fy: float
    Fz: float
    point: np.ndarray      # contact point on the road surface
    force: np.ndarray      # F_x e_x + F_y e_y + F_z n, 0 out of contact
    torque: np.ndarray     # rolling-resistance + aligning torque, 0 out of contact


def _at(v, k):
    """Component k of a vector, or of stacked vectors (…, 3)."""
    return v[k] if np.ndim(v) == 1 else v[..., k]


def tire_penetration(c, a, p, surface, m=NUMPY_MATH):
    """(n, P, δ, touching) of the module docstring's geometry: the road's upward normal n under the
    wheel centre c, the disc's lowest point P = c + R d, the penetration δ = (z_road(P) − P_z) n_z and
    whether the disc penetrates the road (δ > 0 and the wheel does not lie flat, |n − (n·a)a| ≥ FLAT),
    for a wheel of spin axis a (numbers, stacked numbers or the generator's symbols, as
    :func:`tire_contact`, which starts with it; the potential ½ k δ² reads it alone)."""
    n = road_normal(m.let(surface(_at(c, 0))[1]), m)
    radial = m.vector(n - along(m.let(dot(n, a)), a))
    size = m.let(m.sqrt(dot(radial, radial)))
    P = m.vector(c - along(p.radius / size, radial))
    height = m.let(surface(_at(P, 0))[0])
    delta = m.let((height - _at(P, 2)) * _at(n, 2))
    return n, P, delta, (size >= FLAT) & (delta > 0)


def tire_contact(c, a, v, w, p, surface, m=NUMPY_MATH) -> TireState:
    """The tire of the module docstring on a wheel with centre c, spin axis a, CM velocity v and
    angular velocity ω (global); ``p`` its :class:`TireParameters`, ``surface(x)`` the road's
    (height, slope) at x.  Written once for numbers (``m`` = NUMPY_MATH: one state, or N stacked
    states, c, a, v, ω (N, 3)) and for the code generator's sympy expressions (``m`` names every
    intermediate, :mod:`solver.math.namespace`).
    Out of contact (the wheel lies flat, |n − (n·a)a| < 1e-9, or δ ≤ 0, or k δ + c δ̇ ≤ 0) the
    forces and torques are 0: gated, not branched, so the generated code computes every quantity
    (those of a flat wheel are not finite) and selects."""
    n, P, delta, touching = tire_penetration(c, a, p, surface, m)
    P = m.vector(P + along(delta, n))            # the contact point on the road surface
    V = m.vector(v + cross(w - along(m.let(dot(w, a)), a), P - c))
    ex = m.vector(cross(a, n))
    ex = m.vector(along(1 / m.sqrt(dot(ex, ex)), ex))
    ey = m.vector(cross(n, ex))
    Fz = m.let(p.stiffness * delta - p.damping * dot(n, V))     # k δ + c δ̇, δ̇ = −n·V
    vx, vy, spin = m.let(dot(ex, V)), m.let(dot(ey, V)), m.let(dot(w, a) * p.radius)
    vt = m.let(m.sqrt(vx * vx + p.low_speed ** 2))
    kappa, alpha = m.let((spin - vx) / vt), m.let(m.atan(-vy / vt))
    Fx, Fy = (m.let(F) for F in combined_slip_forces(kappa, alpha, Fz, p, m))
    rolling, Mz = tire_moments(Fz, Fy, spin, alpha, p, m)
    contact = touching & (Fz > 0)
    return TireState(touching, contact, delta, -dot(n, V), kappa, alpha,
                     *(m.gate(contact, F) for F in (Fx, Fy, Fz)), P,
                     m.gate(contact, along(Fx, ex) + along(Fy, ey) + along(Fz, n)),
                     m.gate(contact, along(rolling, a) + along(Mz, n)))


class TireForce:
    """Evaluator of a tire element on body states, one or stacked (see module docstring; a table road
    is evaluated state by state)."""

    def __init__(self, e, road, index, init):
        self.name = e.name
        self.b = index[e.body]
        self.axis_b = init[self.b][1].T @ np.asarray(e.axis, dtype=float)
        self.road = road
        self.p = TireParameters.of(e)
        self.stacked = road.table is None

    def state(self, frames) -> TireState:
        c, A, v, w = frames.get(self.b)
        with np.errstate(divide="ignore", invalid="ignore"):        # a flat wheel: gated out
            return tire_contact(c, matvec(A, self.axis_b), v, w, self.p, self.road.surface)

    def apply(self, t, frames, out):
        s = self.state(frames)
        if np.ndim(s.contact) == 0:
            if s.contact:
                out.at_point(self.b, s.force, s.point, frames)
                out.torque(self.b, s.torque)
            return
        # stacked: the force is 0 out of contact, where the point may not be finite (a flat wheel)
        out.at_point(self.b, s.force, NUMPY_MATH.gate(s.contact, s.point), frames)
        out.torque(self.b, s.torque)

    def potential(self, frames):
        """½ k δ² while the disc penetrates the road (δ > 0, the wheel not flat), else 0: from the
        geometry alone (:func:`tire_penetration`), as :meth:`state` has it."""
        c, A, _, _ = frames.get(self.b)
        with np.errstate(divide="ignore", invalid="ignore"):        # a flat wheel: gated out
            _, _, delta, touching = tire_penetration(c, matvec(A, self.axis_b), self.p, self.road.surface)
        return NUMPY_MATH.gate(touching, 0.5 * self.p.stiffness * delta * delta)

    def conserves_energy(self):
        """Rolling contact with slip does work that is not in V."""
        return False
