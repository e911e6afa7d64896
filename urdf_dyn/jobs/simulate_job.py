"""The launch job ``job: simulate``: integrate the robot under a controller and write the trajectory, the
joint torques, plots and a report.

Sections (besides ``robot`` and ``outputs``, ``urdf_dyn.launch.document``)::

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
    solver: {integrator: DOP853, rtol: 1.0e-8, atol: 1.0e-10, dt_out: 0.01, passive: true,
             t_stab: 0.1, loop_solver: lambda, residual_tol: 1.0e-3,   # these three: loops only
             limits: true}                # URDF <limit> lower/upper act as end stops (simulation.limits)
    outputs:
      trajectory: [trajectory.npz, trajectory.csv]
      torques_csv: joint_torques.csv
      plot: joint_torques.png
      report: torque_report.md
      motion_plot: motion.png            # joint positions and (closed loops) residuals over time
    motors:                              # optional: motor-side sizing (urdf_dyn.machines.motors)
      catalogue: {m1: {rotor_inertia: 2.0e-4, peak_torque: 1.5, max_speed: 120}}   # or a YAML path
      drives: {joint1: {motor: m1, gear_ratio: -62.6}}   # gear_ratio default: the <transmission>'s
"""
from __future__ import annotations

import csv
from pathlib import Path
from typing import Annotated, Literal, Optional, Union

import numpy as np
from pydantic import AfterValidator, Field

from urdf_dyn.io.files import atomic_path
from urdf_dyn.launch.document import (FiniteFloat, JointValues, LaunchDocument, OutputsSection, PositiveFloat,
                                      Section, build_model, joint_vector, output_dir)
from urdf_dyn.jobs.outputs import run_staged, write_animation
from urdf_dyn.launch.registry import Job
from urdf_dyn.machines.motors import MotorsSection

__all__ = ["SimulateDocument", "build_controller", "run_simulate", "JOB"]


class InitialState(Section):
    q: Optional[JointValues] = Field(None, description="[rad | m]; default: the trajectory's start")
    qd: Optional[JointValues] = Field(None, description="[rad/s | m/s]; default zeros")


class TrajectorySpec(Section):
    type: Literal["spline", "quintic"] = "spline"
    waypoints: list[dict[str, FiniteFloat]] = Field(min_length=2, description="joint values per waypoint")
    durations: list[PositiveFloat] = Field(description="[s] one per segment")


class Controller(Section):
    type: Literal["passive", "constant", "gravity_compensation", "computed_torque"] = "passive"
    tau: Optional[JointValues] = Field(None, description="constant: joint forces [N m | N]")
    kp: JointValues = Field(100.0, description="computed_torque: position gain [1/s²]")
    kd: JointValues = Field(20.0, description="computed_torque: velocity gain [1/s]")
    trajectory: Optional[TrajectorySpec] = None


def _integrator(name: str) -> str:
    from scipy.integrate._ivp.ivp import METHODS
    if name not in METHODS:
        raise ValueError(f"unknown scipy solve_ivp method (one of: {', '.join(METHODS)})")
    return name


class Solver(Section):
    integrator: Annotated[str, AfterValidator(_integrator)] = Field(
        "DOP853", description="scipy solve_ivp method (DOP853, RK45, Radau, LSODA, ...)")
    rtol: PositiveFloat = 1e-8
    atol: PositiveFloat = 1e-10
    dt_out: PositiveFloat = Field(0.01, description="output sample period [s]")
    max_step: Optional[PositiveFloat] = Field(None, description="[s]")
    passive: bool = Field(True, description="URDF damping, Gazebo springs and loop-joint damping act")
    t_stab: Optional[PositiveFloat] = Field(0.1, description="Baumgarte time constant [s] (loops)")
    loop_solver: Literal["lambda", "direct", "nullspace", "sparse", "gauss", "fast"] = Field(
        "lambda", description="closed-loop FD method (RBDA §8.5); lambda runs compiled; fast: its former name")
    residual_tol: Optional[PositiveFloat] = Field(1e-3, description="stop when a loop opens past this [m, rad]")
    limits: bool = Field(True, description="URDF <limit> lower/upper act as inelastic end stops (false: ignored)")


_TrajName = Annotated[str, Field(pattern=r"(?i)\.(npz|csv|mcap)$", description="a .npz, .csv or .mcap (ROS 2 bag) file name")]


