"""End-stop impact: a cylinder running into its end stop at full speed, the others held, and the loads the
stop puts on every pin and on the slewing ring.

**The impact (rigid-body energy, then a dynamic factor).** With the other actuators held, the machine moves
on one coordinate, the cylinder's stroke x: q̇ = G_c ẋ and q̈ = G_c ẍ + g (RBDA eqs. 3.11, 8.42; G_c the
column of the explicit constraint for x, ``constraints.explicit``). Its kinetic energy is
E = ½ m_eff ẋ², m_eff = G_cᵀ H G_c [kg] (H from CRBA, RBDA §6.2): the front's inertia reflected to the
cylinder. The end-of-stroke cushion (the spear entering the cushion bore) absorbs E over the cushion
length s_c; with the cushion's force–stroke characteristic ξ = E / (F_max s_c) (ξ = 1: constant force, 0.5:
a linear spring) the largest cushion force is F_max = E / (ξ s_c) and the rigid-body deceleration
a = F_max / m_eff = ẋ² / (2 ξ s_c).

**Dynamic factor** for the elastic structure: the buffer factor φ₇ of EN 1991-3:2006 §2.11.1 (actions
induced by cranes, "buffer forces"; the same rule as EN 13001-2's buffer loads), Table 2.10:
φ₇ = 1.25 for 0 ≤ ξ ≤ 0.5 and φ₇ = 1.25 + 0.7 (ξ − 0.5) for 0.5 < ξ ≤ 1 — "to account for elastic
effects" on the rigid-body buffer force (quoted from the standard's text as remembered here; the document
was not retrievable in this session). The design state decelerates at φ₇·a: its inverse dynamics
(``pins.pin_loads``, gravity included) gives pin loads with d'Alembert's inertia in equilibrium, so the
FE export of the same state balances. Each pin's *dynamic factor* is reported as its impact force over its
static force in the same pose.

**Speed**: the valve section's flow over the cylinder area of the moving side (cap extending, annulus
retracting), per cylinder of a pair. Cushion length and ξ are the cylinder maker's: no figure is published
for the Cat 320 (the scenario's are estimates, named there).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from urdf_dyn.machines.pins import PinSpec, pin_loads

__all__ = ["phi7", "EndStopCase", "end_stop_impacts"]


def phi7(xi) -> float:
    """EN 1991-3:2006 Table 2.10's buffer factor φ₇ for the characteristic ξ ∈ [0, 1] (module docstring).
    Raises ValueError outside [0, 1]."""
    if not (np.isfinite(xi) and 0 <= xi <= 1):
        raise ValueError(f"the cushion characteristic xi must be in [0, 1], got {xi!r}")
    return 1.25 if xi <= 0.5 else 1.25 + 0.7 * (xi - 0.5)


@dataclass
class EndStopCase:
    """One cylinder's impact at one end (module docstring): ``cylinder``, ``end`` ("extend" | "retract"),
    ``speed`` [m/s], ``m_eff`` [kg] and ``cushion_force_N`` (rigid, F_max) at the state of the largest
    cushion force, ``cushion_pressure_Pa`` F_max over the cushioned chamber's area (NaN without it); ``phi`` the dynamic factor φ₇; ``pins`` {pin: {"force_N", "moment_Nm", "static_N",
    "dynamic_factor"}} the largest over the poses; ``ring`` the slewing ring's loads there; ``states``
    [{"name", "q", "qd", "qdd"}] (the state of the largest cushion force) for the FE export."""
    cylinder: str
    end: str
    speed: float
    m_eff: float
    cushion_force_N: float
    phi: float
    pins: dict
    ring: dict = field(default_factory=dict)
    states: list = field(default_factory=list, repr=False)
    cushion_pressure_Pa: float = float("nan")
    area: float = float("nan")

    @property
    def energy_J(self) -> float:
        """E = ½ m_eff ẋ² [J] the cushion absorbs (at the state of the largest cushion force)."""
        return 0.5 * self.m_eff * self.speed ** 2

    def required_length(self, pressure, xi) -> float:
        """The cushion length [m] that keeps the cushion's peak pressure at ``pressure`` [Pa]: E / (ξ p A)
        (module docstring); NaN without the chamber's area."""
        return self.energy_J / (xi * pressure * self.area)


def _motion(model, q, acts, c, v, acc):
    """(q̇, q̈, G_c) for cylinder c moving at v [m/s] with acceleration acc [m/s²], ``acts`` held."""
    from urdf_dyn.constraints.explicit import explicit_constraint
    z = np.zeros(model.nv)
    ec = explicit_constraint(model, q, z, independent=acts)
    Gc = ec.G[:, list(ec.independent).index(c)]
    qd = Gc * v
    g = explicit_constraint(model, q, qd, independent=acts).g
    return qd, Gc * acc + g, Gc


