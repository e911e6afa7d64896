"""Passive joint forces: URDF ``<dynamics damping>``, Gazebo joint springs, damping of 1-dof loop joints, and
balancers (gas and coil springs between two pins, ``algorithms.force_elements``).

They are applied forces (they enter τ of H q̈ + C = τ + Kᵀλ, RBDA eq. 8.34); every function that takes
``passive=`` adds them when it is True (the default everywhere). The compiled single-state paths add only
the tree joints' damping and springs themselves; a model with damped loop joints or balancers takes the
path that calls ``passive_forces`` (``single_state_covers``).
"""
from __future__ import annotations

import numpy as np

from urdf_dyn.algorithms.configuration import joint_positions
from urdf_dyn.algorithms.force_elements import balancer_generalized_forces
from urdf_dyn.constraints.loops import LoopState, compiled_covers

__all__ = ["passive_forces", "single_state_covers"]


def single_state_covers(model, passive=True):
    """True when the compiled single-state paths (``forward_one``, ``actuation_one``, ``cl_qdd``), which add
    only the tree joints' damping and springs themselves, cover ``model``: ``loops.compiled_covers`` and, with
    ``passive``, no balancer (its force needs ``passive_forces``; the batch path passes that in)."""
    return compiled_covers(model, passive=passive) and not (passive and model.balancers)


def passive_forces(model, q, qd):
    """Passive joint forces (nv,) [N m | N] at one state (q (nq,), q̇ (nv,)), or (N, nv) for a batch of a
    model without damped loop joints: URDF damping −b q̇ and Gazebo springs −k (q − q_ref) of tree joints,
    the damping of 1-dof loop joints (``<loop>``'s ``<dynamics damping>``), which acts along the loop joint's
    axis S between its bodies: τ += −b (bᵀq̇) b with b = (^{Fp}X_0 (J_s − J_p))ᵀ S, and the balancers'
    τ = F(L) ∂L/∂q (``algorithms.force_elements``). Raises StateError where a gas spring bottoms out."""
    tau = -np.asarray(model.damping) * qd
    if model.spring_stiffness is not None and np.any(model.spring_stiffness):
        tau = tau - np.asarray(model.spring_stiffness) * (joint_positions(model, q) - np.asarray(model.spring_reference))
    damped = [lp for lp in model.loops if lp.damping > 0 and lp.S.shape[1] == 1]
    if damped:
        st = LoopState(model, q)
        for lp in damped:
            XFp, _ = st.loop_frames(lp)
            b = (XFp @ (st.body_jacobian(lp.s) - st.body_jacobian(lp.p))).T @ np.asarray(lp.S)[:, 0]
            tau = tau - lp.damping * (b @ qd) * b
    if model.balancers:
        tau = tau + balancer_generalized_forces(model, q)
    return tau
