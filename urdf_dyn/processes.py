"""How the processes a job starts end: ``leave(code)`` flushes the standard streams and calls ``os._exit``.

Every process a job forks or spawns — the plot workers (``reports.plotting``), the GIF's and the recording's
(``jobs.outputs``), the checks computed beside the job (``jobs.beside``), the first run's compile workers
(``cli.compile_ahead``) — ends this way once its work is answered, never through the interpreter's or
multiprocessing's own exit:

- a forked process inherits the exit hooks of the job's thread pools (``concurrent.futures`` registers one per
  pool with ``threading._register_atexit``); from Python 3.12.8 and 3.13.1 (gh-125451) such a hook takes a
  lock that the job's pool thread may have held at the fork, and the process, which the job joins, would
  never end;
- a compile worker's interpreter teardown of numba's compiler state took ≈ 1 CPU-s per worker at the end of
  every first run.

Its buffered output is written first, so nothing it printed is lost. ``forking()`` is what the job does
around each of those forks."""
from __future__ import annotations

import contextlib
import os
import sys
import warnings

__all__ = ["leave", "leave_first", "forking"]


def _flush():
    for f in (sys.stdout, sys.stderr):
        try:
            f.flush()
        except (OSError, ValueError, AttributeError):
            pass


def leave(code: int = 0):
    """Flush stdout and stderr, then end this process at once with status ``code`` (``os._exit``: no exit
    hooks, no finalizers, no interpreter teardown). Never returns."""
    _flush()
    os._exit(code)


@contextlib.contextmanager
def forking():
    """Around a fork from the job (``os.fork``, a fork-context process or pool, a forking Dask cluster):
    stdout and stderr flushed first, so that the child does not write again what is buffered here; and
    Python ≥ 3.12's DeprecationWarning of ``fork()`` beside other threads ignored inside — the job's own idle
    pools and OpenBLAS's OS threads (stopped by OpenBLAS's fork handler); the child does only the work it
    is forked for and ends with ``leave``."""
    _flush()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        yield


def leave_first():
    """In a forked worker of a ``concurrent.futures`` pool: have ``leave(0)`` run at its end before the exit
    hooks it inherited from the job's thread pools (``threading._register_atexit``, which runs them last
    registered first; the one hook that can block on a lock held at the fork, module docstring). Where this
    Python lacks that private hook, nothing is registered."""
    import threading
    register = getattr(threading, "_register_atexit", None)
    if register is not None:
        register(leave)
