"""The pumps against the engine: pump pressure, flow and shaft power over a cycle, the engine's power limit
(torque regulation), flow sharing between sections, and the slow-down where the cycle asks for more.

Model (load-sensing, documented; an open-centre circuit is not modelled):

- a section i that is fed (demand Q_i > 0, the flow ``machines.hydraulics`` computes) needs its load
  pressure p_i = P_i / Q_i, with P_i = max(u v, 0) the hydraulic power it takes (``hydraulics``: a
  metered-out, overrunning load needs no pressure on its fed side);
- the pump runs at the highest load pressure it serves plus the load-sensing margin Δp_LS, capped at the
  relief: p_pump = min(max_i p_i + Δp_LS, p_relief) while any section is fed (0 otherwise);
- delivered flow Q = Σ Q_i; the pump's geometric flow is Q / η_v and its shaft power
  P_shaft = p_pump Q / (η_v η_hm) (η_v volumetric, η_hm hydro-mechanical efficiency);
- torque regulation (horsepower control): the pump's displacement is cut back so that the shaft power
  never exceeds the engine's, P_shaft ≤ P_engine, so at pressure p the pumps can deliver
  Q_avail(p) = min(Q_max, P_engine η_v η_hm / p);
- where the demand exceeds Q_avail, the flow is shared: by ``priority`` (sections in order, each served in
  full before the next: e.g. boom up before swing, a maker's priority valve) or ``"equal"`` (every section
  gets the same fraction, a flow-sharing LS valve block). A section's speed falls by its share
  r_i = received / demanded;
- slow-down: a coordinated motion that keeps its path slows to the slowest section's share,
  s(t) = min_i r_i over the fed sections, so the cycle takes ∫ dt / s(t) instead of ∫ dt (the pressures
  are held at their demanded values: a slower motion has smaller inertial forces, so this slightly
  overstates the loss).

The engine's power, the pumps' flow and the efficiencies are arguments (the scenario's keys, with their
sources there); nothing here is a machine's figure.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from urdf_dyn.machines.hydraulics import intervals

__all__ = ["PumpResult", "pump_power", "section_loads"]


def section_loads(hyd):
    """({name: demand (N,) [m³/s]}, {name: load pressure (N,) [Pa]}) from a ``HydraulicsResult``: the
    fed side's flow and P/Q where the section takes power (module docstring)."""
    Q, p = {}, {}
    for n, a in hyd.actuators.items():
        d = np.asarray(a.demand, float)
        P = np.asarray(a.power, float)
        Q[n] = d
        p[n] = np.divide(P, d, out=np.zeros_like(d), where=d > 1e-12)
    return Q, p


@dataclass
class PumpResult:
    """Series (N,) over t [s]: ``pressure`` p_pump [Pa]; ``demand`` Σ Q_i [m³/s]; ``available`` Q_avail [m³/s];
    ``power_demand`` the shaft power the demand needs [W]; ``power_delivered`` after the limit [W];
    ``share`` {section: r_i (N,)}; ``slowdown`` s (N,); scalars ``engine_power`` [W], ``pump_flow`` [m³/s],
    ``margin`` [Pa], ``eta_v``, ``eta_hm``, ``priority`` (a list or "equal"); ``power_limited``
    [(t0, t1)] where the demand needs more than the engine."""
    t: np.ndarray
    pressure: np.ndarray
    demand: np.ndarray
    available: np.ndarray
    power_demand: np.ndarray
    power_delivered: np.ndarray
    share: dict
    slowdown: np.ndarray
    engine_power: float
    pump_flow: float
    margin: float
    eta_v: float
    eta_hm: float
    priority: object
    power_limited: list = field(default_factory=list)

    @property
    def peak_power(self) -> float:
        """Peak shaft power the cycle demands [W]."""
        return float(self.power_demand.max()) if len(self.t) else 0.0

    @property
    def power_limited_s(self) -> float:
        """Time [s] during which the demand needs more than the engine's power."""
        over = self.power_demand > self.engine_power * (1 + 1e-9)
        return float(np.trapezoid(over.astype(float), self.t)) if len(self.t) > 1 else 0.0

    @property
    def cycle_time(self) -> float:
        """The cycle's time as prescribed [s]."""
        return float(self.t[-1] - self.t[0]) if len(self.t) else 0.0

    @property
    def slowed_time(self) -> float:
        """∫ dt / s(t) [s]: the cycle's time with the engine's limit (module docstring)."""
        return float(np.trapezoid(1.0 / np.maximum(self.slowdown, 1e-6), self.t)) if len(self.t) > 1 else 0.0

    def to_dict(self) -> dict:
        """JSON-ready: peak_power_kW, engine_power_kW, power_limited_s, intervals, cycle and slowed times,
        peak pressure [bar], model parameters."""
        return dict(peak_power_kW=self.peak_power / 1e3, engine_power_kW=self.engine_power / 1e3,
                    power_limited_s=self.power_limited_s, power_limited_intervals_s=self.power_limited,
                    cycle_time_s=self.cycle_time, slowed_cycle_time_s=self.slowed_time,
                    peak_pump_pressure_bar=float(self.pressure.max() / 1e5) if len(self.t) else 0.0,
                    load_sensing_margin_bar=self.margin / 1e5, volumetric_efficiency=self.eta_v,
                    mechanical_efficiency=self.eta_hm,
                    flow_priority=self.priority if isinstance(self.priority, str) else list(self.priority))


