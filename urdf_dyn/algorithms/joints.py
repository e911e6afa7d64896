"""Tree joint models: jcalc (RBDA §4.4, Table 4.1; joint models of §3.5).

A tree joint is described by its type code and a unit ``axis`` (3,) in the joint (child link) frame, as
URDF's ``<axis>``. URDF ``revolute`` and ``continuous`` share ``REVOLUTE``; ``prismatic`` is ``PRISMATIC``.
``fixed`` joints never reach jcalc: the loader merges them.

Multi-degree-of-freedom joints (URDF ``floating``, ``planar``, and ``ball``, a URDF+ extension) are laid out as one kernel body per velocity
coordinate, so that every kernel keeps one motion-subspace column per body (nv = NB):

- the **head** body (``FREE`` or ``PLANAR``) carries the joint transform X_J(q) computed from all the joint's
  position coordinates (7 for FREE: position (3,) in the parent frame and unit quaternion (x, y, z, w),
  Pinocchio's ``JointModelFreeFlyer`` layout; 3 for PLANAR: x, y [m] and θ [rad] about the joint frame's
  z axis, the loader rotating the joint frame so that z is the URDF axis; 4 for BALL: the unit quaternion
  (x, y, z, w) of the successor's orientation, Pinocchio's ``JointModelSpherical``: a ball joint is the
  rotational half of FREE);
- each following coordinate is a massless **sub-body** (``SUB_R`` / ``SUB_P``) with X_J = X_tree = 1 and one
  unit column of the joint's constant motion subspace in the successor frame. Velocity coordinates are the
  successor body's own spatial velocity (Pinocchio's LOCAL convention): FREE (v_x, v_y, v_z, ω_x, ω_y, ω_z),
  PLANAR (v_x, v_y, ω_z), BALL (ω_x, ω_y, ω_z); the link itself is the last sub-body.

Because S is constant in the successor frame, c_J = 0 and the velocity-product term of the whole joint is
(X v_λ) × v_J (RBDA eq. 3.34/3.40 with S̊ = 0); the kernels therefore form it with the velocity of the
joint's predecessor (``group_base``), not with the partial sums of the sub-bodies.

The packed model of the compiled kernels (``_kernels.pack``) expresses every 1-dof body in a frame whose z
axis is the joint axis and gives it the code ``REV_Z`` or ``PRIS_Z`` (RBDA §4.4: X_J is then rotz(q) or
xlt(q z), Featherstone's and Pinocchio's axis-specialised joints); a Model's own ``jtype`` never holds them.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from urdf_dyn.numba_cache import install as _portable_cache

from urdf_dyn.algorithms.spatial import rodrigues, skew

__all__ = ["REVOLUTE", "PRISMATIC", "FREE", "PLANAR", "BALL", "SUB_R", "SUB_P", "REV_Z", "PRIS_Z", "TYPE_CODES", "NQ", "nq_of", "jcalc",
           "joint_pose", "pose_into", "multi_pose", "q_indices", "is_sub", "motion_subspace", "write_subspace", "LOOP_TYPES", "loop_subspaces", "quat_to_matrix",
           "quat_entries"]

REVOLUTE = 0
PRISMATIC = 1
FREE = 2    # head of a floating joint: X_J from (p, quat); S = [0; e_x]
PLANAR = 3  # head of a planar joint: X_J from (x, y, θ); S = [0; e_x]
SUB_R = 4   # sub-body: X_J = 1, S = [axis; 0]
SUB_P = 5   # sub-body: X_J = 1, S = [0; axis]
REV_Z = 6   # packed model only: revolute about the body frame's z axis, S = [z; 0]
PRIS_Z = 7  # packed model only: prismatic along the body frame's z axis, S = [0; z]
BALL = 8    # head of a ball joint: X_J from quat; S = [e_x; 0]

#: URDF joint type name -> jcalc type code, for the types that are one kernel body.
TYPE_CODES = {"revolute": REVOLUTE, "continuous": REVOLUTE, "prismatic": PRISMATIC}
#: number of position coordinates read by each type code (sub-bodies read none)
NQ = {REVOLUTE: 1, PRISMATIC: 1, FREE: 7, PLANAR: 3, SUB_R: 0, SUB_P: 0, REV_Z: 1, PRIS_Z: 1, BALL: 4}


_portable_cache()   # the kernels' numba cache, shared by checkouts of the same sources

@njit(cache=True, inline="always")
def is_sub(jtype):
    """True for the sub-bodies of a multi-dof joint (they continue the joint of the body before them)."""
    return jtype == SUB_R or jtype == SUB_P


@njit(cache=True, inline="always")
def nq_of(jtype):
    """Number of position coordinates a body of type ``jtype`` reads (``NQ``; 0 for sub-bodies)."""
    if jtype == FREE:
        return 7
    if jtype == BALL:
        return 4
    if jtype == PLANAR:
        return 3
    if jtype == SUB_R or jtype == SUB_P:
        return 0
    return 1


@njit(cache=True)
def q_indices(jtype):
    """(NB+1,) index in q of the first position coordinate of each body (−1 for the base and for
    sub-bodies). With only 1-dof joints this is i − 1."""
    out = np.full(jtype.shape[0], -1, np.int64)
    k = 0
    for i in range(1, jtype.shape[0]):
        m = nq_of(jtype[i])
        if m > 0:
            out[i] = k
            k += m
    return out


@njit(cache=True, inline="always")
def quat_entries(x, y, z, w):
    """The rotation matrix of the quaternion (x, y, z, w), normalised first (Pinocchio's order), as its nine
    entries R00, R01, …, R22 (row by row; scalars, so that kernels need no array)."""
    n = np.sqrt(x * x + y * y + z * z + w * w)
    if not n > 0.0:  # a zero quaternion is no rotation: NaN, which the callers report (never a ZeroDivisionError)
        n = np.nan
    x, y, z, w = x / n, y / n, z / n, w / n
    return (1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w),
            2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w),
            2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y))


@njit(cache=True)
def quat_to_matrix(x, y, z, w):
    """Rotation matrix (3×3) of the quaternion (x, y, z, w), normalised first (Pinocchio's order)."""
    return np.array(quat_entries(x, y, z, w)).reshape((3, 3))


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def multi_pose(jtype, q, iq):
    """The pose (R, p) of a multi-dof joint's successor frame in its predecessor frame, for the heads FREE,
    PLANAR and BALL (position coordinates from q[iq]), as twelve scalars R00, R01, …, R22 (row by row), p0, p1,
    p2. FREE: p = q[iq:iq+3], R of the quaternion q[iq+3:iq+7] (``quat_entries``); BALL: R of q[iq:iq+4], p = 0;
    PLANAR: R = rotz(q[iq+2]), p = (q[iq], q[iq+1], 0).

    Shared by ``pose_into`` and ``_kernels.xup_packed`` as a plain compiled function (no Python entry: the
    module docstring of ``algorithms._kernels``), not ``inline="always"``: numba then types and lowers it
    once, not once inside every kernel that handles every joint type (LLVM still inlines it)."""
    if jtype == PLANAR:
        c, s = np.cos(q[iq + 2]), np.sin(q[iq + 2])
        return c, -s, 0.0, s, c, 0.0, 0.0, 0.0, 1.0, q[iq], q[iq + 1], 0.0
    k = iq + 3 if jtype == FREE else iq
    R00, R01, R02, R10, R11, R12, R20, R21, R22 = quat_entries(q[k], q[k + 1], q[k + 2], q[k + 3])
    if jtype == FREE:
        return R00, R01, R02, R10, R11, R12, R20, R21, R22, q[iq], q[iq + 1], q[iq + 2]
    return R00, R01, R02, R10, R11, R12, R20, R21, R22, 0.0, 0.0, 0.0


@njit(cache=True, inline="always")
def pose_into(jtype, axis, q, iq, T):
    """T (4, 4) ← the homogeneous pose of the joint's successor frame in its predecessor frame, entry by entry
    in scalars (nothing allocated, no 3×3 product: numba types and lowers a matrix product, ``np.eye`` and
    nested lists at every use, 1.5 CPU-s of a first run). Revolute: Rodrigues' R = 1 + sin q K + (1 − cos q)
    K², K = axis× (K²_ab = a_a a_b − δ_ab |a|², written out); the joint's position coordinates start at q[iq];
    the multi-dof heads by ``multi_pose``."""
    for a in range(4):
        for b in range(4):
            T[a, b] = 1.0 if a == b else 0.0
    if jtype == REVOLUTE:
        x, y, z = axis[0], axis[1], axis[2]
        s, t = np.sin(q[iq]), 1.0 - np.cos(q[iq])
        T[0, 0], T[0, 1], T[0, 2] = 1.0 + t * (-(z * z) - y * y), -s * z + t * (x * y), s * y + t * (x * z)
        T[1, 0], T[1, 1], T[1, 2] = s * z + t * (x * y), 1.0 + t * (-(z * z) - x * x), -s * x + t * (y * z)
        T[2, 0], T[2, 1], T[2, 2] = -s * y + t * (x * z), s * x + t * (y * z), 1.0 + t * (-(y * y) - x * x)
    elif jtype == PRISMATIC:
        for a in range(3):
            T[a, 3] = axis[a] * q[iq]
    elif jtype == FREE or jtype == BALL or jtype == PLANAR:
        (T[0, 0], T[0, 1], T[0, 2], T[1, 0], T[1, 1], T[1, 2], T[2, 0], T[2, 1], T[2, 2],
         T[0, 3], T[1, 3], T[2, 3]) = multi_pose(jtype, q, iq)


@njit(cache=True)
def joint_pose(jtype, axis, q, iq):
    """Homogeneous pose (4×4) of the joint's successor frame in its predecessor frame; the joint's position
    coordinates start at q[iq] (see ``q_indices``); ``pose_into`` into a new array."""
    T = np.empty((4, 4))
    pose_into(jtype, axis, q, iq, T)
    return T


@njit(cache=True, inline="always")
def write_subspace(jtype, axis, S):
    """S (6,) ← the motion subspace column of a body of type ``jtype`` with ``axis``: [axis; 0] for a
    rotation, [0; axis] for a translation (constant in the successor frame)."""
    for k in range(6):
        S[k] = 0.0
    if jtype == REVOLUTE or jtype == SUB_R or jtype == REV_Z or jtype == BALL:
        S[0], S[1], S[2] = axis[0], axis[1], axis[2]
    else:
        S[3], S[4], S[5] = axis[0], axis[1], axis[2]


@njit(cache=True)
def motion_subspace(jtype, axis):
    """Motion subspace column S (6,) of a body of type ``jtype`` with ``axis`` (``write_subspace``)."""
    S = np.zeros(6)
    write_subspace(jtype, axis, S)
    return S


@njit(cache=True)
def jcalc(jtype, axis, q, iq):
    """Joint transform and motion subspace column (RBDA Table 4.1).

    Args:
        jtype: a type code above.
        axis: (3,) unit axis in the joint frame (the S column of a head or sub-body).
        q: (nq,) joint positions [rad | m | quaternion]; iq: index of this joint's first coordinate.

    Returns:
        X_J (6×6): Plücker transform from the joint's predecessor frame to its successor frame.
        S (6,): motion subspace column (constant in this frame), ``[axis; 0]`` or ``[0; axis]``.
    """
    X = np.zeros((6, 6))
    if jtype == REVOLUTE:
        E = rodrigues(axis, q[iq]).T  # coordinate transform = transpose of the pose rotation
        X[:3, :3] = E
        X[3:, 3:] = E
    elif jtype == PRISMATIC:
        X[:3, :3] = np.eye(3)
        X[3:, 3:] = np.eye(3)
        X[3:, :3] = -skew(axis * q[iq])
    elif jtype == FREE or jtype == PLANAR or jtype == BALL:
        T = joint_pose(jtype, axis, q, iq)
        E = np.ascontiguousarray(T[:3, :3].T)
        X[:3, :3] = E
        X[3:, 3:] = E
        X[3:, :3] = -E @ skew(np.ascontiguousarray(T[:3, 3]))
    else:
        X[:, :] = np.eye(6)
    return X, motion_subspace(jtype, axis)


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
