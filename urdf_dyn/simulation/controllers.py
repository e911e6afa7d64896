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

__all__ = ["ZeroTorque", "Passive", "Constant", "GravityCompensation", "ComputedTorque"]


class ZeroTorque:
    """Zero actuator torque: the robot falls freely under gravity (and the passive joint forces, with
    ``SimulateOptions(passive=True)``)."""

    def __init__(self, model):
        self.nv = model.nv

    def __call__(self, t, q, qd):
        return np.zeros(self.nv)


class Passive(ZeroTorque):
    """The former name of ``ZeroTorque`` (``passive=`` means the passive joint forces); kept with a
    FutureWarning."""

    def __init__(self, model):
        import warnings
        warnings.warn("Passive is now ZeroTorque (passive= means the passive joint forces)", FutureWarning,
                      stacklevel=2)
        super().__init__(model)


class Constant:
    """Constant joint forces ``tau`` (nv,) [N m | N], e.g. seed 001's −0.5 N m on the crank."""

    def __init__(self, model, tau):
        self.tau = np.asarray(tau, float).reshape(model.nv)

    def __call__(self, t, q, qd):
        return self.tau.copy()


def _through_actuators(model, plan, q, qd, qdd):
    """τ = B u with u the actuator forces that produce q̈ (projected onto K q̈ = k) at (q, q̇): RBDA eq. 8.63.
    ``plan``: the model's ``ActuationPlan`` (built once per controller, not per call)."""
    from urdf_dyn.constraints.loops import loop_constraints
    K, k = loop_constraints(model, q, qd)
    if K.size:
        qdd = qdd + np.linalg.lstsq(K, k - K @ qdd, rcond=1e-9)[0]
    return plan.joint_forces(q, qd, qdd)


def _plan(model):
    """The ``ActuationPlan`` of a closed-loop model's default actuators (no consistency check: a simulator's
    state drifts by its Baumgarte-corrected residual), or None for a tree."""
    if not model.has_constraints:
        return None
    from urdf_dyn.constraints.inverse import ActuationPlan
    return ActuationPlan(model, check=False)


class GravityCompensation:
    """Holds the robot against gravity; it then moves only by its initial velocity. Tree: τ = g(q).
    Closed loops: the actuator forces that hold the machine at rest at q, τ = B u (module docstring); passive
    joints get none. At rest (q̇ = 0) the loops' velocity term k is zero, so q̈ = 0 already satisfies
    K q̈ = k and no projection is needed: one compiled call per state (``ActuationPlan``)."""

    def __init__(self, model):
        self.model = model
        self._plan = _plan(model)
        self._rest = np.zeros(model.nv)

    def __call__(self, t, q, qd):
        if self._plan is not None:
            return self._plan.joint_forces(q, self._rest, self._rest)
        return gravity_torques(self.model, q)


class ComputedTorque:
    """Computed-torque tracking of a reference ``trajectory(t) -> (q_r, qd_r, qdd_r)``:
    τ = ID(q, q̇, q̈_r + K_d (q̇_r − q̇) + K_p (q_r − q)) (Spong, Hutchinson & Vidyasagar §8.3).
    ``kp`` [1/s²] and ``kd`` [1/s] are scalars or (nv,) arrays. Closed loops: the wanted acceleration is
    projected onto the loop constraints and produced by the actuators, τ = B u (module docstring)."""

    def __init__(self, model, trajectory, kp=100.0, kd=20.0):
        self.model, self.trajectory = model, trajectory
        self.kp, self.kd = np.asarray(kp, float), np.asarray(kd, float)
        self._plan = _plan(model)

    def __call__(self, t, q, qd):
        qr, qdr, qddr = self.trajectory(t)
        a = qddr + self.kd * (qdr - qd) + self.kp * (qr - q)
        if self.model.has_constraints:
            return _through_actuators(self.model, self._plan, q, qd, a)
        return inverse_dynamics(self.model, q, qd, a)
