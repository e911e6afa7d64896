"""The scenario job ``job: size`` (also ``urdf-dyn size FILE``): prescribe a motion of the independent
coordinates, map it to consistent states and compute the actuator forces by closed-loop inverse dynamics
(RBDA §8.12) under external loads (soil, payload, wrenches), with pressures, power, pin loads, and what the
machine kind adds — for an excavator hydraulic flow, ISO 6015 digging forces, the ISO 10567 lift chart and the
tipping margin. The job reads::

    run_staged(render(compute(SizingPlan.from_scenario(scenario))))

(``jobs.sizing_plan``, ``jobs.sizing_run``, ``reports.sizing_render``, ``jobs.outputs``; the machine kinds are
``jobs.machine_kind``'s plug-ins).

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
                                         # main | heavy_lift (hydraulics'); design.stall_relief the same;
                                         # arm_bucket: max_moment (SAE J1179 3.3.1) | maximum | bucket_force
    lift_chart: {radii: [3.0, 4.5, 6.0], heights: [3.0, 0.0], lift_pressure: 38.0e6}   # ISO 10567
    stability: {track: {roller_length: 3.65, gauge: 2.38}}   # m; the one tipping polygon (lift chart, ZMP,
                                         # ISO 6015); or footprint: [[x, y], ...]
    working_range: {tip: cutting_edge}   # ISO 7135 working ranges of the tooth tip
    reference:                           # published figures beside ours (printed only when given)
      iso6015.bucket_digging_force_N: {value: 140.5e3, source: "data sheet"}
      working_range.max_digging_depth_m: {value: 6.73, source: "data sheet"}
    design: {pins: {boom_foot: boom}, pumps: {engine_power: 121e3}, cycle: {}}   # pins, buckling, pumps
                                         # against the engine, shortest cycle (urdf_dyn.jobs.sizing_design);
                                         # with iso6015: the stall envelopes, the case matrix and the FE
                                         # export (free_body_loads.csv, .bdf; urdf_dyn.jobs.sizing_stall)
    outputs: {plots: true}               # false: tables and reports only, no PNG (a sweep's cases, by default)
"""
from __future__ import annotations

import numpy as np

from urdf_dyn.jobs.beside import Beside
from urdf_dyn.jobs.geometry_cache import GeometryCache
from urdf_dyn.jobs.outputs import run_staged, viewer_tasks
from urdf_dyn.jobs.sizing_plan import SizingPlan
from urdf_dyn.jobs.sizing_run import compute
from urdf_dyn.jobs.sizing_schema import SizeDocument
from urdf_dyn.launch.registry import Job
from urdf_dyn.reports.plotting import PLOT_PROCESSES_ALONE, NoPlots, PlotWorker
from urdf_dyn.reports.manifest import OUTPUTS
from urdf_dyn.reports.sizing_render import render, viewer_inputs

__all__ = ["SizeDocument", "NoPlots", "run_sizing", "JOB"]


def run_sizing(scenario, out_dir=None, progress=None, echo=print, cache=None):
    """Run a validated ``job: size`` scenario: plan -> compute -> render -> staged outputs (the animation
    and the recording beside them). Returns (SizingResult, {output: path}). ``cache``: the
    ``GeometryCache`` of the geometry-only checks (a sweep worker's; default a new one with the disk tier as
    ``URDF_DYN_CACHE`` says). Raises ScenarioError / ModelError / StateError for bad input. The plots are
    drawn by a worker process concurrently with the rest of the job (``plotting.PlotWorker``; in this
    process where that cannot run)."""
    workers = []

    def run(stage, say):  # outputs staged, moved in at the end (jobs.outputs.run_staged)
        try:
            return _run_sizing(scenario, stage, progress, say, workers, cache)
        finally:
            for w in workers:
                w.close()
    return run_staged(scenario, out_dir, echo, run)


