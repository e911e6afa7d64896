"""The actuator-force plot the browser viewer shows beside the machine: one image (matplotlib, Agg) and
the mapping between its pixels and the time axis, so that a cursor can be drawn at the current time and a
click on the plot moves the timeline there.
"""
from __future__ import annotations

import numpy as np

__all__ = ["ForcePlot", "force_series"]


def force_series(forces, samples=600):
    """(t (n,), {label: values (n,)}, unit label) of the actuator forces of a ForceSource: a run's CSV
    columns (every sample), else the forces at ``samples`` samples spread over the motion. Forces in kN,
    moments in kN·m (one axis: a moment's label says kN·m)."""
    mo = forces.motion
    units = {a.name: a.unit for a in forces.actuators}
    if forces.run is not None and forces.run.actuators:
        t = mo.t
        vals = {n: np.asarray(v) for n, v in forces.run.actuators.items()}
    else:
        ks = np.unique(np.linspace(0, len(mo) - 1, min(len(mo), samples)).astype(int))
        t = mo.t[ks]
        rows = [forces.values(int(k))[0] for k in ks]
        vals = {n: np.array([r.get(n, np.nan) for r in rows]) for n in units}
    return t, {f"{n} [{'kN·m' if units.get(n) == 'N m' else 'kN'}]": v / 1e3 for n, v in vals.items()}


class ForcePlot:
    """The plot as an RGBA image (h, w, 4) uint8, and its time axis in image fractions.

    Args: t (n,) [s]; series {label: (n,)}; title; size (w, h) [px].
    Attributes: image; t0, t1 (the axis limits [s]); x0, x1 (the axis's left and right edges as
    fractions of the image width)."""

    def __init__(self, t, series, title="actuator forces", size=(960, 330)):
        import matplotlib
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
        del matplotlib
        w, h = size
        fig = Figure(figsize=(w / 100, h / 100), dpi=100)
        FigureCanvasAgg(fig)
        ax = fig.add_axes((0.07, 0.16, 0.70, 0.72))
        for label, v in series.items():
            ax.plot(t, v, lw=1.4, label=label)
        ax.axhline(0.0, color="0.6", lw=0.8)
        self.t0, self.t1 = float(t[0]), float(t[-1]) if t[-1] > t[0] else float(t[0]) + 1.0
        ax.set_xlim(self.t0, self.t1)
        ax.set_xlabel("t [s]")
        ax.set_title(title + " (click to move the timeline)", fontsize=10)
        ax.grid(alpha=0.3)
        ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=8, frameon=False)
        fig.canvas.draw()
        self.image = np.asarray(fig.canvas.buffer_rgba()).copy()
        box = ax.get_position()
        self.x0, self.x1 = float(box.x0), float(box.x1)
        self.y0, self.y1 = float(box.y0), float(box.y1)

    def time_at(self, u):
        """Time [s] at the fraction ``u`` of the image width (clamped to the axis)."""
        f = (float(u) - self.x0) / (self.x1 - self.x0)
        return self.t0 + float(np.clip(f, 0.0, 1.0)) * (self.t1 - self.t0)

    def fraction_at(self, time):
        """Fraction of the image width of ``time`` [s] on the axis."""
        f = (float(time) - self.t0) / (self.t1 - self.t0)
        return self.x0 + float(np.clip(f, 0.0, 1.0)) * (self.x1 - self.x0)
