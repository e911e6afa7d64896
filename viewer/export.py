"""Offscreen rendering and export: PNG (one frame), GIF and MP4 (imageio, imageio-ffmpeg).

Rendering is offscreen through EGL (pyglet headless) whether or not there is a display, so exports work
on servers and in CI. ``render_trajectory`` is what ``urdf-dyn launch`` calls for ``outputs.animation``.
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from .backend import ViewerError, select

__all__ = ["offscreen_viewer", "frame_times", "render_frames", "write_frames", "render_gif", "render_trajectory",
           "render_motion", "prepare_export", "FORMATS"]

FORMATS = (".png", ".gif", ".mp4")


def _check_out(path):
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise ViewerError(f"{path}: unknown output format {suffix or '(none)'!r}; use .png, .gif or .mp4")
    return suffix


def offscreen_viewer(robot, playback, size=(640, 480), **kw):
    """A RobotViewer rendering into an offscreen EGL surface (a hidden window if pyglet already runs with
    a display in this process). Raises ViewerError when no OpenGL context can be made."""
    headless = select(True)
    try:
        from .window import RobotViewer
        v = RobotViewer(robot, playback, size=size, visible=False, **kw)
    except ViewerError:
        raise
    except Exception as e:  # missing libEGL/libGL, no EGL device, no matching config — or a visual that
        gl = (type(e).__module__.startswith("pyglet") or   # cannot be drawn (a NaN vertex): only the first
              any(w in str(e) for w in ("EGL", "GL", "display", "context", "libGL")))   # is the system's
        if not gl:
            src = getattr(getattr(robot, "model", None), "source", None) or "the robot"
            raise ViewerError(f"{src}: cannot draw its visuals ({type(e).__name__}: {e}): a mesh vertex or a "
                              "visual pose that is not finite?") from None
        raise ViewerError(f"cannot render offscreen ({type(e).__name__}: {e}); on Debian/Ubuntu install "
                          "libegl1 libegl-mesa0 libgl1 libgl1-mesa-dri libglu1-mesa") from None
    v.render()  # the first frame of a new EGL context can come out black: draw it once
    return v


def frame_times(t0, t1, fps, speed=1.0):
    """Times [s] of the frames of an animation of [t0, t1] at ``fps`` frames per second of video, playing
    ``speed`` seconds of motion per second of video; the last frame is at t1."""
    if not fps > 0:
        raise ViewerError(f"fps must be > 0, got {fps}")
    if not speed > 0:
        raise ViewerError(f"speed must be > 0, got {speed}")
    if t1 <= t0:
        return np.array([t0])
    n = int(np.floor((t1 - t0) * fps / speed + 1e-9)) + 1
    t = t0 + np.arange(n) * speed / fps
    if t[-1] < t1 - 1e-9:
        t = np.append(t, t1)
    return t


def render_frames(viewer, times):
    """Yield the pixels (h, w, 3) of ``viewer`` at each time [s]."""
    for t in times:
        viewer.playback.seek(t)
        viewer.robot.set_q(viewer.playback.q, graph=False)
        yield viewer.render()


def write_frames(path, frames, fps):
    """Write frames (an iterable of (h, w, 3) uint8) to ``path``: .png (the first frame), .gif (looping) or
    .mp4 (H.264). Returns the number of frames written."""
    import imageio.v2 as imageio
    suffix = _check_out(path)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.stem}.tmp{os.getpid()}{suffix}")
    n = 0
    try:
        if suffix == ".png":
            for f in frames:
                imageio.imwrite(tmp, f)
                n = 1
                break
        elif suffix == ".gif":
            n = _write_gif(tmp, frames, fps)
        else:
            try:
                import imageio_ffmpeg  # noqa: F401
            except ImportError:
                raise ViewerError("writing .mp4 needs imageio-ffmpeg: pip install imageio-ffmpeg") from None
            with imageio.get_writer(tmp, fps=fps, codec="libx264", quality=7, macro_block_size=2,
                                    pixelformat="yuv420p", ffmpeg_log_level="error") as w:
                for f in frames:
                    if f.shape[0] % 2 or f.shape[1] % 2:  # yuv420p needs even sizes
                        f = np.pad(f, ((0, f.shape[0] % 2), (0, f.shape[1] % 2), (0, 0)), mode="edge")
                    w.append_data(f)
                    n += 1
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    return n


def _write_gif(path, frames, fps):
    """A looping GIF of RGB frames with ONE palette for all of them (``gif.palette_lut``, ``gif.GifWriter``)."""
    from .gif import GifWriter, palette_lut
    frames = [np.ascontiguousarray(f[..., :3]) for f in frames]
    if not frames:
        raise ViewerError(f"{path}: no frames to write")
    writer = GifWriter(*palette_lut(frames), fps)
    for f in frames:
        writer.add_rgb(f)
    return writer.save(path)


def render_gif(viewer, times, path, fps):
    """Render ``viewer`` at ``times`` [s] into a looping GIF at ``path``: the palette from PALETTE_SAMPLES
    frames spread through the motion (drawn first), then every frame drawn once, read from the framebuffer
    as B, G, R, A and mapped to palette indices (``gif.GifWriter.add_bgra``); without force arrows (whose
    lengths depend on the frames drawn before) the sample frames are kept and not drawn again. Returns the
    number of frames."""
    from .gif import PALETTE_SAMPLES, GifWriter, palette_lut
    _check_out(path)
    times = np.asarray(times, float)
    if not len(times):
        raise ViewerError(f"{path}: no frames to write")

    def draw(t):
        viewer.playback.seek(t)
        viewer.robot.set_q(viewer.playback.q, graph=False)
        viewer.switch_to()
        viewer.on_draw()
        return viewer.read_bgra()

    pick = np.unique(np.linspace(0, len(times) - 1, min(PALETTE_SAMPLES, len(times))).round().astype(int))
    samples = {int(k): draw(times[k]) for k in pick}
    writer = GifWriter(*palette_lut([f[::-1, :, 2::-1] for f in samples.values()]), fps)
    keep = viewer.forces is None or not (viewer.flags["actuators"] or viewer.flags["pins"])
    viewer.reset_scales()  # force arrows scale by the largest value seen so far: forget the samples
    for k, t in enumerate(times):
        writer.add_bgra(samples[k] if keep and k in samples else draw(t))
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.stem}.tmp{os.getpid()}.gif")
    try:
        n = writer.save(tmp)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    return n


def render_motion(model, motion, path, fps=30.0, size=(640, 480), speed=1.0, show=None, loops=True,
                  actuator_arrows=False, pin_arrows=False, loop_tol=1e-3, hud=True, robot=None, run=None,
                  balancers=True):
    """Render a Motion (urdf_dyn_viewer.playback) to ``path`` (.png/.gif/.mp4). Returns the path. With a
    sizing run (``run``: rundata.RunData) its motion is drawn with the layers the browser viewer draws:
    the dig bench, the soil force on the cutting edge and the payload (and the force arrows asked for).
    ``balancers``: the model's balancers drawn (when it has some; ``gloverlay.draw_balancers``)."""
    from .forces import ForceSource
    from .playback import Playback
    from .scene import RobotScene
    _check_out(path)
    robot = robot or RobotScene(model)
    motion = run.motion if run is not None else motion
    pb = Playback(motion, speed=speed, repeat=False)  # not advanced by a clock: frames seek to their times
    forces = ForceSource(model, motion, run=run) if (actuator_arrows or pin_arrows or run is not None) else None
    v = offscreen_viewer(robot, pb, size=size, show=show, loops=loops, actuator_arrows=actuator_arrows,
                         pin_arrows=pin_arrows, loop_tol=loop_tol, hud=hud, forces=forces,
                         bench=run.bench_height if run is not None else None, balancers=balancers)
    try:
        if Path(path).suffix.lower() == ".gif":
            render_gif(v, frame_times(pb.t0, pb.t1, fps, speed), path, fps)
        else:
            times = [pb.t0] if Path(path).suffix.lower() == ".png" else frame_times(pb.t0, pb.t1, fps, speed)
            write_frames(path, render_frames(v, times), fps)
    finally:
        v.close()
    return Path(path)


