"""The excavator's check sections resolved and checked before any work (``ExcavatorKind.plan``, called by
``SizingPlan.from_scenario``): every frame, cylinder, joint, pin and relief that ``iso6015``, ``lift_chart``,
``working_range``, ``design`` (its pins, buckling columns, pumps) and the stall envelopes name is looked up
here, so that the run below the plan (``jobs.sizing_run.compute``) meets no bad key. Each error is the
scenario's ``err(key, ...)``: the file, the key path and the key's line.

What is left to the run is what only the computation can tell about a valid scenario: a machine that cannot
reach a pose the check needs (``working_range``), or a motion whose edge never reaches the ground (``soil``)."""
from __future__ import annotations

import numpy as np

from urdf_dyn.launch.document import unknown_name

__all__ = ["ExcavatorChecks", "check_sections"]

#: the cylinders ISO 6015's digging forces and the stall envelopes pose the front with
#: (``machines.iso6015.digging_forces``' ``boom``, ``stick``, ``bucket``)
ISO_CYLINDERS = ("boom_cyl", "stick_cyl", "bucket_cyl")


class ExcavatorChecks:
    """The frames the checks measure at, resolved: ``lip`` and ``tip`` (``machines.loads.Frame`` or None) of
    ``iso6015``, ``range_tip`` of ``working_range``."""

    def __init__(self, lip=None, tip=None, range_tip=None):
        self.lip, self.tip, self.range_tip = lip, tip, range_tip


def _frame(sc, frames, key, name):
    fr = frames.get(name)
    if fr is None:
        raise sc.err(key, f"unknown frame {name!r} (frames: {', '.join(frames) or 'none'})")
    return fr


def _cylinders_for(sc, cyl, needed, what):
    for c in needed:
        if c not in cyl:
            raise sc.err("actuators.cylinders", f"{what} needs the {c!r} cylinder (got {', '.join(cyl) or 'none'})")


def _iso6015(sc, cyl, frames):
    from urdf_dyn.machines.reliefs import pressure_limits
    iso = sc.doc.iso6015
    lip = _frame(sc, frames, "iso6015.lip", iso.lip)
    tip = None
    if iso.tip is not None:
        tip = _frame(sc, frames, "iso6015.tip", iso.tip)
        if tip.link != lip.link:
            raise sc.err("iso6015.lip", f"the lip ({lip.link}) and the tip ({tip.link}) must be on one link")
        if np.linalg.norm(lip.xyz) > np.linalg.norm(tip.xyz) + 1e-9:
            raise sc.err("iso6015.lip", f"the lip ({np.linalg.norm(lip.xyz):.3f} m from the {lip.link} pivot) is "
                         f"farther out than the tooth tip ({np.linalg.norm(tip.xyz):.3f} m)")
    h = iso.holding_relief
    for k, v in (h.items() if isinstance(h, dict) else [(None, h)]):
        key = "iso6015.holding_relief" + (f".{k}" if k else "")
        if not (v.head > 0 and v.rod > 0 if hasattr(v, "head") else v > 0):   # a {head, rod} pair is checked by its schema
            raise sc.err(key, f"must be > 0 [Pa], got {v:g}")
        if k is not None and k not in cyl:
            raise sc.err(key, f"no such cylinder ({', '.join(cyl) or 'none in actuators.cylinders'})")
    _cylinders_for(sc, cyl, ISO_CYLINDERS, "iso6015")
    try:
        pressure_limits(cyl, iso.relief, h)
    except ValueError as e:
        raise sc.err("iso6015", str(e)) from None
    return lip, tip


def _design(sc, model, cyl):
    from urdf_dyn.jobs.sizing_design import design_pins
    from urdf_dyn.machines.buckling import CylinderColumn
    from urdf_dyn.machines.design_cases import stroke_lengths
    doc = sc.doc
    ds = doc.design
    pins, _ = design_pins(sc, model)                # every pin's joint or loop (design.pins)
    lateral = getattr(ds, "lateral", None)           # the out-of-plane cases (jobs.sizing_lateral)
    if lateral is not None and doc.iso6015 is not None and pins and lateral.bucket_width is None and doc.soil is None:
        raise sc.err("design.lateral.bucket_width", "give the bucket width (or soil.width)")
    if ds.swing_bearing is not None and ds.swing_bearing not in model.joint_names:
        raise sc.err("design.swing_bearing", unknown_name("joint", ds.swing_bearing, model.joint_names))
    if ds.buckling is not None:
        relief = ds.buckling.relief or (doc.hydraulics.relief if doc.hydraulics is not None else None)
        for n, c in (doc.actuators.cylinders.items() if relief is not None else ()):
            if c.tube_outer is None or c.rod_length is None:
                continue                            # a note in the report: no buckling check for it
            if isinstance(relief, dict) and n not in relief:
                raise sc.err("design.buckling.relief", f"no buckling relief for {n} (reliefs given for "
                             f"{', '.join(relief)})")
            try:
                lo, hi = stroke_lengths(model, n)
                CylinderColumn(c.bore, c.rod, c.tube_outer, c.rod_length, lo, hi, ds.buckling.youngs_modulus,
                               ds.buckling.rod_yield)
            except (ValueError, KeyError) as e:
                raise sc.err(f"actuators.cylinders.{n}", e.args[0]) from None
    p = ds.pumps
    if p is not None and doc.hydraulics is not None and not isinstance(p.priority, str):
        sections = [*cyl, *doc.hydraulics.motors]  # the hydraulics' sections: its cylinders and motors
        for n in p.priority:
            if n not in sections:
                raise sc.err("design.pumps.priority", f"unknown section {n!r} (sections: {', '.join(sections)})")


def check_sections(plan, polygon) -> ExcavatorChecks:
    """Check the excavator's check sections of ``plan.scenario`` against ``plan``'s model, frames and cylinders
    (``polygon``: the tipping polygon, None without ``stability``). Raises ScenarioError naming the key.
    Returns the resolved ``ExcavatorChecks``."""
    sc, model, frames, cyl = plan.scenario, plan.model, plan.frames, plan.cylinders
    doc = sc.doc
    lip = tip = range_tip = None
    if doc.iso6015 is not None:
        lip, tip = _iso6015(sc, cyl, frames)
    if doc.lift_chart is not None:
        if polygon is None:
            raise sc.err("lift_chart", "needs the tipping polygon of the ZMP check: add stability: {track: "
                         "{roller_length, gauge}} (or stability.footprint)")
        _cylinders_for(sc, cyl, ("boom_cyl",), "lift_chart (the lift cylinder)")
    if doc.working_range is not None:
        range_tip = _frame(sc, frames, "working_range.tip", doc.working_range.tip)
    if doc.design is not None:
        _design(sc, model, cyl)
    return ExcavatorChecks(lip, tip, range_tip)
