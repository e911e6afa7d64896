"""Forces to draw as arrows: actuator forces and loop-joint (pin) forces at one sample of a Motion.

Two sources, both from urdf_dyn:
- a trajectory that carries the applied joint forces τ (``urdf-dyn simulate``/``launch``): the actuators'
  values are τ of the actuated joints, and the loop-joint forces λ solve Kᵀλ = τ_ID − τ (RBDA eq. 8.61,
  τ_ID = ID(q, q̇, q̈) minus the passive forces);
- otherwise (a sizing motion, a pose, a demo): ``urdf_dyn.actuators.actuator_forces`` — the actuator
  forces that produce (q, q̇, q̈) (RBDA eq. 8.63; at rest, the forces that hold the pose against gravity),
  with its pin loads.
Pin wrenches [n; f] act on the successor, in Fp coordinates; arrows show f, from Fp's origin.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

__all__ = ["Arrow", "ForceSource"]


@dataclass
class Arrow:
    """An arrow to draw: ``origin`` (3,) and unit ``direction`` (3,) in the base frame, ``value`` (signed
    magnitude), ``unit`` ("N" or "N m"), ``label``, ``kind`` ("actuator" or "pin"), ``torque`` (True when
    the arrow is a moment vector, drawn with a double head)."""
    origin: np.ndarray
    direction: np.ndarray
    value: float
    unit: str
    label: str
    kind: str
    torque: bool = False


class ForceSource:
    """Actuator and pin forces of ``model`` along ``motion``, computed per sample on demand (cached)."""

    def __init__(self, model, motion):
        from urdf_dyn import actuators_of
        self.model = model
        self.motion = motion
        try:
            self.actuators = actuators_of(model)
        except (KeyError, ValueError):
            self.actuators = ()
        tau = motion.tau
        self.from_tau = tau is not None and np.any(np.abs(tau) > 0)
        self._cache = {}

    def values(self, k):
        """({actuator name: u}, {loop name: wrench (6,)}) at sample k."""
        if k in self._cache:
            return self._cache[k]
        from urdf_dyn import actuator_forces, constrained_inverse_dynamics
        from urdf_dyn import loop_constraints
        m, mo = self.model, self.motion
        q = mo.q[k]
        qd = mo.qd[k] if mo.qd is not None else np.zeros(m.nv)
        qdd = mo.qdd[k] if mo.qdd is not None else np.zeros(m.nv)
        acts, pins = {}, {}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                if self.from_tau:
                    tau = mo.tau[k]
                    for a in self.actuators:
                        if a.kind == "joint":
                            acts[a.name] = float(tau[m.joint_index(a.joint)])
                    if m.loops:
                        tau_id, _ = constrained_inverse_dynamics(m, q, qd, qdd, check=False)
                        K, _ = loop_constraints(m, q, qd)
                        lam = np.linalg.lstsq(K.T, tau_id - tau, rcond=1e-6)[0]
                        i = 0
                        for lp in m.loops:
                            pins[lp.name] = np.asarray(lp.T) @ lam[i:i + lp.nc]
                            i += lp.nc
                else:
                    r = actuator_forces(m, q, qd, qdd, check=False, warn=False)
                    acts = {n: float(u) for n, u in zip(r.names, np.atleast_1d(r.u))}
                    pins = {n: np.asarray(w) for n, w in r.loop_forces.items() if not n.startswith("mimic:")}
            except (np.linalg.LinAlgError, ValueError) as e:  # a degenerate pose: draw no forces there
                warnings.warn(f"forces at sample {k}: {e}", RuntimeWarning, stacklevel=2)
        self._cache[k] = (acts, pins)
        return acts, pins

    def arrows(self, k, body_T):
        """Arrows at sample k for the body poses ``body_T`` (NB+1, 4, 4) of the pose being drawn."""
        m = self.model
        acts, pins = self.values(k)
        out = []
        loops = {lp.name: lp for lp in m.loops}
        for a in self.actuators:
            if a.name not in acts:
                continue
            u = acts[a.name]
            if a.kind == "joint":
                i = m.joint_index(a.joint) + 1  # body i is moved by joint i-1 (q order = body order)
                Tj = body_T[m.parent[i]] @ np.asarray(m.T_tree[i])
                axis = Tj[:3, :3] @ np.asarray(m.axis[i])
                prismatic = m.joint_types[i - 1] == "prismatic"
                origin = body_T[i][:3, 3] if prismatic else Tj[:3, 3]
            else:
                lp = loops[a.joint]
                F = body_T[lp.p] @ lp.T_P
                axis = F[:3, :3] @ np.asarray(lp.S)[3:, 0] if lp.type == "prismatic" else F[:3, :3] @ np.asarray(lp.S)[:3, 0]
                prismatic = lp.type == "prismatic"
                origin = F[:3, 3]
            n = np.linalg.norm(axis)
            d = axis / n if n > 0 else np.array([0.0, 0.0, 1.0])
            out.append(Arrow(origin, d * np.sign(u) if u else d, float(u), a.unit, a.name, "actuator",
                             torque=not prismatic))
        for name, w in pins.items():
            lp = loops[name]
            F = body_T[lp.p] @ lp.T_P
            f = F[:3, :3] @ w[3:]
            mag = float(np.linalg.norm(f))
            d = f / mag if mag > 0 else np.array([0.0, 0.0, 1.0])
            out.append(Arrow(F[:3, 3], d, mag, "N", name, "pin"))
        return out
