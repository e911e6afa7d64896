"""The launch job ``job: size`` (also ``urdf-dyn size FILE``): prescribe a motion of the independent
coordinates, map it to consistent states and compute the actuator forces by closed-loop inverse dynamics
(RBDA §8.12) under external loads (soil, payload, wrenches), with pressures, power, pin loads, hydraulic
flow, and — for an excavator — ISO 6015 digging forces, the ISO 10567 lift chart and the tipping margin.

Sections (besides ``robot`` and ``outputs``)::

    job: size
    motion:
      independent: [swing, boom_cyl, stick_cyl, bucket_cyl]   # n − r coordinates that fix the pose
      type: quintic                      # quintic (at rest at each waypoint) | spline
      waypoints: [{swing: 0, boom_cyl: -0.4}, ...]            # unnamed coordinates: initial configuration
      durations: [2.0, ...]              # s per segment
      phases: [dig, curl, swing, dump, return]               # optional: one name per segment
      # csv: recorded.csv                # alternative: columns t, <independent names>
      dt: 0.01                           # s between samples
    frames:                              # named frames fixed to links (for loads and the soil)
      cutting_edge: {link: bucket, xyz: [1.47, 0, 0], rpy: [0, 0, 0]}   # m, rad
    loads:                               # external wrenches on links
      - {link: bucket, frame: world, point: [0, 0, 0], force: [0, 0, -1e4], moment: [0, 0, 0],
         during: dig, profile: [[0, 0], [0.5, 1]]}   # N, N m; frame: link (default) | world | <link> | <frame>
      # csv: wrench.csv                  # instead of force/moment: columns t, fx, fy, fz, nx, ny, nz (N, N m)
                                         # profile/csv times [s] count from the start of `during`
    soil:                                # soil cutting (urdf_dyn.machines.soil)
      preset: clay                       # loose_sand | dense_sand | clay | stiff_clay | gravel
      cohesion: 40e3                     # optional overrides: density (bank) [kg/m3], swell (>= 1),
                                         #   friction_angle, tool_friction_angle [deg], cohesion, adhesion [Pa]
      ground: {height: -1.25}            # m, level ground surface in the root frame
      edge: cutting_edge                 # a frame (frames:) on the bucket's cutting edge
      plate: [-1, 0, 0]                  # cutting plate (lip, teeth) from the edge, in the edge frame: the rake
      width: 1.3                         # m;  capacity: 1.19 (m3, heaped); edge_thickness: 0.02 (m)
      during: [dig]                      # phases in which the bucket cuts and fills
      payload: {com: [0.75, 0, 0.35], release: dump}   # the cut soil rides at com (edge link frame)
                                                       # and leaves continuously during `release`
    payload: {link: bucket, mass: 1800, com: [0.9, 0, 0.3], during: [curl, swing]}  # or from:/until: [s]
    actuators:
      actuated: [swing, boom_cyl, ...]   # default: <transmission>s and actuated loops
      bounds: limits                     # optional: keep redundant actuators within <limit effort>
      weights: {boom_cyl: 1.0}           # optional: weighted minimum-norm for redundant actuation
      cylinders:                         # hydraulic pressures: bore, rod diameter [m], cylinders in parallel
        boom_cyl: {bore: 0.12, rod: 0.085, count: 2}
    hydraulics:                          # urdf_dyn.machines.hydraulics
      relief: 35.0e6                     # Pa, main relief
      heavy_lift_relief: 38.0e6          # Pa, main relief in heavy-lift mode (optional)
      line_reliefs: {boom_cyl: {head: 41.0e6, rod: 38.0e6}}   # Pa, line (port) relief per cylinder side
      pump_flow: 7.15e-3                 # m3/s, all pumps
      supply: {boom_cyl: 7.15e-3}        # m3/s a valve section can receive (default pump_flow)
      motors: {swing: {torque: 7.4e4, relief: 2.68e7}}   # N m at the motor's relief [Pa]: displacement
                                                         # = torque / relief (or displacement: m3/rad)
    iso6015: {relief: 35.0e6, holding_relief: 35.0e6, lip: lip, tip: cutting_edge}  # ISO 6015 (needs cylinders)
                                         # include_weight: false; holding_relief may be {cylinder: Pa},
                                         # {cylinder: {head, rod}} or line (hydraulics.line_reliefs); relief
                                         # main | heavy_lift (hydraulics'); design.stall_relief the same
    lift_chart: {radii: [3.0, 4.5, 6.0], heights: [3.0, 0.0], lift_pressure: 38.0e6}   # ISO 10567
    stability: {track: {roller_length: 3.65, gauge: 2.38}}   # m; the one tipping polygon (lift chart, ZMP,
                                         # ISO 6015); or footprint: [[x, y], ...]
    working_range: {tip: cutting_edge}   # ISO 7135 working ranges of the tooth tip
    reference:                           # published figures beside ours (printed only when given)
      iso6015.bucket_digging_force_N: {value: 140.5e3, source: "data sheet"}
      working_range.max_digging_depth_m: {value: 6.73, source: "data sheet"}
    design: {pins: {boom_foot: boom}, pumps: {engine_power: 121e3}, cycle: {}}   # pins, buckling, pumps
                                         # against the engine, shortest cycle (urdf_dyn.jobs.sizing_design)
    outputs: {plots: true}               # false: tables and reports only, no PNG (a sweep's cases, by default)
"""
from __future__ import annotations

