"""The design cases' sections of the sizing report: the pins' cycle peaks and damage-equivalent ranges, rod
buckling, the pumps against the engine and the shortest cycle (``render_design``, of a
``machines.design_cases.DesignCases``), and the stall envelopes with the pins' design loads
(``render_stall``). Files: pin_design_loads.csv, pin_forces.csv, pin_loads.png, buckling.png,
pump_power.png, pump_power.csv, stall_envelopes.png, pin_design_loads.png."""
from __future__ import annotations

import csv

import numpy as np

from urdf_dyn.machines.reliefs import relief_text
from urdf_dyn.reports.plotting import figure, save_figure

__all__ = ["render_design", "render_stall", "plot_pin_peaks", "plot_buckling", "plot_pump_power",
           "write_pump_power_csv", "write_pin_loads", "write_pin_forces"]


def _buckling_section(results, relief_name=None) -> list:
    """Markdown lines of the buckling check ({cylinder: BucklingResult}); ``relief_name`` the word the
    scenario gave the relief as (line_head, main, heavy_lift) or None."""
    th = sorted({b.threshold for b in results.values()})
    md = ["### Cylinder buckling: ISO/TS 13725 yield-based limit (stepped tube-and-rod column; "
          "urdf_dyn.machines.buckling)", "",
          "F_max: the compression at which the rod's largest stress reaches its yield strength, on the stepped "
          "pinned–pinned column with the cylinder's own weight, the pins' friction moment, the tilt the gland and "
          "piston clearances allow and second-order bending (ISO/TS 13725:2021). Load: the relief"
          + (f" ({relief_name})" if relief_name else "") + " on the cap, per cylinder — the largest compression "
          "its circuit can hold. Factor k = F_max / load at the worst stroke, against the threshold "
          + ", ".join(f"{v:g}" for v in th) + " (the relief force an upper bound, EN 1990 Table A1.3; F_max the "
          "resistance, EN 1993-1-1 §6.1, γ_M1 = 1.00). The elastic load is the stepped column's Euler load; the "
          "reachable compression is the largest the stall envelopes reach (every stall state, its cylinder's "
          "share).", "",
          "| cylinder | relief | load at relief (per cylinder) | reachable compression (stall) | yield-based limit "
          "F_max | elastic load | at pin to pin | k = F_max / load | threshold |",
          "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for n, b in results.items():
        k = int(np.argmin(b.safety))
        el = f"{b.elastic[k] / 1e3:.0f} kN" if b.elastic is not None else "–"
        rc = f"{b.reachable / 1e3:.0f} kN" if b.reachable else "–"
        md.append(f"| {n} | {b.relief / 1e5:.0f} bar | {b.load / 1e3:.0f} kN | {rc} | {b.critical[k] / 1e3:.0f} kN | "
                  f"{el} | {b.worst_length:.3f} m | **{b.safety_factor:.2f}** | {b.threshold:g} |")
    return md + [""]


def render_design(rep, self, stall=False, relief_name=None):
    """Add the "Design cases" section of ``self`` (a ``machines.design_cases.DesignCases``) to ``rep`` (a
    ``sizing_render.Report``): Markdown, JSON keys (``pins.<name>.cycle_peak_N``, ``damage_equivalent_N``,
    ``actuators.<name>.buckling_safety_factor``, ``hydraulics.peak_power_kW``, ``cycle.shortest_s``, ...),
    pin_design_loads.csv (written by ``render_stall`` when ``stall``: once, with the design loads),
    pin_forces.csv and the plots pin_loads.png, buckling.png, pump_power.png; ``relief_name``: the word the
    buckling relief was given as (``SizeDocument.relief_names``)."""
    md, js = rep.md, rep.js
    md += ["## Design cases (urdf_dyn.machines.design_cases)", ""]
    md += self.notes + ([""] if self.notes else [])
    if self.pins is not None:
        pl = self.pins
        md += ["### Pins: the cycle's peak force per pin (RNEA backward pass with the loop-closure forces, "
               "RBDA Table 5.1 and §8.12)", "",
               "Forces on the child / successor side in the pin's own frame (tree joint: the joint frame; loop "
               "joint: Fp), per pin of a pair. The design loads from the stall envelopes follow in their own "
               "section.", "",
               (f"Damage-equivalent load range (a force, not a stress): rainflow ranges of the force magnitude |F| "
                f"over the duty mix's spectrum (below), S–N exponent m = {self.fatigue.get('m', 3):g}, referred to "
                f"{self.fatigue.get('reference_cycles', 0):.3g} cycles." if self.duty is not None else
                f"Damage-equivalent load range (a force, not a stress): rainflow ranges of the force magnitude |F|, "
                f"S–N exponent m = {self.fatigue.get('m', 3):g}, this cycle repeated "
                f"{self.fatigue.get('life_cycles', 0):.3g} times referred to {self.fatigue.get('reference_cycles', 0):.3g} "
                "(no duty mix: design.duty)."), "",
               "| pin | joint | per pin of | cycle peak | at | components in the pin frame (x, y, z) | "
               "damage-equivalent load range ΔF_eq |", "|---|---|---:|---:|---:|---|---:|"]
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
        if stall:
            rep.manifest.reserve("pin_design_loads_csv")      # written once, with the design loads
        else:
            rep.wrote("pin_design_loads_csv", write_pin_loads(pl, rep.path("pin_design_loads_csv"), self.damage))
        rep.wrote("pin_forces_csv", write_pin_forces(pl, rep.path("pin_forces_csv")))
        rep.plot("pin_loads_png", plot_pin_peaks, pl, self.damage, rep.path("pin_loads_png"))
        if self.duty is not None:
            from urdf_dyn.reports.duty_report import render_duty
            render_duty(rep, self.duty)
    if self.buckling:
        md += _buckling_section(self.buckling, relief_name)
        for n, b in self.buckling.items():
            js.setdefault("actuators", {}).setdefault(n, {}).update(b.to_dict())
        rep.plot("buckling_png", plot_buckling, self.buckling, rep.path("buckling_png"))
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
        rep.plot("pump_power_png", plot_pump_power, p, rep.path("pump_power_png"))
        rep.wrote("pump_power_csv", write_pump_power_csv(p, rep.path("pump_power_csv")))
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


def render_stall(rep, stall, design=None):
    """Add the stall subsection of ``stall`` (a ``jobs.sizing_stall.StallReport``: the envelopes ``env``, the
    design loads ``loads``, their ``convergence`` and the ``sliding`` case) to ``rep``: Markdown, the keys ``pins.<name>.design_load_N``,
    ``pins.<name>.design_case`` and ``stall``, pin_design_loads.csv with the design loads beside the cycle
    peaks (``design``: the DesignCases) and the plots stall_envelopes.png, pin_design_loads.png."""
    from urdf_dyn.reports.check_plots import plot_design_loads, plot_stall_envelopes
    env, dl = stall.env, stall.loads
    md, js = rep.md, rep.js
    fr = "anchored, ISO 6015 §4.5" if env.friction is None else f"μ = {env.friction:g} (design.friction)"
    rn = f" ({stall.relief_name}, design.stall_relief)" if stall.relief_name else " (design.stall_relief)"
    md += ["### Stall envelopes and the pins' design loads (urdf_dyn.machines.stall)", "",
           f"Each cylinder at its working relief {env.relief / 1e5:.0f} bar{rn} against a locked bucket over {len(env.X)} "
           f"poses (a grid over the three strokes, 1 % inside their ends), every other cylinder at most at its holding "
           f"(line) relief of the loaded side ({relief_text(env.holding_relief)}), the machine neither tipping "
           f"(the tipping polygon{'' if env.tipping_checked else ': not given'}) nor "
           f"sliding ({fr}); weights included. The force at the lip in the ISO 6015 tangent direction and as the worst "
           f"of {len(env.fan_deg)} directions in the boom plane (plus the tangent).", "",
           *(["Where the holding relief equals the working relief, the fan's states do not depend on which "
              "cylinder works (every cylinder has the same limit): its worst force is then the same for the three, "
              "and a design case names the cylinder that is at its limit.", ""]
             if env.holding_relief == env.relief else []),
           "| working cylinder | tangent: largest held force | limited by | fan: largest held force | limited by |",
           "|---|---:|---|---:|---|"]
    for c in env.working:
        t, f = env.tangent[c], env.fan[c]
        kt, kf = int(np.argmax(t["force_N"])), int(np.argmax(f["force_N"]))
        md.append(f"| {c} | {t['force_N'][kt] / 1e3:.1f} kN | {t['limited_by'][kt]} | {f['force_N'][kf] / 1e3:.1f} kN "
                  f"| {f['limited_by'][kf]} |")
    pl = design.pins if design is not None else None
    md += ["", "| pin | design load (per pin) | cycle peak | design / peak | case: working cylinder, direction, "
           "tip force, limited by | strokes boom, stick, bucket [m] |", "|---|---:|---:|---:|---|---|"]
    js.setdefault("pins", {})
    csv = {}
    for n, d in dl.items():
        c = d["design_case"]
        peak = pl.cycle_peak(n)[0] if pl is not None and n in pl.names else float("nan")
        case = (f"{c['cylinder']} stall, {c['direction']} {c['angle_deg']:.0f}°, {c['tip_force_N'] / 1e3:.1f} kN, "
                f"{c['limited_by']}")
        md.append(f"| {n} | **{d['design_load_N'] / 1e3:.1f} kN** | {peak / 1e3:.1f} kN | {d['design_load_N'] / peak:.1f} | "
                  f"{case} | " + ", ".join(f"{v:+.3f}" for v in c["pose"].values()) + " |")
        js["pins"].setdefault(n, {}).update(design_load_N=d["design_load_N"], design_case=c,
                                            design_load_components_N=d["components_N"])
        csv[n] = (f"{d['design_load_N']:.6g}", case + " at " + ", ".join(f"{k} {v:+.4f} m" for k, v in c["pose"].items()))
    md.append("")
    md += _convergence_section(stall)
    js["stall"] = env.summary()
    if stall.convergence is not None:
        js["stall"]["convergence"] = stall.convergence.summary()
    if stall.sliding is not None:
        js["stall"]["sliding"] = stall.sliding.summary()
    if pl is not None:
        rep.wrote("pin_design_loads_csv", write_pin_loads(pl, rep.path("pin_design_loads_csv"), design.damage, csv))
    rep.plot("stall_envelopes_png", plot_stall_envelopes, env, rep.path("stall_envelopes_png"))
    peaks = {n: pl.cycle_peak(n)[0] for n in pl.names} if pl is not None else {}
    rep.plot("pin_design_loads_png", plot_design_loads, dl, peaks, rep.path("pin_design_loads_png"))


def _convergence_section(stall) -> list:
    """Markdown: the grid's and the refined design load per pin with the passes and the last change
    (``stall_refine.ConvergedLoads.summary``), and the sliding case's beside the anchored one."""
    conv, sl = stall.convergence, stall.sliding
    if conv is None:
        return []
    c = conv.summary()
    g = c.pop("_grid")
    s = sl.summary() if sl is not None else {}
    s.pop("_grid", None)
    mu = f"μ = {sl.friction:g}" if sl is not None else ""
    md = [f"Convergence (urdf_dyn.machines.stall_refine): from the {' × '.join(map(str, g['n']))} grid with "
          f"{g['n_fan']} directions: {g['method']}; converged when that check finds less than "
          f"{100 * g['tol']:g} % more. The design loads are the anchored case's (ISO 6015 §4.5); the sliding case "
          f"({mu}, design.friction) is shown beside it, its own refined search.", "",
          "| pin | grid (anchored) | refined (anchored) | rise | passes | last change | converged | "
          f"refined, sliding {mu} |", "|---|---:|---:|---:|---:|---:|---|---:|"]
    for p, r in c.items():
        sv = f"{s[p]['converged_N'] / 1e3:.1f} kN" + ("" if s[p]["converged"] else " (not converged)") \
            if p in s else "–"
        md.append(f"| {p} | {r['grid_N'] / 1e3:.1f} kN | **{r['converged_N'] / 1e3:.1f} kN** | "
                  f"{100 * r['rise']:+.1f} % | {r['passes']} | {round(100 * r['last_change'], 2) + 0.0:.2f} % | "
                  f"{'yes' if r['converged'] else '**no**'} | {sv} |")
    return md + [""]


def plot_pin_peaks(pl, damage, path):
    """Bars: each pin's cycle peak and damage-equivalent range [kN] (design loads are added by the stall
    envelopes); PNG at ``path``."""
    names = list(pl.names)
    x = np.arange(len(names))
    fig, ax = figure((10, 4.6), 1, 1, bottom=1.5, left=0.9)
    ax = ax[0, 0]
    ax.bar(x - 0.2, [pl.cycle_peak(n)[0] / 1e3 for n in names], 0.4, label="cycle peak")
    ax.bar(x + 0.2, [damage.get(n, 0.0) / 1e3 for n in names], 0.4, label="damage-equivalent load range (|F|)")
    ax.set_xticks(x, [f"{n} (÷{pl.specs[n].count})" if pl.specs[n].count > 1 else n for n in names],
                  rotation=40, ha="right", fontsize=8)
    ax.set_ylabel("pin force per pin [kN]")
    ax.grid(alpha=0.3, axis="y")
    ax.legend(fontsize=8)
    ax.set_title("pin forces over the cycle, per pin (design loads from the stall envelopes: pin_design_loads.png)",
                 fontsize=10)
    return save_figure(fig, path)


def plot_buckling(results, path):
    """The buckling factor k = F_max / relief force (ISO/TS 13725 yield-based limit) over each cylinder's
    stroke, with each threshold; PNG at ``path``."""
    fig, ax = figure((8, 4.5), 1, 1)
    ax = ax[0, 0]
    for k, (n, b) in enumerate(results.items()):
        s = b.length - b.length[0]
        ax.plot(s, b.safety, color=f"C{k}", label=f"{n} (worst {b.safety_factor:.2f})")
    th = {b.threshold for b in results.values()}
    for v in th:
        ax.axhline(v, color="r", ls="--", lw=1, label=f"threshold {v:g}")
    ax.set_xlabel("stroke from closed [m]")
    ax.set_ylabel("k = F_max / relief force")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title("cylinder buckling: ISO/TS 13725 yield-based limit F_max over the relief force on the cap",
                 fontsize=10)
    return save_figure(fig, path)


def plot_pump_power(pumps, path, title="pump power against the engine"):
    """Demanded and delivered shaft power against the engine's limit, and demanded against available
    flow, over the cycle; PNG at ``path``."""
    fig, ax = figure((9, 6), 2, 1, sharex=True)
    a1, a2 = ax[0, 0], ax[1, 0]
    a1.plot(pumps.t, pumps.power_demand / 1e3, label="shaft power demanded")
    a1.plot(pumps.t, pumps.power_delivered / 1e3, "--", label="delivered (torque regulation)")
    a1.axhline(pumps.engine_power / 1e3, color="r", lw=1, label=f"engine {pumps.engine_power / 1e3:.0f} kW")
    for t0, t1 in pumps.power_limited:
        a1.axvspan(t0, t1, color="r", alpha=0.12)
    a1.set_ylabel("power [kW]")
    a1.set_ylim(0, 1.35 * max(pumps.engine_power, pumps.peak_power) / 1e3)
    a1.grid(alpha=0.3)
    a1.legend(loc="upper right", fontsize=8, ncol=3)
    a2.plot(pumps.t, pumps.demand * 6e4, label="flow demanded")
    a2.plot(pumps.t, pumps.available * 6e4, "--", label="flow available at pump pressure")
    a2.set_ylabel("flow [L/min]")
    a2.set_xlabel("t [s]")
    a2.set_ylim(0, 1.3 * max(pumps.demand.max(), min(pumps.available.max(), 10 * pumps.pump_flow)) * 6e4)
    a2.grid(alpha=0.3)
    a2.legend(loc="upper right", fontsize=8, ncol=2)
    a1.set_title(title)
    return save_figure(fig, path)


def write_pump_power_csv(pumps, path):
    """The series as CSV: t [s], pump pressure [bar], flow demanded and available [L/min], shaft power
    demanded and delivered [kW], slow-down s [-]. Returns the path."""
    import csv
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["t [s]", "pump pressure [bar]", "flow demanded [L/min]", "flow available [L/min]",
                    "shaft power demanded [kW]", "shaft power delivered [kW]", "slow-down [-]"])
        w.writerows(np.column_stack([pumps.t, pumps.pressure / 1e5, pumps.demand * 6e4,
                                     np.minimum(pumps.available, 1e3) * 6e4, pumps.power_demand / 1e3,
                                     pumps.power_delivered / 1e3, pumps.slowdown]).tolist())
    return path


