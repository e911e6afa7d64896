"""A job's output plumbing: staging (``run_staged``: a run's files reach the output folder only when it
succeeds), the animation (``write_animation``, ``AnimationTask``: the viewer drawn offscreen) and the browser
recording (``write_recording``, ``RecordingTask``), each written by a process forked before the job computes
(``_ForkedOutput``) while the job finishes its run folder. The core imports
the viewer only here, lazily, and only when a scenario asks for an animation or a recording."""
from __future__ import annotations

import threading
import weakref
from pathlib import Path

from urdf_dyn.launch.document import output_dir

__all__ = ["run_staged", "write_animation", "write_recording", "RecordingTask", "AnimationTask", "viewer_tasks"]


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


class _ForkedOutput:
    """An output written beside the job's own work by a process forked before the job computes
    (``reports.plotting.worker_allowed``'s rule: Linux, the main thread of the main process). The process
    spends the job's computation (one busy core of two) on ``_warm`` (imports, the model's meshes), then
    waits; ``start(*payload)`` (the run folder is written) has it ``_write`` the output into the run folder;
    ``finish(written)`` waits for its one-line answer and puts the path into ``written`` (or echoes its
    warning); ``close()`` ends the process when the job failed. The child inherits the model and the
    folder's path: nothing is pickled but the payload and the answer. Forked after the job has loaded the
    model, it also inherits what loading it imported (forked before, each process took 0.7 CPU-s more,
    loading the same modules and compiled kernels again). Where no process can be forked, ``_here`` writes
    it in this process. A subclass sets ``key`` (its ``outputs`` field and its key in ``written``),
    ``_warm``, ``_write``, ``_here`` and ``_lost`` (the process died without answering).

    ``hosted=True`` makes the pipes only: the process of a task made next with ``guests=[this task]`` forks
    this task's process from its own once its ``_warm`` is done, so that the guest inherits what the host
    imported and built (``viewer_tasks``: the GIF's and the recording's processes then import trimesh and
    build the model's scene once, not twice). The guest answers the job through its own pipes; the job
    cannot join it (a grandchild): the end of its answer pipe without a word is its death. A hosted task
    whose host was not forked forks itself (``fork``)."""

    key = ""
    _open = weakref.WeakSet()      # the tasks with pipes that a later fork inherits

    def __init__(self, launch, model, outdir, echo, hosted=False, guests=()):
        self._args, self._proc, self._conn, self._go, self._out = (launch, model, outdir, echo), None, None, None, {}
        self._ends = None           # the process's ends of the two pipes, until it is forked
        self._guests = [g for g in guests if g._ends is not None]
        self._started = self._finished = False
        self._sender = None          # the thread that sends the payload (``start``)
        if not getattr(launch.doc.outputs, self.key):
            return
        from urdf_dyn.reports.plotting import worker_allowed
        if worker_allowed() and self._may_fork():
            try:
                import multiprocessing
                ctx = multiprocessing.get_context("fork")
                self._conn, child = ctx.Pipe(duplex=False)     # the child's answer
                go, self._go = ctx.Pipe(duplex=False)           # the parent's start (or EOF: never)
                self._ends = (child, go)
                _ForkedOutput._open.add(self)
                if not hosted:
                    self.fork()
            except Exception:  # noqa: BLE001 - no process support here: this process writes it
                self._drop()

    @staticmethod
    def _may_fork():
        """Whether this process may be forked for this output (besides ``worker_allowed``)."""
        return True

    @property
    def forked(self) -> bool:
        """Whether a process (forked, or to be forked by its host) writes the output."""
        return self._conn is not None

    @property
    def hosted(self) -> bool:
        """Whether this task's process is still to be forked (by its host's process, or ``fork``)."""
        return self._ends is not None and self._proc is None

    def fork(self):
        """Fork this task's process from this one (once; then it warms and waits for ``start``)."""
        if not self.hosted:
            return
        try:
            import multiprocessing

            from urdf_dyn.processes import forking
            self._proc = multiprocessing.get_context("fork").Process(
                target=self._main, args=self._ends, daemon=True, name=f"urdf-dyn-{self.key}")
            with forking():
                self._proc.start()
        except Exception:  # noqa: BLE001 - no process support here: this process writes it
            self._drop()
            return
        for task in [self] + self._guests:          # their process's ends: the forked process has them now
            task._close_ends()

    def _close_ends(self):
        for end in self._ends or ():
            end.close()
        self._ends = None

    def _drop(self):
        """No process for this task: this process writes the output (``_here``)."""
        for end in (self._conn, self._go):
            if end is not None:
                end.close()
        self._close_ends()
        self._proc = self._conn = self._go = None
        _ForkedOutput._open.discard(self)

    def start(self, *payload):
        """The run folder is written: write the output (the forked process, else ``_here``)."""
        if self._started:
            return
        self._started = True
        if not getattr(self._args[0].doc.outputs, self.key):
            return
        if self._conn is not None:
            # sent by a thread: a payload larger than the pipe's buffer (the trajectory, ~0.8 MB) blocks the
            # sender until the child reads it, after its warm-up (0.1-0.3 s of the job's own time otherwise)
            self._sender = threading.Thread(target=self._send, args=(self._go, payload), daemon=True,
                                            name=f"urdf-dyn-{self.key}-start")
            self._sender.start()
            return
        self._here(payload)

    @staticmethod
    def _send(go, payload):
        try:
            go.send(payload)
        except (OSError, ValueError):                    # the child died or the job closed it: finish() sees it
            pass
        finally:
            try:
                go.close()
            except OSError:
                pass

    def finish(self, written):
        """Wait for the output; put its path into ``written`` (or echo why it was not written)."""
        self._finished = True
        if self._sender is not None:
            self._sender.join()
        if self._conn is not None:
            try:
                kind, text = self._conn.recv()
            except (EOFError, OSError):                  # the child died without answering
                kind, text = "lost", ""
            if self._proc is not None:
                self._proc.join()
            self._conn.close()
            _ForkedOutput._open.discard(self)
            if kind == "ok":
                self._out[self.key] = text
            elif kind == "warning":
                self._args[3](text)
            else:
                self._lost()
        written.update(self._out)

    def close(self):
        """End the process when the job ends without ``finish`` (it failed), at once: one never started has
        written nothing (it may still be importing); one started writes only under a temporary name in the
        staging folder, which goes with that folder. A hosted task's process (which this one cannot signal)
        ends when it next reads its start, which is then the end of its pipe."""
        if self._conn is None or self._finished:
            return
        self._finished = self._started = True
        if self._proc is not None:
            if self._proc.is_alive():
                self._proc.terminate()
            self._proc.join()
        if self._sender is not None:          # ends once the child has read the payload or is gone
            self._sender.join(timeout=5)
        self._go.close()                      # not ``_drop``: the ended process stays inspectable (exitcode)
        self._conn.close()
        self._close_ends()
        _ForkedOutput._open.discard(self)

    def _main(self, conn, go, shared=None, host=()):
        """The forked process's whole life, a host's or a guest's (``_fork_guest``): ``_child``, then
        ``processes.leave`` (streams flushed, ``os._exit``; a traceback on stderr and status 1 if it raised).
        multiprocessing's own exit would run the exit hooks this process inherited from the job's thread pools
        (the plot worker's, the compile workers'): from Python 3.12.8 a hook takes a lock that the job's pool
        thread may have held at the fork, and the process would never end."""
        import traceback

        from urdf_dyn.processes import leave
        code = 0
        try:
            self._child(conn, go, shared, host)
        except BaseException:  # noqa: BLE001 - said on stderr; the job sees the end of the pipe
            traceback.print_exc()
            code = 1
        finally:
            leave(code)

    def _child(self, conn, go, shared=None, host=()):
        """The forked process: ``_warm`` (given what the host built, ``shared``, for a guest), its guests'
        processes forked, then, once the parent sends the payload, ``_write``, its answer sent as ("ok", path)
        or ("warning", line). The end of the ``go`` pipe without a word (the job failed) ends it: its copies
        of the parent's ends (of its own pipes and of those of the other tasks, inherited by the fork) and of
        its host's process's ends are closed first, else the end of a pipe would never be reached."""
        from urdf_dyn.collector import freeze
        freeze()                                    # the job's heap, out of the collector's reach here
        for end in host:
            end.close()
        for task in list(_ForkedOutput._open) + [self]:
            task._go.close()
            if task is not self:
                task._conn.close()
        state = self._warm(shared)
        guests = [pid for pid in (g._fork_guest(state, (conn, go)) for g in self._guests) if pid > 0]
        try:
            payload = go.recv()
        except (EOFError, OSError):
            payload = None
        if payload is not None:
            out, lines = {}, []
            self._write(state, payload, out, lines.append)
            try:
                conn.send(("ok", out[self.key]) if self.key in out else ("warning", "; ".join(lines)))
                conn.close()
            except OSError:                              # the job has ended meanwhile (it failed)
                pass
        _reap(guests)

    def _fork_guest(self, shared, host_ends):
        """In the host's process: fork this guest's process (``os.fork``: the host is itself a daemonic
        multiprocessing process, which may not start others), which gets ``shared`` and closes ``host_ends``.
        If it cannot be forked, its pipes end without a word: the job writes the output (``_lost``). Returns the
        process id (-1 if none), which the host waits for before it ends (the job's CPU time then counts it)."""
        import os

        from urdf_dyn.processes import forking
        try:
            with forking():
                pid = os.fork()
        except OSError:
            pid = -1
        if pid == 0:
            self._main(*self._ends, shared, host_ends)        # never returns
        self._close_ends()
        return pid