import numpy as np

from urdf_dyn.jobs.sizing_checks import machine_checks, served_from_disk, stability_check
from urdf_dyn.jobs.sizing_schema import SizeDocument
from urdf_dyn.launch.document import (RecordingTask, build_model, joint_vector, output_dir, run_staged,
                                      write_animation)
from urdf_dyn.launch.registry import Job

__all__ = ["SizeDocument", "NoPlots", "run_sizing", "JOB"]


def _check_actuators(launch, model):
    """actuators.actuated names actuators that exist (at least one); actuators.cylinders names actuators."""
    from urdf_dyn.constraints.inverse import actuators_of
    from urdf_dyn.launch.document import unknown_name
    a = launch.doc.actuators
    known = list(model.joint_names) + [lp.name for lp in model.loops]
    for n in a.actuated or ():
        if n not in known:
            raise launch.err("actuators.actuated", unknown_name("actuator", n, known))
    try:
        names = [x.name for x in actuators_of(model, a.actuated)]
    except KeyError as e:
        raise launch.err("actuators.actuated", e.args[0]) from None
    if not names:
        raise launch.err("actuators.actuated", f"{model.name} has no actuators to size: name at least one joint "
                         "or actuated loop joint (or give the URDF <transmission>s)")
    for n in a.cylinders:
        if n not in names:
            raise launch.err(f"actuators.cylinders.{n}", unknown_name("actuator", n, names))
    if isinstance(a.weights, list) and len(a.weights) != len(names):
        raise launch.err("actuators.weights", f"{len(a.weights)} weights for {len(names)} actuators ({', '.join(names)})")


def _check_motion_size(launch):
    """Refuse, before any work, a motion whose sample count is over the limit, or a csv that is missing."""
    from urdf_dyn.simulation.simulate import MAX_SAMPLES
    mo = launch.doc.motion
    if mo.durations and sum(mo.durations) / mo.dt + 1 > MAX_SAMPLES:  # before any work (issue 15)
        raise launch.err("motion.dt", f"{mo.dt:g} s over {sum(mo.durations):g} s makes {sum(mo.durations) / mo.dt:.3g} "
                         f"samples, more than the limit of {MAX_SAMPLES}; choose a larger dt")
    if mo.csv and not (launch.path.parent / mo.csv).is_file():
        raise launch.err("motion.csv", f"{launch.path.parent / mo.csv}: file not found (relative to the launch file)")


