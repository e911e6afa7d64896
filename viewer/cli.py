"""``urdf-dyn view``: the argparse wiring is in urdf_dyn/cli.py; this is what runs.

    urdf-dyn view ROBOT [--traj F.npz|F.csv | --q Q | RUN_DIR] [--out x.png|.gif|.mp4] [--fps] [--speed]
                        [--size WxH] [--show a,b] [--no-loops] [--package-dir] [--xacro-arg] [--web [--port P]]
    urdf-dyn view RUN_DIR [--web]      (the robot named by the run folder's view.json or motion.npz)

- ``--web``: serve the scene in a browser (viser, ``webapp.WebApp``) and print its URL; Ctrl-C stops.
- ``RUN_DIR``: a sizing job's output folder (``rundata``): its motion, forces, soil, payload and bench.

- ``--out``: render offscreen (EGL, no display needed) to a PNG (one frame), GIF or MP4.
- no ``--out``: a window when there is a display; without one, an animation (or a PNG for a single pose)
  is written offscreen to ``<robot name>_view.gif``/``.png`` in the current folder, and the path printed.
- no ``--traj``/``--q``: a demo motion of the independent (or actuated) coordinates, loops assembled; a
  PNG shows the initial configuration.
"""
from __future__ import annotations

import types
from pathlib import Path

import numpy as np

from .backend import ViewerError, has_display

__all__ = ["run_view", "run_web", "start_web", "parse_size", "parse_pose", "parse_show"]


def parse_size(text):
    """'640x480' -> (640, 480). Raises ViewerError."""
    try:
        w, h = (int(x) for x in str(text).lower().split("x"))
    except ValueError:
        raise ViewerError(f"--size {text!r}: expected WIDTHxHEIGHT, e.g. 640x480") from None
    if not (16 <= w <= 8192 and 16 <= h <= 8192):
        raise ViewerError(f"--size {text!r}: width and height must be within 16..8192 pixels")
    return w, h


def parse_pose(model, text):
    """--q: values in joint order ('0.1,0.2,...') or 'joint=value,...' (unnamed joints keep the initial
    configuration). Raises ViewerError."""
    items = [t for t in str(text).replace(",", " ").split() if t]
    q = model.q_initial()
    try:
        if items and all("=" in t for t in items):
            for t in items:
                j, v = t.split("=", 1)
                q[model.joint_index(j.strip())] = float(v)
        else:
            vals = [float(t) for t in items]
            if len(vals) != model.nv:
                raise ViewerError(f"--q: {len(vals)} values for {model.nv} joints ({', '.join(model.joint_names)})")
            q[:] = vals
    except KeyError as e:
        raise ViewerError(f"--q: {e.args[0]}") from None
    except ValueError as e:
        raise ViewerError(f"--q {text!r}: not a number ({e})") from None
    if not np.all(np.isfinite(q)):
        raise ViewerError("--q: values must be finite")
    return q


def parse_show(model, text):
    """--show: comma-separated joint, actuator or loop names. Raises ViewerError naming the known ones."""
    names = [s.strip() for s in str(text or "").split(",") if s.strip()]
    from urdf_dyn import actuators_of
    known = list(dict.fromkeys([*model.q_names, *model.joint_names]))   # a floating base's x … qw as well
    known += [a.name for a in actuators_of(model) if a.name not in known]
    bad = [n for n in names if n not in known]
    if bad:
        raise ViewerError(f"--show: unknown name(s) {', '.join(bad)}; joints and actuators are: {', '.join(known)}")
    return names


def _load_model(args):
    """The model; one whose loops cannot close near the initial configuration is loaded open, with the
    loader's error (its gap and the nearest fix) as a warning, so that the gap is drawn (``args.open_loops``)."""
    import sys

    from urdf_dyn.cli import load_from_args as _load
    from urdf_dyn.errors import ModelError
    ns = types.SimpleNamespace(file=args.robot, package_dir=list(getattr(args, "package_dir", []) or []),
                               xacro_arg=list(getattr(args, "xacro_arg", []) or []),
                               trust_xacro=bool(getattr(args, "trust_xacro", False)))
    try:
        return _load(ns)
    except ModelError as e:
        from urdf_dyn.constraints.closure import LoopClosureError   # on use: the loop solvers and scipy
        if not isinstance(e, LoopClosureError):
            raise
        print(f"warning: {e}; drawn open", file=sys.stderr)
        args.open_loops = True
        ns.check_loops = False
        return _load(ns)


