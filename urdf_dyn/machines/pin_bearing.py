"""A pin's plain bearing (pin in a bushing): the mean bearing pressure p = F / (d L), the sliding speed
v = |ω_rel| d / 2 and p·v, the wear parameter of plain bearings.

p is the load over the projected area d L (d the pin diameter, L the loaded bushing length, summed over the
bosses that carry the load): the "specific bearing load" of the plain-bearing catalogues (e.g. SKF,
"Spherical plain bearings and rod ends", publication 4407, section "Specific bearing load"; the same
projected-area pressure is used for bushings). v is the sliding speed at the pin's surface, the relative
rotation rate of the two bodies the pin joins times the pin's radius d / 2. p·v is the frictional heat per
unit of projected area divided by the friction coefficient (μ p v = Q / (d L)), which the catalogues limit
for wear and temperature.

The relative rotation rate of the bodies a and b (``relative_rate``) is taken from their world orientations
R_a, R_b at consecutive samples: the angle of the relative rotation's increment
(R_aᵀR_b)_kᵀ (R_aᵀR_b)_{k+1} over the step (scipy ``Rotation.magnitude``), put at the step's middle and
averaged onto the samples; it holds for tree and loop joints alike."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from urdf_dyn.machines.poses import body_poses

__all__ = ["bearing_pressure", "pin_bodies", "relative_rate", "PinBearing", "pin_bearing"]


def bearing_pressure(force, diameter, length) -> np.ndarray:
    """p = F / (d L) [Pa] of a force magnitude F [N] (array) on a pin of diameter d [m] and bearing length
    L [m]. Raises ValueError for d or L not > 0."""
    if not (np.isfinite(diameter) and diameter > 0 and np.isfinite(length) and length > 0):
        raise ValueError(f"pin diameter and length must be > 0 [m], got {diameter}, {length}")
    return np.asarray(force, float) / (diameter * length)


def pin_bodies(model, joint) -> tuple:
    """(a, b) the body indices the pin ``joint`` joins: a tree joint's parent λ(i) and child i, or a loop
    joint's predecessor and successor. Raises KeyError naming the joints and loops."""
    for lp in model.loops:
        if lp.name == joint:
            return int(lp.p), int(lp.s)
    if joint in model.joint_names:
        i = model.joint_index(joint) + 1
        return int(model.parent[i]), i
    raise KeyError(f"no joint or loop named {joint!r} (joints: {', '.join(model.joint_names)}; loops: "
                   f"{', '.join(lp.name for lp in model.loops)})")


def relative_rate(model, t, q, joint) -> np.ndarray:
    """|ω_rel| (N,) [rad/s] of the two bodies the pin ``joint`` joins along the states q (N, nq) at the
    times t (N,) [s] (module docstring)."""
    from scipy.spatial.transform import Rotation
    t = np.asarray(t, float)
    a, b = pin_bodies(model, joint)
    T = body_poses(model, q)
    R = np.einsum("nji,njk->nik", T[:, a, :3, :3], T[:, b, :3, :3])       # R_aᵀ R_b
    if len(t) < 2:
        return np.zeros(len(t))
    dR = np.einsum("nji,njk->nik", R[:-1], R[1:])
    w = Rotation.from_matrix(dR).magnitude() / np.diff(t)
    out = np.empty(len(t))
    out[0], out[-1] = w[0], w[-1]
    out[1:-1] = 0.5 * (w[:-1] + w[1:])
    return out


@dataclass(frozen=True)
class PinBearing:
    """A pin's bearing along a motion: ``diameter`` d and ``length`` L [m]; ``p`` (N,) [Pa], ``v`` (N,)
    [m/s] the sliding speed, ``pv`` (N,) [Pa m/s]."""
    diameter: float
    length: float
    p: np.ndarray
    v: np.ndarray
    pv: np.ndarray

    def peaks(self) -> dict:
        """{p_max_Pa, v_max_m_s, pv_max_Pa_m_s, pv_mean_Pa_m_s (the time mean)}."""
        return dict(p_max_Pa=float(self.p.max()), v_max_m_s=float(self.v.max()),
                    pv_max_Pa_m_s=float(self.pv.max()), pv_mean_Pa_m_s=float(self.pv.mean()))


def pin_bearing(model, t, q, joint, force, diameter, length) -> PinBearing:
    """The bearing of the pin ``joint`` (diameter d, length L [m]) carrying the force history (N, 3) [N, per
    pin] along the states q (N, nq) at the times t (N,) [s]: p = |f| / (d L), v = |ω_rel| d / 2, p·v."""
    p = bearing_pressure(np.linalg.norm(np.asarray(force, float), axis=1), diameter, length)
    v = relative_rate(model, t, q, joint) * diameter / 2
    return PinBearing(float(diameter), float(length), p, v, p * v)
