"""The out-of-plane load cases drawn: per case the main chain's pin moments and the torsion of boom and stick,
and the slewing ring's tilting moment at the tipping limit per slew angle beside each case's (lateral_cases.png,
``reports.fe_report``)."""
from __future__ import annotations

import numpy as np

from urdf_dyn.reports.plotting import figure, save_figure

__all__ = ["plot_lateral_cases"]

MAIN = ("boom_foot", "boom_nose", "bucket_pivot")


def plot_lateral_cases(rows, ring_tipping, path):
    """Left: bars per case (``case_matrix.CaseRow`` with pin moments, the end stops left out: in-plane) of the
    pin moments across the axis at the main pins and the torsion of boom and stick [kN·m]. Right: the ring's
    tilting moment at the tipping limit per slew angle (``slewing_ring.ring_at_tipping_limit``'s per_slew)
    with each case's largest as a line [kN·m]. PNG at ``path``; returns path."""
    rows = [r for r in rows if r.moments and any(r.moments.values())]
    fig, ax = figure((12, 4.8), 1, 2, bottom=1.4, left=0.9, wspace=1.0)
    a, b = ax[0, 0], ax[0, 1]
    x = np.arange(len(rows))
    keys = [(f"{p} moment", lambda r, p=p: r.moments.get(p, 0.0)) for p in MAIN] + \
        [(f"{k} torsion", lambda r, k=k: r.torsion.get(k, 0.0)) for k in ("boom", "stick")]
    w = 0.8 / len(keys)
    for i, (lab, get) in enumerate(keys):
        a.bar(x - 0.4 + (i + 0.5) * w, [get(r) / 1e3 for r in rows], w, label=lab, color=f"C{i}")
    a.set_xticks(x, [r.case for r in rows], rotation=30, ha="right", fontsize=8)
    a.set_ylabel("moment across the pin / torsion [kN·m]")
    a.grid(alpha=0.3, axis="y")
    a.legend(fontsize=7)
    a.set_title("out-of-plane cases: main pins' moments, torsion of boom and stick", fontsize=10)
    if ring_tipping is not None:
        ps = ring_tipping["per_slew"]
        b.plot([p["slew_deg"] for p in ps], [p["tilting_moment_Nm"] / 1e3 for p in ps], "o-", color="k",
               label="at the tipping limit (vertical load at the lip)")
    for i, r in enumerate(rows):
        if r.ring:
            b.axhline(r.ring["tilting_moment_Nm"] / 1e3, color=f"C{i % 10}", ls="--", lw=1, label=r.case)
    b.set_xlabel("slew angle over the tracks [deg] (0: over the front)")
    b.set_ylabel("ring tilting moment [kN·m]")
    b.grid(alpha=0.3)
    b.legend(fontsize=7, loc="lower center")
    b.set_title("slewing ring: tilting moment", fontsize=10)
    return save_figure(fig, path)
