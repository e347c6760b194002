"""Rotation helpers: skew matrices, Euler parameters (unit quaternions p = [e0, e1, e2, e3]).

Conventions (Haug, *Computer-Aided Kinematics and Dynamics of Mechanical Systems*, ch. 6):
``A(p)`` maps body-frame vectors to global ones, written in the homogeneous quadratic form
``A = (e0² − eᵀe) I + 2 e eᵀ + 2 e0 ẽ`` which equals the usual rotation matrix on ``pᵀp = 1`` and
makes ``A(p) a'`` an exact quadratic form of p everywhere, so its derivatives are exact too:
``∂(A a')/∂p = B(p, a') = 2[(e0 I + ẽ) a',  e a'ᵀ − (e0 I + ẽ) ã']`` (Haug eq. 6.3.9), linear in p.
``G(p) = [−e, −ẽ + e0 I]`` and ``L(p) = [−e, ẽ + e0 I]`` give ω = 2 G ṗ (global) and
ω' = 2 L ṗ (body frame); ``ṗ = ½ Lᵀ ω'``.
"""
from __future__ import annotations

import numpy as np


def cross(a, b):
    """a × b over the last axis of 3-vectors, single or stacked (…, 3) and broadcast; numbers or
    sympy objects (numpy's cross costs about ten times more on single vectors)."""
    if np.ndim(a) == 1 and np.ndim(b) == 1:
        return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]])
    a, b = np.asarray(a), np.asarray(b)
    out = np.empty(np.broadcast_shapes(a.shape, b.shape), dtype=np.result_type(a, b))    # no stacking copy
    out[..., 0] = a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1]
    out[..., 1] = a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2]
    out[..., 2] = a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]
    return out


def skew(v):
    """ṽ with ṽ w = v × w, of a 3-vector or stacked ones (…, 3) → (…, 3, 3); numbers or sympy objects."""
    if np.ndim(v) == 1:
        x, y, z = v
        return np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])
    v = np.asarray(v)
    x, y, z = v[..., 0], v[..., 1], v[..., 2]
    out = np.empty(v.shape + (3,), dtype=v.dtype)
    out[..., 0, 0], out[..., 0, 1], out[..., 0, 2] = 0 * x, -z, y
    out[..., 1, 0], out[..., 1, 1], out[..., 1, 2] = z, 0 * x, -x
    out[..., 2, 0], out[..., 2, 1], out[..., 2, 2] = -y, x, 0 * x
    return out


def matvec(M, v):
    """M v of (stacked, broadcast) matrices (…, m, n) and vectors (…, n); stacked floats by einsum
    (about half the time of a stacked matmul of 3 × 3 blocks), sympy objects by matmul."""
    if np.ndim(v) == 1:
        return M @ v
    if getattr(M, "dtype", None) == np.float64 and getattr(v, "dtype", None) == np.float64:
        return np.einsum("...ij,...j->...i", M, v)
    return (M @ v[..., None])[..., 0]


def tmatvec(M, v):
    """Mᵀ v of (stacked, broadcast) matrices and vectors (floats by einsum, as :func:`matvec`)."""
    if getattr(M, "dtype", None) == np.float64 and getattr(v, "dtype", None) == np.float64:
        return np.einsum("...ji,...j->...i", M, v)
    return (np.swapaxes(M, -1, -2) @ v[..., None])[..., 0]


def rotation_matrix(p):
    """A(p) in the homogeneous quadratic form (exact rotation for unit p)."""
    e0, e1, e2, e3 = p
    return np.array([
        [e0*e0 + e1*e1 - e2*e2 - e3*e3, 2*(e1*e2 - e0*e3), 2*(e1*e3 + e0*e2)],
        [2*(e1*e2 + e0*e3), e0*e0 - e1*e1 + e2*e2 - e3*e3, 2*(e2*e3 - e0*e1)],
        [2*(e1*e3 - e0*e2), 2*(e2*e3 + e0*e1), e0*e0 - e1*e1 - e2*e2 + e3*e3]])


