"""Plotting helpers shared by every report plot: matplotlib's Agg backend, figures with fixed margins (no
layout engine), atomic PNG writes, and the plot sinks a render draws through — ``PlotWorker`` (a worker
process beside the job) and ``NoPlots`` (``outputs.plots: false``). A sink has ``submit(path, fn, *args,
check=None)`` (``fn(*args)`` writes ``path``; ``check`` names the geometry-only check a plot draws, for a sink
that copies cached plots), ``wait()`` and ``close()``. matplotlib is imported only when a plot is drawn."""
from __future__ import annotations

from urdf_dyn.io.files import atomic_path

__all__ = ["DPI", "PNG_COMPRESS", "PLOT_PROCESSES", "PLOT_PROCESSES_ALONE", "CALLER_DRAWS", "caller_may_draw",
           "pyplot", "figure", "twinx", "save_figure", "unplaced_labels", "draw_paused", "PlotWorker", "NoPlots",
           "worker_allowed"]

#: resolution of the report plots [dots per inch]; PNG compression level (zlib 0–9: 1 encodes the job's plots
#: 1.4–1.6× faster than Pillow's default 6, for files 1.06–1.14× larger, measured on this machine)
DPI = 100
PNG_COMPRESS = 1

#: worker processes of a ``PlotWorker`` (at most the machine's cores), and of the plot worker of a job that
#: forks no other process (no GIF, no recording: ``PLOT_PROCESSES_ALONE``). A job's render submits its plots at
#: its end and then only waits. Beside the GIF's and the recording's processes every core is busy and one
#: worker is the default (measured at a load average of 10–12 on 2 cores, two workers made the wait after
#: render longer, median 9.7 s against 8.6 s: the second worker's matplotlib import competes for the cores).
#: Alone, the workers are forked before the job's plan and import matplotlib on the core the plan leaves
#: idle: the warm main job without its animation, quiet, 9 pairs in turn on 2 cores, took 2.78 s median with
#: two workers against 2.91 s with one (2.51–3.10 s against 2.61–3.40 s)
PLOT_PROCESSES = 1
PLOT_PROCESSES_ALONE = 2

#: whether ``PlotWorker.wait`` may have the caller draw the plots no worker has begun (the caller only waits
#: there; a plot is drawn once, by either, into the same bytes). It does so only while the 1-minute load
#: average is below the machine's cores (``caller_may_draw``). The warm main job without the animation on 2
#: cores, 5 runs each in turn: at load 1.6–2.0 (mostly these runs' own) 3.28 s median with the caller drawing
#: against 3.98 s waiting (two workers instead: 3.18 s); at load 2.6–2.9 the caller drawing was slower (4.8–5.7
#: s against 4.4–5.4 s, 4 runs each: its own matplotlib import, ≈ 0.4 s, and no free core)
CALLER_DRAWS = True


def pyplot():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def figure(size, rows=1, cols=1, *, left=0.8, right=0.2, top=0.55, bottom=0.5, hspace=0.3, wspace=0.3,
            width_ratios=None, **kw):
    """A matplotlib ``Figure`` of ``size`` (w, h) [in] with a rows × cols grid of axes (returned (rows, cols))
    and fixed margins and gaps [in]: no pyplot (no figure manager to close) and no layout engine, whose
    measuring pass (``tight_layout``) costs nearly as much as drawing the figure. ``kw`` go to ``Figure.subplots``
    (sharex, sharey, ...). A linear axis makes ticks only where it draws them (``plot_ticks.shown_ticks``:
    the same ticks and labels, fewer objects made and formatted)."""
    from matplotlib.figure import Figure
    from urdf_dyn.reports.plot_ticks import shown_ticks
    w, h = size
    aw = (w - left - right - (cols - 1) * wspace) / cols     # axes size [in]
    ah = (h - top - bottom - (rows - 1) * hspace) / rows
    fig = Figure(figsize=size, dpi=DPI)
    gs = dict(left=left / w, right=1 - right / w, bottom=bottom / h, top=1 - top / h, hspace=hspace / ah,
              wspace=wspace / aw)
    if width_ratios is not None:
        gs["width_ratios"] = width_ratios
    axes = fig.subplots(rows, cols, squeeze=False, gridspec_kw=gs, **kw)
    for ax in axes.flat:
        shown_ticks(ax)
    return fig, axes


