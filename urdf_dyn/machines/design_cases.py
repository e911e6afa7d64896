"""The design cases of a sized cycle, gathered for the report: every pin's force and its fatigue spectrum
(``machines.pins``, ``machines.fatigue``), the cylinders' buckling (``machines.buckling``), the pumps
against the engine (``machines.pumps``) and the shortest cycle (``machines.cycle``). Each part is computed
when its inputs are given; ``reports.design_report.render_design`` adds the "Design cases" section, the JSON keys
(``pins.<name>.cycle_peak_N``, ``pins.<name>.damage_equivalent_N``, ``actuators.<name>.buckling_safety_factor``,
``hydraulics.peak_power_kW``, ``hydraulics.engine_power_kW``, ``hydraulics.power_limited_s``,
``cycle.shortest_s``, ``cycle.binding_limits``), ``pin_design_loads.csv``, ``pin_forces.csv`` and three plots (pin_loads.png,
buckling.png, pump_power.png)."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from urdf_dyn.machines.buckling import DEFAULT_THRESHOLD, CylinderColumn, buckling
from urdf_dyn.machines.fatigue import damage_equivalent_load, magnitude_history, periodic_cycles
from urdf_dyn.machines.pins import pin_loads

__all__ = ["stroke_lengths", "DesignCases", "buckling_cases", "design_cases"]


def stroke_lengths(model, joint):
    """(min, max) pin-to-pin length [m] of the cylinder whose rod slides on prismatic ``joint``: the
    distance from the barrel's pin (the joint's parent frame origin) to the rod eye (its child origin),
    |t₀ + q a|, at the joint's lower and upper limits (a: the axis, t₀: the joint origin)."""
    i = model.joint_index(joint)
    T = np.asarray(model.T_tree[i + 1])
    a = T[:3, :3] @ np.asarray(model.axis[i + 1])
    L = [float(np.linalg.norm(T[:3, 3] + q * a)) for q in (model.lower[i], model.upper[i])]
    if not np.all(np.isfinite(L)):
        raise ValueError(f"{joint}: give the prismatic joint finite <limit lower upper> (its stroke)")
    return min(L), max(L)


@dataclass
class DesignCases:
    """Results: ``pins`` (PinLoads or None), ``damage`` {pin: ΔF_eq [N]} (of the force magnitude's ranges: a
    load, not a stress), ``fatigue`` parameters, ``duty`` (``machines.duty.DutyResult`` or None: the spectra
    over a duty mix, set by the job),
    ``buckling`` {actuator: BucklingResult}, ``pumps`` (PumpResult or None), ``cycle`` (ShortestCycle or
    None), ``notes`` lines for the report, ``published`` {name: {value, source}} figures printed beside the
    shortest cycle (the scenario's ``reference: cycle.<name>``)."""
    pins: object = None
    damage: dict = field(default_factory=dict)
    fatigue: dict = field(default_factory=dict)
    buckling: dict = field(default_factory=dict)
    pumps: object = None
    cycle: object = None
    notes: list = field(default_factory=list)
    published: dict = field(default_factory=dict)
    duty: object = None

    def warnings(self) -> list:
        """One line per problem: a buckling factor under its threshold, a cycle over the engine's power."""
        out = [w for w in (b.warning() for b in self.buckling.values()) if w]
        if self.pumps is not None and self.pumps.power_limited_s > 0:
            p = self.pumps
            out.append(f"the cycle asks for more than the engine's {p.engine_power / 1e3:.0f} kW for "
                       f"{p.power_limited_s:.2f} s (peak {p.peak_power / 1e3:.0f} kW): {p.cycle_time:.1f} s becomes "
                       f"{p.slowed_time:.1f} s")
        return out


def buckling_cases(columns, relief, threshold=DEFAULT_THRESHOLD, column_loads=None, reachable=None) -> dict:
    """{actuator: BucklingResult} of ``columns`` ({actuator: CylinderColumn}) at ``relief`` [Pa] (a number, or
    {actuator: Pa}) against ``threshold``, with ``column_loads`` {actuator: ``buckling.ColumnLoads``} and
    ``reachable`` {actuator: largest compression the stall states reach [N]} (``buckling.buckling``). A function
    of the cylinders' geometry and the reliefs alone, never of the motion: a run may keep it
    (``jobs.sizing_design``). Raises ValueError for a column without a relief."""
    out = {}
    for n, col in (columns or {}).items():
        p = relief.get(n) if isinstance(relief, dict) else relief
        if p is None:
            raise ValueError(f"no buckling relief for {n} (reliefs given for {', '.join(relief)})")
        out[n] = buckling(n, col, p, threshold, loads=(column_loads or {}).get(n), reachable=(reachable or {}).get(n))
    return out


def design_cases(model, t, q, qd, qdd, f_ext=None, actuated=None, pins=None, swing=None, fatigue=None,
                 columns=None, relief=None, buckling_threshold=DEFAULT_THRESHOLD, hydraulics=None, pumps=None,
                 cycle=None, column_loads=None, reachable=None, poses=None) -> DesignCases:
    """Compute the design cases that have their inputs, along a consistent motion t (N,) [s], q, qd, qdd
    (N, nv) with external wrenches f_ext ({link: (N, 6)}, as ``inverse_dynamics``).

    pins: {name: PinSpec | joint} (``pins.pin_loads``) and swing: the swing joint; fatigue: {m,
    life_cycles, reference_cycles}; columns: {actuator: CylinderColumn} with ``relief`` [Pa] (a number, or
    {actuator: Pa}: e.g. each cylinder's head-end line relief, the pressure that can stand on its cap) and the
    ``buckling_threshold``, column_loads: {actuator: ``buckling.ColumnLoads``} (weight, pin friction,
    clearances), reachable: {actuator: the stall envelopes' largest compression per cylinder [N]}; hydraulics: a HydraulicsResult and pumps: keywords of ``pumps.pump_power``
    (engine_power, pump_flow, relief, margin, eta_v, eta_hm, priority); cycle: keywords of
    ``cycle.shortest_cycle`` (names, waypoints, durations, limits, kind, dt, phases, t_ref); poses: the body
    poses (N, NB + 1, 4, 4) at q when already computed (``pins.pin_loads``).
    Raises ValueError / KeyError from the parts, naming what is wrong."""
    dc = DesignCases()
    if pins is not None:
        dc.pins = pin_loads(model, t, q, qd, qdd, pins, f_ext=f_ext, actuated=actuated, swing=swing, poses=poses)
        dc.fatigue = {**dict(m=3.0, life_cycles=2e6, reference_cycles=2e6), **(fatigue or {})}
        for n in dc.pins.names:
            cyc = periodic_cycles(magnitude_history(dc.pins.wrench[n][:, 3:]))
            dc.damage[n] = damage_equivalent_load(cyc, **dc.fatigue)
    dc.buckling = buckling_cases(columns, relief, buckling_threshold, column_loads, reachable)
    if hydraulics is not None and pumps is not None:
        from urdf_dyn.machines.pumps import pump_power, section_loads
        Qd, p = section_loads(hydraulics)
        dc.pumps = pump_power(hydraulics.t, Qd, p, **pumps)
    if cycle is not None:
        from urdf_dyn.machines.cycle import shortest_cycle
        dc.cycle = shortest_cycle(model, f_ext=f_ext, actuated=actuated, **cycle)
    return dc
