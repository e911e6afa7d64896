"""Side view of an excavator front from its pin table: the pins, the bodies as lines between them, and the
front posed with each cylinder at both stroke ends (``linkage_limits.FrontPose``), with the mechanism
limits' values; a PNG for a calibration's report (reports: the only layer that writes files)."""
from __future__ import annotations

import numpy as np

from urdf_dyn.machines.linkage_limits import FrontPose, linkage_values, obstacles

__all__ = ["plot_front"]

#: the lines drawn per body, between pins (names of ``pin_table.PIN_NAMES``)
_BODIES = {"boom": [("boom_foot", "boom_cylinder_eye"), ("boom_cylinder_eye", "stick_cylinder_base"),
                    ("stick_cylinder_base", "boom_nose"), ("boom_foot", "boom_nose")],
           "stick": [("stick_cylinder_eye", "boom_nose"), ("boom_nose", "bucket_cylinder_base"),
                     ("bucket_cylinder_base", "side_link_pivot"), ("side_link_pivot", "bucket_pivot"),
                     ("boom_nose", "bucket_pivot")],
           "bucket": [("bucket_pivot", "h_link_pin"), ("h_link_pin", "tip"), ("bucket_pivot", "tip")]}


def _posed(t, L):
    """{pin: (2,)} of the front at cylinder lengths L = (boom, stick, bucket) [m]."""
    fp = FrontPose(t, *L)
    out = {"boom_foot": t.pin("boom_foot"), "boom_cylinder_base": t.pin("boom_cylinder_base")}
    for body, pins in (("boom", ("boom_cylinder_eye", "stick_cylinder_base", "boom_nose")),
                       ("stick", ("stick_cylinder_eye", "bucket_cylinder_base", "side_link_pivot", "bucket_pivot")),
                       ("bucket", ("h_link_pin", "tip"))):
        pts = fp.place(body, np.array([t.pin(p) for p in pins]))[0]
        out.update(dict(zip(pins, pts)))
    # the four-bar's pins: G and D in the stick's table-pose coordinates, then as the stick is placed
    G = fp.place("stick", fp.G)[0, 0]
    out["bucket_cylinder_eye"] = G
    return out


def _draw(ax, t, L, style, label=None):
    P = _posed(t, L)
    kw = dict(color=style[0], lw=1.6, alpha=style[1])
    for body, segs in _BODIES.items():
        for a, b in segs:
            ax.plot(*np.array([P[a], P[b]]).T, **kw)
    for a, b in (("side_link_pivot", "bucket_cylinder_eye"), ("bucket_cylinder_eye", "h_link_pin")):
        ax.plot(*np.array([P[a], P[b]]).T, color=style[0], lw=1.2, ls="--", alpha=style[1])
    for a, b in (("boom_cylinder_base", "boom_cylinder_eye"), ("stick_cylinder_base", "stick_cylinder_eye"),
                 ("bucket_cylinder_base", "bucket_cylinder_eye")):
        ax.plot(*np.array([P[a], P[b]]).T, color=style[0], lw=4.5, alpha=0.45 * style[1], solid_capstyle="butt",
                label=label)
        label = None
    ax.plot(*np.array(list(P.values())).T, "o", ms=3.5, color=style[0], alpha=style[1])
    return P


def plot_front(table, path, title=None):
    """PNG at ``path``: four side views of the front: the table's pose with every pin named, then each
    cylinder (boom, stick, bucket) at its retracted and extended ends with the others at the table's
    lengths; the obstacles the bucket must clear; the limits' values in the titles. Returns path."""
    from matplotlib.patches import Rectangle

    from urdf_dyn.reports.plotting import figure, save_figure
    t, c = table, table.cylinders
    L0 = [float(np.linalg.norm(t.pin(e) - t.pin(b))) for b, e in (("boom_cylinder_base", "boom_cylinder_eye"),
                                                                  ("stick_cylinder_base", "stick_cylinder_eye"),
                                                                  ("bucket_cylinder_base", "bucket_cylinder_eye"))]
    v = linkage_values(t)
    fig, axes = figure((15, 10.5), 2, 2, left=0.6, right=0.2, top=0.7, bottom=0.5, hspace=0.32, wspace=0.15)
    panels = [(None, "the table's pose, pins named"),
              (0, f"boom cylinder {c.boom.min_length:.3f} / {c.boom.max_length:.3f} m: transmission angle "
                  f"{v['boom_transmission_angle_deg'][0]:.1f}° / {v['boom_transmission_angle_deg'][1]:.1f}°, lever "
                  f"{v['boom_lever_m'][0]:.2f} / {v['boom_lever_m'][1]:.2f} m"),
              (1, f"stick cylinder {c.stick.min_length:.3f} / {c.stick.max_length:.3f} m: lever "
                  f"{v['stick_lever_m'].min():.2f}..{v['stick_lever_m'].max():.2f} m (ratio {v['stick_lever_ratio'].min():.2f})"),
              (2, f"bucket cylinder {c.bucket.min_length:.3f} / {c.bucket.max_length:.3f} m: rotation "
                  f"{v['bucket_rotation_deg']:.1f}°, four-bar ≥ {v['bucket_link_angle_deg'].min():.1f}° from toggle")]
    for ax, (k, head) in zip(axes.ravel(), panels):
        for name, body, cen, half, e in obstacles(t):
            if body != "house":
                continue
            ax.add_patch(Rectangle(cen - half, 2 * half[0], 2 * half[1], color="0.85", zorder=0))
        ax.axhline(0, color="0.3", lw=1)
        ax.axvline(0, color="0.6", lw=0.8, ls=":")
        if k is None:
            P = _draw(ax, t, L0, ("k", 1.0))
            for n, p in P.items():
                ax.annotate(n, p, fontsize=7, xytext=(4, 3), textcoords="offset points")
        else:
            for end, style, lab in ((0, ("tab:blue", 1.0), "retracted"), (1, ("tab:red", 1.0), "extended")):
                L = list(L0)
                spec = getattr(c, ("boom", "stick", "bucket")[k])
                L[k] = (spec.min_length, spec.max_length)[end]
                _draw(ax, t, L, style, label=f"{lab} ({L[k]:.3f} m)")
            _draw(ax, t, L0, ("0.5", 0.35))
            ax.legend(fontsize=8, loc="lower right")
        ax.set_aspect("equal")
        ax.grid(alpha=0.3)
        ax.set_title(head, fontsize=9)
        ax.set_xlabel("x from the swing axis [m]")
        ax.set_ylabel("z above the ground [m]")
    fig.suptitle(title or f"{t.name}: front linkage (clearance {v['clearance_m']:.2f} m to "
                          f"{v['clearance_at'][0] if v.get('clearance_at') else '—'})", fontsize=11)
    return save_figure(fig, path)