def rotation_matrices(p):
    """A(p) of a stack of Euler parameters p (…, 4) → (…, 3, 3); the same form as rotation_matrix.
    Numbers, or sympy objects (object arrays)."""
    p = _numeric_or_object(p)
    e0, e1, e2, e3 = np.moveaxis(p, -1, 0)
    A = np.empty(p.shape[:-1] + (3, 3), dtype=p.dtype)
    s0, s1, s2, s3 = e0 * e0, e1 * e1, e2 * e2, e3 * e3
    A[..., 0, 0] = s0 + s1 - s2 - s3
    A[..., 1, 1] = s0 - s1 + s2 - s3
    A[..., 2, 2] = s0 - s1 - s2 + s3
    x01, x02, x03, x12, x13, x23 = 2 * e0 * e1, 2 * e0 * e2, 2 * e0 * e3, 2 * e1 * e2, 2 * e1 * e3, 2 * e2 * e3
    A[..., 0, 1], A[..., 1, 0] = x12 - x03, x12 + x03
    A[..., 0, 2], A[..., 2, 0] = x13 + x02, x13 - x02
    A[..., 1, 2], A[..., 2, 1] = x23 - x01, x23 + x01
    return A


def L_matrices(p):
    """L(p) of a stack of Euler parameters p (…, 4) → (…, 3, 4)."""
    p = np.asarray(p, dtype=float)
    e0, e1, e2, e3 = np.moveaxis(p, -1, 0)
    L = np.empty(p.shape[:-1] + (3, 4))
    L[..., 0, 0], L[..., 0, 1], L[..., 0, 2], L[..., 0, 3] = -e1, e0, e3, -e2
    L[..., 1, 0], L[..., 1, 1], L[..., 1, 2], L[..., 1, 3] = -e2, -e3, e0, e1
    L[..., 2, 0], L[..., 2, 1], L[..., 2, 2], L[..., 2, 3] = -e3, e2, -e1, e0
    return L


def G_matrices(p):
    """G(p) of a stack of Euler parameters p (…, 4) → (…, 3, 4); numbers or sympy objects."""
    p = _numeric_or_object(p)
    e0, e1, e2, e3 = np.moveaxis(p, -1, 0)
    G = np.empty(p.shape[:-1] + (3, 4), dtype=p.dtype)
    G[..., 0, 0], G[..., 0, 1], G[..., 0, 2], G[..., 0, 3] = -e1, e0, -e3, e2
    G[..., 1, 0], G[..., 1, 1], G[..., 1, 2], G[..., 1, 3] = -e2, e3, e0, -e1
    G[..., 2, 0], G[..., 2, 1], G[..., 2, 2], G[..., 2, 3] = -e3, -e2, e1, e0
    return G


def _numeric_or_object(a):
    """``a`` as a float array, or as it is when it holds (sympy) objects."""
    a = np.asarray(a)
    return a if a.dtype == object else a.astype(float, copy=False)


def B_matrix(p, a):
    """B(p, a') = ∂(A(p) a')/∂p, 3×4 (Haug eq. 6.3.9), written out element by element:
    column 0 is 2 (e0 I + ẽ) a', columns 1–3 are 2 (e a'ᵀ − (e0 I + ẽ) ã')."""
    e0, e1, e2, e3 = p
    a1, a2, a3 = a
    c0 = (e0 * a1 - e3 * a2 + e2 * a3, e3 * a1 + e0 * a2 - e1 * a3, -e2 * a1 + e1 * a2 + e0 * a3)
    s = e1 * a1 + e2 * a2 + e3 * a3            # eᵀa'
    return 2.0 * np.array([
        [c0[0], s, e1 * a2 - e2 * a1 + e0 * a3, e1 * a3 - e3 * a1 - e0 * a2],
        [c0[1], e2 * a1 - e1 * a2 - e0 * a3, s, e2 * a3 - e3 * a2 + e0 * a1],
        [c0[2], e3 * a1 - e1 * a3 + e0 * a2, e3 * a2 - e2 * a3 - e0 * a1, s]])