class SimulateOutputs(OutputsSection):
    trajectory: Union[_TrajName, list[_TrajName]] = Field(["trajectory.npz", "trajectory.csv"],
                                                          description=".npz, .csv and/or .mcap")
    torques_csv: str = "joint_torques.csv"
    plot: str = "joint_torques.png"
    report: str = "torque_report.md"
    motion_plot: str = "motion.png"


class SimulateDocument(LaunchDocument):
    """``job: simulate``: the robot under a controller from an initial state."""
    initial_state: InitialState = Field(default_factory=InitialState)
    controller: Controller = Field(default_factory=Controller)
    duration: Optional[PositiveFloat] = Field(None, description="[s]; default: the trajectory's length, or 2 s")
    solver: Solver = Field(default_factory=Solver)
    outputs: SimulateOutputs = Field(default_factory=SimulateOutputs)
    motors: Optional[MotorsSection] = Field(None, description="motor-side sizing (urdf_dyn.machines.motors)")


def build_controller(launch, model):
    """Controller and its reference trajectory (or None) from the validated ``controller`` section."""
    from urdf_dyn.simulation.controllers import ComputedTorque, Constant, GravityCompensation, ZeroTorque
    from urdf_dyn.simulation.trajectories import QuinticTrajectory, SplineTrajectory
    c = launch.doc.controller
    if c.type == "passive":
        return ZeroTorque(model), None
    if c.type == "gravity_compensation":
        return GravityCompensation(model), None
    if c.type == "constant":
        return Constant(model, joint_vector(launch, model, c.tau, "controller.tau")), None
    t = c.trajectory
    if t is None:
        raise launch.err("controller.trajectory", "computed_torque needs a trajectory with waypoints")
    W = np.array([joint_vector(launch, model, w, f"controller.trajectory.waypoints[{i}]")
                  for i, w in enumerate(t.waypoints)])
    if len(t.durations) != len(W) - 1:
        raise launch.err("controller.trajectory.durations", f"need {len(W) - 1} durations (one per segment)")
    traj = SplineTrajectory(W, list(t.durations)) if t.type == "spline" else QuinticTrajectory(W[0], W[-1],
                                                                                                sum(t.durations))
    kp = joint_vector(launch, model, c.kp, "controller.kp")
    kd = joint_vector(launch, model, c.kd, "controller.kd")
    return ComputedTorque(model, traj, kp, kd), traj


def run_simulate(launch, out_dir=None, progress=None, echo=print):
    """Run a validated ``job: simulate`` launch: load, simulate, write outputs, print the torque table.
    Returns (Trajectory, {output: path}). Raises ScenarioError / ModelError for bad input; SimulationError
    after saving the partial trajectory. Outputs are staged and moved in at the end (``run_staged``)."""
    return run_staged(launch, out_dir, echo, lambda stage, say: _run_simulate(launch, stage, progress, say))