def _run_sizing(scenario, outdir, progress, echo, workers, cache):
    doc = scenario.doc
    o = doc.outputs
    if o.plots:                    # forked before the plan, whose imports the worker would inherit, so that it
        from urdf_dyn.jobs.kinds import kind_of   # imports matplotlib on the core the plan leaves idle
        plots = PlotWorker(preload=[f"urdf_dyn.machines.{m}" for m in kind_of(scenario).plot_modules],
                           processes=None if o.animation or o.recording else PLOT_PROCESSES_ALONE)
    else:                          # outputs.plots: false (a sweep's cases): tables and reports only
        plots = NoPlots()
    workers.append(plots)
    plan = SizingPlan.from_scenario(scenario)
    cache = cache if cache is not None else GeometryCache()
    beside = Beside()               # the longest checks the cache lacks, started now in forked processes while
    workers.append(beside)          # this one computes the motion (before the viewer's processes: those pipes
    if beside.allowed:              # are not inherited); compute() takes them from the cache
        plan.kind.ahead(plan, cache, beside.start)
    model, t, pl = plan.model, plan.t, doc.payload
    echo(f"robot {model.name!r} from {model.source}: {model.nv} joints, {model.total_mass:.1f} kg"
         + (f"; payload {pl.mass:g} kg on {pl.link}" if pl else "")
         + (f"; soil {doc.soil.preset}" if getattr(doc, "soil", None) else "") + f"; motion {t[-1]:g} s, "
         f"{len(t)} samples of {', '.join(plan.motion.names)}")
    recording, animation = viewer_tasks(scenario, model, outdir, echo)  # their processes import the viewer
    workers += [recording, animation]          # while we compute (forked after the plan: they inherit its imports)
    early = set()

    def sized(so_far):
        # the motion, loads and actuator forces are known: the files the GIF and the recording read are
        # written now and their processes draw while the checks are computed here (in a first run of the
        # main job, 5-10 CPU-s of checks on one core beside them)
        early.update(viewer_inputs(so_far, outdir))
        recording.start()
        animation.start(so_far.trajectory())
    run = compute(plan, cache, progress=progress, echo=echo, sized=sized)
    if run.provenance:
        from urdf_dyn.jobs.disk_cache import cache_dir
        echo(f"reused from an earlier run of this machine (same robot, sections and library): "
             f"{', '.join(run.provenance)} (kept in {cache_dir()}; --no-cache recomputes)")
    # a geometry-only check's plot is a function of its result alone: one kept with a cached result is
    # copied into place instead of drawn; one drawn here is kept beside its result (after plots.wait())
    files = {c: outdir / OUTPUTS[k].file for c, k in plan.kind.report.check_plots.items()} if plots.draws else {}
    copied = cache.copy_kept_plots(files)
    written = dict(render(run, outdir, plots, present={plan.kind.report.check_plots[c] for c in copied} | early))
    # the recording (Python building viser's messages) and the GIF (OpenGL on its process's main thread) are
    # written by forked processes, started by ``sized`` above, while the checks are computed and the plots
    # drawn (where no process can be forked, the recording by a thread and the GIF at start, in ``sized``)
    plots.wait()       # the caller draws too only while a core is idle (its GIF and recording processes done)
    animation.finish(written)
    recording.finish(written)
    cache.keep_plots({c: f for c, f in files.items() if c not in copied})
    _say(run, echo)
    echo("wrote: " + ", ".join(str(v) for v in written.values()))
    return run.actuation, written


def _say(run, echo):
    """The job's printed summary: the head, the actuator table, the kind's lines and the warnings."""
    from urdf_dyn.machines.sizing import sizing_table
    res = run.actuation
    echo(run.head())
    echo(sizing_table(res))
    for line in run.kind.summary(run):
        echo(line)
    if res.over_limit:
        echo(f"WARNING: over the effort limit: {', '.join(res.over_limit)}")
    for w in run.kind.warnings(run):
        echo(f"WARNING: {w}")
    if res.residual is not None and res.residual.size and np.abs(res.residual).max() > 1e-6:
        echo(f"WARNING: under-actuated: largest generalised force the actuators cannot produce "
             f"{np.abs(res.residual).max():.3g}")


JOB = Job("size", SizeDocument, run_sizing, "actuator sizing along a prescribed motion")
