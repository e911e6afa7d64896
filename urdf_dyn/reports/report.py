"""Reports: joint torques of a Trajectory (peak and RMS per joint against URDF effort limits, as a Markdown
table and PNG plots), and the sizing job's report (``write_sizing_report``: sizing_report.md and
sizing_report.json, soil, pump-flow, digging-envelope, lift-chart and ZMP plots). matplotlib, Agg backend."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from urdf_dyn.io.files import atomic_path
from urdf_dyn.reports.plotting import PlotWorker, figure, save_figure

__all__ = ["TorqueRow", "torque_table", "format_table", "plot_torques", "plot_motion", "plot_soil",
           "plot_soil_direction", "write_soil_csv", "plot_pump_flow", "write_sizing_report", "sizing_plot",
           "PlotWorker"]


@dataclass
class TorqueRow:
    joint: str
    unit: str
    peak: float       # max |τ|
    rms: float
    limit: float      # URDF <limit effort>, inf if none
    peak_velocity: float

    @property
    def ratio(self) -> float:
        return self.peak / self.limit if np.isfinite(self.limit) and self.limit > 0 else float("nan")

    @property
    def over(self) -> bool:
        return bool(np.isfinite(self.limit) and self.limit > 0 and self.peak > self.limit)


def torque_table(model, traj):
    """One TorqueRow per joint of ``traj`` (peak |τ|, RMS τ [N m | N], effort limit, peak |q̇|)."""
    rows = []
    for k, j in enumerate(traj.joint_names):
        i = model.joint_index(j)
        unit = "N" if model.is_linear[i] else "N m"
        tau = traj.tau[:, k]
        rows.append(TorqueRow(j, unit, float(np.max(np.abs(tau))) if len(tau) else 0.0,
                              float(np.sqrt(np.mean(tau ** 2))) if len(tau) else 0.0,
                              float(model.effort_limit[i]), float(np.max(np.abs(traj.qd[:, k])))
                              if len(tau) else 0.0))
    return rows


def format_table(rows) -> str:
    """A Markdown table of TorqueRows; joints over their effort limit are flagged ``OVER``."""
    head = ("| joint | peak abs τ | RMS τ | effort limit | peak/limit | peak abs q̇ | over |\n"
            "|---|---:|---:|---:|---:|---:|---|")
    lines = [head]
    for r in rows:
        lim = f"{r.limit:.4g} {r.unit}" if np.isfinite(r.limit) and r.limit > 0 else "none"
        ratio = f"{100 * r.ratio:.1f} %" if np.isfinite(r.ratio) else "–"
        lines.append(f"| {r.joint} | {r.peak:.4g} {r.unit} | {r.rms:.4g} {r.unit} | {lim} | {ratio} | "
                     f"{r.peak_velocity:.3g} | {'OVER' if r.over else ''} |")
    return "\n".join(lines)




def plot_motion(model, traj, path):
    """PNG of joint positions q(t) (rad | m) and, for closed loops, the loop residuals ‖δ_k‖ (log scale)."""
    rows = 2 if traj.residuals is not None else 1
    fig, axes = figure((8, 3.2 * rows + 0.5), rows, 1, sharex=True, left=0.75, top=0.4, hspace=0.15)
    ax = axes[0, 0]
    units = dict(zip(model.q_names, model.q_units))
    for k, j in enumerate(traj.q_columns):
        ax.plot(traj.t, traj.q[:, k], lw=1.2, label=f"{j} [{units.get(j, '')}]")
    ax.set_ylabel("q")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    if traj.residuals is not None:
        ax = axes[1, 0]
        for k, n in enumerate(traj.loop_names):
            ax.semilogy(traj.t, np.maximum(traj.residuals[:, k], 1e-18), lw=1.2, label=n)
        ax.set_ylabel("loop residual ‖δ‖ [m, rad]")
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=7)
    axes[-1, 0].set_xlabel("time [s]")
    fig.suptitle(f"{model.name}: motion", fontsize=10)
    return save_figure(fig, path)


def plot_torques(model, traj, path, title=None):
    """PNG of τ(t) per joint with dashed ± effort limits; written atomically to ``path``."""
    n = len(traj.joint_names)
    fig, axes = figure((8, 1.6 * n + 0.8), n, 1, sharex=True, left=0.95, top=0.4, hspace=0.15)
    for k, (ax, j) in enumerate(zip(axes[:, 0], traj.joint_names)):
        i = model.joint_index(j)
        unit = "N" if model.is_linear[i] else "N·m"
        ax.plot(traj.t, traj.tau[:, k], lw=1.2, color=f"C{k % 10}")
        lim = model.effort_limit[i]
        if np.isfinite(lim) and lim > 0 and lim < 10 * max(1e-9, np.max(np.abs(traj.tau[:, k]))):
            for s in (1, -1):
                ax.axhline(s * lim, ls="--", lw=0.8, color="0.4")
        ax.set_ylabel(f"{j}\n[{unit}]", fontsize=8)
        ax.grid(alpha=0.3)
    axes[-1, 0].set_xlabel("time [s]")
    fig.suptitle(title or f"{model.name}: joint torques (dashed: URDF effort limits)", fontsize=10)
    return save_figure(fig, path)


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
    payload mass [t] over time."""
    from urdf_dyn.machines.hydraulics import intervals
    c = soil["cut"]
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
        left = np.divide(soil["mass"], c.payload, out=np.zeros(len(t)), where=c.payload > 0)   # after release
        ax.plot(t, c.fill * left, lw=1.0, ls="--", label="loose fill in the bucket [m³]")
        ax.plot(t, c.berm, lw=1.0, ls=":", label="berm ahead of the blade (bank) [m³]")
    ax.set_ylabel("volume [m³]", fontsize=8)
    ax.legend(fontsize=7, loc="upper left")
    ax.grid(alpha=0.3)
    bx = ax.twinx()
    bx.plot(t, soil["mass"] / 1e3, lw=1.2, color="C3")
    bx.set_ylabel("payload in the bucket [t]", fontsize=8, color="C3")
    _label_phases(axes[0], windows)
    axes[-1].set_xlabel("time [s]")
    s = soil["soil"]
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
    c, s = soil["cut"], soil["soil"]
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
    import csv
    c = soil["cut"]
    head = ["t [s]", "depth [m]", "force_x [N]", "force_y [N]", "force_z [N]", "edge_velocity_x [m/s]",
            "edge_velocity_y [m/s]", "edge_velocity_z [m/s]", "rake [deg]", "bank_volume_cut [m3]",
            "loose_fill [m3]", "berm_bank_volume [m3]", "payload [kg]"]
    cols = [t, c.depth, c.force, c.velocity, np.degrees(c.rake), c.volume, c.fill, c.berm, soil["mass"]]
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


