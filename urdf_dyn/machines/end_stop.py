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

from urdf_dyn.machines.pins import PinSpec, joint_wrenches_repeated, pin_loads

__all__ = ["phi7", "EndStopCase", "effective_masses", "end_stop_impacts"]


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


def effective_masses(model, q, Gc) -> np.ndarray:
    """Gcᵀ H(q) Gc (M,) [kg for a prismatic coordinate, kg m² for a revolute one]: the inertia the machine
    presents to one coordinate moving along the explicit-constraint column Gc, for M states q (M, nv) and
    columns Gc (M, nv) (``explicit_constraint``'s G column of that coordinate, RBDA §8.3).

    H Gc is the tree's inverse dynamics at q̇ = 0 with q̈ = Gc less that with q̈ = 0 (the velocity terms
    vanish and gravity cancels: the "method 1" of Walker and Orin, RBDA §6.1), both from
    ``pins.joint_wrenches_repeated``'s batched RNEA (RBDA Table 5.1) through τ_i = S_iᵀ f_i; the loop forces
    play no part in H and are left at zero. One-degree-of-freedom joints only (τ_i of body i is coordinate
    i − 1), as ``joint_wrenches``."""
    from urdf_dyn.algorithms.joints import motion_subspace
    q, Gc = np.atleast_2d(np.asarray(q, float)), np.atleast_2d(np.asarray(Gc, float))
    M, NB = len(q), model.NB
    z = np.zeros_like(Gc)
    zero_loops = {lp.name: np.zeros((2 * M, 6)) for lp in model.loops}
    f = joint_wrenches_repeated(model, q, np.concatenate([z, z]), np.concatenate([Gc, z]), zero_loops)
    df = f[:M] - f[M:]                                                  # I a of q̈ = Gc at rest, (M, NB, 6)
    S = np.array([motion_subspace(model.jtype[i], model.axis[i]) for i in range(1, NB + 1)])
    return np.einsum("mi,mi->m", Gc, np.einsum("mij,ij->mi", df, S))


def end_stop_impacts(model, poses, speeds, cushion_length, xi, pins, acts, swing="swing", areas=None) -> list:
    """EndStopCase per (cylinder, end) of ``poses`` {(cylinder, end): Q (M, nv)} (assembled poses with the
    cylinder at that end, e.g. ``stroke_map.StrokeMap`` at ``stall.stroke_range``'s ends), ``speeds``
    {(cylinder, end): ẋ [m/s] (> 0 extending, < 0 retracting)}, cushion_length s_c [m] (> 0), xi (the
    cushion's characteristic, [0, 1]); pins {name: PinSpec | joint}; acts: the actuated joints (the
    independent coordinates, e.g. swing and the three cylinders); areas {(cylinder, end): [m²]} of the
    cushioned chamber (the rod side at the extended end, the cap side at the retracted one, all cylinders of
    a pair) for the cushion pressure. Raises ValueError for s_c ≤ 0 or ξ
    outside [0, 1]."""
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
        a = v * v / (2 * xi * cushion_length)
        rows = [(q,) + _motion(model, q, acts, c, v, -np.sign(v) * phi * a) for q in np.atleast_2d(Q)]
        motions.append((c, end, v, a, rows))
    m_all = effective_masses(model, np.array([r[0] for m in motions for r in m[4]]),
                             np.array([r[3] for m in motions for r in m[4]]))
    start = 0
    for k, (c, end, v, a, rows) in enumerate(motions):
        m = m_all[start:start + len(rows)]
        start += len(rows)
        # the largest m_eff (a is the same for every state of the end); states that tie to round-off (a
        # cylinder whose reflected inertia does not depend on the joints that differ, e.g. the stick's over
        # boom angles) go to the first of them, so that round-off never picks the state the FE export writes
        j = int(np.flatnonzero(m >= m.max() * (1 - 1e-9))[0])
        motions[k] = (c, end, v, [r[:3] for r in rows], (j, float(m[j]), a))
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
