"""Joint-torque controllers for ``simulate``: callables ``controller(t, q, qd) -> tau`` (nv,) [N m | N]."""
from __future__ import annotations

import numpy as np

from urdf_dyn.algorithms.dynamics import gravity_torques, inverse_dynamics

__all__ = ["Passive", "Constant", "GravityCompensation", "ComputedTorque"]


class Passive:
    """Zero actuator torque: the robot falls freely under gravity (and joint damping, if simulated)."""

    def __init__(self, model):
        self.nv = model.nv

    def __call__(self, t, q, qd):
        return np.zeros(self.nv)


class Constant:
    """Constant joint forces ``tau`` (nv,) [N m | N], e.g. seed 001's −0.5 N m on the crank."""

    def __init__(self, model, tau):
        self.tau = np.asarray(tau, float).reshape(model.nv)

    def __call__(self, t, q, qd):
        return self.tau.copy()


class GravityCompensation:
    """τ = g(q): holds the robot against gravity; it then moves only by its initial velocity."""

    def __init__(self, model):
        self.model = model

    def __call__(self, t, q, qd):
        return gravity_torques(self.model, q)


class ComputedTorque:
    """Computed-torque tracking of a reference ``trajectory(t) -> (q_r, qd_r, qdd_r)``:
    τ = ID(q, q̇, q̈_r + K_d (q̇_r − q̇) + K_p (q_r − q)) (Spong, Hutchinson & Vidyasagar §8.3).
    ``kp`` [1/s²] and ``kd`` [1/s] are scalars or (nv,) arrays."""

    def __init__(self, model, trajectory, kp=100.0, kd=20.0):
        self.model, self.trajectory = model, trajectory
        self.kp, self.kd = np.asarray(kp, float), np.asarray(kd, float)

    def __call__(self, t, q, qd):
        qr, qdr, qddr = self.trajectory(t)
        a = qddr + self.kd * (qdr - qd) + self.kp * (qr - q)
        return inverse_dynamics(self.model, q, qd, a)
