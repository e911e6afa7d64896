"""The duty mix's section of the sizing report (``render_duty``, of a ``machines.duty.DutyResult``): the
activities and what each is built from, each pin's load spectrum (rainflow ranges of the force magnitude over
the life) and damage-equivalent load range (a load, kN), its bushing's p = F/(d L) and p·v against the
allowables, and the Miner damage of the welded details whose stress per unit load is given. Files:
pin_spectra.csv, pin_bearings.csv, pin_spectra.png, pin_bearings.png."""
from __future__ import annotations

import csv

import numpy as np

from urdf_dyn.reports.plotting import figure, save_figure

__all__ = ["render_duty", "write_pin_spectra", "write_pin_bearings", "plot_pin_spectra", "plot_pin_bearings",
           "bearing_peaks"]


def bearing_peaks(duty) -> dict:
    """{pin: dict(p_max_Pa, p_activity, pv_max_Pa_m_s, pv_activity, pv_mean_Pa_m_s (hours-weighted time mean),
    v_max_m_s, diameter_m, length_m)} over the activities."""
    out = {}
    for n, b in duty.bushings.items():
        pk = {a: r.bearing[n].peaks() for a, r in duty.activities.items()}
        ap = max(pk, key=lambda a: pk[a]["p_max_Pa"])
        av = max(pk, key=lambda a: pk[a]["pv_max_Pa_m_s"])
        h = np.array([duty.activities[a].hours for a in pk])
        mean = float(np.sum(h * [pk[a]["pv_mean_Pa_m_s"] for a in pk]) / h.sum()) if h.sum() > 0 else 0.0
        out[n] = dict(p_max_Pa=pk[ap]["p_max_Pa"], p_activity=ap, pv_max_Pa_m_s=pk[av]["pv_max_Pa_m_s"],
                      pv_activity=av, pv_mean_Pa_m_s=mean, v_max_m_s=max(v["v_max_m_s"] for v in pk.values()),
                      diameter_m=b.diameter, length_m=b.length)
    return out


