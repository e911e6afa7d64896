"""The ``urdf-dyn`` command. Every error from bad input is one line on stderr and exit status 2; every
warning is one line ``warning: FILE:LINE: <element>: message`` (``--debug`` shows tracebacks and Python's
full warning format)."""
from __future__ import annotations

import argparse
import json
import os
import sys
import warnings

import numpy as np

from urdf_dyn.cli.vectors import vector as _vector
from urdf_dyn.errors import SimulationError, UrdfDynError

__all__ = ["load_from_args", "cmd_info", "cmd_id", "cmd_fd", "cmd_simulate", "cmd_launch", "cmd_size", "cmd_view",
           "cmd_excavator", "main"]


def _model_args(p):
    p.add_argument("file", help="URDF or xacro file")
    p.add_argument("--package-dir", action="append", default=[], metavar="DIR|PKG=DIR",
                   help="folder holding ROS packages, or PKG=DIR for one package (repeatable)")
    p.add_argument("--xacro-arg", action="append", default=[], metavar="NAME:=VALUE", help="xacro argument")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.add_argument("--trust-xacro", action="store_true",
                   help="evaluate xacro ${...}/$(eval) as Python: RUNS CODE from the file (default: arithmetic only)")
    p.add_argument("--floating-base", action="store_true",
                   help="give the root link a 6-dof floating joint 'root_joint' (Pinocchio's free-flyer); then q has "
                        "nq = nv + 1 entries: x y z qx qy qz qw, then the joints")


def load_from_args(args):
    """The Model named by parsed CLI arguments ``file``, ``package_dir`` (DIR or PKG=DIR entries) and
    ``xacro_arg`` (NAME:=VALUE entries). Raises UrdfDynError for malformed entries, ModelError for the file."""
    from urdf_dyn.loading import load
    pk_map = {}
    pk_dirs = []
    for d in args.package_dir:
        if "=" in d:
            k, v = d.split("=", 1)
            pk_map[k] = v
        else:
            pk_dirs.append(d)
    if pk_map and pk_dirs:
        raise UrdfDynError("--package-dir: use either PKG=DIR entries or plain folders, not both")
    xargs = {}
    for a in args.xacro_arg:
        if ":=" not in a:
            raise UrdfDynError(f"--xacro-arg {a!r}: expected NAME:=VALUE")
        k, v = a.split(":=", 1)
        xargs[k] = v
    return load(getattr(args, "file", None) or args.robot, package_dirs=pk_map or pk_dirs or None, xacro_args=xargs,
                trust_xacro=bool(getattr(args, "trust_xacro", False)),
                floating_base=bool(getattr(args, "floating_base", False)), check_loops=getattr(args, "check_loops", True))


def _units(model, kind):
    rot = {"q": "rad", "qd": "rad/s", "qdd": "rad/s^2", "tau": "N m"}
    lin = {"q": "m", "qd": "m/s", "qdd": "m/s^2", "tau": "N"}
    if kind == "q":
        return list(model.q_units)
    return [lin[kind] if linear else rot[kind] for linear in model.is_linear]


def _print_named(model, kind, values, as_json, extra=None):
    units = _units(model, kind)
    if as_json:
        out = {"joints": list(model.joint_names), kind: [float(v) for v in values], "units": units}
        out.update(extra or {})
        print(json.dumps(out, indent=2))
        return
    if not model.nv:
        print(f"{model.name} has no movable joints: nothing to compute")
        return
    w = max(len(j) for j in model.joint_names)
    for j, v, u in zip(model.joint_names, values, units):
        print(f"{j:<{w}}  {kind} = {v: .9g} {u}")