def _reap(pids):
    """Wait for the guests' processes (a host's ``_child`` before it ends)."""
    import os
    for pid in pids:
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass


class RecordingTask(_ForkedOutput):
    """``write_recording`` beside the caller's own work (``_ForkedOutput``): made before the job computes,
    ``start()``-ed once the run folder is written, ``finish(written)``-ed at the end of the job.

    The forked process imports viser, matplotlib and trimesh and loads the model's meshes (``_warm``; with
    the animation's process as its host, ``viewer_tasks``, it inherits trimesh and the meshes) while the
    job computes, then records the run while the rest of the job runs here (the Python of the
    recording then runs on another core). If it dies without answering, the recording is written here
    instead; where no process can be forked, a thread writes it after ``start()``."""

    key = "recording"
    _thread = None

    def _warm(self, shared=None):
        return _warm(self._args[1], shared)

    def _write(self, robot, payload, out, echo):
        launch, model, outdir, _ = self._args
        write_recording(launch, model, outdir, out, echo, robot=robot)

    def _here(self, payload):
        import threading
        launch, model, outdir, echo = self._args
        self._thread = threading.Thread(target=write_recording, args=(launch, model, outdir, self._out, echo),
                                        name="urdf-dyn-recording", daemon=True)
        self._thread.start()

    def _lost(self):
        launch, model, outdir, echo = self._args
        write_recording(launch, model, outdir, self._out, echo)

    def finish(self, written):
        """Wait for the recording; put its path into ``written`` (or echo why it was not written)."""
        self.start()
        if self._thread is not None:
            self._thread.join()
        super().finish(written)


