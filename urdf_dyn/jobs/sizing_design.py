"""The ``design:`` section of ``job: size``: from the scenario's keys to ``machines.design_cases``.

    design:
      pins:                                # pin name: a tree joint or loop joint, or {joint, count}
        boom_foot: boom
        boom_cylinder_eye: {joint: boom_cylinder_eye, count: 2}   # per pin of the pair
      swing_bearing: swing                 # axial / radial / tilting of the swing joint
      friction: 0.5                        # ground friction coefficient (for the stall envelopes)
      buckling: {threshold: 1.0, youngs_modulus: 210e9, rod_yield: 460e6, pin_friction: 0.15,
                 relief: line_head}        # ISO/TS 13725 yield-based limit; needs the cylinders' tube_outer
                                           # and rod_length (pin_diameter, clearance, guide_length: actuators.cylinders)
      pumps: {engine_power: 121e3, margin: 2e6, volumetric_efficiency: 0.95, mechanical_efficiency: 0.9,
              priority: equal}             # or [boom_cyl, swing, ...]; needs hydraulics:
      fatigue: {m: 3, life_cycles: 2e6, reference_cycles: 2e6}   # life_cycles only without a duty mix
      duty: {activities: {...}, bushings: {...}, allowable: {...}, details: {...}}   # jobs.duty_schema
      cycle: {dt: 0.02, min_duration: 0.2} # the shortest cycle through motion.waypoints
    reference:                             # published figures printed beside the shortest cycle
      cycle.swing_speed_rpm: {value: 11.3, source: "data sheet"}

Every key's error names its path (``design.pumps.priority: ...``)."""
from __future__ import annotations

import numpy as np

__all__ = ["run_design", "design_pins", "CACHED_KEYS"]


def design_pins(launch, model):
    """({name: PinSpec} of ``design.pins``, [notes]): empty, with a note, when the payload has inertia (the pin
    forces do not follow a changed model yet). Raises ScenarioError (``design.pins``) for a pin whose joint is
    neither a joint nor a loop of the model, so that the stall envelopes, which run before the design cases,
    never meet one."""
    from urdf_dyn.machines.pins import PinSpec
    doc = launch.doc
    pins = {n: (PinSpec(p) if isinstance(p, str) else PinSpec(p.joint, p.count)) for n, p in doc.design.pins.items()}
    if pins and doc.payload is not None and doc.payload.inertia is not None:
        return {}, ["- no pin forces: a payload with inertia (payload.inertia) changes the model, which the pin "
                    "forces do not follow yet; give the payload as a point mass"]
    loops = [lp.name for lp in model.loops]
    for n, p in pins.items():
        if p.joint not in model.joint_names and p.joint not in loops:
            raise launch.err("design.pins", f"pin {n!r}: no joint or loop named {p.joint!r} (joints: "
                             f"{', '.join(model.joint_names)}; loops: {', '.join(loops)})")
    return pins, []


#: the scenario sections (besides the robot) each result kept by the run's ``GeometryCache`` reads: its key.
#: The buckling check reads the cylinders and the reliefs (and the stall envelopes' reach, given as the key's
#: ``extra``); the duty mix re-runs motions and cuts, so it reads the motion, the soil, the frames, the loads,
#: the payload, the actuated joints and the design's duty, pins and fatigue (and the main cycle, hashed into
#: ``extra``), never the cylinders' sizes (a sweep over a bore or a tube keeps it); the shortest cycle reads the
#: waypoints, the hydraulics, the actuators, the design's cycle and pumps (and the main cycle's external loads)
CACHED_KEYS = {
    "buckling": ("actuators", "design.buckling", "hydraulics"),
    "duty": ("motion", "soil", "frames", "loads", "payload", "actuators.actuated", "design.duty", "design.pins",
             "design.fatigue"),
    "cycle": ("motion", "hydraulics", "actuators", "design.cycle", "design.pumps"),
}


def _cached(cache, launch, check, compute, extra, model):
    """``cache.get`` of ``check`` under its ``CACHED_KEYS``; ``compute()`` without a cache."""
    if cache is None:
        return compute()
    return cache.get(launch, check, CACHED_KEYS[check], compute, extra=extra, model=model)


