"""Python's cyclic garbage collector during a job's bursts of allocation: ``raised()`` runs a block with
the youngest generation collected every ``THRESHOLDS[0]`` allocations instead of every 700 (``gc.set_threshold``,
the caller's thresholds restored after; never lowered), for a whole job (``launch.registry``, and every
command of the CLI: the processes a job forks, the plot worker, the GIF's and the recording's, inherit them)
and while numba compiles (``numba_cache``); ``paused()`` runs a block with the collector off (a report
plot); ``freeze()`` moves the heap out of the collector's reach at the start of each process a job forks and
when ``urdf-dyn`` ends.

Why: a job's heap holds some 2–3·10⁵ objects (numba, scipy, matplotlib, viser), and the default thresholds
collect the young generation every 700 allocations and the whole heap whenever ten middle collections have
passed and it has grown by a quarter. Measured with ``gc.callbacks`` on the warm main job (GIF and recording
included, 2 cores): 1.1 CPU-s of its four processes' ≈ 8 went to collecting (four full collections in the
job, two in each forked process); with these thresholds 0.46 CPU-s, one full collection, and the same peak
memory (259 MB for the job). numba's compiler makes millions of small objects in reference cycles (its IR):
while the main job's kernels compiled, the defaults ran ≈ 23 full collections, ≈ 4.7 of ≈ 32 CPU-s. The
middle and oldest thresholds stay Python's: a full collection still comes, only a hundred times less often."""
from __future__ import annotations

import contextlib
import gc
import threading

__all__ = ["THRESHOLDS", "raised", "paused", "freeze"]

#: ``gc.set_threshold`` inside ``raised()`` (module docstring); Python's default is (700, 10, 10)
THRESHOLDS = (10_000, 10, 10)

_lock = threading.Lock()
_depth = 0
_saved = None


@contextlib.contextmanager
def raised(thresholds=THRESHOLDS):
    """Run the block with the collector's thresholds at least ``thresholds`` (each the larger of the caller's
    and these); the thresholds found when the first of the blocks open at once began are restored when the
    last of them ends (blocks nest, and may run in several threads: the thresholds are the process's)."""
    global _depth, _saved
    with _lock:
        if _depth == 0:
            _saved = gc.get_threshold()
        _depth += 1
        gc.set_threshold(*(max(a, b) for a, b in zip(thresholds, gc.get_threshold())))
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                gc.set_threshold(*_saved)


@contextlib.contextmanager
def paused():
    """Run the block with the collector off (``gc.disable``), enabled again after if it was on: for a burst of
    objects in reference cycles that all die together (a report plot's figure, ``reports.plotting``), which
    the first allocation after the block then frees in one young-generation pass."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def freeze():
    """Move every object this process holds now to the collector's permanent generation (``gc.freeze``), so
    that no later collection traverses them again. Two moments call it:

    - the start of a process forked from a job (its plot worker, its GIF's and recording's processes, a first
      run's compile workers), as the ``gc`` module's documentation advises for a forked child: the job's heap
      is some 2–3·10⁵ objects, a full collection of it costs 0.1–0.15 CPU-s, and pyglet's GL import alone
      triggered one in the GIF's process (``gc.callbacks``, the warm main job); the child's collections then
      never write to the pages it shares with the job;
    - the end of ``urdf-dyn`` run as the program (``cli.main``; never for ``main(argv)`` called from Python:
      a test, a script that goes on): the collections the interpreter runs while it ends (``Py_FinalizeEx``,
      after clearing the modules' namespaces) then skip the heap. The warm main job's process took 0.52 s
      (0.42–0.55) from its command's end to its exit, 0.12 s (0.11–0.13) frozen, five runs each in turn.
      Every file the command writes is closed by then (``with`` blocks, atomic renames); what the freeze
      gives up is running ``__del__`` of objects left in reference cycles at exit, which the interpreter
      does not promise either."""
    gc.freeze()
