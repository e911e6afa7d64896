"""Launch files: one YAML file names the robot, the scenario, the solver and the outputs (ROS-launch style).

Format (every key optional except ``robot.file``; relative input paths are relative to the launch file,
relative output paths to the working directory)::

    robot:
      file: ../robots/puma560.urdf      # .urdf or .xacro
      package_dirs: {my_pkg: ../pkgs/my_pkg}   # or a list of folders holding packages
      xacro_args: {prefix: ""}
      gravity: [0, 0, -9.81]             # m/s², root-link frame
    initial_state:                       # joint-name mappings or lists in joint order; default zeros /
      q: {joint2: -0.5}                  # the trajectory's start
      qd: {}
    controller:
      type: computed_torque              # passive | constant | gravity_compensation | computed_torque
      tau: {crank: -0.5}                 # for constant: N m | N per joint
      kp: 400                            # 1/s², scalar or per-joint mapping
      kd: 40                             # 1/s
      trajectory:                        # for computed_torque
        type: spline                     # spline (through waypoints) | quintic (first -> last waypoint)
        waypoints: [{joint1: 0}, {joint1: 1.0, joint2: -0.5}]
        durations: [2.0]                 # s, one per segment
    duration: 4.0                        # s; default: the trajectory's length
    solver: {method: DOP853, rtol: 1.0e-8, atol: 1.0e-10, dt_out: 0.01, include_damping: true,
             t_stab: 0.1, closed_loop_method: fast, residual_tol: 1.0e-3}   # last three: loops only
    outputs:
      directory: urdf_dyn_out/puma560    # default urdf_dyn_out/<launch file stem>
      trajectory: [trajectory.npz, trajectory.csv]
      torques_csv: joint_torques.csv
      plot: joint_torques.png
      report: torque_report.md
      motion_plot: motion.png            # joint positions and (closed loops) residuals over time
      animation: run.gif                 # optional: .gif/.mp4 via the viewer (offscreen without a display)
      animation_fps: 30
      animation_size: 640x480

Sizing (``job: size``, or ``urdf-dyn size FILE``): instead of simulating, prescribe a motion of the
independent coordinates, map it to consistent states and compute the actuator forces (RBDA §8.12)::

    job: size
    motion:
      independent: [swing, boom_cyl, stick_cyl, bucket_cyl]   # n − r coordinates that fix the pose
      type: quintic                      # quintic (at rest at each waypoint) | spline
      waypoints: [{swing: 0, boom_cyl: -0.4}, ...]            # unnamed coordinates: initial configuration
      durations: [2.0, ...]              # s per segment
      # csv: recorded.csv                # alternative: columns t, <independent names>
      dt: 0.01                           # s between samples
    payload: {link: bucket, mass: 1800, com: [0.9, 0, 0.3], from: 3.5, until: 7.0}  # kg, m (link frame), s
    actuators:
      actuated: [swing, boom_cyl, ...]   # default: <transmission>s and actuated loops
      bounds: limits                     # optional: keep redundant actuators within <limit effort>
      weights: {boom_cyl: 1.0}           # optional: weighted minimum-norm for redundant actuation
      cylinders:                         # hydraulic pressures: bore, rod diameter [m], cylinders in parallel
        boom_cyl: {bore: 0.12, rod: 0.085, count: 2}
"""
from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import yaml

from ._io import atomic_path
from .errors import LaunchError

__all__ = ["Launch", "read_launch", "run_launch", "run_sizing"]

