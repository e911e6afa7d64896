"""Forward kinematics and link Jacobians (RBDA §4.3 and §3.5 notation; Featherstone's [ω; v] order)."""
from __future__ import annotations

import numpy as np

from urdf_dyn.algorithms import _kernels as K
from urdf_dyn._checks import batch_states
from urdf_dyn.algorithms.joints import PRISMATIC, REVOLUTE, motion_subspace
from urdf_dyn.algorithms.spatial import inv_plux, pose_to_plux

__all__ = ["forward_kinematics", "link_pose", "link_jacobian", "body_poses", "support_path"]


def body_poses(model, q):
    """Poses (N, NB+1, 4, 4) of every body frame in the base frame for a batch q (N, nq)."""
    q = np.ascontiguousarray(q, float)
    T = np.zeros((q.shape[0], model.NB + 1, 4, 4))
    K.body_poses(model.parent, model.jtype, model.axis, model.T_tree, q, T)
    return T


def support_path(model, link: str):
    """Bodies (tip first) from ``link``'s body to the base (RBDA §4.1.2, the support κ of the link), or None
    when a joint on the way is not a 1-dof revolute or prismatic joint (floating, planar): the callers then
    use a general method. Raises KeyError for an unknown link."""
    path, i = [], model.link(link).body
    while i > 0:
        path.append(i)
        i = model.parent[i]
    if any(model.jtype[i] not in (REVOLUTE, PRISMATIC) for i in path):
        return None
    return path


def forward_kinematics(model, q) -> dict:
    """Pose of every link frame in the base (root link) frame: {link name: (4, 4) or (N, 4, 4)} [m].

    Raises StateError for a q of the wrong shape or with NaN/inf."""
    s, single, _ = batch_states(model, q=q)
    T = body_poses(model, s["q"])
    out = {}
    for name, lf in model.links.items():
        P = T[:, lf.body] @ lf.T_body_link
        out[name] = P[0] if single else P
    return out


def link_pose(model, q, link: str) -> np.ndarray:
    """Pose (4, 4) or (N, 4, 4) of ``link`` in the base frame. Raises KeyError for an unknown link."""
    lf = model.link(link)
    s, single, _ = batch_states(model, q=q)
    P = body_poses(model, s["q"])[:, lf.body] @ lf.T_body_link
    return P[0] if single else P


def link_jacobian(model, q, link: str, frame: str = "local") -> np.ndarray:
    """Jacobian J (6, nv) mapping the joint velocities (nv,) to the spatial velocity [ω; v] of ``link``, for
    one state q (nq,).

    frame:
        ``"local"``: in the link frame (v = velocity of the link origin, link axes).
        ``"local_world_aligned"``: velocity of the link origin and ω in base-frame axes.
        ``"world"``: spatial velocity in base coordinates (v = velocity of the body point at the base origin).
    Rows are angular first (Featherstone); Pinocchio's order is linear first.
    Raises KeyError (unknown link), ValueError (unknown frame), StateError (bad q)."""
    s, single, _ = batch_states(model, q=q)
    if not single:
        raise ValueError("link_jacobian takes one state q of shape (nq,)")
    lf = model.link(link)
    T = body_poses(model, s["q"])[0]
    T_link = T[lf.body] @ lf.T_body_link
    X_link0 = pose_to_plux(np.ascontiguousarray(T_link))
    J0 = np.zeros((6, model.nv))
    i = lf.body
    while i > 0:
        S = motion_subspace(model.jtype[i], model.axis[i])
        J0[:, i - 1] = inv_plux(pose_to_plux(np.ascontiguousarray(T[i]))) @ S
        i = model.parent[i]
    if frame == "world":
        return J0
    J = X_link0 @ J0
    if frame == "local":
        return J
    if frame == "local_world_aligned":
        R = T_link[:3, :3]
        return np.vstack([R @ J[:3], R @ J[3:]])
    raise ValueError(f"unknown frame {frame!r}; use 'local', 'local_world_aligned' or 'world'")