def cmd_info(args):
    from urdf_dyn.cli.closure import actuated_text, closure_summary
    m = load_from_args(args)
    if args.json:
        print(json.dumps({
            "name": m.name, "source": m.source, "nq": m.nq, "nv": m.nv, "total_mass": m.total_mass,
            "gravity": list(m.gravity), "links": {n: m.link_masses.get(n, 0.0) for n in m.links},
            "joints": [{"name": j, "type": t, "parent_body": m.body_names[m.parent[i + 1]],
                        "child": m.body_names[i + 1], "lower": _f(m.lower[i]), "upper": _f(m.upper[i]),
                        "velocity": _f(m.velocity_limit[i]), "effort": _f(m.effort_limit[i])}
                       for i, (j, t) in enumerate(zip(m.joint_names, m.joint_types))],
            "mimic": [vars(x) for x in m.mimic], "transmissions": [t.name for t in m.transmissions],
            "loops": [{"name": lp.name, "type": lp.type, "predecessor": lp.predecessor,
                       "successor": lp.successor, "constraints": lp.nc, "actuated": lp.actuated}
                      for lp in m.loops]}, indent=2))
        return 0
    print(f"robot {m.name!r} from {m.source}")
    print(f"  links: {len(m.links)} ({m.NB} moving bodies after merging fixed joints); total mass "
          f"{m.total_mass:.6g} kg; gravity {[float(g) for g in m.gravity]} m/s^2")
    print(f"  dof: nq = {m.nq}, nv = {m.nv}; actuated: {actuated_text(m)}")
    w = max([len(j) for j in m.joint_names] + [5])
    print(f"  {'joint':<{w}}  {'type':<10} {'parent -> child':<40} {'lower':>9} {'upper':>9} {'vel':>8} {'effort':>9}")
    for i, (j, t) in enumerate(zip(m.joint_names, m.joint_types)):
        pc = f"{m.body_names[m.parent[i + 1]]} -> {m.body_names[i + 1]}"
        print(f"  {j:<{w}}  {t:<10} {pc:<40} {m.lower[i]:>9.4g} {m.upper[i]:>9.4g} "
              f"{m.velocity_limit[i]:>8.4g} {m.effort_limit[i]:>9.4g}")
    print("  link masses [kg]: " + ", ".join(f"{n} {mass:.4g}" for n, mass in m.link_masses.items()))
    if m.mimic:
        print("  mimic: " + ", ".join(f"{x.joint} = {x.multiplier:g}*{x.leader} + {x.offset:g}" for x in m.mimic))
    print(f"  loops: {len(m.loops)}")
    for lp in m.loops:
        print(f"    {lp.name}: {lp.type} ({lp.nc} constraints) {lp.predecessor} -> {lp.successor}"
              + (" [actuated]" if lp.actuated else ""))
    if m.has_constraints:
        print(closure_summary(m))
    return 0


def _f(x):
    return float(x) if np.isfinite(x) else None


def _closed_loop_state(m, q, qd, qdd=None):
    """The state a closed-loop command evaluates: q assembled (the nearest closure, holding the independent
    coordinates), and q̇ = G ẏ, q̈ = G ÿ + g from the values given for the independent coordinates y
    (RBDA §8.8: the URDF's independent="true" joints, else those complete pivoting picks). Returns
    (q, q̇, q̈ or None, a note naming y and how far q moved)."""
    from urdf_dyn.constraints.assembly import assemble
    from urdf_dyn.constraints.explicit import explicit_constraint
    zero = np.zeros(m.nv)
    try:
        ec = explicit_constraint(m, m.q_initial(), zero, independent=m.independent or None)
    except ValueError:
        ec = explicit_constraint(m, m.q_initial(), zero)
    y = list(ec.independent)
    qa = assemble(m, q, hold=y)
    ec = explicit_constraint(m, qa, zero, independent=y)
    idx = [m.joint_index(j) for j in y]
    qda = ec.G @ qd[idx]
    note = (f"closed loops ({len(m.loops)} loop joints, {len(m.mimic)} mimic): independent coordinates "
            f"{', '.join(y)}; q assembled holding them (max change {np.abs(qa - q).max():.3g}), q̇ = G ẏ"
            + (", q̈ = G ÿ + g" if qdd is not None else ""))
    if qdd is None:
        return qa, qda, None, note
    ec = explicit_constraint(m, qa, qda, independent=y)
    return qa, qda, ec.G @ qdd[idx] + ec.g, note


