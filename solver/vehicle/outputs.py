"""Vehicle outputs computed from a run's results (Choi & Yoo (2000)'s plots): tire forces per wheel,
chassis roll angle, chassis accelerations in its heading frame."""
from __future__ import annotations

import numpy as np

from ..forces import BodyFrames
from ..math.rotations import rotation_matrix
from .road import RoadSurface
from .tire import TireForce


def tire_forces(model, results) -> dict:
    """{tire name: (N, 3) array of (F_x, F_y, F_z) in the tire's contact axes} at every output
    point, re-evaluated from the recorded body states (the same functions the run used)."""
    names = list(results.body_names)
    index = {n: k for k, n in enumerate(names)}
    init = {k: (np.array(model.bodies[n].position, dtype=float),
                rotation_matrix(np.array(model.bodies[n].orientation, dtype=float))) for n, k in index.items()}
    tires = [TireForce(e, RoadSurface(model.forces[e.road]), index, init)
             for e in model.forces.values() if e.KIND == "tire"]
    r = np.stack([results.body_position(n) for n in names], axis=1)
    A = np.stack([results.body_rotation(n) for n in names], axis=1)
    v = np.stack([results.body_velocity(n) for n in names], axis=1)
    w = np.stack([results.body_angular_velocity(n) for n in names], axis=1)
    out = {t.name: np.zeros((len(results.t), 3)) for t in tires}
    for k in range(len(results.t)):
        frames = BodyFrames(r[k], A[k], v[k], w[k])
        for t in tires:
            s = t.state(frames)
            out[t.name][k] = (s.Fx, s.Fy, s.Fz)
    return out


def roll_angle(results, body="chassis"):
    """Roll angle φ = atan2(A₃₂, A₃₃) (rad) of the body (z-y-x Euler angles, x forward)."""
    A = results.body_rotation(body)
    return np.arctan2(A[:, 2, 1], A[:, 2, 2])


def heading_accelerations(results, body="chassis"):
    """(longitudinal, lateral, vertical) CM acceleration (m/s²) along the body's horizontal
    heading x_h, the horizontal normal z × x_h (left) and global z."""
    a = results.body_acceleration(body)
    x = results.body_rotation(body)[:, :, 0].copy()
    x[:, 2] = 0.0
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    y = np.stack([-x[:, 1], x[:, 0], np.zeros(len(x))], axis=1)
    return np.einsum("ij,ij->i", a, x), np.einsum("ij,ij->i", a, y), a[:, 2]
