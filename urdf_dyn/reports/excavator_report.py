"""The excavator's sections of the sizing report (``render_excavator``, the ``render`` of
``jobs.excavator_kind``): the soil, the hydraulics, ISO 6015, the working ranges, the lift chart, the
stability, the design cases, the stall envelopes, the case matrix and the FE export, each with its Markdown, JSON keys, series files and
plots (through the ``sizing_render.Report``)."""
from __future__ import annotations

import numpy as np

from urdf_dyn.machines.reliefs import relief_text
from urdf_dyn.reports.check_plots import plot_digging_envelope, plot_lift_chart, plot_working_range, plot_zmp
from urdf_dyn.reports.design_report import render_design, render_stall
from urdf_dyn.reports.fe_report import render_cases
from urdf_dyn.reports.sizing_render import KindReport
from urdf_dyn.reports.excavator_plots import (plot_pump_flow, plot_soil, plot_soil_direction, soil_section,
                                              write_hydraulics_csv, write_soil_csv)

__all__ = ["render_excavator", "ExcavatorReport"]


def render_excavator(run, rep):
    """Add the excavator's sections to ``rep`` (a ``sizing_render.Report``) for the checks ``run`` holds."""
    md, js, machine, t, windows = rep.md, rep.js, run.checks, run.actuation.t, run.windows
    soil = run.loads
    if soil is not None:
        md_soil, js["soil"] = soil_section(t, soil)
        md += md_soil
        _write_soil_csv(run, rep)
        rep.plot("soil_png", plot_soil, t, soil, rep.path("soil_png"), windows)
        rep.plot("soil_direction_png", plot_soil_direction, t, soil, rep.path("soil_direction_png"), soil.edge)
    h = run.power
    if h is not None:
        md += ["## Hydraulics (urdf_dyn.machines.hydraulics)", "",
               f"main relief {h.relief / 1e5:.0f} bar (a motor with its own circuit: its relief, in the table); pumps "
               f"{h.pump_flow * 6e4:.0f} L/min. Pushing is checked against the cap area, pulling against the "
               "annulus, each at relief; speeds per direction (extension fed on the cap side, retraction on the "
               "annulus) against the URDF limit and the flow the valve section can receive. Positive work "
               "∫ max(u v, 0) dt is what the pumps supply (ideal, no regeneration); the actuator table's net work "
               "∫ u v dt nets out what the loads give back.", "", h.table(), ""]
        md += [f"- **{w}**" for w in h.warnings()] + ([""] if h.warnings() else [])
        js["hydraulics"] = h.to_dict()
        rep.plot("pump_flow_png", plot_pump_flow, h, rep.path("pump_flow_png"), windows)
        rep.wrote("hydraulics_csv", write_hydraulics_csv(rep.path("hydraulics_csv"), h))
    if "iso6015" in machine:
        d = machine["iso6015"]
        names = run.plan.kind_plan.relief_names
        md += ["## ISO 6015 tool forces (urdf_dyn.machines.iso6015)", "", d.table(), "", d.conditions(), "",
               _iso_reliefs(d, names), ""]
        js["iso6015"] = dict(bucket_digging_force_N=d.bucket_N, arm_digging_force_N=d.arm_N,
                             limited_by=d.limited_by, at_limit=d.at_limit, pressures_bar=d.pressures_bar,
                             relief_Pa=d.relief,
                             holding_relief_Pa=d.holding_relief, include_weight=d.include_weight,
                             tipping_checked=d.tipping_checked, bucket_lip_m=d.bucket_tip, arm_lip_m=d.arm_tip,
                             holding_bar=d.holding_bar, arm_bucket=d.arm_bucket,
                             relief_names={k: v for k, v in names.items() if k.startswith("iso6015.")})
        if d.reference:
            js["iso6015"]["published"] = d.reference
        rep.plot("envelope_png", plot_digging_envelope, d, rep.path("envelope_png"))
    if "working_range" in machine:
        w = machine["working_range"]
        md += ["## Working ranges, ISO 7135 dimensions (urdf_dyn.machines.working_range)", "", w.table(), ""]
        js["working_range"] = w.to_dict()
        if w.reference:
            js["working_range"]["published"] = w.reference
        rep.plot("working_range_png", plot_working_range, w, rep.path("working_range_png"))
    if "lift_chart" in machine:
        lc = machine["lift_chart"]
        md += ["## ISO 10567 lift capacity (urdf_dyn.machines.lift_chart)", "", lc.to_markdown(), ""]
        js["lift_capacity"] = lc.grid()
        rep.plot("lift_chart_png", plot_lift_chart, lc, rep.path("lift_chart_png"))
    if "stability" in machine:
        _stability(rep, machine["stability"])
    if "design" in machine:          # pins, buckling, pumps, shortest cycle (machines.design_cases)
        render_design(rep, machine["design"], stall="stall" in machine,
                      relief_name=run.plan.kind_plan.relief_names.get("design.buckling.relief"))
    if "stall" in machine:           # stall envelopes, the pins' design loads, case matrix, FE export
        render_stall(rep, machine["stall"], machine.get("design"))
        render_cases(rep, machine["stall"])