_SCHEMA = {
    "robot": {"file": None, "package_dirs": None, "xacro_args": None, "gravity": None},
    "initial_state": {"q": None, "qd": None},
    "controller": {"type": None, "kp": None, "kd": None, "tau": None,
                   "trajectory": {"type": None, "waypoints": None, "durations": None}},
    "duration": None,
    "solver": {"method": None, "rtol": None, "atol": None, "dt_out": None, "include_damping": None,
               "max_step": None, "t_stab": None, "closed_loop_method": None, "residual_tol": None},
    "outputs": {"directory": None, "trajectory": None, "torques_csv": None, "plot": None, "report": None,
                "motion_plot": None, "animation": None, "animation_fps": None, "animation_size": None},
    "gauss": None,   # free-form: checked by urdf_dyn.gauss (job: gauss)
    "job": None,
    "motion": {"independent": None, "type": None, "waypoints": None, "durations": None, "csv": None, "dt": None},
    "payload": {"link": None, "mass": None, "com": None, "inertia": None, "from": None, "until": None},
    "actuators": {"actuated": None, "weights": None, "bounds": None, "cylinders": None},
}


@dataclass
class Launch:
    """A parsed, checked launch file."""
    path: Path
    data: dict
    model: object = None
    outputs: dict = field(default_factory=dict)

    def err(self, key, msg):
        return LaunchError(f"{self.path}: {key}: {msg}")


def _check_keys(d, schema, where, path):
    if not isinstance(d, dict):
        raise LaunchError(f"{path}: {where or 'top level'}: expected a mapping, got {type(d).__name__}")
    for k, v in d.items():
        if k not in schema:
            raise LaunchError(f"{path}: {where + '.' if where else ''}{k}: unknown key (known: "
                              f"{', '.join(schema)})")
        if isinstance(schema[k], dict) and v is not None:
            _check_keys(v, schema[k], f"{where}.{k}" if where else k, path)


def read_launch(path) -> Launch:
    """Parse and check a launch file (YAML). Raises LaunchError naming the file and key."""
    path = Path(path)
    if not path.is_file():
        raise LaunchError(f"{path}: launch file not found")
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        raise LaunchError(f"{path}{where}: YAML error: {getattr(e, 'problem', None) or e}") from None
    if data is None:
        data = {}
    _check_keys(data, _SCHEMA, "", path)
    if not isinstance(data.get("robot"), dict) or "file" not in data["robot"]:
        raise LaunchError(f"{path}: robot.file: required (the URDF or xacro file to load)")
    return Launch(path, data)


def _joint_vector(launch, model, value, key, default=None):
    """A joint-space vector from a {joint: value} mapping or a list in joint order."""
    out = np.zeros(model.nv) if default is None else np.array(default, float)
    if value is None:
        return out
    if isinstance(value, dict):
        for j, v in value.items():
            if j not in model.joint_names:
                raise launch.err(key, f"unknown joint {j!r} (joints: {', '.join(model.joint_names)})")
            out[model.joint_index(j)] = _number(launch, v, f"{key}.{j}")
        return out
    if isinstance(value, (list, tuple)):
        if len(value) != model.nv:
            raise launch.err(key, f"expected {model.nv} values (one per joint), got {len(value)}")
        return np.array([_number(launch, v, f"{key}[{i}]") for i, v in enumerate(value)])
    return np.full(model.nv, _number(launch, value, key))


def _number(launch, v, key):
    try:
        x = float(v)
    except (TypeError, ValueError):
        raise launch.err(key, f"{v!r} is not a number") from None
    if not np.isfinite(x):
        raise launch.err(key, f"{v!r} is not finite")
    return x


def build_model(launch):
    """Load the robot named by the launch file."""
    from .urdf import load
    r = launch.data["robot"]
    base = launch.path.parent
    pkg = r.get("package_dirs")
    if isinstance(pkg, dict):
        pkg = {k: str((base / v).resolve()) for k, v in pkg.items()}
    elif isinstance(pkg, (list, str)):
        pkg = [str((base / p).resolve()) for p in ([pkg] if isinstance(pkg, str) else pkg)]
    g = r.get("gravity", [0.0, 0.0, -9.81])
    if not (isinstance(g, (list, tuple)) and len(g) == 3):
        raise launch.err("robot.gravity", f"expected 3 numbers, got {g!r}")
    g = [_number(launch, x, "robot.gravity") for x in g]
    return load(base / r["file"], package_dirs=pkg, xacro_args=r.get("xacro_args"), gravity=g)


