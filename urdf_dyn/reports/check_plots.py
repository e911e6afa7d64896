"""The plots of the excavator's geometry-only checks and its tipping margin: the ZMP trace and margin
(``plot_zmp``), the ISO 10567 lift chart, the ISO 7135 working ranges, the ISO 6015 digging envelope, the stall
envelopes and the pins' design loads against the cycle peaks. Each takes its result and writes a PNG at
``path`` (matplotlib, Agg backend; atomically); returns the path."""
from __future__ import annotations

import numpy as np

from urdf_dyn.machines.reliefs import relief_text
from urdf_dyn.reports.plotting import figure, save_figure

__all__ = ["plot_zmp", "plot_lift_chart", "plot_working_range", "plot_digging_envelope", "plot_stall_envelopes",
           "plot_design_loads"]


def plot_zmp(result, path, title=None):
    """PNG: the ZMP trace over the footprint (left) and the margin over time (right). Returns path."""
    fig, axes = figure((11, 4.6), 1, 2, width_ratios=[1, 1.4], left=0.7, right=0.2, top=0.45, bottom=0.55,
                        wspace=1.2)
    ax, bx = axes[0]
    F = np.vstack([result.footprint, result.footprint[:1]])
    ax.fill(F[:, 0], F[:, 1], color="0.85", label="tipping polygon")
    ax.plot(F[:, 0], F[:, 1], color="0.3", lw=1)
    sc = ax.scatter(result.zmp[:, 0], result.zmp[:, 1], c=result.t, s=6, cmap="viridis", label="ZMP")
    fig.colorbar(sc, ax=ax, label="time [s]", shrink=0.8)
    zi = result.zmp[result.i_min]
    ax.plot(*zi, "rx", ms=10, mew=2, label=f"min margin {result.min_margin:.2f} m")
    ax.plot(0, 0, "k+", ms=10)
    ax.set_aspect("equal")
    ax.set_xlabel("x [m] (forward)")
    ax.set_ylabel("y [m] (left)")
    ax.legend(fontsize=7, loc="lower left")
    ax.grid(alpha=0.3)
    bx.plot(result.t, result.margin, lw=1.2)
    bx.axhline(0, color="r", lw=0.8, ls="--")
    bx.plot(result.t[result.i_min], result.min_margin, "rx", ms=8, mew=2)
    bx.set_xlabel("time [s]")
    bx.set_ylabel("tipping margin [m]")
    bx.grid(alpha=0.3)
    fig.suptitle(title or f"ZMP over the tipping polygon: minimum margin {result.min_margin:.3f} m at "
                          f"t = {result.t_min:.2f} s", fontsize=10)
    return save_figure(fig, path)


def plot_lift_chart(chart, path, title=None):
    """PNG: rated load over (radius, height) for over front and over side; hydraulically limited cells
    hatched. Returns path."""
    fig, axes = figure((12, 5.2), 1, 2, sharey=True, left=0.85, right=0.1, top=0.55, bottom=0.6, wspace=0.5)
    axes = axes[0]
    vmax = np.nanmax(np.r_[chart.front.ravel(), chart.side.ravel(), 1.0])
    for ax, V, S, lab in ((axes[0], chart.front, chart.front_star, "over front"),
                          (axes[1], chart.side, chart.side_star, "over side")):
        im = ax.imshow(V / 1e3, origin="upper", cmap="viridis", vmin=0, vmax=vmax / 1e3, aspect="auto",
                       extent=(-0.5, len(chart.radii) - 0.5, len(chart.heights) - 0.5, -0.5))
        for i in range(len(chart.heights)):
            for j in range(len(chart.radii)):
                v = V[i, j]
                txt = "–" if np.isnan(v) else f"{v / 1e3:.1f}{'*' if S[i, j] else ''}"
                ax.text(j, i, txt, ha="center", va="center", fontsize=8,
                        color="0.5" if np.isnan(v) else ("w" if v < 0.6 * vmax else "k"))
        ax.set_xticks(range(len(chart.radii)), [f"{r:.1f}" for r in chart.radii])
        ax.set_yticks(range(len(chart.heights)), [f"{h:+.1f}" for h in chart.heights])
        ax.set_xlabel("load radius from swing axis [m]")
        ax.set_title(f"{lab} (t; * = hydraulic limit)", fontsize=9)
        fig.colorbar(im, ax=ax, label="rated load [t]", shrink=0.85)
    axes[0].set_ylabel("load-point height [m]")
    fig.suptitle(title or "ISO 10567 rated lift capacity at the stick nose, without bucket", fontsize=10)
    return save_figure(fig, path)


