"""Configuration-space helpers for models whose positions are not a vector space (nq ≠ nv): the free-flyer
(position + unit quaternion, SE(3)), the ball joint (unit quaternion, SO(3)) and the planar joint (SE(2));
1-dof joints are plain coordinates.

Conventions (``algorithms.joints``): the velocity of a floating joint is the child link's body-frame twist
(v, ω) — linear first, Pinocchio's LOCAL convention — and its position (p, quat) with quat = (x, y, z, w);
a ball joint is the rotational half: position quat, velocity ω in the child frame (Pinocchio's
``JointModelSpherical``); a planar joint's position is (x, y, θ) and its velocity (v_x, v_y, ω_z) in the
child frame.

All functions take one configuration (nq,) or a batch (N, nq) with velocities (nv,) / (N, nv), and never
mutate their inputs. Sources: the exponential and logarithm of SE(3) and SE(2) (Murray, Li & Sastry, *A
Mathematical Introduction to Robotic Manipulation*, 1994, §2.3 and App. A; the same maps as Pinocchio's
``integrate``/``difference``); the quaternion kinematics q̇ = ½ q ⊗ (ω, 0) (e.g. Solà, *Quaternion kinematics
for the error-state Kalman filter*, 2017, eq. 108). Rotations use ``scipy.spatial.transform.Rotation``.
"""
from __future__ import annotations

import numpy as np

__all__ = ["integrate", "difference", "qdot", "normalize", "joint_positions", "so3_right_jacobian"]

#: kind -> (offset of the quaternion in the joint's q, offset of ω in its v) for the joints that have one
_QUAT = {"floating": (3, 3), "ball": (0, 0)}


def _batch(x, n, name):
    a = np.asarray(x, float)
    single = a.ndim == 1
    a = np.atleast_2d(a)
    if a.shape[-1] != n:
        from urdf_dyn.errors import StateError
        raise StateError(f"{name} must have shape ({n},) or (N, {n}); got {np.shape(x)}")
    return a, single


def _common(A, B):
    """A (Na, n) and B (Nb, m) repeated to a common batch size (one of them may be a single row)."""
    N = max(len(A), len(B))
    if len(A) not in (1, N) or len(B) not in (1, N):
        from urdf_dyn.errors import StateError
        raise StateError(f"batches of {len(A)} and {len(B)} states do not match")
    return (np.repeat(A, N, 0) if len(A) != N else A), (np.repeat(B, N, 0) if len(B) != N else B)


def _skew(w):
    """(N, 3) -> (N, 3, 3) cross-product matrices."""
    W = np.zeros(w.shape[:-1] + (3, 3))
    W[..., 0, 1], W[..., 0, 2], W[..., 1, 2] = -w[..., 2], w[..., 1], -w[..., 0]
    W[..., 1, 0], W[..., 2, 0], W[..., 2, 1] = w[..., 2], -w[..., 1], w[..., 0]
    return W


def _V(phi):
    """Left Jacobian of SO(3), V(φ) = 1 + (1 − cos θ)/θ² φ× + (θ − sin θ)/θ³ (φ×)², θ = |φ|: the map from
    the body twist's linear part to the translation of exp (Murray et al. eq. 2.36), (N, 3, 3)."""
    th = np.linalg.norm(phi, axis=-1)[..., None, None]
    W = _skew(phi)
    small = th < 1e-4
    ts = np.where(small, 1.0, th)
    a = np.where(small, 0.5 - th ** 2 / 24, (1 - np.cos(ts)) / ts ** 2)
    b = np.where(small, 1 / 6 - th ** 2 / 120, (ts - np.sin(ts)) / ts ** 3)
    return np.eye(3) + a * W + b * W @ W


def so3_right_jacobian(phi):
    """Right Jacobian of SO(3), J_r(φ) = V(−φ) (N, 3, 3) for φ (N, 3): the body-frame angular velocity of
    R0 exp(φ) is J_r(φ) φ̇ (Murray et al. eq. 2.36 with φ → −φ)."""
    return _V(-np.asarray(phi, float))


def _V_inv(phi):
    """V(φ)⁻¹ = 1 − ½ φ× + (1/θ²)(1 − θ sin θ / (2(1 − cos θ))) (φ×)² (N, 3, 3)."""
    th = np.linalg.norm(phi, axis=-1)[..., None, None]
    W = _skew(phi)
    small = th < 1e-4
    ts = np.where(small, 1.0, th)
    c = np.where(small, 1 / 12 + th ** 2 / 720, (1 - ts * np.sin(ts) / (2 * (1 - np.cos(ts)))) / ts ** 2)
    return np.eye(3) - 0.5 * W + c * W @ W


def _rot2(th):
    c, s = np.cos(th), np.sin(th)
    return np.stack([np.stack([c, -s], -1), np.stack([s, c], -1)], -2)


def _se2_V(phi):
    """SE(2) analogue of V: translation of exp for a body velocity with rotation φ (N,) -> (N, 2, 2)."""
    small = np.abs(phi) < 1e-6
    ps = np.where(small, 1.0, phi)
    a = np.where(small, 1 - phi ** 2 / 6, np.sin(ps) / ps)
    b = np.where(small, phi / 2 - phi ** 3 / 24, (1 - np.cos(ps)) / ps)
    return np.stack([np.stack([a, -b], -1), np.stack([b, a], -1)], -2)


