"""Spatial vector algebra (RBDA ch. 2; seeds 002 and 004).

Conventions (Featherstone): a spatial motion vector is ``[ω; v]`` (angular first), a spatial force is
``[n; f]``. ``X`` written ``^B X_A`` is the Plücker motion transform from frame A to frame B:

    X = [[E, 0], [-E r×, E]]        (RBDA eq. 2.24)

where ``E`` is the 3×3 coordinate rotation from A to B (``E = Rᵀ`` for a pose ``R`` of B in A) and ``r`` is
the position of B's origin in A coordinates. The force transform is ``X* = X⁻ᵀ``.

Every function is numba's ``register_jitable``: called from plain Python (the loader, the readable
reference methods) it runs as the numpy code it is, with nothing to compile; referenced from a compiled
kernel it is compiled into that kernel. (As ``njit`` functions, the loader's dozen calls of ``mcI`` and
``pose_to_plux`` cost ≈ 6 s of compilation on a first run.) Inputs are float64 numpy arrays; shapes are
given per function.
"""
from __future__ import annotations

import numpy as np
from numba.extending import register_jitable

__all__ = [
    "skew", "crm", "crf", "rotx", "roty", "rotz", "rot", "xlt", "plux", "inv_plux", "pose_to_plux",
    "mcI", "rodrigues", "rpy_to_matrix",
]


@register_jitable
def skew(v):
    """3×3 cross-product matrix ``v×`` of a 3-vector (RBDA eq. 2.13 notation)."""
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


@register_jitable
def crm(v):
    """6×6 motion cross-product operator ``v×`` for a spatial motion vector v (RBDA eq. 2.31)."""
    w = skew(v[:3])
    u = skew(v[3:])
    out = np.zeros((6, 6))
    out[:3, :3] = w
    out[3:, :3] = u
    out[3:, 3:] = w
    return out


@register_jitable
def crf(v):
    """6×6 force cross-product operator ``v×* = -(v×)ᵀ`` (RBDA eq. 2.32)."""
    return -crm(v).T


@register_jitable
def rotx(theta):
    """Coordinate rotation E (3×3) from A to B where B is A rotated by ``theta`` [rad] about x."""
    c, s = np.cos(theta), np.sin(theta)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, s], [0.0, -s, c]])


@register_jitable
def roty(theta):
    """Coordinate rotation E (3×3) for a rotation of ``theta`` [rad] about y."""
    c, s = np.cos(theta), np.sin(theta)
    return np.array([[c, 0.0, -s], [0.0, 1.0, 0.0], [s, 0.0, c]])


@register_jitable
def rotz(theta):
    """Coordinate rotation E (3×3) for a rotation of ``theta`` [rad] about z."""
    c, s = np.cos(theta), np.sin(theta)
    return np.array([[c, s, 0.0], [-s, c, 0.0], [0.0, 0.0, 1.0]])


@register_jitable
def rodrigues(axis, theta):
    """Rotation matrix R (3×3, a pose: columns are B's axes in A) of ``theta`` [rad] about unit ``axis`` (3,)."""
    K = skew(axis)
    return np.eye(3) + np.sin(theta) * K + (1.0 - np.cos(theta)) * (K @ K)


@register_jitable
def rot(E):
    """6×6 Plücker transform of a pure coordinate rotation E (3×3) (RBDA eq. 2.24 with r = 0)."""
    X = np.zeros((6, 6))
    X[:3, :3] = E
    X[3:, 3:] = E
    return X


@register_jitable
def xlt(r):
    """6×6 Plücker transform of a pure translation of the origin by r (3,) [m] (RBDA eq. 2.24 with E = 1)."""
    X = np.eye(6)
    X[3:, :3] = -skew(r)
    return X


@register_jitable
def plux(E, r):
    """6×6 Plücker transform ``^B X_A`` from E (3×3, A→B coordinates) and r (3,), B's origin in A [m]."""
    X = np.zeros((6, 6))
    X[:3, :3] = E
    X[3:, 3:] = E
    X[3:, :3] = -E @ skew(r)
    return X


@register_jitable
def inv_plux(X):
    """Inverse ``^A X_B`` of a Plücker motion transform ``^B X_A`` (6×6), without a general inverse."""
    E = X[:3, :3]
    Xi = np.zeros((6, 6))
    Xi[:3, :3] = E.T
    Xi[3:, 3:] = E.T
    Xi[3:, :3] = X[3:, :3].T
    return Xi


@register_jitable
def pose_to_plux(T):
    """Plücker transform ``^B X_A`` (6×6) from the homogeneous pose T (4×4) of frame B in frame A."""
    R = T[:3, :3].copy()
    p = T[:3, 3].copy()
    return plux(R.T.copy(), p)


@register_jitable
def mcI(m, c, Ic):
    """Spatial inertia (6×6) of a body of mass m [kg], centre of mass c (3,) [m] and rotational inertia
    Ic (3×3) [kg m²] about the centre of mass, all in the body frame (RBDA eq. 2.63)."""
    C = skew(c)
    out = np.zeros((6, 6))
    out[:3, :3] = Ic + m * (C @ C.T)
    out[:3, 3:] = m * C
    out[3:, :3] = m * C.T
    out[3:, 3:] = m * np.eye(3)
    return out


def rpy_to_matrix(rpy):
    """Rotation matrix (3×3) of URDF roll-pitch-yaw angles [rad]: R = Rz(yaw) Ry(pitch) Rx(roll)."""
    r, p, y = (float(a) for a in rpy)
    return (rodrigues(np.array([0.0, 0.0, 1.0]), y) @ rodrigues(np.array([0.0, 1.0, 0.0]), p)
            @ rodrigues(np.array([1.0, 0.0, 0.0]), r))