def _print_loop_answer(m, note, kind, values, names, units, loop_forces, as_json, extra=None):
    if as_json:
        out = {"closed_loop": True, "note": note, "names": list(names), kind: [float(v) for v in values],
               "units": list(units), "loop_forces": {k: v if isinstance(v, str) else [float(x) for x in v]
                                                         for k, v in loop_forces.items()}}
        out.update(extra or {})
        print(json.dumps(out, indent=2))
        return
    print(note + "; --tree for the spanning tree alone")
    w = max([len(j) for j in names] + [1])
    for j, v, u in zip(names, values, units):
        print(f"{j:<{w}}  {kind} = {v: .9g} {u}")
    for k, f in loop_forces.items():
        if isinstance(f, str):  # undetermined: why
            print(f"loop {k}: {f}")
        else:
            print(f"loop {k}: wrench [n; f] on the successor in Fp = [{', '.join(f'{x:.6g}' for x in np.asarray(f))}] (N m, N)")


def cmd_id(args):
    from urdf_dyn.algorithms.dynamics import inverse_dynamics
    m = load_from_args(args)
    q, qd, qdd = (_vector(m, getattr(args, k), k) for k in ("q", "qd", "qdd"))
    if m.has_constraints and not args.tree:
        from urdf_dyn.constraints.inverse import actuator_forces
        q, qd, qdd, note = _closed_loop_state(m, q, qd, qdd)
        af = actuator_forces(m, q, qd, qdd)
        from urdf_dyn.cli.closure import undetermined
        _print_loop_answer(m, note + f"; {af.case}", "u", af.u, af.names, af.units, undetermined(m, q, af.loop_forces),
                           args.json,
                           {"q": q.tolist(), "qd": qd.tolist(), "qdd": qdd.tolist()})
        return 0
    _print_named(m, "tau", inverse_dynamics(m, q, qd, qdd), args.json)
    return 0


def _singular(m, q):
    """The error for a singular joint-space inertia: names the joints that move no mass."""
    from urdf_dyn.algorithms.dynamics import mass_matrix
    d = np.diag(mass_matrix(m, q))
    still = [j for j, x in zip(m.joint_names, d) if not x > 1e-12 * max(d.max(initial=0.0), 1.0)]
    return UrdfDynError(f"{m.source}: fd: the joint-space inertia H is singular"
                        + (f": joint(s) {', '.join(still)} move no mass or inertia (massless links)" if still else "")
                        + "; their acceleration is undefined: give those links an <inertial>, or use urdf-dyn id")


def cmd_fd(args):
    from urdf_dyn.algorithms.dynamics import forward_dynamics
    m = load_from_args(args)
    q, qd, tau = (_vector(m, getattr(args, k), k) for k in ("q", "qd", "tau"))
    if m.has_constraints and not args.tree:
        from urdf_dyn.constraints.forward import constrained_forward_dynamics
        q, qd, _, note = _closed_loop_state(m, q, qd)
        try:
            res = constrained_forward_dynamics(m, q, qd, tau)
        except np.linalg.LinAlgError:
            raise _singular(m, q) from None
        _print_loop_answer(m, note, "qdd", res.qdd, m.joint_names, _units(m, "qdd"), res.loop_forces, args.json,
                           {"q": q.tolist(), "qd": qd.tolist()})
        return 0
    try:
        qdd = forward_dynamics(m, q, qd, tau, algorithm=args.algorithm)
    except np.linalg.LinAlgError:
        qdd = None
    if qdd is None or not np.all(np.isfinite(qdd)):
        raise _singular(m, q)
    _print_named(m, "qdd", qdd, args.json)
    return 0


