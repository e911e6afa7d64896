"""The design cases of a sized cycle, gathered for the report: every pin's force and its fatigue spectrum
(``machines.pins``, ``machines.fatigue``), the cylinders' buckling (``machines.buckling``), the pumps
against the engine (``machines.pumps``) and the shortest cycle (``machines.cycle``). Each part is computed
when its inputs are given; ``DesignCases.report`` adds the "Design cases" section, the JSON keys
(``pins.<name>.cycle_peak_N``, ``pins.<name>.damage_equivalent_N``, ``actuators.<name>.buckling_safety_factor``,
``hydraulics.peak_power_kW``, ``hydraulics.engine_power_kW``, ``hydraulics.power_limited_s``,
``cycle.shortest_s``, ``cycle.binding_limits``), ``pin_design_loads.csv``, ``pin_forces.csv`` and three plots (pin_loads.png,
buckling.png, pump_power.png)."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from urdf_dyn.machines.buckling import CylinderColumn, buckling
from urdf_dyn.machines.fatigue import damage_equivalent_load, direction_history, periodic_cycles
from urdf_dyn.machines.pins import pin_loads, write_pin_forces, write_pin_loads

__all__ = ["stroke_lengths", "DesignCases", "design_cases", "plot_pin_peaks", "plot_buckling"]


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
    """Results: ``pins`` (PinLoads or None), ``damage`` {pin: ΔF_eq [N]}, ``fatigue`` parameters,
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

    def warnings(self) -> list:
        """One line per problem: a buckling factor under its threshold, a cycle over the engine's power."""
        out = [w for w in (b.warning() for b in self.buckling.values()) if w]
        if self.pumps is not None and self.pumps.power_limited_s > 0:
            p = self.pumps
            out.append(f"the cycle asks for more than the engine's {p.engine_power / 1e3:.0f} kW for "
                       f"{p.power_limited_s:.2f} s (peak {p.peak_power / 1e3:.0f} kW): {p.cycle_time:.1f} s becomes "
                       f"{p.slowed_time:.1f} s")
        return out

    def report(self, md, js, out, outdir, plots):
        """Append the "Design cases" section to ``md`` (list of lines), the keys to ``js``, the CSV and plot
        paths to ``out``; plots through ``plots`` (a PlotWorker)."""
        outdir = Path(outdir)
        md += ["## Design cases (urdf_dyn.machines.design_cases)", ""]
        md += self.notes + ([""] if self.notes else [])
        if self.pins is not None:
            pl = self.pins
            md += ["### Pins: the cycle's peak force per pin (RNEA backward pass with the loop-closure forces, "
                   "RBDA Table 5.1 and §8.12)", "",
                   "Forces on the child / successor side in the pin's own frame (tree joint: the joint frame; loop "
                   "joint: Fp), per pin of a pair. The design loads from the stall envelopes follow in their own "
                   "section.", "",
                   f"Damage-equivalent load: rainflow ranges of the force along its peak direction, S–N exponent "
                   f"m = {self.fatigue.get('m', 3):g}, {self.fatigue.get('life_cycles', 0):.3g} cycles referred to "
                   f"{self.fatigue.get('reference_cycles', 0):.3g}.", "",
                   "| pin | joint | per pin of | cycle peak | at | components in the pin frame (x, y, z) | "
                   "damage-equivalent range |", "|---|---|---:|---:|---:|---|---:|"]
            js.setdefault("pins", {})
            for n in pl.names:
                F, tp, c = pl.cycle_peak(n)
                md.append(f"| {n} | {pl.specs[n].joint} ({pl.kind[n]}) | {pl.specs[n].count} | {F / 1e3:.1f} kN | "
                          f"{tp:.2f} s | {', '.join(f'{x / 1e3:.1f}' for x in c)} kN | "
                          f"{self.damage.get(n, float('nan')) / 1e3:.1f} kN |")
                js["pins"].setdefault(n, {}).update(
                    joint=pl.specs[n].joint, kind=pl.kind[n], count=pl.specs[n].count, cycle_peak_N=F,
                    t_cycle_peak_s=tp, cycle_peak_components_N=c, damage_equivalent_N=self.damage.get(n))
            md.append("")
            if pl.swing is not None:
                sw = pl.swing.peaks()
                md += [f"Swing bearing (`{sw['joint']}`): axial {sw['axial_N'] / 1e3:.1f} kN, radial "
                       f"{sw['radial_N'] / 1e3:.1f} kN, tilting moment {sw['tilting_moment_Nm'] / 1e3:.1f} kN·m, swing "
                       f"torque {sw['torque_Nm'] / 1e3:.1f} kN·m (cycle peaks)", ""]
                js["swing_bearing"] = sw
            path = outdir / "pin_design_loads.csv"
            out["pin_design_loads_csv"] = str(write_pin_loads(pl, path, self.damage))
            out["pin_forces_csv"] = str(write_pin_forces(pl, outdir / "pin_forces.csv"))
            out["pin_loads_png"] = plots.submit(outdir / "pin_loads.png", plot_pin_peaks, pl, self.damage,
                                                outdir / "pin_loads.png")
        if self.buckling:
            md += ["### Rod buckling (stepped pinned–pinned column, ISO/TS 13725 geometric model; "
                   "urdf_dyn.machines.buckling)", "",
                   "| cylinder | load at relief (per cylinder) | critical load at the worst stroke | at pin to pin | "
                   "safety factor | threshold |", "|---|---:|---:|---:|---:|---:|"]
            for n, b in self.buckling.items():
                md.append(f"| {n} | {b.load / 1e3:.0f} kN | {b.critical.min() / 1e3:.0f} kN | {b.worst_length:.3f} m | "
                          f"**{b.safety_factor:.2f}** | {b.threshold:g} |")
                js.setdefault("actuators", {}).setdefault(n, {}).update(b.to_dict())
            md.append("")
            out["buckling_png"] = plots.submit(outdir / "buckling.png", plot_buckling, self.buckling,
                                               outdir / "buckling.png")
        if self.pumps is not None:
            p = self.pumps
            md += ["### Pumps against the engine (load sensing, torque regulation; urdf_dyn.machines.pumps)", "",
                   f"peak shaft power demanded **{p.peak_power / 1e3:.0f} kW** against the engine's "
                   f"{p.engine_power / 1e3:.0f} kW; over it for {p.power_limited_s:.2f} s"
                   + (" (" + ", ".join(f"{a:.2f}–{b:.2f} s" for a, b in p.power_limited[:4]) + ")"
                      if p.power_limited else "")
                   + f"; the cycle's {p.cycle_time:.1f} s becomes {p.slowed_time:.1f} s with the engine's limit. "
                   f"Load-sensing margin {p.margin / 1e5:.0f} bar, η_v = {p.eta_v:g}, η_hm = {p.eta_hm:g}, flow "
                   f"sharing: {p.priority if isinstance(p.priority, str) else ' > '.join(p.priority)}.", ""]
            js.setdefault("hydraulics", {}).update(p.to_dict())
            out["pump_power_png"] = plots.submit(outdir / "pump_power.png", p.plot, outdir / "pump_power.png")
            out["pump_power_csv"] = str(p.write_csv(outdir / "pump_power.csv"))
        if self.cycle is not None:
            c = self.cycle
            pub = "".join(f"; published {k.replace('_', ' ')}: {v['value']:g} ({v['source']})"
                          for k, v in self.published.items())
            md += ["### The shortest cycle (SLSQP over the segment durations; urdf_dyn.machines.cycle)", "",
                   f"shortest feasible cycle **{c.total:.2f} s** against the scenario's {c.reference.sum():.2f} s{pub}",
                   "", "| segment | scenario | shortest | binding limit |", "|---|---:|---:|---|"]
            for ph, d0, d, b in zip(c.phases, c.reference, c.durations, c.binding):
                md.append(f"| {ph} | {d0:.2f} s | {d:.2f} s | {b} |")
            md += ["", "at the shortest cycle, the largest use of each limit: " + ", ".join(
                f"{k} {100 * v:.0f} %" for k, v in c.peaks.items())]
            if np.any(c.floor > 1):
                md.append("")
                md += [f"- segment {ph}: a limit stays at {f:.2f} × however slowly it moves (static load over the limit)"
                       for ph, f in zip(c.phases, c.floor) if f > 1]
            md.append("")
            js["cycle"] = c.to_dict()
            if self.published:
                js["cycle"]["published"] = self.published
        md += [f"- **{w}**" for w in self.warnings()] + ([""] if self.warnings() else [])


