"""Joint armature: the inertia ``a`` of a rotor that turns with a joint coordinate θ (MuJoCo's joint
``armature``, Todorov, Erez & Tassa (2012), the MJCF reference: "constant scalar inertia values
added to the diagonal of the mass matrix"; a geared motor's reflected inertia n² I_rotor).  Its kinetic energy is T_a = ½ a θ̇²; the rotor's own gyroscopic terms
and its reaction on the body carrying it are left out, as MuJoCo leaves them out.

With θ a function of the coordinates q (the joint coordinate a driver measures), θ̇ = g q̇ with
g = ∂θ/∂q, and θ̈ = g q̈ + ġq̇ (ġq̇ the velocity-quadratic part: −γ of a driver row on θ).
Lagrange's equations of T_a give  d/dt(a θ̇ gᵀ) − a θ̇ (∂(g q̇)/∂q)ᵀ = a gᵀ θ̈  (the Hessian of θ
is symmetric, so the two terms in θ̇ cancel), i.e.

    M += a gᵀ g,    Q −= a gᵀ (ġ q̇).

In the relative formulation a tree joint's θ is a coordinate of q (g = e_col, ġ = 0): M_θθ += a, as
MuJoCo adds ``dof_armature`` to the diagonal of qM.  A cut joint's and the Cartesian formulation's θ
take g and ġq̇ from the joint coordinate's chain rule (the driver row's Φ_q and γ).
"""
from __future__ import annotations

import numpy as np


def joint_armatures(model) -> list:
    """(joint index in ``model.joints``, coordinate, a) of each joint with a non-zero armature: a
    revolute's rotation, a prismatic's translation (the joint's first coordinate)."""
    return [(k, j.coordinates()[0], float(j.armature)) for k, j in enumerate(model.joints.values())
            if j.armature]


def kinetic_energy(values, rates):
    """Σ ½ a θ̇² of the armatures ``values`` (n) and their coordinate rates (…, n) (one state or stacked)."""
    return 0.5 * (rates ** 2) @ np.asarray(values, dtype=float) if len(values) else 0.0