class AnimationTask(_ForkedOutput):
    """``write_animation`` in a forked process (``_ForkedOutput``): made before the job computes (the process
    imports the viewer, builds the model's scene and loads the compiled kernels while the job computes:
    ``urdf_dyn_viewer.export.prepare_export``), ``start(traj)``-ed once the run folder is written,
    ``finish(written)``-ed at the end of the job. The GIF is then drawn (OpenGL through EGL, on the main
    thread of its own process) while this process finishes the job. The file appears in the run folder only
    complete (written under a temporary name, then renamed). If the process dies without answering (a
    crash in the GL driver), the job says so with its exit status and keeps every other output; where no
    process can be forked, or this process has itself drawn with OpenGL (pyglet's GL loaded: the driver's
    state, its threads and locks, does not survive ``fork()``), ``start(traj)`` draws it here."""

    key = "animation"

    @staticmethod
    def _may_fork():
        import sys
        return "pyglet.gl" not in sys.modules

    def _warm(self, shared=None):
        try:
            from urdf_dyn_viewer.export import prepare_export
            return prepare_export(self._args[1])
        except Exception:  # noqa: BLE001 - no viewer, no GL, a visual it cannot load: write_animation says why
            return None

    def _write(self, robot, payload, out, echo):
        launch, model, outdir, _ = self._args
        write_animation(launch, model, payload[0], outdir, out, echo, robot=robot)

    def _here(self, payload):
        launch, model, outdir, echo = self._args
        write_animation(launch, model, payload[0], outdir, self._out, echo)

    def _lost(self):
        code = self._proc.exitcode
        why = f"killed by signal {-code}" if code is not None and code < 0 else f"exit status {code}"
        self._args[3](f"WARNING: outputs.animation {self._args[0].doc.outputs.animation} not written: its drawing "
                      f"process ended without an answer ({why}); the other outputs are written")