def G_matrix(p):
    """G(p) with ω = 2 G(p) ṗ in global axes."""
    e0, e1, e2, e3 = p
    return np.array([[-e1, e0, -e3, e2], [-e2, e3, e0, -e1], [-e3, -e2, e1, e0]])


def L_matrix(p):
    """L(p) with ω' = 2 L(p) ṗ in body axes."""
    e0, e1, e2, e3 = p
    return np.array([[-e1, e0, e3, -e2], [-e2, -e3, e0, e1], [-e3, e2, -e1, e0]])


_UNIT4 = np.eye(4)


def B_hessian(a, lam):
    """S(a', λ) = ∂²(λᵀ A(p) a')/∂p², a constant symmetric 4×4 matrix (A a' is quadratic in p).

    Column k is B(e_k, a')ᵀ λ since B is linear in p."""
    return np.column_stack([B_matrix(_UNIT4[k], a).T @ lam for k in range(4)])


def quat_from_matrix(R):
    """Unit quaternion [w, x, y, z] of a rotation matrix (Shepperd's method)."""
    R = np.asarray(R, dtype=float)
    tr = np.trace(R)
    cands = [tr, R[0, 0], R[1, 1], R[2, 2]]
    k = int(np.argmax(cands))
    if k == 0:
        w = 0.5 * np.sqrt(1.0 + tr)
        q = [w, (R[2, 1] - R[1, 2]) / (4 * w), (R[0, 2] - R[2, 0]) / (4 * w), (R[1, 0] - R[0, 1]) / (4 * w)]
    elif k == 1:
        x = 0.5 * np.sqrt(1.0 + 2 * R[0, 0] - tr)
        q = [(R[2, 1] - R[1, 2]) / (4 * x), x, (R[0, 1] + R[1, 0]) / (4 * x), (R[0, 2] + R[2, 0]) / (4 * x)]
    elif k == 2:
        y = 0.5 * np.sqrt(1.0 + 2 * R[1, 1] - tr)
        q = [(R[0, 2] - R[2, 0]) / (4 * y), (R[0, 1] + R[1, 0]) / (4 * y), y, (R[1, 2] + R[2, 1]) / (4 * y)]
    else:
        z = 0.5 * np.sqrt(1.0 + 2 * R[2, 2] - tr)
        q = [(R[1, 0] - R[0, 1]) / (4 * z), (R[0, 2] + R[2, 0]) / (4 * z), (R[1, 2] + R[2, 1]) / (4 * z), z]
    q = np.array(q)
    q /= np.linalg.norm(q)
    return -q if q[0] < 0 else q


def quat_multiply(a, b):
    """Hamilton product a ⊗ b (rotation b followed by a)."""
    a0, a1, a2, a3 = a
    b0, b1, b2, b3 = b
    return np.array([a0*b0 - a1*b1 - a2*b2 - a3*b3, a0*b1 + a1*b0 + a2*b3 - a3*b2,
                     a0*b2 - a1*b3 + a2*b0 + a3*b1, a0*b3 + a1*b2 - a2*b1 + a3*b0])


def axis_angle_quat(axis, angle):
    """Unit quaternion of a rotation by ``angle`` about unit ``axis``."""
    axis = np.asarray(axis, dtype=float)
    return np.concatenate([[np.cos(angle / 2)], np.sin(angle / 2) * axis / np.linalg.norm(axis)])


def frame_from_axis(z, x_hint=None):
    """Orthonormal frame [x y z] (columns) whose z column is the unit ``z``; x follows ``x_hint``
    projected onto the plane normal to z, else the global axis least aligned with z."""
    z = np.asarray(z, dtype=float)
    z = z / np.linalg.norm(z)
    if x_hint is not None:
        x = np.asarray(x_hint, dtype=float) - np.dot(x_hint, z) * z
        if np.linalg.norm(x) < 1e-9:
            x_hint = None
    if x_hint is None:
        ref = np.eye(3)[int(np.argmin(np.abs(z)))]
        x = ref - np.dot(ref, z) * z
    x = x / np.linalg.norm(x)
    return np.column_stack([x, cross(z, x), z])