def _jsonable(x):
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, np.ndarray):
        return _jsonable(x.tolist())
    if isinstance(x, (np.floating, float)):
        return float(x) if np.isfinite(x) else None
    if isinstance(x, (np.integer, np.bool_)):
        return x.item()
    return x


#: the sizing report's plots: output key -> (file name, what draws it)
_SIZING_PLOTS = {"soil_png": "soil.png", "soil_direction_png": "soil_direction.png", "pump_flow_png": "pump_flow.png",
                 "envelope_png": "digging_envelope.png", "lift_chart_png": "lift_chart.png", "zmp_png": "zmp.png",
                 "working_range_png": "working_range.png"}


def sizing_plot(plots, key, outdir, obj, t=None, windows=None) -> str:
    """Submit one plot of the sizing report to ``plots`` (a ``PlotWorker``) as soon as its data exist; returns
    its path. ``key``: "soil_png" (obj: the soil info {soil, cut, mass}; t (N,) [s]), "pump_flow_png"
    (a HydraulicsResult), "envelope_png" (DiggingForces), "lift_chart_png" (LiftChart), "zmp_png"
    (StabilityResult), "working_range_png" (WorkingRange); ``windows``: the phases {name: (t0, t1)} [s]."""
    path = Path(outdir) / _SIZING_PLOTS[key]
    if key == "soil_png":
        return plots.submit(path, plot_soil, t, obj, path, windows)
    if key == "soil_direction_png":
        return plots.submit(path, plot_soil_direction, t, obj, path, obj.get("edge"))
    if key == "pump_flow_png":
        return plots.submit(path, plot_pump_flow, obj, path, windows)
    if key == "envelope_png":
        return plots.submit(path, obj.plot_envelope, path)
    return plots.submit(path, obj.plot, path)


def _plot(plots, plotted, key, outdir, obj, t=None, windows=None):
    return plotted[key] if key in plotted else sizing_plot(plots, key, outdir, obj, t, windows)


def _soil_section(t, soil):
    """(Markdown lines, JSON dict) of the soil: preset and its sources, peak force with its direction
    against the edge's travel, rake range, bank volume, fill, berm, payload."""
    c, s = soil["cut"], soil["soil"]
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
          f"capacity; berm pushed ahead {c.berm.max():.2f} m³ (bank); peak payload {soil['mass'].max():.0f} kg "
          f"(bank density × bank volume in the bucket). soil.csv has the series; soil_direction.png the force "
          "angle against the edge's travel.", ""]
    js = dict(preset=s.name, bank_density_kg_m3=s.density, loose_density_kg_m3=s.loose_density, swell=s.swell,
              friction_angle_deg=np.degrees(s.friction_angle), tool_friction_angle_deg=np.degrees(s.tool_friction_angle),
              cohesion_Pa=s.cohesion, adhesion_Pa=s.adhesion, source=s.source, max_depth_m=c.depth.max(),
              peak_force_N=c.magnitude[i], t_peak_force_s=t[i], peak_force_world_N=f,
              peak_force_angle_to_backward_travel_deg=ang, rake_at_peak_deg=np.degrees(c.rake[i]),
              rake_range_deg=[raw.min(), raw.max()], rake_clipped_fraction=clipped, volume_m3=c.volume.max(),
              bank_volume_cut_m3=c.volume.max(), loose_fill_m3=c.fill.max(), berm_bank_volume_m3=c.berm.max(),
              peak_payload_kg=soil["mass"].max())
    return md, js