def design_cases(model, t, q, qd, qdd, f_ext=None, actuated=None, pins=None, swing=None, fatigue=None,
                 columns=None, relief=None, buckling_threshold=3.5, hydraulics=None, pumps=None,
                 cycle=None) -> DesignCases:
    """Compute the design cases that have their inputs, along a consistent motion t (N,) [s], q, qd, qdd
    (N, nv) with external wrenches f_ext ({link: (N, 6)}, as ``inverse_dynamics``).

    pins: {name: PinSpec | joint} (``pins.pin_loads``) and swing: the swing joint; fatigue: {m,
    life_cycles, reference_cycles}; columns: {actuator: CylinderColumn} with ``relief`` [Pa] (a number, or
    {actuator: Pa}: e.g. each cylinder's head-end line relief, the pressure that can stand on its cap) and the
    ``buckling_threshold``; hydraulics: a HydraulicsResult and pumps: keywords of ``pumps.pump_power``
    (engine_power, pump_flow, relief, margin, eta_v, eta_hm, priority); cycle: keywords of
    ``cycle.shortest_cycle`` (names, waypoints, durations, limits, kind, dt, phases, t_ref).
    Raises ValueError / KeyError from the parts, naming what is wrong."""
    dc = DesignCases()
    if pins is not None:
        dc.pins = pin_loads(model, t, q, qd, qdd, pins, f_ext=f_ext, actuated=actuated, swing=swing)
        dc.fatigue = {**dict(m=3.0, life_cycles=2e6, reference_cycles=2e6), **(fatigue or {})}
        for n in dc.pins.names:
            cyc = periodic_cycles(direction_history(dc.pins.wrench[n][:, 3:]))
            dc.damage[n] = damage_equivalent_load(cyc, **dc.fatigue)
    for n, col in (columns or {}).items():
        p = relief.get(n) if isinstance(relief, dict) else relief
        if p is None:
            raise ValueError(f"no buckling relief for {n} (reliefs given for {', '.join(relief)})")
        dc.buckling[n] = buckling(n, col, p, buckling_threshold)
    if hydraulics is not None and pumps is not None:
        from urdf_dyn.machines.pumps import pump_power, section_loads
        Qd, p = section_loads(hydraulics)
        dc.pumps = pump_power(hydraulics.t, Qd, p, **pumps)
    if cycle is not None:
        from urdf_dyn.machines.cycle import shortest_cycle
        dc.cycle = shortest_cycle(model, f_ext=f_ext, actuated=actuated, **cycle)
    return dc


