"""The duty mix of ``design.duty`` (``jobs.duty_schema``): each activity's own motion and loads, computed as the
main cycle is (consistent states through the loops, RBDA §8.12; the soil's failure wedge,
``machines.loads.soil_loads``; a hung load's weight and inertia, ``machines.loads.payload_wrench``; the pin
forces from closed-loop inverse dynamics, ``machines.pins.pin_loads``), then per pin the spectrum of the
force magnitude over the life (``machines.fatigue.duty_spectrum``), the bushing's p = F/(d L) and p·v
(``machines.pin_bearing``), and the Miner damage of each welded detail whose stress per unit load is given.

An activity is never a scaled copy of another: ``motion: main`` re-runs the scenario's cycle (in another soil
its cut, hence its loads, are computed again); any other activity follows its own waypoints. The scenario's
``loads:`` and ``payload:`` belong to the main cycle's phases and act only in ``motion: main`` activities
that keep the main soil. Cycles spanning two activities (the few transitions) are not counted."""
from __future__ import annotations

import numpy as np

from urdf_dyn.jobs.duty_schema import ActivitySoilSpec
from urdf_dyn.machines.duty import ActivityRun, DutyResult

__all__ = ["ActivityRun", "DutyResult", "check_duty", "run_duty"]


def _phases(key, launch, windows, t, during, default=()):
    """(N,) bool of the phases ``during`` (a name or a list; None: those of ``default`` that exist)."""
    from urdf_dyn.machines.loads import phase_mask
    names = [during] if isinstance(during, str) else list(during or [p for p in default if p in windows])
    for n in names:
        if n not in windows:
            raise launch.err(key, f"unknown phase {n!r} (phases: {', '.join(windows) or 'none: give phases'})")
    return phase_mask(t, windows, names) if names else np.zeros(len(t), bool)


def _motion(launch, model, key, spec, dt):
    """(t, Q, QD, QDD, windows) of an activity's own waypoints; ScenarioError naming the key."""
    from urdf_dyn.constraints.motion import consistent_motion
    from urdf_dyn.errors import ModelError
    from urdf_dyn.launch.document import joint_vector
    from urdf_dyn.machines.loads import phase_times
    from urdf_dyn.simulation.trajectories import spline_motion
    mo = launch.doc.motion
    indep = list(mo.independent)
    idx = [model.joint_index(j) for j in indep]
    q0 = model.q_initial()
    for i, w in enumerate(spec.waypoints):
        for j in w:
            if j not in indep:
                raise launch.err(f"{key}.waypoints[{i}].{j}", f"not one of motion.independent ({', '.join(indep)})")
    W = np.array([joint_vector(launch, model, w, f"{key}.waypoints[{i}]", q0)[idx]
                  for i, w in enumerate(spec.waypoints)])
    motion = spline_motion(indep, W, list(spec.durations), dt, mo.type)
    try:
        Q, QD, QDD = consistent_motion(model, motion)
    except ModelError as e:
        raise launch.err(f"{key}.waypoints", f"the loops cannot follow this motion: {e}") from None
    windows = phase_times(spec.phases, spec.durations) if spec.phases else {}
    return motion.t, Q, QD, QDD, windows


def _soil(plan, key, spec, t, Q, QD, QDD, windows):
    """(f_ext, soil name) of the activity's cut: the scenario's soil with the activity's keys replaced."""
    from urdf_dyn.machines.loads import soil_loads
    from urdf_dyn.machines.soil import soil_preset
    launch, sp, kp = plan.scenario, plan.scenario.doc.soil, plan.kind_plan
    s = spec.soil
    if sp is None:
        raise launch.err(f"{key}.soil", "an activity's soil replaces keys of the scenario's soil: section, "
                         "which this scenario has not")
    over = {k: getattr(s, k) for k in ("density", "swell") if getattr(s, k) is not None}
    try:
        soil = soil_preset(s.preset, **over) if s.preset else soil_preset(kp.soil.name, **{
            **{k: getattr(kp.soil, k) for k in ("density", "swell", "friction_angle", "tool_friction_angle",
                                                "cohesion", "adhesion")}, **over})
    except (KeyError, ValueError) as e:
        raise launch.err(f"{key}.soil", str(e)) from None
    main = spec.motion == "main"                     # the main cycle cuts and dumps in the scenario's phases
    during = s.during if s.during is not None or not main else sp.during
    rel = s.release if s.release is not None or not main or sp.payload is None else sp.payload.release
    active = _phases(f"{key}.soil.during", launch, windows, t, during, ("dig", "curl"))
    if not active.any():
        raise launch.err(f"{key}.soil.during", "no phase in which the edge cuts: name them (or phases dig, curl)")
    release = _phases(f"{key}.soil.release", launch, windows, t, rel, ("dump",))
    com = sp.payload.com if sp.payload is not None else None
    ground = sp.ground.height if s.ground is None else s.ground
    cut = soil_loads(plan.model, t, Q, QD, QDD, soil, kp.edge, sp.plate, ground, sp.width, sp.capacity, active,
                     sp.edge_thickness, com, release if release.any() else None)
    if not cut.cut.reached:
        lo = cut.edge[active, 2].min()
        raise launch.err(f"{key}.soil.ground", f"the cutting edge never goes below the ground at z = {ground:g} m "
                         f"(lowest edge height while cutting {lo:.3g} m)")
    return cut.f_ext, f"{soil.name} (ground {ground:g} m, payload {cut.mass.max():.0f} kg)"