def _digest(arrays) -> str:
    """SHA-256 (hex) of the bytes, shapes and dtypes of ``arrays`` (a list of arrays and {name: array})."""
    import hashlib
    h = hashlib.sha256()
    for a in arrays:
        for k, v in (sorted(a.items()) if isinstance(a, dict) else [("", a)]):
            v = np.ascontiguousarray(v)
            h.update(f"{k}|{v.dtype.str}|{v.shape}|".encode())
            h.update(v.tobytes())
    return h.hexdigest()


def run_design(launch, model, t, q, qd, qdd, f_ext, res, hyd, cyl, reachable=None, plan=None, cache=None,
               poses=None):
    """The design cases of ``launch.doc.design`` for the sized cycle (t, q, qd, qdd (N, nv), f_ext; ``res`` the
    SizingResult, ``hyd`` the HydraulicsResult or None, ``cyl`` {actuator: Cylinder}; ``reachable``
    {cylinder: the stall envelopes' largest compression per cylinder [N]}, reported beside the buckling
    check's relief force; ``plan`` the SizingPlan, which ``design.duty`` needs: ``jobs.sizing_duty``;
    ``cache`` the run's ``jobs.geometry_cache.GeometryCache``, which keeps the buckling check, the shortest
    cycle and the duty mix under the sections they read, ``CACHED_KEYS``: None computes them); ``poses`` the
    body poses at q (``SizingRun.poses``) for the pin loads. Returns a ``DesignCases``. Raises
    ScenarioError naming the key for bad input."""
    from urdf_dyn.machines.buckling import ColumnLoads, CylinderColumn
    from urdf_dyn.machines.design_cases import buckling_cases, design_cases, stroke_lengths
    doc = launch.doc
    ds = doc.design
    pins, notes = design_pins(launch, model)
    rigid_payload = doc.payload is not None and doc.payload.inertia is not None
    if ds.swing_bearing is not None and ds.swing_bearing not in model.joint_names:
        raise launch.err("design.swing_bearing", f"unknown joint {ds.swing_bearing!r}")
    columns, relief, column_loads = {}, None, {}
    if ds.buckling is not None:
        relief = ds.buckling.relief or (doc.hydraulics.relief if doc.hydraulics is not None else None)
        if relief is None:
            notes.append("- no buckling check: give design.buckling.relief or a hydraulics: section")
        for n, c in (doc.actuators.cylinders.items() if relief is not None else ()):
            if c.tube_outer is None or c.rod_length is None:
                notes.append(f"- {n}: no buckling check (give tube_outer and rod_length in actuators.cylinders.{n})")
                continue
            try:
                lo, hi = stroke_lengths(model, n)
                columns[n] = CylinderColumn(c.bore, c.rod, c.tube_outer, c.rod_length, lo, hi,
                                            ds.buckling.youngs_modulus, ds.buckling.rod_yield)
                column_loads[n] = ColumnLoads(ds.buckling.pin_friction, (c.pin_diameter or 0.0,) * 2, c.clearance,
                                              c.guide_length or 0.0)
            except (ValueError, KeyError) as e:
                raise launch.err(f"actuators.cylinders.{n}", e.args[0]) from None
    pumps, p = None, ds.pumps
    if p is not None and hyd is None:
        notes.append("- no pumps against the engine: they need a hydraulics: section (pump flow, relief, motors)")
    elif p is not None:
        if not isinstance(p.priority, str):
            for n in p.priority:
                if n not in hyd.actuators:
                    raise launch.err("design.pumps.priority", f"unknown section {n!r} (sections: "
                                     f"{', '.join(hyd.actuators)})")
        pumps = dict(engine_power=p.engine_power, pump_flow=hyd.pump_flow, relief=hyd.relief, margin=p.margin,
                     eta_v=p.volumetric_efficiency, eta_hm=p.mechanical_efficiency, priority=p.priority)
    cycle = None
    if ds.cycle is not None and rigid_payload:
        notes.append("- no shortest cycle: a payload with inertia (payload.inertia) is not re-timed yet")
    elif ds.cycle is not None:
        cycle = _cycle_inputs(launch, model, t, ds, cyl, pumps, notes)
    try:
        threshold = ds.buckling.threshold if ds.buckling else 1.0
        buckled = _cached(cache, launch, "buckling", lambda: buckling_cases(columns, relief, threshold, column_loads,
                                                                            reachable),
                          {"reachable": reachable}, model) if columns else {}
        shortest = _cached(cache, launch, "cycle", lambda: _shortest(model, f_ext, res.names, cycle),
                           {"main": _digest([t, f_ext or {}]), "actuated": list(res.names)}, model) if cycle else None
        dc = design_cases(model, t, q, qd, qdd, f_ext=f_ext or None, actuated=res.names, pins=pins or None,
                          swing=ds.swing_bearing, fatigue=ds.fatigue.model_dump(), hydraulics=hyd, pumps=pumps,
                          poses=poses)
        dc.buckling, dc.cycle = buckled, shortest
    except KeyError as e:
        raise launch.err("design.pins", e.args[0]) from None
    except ValueError as e:
        raise launch.err("design", str(e)) from None
    if ds.friction is not None:
        notes.append(f"- ground friction coefficient {ds.friction:g}: used by the stall envelopes (sliding)")
    if ds.duty is not None:
        _duty(launch, plan, pins, (t, q, qd, qdd, f_ext), ds, dc, notes, cache)
    dc.notes = notes
    dc.published = {k[len("cycle."):]: dict(value=v.value, source=v.source) for k, v in doc.reference.items()
                    if k.startswith("cycle.")}
    return dc