def twinx(ax):
    """``ax.twinx()`` (a second y axis on the right, sharing x) with the ticks of ``figure``'s axes
    (``plot_ticks.shown_ticks``)."""
    from urdf_dyn.reports.plot_ticks import shown_ticks
    return shown_ticks(ax.twinx())


def save_figure(fig, path):
    """Write ``fig`` as PNG (``DPI``, ``PNG_COMPRESS``) atomically to ``path``; close it if pyplot made it.
    Returns str(path). An axis whose label is empty gets fixed label coordinates first (``unplaced_labels``)."""
    unplaced_labels(fig)
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=DPI, format="png", pil_kwargs={"compress_level": PNG_COMPRESS})
    if getattr(fig.canvas, "manager", None) is not None:
        pyplot().close(fig)
    return str(path)


def unplaced_labels(fig):
    """Fix the label coordinates (``Axis.set_label_coords``) of every x and y axis of ``fig`` whose label is
    empty (the upper axes of a shared x, an axis labelled by its ticks): such a label is not drawn, but
    matplotlib would still place it at each draw below (or beside) the bounding boxes of the axis's tick labels,
    which it formats and measures once more for that. Returns the number of axes fixed."""
    n = 0
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            if not axis.label.get_text():
                axis.set_label_coords(0.5, 0.5)
                n += 1
    return n


def worker_allowed() -> bool:
    """A plot worker process only where it can be forked (Linux): a spawned worker would re-run a user's
    script that calls the job without an ``if __name__ == "__main__"`` guard; only from the main thread of
    the main process (not in a sweep's Dask worker, thread or process); and not when the environment
    variable URDF_DYN_PLOT_WORKER is 0."""
    import multiprocessing
    import os
    import sys
    import threading
    return (os.environ.get("URDF_DYN_PLOT_WORKER", "1") != "0" and sys.platform.startswith("linux")
            and "fork" in multiprocessing.get_all_start_methods()
            and threading.current_thread() is threading.main_thread() and multiprocessing.parent_process() is None)


def caller_may_draw() -> bool:
    """``CALLER_DRAWS`` and a core to spare now: at least 0.6 of a core idle over 0.05 s
    (``urdf_dyn.cores.idle_cores``: the job's GIF and recording processes, other jobs and the plot worker
    itself all count); where that cannot be measured, the 1-minute load average (``os.getloadavg``) below the
    machine's cores (False where that is unknown too). The load average alone still counted the job's own
    compile workers of a first run, which had ended: the job then waited while one worker drew the first
    run's plots on one core and the other core idled (≈ 3 s)."""
    import os
    if not CALLER_DRAWS:
        return False
    from urdf_dyn.cores import idle_cores
    idle = idle_cores(0.05)
    if idle is not None:
        return idle >= 0.6
    try:
        return os.getloadavg()[0] < (os.cpu_count() or 1)
    except OSError:
        return False


def draw_paused(fn, *args):
    """``fn(*args)`` with Python's garbage collector paused (enabled again after, if it was on):
    how the caller and the worker draw a plot. A figure is some 10⁵ objects in reference cycles (artists,
    transforms, callbacks) that only the collector frees. With it running, the process collected ≈ 15 times
    per plot and, once or twice over the main job's twelve plots, its whole heap (the job's process, ≈ 3·10⁵
    objects: 0.35–0.50 CPU-s of collecting, ``gc.callbacks``; the worker, which inherits the job's heap:
    0.17–0.23 CPU-s). Paused, the plot's objects stay young and the first allocation after it collects them
    in one young-generation pass (≈ 5 ms), before the next plot starts (``collector.paused``). Returns
    ``fn``'s result."""
    from urdf_dyn.collector import paused
    with paused():
        return fn(*args)


