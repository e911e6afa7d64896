"""The electric-drive sizing report of an arm (``machines.drives.ArmSizing``): Markdown tables of the motors,
the reducers, the wrist's payload, the balancers and the pin forces; a CSV of the cycle; two plots — the
motors' operating points on their torque–speed curves (``machines.motors.plot_operating_points``) and the
cycle's reducer torques, balancer forces and pin forces over time. It speaks of drives: torque, speed, power.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from urdf_dyn.io.files import atomic_path
from urdf_dyn.reports.plotting import pyplot, save_figure
from urdf_dyn.reports.sizing_render import KindReport

__all__ = ["drive_tables", "drive_markdown", "summary_lines", "plot_torque_speed", "plot_drive_cycle", "write_drive_csv",
           "write_drive_report", "render_arm", "ArmReport"]

_RPM = 60.0 / (2.0 * np.pi)


def _pct(x):
    return "–" if not np.isfinite(x) else f"{100 * x:.0f} %"


def _life(h):
    """A life [h] as printed: "∞" at rest, "> 10⁶" past a million hours (a century of shifts), else 3 digits."""
    return "∞" if not np.isfinite(h) else "> 10⁶" if h > 1e6 else f"{h:.3g}"


def _flag(*ratios):
    return "OVER" if any(r > 1.0 for r in ratios if np.isfinite(r)) else "ok"


def drive_tables(sz) -> str:
    """The report's tables (Markdown) for an ArmSizing ``sz``."""
    d = sz.data
    out = ["### Motors (torque at the motor shaft)\n",
           "τ_m = τ_j/(N η) driving, τ_j η/N back-driven, + (J_m + J_r) N q̈; ω_m = N q̇; RMS over the cycle.\n",
           "| joint | motor | reducer | N | J_m + J_r [kg m²] | peak τ_m [N m] | RMS τ_m [N m] | rated [N m] | "
           "RMS/rated | peak/available | peak speed [min⁻¹] | max speed [min⁻¹] | peak power [kW] | |",
           "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in sz.drives:
        mo = d.motors[r.motor]
        out.append(f"| {r.joint} | {r.motor} | {r.reducer} | {r.ratio:g} | {r.inertia_in:.3g} | {r.peak_torque:.1f} | "
                   f"{r.rms_torque:.1f} | {mo.rated_torque:g} | {_pct(r.rms_over_rated)} | {_pct(r.peak_over_max)} | "
                   f"{r.peak_speed * _RPM:.0f} | {mo.max_speed * _RPM:.0f} | {r.peak_power / 1e3:.2f} | "
                   f"{_flag(r.rms_over_rated, r.peak_over_max, r.speed_over_max)} |")
    req = f"{d.required_life:g} h" if d.required_life else "K, the rated life"
    out += ["\n### Reducers (torque at the output = joint torque)\n",
            f"Mean load torque T_m = (Σ|n|Δt|T|^{{10/3}} / Σ|n|Δt)^{{3/10}} and the rated torque T0 give the life "
            f"L10 = K (N0/N_m)(T0/T_m)^{{10/3}}, required {req}; peak against the allowable acceleration/deceleration torque; "
            "the emergency stop (the motor's peak torque through the ratio) against the momentary maximum.\n",
            "| joint | reducer | peak [N m] | allowable accel. [N m] | peak/allowable | T_m [N m] | T0 [N m] | "
            "T_m/T0 | life L10 [h] | e-stop [N m] | momentary max [N m] | e-stop/max | |",
            "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in sz.reducers:
        rd = d.reducers[r.reducer]
        life = _life(r.life)
        out.append(f"| {r.joint} | {r.reducer} | {r.peak_torque:.0f} | {rd.peak_torque:g} | {_pct(r.peak_over_rating)} | "
                   f"{r.mean_torque:.0f} | {rd.rated_torque:g} | {_pct(r.mean_over_rated)} | {life} | "
                   f"{r.estop_torque:.0f} | {rd.emergency_stop_torque:g} | {_pct(r.estop_over_rating)} | "
                   f"{_flag(r.peak_over_rating, r.life_use, r.estop_over_rating)} |")
    if sz.wrist:
        p = sz.payload
        out += [f"\n### Wrist payload ({p.mass:g} kg on {p.link}, centre of mass {list(p.com)} m)\n",
                "Load moment m g d and inertia I_c + m d² about each wrist axis (d: distance from the axis line to "
                "the centre of mass, largest over the cycle's poses) against the maker's allowable values.\n",
                "| axis | moment [N m] | allowable [N m] | | inertia [kg m²] | allowable [kg m²] | | |",
                "|---|---:|---:|---:|---:|---:|---:|---|"]
        for w in sz.wrist:
            out.append(f"| {w.joint} | {w.moment:.0f} | {w.moment_limit:g} | {_pct(w.moment / w.moment_limit)} | "
                       f"{w.inertia:.0f} | {w.inertia_limit:g} | {_pct(w.inertia / w.inertia_limit)} | "
                       f"{_flag(w.moment / w.moment_limit, w.inertia / w.inertia_limit)} |")
    if sz.balancers:
        out += ["\n### Balancers\n", "| balancer | type | length [m] min–max | force [kN] min–max | |",
                "|---|---|---:|---:|---|"]
        for name, (L, F) in sz.balancers.items():
            kind = sz.balancer_types.get(name, "")
            out.append(f"| {name} | {kind} | {L.min():.4f}–{L.max():.4f} | {F.min() / 1e3:.2f}–{F.max() / 1e3:.2f} | "
                       f"{'pull' if F.max() < 0 else 'push' if F.min() > 0 else 'both'} |")
    if sz.pin_forces:
        out += ["\n### Pin forces (loop joints: the wrench on the successor, in its frame)\n",
                "| loop | peak force [kN] | peak moment [kN m] |", "|---|---:|---:|"]
        for name, (F, M) in sz.pin_forces.items():
            out.append(f"| {name} | {F.max() / 1e3:.2f} | {M.max() / 1e3:.3f} |")
    return "\n".join(out)


def plot_torque_speed(sz, path, title="motor operating points"):
    """PNG: per drive, the motor's operating points (|ω_m|, |τ_m|) over the cycle (payload on / off) inside
    its peak torque–speed curve (the catalogue's curve when the data gives one, else peak torque up to the
    maximum speed), the continuous zone (rated torque up to the rated speed, then the rated power: the usual
    reading of a servo data sheet), and the RMS torque at the mean speed."""
    plt = pyplot()
    n = len(sz.drives)
    cols = min(3, n)
    rows = int(np.ceil(n / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(4.4 * cols, 3.5 * rows), squeeze=False)
    ms = sz.motors
    for k, r in enumerate(sz.drives):
        ax = axes[k // cols, k % cols]
        mo = sz.data.motors[r.motor]
        w = np.linspace(0, mo.max_speed, 300)
        peak = ms.drives[k].motor.peak_at(w)
        ax.plot(np.r_[w, mo.max_speed] * _RPM, np.r_[peak, 0.0], color="C0", lw=1.5,
                label="peak" + (" (catalogue curve)" if mo.curve else " (no curve given)"))
        cont = np.where(w <= mo.rated_speed, mo.rated_torque, mo.rated_torque * mo.rated_speed / np.maximum(w, 1e-9))
        ax.fill_between(w * _RPM, 0, cont, color="C2", alpha=0.15, lw=0)
        ax.plot(w * _RPM, cont, color="C2", lw=1.0, ls="--", label="continuous (rated torque, then power)")
        on = sz.loaded
        spd, tq = np.abs(ms.speed[:, k]) * _RPM, np.abs(ms.torque[:, k])
        ax.plot(spd[on], tq[on], ".", ms=2.0, color="C3", label="payload on")
        ax.plot(spd[~on], tq[~on], ".", ms=2.0, color="C1", label="payload off")
        ax.plot([np.mean(spd)], [r.rms_torque], "kD", ms=5, label=f"RMS {r.rms_torque:.3g} N m at mean speed")
        ax.set_xlim(0, max(mo.max_speed * _RPM, spd.max()) * 1.05)
        ax.set_ylim(0, max(mo.peak_torque, tq.max()) * 1.12)
        ax.set_title(f"{r.joint}: {r.motor} through {r.reducer} (N = {r.ratio:g})", fontsize=8.5)
        ax.set_xlabel("motor speed [min⁻¹]", fontsize=8)
        ax.set_ylabel("motor torque [N m]", fontsize=8)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=5.5, loc="upper right")
    for k in range(n, rows * cols):
        axes[k // cols, k % cols].axis("off")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return save_figure(fig, path)


def plot_drive_cycle(sz, path, title="drive cycle"):
    """PNG: the reducers' output torques with ± their allowable acceleration torque, the balancers' forces
    and the pin forces over the cycle; the payload's time on the wrist shaded."""
    plt = pyplot()
    panels = 1 + bool(sz.balancers) + bool(sz.pin_forces)
    fig, axes = plt.subplots(panels, 1, figsize=(9, 2.8 * panels + 0.6), sharex=True, squeeze=False)
    axes = axes[:, 0]
    t = sz.t
    for ax in axes:
        on = sz.loaded.astype(float)
        ax.fill_between(t, 0, 1, where=on > 0, transform=ax.get_xaxis_transform(), color="0.85", lw=0,
                        label="payload on")
    ax = axes[0]
    for k, r in enumerate(sz.reducers):
        rd = sz.data.reducers[r.reducer]
        line, = ax.plot(t, sz.u[:, k] / 1e3, lw=1.2, label=f"{r.joint} ({r.reducer})")
        ax.axhline(rd.peak_torque / 1e3, color=line.get_color(), ls=":", lw=0.8)
        ax.axhline(-rd.peak_torque / 1e3, color=line.get_color(), ls=":", lw=0.8)
    lim = max(np.abs(sz.u).max(), 1.0) / 1e3
    ax.set_ylim(-1.6 * lim, 2.1 * lim)
    ax.set_ylabel("reducer output\ntorque [kN m]")
    ax.set_title("joint torques (dotted: ± allowable acceleration torque)", fontsize=9)
    ax.legend(fontsize=6.5, ncol=4, loc="upper center")
    i = 1
    if sz.balancers:
        ax = axes[i]
        for name, (L, F) in sz.balancers.items():
            ax.plot(t, F / 1e3, lw=1.2, label=name)
        ax.set_ylabel("balancer force [kN]\n(+ push, − pull)")
        ax.legend(fontsize=7, loc="upper right")
        i += 1
    if sz.pin_forces:
        ax = axes[i]
        for name, (F, _) in sz.pin_forces.items():
            ax.plot(t, F / 1e3, lw=1.2, label=name)
        ax.set_ylabel("pin force [kN]")
        ax.legend(fontsize=7, loc="upper right")
    for ax in axes:
        ax.grid(alpha=0.3)
    axes[-1].set_xlabel("time [s]")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return save_figure(fig, path)


def write_drive_csv(sz, path):
    """The cycle as CSV at ``path``: t, payload on, joint torques, motor speeds, torques and powers, balancer
    forces (SI; the header names each column's unit). Returns str(path)."""
    import csv
    ms = sz.motors
    with atomic_path(path) as tmp:
        with open(tmp, "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["t [s]", "payload on"] + [f"tau_j[{j}] [N m]" for j in sz.names]
                       + [f"{k}[{j}] [{u}]" for k, u in (("omega_m", "rad/s"), ("tau_m", "N m"), ("P_m", "W"))
                          for j in sz.names]
                       + [f"F[{b}] [N]" for b in sz.balancers])
            cols = [sz.t, sz.loaded.astype(int), sz.u, ms.speed, ms.torque, ms.power] + [F for _, F in sz.balancers.values()]
            w.writerows(np.column_stack(cols).tolist())
    return str(path)


def drive_markdown(sz) -> list:
    """The report's lines: the data's notes, the tables (``drive_tables``), the sources, the warnings."""
    d = sz.data
    sources = []
    for kind, cat in (("motor", d.motors), ("reducer", d.reducers)):
        used = {getattr(r, kind) for r in sz.drives}
        sources += [f"- {kind} {k}: {v.source}" for k, v in cat.items() if k in used]
    sources += [f"- wrist {j}: {v.source}" for j, v in d.payload_limits.items()]
    return (([d.notes.strip(), ""] if d.notes else []) + [drive_tables(sz), "", "### Sources of the drive data", ""]
            + sources + ([""] + ["### Drive warnings", ""] + [f"- {w}" for w in sz.warnings] if sz.warnings else []))


def summary_lines(sz) -> list:
    """One printed line per drive: motor RMS/rated, peak/available, speed; reducer peak/allowable."""
    red = {r.joint: r for r in sz.reducers}
    return [f"{r.joint:>9}: motor RMS/rated {_pct(r.rms_over_rated):>6}, peak/available {_pct(r.peak_over_max):>6}, "
            f"speed {r.peak_speed * _RPM:5.0f} min⁻¹; reducer peak/allowable {_pct(red[r.joint].peak_over_rating):>6}, "
            f"life {_life(red[r.joint].life)} h" for r in sz.drives]


def write_drive_report(sz, outdir, name, echo=print):
    """Write drive_report.md, drive_cycle.csv, drive_operating_points.png and drive_cycle.png into
    ``outdir`` for ArmSizing ``sz`` of robot ``name`` (outside a sizing run). Returns {output key: path}."""
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    written = {"drive_csv": write_drive_csv(sz, outdir / "drive_cycle.csv"),
               "drive_operating_points": plot_torque_speed(sz, outdir / "drive_operating_points.png",
                                                           f"{name}: motor operating points on the torque–speed curves"),
               "drive_cycle": plot_drive_cycle(sz, outdir / "drive_cycle.png", f"{name}: drive cycle")}
    rep = outdir / "drive_report.md"
    with atomic_path(rep) as tmp:
        Path(tmp).write_text("\n".join([f"# {name}: electric-drive sizing", ""] + drive_markdown(sz)) + "\n")
    written["drive_report"] = str(rep)
    for line in summary_lines(sz):
        echo(line)
    for w in sz.warnings:
        echo(f"WARNING: {w}")
    return written


def render_arm(run, report):
    """The arm kind's part of a sizing run's report (``reports.sizing_render.Report``): the drive tables and
    sources in the Markdown, the drives' figures in the JSON, the cycle CSV and the two plots."""
    sz = run.checks["drives"]
    name = run.model.name
    report.md += ["## Electric drives", ""] + drive_markdown(sz) + [""]
    report.js["drives"] = {
        r.joint: dict(motor=r.motor, reducer=r.reducer, ratio=r.ratio, peak_motor_torque_Nm=r.peak_torque,
                      rms_motor_torque_Nm=r.rms_torque, peak_motor_speed_rad_s=r.peak_speed,
                      peak_motor_power_W=r.peak_power, rms_over_rated=r.rms_over_rated, peak_over_max=r.peak_over_max,
                      reducer_peak_Nm=x.peak_torque, reducer_mean_Nm=x.mean_torque, reducer_life_h=x.life,
                      reducer_peak_over_rating=x.peak_over_rating, reducer_mean_over_rated=x.mean_over_rated, reducer_life_use=x.life_use,
                      estop_over_rating=x.estop_over_rating)
        for r, x in zip(sz.drives, sz.reducers)}
    report.js["wrist"] = {w.joint: dict(moment_Nm=w.moment, moment_limit_Nm=w.moment_limit, inertia_kgm2=w.inertia,
                                        inertia_limit_kgm2=w.inertia_limit) for w in sz.wrist}
    report.js["balancers"] = {k: dict(min_force_N=float(F.min()), max_force_N=float(F.max()),
                                      min_length_m=float(L.min()), max_length_m=float(L.max()))
                              for k, (L, F) in sz.balancers.items()}
    report.wrote("drive_csv", write_drive_csv(sz, report.path("drive_csv")))
    report.plot("drive_operating_points_png", plot_torque_speed, sz, report.path("drive_operating_points_png"),
                f"{name}: motor operating points on the torque–speed curves")
    report.plot("drive_cycle_png", plot_drive_cycle, sz, report.path("drive_cycle_png"), f"{name}: drive cycle")


class ArmReport(KindReport):
    """The arm kind's part of a sizing report (``reports.sizing_render.KindReport``): ``render_arm``, the
    payload's time shaded on the actuator plot."""

    def render(self, run, report):
        render_arm(run, report)

    def shade(self, run) -> list:
        sz = run.checks.get("drives")
        if sz is None or sz.payload is None:
            return []
        on = np.r_[False, sz.loaded, False].astype(int)
        starts, ends = np.flatnonzero(np.diff(on) == 1), np.flatnonzero(np.diff(on) == -1) - 1
        return [(float(sz.t[a]), float(sz.t[b]), "payload on") for a, b in zip(starts, ends)]