def _histories(plan, key, spec, main, pins, dt, notes):
    """(t, Q, PinLoads, effort use, built_from, soil text, payload kg) of one activity."""
    from urdf_dyn.constraints.inverse import actuator_forces
    from urdf_dyn.machines.loads import add_wrenches, payload_wrench
    from urdf_dyn.machines.pins import pin_loads
    model, doc = plan.model, plan.scenario.doc
    if spec.motion == "main":
        t, Q, QD, QDD, f_main = main
        windows = plan.windows
        built = "the scenario's own cycle (motion:, its waypoints and phases)"
    else:
        t, Q, QD, QDD, windows = _motion(plan.scenario, model, key, spec, dt)
        f_main = {}
        built = f"its own {len(spec.waypoints)} waypoints over {sum(spec.durations):.1f} s"
    soil_txt, f_ext = "", {}
    if spec.soil == "none":
        soil_txt = "no soil"
        if spec.motion == "main":
            notes.append(f"- {key}: the main cycle without the soil or the scenario's loads and payload")
    elif spec.soil is not None:
        f_ext, soil_txt = _soil(plan, key, spec, t, Q, QD, QDD, windows)
        built += f"; the soil's cut computed again in {soil_txt.split(' ')[0]}"
    elif spec.motion == "main":
        f_ext = f_main
        if doc.soil is not None:
            soil_txt = plan.kind_plan.soil.name
    kg = 0.0
    if spec.payload is not None:
        p = spec.payload
        if p.link not in model.links:
            raise plan.scenario.err(f"{key}.payload.link", f"unknown link {p.link!r} (links: {', '.join(model.links)})")
        on = _phases(f"{key}.payload.during", plan.scenario, windows, t, p.during)
        f_ext = add_wrenches(f_ext, {p.link: payload_wrench(model, Q, QD, QDD, p.link, p.com, p.mass * on)})
        kg = p.mass
        built += f"; {p.mass:g} kg hung on {p.link} during {p.during}"
    af = actuator_forces(model, Q, QD, QDD, actuated=doc.actuators.actuated, warn=False, f_ext=f_ext or None)
    lim = np.asarray(af.limits, float)
    use = {n: float(np.max(np.abs(af.u[:, k])) / lim[k]) for k, n in enumerate(af.names)
           if np.isfinite(lim[k]) and lim[k] > 0}
    pl = pin_loads(model, t, Q, QD, QDD, pins, loop_forces=af.loop_forces, f_ext=f_ext or None)
    return t, Q, pl, use, built, soil_txt, kg


def check_duty(scenario, model, windows):
    """Check ``design.duty``'s names and keys before any work (``ExcavatorKind.plan``): an activity's soil needs
    the scenario's ``soil:``; its waypoints name only ``motion.independent``; its phases (``soil.during``,
    ``soil.release``, ``payload.during``) exist in its own ``phases`` (or, for ``motion: main``, in the main
    motion's ``windows``); a payload's link exists; the cycles per hour fit in an hour; bushings and details name
    ``design.pins``. Raises ScenarioError naming the key."""
    doc = scenario.doc
    duty = doc.design.duty if doc.design is not None else None
    if duty is None:
        return
    pins = doc.design.pins
    for k, n in [*((f"bushings.{n}", n) for n in duty.bushings), *((f"details.{d}.pin", x.pin)
                                                                    for d, x in duty.details.items())]:
        if n not in pins:
            raise scenario.err(f"design.duty.{k}", f"no pin {n!r} in design.pins ({', '.join(pins)})")
    indep = list(doc.motion.independent)
    for a, spec in duty.activities.items():
        key = f"design.duty.activities.{a}"
        main = spec.motion == "main"
        known = set(windows) if main else set(spec.phases or ())
        T = sum(doc.motion.durations or ()) if main else sum(spec.durations)
        if isinstance(spec.soil, ActivitySoilSpec) and doc.soil is None:
            raise scenario.err(f"{key}.soil", "an activity's soil replaces keys of the scenario's soil: section, "
                               "which this scenario has not")
        for i, w in enumerate(spec.waypoints or ()):
            for j in w:
                if j not in indep:
                    raise scenario.err(f"{key}.waypoints[{i}].{j}", f"not one of motion.independent "
                                       f"({', '.join(indep)})")
        if spec.payload is not None and spec.payload.link not in model.links:
            raise scenario.err(f"{key}.payload.link", f"unknown link {spec.payload.link!r} (links: "
                               f"{', '.join(model.links)})")
        named = [("soil.during", getattr(spec.soil, "during", None)), ("soil.release", getattr(spec.soil, "release", None)),
                 ("payload.during", spec.payload.during if spec.payload is not None else None)]
        for k, v in named:
            for n in [v] if isinstance(v, str) else (v or ()):
                if n not in known:
                    raise scenario.err(f"{key}.{k}", f"unknown phase {n!r} (phases: {', '.join(sorted(known)) or 'none'})")
        if spec.cycles_per_hour is not None and T > 0 and spec.cycles_per_hour * T > 3600.0 * (1 + 1e-9):
            raise scenario.err(f"{key}.cycles_per_hour", f"{spec.cycles_per_hour:g} cycles of {T:.2f} s take "
                               f"{spec.cycles_per_hour * T / 60:.1f} min per hour: more than an hour")


