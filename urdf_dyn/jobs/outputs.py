"""A job's output plumbing: staging (``run_staged``: a run's files reach the output folder only when it
succeeds), the animation (``write_animation``: the viewer drawn offscreen) and the browser recording
(``write_recording``, ``RecordingTask``: written by a forked process beside the animation). The core imports
the viewer only here, lazily, and only when a scenario asks for an animation or a recording."""
from __future__ import annotations

from pathlib import Path

from urdf_dyn.launch.document import output_dir

__all__ = ["run_staged", "write_animation", "write_recording", "RecordingTask"]


def write_recording(launch, model, outdir, written, echo, robot=None):
    """``outputs.recording`` (an .html name): the browser viewer's scene over the run, one offline file
    (urdf_dyn_viewer.recording); like the animation, only a warning when the viewer cannot write it.
    ``robot``: the model's viewer scene when the caller has one (``_warm``)."""
    o = launch.doc.outputs
    if not o.recording:
        return
    try:
        from urdf_dyn_viewer.recording import record_run
        written["recording"] = str(record_run(model, outdir, outdir / o.recording, fps=o.animation_fps,
                                              robot=robot)[0])
    except Exception as e:  # noqa: BLE001 - missing viser, a run folder it cannot read
        echo(f"WARNING: outputs.recording {o.recording} not written: {type(e).__name__}: {e}")


class RecordingTask:
    """``write_recording`` beside the caller's own work: made before the job computes, ``start()``-ed once
    the run folder is written, ``finish(written)``-ed after the GIF.

    Where a process can be forked (``reports.plotting.PlotWorker``'s rule: Linux, the main thread of the
    main process), the recording process is forked at once and spends the job's computation (one busy core
    of two) importing viser, matplotlib and trimesh and loading the model's meshes (``_warm``); ``start()``
    tells it to read the run folder and record it while the GIF is drawn here (the Python of the recording
    then runs on another core instead of sharing the GIL with the GIF's drawing loop). The child inherits
    the model and the folder's path: nothing is pickled but its one-line answer. If it dies without
    answering, the recording is written here instead; where no process can be forked, a thread writes it
    after ``start()``. ``finish(written)`` waits and records the path (or echoes the warning), as
    ``write_recording`` does; ``close()`` ends a process that was never started (the job failed)."""

    def __init__(self, launch, model, outdir, echo):
        self._args, self._proc, self._thread, self._rec, self._go = (launch, model, outdir, echo), None, None, {}, None
        self._started = self._finished = False
        if not launch.doc.outputs.recording:
            return
        from urdf_dyn.reports.plotting import worker_allowed
        if worker_allowed():
            try:
                import multiprocessing
                import sys
                import warnings
                ctx = multiprocessing.get_context("fork")
                self._conn, child = ctx.Pipe(duplex=False)     # the child's answer
                go, self._go = ctx.Pipe(duplex=False)           # the parent's start (or EOF: never)
                for f in (sys.stdout, sys.stderr):      # the child must not write what is buffered again
                    f.flush()
                self._proc = ctx.Process(target=_record_child, args=(launch, model, outdir, child, go, self._go),
                                         daemon=True)
                with warnings.catch_warnings():          # Python >= 3.12 warns of fork() beside threads
                    warnings.simplefilter("ignore", DeprecationWarning)
                    self._proc.start()
                child.close()
                go.close()
            except Exception:  # noqa: BLE001 - no process support here: a thread does it
                self._proc = None

    def start(self):
        """The run folder is written: record it (the forked process, else a thread)."""
        if self._started:
            return
        self._started = True
        launch, model, outdir, echo = self._args
        if not launch.doc.outputs.recording:
            return
        if self._proc is not None:
            try:
                self._go.send(True)
            except OSError:                              # the child died: finish() writes it here
                pass
            self._go.close()
            return
        import threading
        self._thread = threading.Thread(target=write_recording, args=(launch, model, outdir, self._rec, echo),
                                        name="urdf-dyn-recording", daemon=True)
        self._thread.start()

    def finish(self, written):
        """Wait for the recording; put its path into ``written`` (or echo why it was not written)."""
        self.start()
        self._finished = True
        launch, model, outdir, echo = self._args
        if self._thread is not None:
            self._thread.join()
        elif self._proc is not None:
            try:
                kind, text = self._conn.recv()
            except (EOFError, OSError):                  # the child died: write it here
                kind, text = "lost", ""
            self._proc.join()
            self._conn.close()
            if kind == "ok":
                self._rec["recording"] = text
            elif kind == "warning":
                echo(text)
            else:
                write_recording(launch, model, outdir, self._rec, echo)
        written.update(self._rec)

    def close(self):
        """End the recording process when the job ends without ``finish`` (it failed): one never started
        reads the end of its pipe and returns; one started is stopped."""
        if self._proc is None or self._finished:
            return
        self._finished = True
        if not self._started:
            self._started = True
            self._go.close()
            self._proc.join(timeout=10)
        if self._proc.is_alive():
            self._proc.terminate()
            self._proc.join()
        self._conn.close()