def _run_simulate(launch, out_dir, progress, echo):
    from urdf_dyn.simulation.simulate import MAX_SAMPLES
    doc = launch.doc
    t = doc.controller.trajectory
    span = doc.duration or (sum(t.durations) if t is not None and doc.controller.type == "computed_torque" else 2.0)
    if span / doc.solver.dt_out + 1 > MAX_SAMPLES:
        raise launch.err("solver.dt_out", f"{doc.solver.dt_out:g} s over {span:g} s makes {span / doc.solver.dt_out:.3g} "
                         f"samples, more than the limit of {MAX_SAMPLES} (~{span / doc.solver.dt_out * 8 * 5 * 1e-9:.3g} GB "
                         "per joint); choose a larger dt_out or a shorter duration")
    model = build_model(launch)
    controller, ref = build_controller(launch, model)
    from urdf_dyn.reports.report import format_table, plot_motion, plot_torques, torque_table
    from urdf_dyn.simulation.simulate import SimulateOptions, simulate
    from urdf_dyn.errors import SimulationError
    q0_default = ref(0.0)[0] if ref is not None else model.q_initial()
    q0 = joint_vector(launch, model, doc.initial_state.q, "initial_state.q", q0_default, positions=True)
    qd0 = joint_vector(launch, model, doc.initial_state.qd, "initial_state.qd")
    duration = doc.duration or (ref.t_end if ref is not None else 2.0)
    s = doc.solver
    kw = dict(integrator=s.integrator, rtol=s.rtol, atol=s.atol, dt_out=s.dt_out, passive=s.passive,
              t_stab=s.t_stab, loop_solver=s.loop_solver, residual_tol=s.residual_tol, limits=s.limits)
    if s.max_step is not None:
        kw["max_step"] = s.max_step
    o = doc.outputs
    outdir = output_dir(launch, out_dir)
    echo(f"robot {model.name!r} from {model.source}: {model.nv} joints, {model.total_mass:.3f} kg; "
         f"controller {type(controller).__name__}; {duration:g} s")
    loops_text = ""
    if model.has_constraints:
        from urdf_dyn.constraints.assembly import assemble
        from urdf_dyn.constraints.loops import mobility
        mb = mobility(model, assemble(model, q0))
        loops_text = (f"closed loops: {len(model.loops)} loop joints, mimic {len(model.mimic)}; mobility: n = {mb.n}, "
                      f"n^c = {mb.nc}, rank r = {mb.rank}, dof n - r = {mb.dof}")
        echo(loops_text)
    failure = None
    try:
        traj = simulate(model, q0, qd0, duration, controller=controller,
                        options=SimulateOptions(progress=progress, **kw))
    except SimulationError as e:
        failure, traj = e, e.trajectory
    written = {}
    for name in [o.trajectory] if isinstance(o.trajectory, str) else o.trajectory:
        written[name] = traj.save(outdir / name)
    if failure is not None:
        raise SimulationError(f"{failure} (saved to {', '.join(map(str, written.values()))})", traj)
    tcsv = outdir / o.torques_csv
    with atomic_path(tcsv) as tmp:
        with open(tmp, "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["t [s]"] + [f"tau[{j}] [{'N' if t == 'prismatic' else 'N m'}]"
                                    for j, t in zip(traj.joint_names, model.joint_types)])
            w.writerows(np.column_stack([traj.t, traj.tau]).tolist())
    written["torques_csv"] = str(tcsv)
    written["plot"] = plot_torques(model, traj, outdir / o.plot)
    written["motion_plot"] = plot_motion(model, traj, outdir / o.motion_plot)
    rows = torque_table(model, traj)
    table = format_table(rows)
    rep = outdir / o.report
    drift = float(np.max(np.abs(traj.energy - traj.energy[0])))
    summary = f"max |E(t) - E(0)| = {drift:.3g} J (not conserved when a controller, spring or damper acts)"
    if traj.residuals is not None:
        worst = {n: float(traj.residuals[:, i].max()) for i, n in enumerate(traj.loop_names)}
        summary += "\nmax loop residual per loop [m, rad]: " + ", ".join(f"{n} {v:.2e}" for n, v in worst.items())
    if traj.stop_active is not None:    # end stops (simulation.limits): where they acted
        hit = [j for j, a in zip(traj.joint_names, np.abs(traj.stop_active).any(axis=0)) if a]
        summary += f"\nend stops: {len(traj.meta.get('impacts', []))} impacts; active on {', '.join(hit) or 'none'}"
    text = (f"# {model.name}: joint torques\n\nlaunch: `{launch.path}`; {len(traj)} samples over "
            f"{traj.t[-1]:g} s; integrator {s.integrator} rtol={s.rtol:g}\n\n"
            + (loops_text + "\n\n" if loops_text else "") + f"{table}\n\n{summary}\n")
    from urdf_dyn.io.escape import md_document      # names from the robot file are text, never HTML
    with atomic_path(rep) as tmp:
        Path(tmp).write_text(md_document(text, str(rep), figures=False))
    written["report"] = str(rep)
    write_animation(launch, model, traj, outdir, written, echo)
    echo(table)
    echo(summary)
    over = [r.joint for r in rows if r.over]
    if over:
        echo(f"WARNING: over the URDF effort limit: {', '.join(over)}")
    if doc.motors is not None:  # motor-side sizing through the gears (machines/motors.py)
        from urdf_dyn.reports.motor_report import run_motor_report
        from urdf_dyn.errors import ScenarioError
        try:
            written.update(run_motor_report(model, traj, doc.motors, Path(launch.path).parent, outdir, echo))
        except ScenarioError as e:
            raise ScenarioError(f"{launch.path}: {e}") from None
    echo("wrote: " + ", ".join(str(v) for v in written.values()))
    return traj, written


JOB = Job("simulate", SimulateDocument, run_simulate, "integrate the robot under a controller")
