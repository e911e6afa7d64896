"""The structure's load cases in the sizing report: the case matrix (``machines.case_matrix``: per case its
reliefs, anchoring, every pin's governing force and the slewing ring's loads) as a table of
sizing_report.md and the ``case_matrix`` JSON key, and the FE export (``machines.fe_export``: per design case
and body the free-body load set in the body frame) as free_body_loads.csv and free_body_loads.bdf.

**Nastran** (MSC/NX Nastran Quick Reference Guide, bulk data entries GRID, FORCE, MOMENT; free field,
comma separated): per free body a load set (SID from 1), one GRID per load point in the basic system (the
body frame), one FORCE and one MOMENT per load with the set's SID, F = 1 and the components as the direction
(N1, N2, N3). A structure model meshed in the same body frame takes the cards with its load points tied
(RBE2/RBE3) to these grids."""
from __future__ import annotations

import csv

from urdf_dyn.io.files import atomic_path
from urdf_dyn.machines.reliefs import relief_text

__all__ = ["render_cases", "write_free_body_csv", "write_nastran"]

#: the main chain's pins, which carry every out-of-plane load (machines.lateral_cases module docstring)
MAIN_PINS = ("boom_foot", "boom_nose", "bucket_pivot")


def render_cases(rep, stall):
    """Add the case matrix and the FE export of ``stall`` (a ``jobs.sizing_stall.StallReport`` with ``cases``
    [CaseRow] and ``free_bodies`` [FreeBody]) to ``rep`` (a ``sizing_render.Report``): a Markdown section,
    the JSON keys ``case_matrix`` and ``fe_export``, free_body_loads.csv and free_body_loads.bdf."""
    md, js = rep.md, rep.js
    rows = stall.cases or []
    if rows:
        pins = list(rows[0].pins)
        ring = any(r.ring for r in rows)
        md += ["### Case matrix: the planar load cases that size the structure (urdf_dyn.machines.case_matrix)", "",
               "One row per stalling cylinder and ground condition (anchored, ISO 6015 §4.5; sliding at the "
               "scenario's friction), each the largest over its stall states on the grid, then the converged "
               "design loads (searched to convergence: less than 1 % more in the final neighbour check). Pin forces per pin [kN]; the "
               "slewing ring's largest tilting moment over the case's states, with the axial and radial force and "
               "the torque in that state. The out-of-plane cases follow in their own table when the scenario has "
               "design.lateral.", "",
               "| case | working relief | holding reliefs | ground | " + " | ".join(pins)
               + (" | ring tilting [kN·m] | axial [kN] | radial [kN] | torque [kN·m]" if ring else "") + " |",
               "|---|---:|---|---|" + "---:|" * len(pins) + ("---:|" * 4 if ring else "")]
        for r in rows:
            g = r.ring or {}
            md.append(f"| {r.case} | {r.working_relief / 1e5:.0f} bar | {relief_text(r.holding)} | {r.anchoring} | "
                      + " | ".join(f"{r.pins[p] / 1e3:.1f}" for p in pins)
                      + ("".join(f" | {g[k] / 1e3:.1f}" if k in g else " | –" for k in
                                 ("tilting_moment_Nm", "axial_N", "radial_N", "torque_Nm")) if ring else "") + " |")
        md.append("")
        js["case_matrix"] = [r.to_dict() for r in rows]
    lat = getattr(stall, "lateral", None)
    if lat is not None:
        _render_lateral(rep, lat, list(rows[0].pins) if rows else None)
    fb = (stall.free_bodies or []) + (lat.free_bodies if lat is not None else [])
    if fb:
        cases = list(dict.fromkeys(f.case for f in fb))
        worst = max(float(abs(f.residual).max() / f.largest_force) for f in fb)
        md += ["### FE export: free-body load sets (urdf_dyn.machines.fe_export)", "",
               f"Per design case ({', '.join(cases)}: the pins each sizes) and per body, every load in the body's "
               "frame — the pins' forces and moments, the loop closures, the external force at the lip, the weight "
               f"and d'Alembert's inertia — in `{rep.path('free_body_csv').name}` (force at its point with the "
               f"moment about it) and as Nastran GRID/FORCE/MOMENT cards in `{rep.path('free_body_bdf').name}` "
               f"(one load set per case and body). Largest equilibrium residual {worst:.1e} of a body's largest "
               "force.", ""]
        js["fe_export"] = dict(cases=cases, bodies=sorted({f.body for f in fb}), load_sets=len(fb),
                               largest_relative_residual=worst)
        rep.wrote("free_body_csv", write_free_body_csv(fb, rep.path("free_body_csv")))
        rep.wrote("free_body_bdf", write_nastran(fb, rep.path("free_body_bdf")))