def _motion(launch, model):
    from urdf_dyn.machines.loads import phase_times
    from urdf_dyn.simulation.trajectories import csv_motion, spline_motion
    from urdf_dyn.launch.document import unknown_name
    mo = launch.doc.motion
    indep = mo.independent
    for j in indep:
        if j not in model.joint_names:
            raise launch.err("motion.independent", unknown_name("joint", j, model.joint_names))
    _check_actuators(launch, model)
    idx = [model.joint_index(j) for j in indep]
    if mo.csv:
        if mo.phases:
            raise launch.err("motion.phases", "phases name waypoint segments; a csv motion has none")
        return csv_motion(launch.path.parent / mo.csv, indep, mo.dt), {}
    if not mo.waypoints:
        raise launch.err("motion.waypoints", "give waypoints (or csv)")
    q0 = model.q_initial()
    for i, w in enumerate(mo.waypoints):  # a value for a dependent joint would be dropped without a word
        for j in (w if isinstance(w, dict) else ()):
            if j not in indep and j in model.joint_names:
                raise launch.err(f"motion.waypoints[{i}].{j}", f"{j!r} is not one of motion.independent "
                                 f"({', '.join(indep)}): its value follows from them")
    W = np.array([joint_vector(launch, model, w, f"motion.waypoints[{i}]", q0)[idx]
                  for i, w in enumerate(mo.waypoints)])
    if not mo.durations or len(mo.durations) != len(W) - 1:
        raise launch.err("motion.durations", f"need {len(W) - 1} durations (one per segment)")
    windows = {}
    if mo.phases is not None:
        if len(mo.phases) != len(mo.durations):
            raise launch.err("motion.phases", f"need {len(mo.durations)} names (one per segment), got {len(mo.phases)}")
        windows = phase_times(mo.phases, mo.durations)
    return spline_motion(indep, W, list(mo.durations), mo.dt, mo.type), windows


def _mask(launch, key, t, windows, during):
    from urdf_dyn.machines.loads import phase_mask
    if during is None:
        return np.ones(len(t), bool)
    for n in [during] if isinstance(during, str) else during:
        if n not in windows:
            known = ", ".join(windows) if windows else "none: add motion.phases"
            raise launch.err(key, f"unknown phase {n!r} (phases: {known})")
    return phase_mask(t, windows, during)


def _phase_start(t, mask):
    return float(t[np.argmax(mask)]) if mask.any() else 0.0


def _soil(launch, model, frames, t, Q, QD, QDD, windows):
    """Soil force on the edge link and the payload wrench of the cut soil; returns ({link: (N, 6)}, info)."""
    from urdf_dyn.machines.loads import frame_poses, payload_wrench, point_wrench
    from urdf_dyn.machines.soil import soil_cutting, soil_preset
    sp = launch.doc.soil
    over = {k: getattr(sp, k) for k in ("density", "swell", "friction_angle", "tool_friction_angle", "cohesion",
                                        "adhesion") if getattr(sp, k) is not None}
    for k in ("friction_angle", "tool_friction_angle"):
        if k in over:
            over[k] = np.radians(over[k])
    try:
        soil = soil_preset(sp.preset, **over)            # the preset name is a Literal of the schema
    except ValueError as e:
        raise launch.err("soil", str(e)) from None
    edge = frames.get(sp.edge)
    link = edge.link if edge is not None else sp.edge
    plate = np.asarray(sp.plate, float)
    if np.linalg.norm(plate) < 1e-9:
        raise launch.err("soil.plate", "must be a nonzero direction")
    active = _mask(launch, "soil.during", t, windows, sp.during)
    T = frame_poses(model, Q, sp.edge, frames)
    pos = T[:, :3, 3]
    plate_w = np.einsum("nij,j->ni", T[:, :3, :3], plate / np.linalg.norm(plate))
    cut = soil_cutting(t, pos, plate_w, soil, sp.ground.height, sp.width, sp.capacity, active,
                       edge_thickness=sp.edge_thickness)
    if not cut.reached:
        lo = pos[active, 2].min() if active.any() else np.nan
        raise launch.err("soil.ground.height", f"the cutting edge never goes below the ground at z = "
                         f"{sp.ground.height:g} m during {sp.during} (lowest edge height {lo:.3g} m)")
    f_ext = {link: point_wrench(model, Q, link, cut.force, pos, frame="world")}
    mass = cut.payload
    if sp.payload is not None:
        if sp.payload.release is not None:
            rel = _mask(launch, "soil.payload.release", t, windows, sp.payload.release)
            a, b = t[rel].min(), t[rel].max()
            x = np.clip((t - a) / max(b - a, 1e-9), 0.0, 1.0)
            mass = mass * (1.0 - x * x * (3 - 2 * x))         # smoothstep: leaves continuously
        w = payload_wrench(model, Q, QD, QDD, link, sp.payload.com, mass)
        f_ext[link] = f_ext[link] + w
    info = dict(soil=soil, cut=cut, mass=mass, link=link, active=active, edge=pos)
    return f_ext, info


