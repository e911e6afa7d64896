"""Joint-torque controllers for ``simulate``: callables ``controller(t, q, qd) -> tau`` (nv,) [N m | N].

On a closed-loop machine (``model.has_constraints``) the built-in controllers act through the actuators:
the wanted motion (rest for ``GravityCompensation``, the tracking acceleration for ``ComputedTorque``) is
turned into actuator forces u by closed-loop inverse dynamics (RBDA eq. 8.63, ``actuator_forces``), and the
controller returns τ = B u (B: ``actuation_matrix``). Passive joints — a boom pin, a bucket linkage pin —
get no torque; the loop closure carries the load, as on the machine.
"""
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


def _through_actuators(model, q, qd, qdd):
    """τ = B u with u the actuator forces that produce q̈ (projected onto K q̈ = k) at (q, q̇): RBDA eq. 8.63."""
    from urdf_dyn.applications.actuators import actuation_matrix, actuator_forces, actuators_of
    from urdf_dyn.constraints.loops import loop_constraints
    K, k = loop_constraints(model, q, qd)
    if K.size:
        qdd = qdd + np.linalg.lstsq(K, k - K @ qdd, rcond=1e-9)[0]
    af = actuator_forces(model, q, qd, qdd, check=False, warn=False)
    return actuation_matrix(model, q, actuators_of(model)) @ af.u


class GravityCompensation:
    """Holds the robot against gravity; it then moves only by its initial velocity. Tree: τ = g(q).
    Closed loops: the actuator forces that hold the machine at rest at q, τ = B u (module docstring); passive
    joints get none."""

    def __init__(self, model):
        self.model = model

    def __call__(self, t, q, qd):
        if self.model.has_constraints:
            return _through_actuators(self.model, q, np.zeros_like(q), np.zeros_like(q))
        return gravity_torques(self.model, q)


class ComputedTorque:
    """Computed-torque tracking of a reference ``trajectory(t) -> (q_r, qd_r, qdd_r)``:
    τ = ID(q, q̇, q̈_r + K_d (q̇_r − q̇) + K_p (q_r − q)) (Spong, Hutchinson & Vidyasagar §8.3).
    ``kp`` [1/s²] and ``kd`` [1/s] are scalars or (nv,) arrays. Closed loops: the wanted acceleration is
    projected onto the loop constraints and produced by the actuators, τ = B u (module docstring)."""

    def __init__(self, model, trajectory, kp=100.0, kd=20.0):
        self.model, self.trajectory = model, trajectory
        self.kp, self.kd = np.asarray(kp, float), np.asarray(kd, float)

    def __call__(self, t, q, qd):
        qr, qdr, qddr = self.trajectory(t)
        a = qddr + self.kd * (qdr - qd) + self.kp * (qr - q)
        if self.model.has_constraints:
            return _through_actuators(self.model, q, qd, a)
        return inverse_dynamics(self.model, q, qd, a)
