"""Small display transforms: quaternion to rotation matrix, 4×4 poses, VTK matrix conversion.

Poses are 4×4 homogeneous matrices ``X_WB`` (body frame B to world W) as numpy arrays.
"""
from __future__ import annotations

import numpy as np
from vtkmodules.vtkCommonMath import vtkMatrix4x4


def quat_to_matrix(q) -> np.ndarray:
    """Rotation matrix of the unit quaternion (w, x, y, z) (Euler parameters); None = identity."""
    if q is None:
        return np.eye(3)
    w, x, y, z = np.asarray(q, dtype=float) / np.linalg.norm(q)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def pose(position, rotation) -> np.ndarray:
    """4×4 pose from a position (3,) and a rotation matrix (3, 3)."""
    X = np.eye(4)
    X[:3, :3] = rotation
    X[:3, 3] = position
    return X


def inverse(X) -> np.ndarray:
    R, p = X[:3, :3], X[:3, 3]
    return pose(-R.T @ p, R.T)


def to_vtk(X) -> vtkMatrix4x4:
    m = vtkMatrix4x4()
    m.DeepCopy(np.asarray(X, dtype=float).ravel().tolist())
    return m


def frame_from_axis(axis) -> np.ndarray:
    """A rotation matrix whose z column is the unit ``axis`` (x, y completed orthonormally)."""
    z = np.asarray(axis, dtype=float)
    z = z / np.linalg.norm(z)
    helper = np.array([1.0, 0.0, 0.0]) if abs(z[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    x = np.cross(helper, z)
    x /= np.linalg.norm(x)
    return np.column_stack([x, np.cross(z, x), z])


def beam_frame(start, end, z_axis) -> tuple[np.ndarray, np.ndarray]:
    """(r, A) of a flexible beam's floating frame at the initial configuration, as the model
    defines it (``solver.Model`` flexible bodies): origin at the midpoint of start–end, x along
    the beam, z along ``z_axis`` made perpendicular to x, y = z × x."""
    start, end = np.asarray(start, dtype=float), np.asarray(end, dtype=float)
    x = (end - start) / np.linalg.norm(end - start)
    z = np.asarray(z_axis, dtype=float)
    z = z - (z @ x) * x
    z /= np.linalg.norm(z)
    return 0.5 * (start + end), np.column_stack([x, np.cross(z, x), z])
