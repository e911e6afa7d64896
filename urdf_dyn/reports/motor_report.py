"""The motor-side report of ``job: simulate`` (``motors:`` section, ``machines.motors``): the drives' CSV,
their operating points against the peak envelope and their torques over time (PNG), and a Markdown table."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from urdf_dyn.io.files import atomic_path
from urdf_dyn.machines.motors import drives_from, format_motor_table, motor_sizing
from urdf_dyn.reports.plotting import pyplot, save_figure

__all__ = ["run_motor_report", "plot_operating_points", "plot_motor_torques"]


def run_motor_report(model, traj, section, base_dir, outdir, echo=print):
    """The launch-file hook: size the drives along ``traj`` and write the report, CSV and plots.
    Returns {output key: path}."""
    import csv
    drives = drives_from(model, section, base_dir)
    sz = motor_sizing(model, drives, traj.t, traj.q, traj.qd, traj.qdd, traj.tau)
    outdir = Path(outdir)
    written = {}
    p = outdir / section.csv
    with atomic_path(p) as tmp:
        with open(tmp, "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["t [s]"] + [f"{k}[{d.joint}] [{u}]" for k, u in (("omega_m", "rad/s"), ("tau_m", "N m"),
                                                                          ("P_m", "W")) for d in drives])
            w.writerows(np.column_stack([sz.t, sz.speed, sz.torque, sz.power]).tolist())
    written["motor_csv"] = str(p)
    written["motor_plot"] = plot_operating_points(sz, outdir / section.plot, f"{model.name}: motor operating points")
    written["motor_torque_plot"] = plot_motor_torques(sz, outdir / section.torque_plot, f"{model.name}: motor torques")
    table = format_motor_table(sz)
    sources = sorted({f"- {d.name}: {d.motor.source}" for d in drives if d.motor.source})
    text = (f"# {model.name}: motor-side sizing\n\nτ_m = τ_j/(G η) (or τ_j η/G when back-driven) + J_m G q̈; "
            "ω_m = G q̇; RMS over the whole motion. Friction not modelled.\n\n" + table + "\n\n"
            + ("Motor data:\n" + "\n".join(sources) + "\n" if sources else ""))
    rep = outdir / section.report
    from urdf_dyn.io.escape import md_document      # names from the robot file are text, never HTML
    with atomic_path(rep) as tmp:
        Path(tmp).write_text(md_document(text, str(rep), figures=False))
    written["motor_report"] = str(rep)
    echo(table)
    over = [r.joint for r in sz.rows if not r.ok]
    if over:
        echo(f"WARNING: motors outside their envelope or thermal rating: {', '.join(over)}")
    return written


def plot_operating_points(sz, path, title="motor operating points"):
    """PNG: per drive, the (|ω_m|, |τ_m|) samples inside the peak envelope (and the nominal torque line)."""
    plt = pyplot()
    n = len(sz.drives)
    cols = min(3, n)
    rows = int(math.ceil(n / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.4 * rows), squeeze=False)
    for k, d in enumerate(sz.drives):
        ax = axes[k // cols, k % cols]
        m = d.motor
        w = np.linspace(0, m.max_speed, 200)
        env = m.peak_at(w)
        ax.fill_between(w, 0, env, color="C0", alpha=0.10, lw=0)
        ax.plot(np.r_[w, m.max_speed], np.r_[env, 0.0], color="C0", lw=1.5, label="peak envelope")
        if m.nominal_torque:
            ax.axhline(m.nominal_torque, color="C2", ls="--", lw=1.0, label="nominal")
        r = sz.rows[k]
        ax.axhline(r.rms_torque, color="C3", ls=":", lw=1.2, label=f"RMS {r.rms_torque:.3g} N m")
        ax.plot(np.abs(sz.speed[:, k]), np.abs(sz.torque[:, k]), ".", ms=2.5, color="C1", label="operating points")
        ax.set_xlim(0, max(m.max_speed, r.peak_speed) * 1.08)
        ax.set_ylim(0, max(m.peak_torque, r.peak_torque) * 1.15)
        ax.set_title(f"{d.joint} ({d.name}, G = {d.gear_ratio:.4g})", fontsize=9)
        ax.set_xlabel("|ω_m| [rad/s]", fontsize=8)
        ax.set_ylabel("|τ_m| [N m]", fontsize=8)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=6, loc="upper right")
    for k in range(n, rows * cols):
        axes[k // cols, k % cols].axis("off")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return save_figure(fig, path)


def plot_motor_torques(sz, path, title="motor torques"):
    """PNG: τ_m(t) per drive, its rotor share J_m G q̈ and ± peak torque."""
    plt = pyplot()
    n = len(sz.drives)
    fig, axes = plt.subplots(n, 1, figsize=(8, 1.6 * n + 0.8), sharex=True, squeeze=False)
    for k, (ax, d) in enumerate(zip(axes[:, 0], sz.drives)):
        ax.plot(sz.t, sz.torque[:, k], lw=1.2, color=f"C{k % 10}", label="τ_m")
        ax.plot(sz.t, sz.rotor_torque[:, k], lw=0.9, ls="--", color="0.3", label="rotor J_m G q̈")
        if d.motor.peak_torque < 10 * max(1e-12, np.max(np.abs(sz.torque[:, k]), initial=0.0)):
            for s in (1, -1):
                ax.axhline(s * d.motor.peak_torque, ls=":", lw=0.8, color="0.5")
        else:
            ax.set_title(f"peak torque {d.motor.peak_torque:.3g} N m (off scale)", fontsize=7, loc="right")
        ax.set_ylabel(f"{d.joint}\n[N m]", fontsize=8)
        ax.grid(alpha=0.3)
    axes[0, 0].legend(fontsize=7, loc="upper right")
    axes[-1, 0].set_xlabel("time [s]")
    fig.suptitle(title + " (dotted: ± peak torque when on scale)", fontsize=10)
    fig.tight_layout()
    return save_figure(fig, path)