def _g(x):
    return f"{float(x):.12g}"


def write_free_body_csv(sets, path):
    """CSV: one row per load: case, body, load, point x y z [m], force fx fy fz [N], moment about the point
    mx my mz [N m], moment about the body origin nx ny nz [N m]; then a ``residual`` row per body. ``sets``
    [FreeBody]; written atomically; returns the path."""
    with atomic_path(path) as tmp:
        with open(tmp, "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["case", "body", "load", "x [m]", "y [m]", "z [m]", "fx [N]", "fy [N]", "fz [N]", "mx [N m]",
                        "my [N m]", "mz [N m]", "nx_origin [N m]", "ny_origin [N m]", "nz_origin [N m]"])
            for fb in sets:
                for ld in fb.loads:
                    w.writerow([fb.case, fb.body, ld.name, *map(_g, ld.point), *map(_g, ld.wrench[3:]),
                                *map(_g, ld.moment), *map(_g, ld.wrench[:3])])
                r = fb.residual
                w.writerow([fb.case, fb.body, "residual", "", "", "", *map(_g, r[3:]), "", "", "", *map(_g, r[:3])])
    return path


def write_nastran(sets, path):
    """Nastran bulk data (free field; module docstring): per free body a load set (SID from 1), a GRID per load
    point in the body frame (IDs by set: 1000·SID + k), a FORCE and a MOMENT per load (F = 1, direction = the
    components [N], [N m] about the point). A comment line names each set's case and body and each load.
    Written atomically; returns the path."""
    lines = ["$ urdf_dyn free-body load sets (machines/fe_export.py): N, N m, m; coordinates: each body's frame"]
    for sid, fb in enumerate(sets, start=1):
        lines.append(f"$ SID {sid}: case {fb.case}, body {fb.body}")
        for k, ld in enumerate(fb.loads, start=1):
            gid = 1000 * sid + k
            lines.append(f"$ {ld.name}")
            lines.append("GRID," + ",".join([str(gid), ""] + [_g(x) for x in ld.point]))
            lines.append("FORCE," + ",".join([str(sid), str(gid), "0", "1.0"] + [_g(x) for x in ld.wrench[3:]]))
            lines.append("MOMENT," + ",".join([str(sid), str(gid), "0", "1.0"] + [_g(x) for x in ld.moment]))
    with atomic_path(path) as tmp:
        with open(tmp, "w") as fh:
            fh.write("\n".join(lines) + "\n")
    return path


def _kN(x):
    return "–" if x is None or x != x else f"{x / 1e3:.1f}"