def write_sizing_report(model, launch_path, res, outdir, head, table, windows=None, soil=None, hydraulics=None,
                        machine=None, f_ext=None, plots=None, plotted=None) -> dict:
    """sizing_report.md and sizing_report.json (keys: ``actuators.<name>.peak|rms|...``,
    ``iso6015.bucket_digging_force_N``, ``iso6015.arm_digging_force_N``, ``iso6015.limited_by``,
    ``working_range.<dimension>_m``, ``lift_capacity``, ``stability.min_margin_m``, ``hydraulics.peak_flow_L_min``,
    ``soil``), soil.csv, and the plots soil.png, soil_direction.png, pump_flow.png, digging_envelope.png,
    lift_chart.png, zmp.png, working_range.png for what was computed (through ``plots``,
    a ``PlotWorker``, when given: then they are complete after its ``wait()``), except those in ``plotted``
    ({output: path} submitted earlier with ``sizing_plot``). Returns {output: path}."""
    import json
    from pathlib import Path
    outdir = Path(outdir)
    machine = machine or {}
    plots = plots or PlotWorker(parallel=False)
    plotted = plotted or {}
    out = {}
    md = [f"# {model.name}: actuator sizing", "", f"launch: `{launch_path}`", "", head, ""]
    if windows:
        md += ["phases: " + ", ".join(f"{n} {a:.2f}–{b:.2f} s" for n, (a, b) in windows.items()), ""]
    md += ["## Actuators (closed-loop inverse dynamics, RBDA §8.12)", "", table, ""]
    js = dict(robot=model.name, launch=str(launch_path), case=res.case, phases=windows or {}, actuators={})
    for i, r in enumerate(res.summary()):
        u = res.u[:, i]
        cp, cl = res.capacities(i)
        js["actuators"][r["name"]] = dict(
            unit=r["unit"], peak=r["peak"], rms=r["rms"], peak_push=float(np.maximum(u, 0).max(initial=0)),
            peak_pull=float(np.maximum(-u, 0).max(initial=0)), push_capacity=cp, pull_capacity=cl,
            t_peak_s=float(res.t[int(np.argmax(np.abs(u)))]), peak_power_W=r["peak_power"], net_work_J=r["net_work"],
            positive_work_J=r["work_pos"])
    if f_ext:
        md += ["## External loads (f_ext: soil, payload, loads:)", "",
               "| link | peak force | at | peak moment about the link origin | at |", "|---|---:|---:|---:|---:|"]
        js["external_loads"] = {}
        for link, w in f_ext.items():
            fn, nn = np.linalg.norm(w[:, 3:], axis=1), np.linalg.norm(w[:, :3], axis=1)
            i, j = int(np.argmax(fn)), int(np.argmax(nn))
            md.append(f"| {link} | {fn[i] / 1e3:.1f} kN | {res.t[i]:.2f} s | {nn[j] / 1e3:.1f} kN·m | {res.t[j]:.2f} s |")
            js["external_loads"][link] = dict(peak_force_N=fn[i], t_peak_force_s=res.t[i], peak_moment_Nm=nn[j],
                                              t_peak_moment_s=res.t[j])
        md.append("")
    if soil is not None:
        md_soil, js["soil"] = _soil_section(res.t, soil)
        md += md_soil
        out["soil_csv"] = write_soil_csv(outdir / "soil.csv", res.t, soil)
        out["soil_png"] = _plot(plots, plotted, "soil_png", outdir, soil, res.t, windows)
        out["soil_direction_png"] = _plot(plots, plotted, "soil_direction_png", outdir, soil, res.t, windows)
    if hydraulics is not None:
        h = hydraulics
        md += ["## Hydraulics (urdf_dyn.machines.hydraulics)", "",
               f"main relief {h.relief / 1e5:.0f} bar (a motor with its own circuit: its relief, in the table); pumps "
               f"{h.pump_flow * 6e4:.0f} L/min. Pushing is checked against the cap area, pulling against the "
               "annulus, each at relief; speeds per direction (extension fed on the cap side, retraction on the "
               "annulus) against the URDF limit and the flow the valve section can receive. Positive work "
               "∫ max(u v, 0) dt is what the pumps supply (ideal, no regeneration); the actuator table's net work "
               "∫ u v dt nets out what the loads give back.", "", h.table(), ""]
        md += [f"- **{w}**" for w in h.warnings()] + ([""] if h.warnings() else [])
        js["hydraulics"] = h.to_dict()
        out["pump_flow_png"] = _plot(plots, plotted, "pump_flow_png", outdir, h, res.t, windows)
        import csv
        from urdf_dyn.io.files import atomic_path as _ap
        with _ap(outdir / "hydraulics.csv") as tmp:
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
        out["hydraulics_csv"] = str(outdir / "hydraulics.csv")
    if "iso6015" in machine:
        d = machine["iso6015"]
        md += ["## ISO 6015 tool forces (urdf_dyn.machines.iso6015)", "", d.table(), "", d.conditions(), ""]
        js["iso6015"] = dict(bucket_digging_force_N=d.bucket_N, arm_digging_force_N=d.arm_N,
                             limited_by=d.limited_by, at_limit=d.at_limit, pressures_bar=d.pressures_bar,
                             relief_Pa=d.relief,
                             holding_relief_Pa=d.holding_relief, include_weight=d.include_weight,
                             tipping_checked=d.tipping_checked, bucket_lip_m=d.bucket_tip, arm_lip_m=d.arm_tip,
                             holding_bar=d.holding_bar)
        if d.reference:
            js["iso6015"]["published"] = d.reference
        out["envelope_png"] = _plot(plots, plotted, "envelope_png", outdir, d)
    if "working_range" in machine:
        w = machine["working_range"]
        md += ["## Working ranges, ISO 7135 dimensions (urdf_dyn.machines.working_range)", "", w.table(), ""]
        js["working_range"] = w.to_dict()
        if w.reference:
            js["working_range"]["published"] = w.reference
        out["working_range_png"] = _plot(plots, plotted, "working_range_png", outdir, w)
    if "lift_chart" in machine:
        lc = machine["lift_chart"]
        md += ["## ISO 10567 lift capacity (urdf_dyn.machines.lift_chart)", "", lc.to_markdown(), ""]
        js["lift_capacity"] = lc.grid()
        out["lift_chart_png"] = _plot(plots, plotted, "lift_chart_png", outdir, lc)
    if "stability" in machine:
        st = machine["stability"]
        md += ["## Stability (urdf_dyn.machines.stability)", "",
               f"minimum tipping margin (ZMP to the tipping polygon) **{st.min_margin:.3f} m** at t = {st.t_min:.2f} s"
               + ("; **the ZMP leaves the polygon**" if np.any(st.outside) else "; the ZMP stays inside the polygon"),
               "", "One tipping line for the ZMP check, the lift chart and ISO 6015's tipping limit: the polygon "
               f"x ∈ [{st.footprint[:, 0].min():.3f}, {st.footprint[:, 0].max():.3f}] m, y ∈ "
               f"[{st.footprint[:, 1].min():.3f}, {st.footprint[:, 1].max():.3f}] m. Convention (ISO 10567's own "
               "wording of the tipping lines was not retrievable): Caterpillar Performance Handbook ed. 47, "
               "p. 7-122, \"at the tipping point when the weight in the bucket ... causes the rear rollers to lift "
               "clear of the track rails\": the machine pivots on the roller-rail contact, i.e. the front idler / "
               "last roller over the front and the near track's centreline over the side.", ""]
        js["stability"] = dict(min_margin_m=st.min_margin, t_min_margin_s=st.t_min, outside=bool(np.any(st.outside)),
                               footprint_m=st.footprint)
        out["zmp_png"] = _plot(plots, plotted, "zmp_png", outdir, st)
    if "design" in machine:          # pins, buckling, pumps, shortest cycle (machines.design_cases)
        machine["design"].report(md, js, out, outdir, plots)
    if "stall" in machine:           # stall envelopes and the pins' design loads (jobs.sizing_stall)
        machine["stall"].report(md, js, out, outdir, plots, machine.get("design"))
    rep = outdir / "sizing_report.md"
    from urdf_dyn.io.escape import md_document      # no raw HTML from a name; no inf, NaN or 300-digit figure
    text = md_document("\n".join(md) + "\n", str(rep))
    with atomic_path(rep) as tmp:
        Path(tmp).write_text(text)
    out["report"] = str(rep)
    jp = outdir / "sizing_report.json"
    with atomic_path(jp) as tmp:
        Path(tmp).write_text(json.dumps(_jsonable(js), indent=1, allow_nan=False) + "\n")
    out["report_json"] = str(jp)
    return out