#: the arm force's bucket stroke, in words (``iso6015.ARM_BUCKET``)
_ARM_BUCKET = {
    "max_moment": "the stroke at which the bucket linkage gives its largest output moment (SAE J1179 §3.3.1), "
                  "independent of any relief",
    "maximum": "the stroke of the largest arm force (ISO 6015 §4.4 read literally)",
    "bucket_force": "the bucket force's stroke (the makers' convention, e.g. Liebherr's \"Calculation of "
                    "bucket forces\")"}


def _iso_reliefs(d, names) -> str:
    """One paragraph: the relief each ISO figure used (with the word the scenario named it by) and the arm
    case's bucket rule."""
    how = {k: f" ({names[k]})" for k in ("iso6015.relief", "iso6015.holding_relief") if k in names}
    h = d.holding_relief
    parts = []
    for case, work in (("bucket", "bucket_cyl"), ("arm", "stick_cyl")):
        held = {c: v for c, v in h.items() if c != work} if isinstance(h, dict) else h
        parts.append(f"{case} force: {work} at the working relief {d.relief / 1e5:.0f} bar"
                     f"{how.get('iso6015.relief', '')}, the others held at their line reliefs"
                     f"{how.get('iso6015.holding_relief', '')} {relief_text(held)}")
    return ("Reliefs used — " + "; ".join(parts) + f". The arm force's bucket stroke: {_ARM_BUCKET[d.arm_bucket]} "
            f"(iso6015.arm_bucket: {d.arm_bucket}).")


def _stability(rep, st):
    rep.md += ["## Stability (urdf_dyn.machines.stability)", "",
               f"minimum tipping margin (ZMP to the tipping polygon) **{st.min_margin:.3f} m** at t = {st.t_min:.2f} s"
               + ("; **the ZMP leaves the polygon**" if np.any(st.outside) else "; the ZMP stays inside the polygon"),
               "", "One tipping line for the ZMP check, the lift chart and ISO 6015's tipping limit: the polygon "
               f"x ∈ [{st.footprint[:, 0].min():.3f}, {st.footprint[:, 0].max():.3f}] m, y ∈ "
               f"[{st.footprint[:, 1].min():.3f}, {st.footprint[:, 1].max():.3f}] m. Convention (ISO 10567's own "
               "wording of the tipping lines was not retrievable): Caterpillar Performance Handbook ed. 47, "
               "p. 7-122, \"at the tipping point when the weight in the bucket ... causes the rear rollers to lift "
               "clear of the track rails\": the machine pivots on the roller-rail contact, i.e. the front idler / "
               "last roller over the front and the near track's centreline over the side.", ""]
    rep.js["stability"] = dict(min_margin_m=st.min_margin, t_min_margin_s=st.t_min, outside=bool(np.any(st.outside)),
                               footprint_m=st.footprint)
    rep.plot("zmp_png", plot_zmp, st, rep.path("zmp_png"))


def _write_soil_csv(run, rep):
    """soil.csv (the viewers draw the soil force from it), unless ``rep.has`` it."""
    if run.loads is not None and not rep.has("soil_csv"):
        rep.wrote("soil_csv", write_soil_csv(rep.path("soil_csv"), run.actuation.t, run.loads))


class ExcavatorReport(KindReport):
    """The excavator kind's part of the sizing report (``jobs.excavator_kind``)."""
    check_plots = {"iso6015": "envelope_png", "lift_chart": "lift_chart_png", "working_range": "working_range_png",
                   "stall": "stall_envelopes_png", "lateral": "lateral_cases_png"}

    def render(self, run, report):
        render_excavator(run, report)

    def viewer_files(self, run, report):
        """soil.csv (``sizing_render.viewer_inputs``)."""
        _write_soil_csv(run, report)

    def shade(self, run) -> list:
        """[(t0, t1, label)]: the spans with the edge in the soil, shaded on the actuator plot."""
        from urdf_dyn.machines.hydraulics import intervals
        if run.loads is None:
            return []
        return [(t0, t1, f"in {run.loads.soil.name}") for t0, t1 in intervals(run.t, run.loads.cut.in_soil)]

    def view(self, run) -> dict:
        """The bench height, the cutting edge's frame and the payload's centroid (``soil``)."""
        sp = run.plan.scenario.doc.soil
        if sp is None:
            return {}
        edge = run.plan.frames.get(sp.edge)
        view = dict(bench_height=sp.ground.height, edge={"link": edge.link if edge else sp.edge, "xyz":
                    list(edge.xyz) if edge else [0, 0, 0], "rpy": list(edge.rpy) if edge else [0, 0, 0]})
        if sp.payload is not None:
            view["payload"] = {"link": view["edge"]["link"], "com": list(sp.payload.com)}
        return view
