"""The actuator outputs of a sizing run: actuator_forces.csv, pin_loads.csv and the plots of the forces over
time (with their push and pull capacities) and against the stroke. matplotlib, Agg backend."""
from __future__ import annotations

import csv

import numpy as np

from urdf_dyn.io.files import atomic_path
from urdf_dyn.reports.plotting import figure, save_figure

__all__ = ["write_actuators", "write_actuator_csvs", "plot_actuator_forces", "plot_force_stroke"]


def _scaled(unit):
    """(scale, unit) for printing forces [N] in kN and torques [N m] in kN·m."""
    return (1e3, "kN") if unit == "N" else (1e3, "kN·m")


def write_actuators(report, title=None, phases=None, shade=None):
    """Write the run's actuator outputs through ``report`` (a ``sizing_render.Report``): actuator_forces.csv,
    pin_loads.csv (with loop joints), actuator_forces.png and force_vs_stroke.png. Every CSV column and plot
    axis names its unit (kN, kN·m, m, rad, kW, bar).
    ``phases``: {name: (t0, t1)} [s] labelled on the force plot; ``shade``: [(t0, t1, label)] shaded there
    (e.g. the bucket in the soil)."""
    model, res = report.run.plan.model, report.run.actuation
    write_actuator_csvs(report)
    limits = "push and pull capacity" if res.cylinders else "effort limits"
    title = title or f"{model.name}: actuator forces ({res.case}; dashed: {limits})"
    report.plot("forces_png", plot_actuator_forces, res, report.path("forces_png"), title, phases, shade)
    report.plot("stroke_png", plot_force_stroke, res, report.path("stroke_png"), f"{model.name}: force vs stroke")


def write_actuator_csvs(report):
    """actuator_forces.csv and pin_loads.csv (with loop joints) of ``report.run`` through ``report``, each
    unless ``report.has`` it (written before the report by ``sizing_render.viewer_inputs``)."""
    res = report.run.actuation
    if not report.has("actuator_forces_csv"):
        su = {n: ("m" if u == "N" else "rad") for n, u in zip(res.names, res.units)}
        header = ["t [s]"] + [f"u[{n}] [{_scaled(u)[1]}]" for n, u in zip(res.names, res.units)] + \
                 [f"s[{n}] [{su[n]}]" for n in res.names] + [f"power[{n}] [kW]" for n in res.names] + \
                 [f"p_cap[{n}] [bar]" for n in res.pressures] + [f"p_rod[{n}] [bar]" for n in res.pressures]
        cols = [res.t[:, None], res.u / 1e3, res.s, res.power / 1e3] + \
               [p[0][:, None] for p in res.pressures.values()] + [p[1][:, None] for p in res.pressures.values()]
        with atomic_path(report.path("actuator_forces_csv")) as tmp:
            with open(tmp, "w", newline="") as fh:
                w = csv.writer(fh)
                w.writerow(header)
                w.writerows(np.hstack(cols).tolist())
        report.wrote("actuator_forces_csv")
    if res.pin_force and not report.has("pin_loads_csv"):
        with atomic_path(report.path("pin_loads_csv")) as tmp:
            with open(tmp, "w", newline="") as fh:
                w = csv.writer(fh)
                w.writerow(["t [s]"] + [f"force_per_pin[{k}] [kN]" for k in res.pin_force]
                           + [f"moment_per_pin[{k}] [kN·m]" for k in res.pin_moment])
                w.writerows(np.column_stack([res.t] + [v / 1e3 for v in res.pin_force.values()]
                                            + [v / 1e3 for v in res.pin_moment.values()]).tolist())
        report.wrote("pin_loads_csv")


def plot_actuator_forces(res, path, title, phases=None, shade=None):
    """PNG of each actuator's force u(t) [kN | kN·m] with its push and pull capacities (dashed), the phases
    ({name: (t0, t1)} [s]) labelled and ``shade`` [(t0, t1, label)] shaded. Returns str(path)."""
    p = len(res.names)
    fig, axes = figure((8, 1.7 * p + 1.0), p, 1, sharex=True, left=0.95, top=0.6, hspace=0.25)
    for i, (ax, n) in enumerate(zip(axes[:, 0], res.names)):
        scale, unit = _scaled(res.units[i])
        for k, (t0, t1, label) in enumerate(shade or ()):
            ax.axvspan(t0, t1, color="tab:brown", alpha=0.18, lw=0, label=label if (i == 0 and k == 0) else None)
        ax.plot(res.t, res.u[:, i] / scale, lw=1.2, color=f"C{i}")
        push, pull = res.capacities(i)          # a cylinder pulls with its annulus
        if np.isfinite(push) and push > 0:
            ax.axhline(push / scale, ls="--", lw=0.8, color="0.4")
            ax.axhline(-pull / scale, ls="--", lw=0.8, color="0.4")
        for t0, _ in (phases or {}).values():
            ax.axvline(t0, color="0.6", lw=0.6, ls=":")
        ax.set_ylabel(f"{n}\n[{unit}]", fontsize=8)
        ax.grid(alpha=0.3)
    for name, (t0, t1) in (phases or {}).items():
        axes[0, 0].text(0.5 * (t0 + t1), 1.02, name, transform=axes[0, 0].get_xaxis_transform(), ha="center",
                        fontsize=7, color="0.3")
    if shade:
        axes[0, 0].legend(fontsize=7, loc="lower right")
    axes[-1, 0].set_xlabel("time [s]")
    fig.suptitle(title, fontsize=10)
    return save_figure(fig, path)


def plot_force_stroke(res, path, title):
    """PNG of each actuator's force against its stroke (joint position) [kN | kN·m vs m | rad]. Returns
    str(path)."""
    p = len(res.names)
    su = {n: ("m" if u == "N" else "rad") for n, u in zip(res.names, res.units)}
    fig, axes = figure((3.2 * p, 3.2), 1, p, left=0.75, right=0.15, top=0.45, bottom=0.55, wspace=0.75)
    for i, (ax, n) in enumerate(zip(axes[0], res.names)):
        scale, unit = _scaled(res.units[i])
        ax.plot(res.s[:, i], res.u[:, i] / scale, lw=1.0, color=f"C{i}")
        ax.set_xlabel(f"{n} [{su[n]}]", fontsize=8)
        ax.set_ylabel(f"force [{unit}]", fontsize=8)
        ax.grid(alpha=0.3)
    fig.suptitle(title, fontsize=10)
    return save_figure(fig, path)
