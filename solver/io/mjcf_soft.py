"""MuJoCo's soft joint constraints — limits and friction loss — as this model's joint stops and
joint friction (solver/io/mjcf.py; docs/import.md).

MuJoCo does not enforce a limit or a friction loss rigidly: each is a constraint row whose force
drives the row's acceleration toward a reference (Todorov (2014), "Convex and analytically-invertible
dynamics with contacts and constraints"; MuJoCo's documentation, Computation ▸ Soft constraints):

    a₁ + d (b v + k r) = (1 − d) a₀,      k = 1/(d_max² τ² ζ²),  b = 2/(d_max τ)    (solref = τ, ζ > 0)
                                          k = −solref[0]/d_max², b = −solref[1]/d_max  (solref ≤ 0)

with r the violation, v its rate, a₀ the acceleration without the constraint, d = d(r) the
impedance of ``solimp`` (d_min at r = 0 rising to d_max over its width) and τ at least twice the
time step unless ``refsafe`` is disabled.  On one coordinate of effective mass m = 1/``dof_invweight0``
(the mass MuJoCo itself scales the rows by) that is the force f = m (a₁ − a₀) = −m d (a₀ + b v + k r).

* A limit past its range (d ≈ d_max once the violation exceeds the impedance width): the stop
  F = −k_s r − c_s v with k_s = m d_max² k = m/(τ² ζ²) and c_s = m d_max b = 2m/τ (a critically
  damped spring of time constant τ for ζ = 1), the damping reaching c_s at the width (at least
  MIN_DEPTH), and never pulling (``stop_push_only``: a constraint row's force is ≥ 0).  The share
  d a₀ of the other forces that MuJoCo's row also cancels (which makes it stiffer under a steady
  load, by 1/(1 − d)) is not modelled, nor the impedance's ramp from d_min within the width (weaker
  there in MuJoCo).  MuJoCo's active row is f = −(θ̈ − a_ref)/R with R = (1 − d)/d · dof_invweight0
  (its optimality condition), i.e. exactly an inertia m d/(1 − d) added to the coordinate while the
  limit is violated plus the force m d/(1 − d)·a_ref: modelling that needs a mass term from a force
  element (state-dependent), which the formulations do not have.  Where d_max is near 1 the
  difference is large: dm_control's rodent (solimp 0.99 0.9999) sags through its tail's limits under
  gravity (docs/import.md).
* A friction loss F_f (no position, r = 0, d = d_min): |f| ≤ F_f, viscous −m d_min b v below it; as
  the joint friction with μ_s = μ_d = 1, preload F_f, radius 1 (the slip speed is the coordinate
  rate, the friction limit F_f), no reaction load, and the stiction speed v_s at which the
  law's initial slope 3F_f/(2v_s) equals MuJoCo's m d_min b: v_s = 3 F_f/(2 m d_min b).  MuJoCo's
  row also holds a stuck joint against a share d a₀ of the other forces; ours creeps below v_s.
"""
from __future__ import annotations

MIN_DEPTH = 1e-3        # m or rad: the least penetration at which a stop's damping is full


def reference(solref, solimp, timestep, refsafe=True):
    """(k, b, d_min, d_max, width) of a row's ``solref`` and ``solimp`` (module docstring)."""
    dmin, dmax, width = (float(x) for x in solimp[:3])
    if solref[0] > 0:
        tau, zeta = float(solref[0]), float(solref[1])
        if refsafe:
            tau = max(tau, 2.0 * timestep)
        return 1.0 / (dmax * dmax * tau * tau * zeta * zeta), 2.0 / (dmax * tau), dmin, dmax, width
    return -float(solref[0]) / (dmax * dmax), -float(solref[1]) / dmax, dmin, dmax, width


def stop_fields(mass, solref, solimp, timestep, refsafe=True) -> dict:
    """The Joint stop fields of a MuJoCo limit on a coordinate of effective mass ``mass``."""
    k, b, _, dmax, width = reference(solref, solimp, timestep, refsafe)
    return {"stop_stiffness": mass * dmax * dmax * k, "stop_exponent": 1.0, "stop_damping": mass * dmax * b,
            "stop_depth": max(width, MIN_DEPTH), "stop_push_only": True}


def friction_fields(mass, loss, solref, solimp, timestep, refsafe=True) -> dict:
    """The joint_friction fields of a MuJoCo friction loss ``loss`` (N or N·m) on a coordinate of
    effective mass ``mass``."""
    _, b, dmin, dmax, _ = reference(solref, solimp, timestep, refsafe)
    v_s = 1.5 * loss / (mass * (dmin if dmin > 0.0 else dmax) * b)      # d_min = 0: the impedance's top
    return {"static_coefficient": 1.0, "dynamic_coefficient": 1.0, "stiction_velocity": v_s,
            "transition_velocity": 2.0 * v_s, "preload": loss, "radius": 1.0, "reaction_load": False}
