"""Results computed beside the job: a computation that the job will need later, started now in a process
forked from the job, so that it runs on a core the job leaves idle.

The sizing job's geometry-only checks that take longest when they are not in the cache (the excavator's
stall envelopes and its out-of-plane cases: ≈ 2.3 and ≈ 2.2 s on one core, warm kernels) do not read the
motion. Computed after it, in the job's process, they and the plots drawn from them were the serial tail of
every run that does not find them in the cache: a first run, a run after an edit of a section they read,
``--no-cache``. ``Beside.start(fn)`` forks a process that computes ``fn()`` at once and sends the pickled
result back through a pipe; ``Pending.take(fallback)`` returns it. The child inherits the model, the plan and
every compiled kernel (nothing is pickled but the result); on a first run it waits for the kernels the job's
compile workers have not cached yet, as the GIF's process does (``cli.compile_ahead``).

Where the child cannot give a result — it raised, died, or its result could not be pickled — ``take`` calls
``fallback()`` in the job's process, which computes it there and raises the real error with its message (a
child never reports an error of its own). Processes are forked only where a plot worker may be
(``reports.plotting.worker_allowed``: Linux, the main thread of the main process, ``URDF_DYN_PLOT_WORKER`` not
0; never in a sweep's Dask worker) and on a machine of two cores or more; elsewhere ``start`` returns None
and the caller computes as before. ``close()`` ends the children still running (the job failed)."""
from __future__ import annotations

__all__ = ["Beside", "Pending"]


class Pending:
    """One computation running in a forked process (``Beside.start``)."""

    def __init__(self, proc, conn):
        self._proc, self._conn = proc, conn
        self.given = None       # after ``take``: whether the child gave the result (False: computed here)

    def take(self, fallback):
        """The child's result; ``fallback()`` (computed here) when it gave none. Waits for the child."""
        kind = value = None
        if self._conn is not None:
            try:
                kind, value = self._conn.recv()
            except (EOFError, OSError):            # the child died without a word
                kind = None
            except Exception:  # noqa: BLE001 - its result cannot be unpickled here: computed here instead
                kind = None
            self._end()
        self.given = kind == "ok"
        return value if self.given else fallback()

    def _end(self, kill=False):
        if self._proc is not None:
            if kill and self._proc.is_alive():
                self._proc.kill()
            self._proc.join()
        if self._conn is not None:
            self._conn.close()
        self._proc = self._conn = None

    @property
    def pid(self):
        """The child's process id (None once it has been waited for)."""
        return self._proc.pid if self._proc is not None else None


class Beside:
    """The computations a job started in forked processes. ``allowed``: whether ``start`` forks here."""

    def __init__(self):
        import os

        from urdf_dyn.reports.plotting import worker_allowed
        self.allowed = (os.cpu_count() or 1) >= 2 and worker_allowed()
        self._pending: list = []

    def start(self, fn) -> Pending | None:
        """Fork a process that computes ``fn()`` (a closure: it is not pickled) and sends the result; None
        where no process is forked (``allowed`` false, or the fork failed): the caller computes it."""
        if not self.allowed:
            return None
        import multiprocessing
        import sys
        import warnings
        try:
            ctx = multiprocessing.get_context("fork")
            conn, child_end = ctx.Pipe(duplex=False)
            for f in (sys.stdout, sys.stderr):      # the child must not write what is buffered again
                f.flush()
            proc = ctx.Process(target=_child, args=(fn, child_end, conn), daemon=True, name="urdf-dyn-beside")
            with warnings.catch_warnings():          # Python >= 3.12 warns of fork() beside threads
                warnings.simplefilter("ignore", DeprecationWarning)
                proc.start()
        except Exception:  # noqa: BLE001 - no process support here: the caller computes it
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


def _child(fn, conn, parent_end):
    """The forked process: ``fn()``, its result sent as ("ok", result), or ("failed", None) when it raised or
    cannot be pickled (the job then computes it and says why)."""
    from urdf_dyn.collector import freeze
    parent_end.close()
    freeze()                                        # the job's heap, out of the collector's reach here
    try:
        out = ("ok", fn())
    except BaseException:  # noqa: BLE001 - the job computes it again and raises the real error
        out = ("failed", None)
    try:
        conn.send(out)              # pickled whole before a byte is written: a failure leaves the pipe empty
    except Exception:  # noqa: BLE001 - an unpicklable result (or the job has ended): the job computes it
        try:
            conn.send(("failed", None))
        except Exception:  # noqa: BLE001 - the job has ended
            pass
    conn.close()
