"""The excavator's plots and series files: the soil cut (soil.png, soil_direction.png, soil.csv) and the
hydraulic demand (pump_flow.png, hydraulics.csv). matplotlib, Agg backend; written atomically."""
from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from urdf_dyn.io.files import atomic_path
from urdf_dyn.reports.plotting import figure, save_figure, twinx

__all__ = ["plot_soil", "plot_soil_direction", "write_soil_csv", "plot_pump_flow", "write_hydraulics_csv",
           "soil_section"]


def _shade(ax, windows, mask_runs=()):
    for t0, t1 in mask_runs:
        ax.axvspan(t0, t1, color="tab:brown", alpha=0.18, lw=0)
    for t0, _ in (windows or {}).values():
        ax.axvline(t0, color="0.6", lw=0.6, ls=":")


def _label_phases(ax, windows):
    for name, (t0, t1) in (windows or {}).items():
        ax.text(0.5 * (t0 + t1), 1.02, name, transform=ax.get_xaxis_transform(), ha="center", fontsize=7,
                color="0.3")


def plot_soil(t, soil, path, windows=None):
    """PNG: cutting depth [m], soil force on the edge [kN], bank volume cut, loose fill and berm [m³] and
    payload mass [t] over time t (N,) [s] of ``soil`` (a ``machines.loads.SoilLoads``); ``windows`` the
    phases {name: (t0, t1)} [s]. Returns str(path)."""
    from urdf_dyn.machines.hydraulics import intervals
    c = soil.cut
    runs = intervals(t, c.in_soil)
    fig, axes = figure((8, 6.2), 3, 1, sharex=True, left=0.75, right=0.75, top=0.55, hspace=0.25)
    axes = axes[:, 0]
    series = [(c.depth, "cutting depth [m]"), (c.magnitude / 1e3, "soil force on the edge [kN]")]
    for ax, (y, lab) in zip(axes, series):
        _shade(ax, windows, runs)
        ax.plot(t, y, lw=1.2)
        ax.set_ylabel(lab, fontsize=8)
        ax.grid(alpha=0.3)
    ax = axes[2]
    _shade(ax, windows, runs)
    ax.plot(t, c.volume, lw=1.2, label="bank volume cut [m³]")
    if c.fill is not None:
        left = np.divide(soil.mass, c.payload, out=np.zeros(len(t)), where=c.payload > 0)   # after release
        ax.plot(t, c.fill * left, lw=1.0, ls="--", label="loose fill in the bucket [m³]")
        ax.plot(t, c.berm, lw=1.0, ls=":", label="berm ahead of the blade (bank) [m³]")
    ax.set_ylabel("volume [m³]", fontsize=8)
    ax.legend(fontsize=7, loc="upper left")
    ax.grid(alpha=0.3)
    bx = twinx(ax)
    bx.plot(t, soil.mass / 1e3, lw=1.2, color="C3")
    bx.set_ylabel("payload in the bucket [t]", fontsize=8, color="C3")
    _label_phases(axes[0], windows)
    axes[-1].set_xlabel("time [s]")
    s = soil.soil
    fig.suptitle(f"soil cutting, {s.name}: bank {s.density:.0f} kg/m³, swell {s.swell:.2f}, "
                 f"φ = {np.degrees(s.friction_angle):.1f}°, δ = {np.degrees(s.tool_friction_angle):.1f}°, "
                 f"c = {s.cohesion / 1e3:.0f} kPa (shaded: edge in the soil)", fontsize=9)
    return save_figure(fig, path)


def _in_plane_angles(pos, vecs):
    """Angles [deg] of vecs (N, 3) in the vertical plane through the swing (z) axis and the points pos
    (N, 3): from the horizontal pointing away from the axis, positive up."""
    r = pos[:, :2] / np.maximum(np.linalg.norm(pos[:, :2], axis=1), 1e-12)[:, None]
    return np.degrees(np.arctan2(vecs[:, 2], np.einsum("ij,ij->i", vecs[:, :2], r)))


