"""``urdf-dyn view``: the argparse wiring is in urdf_dyn/cli.py; this is what runs.

    urdf-dyn view ROBOT [--traj F.npz|F.csv | --q Q] [--out x.png|.gif|.mp4] [--fps] [--speed] [--size WxH]
                        [--show a,b] [--no-loops] [--package-dir] [--xacro-arg]

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

__all__ = ["run_view", "parse_size", "parse_pose", "parse_show"]


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
    known = list(model.joint_names) + [a.name for a in actuators_of(model) if a.name not in model.joint_names]
    bad = [n for n in names if n not in known]
    if bad:
        raise ViewerError(f"--show: unknown name(s) {', '.join(bad)}; joints and actuators are: {', '.join(known)}")
    return names


def _load_model(args):
    from urdf_dyn import load_from_args as _load
    ns = types.SimpleNamespace(file=args.robot, package_dir=list(getattr(args, "package_dir", []) or []),
                               xacro_arg=list(getattr(args, "xacro_arg", []) or []),
                               trust_xacro=bool(getattr(args, "trust_xacro", False)))
    return _load(ns)


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
        return motion_from_pose(model, parse_pose(model, args.q))
    if single_frame:
        return motion_from_pose(model, model.q_initial())
    return demo_motion(model, dt=1.0 / max(float(args.fps), 1.0))


def run_view(args) -> int:
    """Run ``urdf-dyn view`` with the parsed arguments; returns the exit status. User errors raise
    ViewerError / ModelError (UrdfDynError): the CLI prints them in one line and exits with 2."""
    from .export import FORMATS, render_motion
    size = parse_size(getattr(args, "size", "640x480"))
    fps = float(getattr(args, "fps", 30.0))
    speed = float(getattr(args, "speed", 1.0))
    if not fps > 0 or not speed > 0:
        raise ViewerError("--fps and --speed must be > 0")
    out = getattr(args, "out", None)
    if out and Path(out).suffix.lower() not in FORMATS:
        raise ViewerError(f"--out {out}: unknown format; use .png, .gif or .mp4")
    traj = _read_trajectory(args)
    model = _load_model(args)
    show = parse_show(model, getattr(args, "show", ""))
    loops = not getattr(args, "no_loops", False)
    # not wired in urdf_dyn/cli.py yet: a --forces flag (actuator and pin arrows) and --loop-tol [m, rad]
    forces = bool(getattr(args, "forces", False))
    loop_tol = getattr(args, "loop_tol", None)
    loop_tol = 1e-3 if loop_tol is None else float(loop_tol)
    if not loop_tol > 0:
        raise ViewerError("--loop-tol must be > 0")
    window = not out and has_display()
    single = bool(out) and Path(out).suffix.lower() == ".png"
    motion = _motion(model, args, single, traj)
    if not window:
        if not out:
            out = f"{model.name}_view{'.gif' if len(motion) > 1 else '.png'}"
            print(f"urdf-dyn view: no display (DISPLAY is not set): rendering offscreen to {out}")
        path = render_motion(model, motion, out, fps=fps, size=size, speed=speed, show=show or None, loops=loops,
                             actuator_arrows=forces, pin_arrows=forces, loop_tol=loop_tol)
        n = 1 if Path(path).suffix.lower() == ".png" or len(motion) < 2 else None
        what = "1 frame" if n == 1 else f"{motion.duration:g} s of motion at {fps:g} fps, x{speed:g}"
        print(f"wrote {path} ({what}, {size[0]}x{size[1]})")
        return 0
    return _window(model, motion, size, fps, speed, show, loops, forces=forces, loop_tol=loop_tol)


def _window(model, motion, size, fps, speed, show, loops, max_frames=None, screenshot=None, forces=False,
            loop_tol=1e-3):
    from .backend import select
    if select(False):
        raise ViewerError("pyglet already renders offscreen in this process; cannot open a window")
    from .forces import ForceSource
    from .playback import Playback
    from .scene import RobotScene
    try:
        from .window import KEYS_HELP, RobotViewer, play
        v = RobotViewer(RobotScene(model), Playback(motion, speed=speed), forces=ForceSource(model, motion),
                        size=size, visible=True, show=show or None, loops=loops, actuator_arrows=forces,
                        pin_arrows=forces, loop_tol=loop_tol)
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