def plot_working_range(ranges, path, title=None):
    """PNG: side view of the tip's working envelope (the stroke grid's tip positions) with each dimension
    marked. Returns path."""
    fig, axes = figure((11.5, 7), 1, 1, left=0.8, right=3.6, top=0.5, bottom=0.6)
    ax = axes[0, 0]
    E = ranges.envelope
    ax.scatter(E[:, 0], E[:, 2], s=1, color="0.75", label="tip over the stroke grid and its faces")
    P = ranges.points
    ax.axhline(0, color="0.3", lw=1)
    ax.axvline(0, color="0.6", lw=0.8, ls=":")
    marks = [("max_digging_depth_m", "v", f"depth {ranges.max_digging_depth_m:.2f} m"),
             ("max_reach_ground_m", ">", f"reach at ground {ranges.max_reach_ground_m:.2f} m"),
             ("max_cutting_height_m", "^", f"cutting height {ranges.max_cutting_height_m:.2f} m"),
             ("max_loading_height_m", "s", f"loading height {ranges.max_loading_height_m:.2f} m"),
             ("vertical_wall_depth_m", "D", f"vertical wall {ranges.vertical_wall_depth_m:.2f} m")]
    for k, mk, lab in marks:
        r = ranges.reference.get(k)
        ax.plot(P[k][0], P[k][2], mk, ms=9, label=lab + (f" (published {r['value']:.2f})" if r else ""))
    a, b = P["level_bottom_start"], P["level_bottom_end"]
    r = ranges.reference.get("level_bottom_2440_depth_m")
    ax.plot([a[0], b[0]], [a[2], b[2]], "k-", lw=3, label=f"2.44 m level bottom at {ranges.level_bottom_2440_depth_m:.2f} m"
            + (f" (published {r['value']:.2f})" if r else ""))
    ax.set_aspect("equal")
    ax.set_xlabel("x from the swing axis [m] (forward)")
    ax.set_ylabel("z above the ground [m]")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    fig.suptitle(title or "working ranges (ISO 7135 dimensions) of the tip, side view", fontsize=10)
    return save_figure(fig, path)


def plot_digging_envelope(forces, path, title=None):
    """PNG: holdable tool force over the side-view lip envelope (bucket left, arm right): each cell
    shows the largest holdable force of the poses whose lip lies in it; the ISO positions are marked.
    Returns path."""
    x, z = forces.grid_tip[:, 0], forces.grid_tip[:, 2]
    fig, axes = figure((11, 5.6), 1, 2, sharey=True, left=0.7, right=0.1, top=0.65, bottom=0.55, wspace=0.5)
    axes = axes[0]
    for ax, F, iso, tipiso, lab, case in (
            (axes[0], forces.grid_bucket_N, forces.bucket_N, forces.bucket_tip, "bucket", "bucket"),
            (axes[1], forces.grid_arm_N, forces.arm_N, forces.arm_tip, "arm (stick)", "arm")):
        hb = ax.hexbin(x, z, C=F / 1e3, reduce_C_function=np.max, gridsize=28, cmap="viridis", mincnt=1)
        fig.colorbar(hb, ax=ax, label=f"holdable {lab} digging force [kN]", shrink=0.85)
        ax.plot(tipiso[0], tipiso[2], "r*", ms=14,
                label=f"ISO position: {iso / 1e3:.1f} kN ({forces.limited_by[case]})")
        ref = forces.reference.get("bucket_N" if case == "bucket" else "arm_N")
        if ref:
            ax.plot([], [], " ", label=f"published: {ref / 1e3:.1f} kN")
        for nm, P in forces.pivots.items():
            ax.plot(P[0], P[2], "ko", ms=4)
        ax.axhline(0, color="0.3", lw=1)
        ax.axvline(0, color="0.6", lw=0.8, ls=":")
        ax.set_aspect("equal")
        ax.set_xlabel("lip reach from swing axis x [m]")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="upper right")
        ax.set_title(f"{lab} cylinder at {forces.relief / 1e5:.0f} bar, holding circuits limited"
                     + ("\n(ISO position: bucket as for the bucket force)" if case == "arm" and
                        forces.arm_bucket == "bucket_force" else ""), fontsize=9)
    axes[0].set_ylabel("lip height above ground z [m]")
    fig.suptitle(title or "ISO 6015 holdable tool forces over the working range (max per cell)", fontsize=10)
    return save_figure(fig, path)