def pump_power(t, demand, pressure, engine_power, pump_flow, relief, margin=2e6, eta_v=0.95, eta_hm=0.9,
               priority="equal") -> PumpResult:
    """The pumps against the engine over a cycle (module docstring).

    Args:
        t: (N,) [s]. demand: {section: (N,) delivered flow it asks for [m³/s]}; pressure: {section: (N,) its
            load pressure [Pa]} (``section_loads(hydraulics_result)``).
        engine_power [W] > 0; pump_flow: the pumps' largest delivered flow [m³/s]; relief [Pa];
        margin: load-sensing Δp [Pa] ≥ 0; eta_v, eta_hm in (0, 1]; priority: "equal" or a list of section
            names, first served first (unnamed sections share what is left equally).
    Raises ValueError naming the argument that is out of range, or an unknown section in ``priority``."""
    for k, v in (("engine_power", engine_power), ("pump_flow", pump_flow), ("relief", relief)):
        if not v > 0:
            raise ValueError(f"{k} must be > 0, got {v}")
    for k, v in (("eta_v", eta_v), ("eta_hm", eta_hm)):
        if not 0 < v <= 1:
            raise ValueError(f"{k} must be in (0, 1], got {v}")
    if margin < 0:
        raise ValueError(f"margin must be >= 0, got {margin}")
    names = list(demand)
    if not isinstance(priority, str):
        for n in priority:
            if n not in demand:
                raise ValueError(f"priority: unknown section {n!r} (sections: {', '.join(names)})")
    elif priority != "equal":
        raise ValueError(f"priority must be 'equal' or a list of sections, got {priority!r}")
    t = np.asarray(t, float)
    D = np.array([np.asarray(demand[n], float) for n in names]).reshape(len(names), len(t))
    Pl = np.array([np.asarray(pressure[n], float) for n in names]).reshape(len(names), len(t))
    fed = D > 1e-12
    p_load = np.where(fed, Pl, 0.0).max(axis=0, initial=0.0)
    p = np.where(fed.any(axis=0), np.minimum(p_load + margin, relief), 0.0)
    eta = eta_v * eta_hm
    Qd = D.sum(axis=0)
    Qa = np.minimum(pump_flow, np.divide(engine_power * eta, p, out=np.full_like(p, np.inf), where=p > 0))
    P_dem = p * Qd / eta
    share = np.ones_like(D)
    short = Qd > Qa * (1 + 1e-12)
    order = [names.index(n) for n in priority] if not isinstance(priority, str) else []
    rest = [i for i in range(len(names)) if i not in order]
    for j in np.flatnonzero(short):
        left = Qa[j]
        for i in order:
            got = min(D[i, j], left)
            share[i, j] = got / D[i, j] if D[i, j] > 0 else 1.0
            left -= got
        need = D[rest, j].sum()
        if need > 0:
            share[rest, j] = min(1.0, max(left, 0.0) / need)
    Qdel = (share * D).sum(axis=0)
    s = np.where(fed, share, 1.0).min(axis=0, initial=1.0)
    return PumpResult(t, p, Qd, Qa, P_dem, p * Qdel / eta, {n: share[i] for i, n in enumerate(names)}, s,
                      float(engine_power), float(pump_flow), float(margin), float(eta_v), float(eta_hm),
                      priority, intervals(t, P_dem > engine_power * (1 + 1e-9)))