def prepare_export(model):
    """What ``render_trajectory`` does before it knows the motion, done ahead (the job's animation process
    does it while the job computes): offscreen rendering chosen (EGL), the GL window, GIF and run-folder
    modules imported, the model's scene built (its meshes loaded) and posed, the compiled kernels of the
    loop overlay and of the GIF's palette mapping loaded. Returns the ``scene.RobotScene`` to pass as
    ``robot``. Raises ViewerError (no pyglet) or what loading a visual raises."""
    select(True)
    from . import forces, gif, rundata, window  # noqa: F401 - imported here, not while the frames wait
    from .scene import RobotScene
    robot = RobotScene(model)
    robot.loop_residuals()
    gif._bgra_indices(np.zeros((1, 1, 4), np.uint8), np.zeros(32768, np.uint8), np.empty((1, 1), np.uint8))
    return robot


def render_trajectory(model, traj, path, fps=30.0, size=(640, 480), speed=1.0, show=None, loops=True,
                      actuator_arrows=False, pin_arrows=False, loop_tol=1e-3, run_dir=None, robot=None,
                      balancers=True):
    """Render a ``urdf_dyn.simulate.Trajectory`` (t, q; τ, q̇, q̈ for force arrows) of ``model`` to
    ``path``: .gif or .mp4 (the whole motion at ``fps`` frames per second, ``speed`` × real time) or .png
    (the first sample). Offscreen (EGL): works without a display. Returns the path written.

    ``run_dir``: a sizing job's output folder (``rundata``) whose bench, soil force and payload are drawn
    too (what ``outputs.animation`` passes for a sizing run); its motion.npz is then the motion drawn.
    ``robot``: the model's ``scene.RobotScene`` when the caller has one (``prepare_export``).
    ``balancers``: the model's balancers (``model.balancers``) drawn as lines between their pins.

    Raises ViewerError (a UrdfDynError) for an unknown format, a trajectory that does not fit the model, or
    when OpenGL is unavailable."""
    from .playback import motion_from_trajectory
    run = motion = None
    if run_dir is not None:
        from .rundata import read_run
        run = read_run(run_dir, model)
    else:
        motion = motion_from_trajectory(model, traj, label=str(path))
    return render_motion(model, motion, path, fps=fps, size=tuple(int(s) for s in size), speed=speed, show=show,
                         loops=loops, actuator_arrows=actuator_arrows, pin_arrows=pin_arrows, loop_tol=loop_tol,
                         robot=robot, run=run, balancers=balancers)
