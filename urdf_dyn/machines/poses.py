"""The body poses of a motion, read-only: computed once per sizing run (``jobs.sizing_run.compute`` keeps
them as ``SizingRun.poses``) and passed to the machine functions that need them (the loads at the cutting
edge and the payload, the tipping margin: their ``poses=`` keyword), instead of one forward-kinematics pass
per function. No memo: a function given no poses computes its own."""
from __future__ import annotations

import numpy as np

from urdf_dyn.algorithms import kinematics

__all__ = ["body_poses"]


def body_poses(model, Q) -> np.ndarray:
    """World poses (N, NB + 1, 4, 4) [m] of every body at the states Q (N, nq) (or (nq,): N = 1), read-only
    (a caller that wants to change them copies them), as ``algorithms.kinematics.body_poses`` (RBDA §4.1's
    forward pass)."""
    T = kinematics.body_poses(model, np.ascontiguousarray(np.atleast_2d(np.asarray(Q, float))))
    T.flags.writeable = False
    return T