def _warm(model, robot=None):
    """What the recording needs before its run folder exists, done in the forked process while the job
    computes: viser, matplotlib and the viewer imported, the model's scene (its meshes) built unless
    ``robot`` is given (the GIF's process built it: ``viewer_tasks``). Returns the
    ``urdf_dyn_viewer.scene.RobotScene`` or None (``write_recording`` then says what is missing)."""
    try:
        import matplotlib.backends.backend_agg  # noqa: F401 - the force plot's canvas
        import matplotlib.figure  # noqa: F401
        import viser  # noqa: F401
        import urdf_dyn_viewer.recording  # noqa: F401
        import urdf_dyn_viewer.rundata  # noqa: F401
        import urdf_dyn_viewer.webapp  # noqa: F401
        from urdf_dyn import Trajectory  # noqa: F401 - motion.npz's reader
        from urdf_dyn_viewer.scene import RobotScene
        return robot if robot is not None else RobotScene(model)
    except Exception:  # noqa: BLE001 - no viewer, a visual it cannot load: write_recording says why
        return None


def viewer_tasks(launch, model, outdir, echo):
    """The recording's and the animation's tasks of a job, (``RecordingTask``, ``AnimationTask``), made before
    it computes. With both asked, the recording's process is forked by the animation's once that has
    imported the viewer and built the model's scene (``_ForkedOutput``, ``hosted``): trimesh, the viewer
    and the scene's meshes, 0.35 CPU-s, are then loaded once beside the job's computation instead of twice.
    Where the animation's process is not forked, the recording's forks itself."""
    o = launch.doc.outputs
    if (o.animation or o.recording) and model.has_constraints:   # trimesh imports scipy.optimize in the viewer's
        import scipy.optimize  # noqa: F401 - processes, the job's first assembly here: once, before they fork
    recording = RecordingTask(launch, model, outdir, echo, hosted=bool(o.animation))
    animation = AnimationTask(launch, model, outdir, echo, guests=[recording])
    recording.fork()                       # unless the animation's process has forked it
    return recording, animation


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


def write_animation(launch, model, traj, outdir, written, echo, robot=None):
    """``outputs.animation`` (a .gif/.mp4/.png name): render the trajectory with the viewer, offscreen
    when there is no display. The core imports the viewer only here, lazily, and only when asked; a
    machine without OpenGL loses only the animation (a warning), never the results already written.
    ``robot``: the model's viewer scene when the caller has one (``AnimationTask``)."""
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
                                                     size=(w, h), run_dir=run_dir, robot=robot))
    except Exception as e:  # noqa: BLE001 - GL/EGL/ffmpeg failures come in many types
        text = str(e)
        cause = text[text.find("(") + 1:].split(")")[0] if "(" in text else text
        gl = not any(w in cause for w in ("NaN", "nan", "inf", "convert", "shape", "index")) and \
            any(w in text for w in ("EGL", "GL", "display", "context", "ffmpeg"))
        echo(f"WARNING: outputs.animation {o.animation} not written: {type(e).__name__}: "
             + (f"{e} (offscreen drawing needs EGL: apt-get install libegl1 libegl-mesa0 libgl1 libgl1-mesa-dri "
                "libglu1-mesa)" if gl else f"{cause}: a visual of {model.source} (a mesh vertex or pose) is not "
                "drawable; the results are written"))