def _assembled(model, args, q):
    """--q: the pose assembled through the loops (``urdf_dyn.assemble``), holding the joints the text names
    ('joint=value'), else those declared independent; the raw pose with --no-assemble, on a model loaded
    open (``_load_model``), or with a warning when the loops cannot be closed there."""
    import sys

    from urdf_dyn import assemble
    from urdf_dyn.errors import UrdfDynError
    if not model.has_constraints or getattr(args, "no_assemble", False) or getattr(args, "open_loops", False):
        return q
    items = [t for t in args.q.replace(",", " ").split() if t]
    named = [t.split("=", 1)[0] for t in items if "=" in t] if items and all("=" in t for t in items) else None
    try:
        return assemble(model, q, hold=named)
    except UrdfDynError as e:
        print(f"warning: --q: {e}; drawn as given (open)", file=sys.stderr)
        return q


def _read_trajectory(args):
    """The --traj file as a urdf_dyn Trajectory (bounded reader), read before the robot so that a bad file
    fails fast; None without --traj."""
    if not args.traj:
        return None
    if args.q:
        raise ViewerError("give either --traj or --q, not both")
    from urdf_dyn import Trajectory
    p = Path(args.traj)
    if not p.is_file():
        raise ViewerError(f"--traj {args.traj}: file not found")
    if p.suffix.lower() not in (".npz", ".csv", ".mcap"):
        raise ViewerError(f"--traj {args.traj}: expected a .npz or .csv trajectory written by urdf-dyn "
                          "simulate/launch, or a .mcap ROS 2 bag")
    try:
        if p.suffix.lower() == ".mcap":  # a ROS 2 bag: /joint_states (urdf_dyn.io.mcap)
            from urdf_dyn import read_mcap
            return Trajectory(**read_mcap(p))
        return Trajectory.load(p)  # bounded; StateError names the file and the array or column
    except OSError as e:
        raise ViewerError(f"--traj {args.traj}: cannot read ({e})") from None
    except (ValueError, KeyError) as e:
        if p.suffix.lower() != ".mcap":
            raise
        raise ViewerError(f"--traj {args.traj}: not a urdf-dyn trajectory bag ({e})") from None


def _motion(model, args, single_frame, traj=None):
    from .playback import demo_motion, motion_from_pose, motion_from_trajectory
    if args.traj and args.q:
        raise ViewerError("give either --traj or --q, not both")
    if args.traj:
        traj = traj if traj is not None else _read_trajectory(args)
        return motion_from_trajectory(model, traj, label=str(args.traj))
    if args.q:
        return motion_from_pose(model, _assembled(model, args, parse_pose(model, args.q)))
    if single_frame or getattr(args, "open_loops", False):   # a loop that cannot close: its raw initial pose
        return motion_from_pose(model, model.q_initial())
    return demo_motion(model, dt=1.0 / max(float(args.fps), 1.0))


def robot_of_run(run_dir):
    """(robot file, package_dirs) of a run folder: view.json's ``robot``, else the scenario named in
    motion.npz's metadata (its ``robot.file``, relative to the scenario). Raises ViewerError."""
    run_dir = Path(run_dir)
    v = run_dir / "view.json"
    if v.is_file():
        from .rundata import read_view
        data = read_view(v)
        if data.get("robot"):
            return data["robot"], data.get("package_dirs") or []
    from urdf_dyn import Trajectory
    try:
        meta = Trajectory.load(run_dir / "motion.npz").meta or {}
        scen = Path(meta["launch"])
        import yaml
        robot = yaml.safe_load(scen.read_text())["robot"]
        pk = robot.get("package_dirs") or []
        pk = [f"{k}={(scen.parent / d).resolve()}" for k, d in pk.items()] if isinstance(pk, dict) else \
            [str((scen.parent / d).resolve()) for d in ([pk] if isinstance(pk, str) else pk)]
        return str((scen.parent / robot["file"]).resolve()), pk
    except Exception:  # noqa: BLE001 - any gap in the chain: ask for the robot
        raise ViewerError(f"{run_dir}: no view.json or scenario names the robot; give it: urdf-dyn view ROBOT "
                          f"{run_dir} --web") from None


