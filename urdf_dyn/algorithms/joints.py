"""Tree joint models: jcalc (RBDA §4.4, Table 4.1; joint models of §3.5).

A tree joint with one degree of freedom is described by its type code and its unit ``axis`` (3,) in the
joint (child link) frame, exactly as URDF's ``<axis>``. URDF ``revolute`` and ``continuous`` share
``REVOLUTE``; ``prismatic`` is ``PRISMATIC``. ``fixed`` joints never reach jcalc: the loader merges them.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from urdf_dyn.algorithms.spatial import rodrigues, skew

__all__ = ["REVOLUTE", "PRISMATIC", "TYPE_CODES", "jcalc", "joint_pose", "LOOP_TYPES", "loop_subspaces"]

REVOLUTE = 0
PRISMATIC = 1

#: URDF joint type name -> jcalc type code, for the types the tree supports with one degree of freedom.
TYPE_CODES = {"revolute": REVOLUTE, "continuous": REVOLUTE, "prismatic": PRISMATIC}


@njit(cache=True)
def jcalc(jtype, axis, q):
    """Joint transform and motion subspace (RBDA Table 4.1).

    Args:
        jtype: ``REVOLUTE`` or ``PRISMATIC``.
        axis: (3,) unit axis in the joint frame.
        q: joint position [rad or m].

    Returns:
        X_J (6×6): Plücker transform from the joint's predecessor frame to its successor frame.
        S (6,): motion subspace (constant in this frame), ``[axis; 0]`` or ``[0; axis]``.
    """
    X = np.zeros((6, 6))
    S = np.zeros(6)
    if jtype == REVOLUTE:
        E = rodrigues(axis, q).T  # coordinate transform = transpose of the pose rotation
        X[:3, :3] = E
        X[3:, 3:] = E
        S[:3] = axis
    else:
        X[:3, :3] = np.eye(3)
        X[3:, 3:] = np.eye(3)
        X[3:, :3] = -skew(axis * q)
        S[3:] = axis
    return X, S


@njit(cache=True)
def joint_pose(jtype, axis, q):
    """Homogeneous pose (4×4) of the joint's successor frame in its predecessor frame."""
    T = np.eye(4)
    if jtype == REVOLUTE:
        T[:3, :3] = rodrigues(axis, q)
    else:
        T[:3, 3] = axis * q
    return T


# ---------------------------------------------------------------------------------------------------------
# loop joints (RBDA §3.5, Table 8.1): motion and constraint-force subspaces in the loop frame Fp
# ---------------------------------------------------------------------------------------------------------
def _perp(a):
    """Two unit vectors b, c with (a, b, c) right-handed orthonormal."""
    a = a / np.linalg.norm(a)
    t = np.array([1.0, 0, 0]) if abs(a[0]) < 0.9 else np.array([0, 1.0, 0])
    b = np.cross(a, t)
    b /= np.linalg.norm(b)
    return b, np.cross(a, b)


def _rot(*vs):
    return [np.r_[v, 0, 0, 0] for v in vs]


def _lin(*vs):
    return [np.r_[0, 0, 0, v] for v in vs]


E3 = np.eye(3)
#: loop joint type -> number of constraints n^c_k
LOOP_TYPES = {"fixed": 6, "revolute": 5, "continuous": 5, "prismatic": 5, "cylindrical": 4, "universal": 4,
              "spherical": 3, "ball": 3, "planar": 3}


def loop_subspaces(jtype, axis, axis2=None):
    """Motion subspace S (6×m) and constraint-force subspace T (6×n^c) of a loop joint in Fp coordinates
    (RBDA Table 4.1 / §3.5; Tᵀ S = 0, both orthonormal). ``axis`` is a unit 3-vector; ``axis2`` the second
    axis of a universal joint (perpendicular to ``axis`` at assembly)."""
    a = np.asarray(axis, float) / np.linalg.norm(axis)
    b, c = _perp(a)
    if jtype == "fixed":
        S, T = [], _rot(*E3) + _lin(*E3)
    elif jtype in ("revolute", "continuous"):
        S, T = _rot(a), _rot(b, c) + _lin(*E3)
    elif jtype == "prismatic":
        S, T = _lin(a), _rot(*E3) + _lin(b, c)
    elif jtype == "cylindrical":
        S, T = _rot(a) + _lin(a), _rot(b, c) + _lin(b, c)
    elif jtype == "universal":
        a2 = np.asarray(axis2, float)
        n = np.cross(a, a2)
        n /= np.linalg.norm(n)
        S, T = _rot(a, np.cross(n, a)), _rot(n) + _lin(*E3)
    elif jtype in ("spherical", "ball"):
        S, T = _rot(*E3), _lin(*E3)
    elif jtype == "planar":
        S, T = _rot(a) + _lin(b, c), _rot(b, c) + _lin(a)
    else:
        raise ValueError(f"unknown loop joint type {jtype!r}")
    S = np.array(S, float).T.reshape(6, -1)
    T = np.array(T, float).T.reshape(6, -1)
    return S, T