def _plot_worker_init():
    """The worker's start: matplotlib, imported while the job still computes; then every object the worker
    holds so far (the job's, inherited through the fork, and matplotlib's) is moved out of the garbage
    collector's reach (``gc.freeze``, as the ``gc`` module's documentation advises for a forked child): a
    collection then scans only what the worker made since, and never writes to the pages it shares with the
    job (``collector.freeze``). Its plots are drawn with the collector paused (``draw_paused``)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.backends.backend_agg  # noqa: F401
    import matplotlib.figure  # noqa: F401

    from urdf_dyn.collector import freeze
    from urdf_dyn.processes import leave_first
    freeze()
    leave_first()       # a plot worker's end (its pool has sent it its sentinel; every plot is written and
    #                     answered): os._exit before the exit hooks it inherited from the job's thread pools


class PlotWorker:
    """Draws a job's plots in worker processes (``concurrent.futures.ProcessPoolExecutor`` of ``processes``,
    default ``PLOT_PROCESSES`` and at most the machine's cores, forked when the job starts, so that importing
    matplotlib there overlaps the job's own work), concurrently with the rest of the job and with each other;
    or in the caller when ``parallel`` is False or no worker can run (``worker_allowed``; or a process pool
    cannot start here).

    ``submit(path, fn, *args)`` returns str(path) at once (``fn(*args)`` must write ``path``; the function
    and its arguments are pickled: module-level functions, methods of result dataclasses); ``wait()`` waits
    for every plot and raises the first plot's error (a plot whose worker died is drawn in the caller).
    ``close()`` ends the worker; ``wait`` does too. ``preload``: modules the caller imports before the fork
    — those of the results the worker will unpickle (``iso6015`` alone brings the loop solvers and scipy:
    imported in the worker, 0.5 s would delay that plot; imported once here, the worker inherits them)."""

    draws = True

    def __init__(self, parallel=True, preload=(), processes=None):
        self._ex, self._jobs = None, []
        if parallel and worker_allowed():
            try:
                import importlib
                import multiprocessing
                for m in preload:
                    importlib.import_module(m)
                import os
                from concurrent.futures import ProcessPoolExecutor

                from urdf_dyn.processes import forking
                n = max(1, min(processes or PLOT_PROCESSES, os.cpu_count() or 1))
                self._ex = ProcessPoolExecutor(n, mp_context=multiprocessing.get_context("fork"),
                                               initializer=_plot_worker_init)
                with forking():
                    self._ex.submit(int)               # start the workers now (a fork pool starts them all)
            except Exception:  # noqa: BLE001 - no process support here (OSError, PermissionError, ...)
                self.close()

    @property
    def parallel(self) -> bool:
        """Whether the plots are drawn by a worker process."""
        return self._ex is not None

    def submit(self, path, fn, *args, check=None):
        """Draw ``fn(*args)`` (which writes ``path``); returns str(path). ``check`` is not used here."""
        if self._ex is None:
            return draw_paused(fn, *args)
        self._jobs.append((self._ex.submit(draw_paused, fn, *args), fn, args))
        return str(path)

    def wait(self):
        """Wait for every plot submitted; raise the first error (in the order submitted); end the worker.
        When ``caller_may_draw()`` (a core idle now) the caller, which only waits here, draws itself the plots
        no worker has begun, from the last one back, while the workers draw from the first (a plot is drawn
        once, by one of them). While the job's GIF and recording processes work no core is idle, and the
        caller leaves the plots to the worker (its drawing would import matplotlib once more, ≈ 0.4 CPU-s, on
        cores that are all busy)."""
        from concurrent.futures.process import BrokenProcessPool
        errors = {}
        try:
            if caller_may_draw():
                for i in range(len(self._jobs) - 1, -1, -1):
                    fut, fn, args = self._jobs[i]
                    if fut.cancel():             # not begun by a worker: drawn here instead
                        try:
                            draw_paused(fn, *args)
                        except Exception as e:  # noqa: BLE001 - raised below in the order submitted
                            errors[i] = e
            for i, (fut, fn, args) in enumerate(self._jobs):
                if i in errors:
                    raise errors[i]
                if fut.cancelled():
                    continue
                try:
                    fut.result()
                except BrokenProcessPool:
                    draw_paused(fn, *args)
        finally:
            self.close()

    def close(self):
        """End the worker (pending plots are cancelled)."""
        if self._ex is not None:
            self._ex.shutdown(wait=True, cancel_futures=True)
            self._ex = None
        self._jobs = []


class NoPlots:
    """The plot sink of ``outputs.plots: false``: the interface of ``PlotWorker`` that draws nothing;
    ``submit`` returns None (the output is then left out of the run's manifest)."""
    parallel = False
    draws = False

    def submit(self, path, fn, *args, check=None):
        """Draw nothing; returns None."""
        return None

    def wait(self):
        """Nothing to wait for."""

    def close(self):
        """Nothing to end."""