def plot_pin_peaks(pl, damage, path):
    """Bars: each pin's cycle peak and damage-equivalent range [kN] (design loads are added by the stall
    envelopes); PNG at ``path``."""
    from urdf_dyn.reports.plotting import figure, save_figure
    names = list(pl.names)
    x = np.arange(len(names))
    fig, ax = figure((10, 4.6), 1, 1, bottom=1.5, left=0.9)
    ax = ax[0, 0]
    ax.bar(x - 0.2, [pl.cycle_peak(n)[0] / 1e3 for n in names], 0.4, label="cycle peak")
    ax.bar(x + 0.2, [damage.get(n, 0.0) / 1e3 for n in names], 0.4, label="damage-equivalent range")
    ax.set_xticks(x, [f"{n} (÷{pl.specs[n].count})" if pl.specs[n].count > 1 else n for n in names],
                  rotation=40, ha="right", fontsize=8)
    ax.set_ylabel("pin force per pin [kN]")
    ax.grid(alpha=0.3, axis="y")
    ax.legend(fontsize=8)
    ax.set_title("pin forces over the cycle, per pin (design loads from the stall envelopes: pin_design_loads.png)",
                 fontsize=10)
    return save_figure(fig, path)


def plot_buckling(results, path):
    """Buckling safety factor against the pin-to-pin length over each cylinder's stroke, with each
    threshold; PNG at ``path``."""
    from urdf_dyn.reports.plotting import figure, save_figure
    fig, ax = figure((8, 4.5), 1, 1)
    ax = ax[0, 0]
    for k, (n, b) in enumerate(results.items()):
        s = b.length - b.length[0]
        ax.plot(s, b.safety, color=f"C{k}", label=f"{n} (worst {b.safety_factor:.2f})")
    th = {b.threshold for b in results.values()}
    for v in th:
        ax.axhline(v, color="r", ls="--", lw=1, label=f"threshold {v:g}")
    ax.set_xlabel("stroke from closed [m]")
    ax.set_ylabel("buckling safety factor at relief")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title("rod buckling: stepped pinned–pinned column, relief on the cap side")
    return save_figure(fig, path)