def _warm(model):
    """What the recording needs before its run folder exists, done in the forked process while the job
    computes: viser, matplotlib and the viewer imported, the model's scene (its meshes) built. Returns
    the ``urdf_dyn_viewer.scene.RobotScene`` or None (``write_recording`` then says what is missing)."""
    try:
        import matplotlib.backends.backend_agg  # noqa: F401 - the force plot's canvas
        import matplotlib.figure  # noqa: F401
        import viser  # noqa: F401
        import urdf_dyn_viewer.recording  # noqa: F401
        import urdf_dyn_viewer.rundata  # noqa: F401
        import urdf_dyn_viewer.webapp  # noqa: F401
        from urdf_dyn import Trajectory  # noqa: F401 - motion.npz's reader
        from urdf_dyn_viewer.scene import RobotScene
        return RobotScene(model)
    except Exception:  # noqa: BLE001 - no viewer, a visual it cannot load: write_recording says why
        return None


def _record_child(launch, model, outdir, conn, go, go_sender):
    """The forked recording process: ``_warm``, then, once the parent says the run folder is written,
    ``write_recording``, its answer sent as ("ok", path) or ("warning", line). The end of the ``go`` pipe
    without a word (the job failed) ends it: its copy of the parent's end (``go_sender``, inherited by the
    fork) is closed first, else that end would never be reached."""
    go_sender.close()
    robot = _warm(model)
    try:
        if not go.recv():
            return
    except (EOFError, OSError):
        return
    out, lines = {}, []
    write_recording(launch, model, outdir, out, lines.append, robot=robot)
    conn.send(("ok", out["recording"]) if "recording" in out else ("warning", "; ".join(lines)))
    conn.close()


def run_staged(launch, out_dir, echo, run):
    """Run a job whose outputs must not half-replace an earlier run's: ``run(stage, echo)`` -> (result,
    {output: path}) writes into ``stage``, a new hidden folder beside the output folder (``output_dir``);
    only when it returns are its files moved into the output folder (``os.replace``, file by file), and the
    paths it returns and echoes are given in the output folder. If it raises, nothing of it reaches the
    output folder (a good earlier run there stays intact) — except after a ``SimulationError``, whose
    partial trajectory is the job's answer and is moved in too. The staging folder is always removed."""
    import os
    import shutil
    import tempfile

    from urdf_dyn.errors import SimulationError
    final = output_dir(launch, out_dir)
    final.parent.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=f".{final.name}.partial-", dir=final.parent))
    a, b = str(stage), str(final)

    def fix(v):
        return v.replace(a, b) if isinstance(v, str) else Path(str(v).replace(a, b)) if isinstance(v, Path) else v

    def move():
        final.mkdir(parents=True, exist_ok=True)
        for src in sorted(stage.rglob("*")):
            dst = final / src.relative_to(stage)
            if src.is_dir():
                dst.mkdir(exist_ok=True)
            else:
                os.replace(src, dst)
    try:
        result, written = run(stage, lambda *x, **k: echo(*(fix(v) for v in x), **k))
        move()
        return result, {k: fix(v) for k, v in written.items()}
    except SimulationError as e:
        move()
        raise SimulationError(fix(str(e)), e.trajectory) from None
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def write_animation(launch, model, traj, outdir, written, echo):
    """``outputs.animation`` (a .gif/.mp4/.png name): render the trajectory with the viewer, offscreen
    when there is no display. The core imports the viewer only here, lazily, and only when asked; a
    machine without OpenGL loses only the animation (a warning), never the results already written."""
    o = launch.doc.outputs
    if not o.animation:
        return
    try:
        from urdf_dyn_viewer.export import render_trajectory
    except ImportError as e:
        echo(f"WARNING: outputs.animation skipped: the viewer is not installed ({e}); "
             "pip install -e '.[viewer]'")
        return
    w, h = (int(x) for x in o.animation_size.lower().split("x"))
    try:
        from urdf_dyn.reports.manifest import OUTPUTS
        run_dir = outdir if (outdir / OUTPUTS["view_json"].file).is_file() else None  # a sizing run: bench, soil
        written["animation"] = str(render_trajectory(model, traj, outdir / o.animation, fps=o.animation_fps,
                                                     size=(w, h), run_dir=run_dir))
    except Exception as e:  # noqa: BLE001 - GL/EGL/ffmpeg failures come in many types
        text = str(e)
        cause = text[text.find("(") + 1:].split(")")[0] if "(" in text else text
        gl = not any(w in cause for w in ("NaN", "nan", "inf", "convert", "shape", "index")) and \
            any(w in text for w in ("EGL", "GL", "display", "context", "ffmpeg"))
        echo(f"WARNING: outputs.animation {o.animation} not written: {type(e).__name__}: "
             + (f"{e} (offscreen drawing needs EGL: apt-get install libegl1 libegl-mesa0 libgl1 libgl1-mesa-dri "
                "libglu1-mesa)" if gl else f"{cause}: a visual of {model.source} (a mesh vertex or pose) is not "
                "drawable; the results are written"))
