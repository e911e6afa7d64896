"""Results computed beside the job: a computation that the job will need later, started now in a process
forked from the job, so that it runs on a core the job leaves idle.

The sizing job's geometry-only checks that take longest when they are not in the cache (the excavator's
stall envelopes and its out-of-plane cases: ≈ 2.3 and ≈ 2.2 s on one core, warm kernels) do not read the
motion. Computed after it, in the job's process, they and the plots drawn from them were the serial tail of
every run that does not find them in the cache: a first run, a run after an edit of a section they read,
``--no-cache``. ``Beside.start(fn)`` forks a process that computes ``fn()`` at once and sends the pickled
result back through a pipe; ``Pending.take(fallback)`` returns it. The child inherits the model, the plan and
every compiled kernel (nothing is pickled but the result).

Where the child gives no result — it raised, died, its result could not be pickled, or it has not answered
within ``TIMEOUT`` — ``take`` calls ``fallback()`` in the job's process, which computes it there and raises
the real error with its message: the user sees what the job alone would have said. Processes are forked only

- where a plot worker may be (``reports.plotting.worker_allowed``: Linux, the main thread of the main process,
  ``URDF_DYN_PLOT_WORKER`` not 0; never in a sweep's Dask worker), on a machine of two cores or more;
- when the child would not compile kernels beside the job (``numba_cache.kernels_ready``: the main job's
  kernels are in the cache, or a first run's compile workers are compiling them — the child then waits for
  them as the GIF's process does, ``cli.compile_ahead``). On a cold kernel cache without those workers the
  child would compile the same kernels as the job, on the same cores.

Elsewhere ``start`` returns None and the caller computes as before. The child ignores SIGINT (a Ctrl-C is the
job's: it ends its children), keeps the job's warning filters, and leaves with ``os._exit`` once its answer is
sent (no interpreter teardown, no exit hooks inherited from the job's thread pools). ``close()`` ends the
children still running (the job failed or was interrupted)."""
from __future__ import annotations

__all__ = ["Beside", "Pending", "TIMEOUT"]

#: [s] the longest ``take`` waits for a child's answer before computing the result itself (a first run's child
#: waits for compile workers first: ``cli.compile_ahead.FORKED_WAIT`` is 300 s)
TIMEOUT = 900.0


class Pending:
    """One computation running in a forked process (``Beside.start``)."""

    def __init__(self, proc, conn):
        self._proc, self._conn = proc, conn
        self.given = None       # after ``take``: whether the child gave the result (False: computed here)

    def take(self, fallback, timeout: float | None = None):
        """The child's result; ``fallback()`` (computed here) when it gave none within ``timeout`` seconds
        (default ``TIMEOUT``). Ends the child."""
        kind = value = None
        if self._conn is not None:
            try:
                if self._conn.poll(TIMEOUT if timeout is None else timeout):
                    kind, value = self._conn.recv()
            except Exception:  # noqa: BLE001 - died without a word (EOFError, OSError) or a result that cannot
                kind = None    # be unpickled here: computed here instead
            self._end(kill=kind != "ok")
        self.given = kind == "ok"
        return value if self.given else fallback()

    def _end(self, kill=False):
        if self._proc is not None:
            if kill and self._proc.is_alive():
                self._proc.kill()
            self._proc.join(5.0)
            if self._proc.is_alive():               # answered, then stuck on its way out: ended
                self._proc.kill()
                self._proc.join()
        if self._conn is not None:
            self._conn.close()
        self._proc = self._conn = None

    @property
    def pid(self):
        """The child's process id (None once it has been ended or waited for)."""
        return self._proc.pid if self._proc is not None else None

    @property
    def alive(self) -> bool:
        """Whether the child process is still there (not exited, not ended)."""
        return self._proc is not None and self._proc.is_alive()


class Beside:
    """The computations a job started in forked processes. ``allowed``: whether ``start`` forks here (checked
    when the job starts; the kernels' readiness again at each ``start``)."""

    def __init__(self):
        import os

        from urdf_dyn.reports.plotting import worker_allowed
        self.allowed = (os.cpu_count() or 1) >= 2 and worker_allowed()
        self._pending: list = []

    def start(self, fn) -> Pending | None:
        """Fork a process that computes ``fn()`` (a closure: it is not pickled) and sends the result; None
        where no process is forked (the module docstring's rules, or the fork failed): the caller computes
        it."""
        from urdf_dyn.numba_cache import kernels_ready
        if not self.allowed or not kernels_ready():
            return None
        import multiprocessing
        import warnings

        from urdf_dyn.processes import forking
        conn = child_end = None
        try:
            ctx = multiprocessing.get_context("fork")
            conn, child_end = ctx.Pipe(duplex=False)
            filters = list(warnings.filters)         # the child's, not the ones set around the fork below
            proc = ctx.Process(target=_child, args=(fn, child_end, conn, filters), daemon=True,
                               name="urdf-dyn-beside")
            with forking():
                proc.start()
        except Exception:  # noqa: BLE001 - no process support here: the caller computes it
            for end in (conn, child_end):
                if end is not None:
                    end.close()
            return None
        child_end.close()
        p = Pending(proc, conn)
        self._pending.append(p)
        return p

    def close(self):
        """End the children still running (a result not taken is one the job no longer needs)."""
        for p in self._pending:
            p._end(kill=True)
        self._pending = []


def _child(fn, conn, parent_end, filters):
    """The forked process: ``fn()``, its result sent as ("ok", result), or ("failed", None) when it raised or
    cannot be pickled (the job then computes it and says why); then ``os._exit``."""
    import signal
    import warnings
    code = 0
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)     # the job's Ctrl-C: the job ends this process
        warnings.filters[:] = filters                   # the job's own (the fork ran inside catch_warnings)
        getattr(warnings, "_filters_mutated", lambda: None)()
        parent_end.close()
        from urdf_dyn.collector import freeze
        freeze()                                    # the job's heap, out of the collector's reach here
        try:
            out = ("ok", fn())
        except BaseException:  # noqa: BLE001 - the job computes it again and raises the real error
            out = ("failed", None)
        try:
            conn.send(out)          # pickled whole before a byte is written: a failure leaves the pipe empty
        except Exception:  # noqa: BLE001 - an unpicklable result (or the job has ended): the job computes it
            conn.send(("failed", None))
    except BaseException:  # noqa: BLE001 - the job has ended, or its answer cannot be sent: it computes it
        code = 1
    finally:
        from urdf_dyn.processes import leave
        leave(code)
