"""The excavator as a machine kind of the sizing pipeline (``jobs.machine_kind``): its sections ``soil``,
``hydraulics``, ``iso6015``, ``lift_chart``, ``stability``, ``working_range`` and ``design``; its loads (the
soil cut by the bucket's edge and the soil it carries: ``machines.loads.soil_loads``); its actuation
post-processing (cylinders, motors and pumps: ``machines.hydraulics``); its checks (ISO 6015 digging forces,
the ISO 10567 lift chart, the ISO 7135 working ranges, the tipping margin, the design cases and the stall
envelopes: ``jobs.sizing_checks``, ``jobs.sizing_design``, ``jobs.sizing_stall``); and its report
(``reports.excavator_report.ExcavatorReport``)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from urdf_dyn.jobs.machine_kind import MachineKind
from urdf_dyn.reports.excavator_report import ExcavatorReport

__all__ = ["ExcavatorKind", "ExcavatorPlan", "EXCAVATOR"]


@dataclass(frozen=True)
class ExcavatorPlan:
    """The excavator's sections resolved: the soil (``machines.soil.Soil``), its cutting edge (a
    ``machines.loads.Frame``), the samples in which the edge may cut (N,) bool and those in which the payload
    leaves (N,) bool or None; the tipping polygon (k, 2) [m] or None; ``checks`` the check sections' frames
    (``jobs.excavator_plan.ExcavatorChecks``); ``relief_names`` {key: main | heavy_lift | line ...} the reliefs
    the scenario named by word (``SizeDocument.relief_names``), resolved here so that the report reads them
    from the plan."""
    soil: object = None
    edge: object = None
    active: object = None
    release: object = None
    polygon: object = None
    checks: object = None
    relief_names: dict = None


class ExcavatorKind(MachineKind):
    """A hydraulic excavator: see the module docstring."""
    name = "excavator"
    sections = ("soil", "hydraulics", "iso6015", "lift_chart", "stability", "working_range", "design")
    plot_modules = ("sizing", "soil", "hydraulics", "iso6015", "lift_chart", "stability", "working_range")
    report = ExcavatorReport()

    def plan(self, plan):
        from urdf_dyn.constraints.inverse import actuators_of
        from urdf_dyn.jobs.sizing_checks import tipping_polygon_of
        from urdf_dyn.launch.document import unknown_name
        from urdf_dyn.machines.loads import Frame
        sc, model, doc = plan.scenario, plan.model, plan.scenario.doc
        soil = edge = active = release = None
        sp = doc.soil
        if sp is not None:                 # soil.preset is checked by the schema (a Literal of SOILS)
            if sp.edge not in plan.frames and sp.edge not in model.links:
                raise sc.err("soil.edge", f"unknown frame {sp.edge!r} (frames: {', '.join([*plan.frames, *model.links])})")
            active = plan.mask("soil.during", sp.during)
            if sp.payload is not None and sp.payload.release is not None:
                release = plan.mask("soil.payload.release", sp.payload.release)
        for k, v in (doc.hydraulics.motors.items() if doc.hydraulics is not None else ()):
            if (v.displacement is None) == (v.torque is None):
                raise sc.err(f"hydraulics.motors.{k}", "give displacement [m3/rad] or torque [N m] (with its relief), "
                             "not both or neither")
        if doc.hydraulics is not None:  # before any output: hydraulics() would refuse them only at the end
            names = [x.name for x in actuators_of(model, doc.actuators.actuated)]
            for key in ("supply", "motors"):
                for k in getattr(doc.hydraulics, key):
                    if k not in names:
                        raise sc.err(f"hydraulics.{key}.{k}", unknown_name("actuator", k, names))
        if sp is not None:
            from urdf_dyn.machines.soil import soil_preset
            over = {k: getattr(sp, k) for k in ("density", "swell", "friction_angle", "tool_friction_angle",
                                                "cohesion", "adhesion") if getattr(sp, k) is not None}
            for k in ("friction_angle", "tool_friction_angle"):
                if k in over:
                    over[k] = np.radians(over[k])
            try:
                soil = soil_preset(sp.preset, **over)
            except ValueError as e:
                raise sc.err("soil", str(e)) from None
            edge = plan.frames.get(sp.edge) or Frame(sp.edge)
            if np.linalg.norm(np.asarray(sp.plate, float)) < 1e-9:
                raise sc.err("soil.plate", "must be a nonzero direction")
        from urdf_dyn.jobs.excavator_plan import check_sections
        from urdf_dyn.jobs.sizing_duty import check_duty
        check_duty(sc, model, plan.windows)          # design.duty's names and keys, before any work
        polygon = tipping_polygon_of(sc)
        return ExcavatorPlan(soil, edge, active, release, polygon, check_sections(plan, polygon),
                             dict(doc.relief_names))

    def geometry(self, plan, cache):
        from urdf_dyn.jobs.sizing_checks import machine_checks
        return machine_checks(plan.scenario, plan.model, plan.cylinders, plan.frames, cache)

    def ahead(self, plan, cache, start):
        """The stall envelopes and the out-of-plane cases (``jobs.sizing_stall.run_stall``), which ``checks``
        takes: ≈ 4.5 of the ≈ 7 s of checks a run computes when the cache holds none (warm kernels, one core)."""
        if plan.scenario.doc.design is None:
            return
        from urdf_dyn.jobs.sizing_design import design_pins
        from urdf_dyn.jobs.sizing_stall import run_stall
        pins, _ = design_pins(plan.scenario, plan.model)
        run_stall(plan.scenario, plan.model, plan.cylinders, plan.frames, pins or None, cache, start=start)

    def loads(self, plan, Q, QD, QDD, poses=None):
        from urdf_dyn.machines.loads import soil_loads
        sp, kp = plan.scenario.doc.soil, plan.kind_plan
        if sp is None:
            return {}, None
        com = sp.payload.com if sp.payload is not None else None
        cut = soil_loads(plan.model, plan.t, Q, QD, QDD, kp.soil, kp.edge, sp.plate, sp.ground.height, sp.width,
                         sp.capacity, kp.active, sp.edge_thickness, com, kp.release, poses=poses)
        if not cut.cut.reached:
            lo = cut.edge[kp.active, 2].min() if kp.active.any() else np.nan
            raise plan.scenario.err("soil.ground.height", f"the cutting edge never goes below the ground at z = "
                                    f"{sp.ground.height:g} m during {sp.during} (lowest edge height {lo:.3g} m)")
        return cut.f_ext, cut

    def actuation(self, plan, res, f_ext):
        from urdf_dyn.machines.hydraulics import Motor, hydraulics
        h = plan.scenario.doc.hydraulics
        if h is None:
            return None
        motors = {}
        for k, v in h.motors.items():          # one of displacement / torque: checked in plan()
            p = v.relief if v.relief is not None else h.relief
            motors[k] = Motor(v.displacement, v.relief) if v.torque is None else Motor.from_torque(v.torque, p)
        try:
            return hydraulics(res, plan.cylinders, motors, relief=h.relief, pump_flow=h.pump_flow,
                              supply=dict(h.supply), model=plan.model)
        except KeyError as e:
            raise plan.scenario.err("hydraulics", e.args[0]) from None

    def checks(self, plan, run, cache, echo):
        from urdf_dyn.jobs.sizing_checks import stability_check
        sc, model, doc = plan.scenario, plan.model, plan.scenario.doc
        out = {}
        st = stability_check(sc, model, run.t, run.q, run.qd, run.qdd, run.f_ext, echo, poses=run.poses)
        if st is not None:
            out["stability"] = st
        if doc.design is not None:       # stall envelopes; pins, buckling, pumps against the engine, shortest cycle
            from urdf_dyn.jobs.sizing_design import design_pins, run_design
            from urdf_dyn.jobs.sizing_stall import run_stall
            pins, _ = design_pins(sc, model)
            stall = run_stall(sc, model, plan.cylinders, plan.frames, pins or None, cache)
            reach = None
            if stall is not None:        # the buckling table shows the compression the stall states reach
                out["stall"] = stall
                reach = stall.env.push_forces({c: v.count for c, v in plan.cylinders.items()})
            out["design"] = run_design(sc, model, run.t, run.q, run.qd, run.qdd, run.f_ext, run.actuation, run.power,
                                       plan.cylinders, reachable=reach, plan=plan, cache=cache, poses=run.poses)
        return out

    def summary(self, run):
        lines = []
        cut, hyd, machine = run.loads, run.power, run.checks
        if cut is not None:
            c = cut.cut
            i = int(np.argmax(c.magnitude))
            lines.append(f"soil {cut.soil.name}: max depth {c.depth.max():.2f} m, peak soil force "
                         f"{c.magnitude[i] / 1e3:.1f} kN at {np.degrees(_angle(c.force[i], -c.velocity[i])):.0f} deg "
                         f"from the edge's backward travel (rake {np.degrees(c.rake[i]):.0f} deg), "
                         f"{c.volume.max():.2f} m3 bank cut, payload {cut.mass.max():.0f} kg, berm {c.berm.max():.2f} m3")
        if hyd is not None:
            lines.append(f"hydraulics: peak pump demand {hyd.peak_flow * 6e4:.0f} L/min of {hyd.pump_flow * 6e4:.0f}; "
                         f"positive work per cycle {hyd.positive_work / 1e3:.0f} kJ")
        if "iso6015" in machine:
            d = machine["iso6015"]
            ref = {k: f" (published {d.reference[k] / 1e3:.1f})" if d.reference.get(k) else ""
                   for k in ("bucket_N", "arm_N")}
            lines.append(f"ISO 6015: bucket digging force {d.bucket_N / 1e3:.1f} kN{ref['bucket_N']}, limited by "
                         f"{d.limited_by['bucket']}; arm {d.arm_N / 1e3:.1f} kN{ref['arm_N']}, limited by "
                         f"{d.limited_by['arm']}")
        if "working_range" in machine:
            w = machine["working_range"]
            lines.append(f"working range: depth {w.max_digging_depth_m:.2f} m, reach at ground "
                         f"{w.max_reach_ground_m:.2f} m, cutting height {w.max_cutting_height_m:.2f} m, loading height "
                         f"{w.max_loading_height_m:.2f} m")
        if "stability" in machine:
            s = machine["stability"]
            lines.append(f"stability: minimum ZMP margin {s.min_margin:.3f} m at t = {s.t_min:.2f} s")
        return lines

    def warnings(self, run):
        out = [f"hydraulics: {w}" for w in (run.power.warnings() if run.power is not None else ())]
        return out + [f"design: {w}" for w in (run.checks["design"].warnings() if "design" in run.checks else ())]


def _angle(a, b) -> float:
    """Angle [rad] between the vectors a and b (3,)."""
    return float(np.arctan2(np.linalg.norm(np.cross(a, b)), np.dot(a, b)))


#: the excavator kind (``machine_kind.KINDS``)
EXCAVATOR = ExcavatorKind()