def _run_dir(args):
    """The RUN_DIR of the command line (checked for motion.npz before anything is loaded), or None; a
    folder given as ROBOT is the run folder, its robot read from it."""
    run_dir = getattr(args, "run_dir", None)
    if run_dir is None and args.robot and Path(args.robot).is_dir():
        run_dir, args.robot = args.robot, None
    if run_dir is None:
        return None
    p = Path(run_dir)
    if not p.is_dir():
        raise ViewerError(f"{run_dir}: not a folder (RUN_DIR: a sizing job's output folder)")
    if not (p / "motion.npz").is_file():
        raise ViewerError(f"{p / 'motion.npz'}: not found; RUN_DIR must be a sizing job's output folder "
                          "(urdf-dyn run writes motion.npz, actuator_forces.csv, ...)")
    if args.traj or args.q:
        raise ViewerError("give either RUN_DIR, --traj or --q, not more than one")
    if args.robot is None:
        args.robot, pk = robot_of_run(p)
        args.package_dir = list(getattr(args, "package_dir", None) or []) + list(pk)
    return p


def start_web(args, what):
    """``--web``: start the browser viewer's server and print its URL at once (and the port taken when the one
    asked for is in use, and a warning when it is reachable from other machines); the scene is built in it
    afterwards (``run_web``) while the browser loads the page. ``what``: the robot and the run, as the URL
    line names them. Returns the running viser server. Raises ViewerError for a bad --port or without viser."""
    import sys

    from .webapp import served_url, start_server
    port = int(getattr(args, "port", 8080) or 8080)
    if not 0 < port < 65536:
        raise ViewerError(f"--port {port}: expected 1..65535")
    host = getattr(args, "host", "127.0.0.1") or "127.0.0.1"
    server = start_server(host, port)
    got = server.get_port()
    url, exposed = served_url(host, got)
    if got != port:
        print(f"warning: port {port} is in use: serving on port {got} instead", file=sys.stderr)
    if exposed:
        print(f"warning: --host {host}: the viewer is on the network without authentication: "
              f"anyone who can reach {url} sees the robot and the run", file=sys.stderr)
    print(f"urdf-dyn view: {what}: open {url}  (Ctrl-C stops)", flush=True)
    return server


def _stop(server):
    import contextlib
    import io
    with contextlib.redirect_stdout(io.StringIO()):
        server.stop()


def run_web(args, model, run, motion, block=True, server=None):
    """``--web``: serve the browser viewer (in ``server`` when ``start_web`` has started it and printed its
    URL; else started and printed here), then wait for Ctrl-C (``block``). Returns the WebApp when not
    blocking, else 0."""
    import time

    from .webapp import WebApp
    if server is None:
        server = start_web(args, f"{model.name}, " + (f"run {run.folder}" if run is not None
                                                       else (motion.label or "pose")))
    try:
        app = WebApp(model, motion, run=run, port=server.get_port(), host=getattr(args, "host", "127.0.0.1") or
                     "127.0.0.1", loop_tol=getattr(args, "loop_tol", None) or 1e-3,
                     speed=float(getattr(args, "speed", 1.0)), server=server)
    except BaseException:
        _stop(server)
        raise
    if not block:
        return app
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        app.close()
    return 0