def cmd_simulate(args):
    from urdf_dyn.simulation.controllers import GravityCompensation, ZeroTorque
    from urdf_dyn.reports.report import format_table, torque_table
    from urdf_dyn.simulation.simulate import SimulateOptions, simulate
    m = load_from_args(args)
    ctrl = {"passive": ZeroTorque, "gravity": GravityCompensation}[args.controller](m)
    q0, qd0 = _vector(m, args.q0, "q0"), _vector(m, args.qd0, "qd0")
    try:
        traj = simulate(m, q0, qd0, args.duration, controller=ctrl,
                        options=SimulateOptions(dt_out=args.dt, integrator=args.integrator, rtol=args.rtol,
                                                atol=args.atol))
    except SimulationError as e:
        if e.trajectory is not None and args.out:
            e.trajectory.save(args.out)
            raise SimulationError(f"{e} (saved to {args.out})", e.trajectory) from None
        raise
    drift = float(np.max(np.abs(traj.energy - traj.energy[0])))
    if args.out:
        traj.save(args.out)
    if args.json:
        print(json.dumps({"samples": len(traj), "duration": float(traj.t[-1]), "energy_drift_J": drift,
                          "q_final": traj.q[-1].tolist(), "out": args.out}, indent=2))
        return 0
    print(f"simulated {traj.t[-1]:g} s, {len(traj)} samples; max |E - E0| = {drift:.3g} J")
    print(format_table(torque_table(m, traj)))
    if args.out:
        print(f"wrote {args.out}")
    return 0


def cmd_launch(args):
    from urdf_dyn.launch import launch_schema, run_scenario
    if args.schema is not None:
        print(json.dumps(launch_schema(args.schema or None), indent=2))
        return 0
    if not args.launch_file:
        raise UrdfDynError("run: give a scenario file (or --schema)")
    run_scenario(args.launch_file, out_dir=args.out_dir)
    return 0


_VECTOR_OPTIONS = {"--q", "--qd", "--qdd", "--tau", "--q0", "--qd0"}


def _join_negative_vectors(argv):
    """argparse takes '-0.5,1' for an option; join such a value to its vector option ('--tau=-0.5,1')."""
    out, i = [], 0
    while i < len(argv):
        a, nxt = argv[i], (argv[i + 1] if i + 1 < len(argv) else "")
        joined = a in _VECTOR_OPTIONS and nxt[:1] == "-" and (nxt[1:2].isdigit() or nxt[1:2] == ".")
        out.append(f"{a}={nxt}" if joined else a)
        i += 2 if joined else 1
    return out


def _no_cache_option(p):
    p.add_argument("--no-cache", action="store_true", help="recompute the geometry-only machine checks (ISO 6015, "
                   "lift chart, working ranges, stall envelopes), not reuse an earlier run's (URDF_DYN_CACHE=off)")


def cmd_size(args):
    from urdf_dyn.launch import run_scenario
    run_scenario(args.launch_file, out_dir=args.out_dir, job="size")
    return 0


def cmd_sweep(args):
    from urdf_dyn.jobs.sweep_job import run_sweep_file
    run_sweep_file(args.launch_file, out_dir=args.out_dir, scheduler=args.scheduler, workers=args.workers,
                   trust_scheduler=args.trust_scheduler)
    return 0


def cmd_view(args):
    """Lazy: the core never imports the viewer package, only this command does, when it runs."""
    try:
        from urdf_dyn_viewer.cli import run_view
    except ImportError as e:
        raise UrdfDynError(f"the viewer is not installed ({e}); install it with: pip install -e '.[viewer]'") from None
    return run_view(args)


def cmd_excavator(args):
    """``urdf-dyn excavator PINS.yaml -o OUT.urdf``: the URDF of an excavator from its pin table;
    with ``--calibrate SCENARIO``: the pin table calibrated to the scenario's ``reference`` figures, written
    to OUT.yaml (``urdf_dyn.jobs.calibration_job``)."""
    if args.calibrate is not None:
        from urdf_dyn.jobs.calibration_job import calibrate_from_scenario
        return calibrate_from_scenario(args.pins, args.calibrate, args.output, args.parameters,
                                       max_evaluations=args.max_evaluations)
    from urdf_dyn.machines.excavator_builder import write_excavator_urdf
    text = write_excavator_urdf(args.pins, args.output)
    print(f"wrote {args.output}: {text.count('<link ')} links, {text.count('<joint ')} joints, "
          f"{text.count('<loop ')} loops, from {args.pins}")
    return 0