def run_duty(plan, main, pins, fatigue) -> DutyResult:
    """The duty mix of ``plan.scenario.doc.design.duty`` (module docstring). ``main``: the main cycle's
    (t, Q, QD, QDD, f_ext); ``pins`` {name: PinSpec} (``design.pins``); ``fatigue``: the FatigueSpec (m,
    reference_cycles of the damage-equivalent load). Raises ScenarioError naming the key."""
    from urdf_dyn.machines.fatigue import duty_spectrum, miner_damage, sn_curve, stress_history
    from urdf_dyn.machines.pin_bearing import pin_bearing
    launch, model = plan.scenario, plan.model
    duty = launch.doc.design.duty
    dt = duty.dt or launch.doc.motion.dt
    for k, d in [*((f"bushings.{n}", n) for n in duty.bushings), *((f"details.{n}.pin", d.pin)
                                                                    for n, d in duty.details.items())]:
        if d not in pins:
            raise launch.err(f"design.duty.{k}", f"no pin {d!r} in design.pins ({', '.join(pins)})")
    notes, acts, forces = [], {}, {}
    for a, spec in duty.activities.items():
        key = f"design.duty.activities.{a}"
        t, Q, pl, use, built, soil_txt, kg = _histories(plan, key, spec, main, pins, dt, notes)
        T = float(t[-1] - t[0])
        cph = spec.cycles_per_hour if spec.cycles_per_hour is not None else 3600.0 / T
        if cph * T > 3600.0 * (1 + 1e-9):
            raise launch.err(f"{key}.cycles_per_hour", f"{cph:g} cycles of {T:.2f} s take {cph * T / 60:.1f} min "
                             "per hour: more than an hour")
        forces[a] = {n: pl.wrench[n][:, 3:] for n in pl.names}
        bear = {n: pin_bearing(model, t, Q, pins[n].joint, forces[a][n], b.diameter, b.length)
                for n, b in duty.bushings.items()}
        acts[a] = ActivityRun(spec.hours, cph, T, spec.hours * cph, spec.source or built, soil_txt, kg,
                              {n: np.linalg.norm(f, axis=1) for n, f in forces[a].items()}, bear, use)
    reps = {a: r.repetitions for a, r in acts.items()}
    spectra = {n: duty_spectrum({a: r.force[n] for a, r in acts.items()}, reps) for n in pins}
    details = {}
    for d, ds in duty.details.items():
        try:
            sig = {a: stress_history(forces[a][ds.pin], ds.stress_per_N) for a in acts}
            curve = sn_curve(ds.standard, ds.fat)
        except ValueError as e:
            raise launch.err(f"design.duty.details.{d}", str(e)) from None
        spec_s = duty_spectrum(sig, reps)
        details[d] = dict(pin=ds.pin, spectrum=spec_s, curve=curve, gamma_Ff=ds.gamma_Ff, gamma_Mf=ds.gamma_Mf,
                          damage=miner_damage(spec_s, curve, ds.gamma_Ff, ds.gamma_Mf), source=ds.source)
    missing = [n for n in pins if n not in duty.bushings]
    if missing:
        notes.append(f"- no bearing pressure for {', '.join(missing)}: give design.duty.bushings.<pin> "
                     "{diameter, length}")
    return DutyResult(acts, spectra, details, duty.allowable, dict(duty.bushings), fatigue.m,
                      fatigue.reference_cycles, duty.bins, notes)