def _loads(launch, model, frames, t, Q, windows):
    from urdf_dyn.machines.loads import point_wrench, profile
    out = {}
    for i, ld in enumerate(launch.doc.loads):
        key = f"loads[{i}]"
        frame = None if ld.frame == "link" else ld.frame
        if frame not in (None, "world") and frame not in frames and frame not in model.links:
            raise launch.err(f"{key}.frame", f"unknown frame {frame!r}: use link, world, a link or a frames: name")
        mask = _mask(launch, f"{key}.during", t, windows, ld.during)
        t0 = _phase_start(t, mask) if ld.during is not None else 0.0
        f = np.broadcast_to(np.asarray(ld.force, float), (len(t), 3)).copy()
        n = np.broadcast_to(np.asarray(ld.moment, float), (len(t), 3)).copy()
        if ld.csv:
            data = _wrench_csv(launch, f"{key}.csv", launch.path.parent / ld.csv)
            f, n = profile(t - t0, data[:, 0], data[:, 1:4]), profile(t - t0, data[:, 0], data[:, 4:7])
        if ld.profile:
            k = np.array(ld.profile, float)
            if np.any(np.diff(k[:, 0]) <= 0):
                raise launch.err(f"{key}.profile", "times must increase")
            s = profile(t - t0, k[:, 0], k[:, 1])
            f, n = f * s[:, None], n * s[:, None]
        f[~mask], n[~mask] = 0.0, 0.0
        w = point_wrench(model, Q, ld.link, f, ld.point, n, frame, frames)
        out[ld.link] = out[ld.link] + w if ld.link in out else w
    return out


def _wrench_csv(launch, key, path):
    import csv
    try:
        with open(path, newline="") as fh:
            rows = [r for r in csv.reader(fh) if r]
        data = np.array([[float(x) for x in r] for r in rows[1:]])
    except (OSError, ValueError) as e:
        raise launch.err(key, f"cannot read {path}: {e}") from None
    if data.ndim != 2 or data.shape[1] != 7 or len(data) < 2 or np.any(np.diff(data[:, 0]) <= 0):
        raise launch.err(key, f"{path}: need a header and >= 2 rows t, fx, fy, fz, nx, ny, nz with increasing t")
    return data


class NoPlots:
    """The plot sink of ``outputs.plots: false``: the interface of ``reports.plotting.PlotWorker`` that draws
    nothing; ``submit`` returns None (the output is then left out of the job's list of files)."""
    parallel = False
    draws = False

    def submit(self, path, fn, *args):
        """Draw nothing; returns None."""
        return None

    def wait(self):
        """Nothing to wait for."""

    def close(self):
        """Nothing to end."""


def run_sizing(launch, out_dir=None, progress=None, echo=print):
    """Run a validated ``job: size`` launch: motion -> consistent states -> loads -> actuator forces ->
    hydraulics, machine checks -> report. Returns (SizingResult, {output: path}). Raises LaunchError /
    ModelError / StateError for bad input. The plots are drawn by a worker process concurrently with the
    rest of the job (``plotting.PlotWorker``, started once the input has passed its cheap checks; in this
    process where that cannot run)."""
    workers = []

    def run(stage, say):  # outputs staged, moved in at the end (launch.document.run_staged)
        try:
            return _run_sizing(launch, stage, progress, say, workers)
        finally:
            for w in workers:
                w.close()
    return run_staged(launch, out_dir, echo, run)


