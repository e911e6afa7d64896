"""Reports of a trajectory: joint torques (peak and RMS per joint against URDF effort limits, as a Markdown
table and PNG plots) and the motion plot. The sizing job's report is ``reports.sizing_render``. matplotlib,
Agg backend."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from urdf_dyn.reports.plotting import figure, save_figure

__all__ = ["TorqueRow", "torque_table", "format_table", "plot_torques", "plot_motion"]


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