def end_stop_impacts(model, poses, speeds, cushion_length, xi, pins, acts, swing="swing", areas=None) -> list:
    """EndStopCase per (cylinder, end) of ``poses`` {(cylinder, end): Q (M, nv)} (assembled poses with the
    cylinder at that end, e.g. ``stroke_map.StrokeMap`` at ``stall.stroke_range``'s ends), ``speeds``
    {(cylinder, end): ẋ [m/s] (> 0 extending, < 0 retracting)}, cushion_length s_c [m] (> 0), xi (the
    cushion's characteristic, [0, 1]); pins {name: PinSpec | joint}; acts: the actuated joints (the
    independent coordinates, e.g. swing and the three cylinders); areas {(cylinder, end): [m²]} of the
    cushioned chamber (the rod side at the extended end, the cap side at the retracted one, all cylinders of
    a pair) for the cushion pressure. Raises ValueError for s_c ≤ 0 or ξ
    outside [0, 1]."""
    from urdf_dyn.algorithms.dynamics import mass_matrix
    from urdf_dyn.machines.lateral_cases import pin_axes, pin_values
    if not (np.isfinite(cushion_length) and cushion_length > 0):
        raise ValueError(f"cushion_length must be > 0 [m], got {cushion_length!r}")
    if not xi > 0:
        raise ValueError(f"the cushion characteristic xi must be in (0, 1] (0 absorbs nothing), got {xi!r}")
    phi = phi7(xi)
    specs = {n: (p if isinstance(p, PinSpec) else PinSpec(p)) for n, p in pins.items()}
    axes = pin_axes(model, specs)
    if swing is not None:
        specs = dict(specs, **{"_ring": PinSpec(swing)})
    out, motions = [], []
    for (c, end), Q in poses.items():
        v = float(speeds[(c, end)])
        rows, worst = [], None
        a = v * v / (2 * xi * cushion_length)
        for q in np.atleast_2d(Q):
            qd, qdd, Gc = _motion(model, q, acts, c, v, -np.sign(v) * phi * a)
            m_eff = float(Gc @ mass_matrix(model, q) @ Gc)
            rows.append((q, qd, qdd))
            if worst is None or m_eff * a > worst[1] * worst[2]:
                worst = (len(rows) - 1, m_eff, a)
        motions.append((c, end, v, rows, worst))
    # every state's pin loads in two calls (in motion, at rest): the states are independent rows
    q_all = np.array([r[0] for m in motions for r in m[3]])
    z = np.zeros_like(q_all)
    dyn_all = pin_loads(model, np.zeros(len(q_all)), q_all, np.array([r[1] for m in motions for r in m[3]]),
                        np.array([r[2] for m in motions for r in m[3]]), specs)
    sta_all = pin_loads(model, np.zeros(len(q_all)), q_all, z, z, specs)
    start = 0
    for c, end, v, rows, worst in motions:
        sl = slice(start, start + len(rows))
        start += len(rows)
        dyn = {n: dyn_all.wrench[n][sl] for n in dyn_all.names}
        sta = {n: sta_all.wrench[n][sl] for n in sta_all.names}
        k, m_eff, a = worst
        pv = {}
        for n in pins:
            F = [pin_values(w, axes[n]) for w in dyn[n]]
            S = [float(np.linalg.norm(w[3:])) for w in sta[n]]
            i = int(np.argmax([f["force_N"] for f in F]))
            pv[n] = dict(force_N=float(F[i]["force_N"]), moment_Nm=float(max(f["moment_Nm"] for f in F)),
                         static_N=S[i], dynamic_factor=float(F[i]["force_N"] / S[i]) if S[i] > 0 else np.inf)
        ring = {}
        if swing is not None:
            from urdf_dyn.machines.slewing_ring import ring_components
            comp = [ring_components(w) for w in dyn["_ring"]]
            ring = {key: float(max(abs(cc[key]) if key != "axial_N" else cc[key] for cc in comp))
                    for key in ("tilting_moment_Nm", "axial_N", "radial_N", "torque_Nm")}
        q, qd, qdd = rows[k][:3]
        area = (areas or {}).get((c, end))
        out.append(EndStopCase(c, end, v, m_eff, m_eff * a, phi, pv, ring,
                               [dict(name=f"end stop, {c} {end}", q=q, qd=qd, qdd=qdd)],
                               m_eff * a / area if area else float("nan"), area or float("nan")))
    return out