def build_controller(launch, model):
    """Controller and its reference trajectory (or None) from the ``controller`` section."""
    from .controllers import ComputedTorque, Constant, GravityCompensation, Passive
    from .trajectories import QuinticTrajectory, SplineTrajectory
    c = launch.data.get("controller") or {}
    kind = c.get("type", "passive")
    if kind == "passive":
        return Passive(model), None
    if kind == "gravity_compensation":
        return GravityCompensation(model), None
    if kind == "constant":
        return Constant(model, _joint_vector(launch, model, c.get("tau"), "controller.tau")), None
    if kind != "computed_torque":
        raise launch.err("controller.type", f"unknown controller {kind!r} (passive, constant, "
                                            "gravity_compensation, computed_torque)")
    t = c.get("trajectory")
    if not t or not t.get("waypoints"):
        raise launch.err("controller.trajectory", "computed_torque needs a trajectory with waypoints")
    W = np.array([_joint_vector(launch, model, w, f"controller.trajectory.waypoints[{i}]")
                  for i, w in enumerate(t["waypoints"])])
    durations = t.get("durations")
    if not isinstance(durations, (list, tuple)) or len(durations) != len(W) - 1:
        raise launch.err("controller.trajectory.durations", f"need {len(W) - 1} durations (one per segment)")
    d = [_number(launch, x, "controller.trajectory.durations") for x in durations]
    if any(x <= 0 for x in d):
        raise launch.err("controller.trajectory.durations", "durations must be > 0 s")
    ttype = t.get("type", "spline")
    if ttype == "spline":
        traj = SplineTrajectory(W, d)
    elif ttype == "quintic":
        traj = QuinticTrajectory(W[0], W[-1], sum(d))
    else:
        raise launch.err("controller.trajectory.type", f"unknown trajectory type {ttype!r} (spline, quintic)")
    kp = _joint_vector(launch, model, c.get("kp", 100.0), "controller.kp")
    kd = _joint_vector(launch, model, c.get("kd", 20.0), "controller.kd")
    return ComputedTorque(model, traj, kp, kd), traj


def _animation(launch, model, traj, outdir, written, echo, models=None):
    """``outputs.animation`` (a .gif/.mp4/.png name): render the trajectory with the viewer, offscreen
    when there is no display. The core imports the viewer only here, lazily, and only when asked."""
    o = launch.data.get("outputs") or {}
    name = o.get("animation")
    if not name:
        return
    try:
        from urdf_dyn_viewer.export import render_trajectory
    except ImportError as e:
        echo(f"WARNING: outputs.animation skipped: the viewer is not installed ({e}); "
             "pip install -e '.[viewer]'")
        return
    size = str(o.get("animation_size", "640x480"))
    try:
        w, h = (int(x) for x in size.lower().split("x"))
    except ValueError:
        raise launch.err("outputs.animation_size", f"{size!r}: expected WIDTHxHEIGHT") from None
    fps = _number(launch, o.get("animation_fps", 30), "outputs.animation_fps")
    try:  # the results are already written: a machine without OpenGL loses only the animation
        written["animation"] = str(render_trajectory(model, traj, outdir / name, fps=fps, size=(w, h)))
    except Exception as e:  # noqa: BLE001 - GL/EGL/ffmpeg failures come in many types
        echo(f"WARNING: outputs.animation {name} not written: {type(e).__name__}: {e} (offscreen drawing needs "
             "EGL: apt-get install libegl1 libegl-mesa0 libgl1 libgl1-mesa-dri libglu1-mesa)")