def _one_line_warning(message, category, filename, lineno, file=None, line=None):
    """``warning: <message>`` on stderr, one line: our warnings already name the file, line and element of
    the input at fault; the source line of urdf_dyn that raised them is of no use to a user."""
    from urdf_dyn.errors import ModelWarning
    text = " ".join(str(message).split())
    if not issubclass(category, (ModelWarning, UserWarning)) or category is UserWarning:
        text = f"{category.__name__}: {text}"
    print(f"warning: {text}", file=sys.stderr if file is None else file)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="urdf-dyn", description="Rigid-body dynamics of robots from URDF (RBDA).")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    p.add_argument("--trust-xacro", dest="trust_xacro_all", action="store_true",
                   help="for every command, launch files included: evaluate xacro ${...}/$(eval) as Python, which "
                        "RUNS CODE from the file (default: a restricted evaluator, arithmetic and properties only)")
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("info", help="links, joints, dof, masses, limits, loops")
    _model_args(s)
    s.set_defaults(func=cmd_info)
    __import__("urdf_dyn.cli.closure", fromlist=["*"]).add_check_parser(sub, _model_args, load_from_args)
    s = sub.add_parser("id", help="inverse dynamics: tau = ID(q, qd, qdd)")
    _model_args(s)
    for k in ("q", "qd", "qdd"):
        s.add_argument(f"--{k}", help="values in joint order ('0,0.5,...') or 'joint=value,...'; default 0")
    s.add_argument("--tree", action="store_true", help="closed-loop robots: the spanning tree's τ, loops ignored "
                   "(default: the actuator forces of RBDA eq. 8.63 at the assembled state, q̇ and q̈ from the "
                   "values of the independent coordinates)")
    s.set_defaults(func=cmd_id)
    s = sub.add_parser("fd", help="forward dynamics: qdd = FD(q, qd, tau)")
    _model_args(s)
    for k in ("q", "qd", "tau"):
        s.add_argument(f"--{k}", help="values in joint order or 'joint=value,...'; default 0")
    s.add_argument("--algorithm", choices=["aba", "crba"], default="aba", help="tree forward dynamics: ABA or CRBA + LtL")
    s.add_argument("--tree", action="store_true", help="closed-loop robots: the spanning tree's q̈, loops ignored "
                   "(default: closed-loop forward dynamics at the assembled state, RBDA §8.5)")
    s.set_defaults(func=cmd_fd)
    s = sub.add_parser("simulate", help="simulate the tree (passive or gravity-compensated)")
    _model_args(s)
    s.add_argument("--q0")
    s.add_argument("--qd0")
    s.add_argument("--duration", type=float, default=2.0, help="[s]")
    s.add_argument("--dt", type=float, default=0.01, help="output period [s]")
    s.add_argument("--controller", choices=["passive", "gravity"], default="passive")
    s.add_argument("--integrator", default="DOP853", help="scipy solve_ivp method")
    s.add_argument("--rtol", type=float, default=1e-8)
    s.add_argument("--atol", type=float, default=1e-10)
    s.add_argument("--out", help="trajectory file (.npz or .csv)")
    s.set_defaults(func=cmd_simulate)
    s = sub.add_parser("run", aliases=["launch"], help="run a scenario file (YAML: *.scenario.yaml; `launch` is "
                       "the former name of this command)")
    s.add_argument("launch_file", nargs="?", metavar="SCENARIO")
    s.add_argument("--schema", nargs="?", const="", metavar="JOB",
                   help="print the JSON Schema of scenario files (of one job, or of all) and exit")
    s.add_argument("--out-dir", help="override outputs.directory")
    _no_cache_option(s)
    s.set_defaults(func=cmd_launch)
    s = sub.add_parser("view", help="play a robot, a trajectory or a sizing run (window, browser with --web, or "
                       "offscreen to PNG/GIF/MP4)")
    s.add_argument("robot", help="URDF or xacro file (or a sizing job's output folder: its robot and run)")
    s.add_argument("run_dir", nargs="?", metavar="RUN_DIR", help="a sizing job's output folder (motion.npz, forces, "
                   "soil.csv, view.json) to play with its loads")
    s.add_argument("--web", action="store_true", help="serve the viewer in a browser (viser) and print its URL")
    s.add_argument("--port", type=int, default=8080, help="--web: port (the next free one when it is in use)")
    s.add_argument("--host", default="127.0.0.1", help="--web: address to listen on (0.0.0.0: every interface)")
    s.add_argument("--package-dir", action="append", default=[], metavar="DIR|PKG=DIR")
    s.add_argument("--xacro-arg", action="append", default=[], metavar="NAME:=VALUE")
    s.add_argument("--trust-xacro", action="store_true", help="evaluate xacro expressions as Python (RUNS CODE)")
    s.add_argument("--traj", help="trajectory .npz, .csv (urdf-dyn simulate/launch output) or .mcap (ROS 2 bag)")
    s.add_argument("--q", help="a single pose: values in joint order or 'joint=value,...'; assembled through the loops "
                   "holding the joints named (else those declared independent)")
    s.add_argument("--no-assemble", action="store_true", help="--q: draw the pose as given, loops open")
    s.add_argument("--out", help="write instead of opening a window: .png (one frame), .gif or .mp4")
    s.add_argument("--fps", type=float, default=30.0, help="frames per second of the animation")
    s.add_argument("--speed", type=float, default=1.0, help="playback speed (1 = real time)")
    s.add_argument("--size", default="640x480", help="WIDTHxHEIGHT in pixels")
    s.add_argument("--show", default="", help="comma-separated joint names whose values the overlay shows")
    s.add_argument("--no-loops", action="store_true", help="hide the loop-closure frames and residual segments")
    s.add_argument("--no-balancers", action="store_true", help="hide the balancers (the line between each one's "
                   "pins, labelled with its force)")
    s.add_argument("--forces", action="store_true", help="draw actuator and pin-force arrows from the start")
    s.add_argument("--loop-tol", type=float, default=1e-3,
                   help="loop residual [m, rad] at which a loop segment turns fully red")
    s.set_defaults(func=cmd_view)
    s = sub.add_parser("size", help="actuator sizing: forces, power, pressures, pin loads along a motion")
    s.add_argument("launch_file")
    s.add_argument("--out-dir", help="override outputs.directory")
    _no_cache_option(s)
    s.set_defaults(func=cmd_size)
    s = sub.add_parser("sweep", help="load-case sweep on Dask: a table per case, the envelope, plots")
    s.add_argument("launch_file", help="launch file with a sweep: section")
    s.add_argument("--scheduler", metavar="tcp://HOST:PORT", help="an existing Dask scheduler (default: a LocalCluster)")
    s.add_argument("--workers", type=int, metavar="N", help="LocalCluster processes (default: one per core; 0: no Dask)")
    s.add_argument("--trust-scheduler", action="store_true", help="use the file's sweep.scheduler address (Dask "
                   "unpickles what a scheduler sends: a hostile address RUNS CODE; default: refused)")
    s.add_argument("--out-dir", help="override outputs.directory")
    _no_cache_option(s)
    s.set_defaults(func=cmd_sweep)
    s = sub.add_parser("excavator", help="build an excavator URDF with its loops from a side-view pin table (YAML)")
    s.add_argument("pins", metavar="PINS.yaml", help="pin table (urdf_dyn.machines.pin_table)")
    s.add_argument("-o", "--output", required=True, metavar="OUT.urdf",
                   help="URDF file to write (with --calibrate: the calibrated pin table, YAML)")
    s.add_argument("--calibrate", metavar="SCENARIO", help="calibrate the table's estimated geometry to the "
                   "scenario's reference figures (working ranges, ISO 6015) and write the table to -o")
    s.add_argument("--parameters", metavar="NAME=LOW:HIGH,...", help="calibration parameters and their bounds "
                   "[m] (urdf_dyn.machines.calibration; default: DEFAULT_PARAMETERS)")
    s.add_argument("--max-evaluations", type=int, default=200, metavar="N", help="optimiser budget (default 200)")
    s.set_defaults(func=cmd_excavator)
    # -- urdf-dyn export: the model for another simulator ----------------------------------------
    s = sub.add_parser("export", help="write the model for MuJoCo: --mjcf out.xml (loops as equalities)")
    _model_args(s)
    s.add_argument("--mjcf", required=True, metavar="OUT.xml", help="MJCF file to write (needs the [mujoco] extra)")
    s.add_argument("--solref", default="0.0002,1", help="equalities' solref: timeconst [s],dampratio")

    def cmd_export(args):
        from urdf_dyn.constraints.assembly import assemble
        from urdf_dyn.io.mjcf_export import check_soft, export_mjcf
        try:
            solref = tuple(float(x) for x in args.solref.split(","))
            check_soft(solref, (0.9999, 0.9999, 0.001), 0.001)
        except ValueError as e:
            raise UrdfDynError(f"--solref {args.solref!r}: expected two numbers 'timeconst,dampratio' ({e})") from None
        model = load_from_args(args)
        q = assemble(model, model.q_initial()) if model.loops else model.q_initial()
        mj = export_mjcf(model, args.mjcf, q_ref=q, solref=solref)
        print(f"wrote {args.mjcf}: {mj.nbody - 1} bodies, {mj.njnt} joints, {mj.neq} equalities, "
              f"{mj.nu} actuators (MuJoCo qpos = urdf_dyn q)")
        return 0
    s.set_defaults(func=cmd_export)
    __import__("urdf_dyn.cli.loops_cmd", fromlist=["*"]).add_loops_parser(sub, _model_args, load_from_args)
    args = p.parse_args(_join_negative_vectors(sys.argv[1:] if argv is None else list(argv)))
    if not args.debug:
        warnings.showwarning = _one_line_warning
    if args.trust_xacro_all:
        args.trust_xacro = True
    if getattr(args, "no_cache", False):    # run, size, sweep: read by jobs.disk_cache, here and in the workers
        os.environ["URDF_DYN_CACHE"] = "off"
    bar = __import__("urdf_dyn.cli.compiling", fromlist=["*"]).show_compiles()   # a bar while numba compiles (> 1 s)
    if args.cmd in ("run", "launch") and getattr(args, "launch_file", None):    # a cold kernel cache: compiled
        __import__("urdf_dyn.cli.compile_ahead", fromlist=["*"]).start(bar)    # ahead in worker processes
    try:
        from urdf_dyn.collector import raised
        from urdf_dyn.io.xacro_safe import trusting
        with trusting(bool(getattr(args, "trust_xacro", False))), raised():   # the collector's thresholds
            return args.func(args)
    except BrokenPipeError:  # output piped into head & co.
        return 0
    except (UrdfDynError, OSError, ValueError, KeyError, np.linalg.LinAlgError, Warning) as e:
        if args.debug:      # a Warning here is one a -W error / PYTHONWARNINGS=error filter made an error
            raise
        msg = e.args[0] if isinstance(e, KeyError) and e.args else str(e)
        print(f"urdf-dyn: error: {msg}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("urdf-dyn: interrupted", file=sys.stderr)
        return 130
    finally:
        if argv is None:    # the process's own command (urdf-dyn, python -m urdf_dyn.cli): it ends next
            from urdf_dyn.collector import freeze
            freeze()


if __name__ == "__main__":
    sys.exit(main())
