"""The shortest cycle through given waypoints: segment durations that minimise the cycle time without
exceeding any limit of the machine.

Limits, each as a ratio that must stay ≤ 1 at every sample of a candidate motion:

- ``relief``: a cylinder's force against its capacity at the working relief, push u / (p A_cap) and pull
  −u / (p A_rod) (``sizing.Cylinder``);
- ``torque``: a motor-driven joint's |u| against its torque limit (the swing: the data sheet's torque, which
  belongs to the swing relief);
- ``flow``: the pumps' summed demand against their flow, and each section's demand against its supply
  (the demand formulas of ``machines.hydraulics``: A_cap v extending, A_rod |v| retracting, D |ω|);
- ``power``: the pumps' shaft power against the engine's (``machines.pumps.pump_power``);
- ``speed``: a motor-driven joint's |q̇| against its URDF velocity limit (the swing's rated speed). A cylinder's
  speed is bounded by its section's flow instead (extension A_cap v, retraction A_rod |v| against the
  supply): a URDF velocity limit, one number for both directions, would hold retraction to the extension's
  flow.

Each candidate (a duration per segment) is evaluated on the compiled paths in one batch: the motion
through ``constraints.motion.consistent_motion`` (``constraints._path.motion_path``) and the actuator
forces through ``constraints.inverse.actuator_forces`` (``constraints._path.actuation_path``). External
loads (soil, payload) are those of the reference cycle, re-timed by phase: at the fraction φ of segment j
the candidate sees the reference's load at the same fraction of its segment j (the soil's resistance is
taken to depend on where the bucket is in its cut, not on how fast it cuts: a documented simplification).

Optimiser: ``scipy.optimize.minimize`` (SLSQP) on Σ d_j subject to one constraint per segment,
c_j(d) = 1 − max ratio over segment j ≥ 0. With quintic segments (at rest at every waypoint) a segment's
motion depends on its own duration only, so the constraints' Jacobian is diagonal and one extra batch
evaluation, every duration perturbed at once, gives it; with splines the full forward-difference Jacobian
is used. A limit that a segment exceeds however slowly it moves (a static load over relief) cannot be met by
timing: its ratio at 4 × the reference duration is taken as that segment's floor, and reported.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from urdf_dyn.machines.pumps import pump_power

__all__ = ["CycleLimits", "CycleEvaluation", "ShortestCycle", "evaluate_cycle", "shortest_cycle"]


@dataclass
class CycleLimits:
    """The limits: ``cylinders`` {actuator: Cylinder}; ``relief`` [Pa]; ``torque`` {actuator: N m} for
    motors; ``motors`` {actuator: displacement m³/rad}; ``pump_flow`` [m³/s]; ``supply`` {actuator: m³/s};
    ``engine_power`` [W] (None: not checked); ``pump`` dict of ``pump_power`` keywords (margin, eta_v,
    eta_hm, priority); ``speed`` True to check the URDF velocity limits of the joints that are not
    cylinders."""
    cylinders: dict
    relief: float
    torque: dict = field(default_factory=dict)
    motors: dict = field(default_factory=dict)
    pump_flow: float = None
    supply: dict = field(default_factory=dict)
    engine_power: float = None
    pump: dict = field(default_factory=dict)
    speed: bool = True


@dataclass
class CycleEvaluation:
    """One candidate: ``durations`` (K,) [s]; ``t`` (N,); ``segment`` (N,) index; ``ratios`` {limit name:
    (N,)}; ``worst`` (K,) max ratio per segment; ``binding`` (K,) the limit name with that max."""
    durations: np.ndarray
    t: np.ndarray
    segment: np.ndarray
    ratios: dict
    worst: np.ndarray
    binding: list


def _retime(t, seg, d, starts, d_ref, starts_ref):
    """Reference times (N,) at the same phase fractions as the candidate times t (N,) in segments seg (N,)
    of durations d starting at ``starts``."""
    phi = (t - starts[seg]) / d[seg]
    return starts_ref[seg] + np.clip(phi, 0.0, 1.0) * d_ref[seg]


def evaluate_cycle(model, names, waypoints, durations, limits: CycleLimits, f_ext=None, t_ref=None,
                   ref_durations=None, actuated=None, kind="quintic", dt=0.02) -> CycleEvaluation:
    """The limit ratios along the motion through ``waypoints`` (K+1, k) of the coordinates ``names`` with
    segment ``durations`` (K,) [s], sampled every ``dt`` [s] (module docstring). ``f_ext`` {link: (N_ref, 6)}
    given on the reference times ``t_ref`` of the reference ``ref_durations`` is re-timed by phase."""
    from urdf_dyn.constraints.inverse import actuator_forces
    from urdf_dyn.constraints.motion import consistent_motion
    from urdf_dyn.simulation.trajectories import spline_motion
    d = np.asarray(durations, float)
    mo = spline_motion(names, np.asarray(waypoints, float), list(d), dt, kind)
    t = mo.t
    starts = np.concatenate([[0.0], np.cumsum(d)])
    seg = np.clip(np.searchsorted(starts, t, side="right") - 1, 0, len(d) - 1)
    Q, QD, QDD = consistent_motion(model, mo, progress=False)
    fx = None
    if f_ext:
        dr = np.asarray(ref_durations, float)
        sr = np.concatenate([[0.0], np.cumsum(dr)])
        tr = _retime(t, seg, d, starts, dr, sr)
        fx = {k: np.column_stack([np.interp(tr, t_ref, np.asarray(w)[:, c]) for c in range(6)])
              for k, w in f_ext.items()}
    af = actuator_forces(model, Q, QD, QDD, actuated=actuated, warn=False, f_ext=fx)
    ratios = _ratios(model, t, Q, QD, af, limits)
    M = np.array(list(ratios.values()))
    keys = list(ratios)
    worst, binding = np.zeros(len(d)), []
    for j in range(len(d)):
        m = seg == j
        sub = M[:, m]
        i = np.unravel_index(np.argmax(sub), sub.shape)
        worst[j] = sub[i]
        binding.append(keys[i[0]])
    return CycleEvaluation(d, t, seg, ratios, worst, binding)


def _ratios(model, t, Q, QD, af, lim: CycleLimits) -> dict:
    out = {}
    U = np.atleast_2d(af.u)
    demand, pressure = {}, {}
    for c, n in enumerate(af.names):
        u = U[:, c]
        j = model.joint_index(n) if n in model.joint_names else None
        v = QD[:, j] if j is not None else np.zeros(len(t))
        if n in lim.cylinders:
            cy = lim.cylinders[n]
            out[f"relief {n}"] = np.where(u > 0, u / (lim.relief * cy.cap_area), -u / (lim.relief * cy.annulus_area))
            demand[n] = np.where(v > 0, cy.cap_area * v, -cy.annulus_area * v)
        elif n in lim.motors:
            demand[n] = lim.motors[n] * np.abs(v)
        if n in lim.torque:
            out[f"torque {n}"] = np.abs(u) / lim.torque[n]
        if n in demand:
            P = np.maximum(u * v, 0.0)
            pressure[n] = np.divide(P, demand[n], out=np.zeros(len(t)), where=demand[n] > 1e-12)
            if n in lim.supply:
                out[f"flow {n}"] = demand[n] / lim.supply[n]
        if lim.speed and n not in lim.cylinders and j is not None and np.isfinite(model.velocity_limit[j]) and model.velocity_limit[j] > 0:
            out[f"speed {n}"] = np.abs(v) / model.velocity_limit[j]
    if demand and lim.pump_flow:
        out["flow pumps"] = sum(demand.values()) / lim.pump_flow
    if demand and lim.engine_power:
        pr = pump_power(t, demand, pressure, lim.engine_power, lim.pump_flow or np.inf, lim.relief, **lim.pump)
        out["power engine"] = pr.power_demand / lim.engine_power
    return out


@dataclass
class ShortestCycle:
    """The result: ``durations`` (K,) [s] and ``total`` [s]; ``reference`` durations and total; ``binding``
    (K,) the limit that stops each segment being shorter; ``floor`` (K,) the ratio a segment keeps however
    slowly it moves (> 1: infeasible at any timing); ``evaluations`` candidates evaluated; ``success``;
    ``message``; ``phases`` segment names; ``peaks`` {limit: its largest ratio over the shortest cycle}."""
    durations: np.ndarray
    total: float
    reference: np.ndarray
    binding: list
    floor: np.ndarray
    worst: np.ndarray
    evaluations: int
    success: bool
    message: str
    phases: list
    peaks: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        """JSON: shortest_s, segment durations, binding_limits, reference_s, evaluations."""
        return dict(shortest_s=self.total, durations_s=[float(x) for x in self.durations],
                    binding_limits=[f"{p}: {b}" for p, b in zip(self.phases, self.binding)],
                    reference_s=float(self.reference.sum()), reference_durations_s=[float(x) for x in self.reference],
                    worst_ratio=[float(x) for x in self.worst], static_floor=[float(x) for x in self.floor],
                    evaluations=self.evaluations, optimiser_success=self.success, optimiser_message=self.message,
                    peak_ratios=self.peaks)


def shortest_cycle(model, names, waypoints, durations, limits: CycleLimits, f_ext=None, t_ref=None,
                   actuated=None, kind="quintic", dt=0.02, min_duration=0.2, phases=None) -> ShortestCycle:
    """The shortest durations through ``waypoints`` (module docstring). ``durations`` (K,) are the
    reference cycle's (and ``t_ref`` its sample times for ``f_ext``). Returns ShortestCycle."""
    import scipy.optimize                  # on use: 0.3 s of the import of every module that imports this one
    d0 = np.asarray(durations, float)
    K = len(d0)
    count = [0]

    def ev(d):
        count[0] += 1
        return evaluate_cycle(model, names, waypoints, d, limits, f_ext, t_ref, d0, actuated, kind, dt)

    floor = np.maximum(ev(4.0 * d0).worst, 1.0)            # what timing cannot remove
    cache = {}

    def worst(d):
        key = tuple(np.round(d, 12))
        if key not in cache:
            cache[key] = ev(np.maximum(d, min_duration))
        return cache[key]

    def cons(d):
        return 1.0 - worst(d).worst / floor

    def jac(d):
        h = 5e-3 * np.maximum(d, 1.0)                       # > the sampling noise of the max over dt
        c0 = cons(d)
        if kind == "quintic":                               # decoupled segments: diagonal Jacobian
            return np.diag((cons(d + h) - c0) / h)
        J = np.zeros((K, K))
        for j in range(K):
            e = np.zeros(K)
            e[j] = h[j]
            J[:, j] = (cons(d + e) - c0) / h[j]
        return J

    # start from a feasible point: the reference stretched until every segment is within its limits
    x0 = d0.copy()
    for _ in range(8):
        c = cons(x0)
        if np.all(c >= -1e-9):
            break
        x0 = np.where(c < 0, x0 * 1.5, x0)
    res = scipy.optimize.minimize(lambda d: d.sum(), x0, jac=lambda d: np.ones(K), method="SLSQP",
                                  bounds=[(min_duration, 4.0 * x) for x in d0],
                                  constraints=[dict(type="ineq", fun=cons, jac=jac)],
                                  options=dict(maxiter=60, ftol=1e-4))
    d = np.maximum(res.x, min_duration)
    if np.any(cons(d) < -1e-3):                            # SLSQP may end just outside: step back in
        d = np.where(cons(d) < -1e-3, d * 1.01, d)
    e = worst(d)
    binding = [b if abs(w / f - 1) < 0.02 else f"{b} (min duration)" if dj <= min_duration * 1.001 else b
               for b, w, f, dj in zip(e.binding, e.worst, floor, d)]
    return ShortestCycle(d, float(d.sum()), d0, binding, floor, e.worst, count[0], bool(res.success),
                         str(res.message), list(phases) if phases else [f"segment {j + 1}" for j in range(K)],
                         {k: float(v.max()) for k, v in e.ratios.items()})