def plot_stall_envelopes(env, path, title=None):
    """PNG: side view of the lip positions over the grid, coloured by the holdable force [kN] (the largest
    of the poses in each cell), one column per working cylinder, the tangent case above the fan's worst
    direction below. Returns path."""
    x, zz = env.lip[:, 0], env.lip[:, 2]
    nc = len(env.working)
    fig, axes = figure((5.4 * nc, 10.0), 2, nc, sharex=True, sharey=True, left=0.7, right=0.2, top=1.0,
                       bottom=0.55, hspace=0.9, wspace=0.6)
    for j, c in enumerate(env.working):
        for i, (kind, r) in enumerate((("tangent", env.tangent[c]), ("fan", env.fan[c]))):
            ax = axes[i, j]
            hb = ax.hexbin(x, zz, C=r["force_N"] / 1e3, reduce_C_function=np.max, gridsize=24, cmap="viridis",
                           mincnt=1)
            fig.colorbar(hb, ax=ax, label="holdable tip force [kN]", shrink=0.85)
            k = int(np.argmax(r["force_N"]))
            ax.plot(x[k], zz[k], "r*", ms=12)
            lims, cnt = np.unique(r["limited_by"].astype(str), return_counts=True)
            binds = ", ".join(f"{n} {100 * m / len(x):.0f}%" for n, m in sorted(zip(lims, cnt), key=lambda t: -t[1]))
            ax.axhline(0, color="0.3", lw=1)
            ax.set_aspect("equal")
            ax.grid(alpha=0.3)
            ax.set_title(f"{c} at {env.relief / 1e5:.0f} bar, " + ("ISO tangent" if kind == "tangent" else
                         f"worst of {len(env.fan_deg)} directions + tangent") +
                         f"\nmax (red star) {r['force_N'][k] / 1e3:.0f} kN, limited by {r['limited_by'][k]}"
                         f"\nbinding: {binds}", fontsize=8)
            if i == 1:
                ax.set_xlabel("lip reach from swing axis x [m]")
            if j == 0:
                ax.set_ylabel("lip height z [m]")
    fig.suptitle(title or f"Stall envelopes over {len(x)} poses: holding circuits ≤ "
                 f"{relief_text(env.holding_relief)}, tipping {'checked' if env.tipping_checked else 'not checked'}, "
                 f"{'sliding μ = %g' % env.friction if env.friction is not None else 'anchored (ISO 6015 §4.5)'}",
                 fontsize=10)
    return save_figure(fig, path)


def plot_design_loads(design, peaks, path):
    """Bars per pin: the design load (``StallEnvelopes.design_loads``) beside the cycle's peak ({pin: N}) [kN],
    per pin of a pair, with the design / peak ratio above each pair. PNG at ``path``; returns path."""
    names = list(design)
    x = np.arange(len(names))
    D = np.array([design[n]["design_load_N"] for n in names]) / 1e3
    P = np.array([peaks.get(n, np.nan) for n in names]) / 1e3
    fig, ax = figure((10, 4.8), 1, 1, bottom=1.6, left=0.9)
    ax = ax[0, 0]
    ax.bar(x - 0.2, D, 0.4, label="design load (stall envelopes)", color="C3")
    ax.bar(x + 0.2, P, 0.4, label="cycle peak", color="C0")
    for xi, d, p in zip(x, D, P):
        if np.isfinite(p) and p > 0:
            ax.text(xi, max(d, p) * 1.02, f"{d / p:.1f}×", ha="center", fontsize=7)
    ax.set_xticks(x, names, rotation=40, ha="right", fontsize=8)
    ax.set_ylabel("pin force per pin [kN]")
    ax.grid(alpha=0.3, axis="y")
    ax.legend(fontsize=8)
    ax.set_title("pin design loads (largest over every stall state) against the dig cycle's peak", fontsize=10)
    return save_figure(fig, path)