def _run_sizing(launch, out_dir, progress, echo, workers):
    from urdf_dyn.machines.hydraulics import Motor, hydraulics, intervals
    from urdf_dyn.machines.loads import Frame, add_wrenches, payload_wrench
    from urdf_dyn.constraints.motion import consistent_motion
    from urdf_dyn.reports.report import sizing_plot, write_sizing_report
    from urdf_dyn.simulation.simulate import Trajectory
    from urdf_dyn.machines.sizing import Cylinder, size_motion, sizing_table, write_sizing

    doc = launch.doc
    _check_motion_size(launch)
    model = build_model(launch)
    motion, windows = _motion(launch, model)
    t = motion.t
    frames = {}
    for name, fr in doc.frames.items():
        if fr.link not in model.links:
            raise launch.err(f"frames.{name}.link", f"unknown link {fr.link!r} (links: {', '.join(model.links)})")
        frames[name] = Frame(fr.link, tuple(fr.xyz), tuple(fr.rpy))
    pl = doc.payload
    if pl and pl.link not in model.links:
        raise launch.err("payload.link", f"unknown link {pl.link!r} (links: {', '.join(model.links)})")
    a = doc.actuators
    cyl = {}
    for name, c in a.cylinders.items():
        if not c.rod < c.bore:
            raise launch.err(f"actuators.cylinders.{name}", "need 0 < rod < bore")
        cyl[name] = Cylinder(c.bore, c.rod, c.count)
    weights = a.weights
    if isinstance(weights, dict):
        from urdf_dyn.constraints.inverse import actuators_of
        names = [x.name for x in actuators_of(model, a.actuated)]
        weights = [float(weights.get(n, 1.0)) for n in names]
    outdir = output_dir(launch, out_dir)
    echo(f"robot {model.name!r} from {model.source}: {model.nv} joints, {model.total_mass:.1f} kg"
         + (f"; payload {pl.mass:g} kg on {pl.link}" if pl else "")
         + (f"; soil {doc.soil.preset}" if doc.soil else "") + f"; motion {t[-1]:g} s, "
         f"{len(t)} samples of {', '.join(motion.names)}")
    _early_checks(launch, model, frames, t, windows)
    if doc.outputs.plots:
        from urdf_dyn.reports.plotting import PlotWorker
        plots = PlotWorker(preload=[f"urdf_dyn.machines.{m}" for m in ("sizing", "soil", "hydraulics", "iso6015",
                                                                             "lift_chart", "stability", "working_range")])
    else:                          # outputs.plots: false (a sweep's cases): tables and reports only
        plots = NoPlots()
    workers.append(plots)
    plotted = {}
    served_from_disk(clear=True)
    machine = machine_checks(launch, model, cyl, frames, plots, outdir, plotted)
    Q, QD, QDD = consistent_motion(model, motion, progress=progress)
    f_ext, soil_info, models = {}, None, None
    if doc.soil is not None:
        f_soil, soil_info = _soil(launch, model, frames, t, Q, QD, QDD, windows)
        f_ext = add_wrenches(f_ext, f_soil)
        plotted["soil_png"] = sizing_plot(plots, "soil_png", outdir, soil_info, t, windows)
    f_ext = add_wrenches(f_ext, _loads(launch, model, frames, t, Q, windows))
    if pl:
        on = np.ones(len(t), bool)
        if pl.during is not None:
            on = _mask(launch, "payload.during", t, windows, pl.during)
        if pl.from_ is not None:
            on &= t >= pl.from_
        if pl.until is not None:
            on &= t <= pl.until
        if pl.inertia is None:     # a point mass: its wrench m (g − a_c) (equal to the rigid payload)
            f_ext = add_wrenches(f_ext, {pl.link: payload_wrench(model, Q, QD, QDD, pl.link, pl.com, pl.mass * on)})
        else:
            loaded = model.with_payload(pl.link, pl.mass, list(pl.com), pl.inertia)
            models = [loaded if o else model for o in on]
    res = size_motion(model, t, Q, QD, QDD, actuated=a.actuated, cylinders=cyl, weights=weights,
                      bounds=a.bounds, models=models, progress=progress, f_ext=f_ext or None)
    shade = []
    if soil_info is not None:
        m = soil_info["cut"].in_soil
        shade = [(t0, t1, f"in {soil_info['soil'].name}") for t0, t1 in intervals(t, m)]
    written = write_sizing(model, res, outdir, phases=windows, shade=shade, plots=plots)
    hyd = None
    if doc.hydraulics is not None:
        h = doc.hydraulics
        motors = {}
        for k, v in h.motors.items():          # one of displacement / torque: checked in _early_checks
            p = v.relief if v.relief is not None else h.relief
            motors[k] = Motor(v.displacement, v.relief) if v.torque is None else Motor.from_torque(v.torque, p)
        try:
            hyd = hydraulics(res, cyl, motors, relief=h.relief, pump_flow=h.pump_flow, supply=dict(h.supply), model=model)
        except KeyError as e:
            raise launch.err("hydraulics", e.args[0]) from None
        plotted["pump_flow_png"] = sizing_plot(plots, "pump_flow_png", outdir, hyd, t, windows)
    machine.update(stability_check(launch, model, t, Q, QD, QDD, f_ext, echo, plots, outdir, plotted))
    if doc.design is not None:       # pins, buckling, pumps against the engine, shortest cycle (issue 26)
        from urdf_dyn.jobs.sizing_design import run_design
        machine["design"] = run_design(launch, model, t, Q, QD, QDD, f_ext, res, hyd, cyl)
        from urdf_dyn.jobs.sizing_stall import run_stall    # stall envelopes, the pins' design loads (issue 26)
        stall = run_stall(launch, model, cyl, frames, machine["design"].pins.specs if machine["design"].pins else None)
        if stall is not None:
            machine["stall"] = stall
    reused = served_from_disk()
    if reused:
        from urdf_dyn.jobs.disk_cache import cache_dir
        echo(f"reused from an earlier run of this machine (same robot, sections and library): {', '.join(reused)} "
             f"(kept in {cache_dir()}; --no-cache recomputes)")
    traj = Trajectory(t, Q, QD, QDD, np.zeros_like(Q), np.zeros(len(Q)), model.joint_names,
                      {"job": "size", "launch": str(launch.path)})
    written["motion_npz"] = traj.save(outdir / "motion.npz")
    table = sizing_table(res)
    head = (f"actuation: {res.case}; rank G_u = {res.rank_Gu}, degrees of freedom {res.dof}; actuators: "
            f"{', '.join(res.names)}")
    from urdf_dyn.simulation.limits import ends_reached   # issue 29: the prescribed motion against the strokes
    ends, ends_line = ends_reached(model, t, Q)
    head += "\n\n" + ends_line
    written.update(write_sizing_report(model, launch.path, res, outdir, head, table, windows=windows, soil=soil_info,
                                       hydraulics=hyd, machine=machine, f_ext=f_ext, plots=plots,
                                       plotted=plotted))
    import json
    from pathlib import Path
    from urdf_dyn.io.files import atomic_path
    js = json.loads(Path(written["report_json"]).read_text())
    js["strokes"] = {"end_reached": ends}
    with atomic_path(written["report_json"]) as tmp:
        Path(tmp).write_text(json.dumps(js, indent=1, allow_nan=False) + "\n")
    # view.json: what the viewers (urdf-dyn view RUN_DIR [--web]) need beside the CSVs to draw the bench,
    # the soil force at the cutting edge and the payload at its centroid (no scenario needed to read them)
    sp, edge = doc.soil, frames.get(doc.soil.edge) if doc.soil is not None else None
    items = (tuple(model.package_dirs) + ((), ()))[0]
    view = {"robot": str(Path(model.source).resolve()), "package_dirs": [f"{k}={v}" for k, v in items],
            "loop_tol": 1e-3}
    if sp is not None:
        view.update(bench_height=sp.ground.height, edge={"link": edge.link if edge else sp.edge, "xyz":
                    list(edge.xyz) if edge else [0, 0, 0], "rpy": list(edge.rpy) if edge else [0, 0, 0]})
        if sp.payload is not None:
            view["payload"] = {"link": view["edge"]["link"], "com": list(sp.payload.com)}
    (outdir / "view.json").write_text(json.dumps(view, indent=1))
    written["view_json"] = str(outdir / "view.json")
    # the recording (Python building viser's messages) is written by a forked process (else a thread) while
    # the GIF is drawn here (OpenGL stays on the main thread, as a windowing system may require): each keeps
    # its own warning line, and their paths are listed in the same order as before
    gif = {}
    recording = RecordingTask(launch, model, outdir, echo)
    write_animation(launch, model, traj, outdir, gif, echo)
    written.update(gif)
    recording.finish(written)
    plots.wait()
    echo(head)
    echo(table)
    for line in _summary_lines(res, soil_info, hyd, machine):
        echo(line)
    if res.over_limit:
        echo(f"WARNING: over the effort limit: {', '.join(res.over_limit)}")
    for w in (hyd.warnings() if hyd is not None else ()):
        echo(f"WARNING: hydraulics: {w}")
    for w in (machine["design"].warnings() if "design" in machine else ()):
        echo(f"WARNING: design: {w}")
    if res.residual is not None and res.residual.size and np.abs(res.residual).max() > 1e-6:
        echo(f"WARNING: under-actuated: largest generalised force the actuators cannot produce "
             f"{np.abs(res.residual).max():.3g}")
    written = {k: v for k, v in written.items() if v is not None}     # plots not drawn (NoPlots)
    echo("wrote: " + ", ".join(str(v) for v in written.values()))
    return res, written