def plot_soil_direction(t, soil, path, edge=None):
    """PNG over the samples with the edge in the soil: above, the direction of the soil force on the edge
    and of the edge's backward travel −v [deg in the boom plane: from the horizontal pointing out, up
    positive] (``edge`` (N, 3) [m] the edge positions, for that plane; default the x–z plane); below, the
    angle between the force and −v against the rake α and 90° − (α + δ), the angle of the wedge's friction
    force alone. Returns str(path)."""
    c, s = soil.cut, soil.soil
    m = c.in_soil
    pos = np.tile([1.0, 0.0, 0.0], (len(t), 1)) if edge is None else np.asarray(edge, float)
    fig, axes = figure((8, 6.0), 2, 1, sharex=True, left=0.8, top=0.55, hspace=0.2)
    ax, bx = axes[:, 0]
    tt = np.where(m, t, np.nan)
    ax.plot(tt, _in_plane_angles(pos, c.force), lw=1.4, label="soil force on the edge")
    ax.plot(tt, _in_plane_angles(pos, -c.velocity), lw=1.2, ls="--", label="backward travel −v of the edge")
    ax.set_ylabel("direction in the boom plane [deg]\n(0: horizontal outward, 90: up)", fontsize=8)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="best")
    cosang = np.einsum("ij,ij->i", c.force, -c.velocity) / np.maximum(
        np.linalg.norm(c.force, axis=1) * np.linalg.norm(c.velocity, axis=1), 1e-12)
    bx.plot(tt, np.degrees(np.arccos(np.clip(cosang, -1, 1))), lw=1.4, label="angle between force and −v")
    bx.plot(tt, np.degrees(c.rake), lw=1.0, ls="--", label="rake α (cutting plate vs −v)")
    bx.plot(tt, 90 - np.degrees(c.rake + s.tool_friction_angle), lw=1.0, ls=":", label="90° − (α + δ)")
    bx.set_ylabel("angle [deg]", fontsize=8)
    bx.set_xlabel("time [s]")
    bx.grid(alpha=0.3)
    bx.legend(fontsize=7, loc="best")
    fig.suptitle(f"soil force direction against the edge's travel ({s.name}; edge in the soil only)", fontsize=10)
    return save_figure(fig, path)