def write_pin_loads(loads, path, damage=None, design=None):
    """Write ``pin_design_loads.csv``: one row per pin — name, joint, kind, count, cycle peak [N], its time
    [s] and components in the pin frame [N], and, when given, the damage-equivalent load [N] ({name: N})
    and design load columns ({name: (N, case)}, left empty otherwise). Returns the path."""
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["pin", "joint", "kind", "count", "cycle_peak_N", "t_peak_s", "fx_N", "fy_N", "fz_N",
                    "damage_equivalent_N", "design_load_N", "design_case"])
        for n in loads.names:
            F, tp, c = loads.cycle_peak(n)
            d = (design or {}).get(n, ("", ""))
            w.writerow([n, loads.specs[n].joint, loads.kind[n], loads.specs[n].count, f"{F:.6g}", f"{tp:.4g}",
                        *(f"{x:.6g}" for x in c), f"{damage[n]:.6g}" if damage and n in damage else "", *d])
    return path


def write_pin_forces(loads, path):
    """Write the pin forces over time as CSV: ``t [s]``, then per pin ``<pin> fx [N]``, ``fy``, ``fz`` (in the
    pin's own frame, per pin of a pair) and ``<pin> |f| [N]``; then, with a swing bearing, its axial, radial
    [N], tilting moment and torque [N m]. Returns the path."""
    cols, head = [loads.t], ["t [s]"]
    for n in loads.names:
        w = loads.wrench[n]
        cols += [w[:, 3], w[:, 4], w[:, 5], loads.force(n)]
        head += [f"{n} fx [N]", f"{n} fy [N]", f"{n} fz [N]", f"{n} |f| [N]"]
    if loads.swing is not None:
        sb = loads.swing
        cols += [sb.axial, sb.radial, sb.tilting, sb.torque]
        head += [f"{sb.joint} axial [N]", f"{sb.joint} radial [N]", f"{sb.joint} tilting moment [N m]",
                 f"{sb.joint} torque [N m]"]
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(head)
        w.writerows(np.column_stack(cols).tolist())
    return path
