"""Hydraulic demand of a sized motion: flows, pressures, power and positive work per cylinder and motor, and
the summed flow against the pumps.

For a cylinder (``Cylinder``: cap area A_c = n π D²/4, annulus A_r = n π (D² − d²)/4) at stroke rate v [m/s]
and force u [N] (u > 0 pushes):

- flows Q_cap = A_c v (into the cap side when v > 0), Q_rod = A_r v (out of the rod side when v > 0) [m³/s];
- pump demand: A_c v when extending, A_r |v| when retracting (the side that is fed);
- load-holding pressure: u / A_c on the cap side when pushing, −u / A_r on the rod side when pulling [Pa];
  pushing is checked against A_c · p_relief and pulling against A_r · p_relief;
- hydraulic power from the pumps P = max(u v, 0) [W]: when the fed side holds the load it needs
  p · Q = u v; an overrunning load (u v < 0, e.g. a boom lowering under its weight) is metered out and the
  fed side needs no pressure (ideal, lossless, no regeneration). Its integral over the cycle is the
  **positive work** ∫ max(u v, 0) dt [J] (the pumps' ideal energy); ``sizing`` reports the **net work**
  ∫ u v dt beside it. The two are never called "energy" alone.
- speed limits, per direction (the fed side sets each): extension is fed on the cap side, retraction on
  the annulus. From the flow the valve section can receive (``supply`` Q [m³/s]): v_ext ≤ Q / A_c,
  v_ret ≤ Q / A_r. A URDF gives one ``<limit velocity>`` per joint; for a cylinder it is read as the
  extension speed at the rated flow (cap side fed, as robots/excavator.urdf derives it: pump flow / cap
  area), and the same flow through the annulus gives the retraction limit v_limit · A_c / A_r.

A motor (``Motor``: displacement D [m³/rad] at the joint, reduction included; its own circuit's ``relief``
[Pa], e.g. the swing relief, else the main relief) at ω [rad/s] and torque τ [N m] needs D |ω| and the
pressure |τ| / D; power max(τ ω, 0). ``Motor.from_torque(τ_max, relief)`` gives the equivalent
displacement of a rated torque: D = τ_max / p_relief (an ideal motor at its relief gives the rated torque).
The rated torque and the relief must belong to the same circuit: a data sheet's swing torque goes with the
swing relief, not with the main (implement) relief.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["Motor", "HydraulicMotor", "ActuatorHydraulics", "HydraulicsResult", "hydraulics", "intervals"]

L_MIN = 1e3 * 60  # m³/s -> L/min


@dataclass(frozen=True)
class Motor:
    """Hydraulic motor driving a joint: ``displacement`` [m³/rad] at the joint (gear reduction included);
    ``relief`` [Pa] of its own circuit (e.g. the swing relief), None: the main relief."""
    displacement: float
    relief: float | None = None

    @classmethod
    def from_torque(cls, torque, relief) -> "Motor":
        """The ideal motor that gives ``torque`` [N m] at its ``relief`` [Pa]: D = τ / p [m³/rad]. Raises
        ValueError unless both are finite and > 0."""
        if not (np.isfinite(torque) and np.isfinite(relief) and torque > 0 and relief > 0):
            raise ValueError(f"need torque > 0 and relief > 0, got {torque} N m and {relief} Pa")
        return cls(float(torque) / float(relief), float(relief))


def intervals(t, mask):
    """[(t_start, t_end)] [s] of the runs where ``mask`` (N,) is True."""
    t = np.asarray(t, float)
    m = np.asarray(mask, bool)
    out = []
    i = 0
    while i < len(m):
        if m[i]:
            j = i
            while j + 1 < len(m) and m[j + 1]:
                j += 1
            out.append((float(t[i]), float(t[j])))
            i = j + 1
        else:
            i += 1
    return out


#: the name under which ``urdf_dyn`` exports ``Motor`` (``urdf_dyn.Motor`` is the electric motor of ``motors``)
HydraulicMotor = Motor


@dataclass
class ActuatorHydraulics:
    """One actuator's series (N,) and checks. kind "cylinder" | "motor"; q_cap, q_rod, demand [m³/s]
    (q_rod = 0 for a motor, q_cap = D ω); pressure: load-holding pressure [Pa]; side (N,) "cap" | "rod"
    (motor: "A"); power [W]; positive_work ∫ max(u v, 0) dt [J]; capacity_push, capacity_pull [N | N m]
    at ``relief`` [Pa] (the actuator's circuit); ratios: peak force / capacity per direction; v_max_ext,
    v_max_ret: speed the supply allows per direction [m/s | rad/s]; v_limit, v_limit_ret: the URDF velocity
    limit for extension and retraction (module docstring); speed_ratio: peak speed / allowed; end_stop:
    [(t0, t1)] within ``stop_margin`` of a stroke end; over_relief: [(t0, t1)] over ``relief``."""
    name: str
    kind: str
    q_cap: np.ndarray
    q_rod: np.ndarray
    demand: np.ndarray
    pressure: np.ndarray
    side: np.ndarray
    power: np.ndarray
    positive_work: float
    capacity_push: float
    capacity_pull: float
    push_ratio: float
    pull_ratio: float
    peak_ext_speed: float
    peak_ret_speed: float
    v_max_ext: float
    v_max_ret: float
    v_limit: float
    v_limit_ret: float = np.inf
    relief: float = np.nan
    end_stop: list = field(default_factory=list)
    over_relief: list = field(default_factory=list)

    @property
    def flow_ratio(self) -> float:
        """Peak speed / the speed the supply allows, per direction, the larger."""
        return float(max(self.peak_ext_speed / self.v_max_ext if self.v_max_ext > 0 else 0.0,
                         self.peak_ret_speed / self.v_max_ret if self.v_max_ret > 0 else 0.0))

    @property
    def limit_ratio(self) -> float:
        """Peak speed / the URDF velocity limit, per direction (extension against ``v_limit``, retraction
        against ``v_limit_ret``), the larger; 0 when there is none."""
        r = [p / v for p, v in ((self.peak_ext_speed, self.v_limit), (self.peak_ret_speed, self.v_limit_ret))
             if np.isfinite(v) and v > 0]
        return float(max(r)) if r else 0.0

    @property
    def speed_ratio(self) -> float:
        """The larger of ``flow_ratio`` and ``limit_ratio``."""
        return max(self.flow_ratio, self.limit_ratio)


@dataclass
class HydraulicsResult:
    """t (N,) [s]; actuators {name: ActuatorHydraulics}; total_demand (N,) [m³/s]; pump_flow [m³/s];
    relief [Pa]; over_demand [(t0, t1)] where the summed demand exceeds the pumps."""
    t: np.ndarray
    actuators: dict
    total_demand: np.ndarray
    pump_flow: float
    relief: float
    over_demand: list

    @property
    def peak_flow(self) -> float:
        """Peak summed demand [m³/s]."""
        return float(self.total_demand.max()) if len(self.total_demand) else 0.0

    @property
    def positive_work(self) -> float:
        """Positive work per cycle ∫ max(u v, 0) dt summed over the actuators [J] (the pumps' ideal energy)."""
        return float(sum(a.positive_work for a in self.actuators.values()))

    def warnings(self) -> list:
        """One line per problem: over the pumps, over relief, at an end stop, too fast for flow or limit."""
        iv = lambda x: ", ".join(f"{a:.2f}–{b:.2f} s" for a, b in x[:4]) + (" …" if len(x) > 4 else "")  # noqa
        out = []
        if self.over_demand:
            out.append(f"the cycle asks for more flow than the pumps give ({self.pump_flow * L_MIN:.0f} L/min) at "
                       f"{iv(self.over_demand)}")
        for n, a in self.actuators.items():
            if a.over_relief:
                out.append(f"{n}: load-holding pressure over its relief ({a.relief / 1e5:.0f} bar) at "
                           f"{iv(a.over_relief)}")
            if a.end_stop:
                out.append(f"{n}: at a stroke end at {iv(a.end_stop)}")
            if a.flow_ratio > 1:
                out.append(f"{n}: {100 * a.flow_ratio:.0f} % of the speed its supply allows")
            if a.limit_ratio > 1:
                lim = (f"{a.v_limit:.3g} extending, {a.v_limit_ret:.3g} retracting" if a.v_limit_ret != a.v_limit
                       else f"{a.v_limit:.3g}")
                out.append(f"{n}: {100 * a.limit_ratio:.0f} % of its URDF velocity limit ({lim})")
        return out

    def to_dict(self) -> dict:
        """JSON-ready summary (SI, plus L/min and bar where named so)."""
        acts = {}
        for n, a in self.actuators.items():
            acts[n] = dict(kind=a.kind, peak_demand_L_min=float(a.demand.max() * L_MIN),
                           peak_pressure_bar=float(a.pressure.max() / 1e5), relief_Pa=a.relief,
                           positive_work_J=a.positive_work,
                           peak_power_W=float(a.power.max()), push_ratio=a.push_ratio, pull_ratio=a.pull_ratio,
                           capacity_push=a.capacity_push, capacity_pull=a.capacity_pull,
                           peak_extend_speed=a.peak_ext_speed, peak_retract_speed=a.peak_ret_speed,
                           allowed_extend_speed=a.v_max_ext, allowed_retract_speed=a.v_max_ret,
                           urdf_limit_extend=a.v_limit, urdf_limit_retract=a.v_limit_ret,
                           speed_ratio=a.speed_ratio, flow_ratio=a.flow_ratio,
                           limit_ratio=a.limit_ratio, end_stop_s=a.end_stop, over_relief_s=a.over_relief)
        return dict(peak_flow_L_min=self.peak_flow * L_MIN, pump_flow_L_min=self.pump_flow * L_MIN,
                    relief_Pa=self.relief, positive_work_J=self.positive_work, over_demand_s=self.over_demand, actuators=acts)

    def table(self) -> str:
        """Markdown: per actuator peak demand, pressure against its relief, push/pull use of relief, speed use
        (per direction), positive work."""
        lines = ["| actuator | peak flow | peak holding p | relief | push / cap at relief | pull / annulus at relief | "
                 "speed / flow allows | speed / URDF limit | positive work | end stop | over relief |",
                 "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|"]
        for n, a in self.actuators.items():
            fmt = lambda iv: ", ".join(f"{x:.2f}–{y:.2f} s" for x, y in iv[:3]) + (" …" if len(iv) > 3 else "")  # noqa
            lines.append(f"| {n} | {a.demand.max() * L_MIN:.0f} L/min | {a.pressure.max() / 1e5:.0f} bar | "
                         f"{a.relief / 1e5:.0f} bar | "
                         f"{100 * a.push_ratio:.0f} % | {100 * a.pull_ratio:.0f} % | {100 * a.flow_ratio:.0f} % | "
                         f"{f'{100 * a.limit_ratio:.0f} %' if a.limit_ratio else '–'} | "
                         f"{a.positive_work / 1e3:.1f} kJ | {fmt(a.end_stop) or '–'} | {fmt(a.over_relief) or '–'} |")
        lines.append(f"| **all** | **{self.peak_flow * L_MIN:.0f} L/min** (pumps {self.pump_flow * L_MIN:.0f}) | | | | | | "
                     f"| **{self.positive_work / 1e3:.1f} kJ** | | |")
        return "\n".join(lines)


def hydraulics(res, cylinders, motors=None, *, relief, pump_flow, supply=None, model=None,
               stop_margin=0.005) -> HydraulicsResult:
    """Hydraulic demand of a ``SizingResult`` (module docstring).

    cylinders: {actuator: Cylinder}; motors: {actuator: Motor}; relief [Pa] the main relief (the cylinders,
    and a motor without its own); pump_flow [m³/s] the pumps' total; supply: {actuator: [m³/s]} flow its valve section can receive (default ``pump_flow``); model: for
    the joints' stroke ends and velocity limits (end stops within ``stop_margin`` [m | rad]).
    Raises KeyError for an actuator that is not in ``res``."""
    motors = motors or {}
    supply = supply or {}
    t = res.t
    out = {}
    for name in list(cylinders) + list(motors):
        if name not in res.names:
            raise KeyError(f"{name!r} is not an actuator ({', '.join(res.names)})")
        k = res.names.index(name)
        u, s, v = res.u[:, k], res.s[:, k], np.nan_to_num(res.sd[:, k])
        sup = float(supply.get(name, pump_flow))
        if name in cylinders:
            c = cylinders[name]
            Ac, Ar = c.cap_area, c.annulus_area
            q_cap, q_rod = Ac * v, Ar * v
            demand = np.where(v > 0, Ac * v, -Ar * v)
            pressure = np.where(u > 0, u / Ac, -u / Ar)
            side = np.where(u > 0, "cap", "rod")
            p_rel = float(relief)
            cap_push, cap_pull = p_rel * Ac, p_rel * Ar
            vmax_e, vmax_r, kind = sup / Ac, sup / Ar, "cylinder"
            ret_scale = Ac / Ar                     # the URDF limit is the extension speed (module docstring)
        else:
            mot = motors[name]
            D = mot.displacement
            p_rel = float(mot.relief if mot.relief is not None else relief)
            q_cap, q_rod = D * v, np.zeros_like(v)
            demand = D * np.abs(v)
            pressure = np.abs(u) / D
            side = np.full(len(u), "A")
            cap_push = cap_pull = p_rel * D
            vmax_e = vmax_r = sup / D
            kind, ret_scale = "motor", 1.0
        power = np.maximum(u * v, 0.0)
        lo, hi, vl = -np.inf, np.inf, np.inf
        if model is not None and name in model.joint_names:
            j = model.joint_index(name)
            lo, hi, vl = float(model.lower[j]), float(model.upper[j]), float(model.velocity_limit[j])
        stops = (s <= lo + stop_margin) | (s >= hi - stop_margin)
        out[name] = ActuatorHydraulics(
            name, kind, q_cap, q_rod, demand, pressure, side, power, float(np.trapezoid(power, t)),
            cap_push, cap_pull, float(np.maximum(u, 0).max() / cap_push), float(np.maximum(-u, 0).max() / cap_pull),
            float(np.maximum(v, 0).max()), float(np.maximum(-v, 0).max()), vmax_e, vmax_r, vl, vl * ret_scale,
            p_rel, intervals(t, stops), intervals(t, pressure > p_rel * (1 + 1e-9)))
    total = np.sum([a.demand for a in out.values()], axis=0) if out else np.zeros(len(t))
    return HydraulicsResult(t, out, total, float(pump_flow), float(relief), intervals(t, total > pump_flow))