def write_soil_csv(path, t, soil) -> str:
    """soil.csv: t [s], depth [m], the soil force on the edge in world axes [N], the edge velocity [m/s],
    the rake [deg], the bank volume cut, the loose fill and the berm [m³], the payload [kg]. Returns str(path)."""
    c = soil.cut
    head = ["t [s]", "depth [m]", "force_x [N]", "force_y [N]", "force_z [N]", "edge_velocity_x [m/s]",
            "edge_velocity_y [m/s]", "edge_velocity_z [m/s]", "rake [deg]", "bank_volume_cut [m3]",
            "loose_fill [m3]", "berm_bank_volume [m3]", "payload [kg]"]
    cols = [t, c.depth, c.force, c.velocity, np.degrees(c.rake), c.volume, c.fill, c.berm, soil.mass]
    with atomic_path(Path(path)) as tmp:
        with open(tmp, "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(head)
            w.writerows(np.column_stack(cols).tolist())
    return str(path)


def plot_pump_flow(hyd, path, windows=None):
    """PNG: pump flow demand per actuator, stacked [L/min], against the pumps' flow; below, each
    actuator's load-holding pressure [bar] against the relief."""
    t = hyd.t
    fig, axes = figure((8, 6.2), 2, 1, sharex=True, left=0.8, top=0.55, hspace=0.25)
    ax, bx = axes[:, 0]
    names = list(hyd.actuators)
    ax.stackplot(t, *[hyd.actuators[n].demand * 6e4 for n in names], labels=names, alpha=0.8)
    ax.axhline(hyd.pump_flow * 6e4, color="r", ls="--", lw=1, label=f"pumps {hyd.pump_flow * 6e4:.0f} L/min")
    for t0, t1 in hyd.over_demand:
        ax.axvspan(t0, t1, color="r", alpha=0.12, lw=0)
    _shade(ax, windows)
    _label_phases(ax, windows)
    ax.set_ylabel("pump flow demand [L/min]")
    ax.legend(fontsize=7, loc="upper right", ncol=3)
    ax.grid(alpha=0.3)
    for n in names:
        bx.plot(t, hyd.actuators[n].pressure / 1e5, lw=1.1, label=n)
    bx.axhline(hyd.relief / 1e5, color="r", ls="--", lw=1, label=f"main relief {hyd.relief / 1e5:.0f} bar")
    for k, n in enumerate(names):          # an actuator with its own circuit (e.g. the swing relief)
        p = hyd.actuators[n].relief
        if np.isfinite(p) and abs(p - hyd.relief) > 1e-6 * hyd.relief:
            bx.axhline(p / 1e5, color=f"C{k}", ls="--", lw=1, label=f"{n} relief {p / 1e5:.0f} bar")
    _shade(bx, windows)
    bx.set_ylabel("load-holding pressure [bar]")
    bx.set_xlabel("time [s]")
    bx.legend(fontsize=7, loc="upper right", ncol=3)
    bx.grid(alpha=0.3)
    fig.suptitle(f"hydraulic demand: peak {hyd.peak_flow * 6e4:.0f} L/min, positive work "
                 f"{hyd.positive_work / 1e3:.0f} kJ per cycle (red: over the pumps)", fontsize=10)
    return save_figure(fig, path)


def write_hydraulics_csv(path, h) -> str:
    """hydraulics.csv of ``h`` (a HydraulicsResult): t [s], the total pump demand and per actuator the demand,
    the cap- and rod-side flows [L/min], the load-holding pressure [bar] and the power [kW]. Returns str(path)."""
    with atomic_path(Path(path)) as tmp:
        with open(tmp, "w", newline="") as fh:
            w = csv.writer(fh)
            names = list(h.actuators)
            w.writerow(["t [s]", "total_demand [L/min]"] + [f"demand[{n}] [L/min]" for n in names]
                       + [f"q_cap[{n}] [L/min]" for n in names] + [f"q_rod[{n}] [L/min]" for n in names]
                       + [f"p_hold[{n}] [bar]" for n in names] + [f"power[{n}] [kW]" for n in names])
            cols = [h.t, h.total_demand * 6e4] + [h.actuators[n].demand * 6e4 for n in names] + \
                   [h.actuators[n].q_cap * 6e4 for n in names] + [h.actuators[n].q_rod * 6e4 for n in names] + \
                   [h.actuators[n].pressure / 1e5 for n in names] + [h.actuators[n].power / 1e3 for n in names]
            w.writerows(np.column_stack(cols).tolist())
    return str(path)


def soil_section(t, soil):
    """(Markdown lines, JSON dict) of the soil (a ``machines.loads.SoilLoads``) over t (N,) [s]: preset and its sources, peak force with its direction
    against the edge's travel, rake range, bank volume, fill, berm, payload."""
    c, s = soil.cut, soil.soil
    i = int(np.argmax(c.magnitude))
    f, v = c.force[i], c.velocity[i]
    ang = float(np.degrees(np.arccos(np.clip(f @ -v / max(np.linalg.norm(f) * np.linalg.norm(v), 1e-12), -1, 1))))
    m = c.in_soil
    raw = np.degrees(c.rake_raw[m]) if m.any() else np.zeros(1)
    clipped = float(np.mean(np.abs(c.rake_raw[m] - c.rake[m]) > 1e-9)) if m.any() else 0.0
    md = ["## Soil (failure wedge of the Fundamental Earthmoving Equation; urdf_dyn.machines.soil)", "",
          f"soil `{s.name}`: bank {s.density:.0f} kg/m³, swell {s.swell:.2f} (loose {s.loose_density:.0f} kg/m³), "
          f"φ = {np.degrees(s.friction_angle):.1f}°, δ = {np.degrees(s.tool_friction_angle):.1f}°, "
          f"c = {s.cohesion / 1e3:.1f} kPa, c_a = {s.adhesion / 1e3:.1f} kPa — {s.source}", "",
          f"max cutting depth {c.depth.max():.2f} m; peak soil force on the edge **{c.magnitude[i] / 1e3:.1f} kN** at "
          f"t = {t[i]:.2f} s: world ({f[0] / 1e3:.1f}, {f[1] / 1e3:.1f}, {f[2] / 1e3:.1f}) kN, **{ang:.0f}° from the "
          f"edge's backward travel** −v (rake {np.degrees(c.rake[i]):.0f}°; the wedge's friction force alone: "
          f"90° − (α + δ) = {90 - np.degrees(c.rake[i] + s.tool_friction_angle):.0f}°). Rake from the cutting plate "
          f"over the cut {raw.min():.0f}–{raw.max():.0f}°, {100 * clipped:.0f} % of the samples at a limit of the "
          f"wedge's range. Bank volume cut {c.volume.max():.2f} m³; loose fill {c.fill.max():.2f} m³ of the heaped "
          f"capacity; berm pushed ahead {c.berm.max():.2f} m³ (bank); peak payload {soil.mass.max():.0f} kg "
          f"(bank density × bank volume in the bucket). soil.csv has the series; soil_direction.png the force "
          "angle against the edge's travel.", ""]
    js = dict(preset=s.name, bank_density_kg_m3=s.density, loose_density_kg_m3=s.loose_density, swell=s.swell,
              friction_angle_deg=np.degrees(s.friction_angle), tool_friction_angle_deg=np.degrees(s.tool_friction_angle),
              cohesion_Pa=s.cohesion, adhesion_Pa=s.adhesion, source=s.source, max_depth_m=c.depth.max(),
              peak_force_N=c.magnitude[i], t_peak_force_s=t[i], peak_force_world_N=f,
              peak_force_angle_to_backward_travel_deg=ang, rake_at_peak_deg=np.degrees(c.rake[i]),
              rake_range_deg=[raw.min(), raw.max()], rake_clipped_fraction=clipped, volume_m3=c.volume.max(),
              bank_volume_cut_m3=c.volume.max(), loose_fill_m3=c.fill.max(), berm_bank_volume_m3=c.berm.max(),
              peak_payload_kg=soil.mass.max())
    return md, js