def run_sizing(path, out_dir=None, progress=None, echo=print, launch=None):
    """Run the sizing job of a launch file: motion -> consistent states -> actuator forces -> report.
    Returns (SizingResult, outputs). Raises LaunchError / ModelError / StateError for bad input."""
    from .motion import consistent_motion, csv_motion, spline_motion
    from .sizing import Cylinder, size_motion, sizing_table, write_sizing

    launch = launch or read_launch(path)
    model = build_model(launch)
    mo = launch.data.get("motion")
    if not mo:
        raise launch.err("motion", "a sizing job needs a motion section (independent, waypoints, durations)")
    indep = mo.get("independent")
    if not isinstance(indep, list) or not indep:
        raise launch.err("motion.independent", "list the independent coordinates (joint names)")
    for j in indep:
        if j not in model.joint_names:
            raise launch.err("motion.independent", f"unknown joint {j!r} (joints: {', '.join(model.joint_names)})")
    dt = _number(launch, mo.get("dt", 0.01), "motion.dt")
    idx = [model.joint_index(j) for j in indep]
    if mo.get("csv"):
        motion = csv_motion(launch.path.parent / mo["csv"], indep, dt)
    else:
        if not mo.get("waypoints"):
            raise launch.err("motion.waypoints", "give waypoints (or csv)")
        q0 = model.q_initial()
        W = np.array([_joint_vector(launch, model, w, f"motion.waypoints[{i}]", q0)[idx]
                      for i, w in enumerate(mo["waypoints"])])
        d = mo.get("durations")
        if not isinstance(d, list) or len(d) != len(W) - 1:
            raise launch.err("motion.durations", f"need {len(W) - 1} durations (one per segment)")
        d = [_number(launch, x, "motion.durations") for x in d]
        if any(x <= 0 for x in d):
            raise launch.err("motion.durations", "durations must be > 0 s")
        kind = mo.get("type", "quintic")
        if kind not in ("quintic", "spline"):
            raise launch.err("motion.type", f"unknown motion type {kind!r} (quintic, spline)")
        motion = spline_motion(indep, W, d, dt, kind)
    pl = launch.data.get("payload")
    models = None
    loaded = model
    if pl:
        link = pl.get("link")
        if link not in model.links:
            raise launch.err("payload.link", f"unknown link {link!r}")
        mass = _number(launch, pl.get("mass"), "payload.mass")
        if mass < 0:
            raise launch.err("payload.mass", "must be >= 0 kg")
        com = pl.get("com", [0, 0, 0])
        if not isinstance(com, list) or len(com) != 3:
            raise launch.err("payload.com", "expected 3 numbers [m] in the link frame")
        loaded = model.with_payload(link, mass, [_number(launch, c, "payload.com") for c in com], pl.get("inertia"))
        t_from = _number(launch, pl.get("from", -np.inf), "payload.from") if "from" in pl else -np.inf
        t_until = _number(launch, pl.get("until", np.inf), "payload.until") if "until" in pl else np.inf
        models = [loaded if t_from <= t <= t_until else model for t in motion.t]
    a = launch.data.get("actuators") or {}
    actuated = a.get("actuated")
    cyl = {}
    for name, c in (a.get("cylinders") or {}).items():
        if not isinstance(c, dict) or "bore" not in c or "rod" not in c:
            raise launch.err(f"actuators.cylinders.{name}", "needs bore and rod diameters [m]")
        bore, rod = _number(launch, c["bore"], f"actuators.cylinders.{name}.bore"), _number(launch, c["rod"], f"actuators.cylinders.{name}.rod")
        if not 0 < rod < bore:
            raise launch.err(f"actuators.cylinders.{name}", "need 0 < rod < bore")
        cyl[name] = Cylinder(bore, rod, int(c.get("count", 1)))
    weights = a.get("weights")
    bounds = a.get("bounds")
    if isinstance(weights, dict):
        from .actuators import actuators_of
        names = [x.name for x in actuators_of(model, actuated)]
        weights = [float(weights.get(n, 1.0)) for n in names]
    o = launch.data.get("outputs") or {}
    outdir = Path(out_dir) if out_dir else Path(o.get("directory", f"urdf_dyn_out/{launch.path.name.split('.')[0]}"))
    echo(f"robot {model.name!r} from {model.source}: {model.nv} joints, {model.total_mass:.1f} kg"
         + (f"; payload {pl['mass']} kg on {pl['link']}" if pl else "") + f"; motion {motion.t[-1]:g} s, "
         f"{len(motion.t)} samples of {', '.join(indep)}")
    Q, QD, QDD = consistent_motion(model, motion, progress=progress)
    res = size_motion(model, motion.t, Q, QD, QDD, actuated=actuated, cylinders=cyl, weights=weights,
                      bounds=bounds, models=models, progress=progress)
    written = write_sizing(model, res, outdir)
    from .simulate import Trajectory
    traj = Trajectory(motion.t, Q, QD, QDD, np.zeros_like(Q), np.zeros(len(Q)), model.joint_names,
                      {"job": "size", "launch": str(launch.path)})
    written["motion_npz"] = traj.save(outdir / "motion.npz")
    _animation(launch, model, traj, outdir, written, echo, models=models)
    table = sizing_table(res)
    head = (f"actuation: {res.case}; rank G_u = {res.rank_Gu}, degrees of freedom {res.dof}; actuators: "
            f"{', '.join(res.names)}")
    rep = outdir / "sizing_report.md"
    with atomic_path(rep) as tmp:
        Path(tmp).write_text(f"# {model.name}: actuator sizing\n\nlaunch: `{launch.path}`\n\n{head}\n\n{table}\n")
    written["report"] = str(rep)
    echo(head)
    echo(table)
    if res.over_limit:
        echo(f"WARNING: over the effort limit: {', '.join(res.over_limit)}")
    if res.residual is not None and res.residual.size and np.abs(res.residual).max() > 1e-6:
        echo(f"WARNING: under-actuated: largest generalised force the actuators cannot produce "
             f"{np.abs(res.residual).max():.3g}")
    echo("wrote: " + ", ".join(str(v) for v in written.values()))
    return res, written