def render_duty(rep, duty):
    """Add the duty mix's subsection (module docstring) to ``rep`` (a ``sizing_render.Report``): Markdown, the
    JSON key ``duty`` and the files pin_spectra.csv, pin_bearings.csv, pin_spectra.png, pin_bearings.png."""
    md, js = rep.md, rep.js
    md += ["### Duty mix: load spectra, bushings and welded details (urdf_dyn.jobs.sizing_duty)", "",
           f"Design life {duty.life_hours:.0f} h as the activities below. Each activity is its own computed motion "
           "and load history (closed-loop inverse dynamics through the pins), repeated hours × cycles per hour "
           "times; its pin forces are counted by rainflow (ASTM E1049 §5.4.4, the `rainflow` package) as a "
           "repeated history. Cycles spanning two activities are not counted.", "",
           "| activity | hours | cycles / h | cycle | repetitions | soil | built from | largest effort use |",
           "|---|---:|---:|---:|---:|---|---|---:|"]
    jd = {"life_hours": duty.life_hours, "activities": {}, "pins": {}, "details": {}}
    for a, r in duty.activities.items():
        k = max(r.effort_use, key=r.effort_use.get) if r.effort_use else None
        use = f"{100 * r.effort_use[k]:.0f} % ({k})" if k else "–"
        md.append(f"| {a} | {r.hours:g} | {r.cycles_per_hour:.1f} | {r.cycle_time:.1f} s | {r.repetitions:.3g} | "
                  f"{r.soil or '–'} | {r.built_from} | {use} |")
        jd["activities"][a] = dict(hours=r.hours, cycles_per_hour=r.cycles_per_hour, cycle_time_s=r.cycle_time,
                                   repetitions=r.repetitions, built_from=r.built_from, soil=r.soil,
                                   payload_kg=r.payload_kg, effort_use=r.effort_use)
    over = [a for a, r in duty.activities.items() if any(v > 1 for v in r.effort_use.values())]
    md += ["", "Effort use: the largest |actuator force| over the cycle against the URDF effort limit (main relief "
           "× area)." + (f" **Over 100 % in {', '.join(over)}: the machine cannot follow that motion there (it would "
                         "stall or slow down); its loads are what the motion needs, not what the machine can apply.**" if over else ""), ""]
    bp = bearing_peaks(duty)
    al = duty.allowable
    md += [f"Per pin (per pin of a pair): the life's spectrum of the force magnitude |F| (a rotating pin load: its "
           f"magnitude, not one direction). ΔF_eq = (Σ n_i ΔF_i^m / N_ref)^(1/m) with m = {duty.m:g}, "
           f"N_ref = {duty.reference_cycles:.3g} is a **force range (kN), not a stress**: a detail's stress needs "
           "its stress per unit load (design.duty.details). Bushing: p = F / (d L) (d, L from design.duty.bushings), "
           "sliding speed v = |ω_rel| d/2 (the relative rotation rate of the two bodies), p·v"
           + (f"; allowable p {al.pressure / 1e6:g} MPa, p·v {al.pv / 1e6:g} MPa·m/s ({al.source or 'no source given'})"
              if al is not None else "; no allowables given (design.duty.allowable)") + ".", "",
           "| pin | cycles in the life (≥ 10 % of the largest range) | largest range | ΔF_eq (load) | d × L | "
           "p max (activity) | p·v max (activity) | p·v mean | p / allowable | p·v max / allowable |",
           "|---|---:|---:|---:|---|---:|---:|---:|---:|---:|"]
    for n, s in duty.spectra.items():
        eq = duty.damage_equivalent(n)
        big = float(s.ranges.max()) if s.ranges.size else 0.0
        b = bp.get(n)
        n10 = float(s.counts[s.ranges >= 0.1 * big].sum()) if s.ranges.size else 0.0
        row = f"| {n} | {s.total_cycles:.3g} ({n10:.3g}) | {big / 1e3:.1f} kN | **{eq / 1e3:.1f} kN** | "
        if b is None:
            row += "– | – | – | – | – | – |"
        else:
            up = f"{100 * b['p_max_Pa'] / al.pressure:.0f} %" if al else "–"
            uv = f"{100 * b['pv_max_Pa_m_s'] / al.pv:.0f} %" if al else "–"
            row += (f"{1e3 * b['diameter_m']:.0f} × {1e3 * b['length_m']:.0f} mm | {b['p_max_Pa'] / 1e6:.1f} MPa "
                    f"({b['p_activity']}) | {b['pv_max_Pa_m_s'] / 1e6:.3f} MPa·m/s ({b['pv_activity']}) | "
                    f"{b['pv_mean_Pa_m_s'] / 1e6:.4f} MPa·m/s | {up} | {uv} |")
        md.append(row)
        jd["pins"][n] = dict(cycles=s.total_cycles, cycles_over_10pct=n10, largest_range_N=big, damage_equivalent_N=eq,
                             **({} if b is None else b))
    md.append("")
    if duty.details:
        md += ["Welded details (stress σ = k · F per unit pin load, given): Palmgren–Miner damage D = Σ n_i / N_i on "
               "the detail's S–N curve (EN 1993-1-9:2005 §7.1 Figure 7.1: m = 3 to 5·10⁶, m = 5 to the cut-off at 10⁸; "
               "or IIW 2016 §3.2.1: knee at 10⁷, m₂ = 22), ranges × γ_Ff against the curve / γ_Mf.", "",
               "| detail | pin | curve | Δσ_C | γ_Ff, γ_Mf | largest stress range | cycles | damage D | source |",
               "|---|---|---|---:|---|---:|---:|---:|---|"]
        for d, x in duty.details.items():
            s = x["spectrum"]
            md.append(f"| {d} | {x['pin']} | {x['curve'].standard} | {x['curve'].fat / 1e6:g} MPa | {x['gamma_Ff']:g}, "
                      f"{x['gamma_Mf']:g} | {(s.ranges.max() if s.ranges.size else 0) / 1e6:.1f} MPa | "
                      f"{s.total_cycles:.3g} | **{x['damage']:.3g}** | {x['source'] or '–'} |")
            jd["details"][d] = dict(pin=x["pin"], fat_Pa=x["curve"].fat, standard=x["curve"].standard,
                                    damage=x["damage"], cycles=s.total_cycles)
        md.append("")
    else:
        md += ["No welded detail has a stress per unit load (design.duty.details): no weld damage is computed; the "
               "ΔF_eq column is a load for the structure's engineer to map onto the details.", ""]
    js["duty"] = jd
    rep.wrote("pin_spectra_csv", write_pin_spectra(duty, rep.path("pin_spectra_csv")))
    if duty.bushings:
        rep.wrote("pin_bearings_csv", write_pin_bearings(duty, rep.path("pin_bearings_csv")))
        rep.plot("pin_bearings_png", plot_pin_bearings, duty, rep.path("pin_bearings_png"))
    rep.plot("pin_spectra_png", plot_pin_spectra, duty, rep.path("pin_spectra_png"))


