"""Tree joint models: jcalc (RBDA §4.4, Table 4.1; joint models of §3.5).

A tree joint with one degree of freedom is described by its type code and its unit ``axis`` (3,) in the
joint (child link) frame, exactly as URDF's ``<axis>``. URDF ``revolute`` and ``continuous`` share
``REVOLUTE``; ``prismatic`` is ``PRISMATIC``. ``fixed`` joints never reach jcalc: the loader merges them.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .spatial import rodrigues, skew

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
