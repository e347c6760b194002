"""Orientations as the property editor shows them: Euler angles of a chosen sequence, axis–angle,
or the stored unit quaternion (w, x, y, z), w >= 0 (``solver`` stores orientations that way).

Euler sequences are intrinsic (rotations about the moving axes): ``XYZ`` is A = R_x(a) R_y(b) R_z(c)
(Cardan / Bryant angles, Adams "body 1-2-3"), ``ZYX`` yaw–pitch–roll, ``ZXZ`` the classical
Euler angles (Adams "body 3-1-3").  Axis–angle is A = exp(θ [n]×) with a unit axis n and
0 <= θ <= π.  Conversions use scipy.spatial.transform.Rotation (scalar-last quaternions).
"""
from __future__ import annotations

import warnings

import numpy as np
from scipy.spatial.transform import Rotation

EULER_SEQUENCES = ("XYZ", "ZYX", "ZXZ")
MODES = tuple(f"Euler {s}" for s in EULER_SEQUENCES) + ("axis–angle", "quaternion")


def _rotation(q) -> Rotation:
    w, x, y, z = q
    return Rotation.from_quat([x, y, z, w])


def _stored(rotation: Rotation) -> list[float]:
    """[w, x, y, z] with w >= 0."""
    x, y, z, w = rotation.as_quat()
    q = np.array([w, x, y, z])
    return (q if w >= 0 else -q).tolist()


def euler_from_quat(q, sequence: str) -> list[float]:
    """Intrinsic Euler angles (rad) of ``sequence`` for the quaternion (w, x, y, z); in gimbal lock
    the third angle is set to 0 (scipy's choice)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)   # "Gimbal lock detected"
        return _rotation(q).as_euler(sequence.upper()).tolist()


def quat_from_euler(angles, sequence: str) -> list[float]:
    return _stored(Rotation.from_euler(sequence.upper(), angles))


def axis_angle_from_quat(q, default_axis=(0.0, 0.0, 1.0)) -> tuple[list[float], float]:
    """(unit axis, angle in [0, π]); ``default_axis`` for the identity (no axis)."""
    v = _rotation(q).as_rotvec()
    angle = float(np.linalg.norm(v))
    return (list(default_axis), 0.0) if angle == 0.0 else ((v / angle).tolist(), angle)


def quat_from_axis_angle(axis, angle) -> list[float]:
    """Raises ValueError for a zero axis.  q = (cos θ/2, sin θ/2 n)."""
    n = np.asarray(axis, float)
    norm = np.linalg.norm(n)
    if not norm > 1e-12:
        raise ValueError("the rotation axis must be non-zero")
    half = 0.5 * float(angle)
    q = np.concatenate([[np.cos(half)], np.sin(half) * n / norm])
    return (q if q[0] >= 0 else -q).tolist()