def write_pin_spectra(duty, path):
    """``pin_spectra.csv``: per pin, ``bins`` equal range bins from 0 to its largest range: pin, bin low and
    high [N], cycles in the life per activity, total and cumulative (ranges ≥ the bin's low end). Returns the
    path."""
    acts = list(duty.activities)
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["pin", "range_low_N", "range_high_N", *(f"cycles_{a}" for a in acts), "cycles_total",
                    "cycles_at_least_low"])
        for n, s in duty.spectra.items():
            top = float(s.ranges.max()) if s.ranges.size else 0.0
            edges = np.linspace(0.0, top if top > 0 else 1.0, duty.bins + 1)
            per = [np.histogram(s.by_activity[a][0], bins=edges, weights=s.by_activity[a][1])[0] for a in acts]
            tot = np.sum(per, axis=0)
            cum = np.cumsum(tot[::-1])[::-1]
            for j in range(duty.bins):
                w.writerow([n, f"{edges[j]:.6g}", f"{edges[j + 1]:.6g}", *(f"{p[j]:.6g}" for p in per),
                            f"{tot[j]:.6g}", f"{cum[j]:.6g}"])
    return path


def write_pin_bearings(duty, path):
    """``pin_bearings.csv``: per pin and activity: d, L [m], p max [Pa], v max [m/s], p·v max and mean
    [Pa m/s]. Returns the path."""
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["pin", "activity", "diameter_m", "length_m", "p_max_Pa", "v_max_m_s", "pv_max_Pa_m_s",
                    "pv_mean_Pa_m_s"])
        for n, b in duty.bushings.items():
            for a, r in duty.activities.items():
                k = r.bearing[n].peaks()
                w.writerow([n, a, f"{b.diameter:g}", f"{b.length:g}", f"{k['p_max_Pa']:.6g}", f"{k['v_max_m_s']:.6g}",
                            f"{k['pv_max_Pa_m_s']:.6g}", f"{k['pv_mean_Pa_m_s']:.6g}"])
    return path


def plot_pin_spectra(duty, path):
    """Each pin's cumulative spectrum: force-magnitude range [kN] against the cycles in the life with at least
    that range (log); PNG at ``path``."""
    fig, ax = figure((10, 5.5), 1, 1, left=0.9, right=3.2)
    ax = ax[0, 0]
    for k, (n, s) in enumerate(duty.spectra.items()):
        r, c = s.exceedance()
        if r.size:
            ax.step(c, r / 1e3, where="post", color=f"C{k % 10}", ls="-" if k < 10 else "--",
                    label=f"{n} (ΔF_eq {duty.damage_equivalent(n) / 1e3:.0f} kN)")
    ax.set_xscale("log")
    ax.set_xlabel("cycles in the life with at least this range")
    ax.set_ylabel("pin force magnitude range per pin [kN]")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.set_title(f"pin load spectra over {duty.life_hours:.0f} h ({', '.join(duty.activities)})", fontsize=9)
    return save_figure(fig, path)


def plot_pin_bearings(duty, path):
    """Bars per pin: the largest bearing pressure p [MPa] and the largest and mean p·v [MPa·m/s] over the
    activities, with the allowables; PNG at ``path``."""
    bp = bearing_peaks(duty)
    names = list(bp)
    x = np.arange(len(names))
    fig, ax = figure((10, 7), 2, 1, sharex=True, bottom=1.7, left=0.9)
    a1, a2 = ax[0, 0], ax[1, 0]
    a1.bar(x, [bp[n]["p_max_Pa"] / 1e6 for n in names], 0.6, label="p max = F / (d L)")
    a2.bar(x - 0.2, [bp[n]["pv_max_Pa_m_s"] / 1e6 for n in names], 0.4, label="p·v max")
    a2.bar(x + 0.2, [bp[n]["pv_mean_Pa_m_s"] / 1e6 for n in names], 0.4, label="p·v mean (hours-weighted)")
    if duty.allowable is not None:
        a1.axhline(duty.allowable.pressure / 1e6, color="r", ls="--", lw=1, label="allowable p")
        a2.axhline(duty.allowable.pv / 1e6, color="r", ls="--", lw=1, label="allowable p·v")
    a1.set_ylabel("p [MPa]")
    a2.set_ylabel("p·v [MPa·m/s]")
    a2.set_xticks(x, names, rotation=40, ha="right", fontsize=8)
    for a in (a1, a2):
        a.grid(alpha=0.3, axis="y")
        a.legend(fontsize=8)
    a1.set_title("pin bushings over the duty mix: bearing pressure and p·v (per pin of a pair)", fontsize=10)
    return save_figure(fig, path)