def run_view(args) -> int:
    """Run ``urdf-dyn view`` with the parsed arguments; returns the exit status. User errors raise
    ViewerError / ModelError (UrdfDynError): the CLI prints them in one line and exits with 2."""
    from .export import FORMATS, render_motion
    run_dir = _run_dir(args)
    size = parse_size(getattr(args, "size", "640x480"))
    fps = float(getattr(args, "fps", 30.0))
    speed = float(getattr(args, "speed", 1.0))
    if not fps > 0 or not speed > 0:
        raise ViewerError("--fps and --speed must be > 0")
    out = getattr(args, "out", None)
    if out and Path(out).suffix.lower() not in FORMATS:
        raise ViewerError(f"--out {out}: unknown format; use .png, .gif or .mp4")
    if getattr(args, "web", False):
        if out:
            raise ViewerError("give either --web or --out, not both")
        # the URL first (the server is up), then the model, the run and the scene: the browser loads the
        # page meanwhile; a bad file still ends the command with its one-line error (the server stopped).
        # A robot path that is no file gets the loader's error before any URL.
        server = None
        if Path(str(args.robot)).is_file():
            server = start_web(args, Path(str(args.robot)).name + (f", run {run_dir}" if run_dir is not None else ""))
        try:
            model, run, traj = _model_and_run(args, run_dir)
            motion = run.motion if run is not None else _motion(model, args, False, traj)
        except BaseException:
            if server is not None:
                _stop(server)
            raise
        return run_web(args, model, run, motion, block=getattr(args, "block", True), server=server)
    model, run, traj = _model_and_run(args, run_dir)
    show = parse_show(model, getattr(args, "show", ""))
    loops = not getattr(args, "no_loops", False)
    # urdf_dyn.cli's --forces (actuator and pin arrows), --loop-tol [m, rad], --no-balancers (drawn by default);
    # read with getattr: a caller's own argparse namespace may lack them
    balancers = not getattr(args, "no_balancers", False)
    forces = bool(getattr(args, "forces", False))
    loop_tol = getattr(args, "loop_tol", None)
    loop_tol = 1e-3 if loop_tol is None else float(loop_tol)
    if not loop_tol > 0:
        raise ViewerError("--loop-tol must be > 0")
    window = not out and has_display()
    single = bool(out) and Path(out).suffix.lower() == ".png"
    motion = run.motion if run is not None else _motion(model, args, single, traj)
    if not window:
        if not out:
            out = f"{model.name}_view{'.gif' if len(motion) > 1 else '.png'}"
            print(f"urdf-dyn view: no display (DISPLAY is not set): rendering offscreen to {out}")
        path = render_motion(model, motion, out, fps=fps, size=size, speed=speed, show=show or None, loops=loops,
                             actuator_arrows=forces, pin_arrows=forces, loop_tol=loop_tol, run=run, balancers=balancers)
        n = 1 if Path(path).suffix.lower() == ".png" or len(motion) < 2 else None
        what = "1 frame" if n == 1 else f"{motion.duration:g} s of motion at {fps:g} fps, x{speed:g}"
        print(f"wrote {path} ({what}, {size[0]}x{size[1]})")
        return 0
    return _window(model, motion, size, fps, speed, show, loops, forces=forces, loop_tol=loop_tol, run=run,
                   balancers=balancers)


def _model_and_run(args, run_dir):
    """(model, the run folder's RunData or None, the --traj Trajectory or None)."""
    traj = _read_trajectory(args)
    model = _load_model(args)
    run = None
    if run_dir is not None:
        from .rundata import read_run
        run = read_run(run_dir, model)
    return model, run, traj


def _window(model, motion, size, fps, speed, show, loops, max_frames=None, screenshot=None, forces=False,
            loop_tol=1e-3, run=None, balancers=True):
    from .backend import select
    if select(False):
        raise ViewerError("pyglet already renders offscreen in this process; cannot open a window")
    from .forces import ForceSource
    from .playback import Playback
    from .scene import RobotScene
    try:
        from .window import KEYS_HELP, RobotViewer, play
        v = RobotViewer(RobotScene(model), Playback(motion, speed=speed), forces=ForceSource(model, motion, run=run),
                        size=size, visible=True, show=show or None, loops=loops, actuator_arrows=forces,
                        pin_arrows=forces, loop_tol=loop_tol, bench=run.bench_height if run is not None else None,
                        balancers=balancers)
    except ViewerError:
        raise
    except Exception as e:  # no GLX, cannot connect to the display
        raise ViewerError(f"cannot open a window ({type(e).__name__}: {e}); use --out file.png|.gif|.mp4 "
                          "to render offscreen") from None
    if max_frames is None:
        print(f"urdf-dyn view: {model.name}, {motion.label or 'pose'}; press h for the keys")
        print(KEYS_HELP)
    play(v, fps=fps, max_frames=max_frames, screenshot=screenshot)
    return 0