def _render_lateral(rep, lat, pins):
    """The out-of-plane rows of the case matrix (``jobs.sizing_lateral.LateralReport``): forces per pin with
    the ring, then the main chain's pin moments, side and lug forces and the torsion of boom and stick."""
    from urdf_dyn.machines.reliefs import relief_text
    md, js = rep.md, rep.js
    rows = lat.rows
    pins = pins or list(rows[0].pins)
    st = lat.settings
    md += ["### Case matrix: the out-of-plane cases (urdf_dyn.machines.lateral_cases, slewing_ring, end_stop)", "",
           f"Anchored (ISO 6015 §4.5), weights included. Corner tooth: every stall state with the force at the corner "
           f"tooth, {st['bucket_width_m'] / 2:.3f} m off the boom plane (bucket width {st['bucket_width_m']:g} m), grid "
           f"{' x '.join(map(str, st['grid']))} poses x {st['n_fan'] + 1} directions (not refined). "
           + (f"Swing stall against a wall and eccentric tooth load: the swing relief {st['swing_relief_Pa'] / 1e6:g} MPa "
              f"x displacement {st['swing_displacement_m3_rad'] * 1e3:.3f} L/rad = {st['swing_torque_Nm'] / 1e3:.1f} kN·m "
              "at the ring: the most torque about the swing axis any case can hold (a corner-tooth force beyond it is "
              "scaled down: the upper structure slews); the wall's force T/r at the tooth, the eccentric load's side "
              "force up to the relief's torque (both capped by tipping). " if "swing_torque_Nm" in st else "")
           + (f"End stop: each cylinder into its cushion ({st['cushion_length_m'] * 1e3:.0f} mm, ξ = {st['cushion_xi']:g}) "
              "at the valve section's flow, rigid-body energy times EN 1991-3 Table 2.10's φ₇. " if "cushion_length_m" in st
              else "")
           + "Out of the boom plane the loads go through the main chain's pins and the ring (cylinders and the bucket "
             "linkage carry only in-plane forces: machines/lateral_cases.py). Pin forces [kN]; ring [kN, kN·m].", "",
           "| case | working relief | holding reliefs | " + " | ".join(pins)
           + " | ring tilting [kN·m] | axial [kN] | radial [kN] | torque [kN·m] |",
           "|---|---:|---|" + "---:|" * (len(pins) + 4)]
    for r in rows:
        g = r.ring or {}
        rel = "–" if r.working_relief != r.working_relief else f"{r.working_relief / 1e5:.0f} bar"
        md.append(f"| {r.case} | {rel} | {relief_text(r.holding) if r.holding is not None else '–'} | "
                  + " | ".join(_kN(r.pins.get(p)) for p in pins) + "".join(
                      f" | {_kN(g.get(k))}" for k in ("tilting_moment_Nm", "axial_N", "radial_N", "torque_Nm")) + " |")
    main = [p for p in MAIN_PINS if any(p in r.moments for r in rows)]
    md += ["", "Pin moments across the pin axis [kN·m], side forces along it [kN] and lug forces [kN] (where "
           "design.lateral.lug_spacing gives the lugs' spacing) of the main chain's pins; torsion of boom and stick "
           "[kN·m] (about the chord from its pin to the next). Every other pin: in-plane loads only (moment 0).", "",
           "| case | " + " | ".join(f"{p} moment | {p} side | {p} lug" for p in main) + " | boom torsion | stick torsion |",
           "|---|" + "---:|" * (3 * len(main) + 2)]
    for r in rows:
        if not any(r.moments.values()) and not any(r.torsion.values()):
            continue                                    # planar (the end stops): in the forces' table only
        md.append(f"| {r.case} | " + " | ".join(f"{_kN(r.moments.get(p))} | {_kN(r.side.get(p))} | {_kN(r.lug.get(p))}"
                                               for p in main)
                  + f" | {_kN(r.torsion.get('boom'))} | {_kN(r.torsion.get('stick'))} |")
    md += [""] + [f"- {r.case}: {r.note}" for r in rows if r.note] + [""]
    req = st.get("cushion_length_at_line_relief_m")
    if req:
        md += ["Cushion length that would keep each cushion's peak pressure at that side's line relief (the rod "
               "side's at the extended end, the head side's at the retracted one), E / (ξ p A): "
               + ", ".join(f"{k} {v * 1e3:.0f} mm" for k, v in req.items())
               + f" — against the {st['cushion_length_m'] * 1e3:.0f} mm assumed; the impact part of the end-stop loads "
               "goes with v² / s_c (a longer cushion or a slower approach to the stop lowers it in proportion).", ""]
    js["case_matrix"] = js.get("case_matrix", []) + [r.to_dict() for r in rows]
    rt = lat.ring_tipping
    from urdf_dyn.reports.lateral_plots import plot_lateral_cases
    rep.plot("lateral_cases_png", plot_lateral_cases, rows, rt, rep.path("lateral_cases_png"))
    js["lateral_cases"] = dict(settings=st, ring_at_tipping_limit=None if rt is None else {
        k: v for k, v in rt.items() if k not in ("q", "force", "point", "holding")})