def _early_checks(launch, model, frames, t, windows):
    """Name errors before the (slow) motion is computed."""
    doc = launch.doc
    sp = doc.soil
    if sp is not None:                 # soil.preset is checked by the schema (a Literal of SOILS)
        if sp.edge not in frames and sp.edge not in model.links:
            raise launch.err("soil.edge", f"unknown frame {sp.edge!r} (frames: {', '.join([*frames, *model.links])})")
        _mask(launch, "soil.during", t, windows, sp.during)
        if sp.payload is not None and sp.payload.release is not None:
            _mask(launch, "soil.payload.release", t, windows, sp.payload.release)
    for i, ld in enumerate(doc.loads):
        if ld.link not in model.links:
            raise launch.err(f"loads[{i}].link", f"unknown link {ld.link!r} (links: {', '.join(model.links)})")
        _mask(launch, f"loads[{i}].during", t, windows, ld.during)
    if doc.payload is not None and doc.payload.during is not None:
        _mask(launch, "payload.during", t, windows, doc.payload.during)
    for k, v in (doc.hydraulics.motors.items() if doc.hydraulics is not None else ()):
        if (v.displacement is None) == (v.torque is None):
            raise launch.err(f"hydraulics.motors.{k}", "give displacement [m3/rad] or torque [N m] (with its relief), "
                             "not both or neither")
    if doc.hydraulics is not None:  # before any output: hydraulics() would refuse them only at the end
        from urdf_dyn.constraints.inverse import actuators_of
        from urdf_dyn.launch.document import unknown_name
        names = [x.name for x in actuators_of(model, doc.actuators.actuated)]
        for key in ("supply", "motors"):
            for k in getattr(doc.hydraulics, key):
                if k not in names:
                    raise launch.err(f"hydraulics.{key}.{k}", unknown_name("actuator", k, names))