def integrate(model, q, v, dt=1.0):
    """q ⊕ v·dt: the configuration reached from q (nq,) or (N, nq) by moving with the constant joint velocity
    v (nv,) or (N, nv) for dt [s]: q + v dt for 1-dof joints, M · exp(v dt) on SE(3) / SO(3) / SE(2) for
    floating, ball and planar joints (Pinocchio's ``integrate``). The quaternion is returned normalised.

    Raises StateError for arrays of the wrong shape."""
    from scipy.spatial.transform import Rotation
    Q, single = _batch(q, model.nq, "q")
    V, sv = _batch(v, model.nv, "v")
    single = single and sv
    Q, V = _common(Q, V)
    Q, V = Q.copy(), V * dt
    iq, iv = model.one_dof_indices
    Q[:, iq] += V[:, iv]
    for kind, k, j, _ in model.multi_dof_joints:
        if kind in _QUAT:
            a, b = _QUAT[kind]
            R0 = Rotation.from_quat(Q[:, k + a:k + a + 4])
            ang = V[:, j + b:j + b + 3]
            if kind == "floating":
                Q[:, k:k + 3] += R0.apply(np.einsum("nij,nj->ni", _V(ang), V[:, j:j + 3]))
            Q[:, k + a:k + a + 4] = (R0 * Rotation.from_rotvec(ang)).as_quat()
        else:
            th = Q[:, k + 2]
            d = np.einsum("nij,nj->ni", _se2_V(V[:, j + 2]), V[:, j:j + 2])
            Q[:, k:k + 2] += np.einsum("nij,nj->ni", _rot2(th), d)
            Q[:, k + 2] = th + V[:, j + 2]
    return Q[0] if single else Q


def difference(model, q0, q1):
    """The joint velocity v (nv,) or (N, nv) with integrate(q0, v, 1) = q1: q1 − q0 for 1-dof joints, the
    SE(3) / SE(2) logarithm of M0⁻¹ M1 (SO(3) for a ball joint) for floating, ball and planar joints (Pinocchio's ``difference``; for a
    planar joint the rotation difference is wrapped to (−π, π]).

    Raises StateError for arrays of the wrong shape."""
    from scipy.spatial.transform import Rotation
    A, single = _batch(q0, model.nq, "q0")
    B, s1 = _batch(q1, model.nq, "q1")
    A, B = _common(A, B)
    single = single and s1
    out = np.zeros((A.shape[0], model.nv))
    iq, iv = model.one_dof_indices
    out[:, iv] = B[:, iq] - A[:, iq]
    for kind, k, j, _ in model.multi_dof_joints:
        if kind in _QUAT:
            a, b = _QUAT[kind]
            R0, R1 = Rotation.from_quat(A[:, k + a:k + a + 4]), Rotation.from_quat(B[:, k + a:k + a + 4])
            ang = (R0.inv() * R1).as_rotvec()
            if kind == "floating":
                dp = R0.inv().apply(B[:, k:k + 3] - A[:, k:k + 3])
                out[:, j:j + 3] = np.einsum("nij,nj->ni", _V_inv(ang), dp)
            out[:, j + b:j + b + 3] = ang
        else:
            phi = np.angle(np.exp(1j * (B[:, k + 2] - A[:, k + 2])))
            dp = np.einsum("nji,nj->ni", _rot2(A[:, k + 2]), B[:, k:k + 2] - A[:, k:k + 2])
            out[:, j:j + 2] = np.linalg.solve(_se2_V(phi), dp[..., None])[..., 0]
            out[:, j + 2] = phi
    return out[0] if single else out


def qdot(model, q, v):
    """Time derivative of the positions, q̇ (nq,) or (N, nq), for joint velocity v (nv,) or (N, nv): v for
    1-dof joints; ṗ = R v_lin and quaṫ = ½ quat ⊗ (ω, 0) for a floating joint (the quaternion part alone
    for a ball joint); (R(θ) v_xy, ω) for a planar joint. This is what an ODE integrator of (q, v) needs.

    Raises StateError for arrays of the wrong shape."""
    from scipy.spatial.transform import Rotation
    Q, single = _batch(q, model.nq, "q")
    V, s1 = _batch(v, model.nv, "v")
    Q, V = _common(Q, V)
    out = np.zeros(Q.shape)
    iq, iv = model.one_dof_indices
    out[:, iq] = V[:, iv]
    for kind, k, j, _ in model.multi_dof_joints:
        if kind in _QUAT:
            a, b = _QUAT[kind]
            quat = Q[:, k + a:k + a + 4]
            if kind == "floating":
                out[:, k:k + 3] = Rotation.from_quat(quat).apply(V[:, j:j + 3])
            qv, qw, w = quat[:, :3], quat[:, 3:], V[:, j + b:j + b + 3]
            out[:, k + a:k + a + 3] = 0.5 * (qw * w + np.cross(qv, w))
            out[:, k + a + 3] = -0.5 * np.einsum("ni,ni->n", qv, w)
        else:
            out[:, k:k + 2] = np.einsum("nij,nj->ni", _rot2(Q[:, k + 2]), V[:, j:j + 2])
            out[:, k + 2] = V[:, j + 2]
    return out[0] if (single and s1) else out


def normalize(model, q):
    """q with every floating and ball joint's quaternion scaled to unit length (a copy)."""
    Q, single = _batch(q, model.nq, "q")
    Q = Q.copy()
    for a, _, _ in model.quaternions:
        Q[:, a:a + 4] /= np.linalg.norm(Q[:, a:a + 4], axis=1, keepdims=True)
    return Q[0] if single else Q


def joint_positions(model, q):
    """Positions of the 1-dof joints laid out over the velocity coordinates, (nv,) or (N, nv): q itself on a
    fixed-base model; zeros at the coordinates of floating, ball and planar joints (for springs, limits and
    other per-joint laws that only 1-dof joints have)."""
    q = np.asarray(q, float)
    if model.is_fixed_base:
        return q
    iq, iv = model.one_dof_indices
    out = np.zeros(q.shape[:-1] + (model.nv,))
    out[..., iv] = q[..., iq]
    return out