def _shortest(model, f_ext, actuated, cycle):
    """``machines.cycle.shortest_cycle`` of the keywords ``cycle`` (``_cycle_inputs``) under the main cycle's
    external loads, as ``design_cases`` computes it."""
    from urdf_dyn.machines.cycle import shortest_cycle
    return shortest_cycle(model, f_ext=f_ext or None, actuated=actuated, **cycle)


def _duty(launch, plan, pins, main, ds, dc, notes, cache=None):
    """The duty mix into ``dc.duty`` (kept by ``cache`` under ``CACHED_KEYS["duty"]`` and the main cycle's
    content); its damage-equivalent loads replace the main cycle's repeated alone."""
    if "life_cycles" in ds.fatigue.model_fields_set:
        raise launch.err("design.fatigue.life_cycles", "the duty mix (design.duty) sets the life: remove "
                         "life_cycles (each activity's hours x cycles per hour count its cycles)")
    if plan is None or not pins:
        notes.append("- no duty mix: it needs design.pins (and a payload without inertia)")
        return
    from urdf_dyn.jobs.sizing_duty import run_duty
    extra = {"main": _digest([*main[:4], main[4] or {}]), "pins": {n: [p.joint, p.count] for n, p in pins.items()}}
    dc.duty = _cached(cache, launch, "duty", lambda: run_duty(plan, main, pins, ds.fatigue), extra, model=plan.model)
    dc.damage = {n: dc.duty.damage_equivalent(n) for n in pins}
    notes.extend(dc.duty.notes)


def _cycle_inputs(launch, model, t, ds, cyl, pumps, notes):
    """shortest_cycle's keywords from the scenario's motion and hydraulics, or None (with a note)."""
    from urdf_dyn.launch.document import joint_vector
    from urdf_dyn.machines.cycle import CycleLimits
    doc = launch.doc
    mo = doc.motion
    if mo.csv or not mo.waypoints:
        notes.append("- no shortest cycle: the motion is a recording, not waypoints")
        return None
    if doc.hydraulics is None:
        notes.append("- no shortest cycle: it needs a hydraulics: section (relief, pump flow, motors)")
        return None
    h = doc.hydraulics
    idx = [model.joint_index(j) for j in mo.independent]
    q0 = model.q_initial()
    W = np.array([joint_vector(launch, model, w, f"motion.waypoints[{i}]", q0)[idx] for i, w in enumerate(mo.waypoints)])
    torque = {n: float(model.effort_limit[model.joint_index(n)]) for n in h.motors if n in model.joint_names
              and np.isfinite(model.effort_limit[model.joint_index(n)]) and model.effort_limit[model.joint_index(n)] > 0}
    motors = {k: v.displacement if v.displacement is not None else v.torque / (v.relief or h.relief)
              for k, v in h.motors.items()}               # as the job's hydraulics: D, or τ at the motor's relief
    lim = CycleLimits(cyl, h.relief, torque=torque, motors=motors,
                      pump_flow=h.pump_flow, supply=dict(h.supply),
                      engine_power=pumps["engine_power"] if pumps else None,
                      pump={k: pumps[k] for k in ("margin", "eta_v", "eta_hm", "priority")} if pumps else {})
    return dict(names=list(mo.independent), waypoints=W, durations=list(mo.durations), limits=lim, t_ref=t,
                kind=mo.type, dt=ds.cycle.dt, min_duration=ds.cycle.min_duration, phases=mo.phases)