def run_launch(path, out_dir=None, progress=None, echo=print):
    """Run a launch file: load, simulate, write outputs, print the torque table. Returns (Trajectory, outputs).

    Raises LaunchError / ModelError for bad input; SimulationError after saving the partial trajectory."""
    from .errors import SimulationError
    from .report import format_table, plot_motion, plot_torques, torque_table
    from .simulate import simulate

    launch = read_launch(path)
    job = launch.data.get("job", "size" if launch.data.get("motion") else "simulate")
    if job == "size":
        return run_sizing(path, out_dir, progress, echo, launch)
    if job == "gauss":
        from .gauss import run_launch_job
        return run_launch_job(launch, out_dir=out_dir, progress=progress, echo=echo)
    if job != "simulate":
        raise launch.err("job", f"unknown job {job!r} (simulate, size, gauss)")
    model = build_model(launch)
    controller, ref = build_controller(launch, model)
    st = launch.data.get("initial_state") or {}
    q0_default = ref(0.0)[0] if ref is not None else model.q_initial()
    q0 = _joint_vector(launch, model, st.get("q"), "initial_state.q", q0_default)
    qd0 = _joint_vector(launch, model, st.get("qd"), "initial_state.qd")
    duration = launch.data.get("duration", ref.t_end if ref is not None else 2.0)
    duration = _number(launch, duration, "duration")
    if duration <= 0:
        raise launch.err("duration", "must be > 0 s")
    s = launch.data.get("solver") or {}
    kw = dict(method=s.get("method", "DOP853"), rtol=_number(launch, s.get("rtol", 1e-8), "solver.rtol"),
              atol=_number(launch, s.get("atol", 1e-10), "solver.atol"),
              dt_out=_number(launch, s.get("dt_out", 0.01), "solver.dt_out"),
              include_damping=bool(s.get("include_damping", True)))
    if "max_step" in s:
        kw["max_step"] = _number(launch, s["max_step"], "solver.max_step")
    if "t_stab" in s:
        kw["t_stab"] = None if s["t_stab"] is None else _number(launch, s["t_stab"], "solver.t_stab")
    if "residual_tol" in s:
        kw["residual_tol"] = _number(launch, s["residual_tol"], "solver.residual_tol")
    if "closed_loop_method" in s:
        from .closed_loop import METHODS
        if s["closed_loop_method"] not in METHODS + ("fast",):
            raise launch.err("solver.closed_loop_method", f"unknown method {s['closed_loop_method']!r} "
                                                          f"({', '.join(METHODS)})")
        kw["cl_method"] = s["closed_loop_method"]
    o = launch.data.get("outputs") or {}
    outdir = Path(out_dir) if out_dir else Path(o.get("directory", f"urdf_dyn_out/{launch.path.name.split('.')[0]}"))
    echo(f"robot {model.name!r} from {model.source}: {model.nv} joints, {model.total_mass:.3f} kg; "
         f"controller {type(controller).__name__}; {duration:g} s")
    loops_text = ""
    if model.has_constraints:
        from .closed_loop import assemble
        from .loops import mobility
        mb = mobility(model, assemble(model, q0))
        loops_text = (f"closed loops: {len(model.loops)} loop joints, mimic {len(model.mimic)}; mobility: n = {mb.n}, "
                      f"n^c = {mb.nc}, rank r = {mb.rank}, dof n - r = {mb.dof}")
        echo(loops_text)
    failure = None
    try:
        traj = simulate(model, q0, qd0, duration, controller=controller, progress=progress, **kw)
    except SimulationError as e:
        failure, traj = e, e.trajectory
    written = {}
    trajs = o.get("trajectory", ["trajectory.npz", "trajectory.csv"])
    for name in [trajs] if isinstance(trajs, str) else trajs:
        written[name] = traj.save(outdir / name)
    if failure is not None:
        raise SimulationError(f"{failure} (saved to {', '.join(map(str, written.values()))})", traj)
    tcsv = outdir / o.get("torques_csv", "joint_torques.csv")
    with atomic_path(tcsv) as tmp:
        with open(tmp, "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["t"] + [f"tau[{j}]" for j in traj.joint_names])
            w.writerows(np.column_stack([traj.t, traj.tau]).tolist())
    written["torques_csv"] = str(tcsv)
    written["plot"] = plot_torques(model, traj, outdir / o.get("plot", "joint_torques.png"))
    written["motion_plot"] = plot_motion(model, traj, outdir / o.get("motion_plot", "motion.png"))
    rows = torque_table(model, traj)
    table = format_table(rows)
    rep = outdir / o.get("report", "torque_report.md")
    drift = float(np.max(np.abs(traj.energy - traj.energy[0])))
    summary = f"max |E(t) - E(0)| = {drift:.3g} J (not conserved when a controller, spring or damper acts)"
    if traj.residuals is not None:
        worst = {n: float(traj.residuals[:, i].max()) for i, n in enumerate(traj.loop_names)}
        summary += "\nmax loop residual per loop [m, rad]: " + ", ".join(f"{n} {v:.2e}" for n, v in worst.items())
    text = (f"# {model.name}: joint torques\n\nlaunch: `{launch.path}`; {len(traj)} samples over "
            f"{traj.t[-1]:g} s; solver {kw['method']} rtol={kw['rtol']:g}\n\n"
            + (loops_text + "\n\n" if loops_text else "") + f"{table}\n\n{summary}\n")
    with atomic_path(rep) as tmp:
        Path(tmp).write_text(text)
    written["report"] = str(rep)
    _animation(launch, model, traj, outdir, written, echo)
    echo(table)
    echo(summary)
    over = [r.joint for r in rows if r.over]
    if over:
        echo(f"WARNING: over the URDF effort limit: {', '.join(over)}")
    echo("wrote: " + ", ".join(str(v) for v in written.values()))
    return traj, written