def _summary_lines(res, soil_info, hyd, machine):
    lines = []
    if soil_info is not None:
        c = soil_info["cut"]
        i = int(np.argmax(c.magnitude))
        lines.append(f"soil {soil_info['soil'].name}: max depth {c.depth.max():.2f} m, peak soil force "
                     f"{c.magnitude[i] / 1e3:.1f} kN at {np.degrees(_angle(c.force[i], -c.velocity[i])):.0f} deg from "
                     f"the edge's backward travel (rake {np.degrees(c.rake[i]):.0f} deg), {c.volume.max():.2f} m3 "
                     f"bank cut, payload {soil_info['mass'].max():.0f} kg, berm {c.berm.max():.2f} m3")
    if hyd is not None:
        lines.append(f"hydraulics: peak pump demand {hyd.peak_flow * 6e4:.0f} L/min of {hyd.pump_flow * 6e4:.0f}; "
                     f"positive work per cycle {hyd.positive_work / 1e3:.0f} kJ")
    if "iso6015" in machine:
        d = machine["iso6015"]
        ref = {k: f" (published {d.reference[k] / 1e3:.1f})" if d.reference.get(k) else "" for k in ("bucket_N", "arm_N")}
        lines.append(f"ISO 6015: bucket digging force {d.bucket_N / 1e3:.1f} kN{ref['bucket_N']}, limited by "
                     f"{d.limited_by['bucket']}; arm {d.arm_N / 1e3:.1f} kN{ref['arm_N']}, limited by {d.limited_by['arm']}")
    if "working_range" in machine:
        w = machine["working_range"]
        lines.append(f"working range: depth {w.max_digging_depth_m:.2f} m, reach at ground {w.max_reach_ground_m:.2f} m, "
                     f"cutting height {w.max_cutting_height_m:.2f} m, loading height {w.max_loading_height_m:.2f} m")
    if "stability" in machine:
        s = machine["stability"]
        lines.append(f"stability: minimum ZMP margin {s.min_margin:.3f} m at t = {s.t_min:.2f} s")
    return lines


def _angle(a, b) -> float:
    """Angle [rad] between the vectors a and b (3,)."""
    return float(np.arctan2(np.linalg.norm(np.cross(a, b)), np.dot(a, b)))


JOB = Job("size", SizeDocument, run_sizing, "actuator sizing along a prescribed motion")
