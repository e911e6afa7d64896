"""The first run of a machine compiles its kernels in worker processes, ahead of the job that needs them.

numba compiles a kernel on its first call, in the calling process, one at a time: the first run of the main
job spent most of its minute that way (``benchmarks/RESULTS_first_minute.md``). ``start()`` instead hands the
kernels the main job compiles (``cli.kernel_list``, recorded by ``benchmarks/first_run_profile.py``, each with
its exact signature and the kernels it calls) to a pool of worker processes (one per core), each
kernel once its callees are in numba's cache, the longest chain of compile seconds first (``_longest_chain_first``); the job runs on meanwhile, and a kernel it
calls before a worker has finished it waits for that worker (``numba_cache.on_miss``) and then loads it from
the cache, instead of compiling it a second time. The bar of ``cli.compiling`` names the kernel waited for.
The workers are forked from the job once it has imported numba and loaded numba's typing and target contexts
(``_fork_here``: where a plot worker may be forked and no other thread runs), so that each starts compiling
with them instead of importing and loading them again (≈ 0.9 CPU-s a worker: the pool's CPU seconds for the
list 24.0–26.3 spawned against 21.1–24.6 forked, in turn, benchmarks/RESULTS_first_minute.md); elsewhere
they are spawned.
A process forked from the job (the GIF's, the recording's) waits too, for the kernel's index file in the cache
folder, while a worker lives and has not given the kernel up (``compile_ahead.failed`` lists those).

Only when the kernel cache is cold: a marker file in ``NUMBA_CACHE_DIR`` says that the whole list is cached
(the folder is keyed by the kernel modules' sources, so an edit starts over); without it, only the kernels
without an index file there are handed to the pool (a first run that ended before its workers did leaves a few). A kernel not in the
list, or whose worker failed, is compiled by the job as before. **On by default when the machine has room**: at least two
cores and 1.5 of them idle when the first run starts (``_room``; ``URDF_DYN_COMPILE_AHEAD=on`` forces it, ``off`` turns it
off). On this 2-core machine, quiet (load 0.9–1.2), the main job's first run took 47.4 s with it against 64.7 s without; at
load ≈ 2.7 it was slower (81–92 s against 64–70 s), hence the gate (benchmarks/RESULTS_first_minute.md). The workers are ended at exit (those still compiling kernels this job never called).
"""
from __future__ import annotations

import atexit
import importlib
import os
import threading
import time

from urdf_dyn.cores import idle_cores as _idle_cores
from urdf_dyn.numba_cache import MARKER  # the marker's one name, shared with jobs.beside's check

__all__ = ["start", "CompileAhead", "compile_one", "plain"]

_current = None


def plain(t):
    """A numba type in ``kernel_list``'s plain form: a scalar's name, ``"dtype ndim layout[ ro]"`` for an array
    (ro: read-only), a list for a tuple; None for any other type (such a signature is not listed)."""
    from numba.core import types
    if isinstance(t, types.Array):
        return f"{t.dtype} {t.ndim} {t.layout}" + (" ro" if not t.mutable else "")
    if isinstance(t, (types.Integer, types.Float, types.Boolean)):
        return str(t)
    if isinstance(t, types.BaseTuple):
        items = [plain(x) for x in t.types]
        return None if any(x is None for x in items) else items
    return None


def _type(t):
    """A numba type from its plain form (``plain``)."""
    from numba.core import types
    if isinstance(t, list):
        return types.BaseTuple.from_types([_type(x) for x in t])
    parts = t.split()
    if len(parts) == 1:
        return getattr(types, parts[0])
    return types.Array(getattr(types, parts[0]), int(parts[1]), parts[2], readonly=len(parts) > 3)


def compile_one(module: str, qualname: str, sig) -> float:
    """Compile ``module.qualname`` for ``sig`` (``kernel_list``'s form) into numba's cache, in a worker;
    returns the seconds it took."""
    t0 = time.perf_counter()
    obj = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    obj.compile(tuple(_type(t) for t in sig))
    return time.perf_counter() - t0


def _worker_init(forked: bool = False):
    """A worker's start. Its end is ``processes.leave`` (``processes.leave_first``): its kernels are in numba's
    cache and its answers sent when the pool sends it its sentinel, so it leaves without the interpreter's
    teardown of its compiler state (≈ 1 CPU-s per worker at the end of every first run while the job waited
    to join them) and, forked, before the exit hooks it inherited from the job's thread pools run. Spawned:
    urdf_dyn imported (``NUMBA_CACHE_DIR``, as in the job). Forked from the job (``_fork_here``): what it
    inherited that is the job's own is dropped — the compile bar's listener (the job draws the bar) and the
    miss hook — and the inherited heap is moved out of the collector's reach (``collector.freeze``)."""
    os.environ["URDF_DYN_COMPILE_AHEAD"] = "off"     # a worker never starts a pool of its own
    from urdf_dyn.processes import leave_first
    leave_first()
    if not forked:
        import urdf_dyn  # noqa: F401
        return
    try:                        # an initializer that raises breaks the pool: the job would compile every kernel
        from urdf_dyn import numba_cache
        from urdf_dyn.collector import freeze
        numba_cache.forget_listeners()
        numba_cache.on_miss(None)
        freeze()
    except Exception:  # noqa: BLE001 - what is left is cosmetic: a bar drawn twice, a slower collector
        pass


class CompileAhead:
    """The pool and its schedule. ``units``: [(name, module, qualname, sig, callees, seconds)] in the order the
    job calls them; a unit is submitted once every listed callee that is itself a unit is done."""

    def __init__(self, units, workers: int, bar=None, marker: str | None = None):
        from concurrent.futures import ProcessPoolExecutor
        import multiprocessing
        self.units, self.pid = units, os.getpid()     # a forked child (plots, GIF, recording) waits on the cache
        self.state = {i: "waiting" for i in range(len(units))}     # waiting, running, done, failed
        self.by_name: dict = {}
        for i, u in enumerate(units):
            self.by_name.setdefault(u[0], []).append(i)
        self.cond = threading.Condition()
        self.bar, self.marker = bar, marker
        forked = _fork_here()
        if forked:
            _load_numba()
            forked = _fork_here()               # loading imported more: still no other Python thread
        self.pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork" if forked else "spawn"),
                                        initializer=_worker_init, initargs=(forked,))
        self.forked = forked
        self.workers = workers
        self.order = _longest_chain_first(units)
        from urdf_dyn.processes import forking
        with forking(), self.cond:             # the first submit forks every worker (a fork pool starts all)
            self._submit_ready()
        self.worker_pids = tuple(getattr(self.pool, "_processes", {}) or ())   # seen by a process forked later

    def _ready(self, i) -> bool:
        return all(all(self.state[j] in ("done", "failed") for j in self.by_name.get(c, ()))
                   for c in self.units[i][4] if c != self.units[i][0])

    def _submit_ready(self):
        """Submit the waiting units whose callees are done, at most one per free worker (so that a unit that
        became ready is not queued behind ones submitted before it), in ``self.order``."""
        running = sum(1 for s in self.state.values() if s == "running")
        for i in self.order:
            if running >= self.workers:
                break
            if self.state[i] == "waiting" and self._ready(i):
                self.state[i] = "running"
                running += 1
                _, mod, qual, sig = self.units[i][:4]
                try:
                    fut = self.pool.submit(compile_one, mod, qual, sig)
                except RuntimeError:            # the pool is shut down (exit)
                    self.state[i] = "failed"
                    continue
                fut.add_done_callback(lambda f, i=i: self._finished(i, f))

    def _finished(self, i, fut):
        with self.cond:
            self.state[i] = "failed" if fut.cancelled() or fut.exception() is not None else "done"
            if self.state[i] == "failed":
                _note_failed(self.units[i][0])
            self._submit_ready()
            self.cond.notify_all()
            if self.marker and all(s == "done" for s in self.state.values()):
                _write_marker(self.marker)

    def wait_for(self, py_func) -> bool:
        """Wait until the units of ``py_func`` (a kernel numba did not find in the cache) are compiled; True if
        there were any not done yet."""
        if py_func is None:
            return False
        name = f"{py_func.__module__}.{py_func.__qualname__}"
        idx = self.by_name.get(name)
        if not idx:
            return False
        if os.getpid() != self.pid:
            return self._wait_forked(idx)
        with self.cond:
            if all(self.state[i] in ("done", "failed") for i in idx):
                return False
            done = sum(1 for s in self.state.values() if s in ("done", "failed"))
            if self.bar is not None:
                w = f"{self.workers} worker processes" if self.workers > 1 else "a worker process"
                self.bar.start(f"{name.removeprefix('urdf_dyn.')} (in {w}, {done} of {len(self.units)} kernels done)")
            try:
                while not all(self.state[i] in ("done", "failed") for i in idx):
                    self.cond.wait()
            finally:
                if self.bar is not None:
                    self.bar.end()
        return True

    def _wait_forked(self, idx) -> bool:
        """In a process forked from the job (the GIF's or the recording's, ``jobs.outputs``), which cannot see
        the pool's state: wait until the worker has written the kernel's index file into numba's cache
        folder, as long as a worker process is alive. Without this the forked process compiled the kernels it
        met first (the loop kernels, the GIF's palette mapping: ≈ 8 CPU-s) a second time, beside the workers,
        on the same cores."""
        folder = os.environ.get("NUMBA_CACHE_DIR")
        pids = self.worker_pids
        if not folder or not pids:
            return False
        units = [self.units[i] for i in idx]
        end = time.monotonic() + FORKED_WAIT
        while not all(_cached(folder, u) for u in units):
            failed = _failed(folder)
            if not any(_alive(p) for p in pids) or time.monotonic() > end or any(u[0] in failed for u in units):
                return False        # the pool ended, gave it up or failed on it: compile it here
            time.sleep(0.05)
        return True

    def close(self):
        """End the workers (a kernel still compiling is one this job did not call)."""
        if os.getpid() != self.pid:
            return
        from urdf_dyn.numba_cache import on_miss
        on_miss(None)
        with self.cond:
            for i, s in self.state.items():
                if s in ("waiting", "running"):
                    _note_failed(self.units[i][0])
                if s == "waiting":
                    self.state[i] = "failed"
        procs = list((getattr(self.pool, "_processes", None) or {}).values())
        self.pool.shutdown(wait=False, cancel_futures=True)
        for p in procs:
            if p.is_alive():
                p.terminate()


def _fork_here() -> bool:
    """Whether the workers are forked: where a plot worker may be (``reports.plotting.worker_allowed``: Linux,
    the main thread of the main process; not with ``URDF_DYN_PLOT_WORKER=0``) and this process runs no other
    Python thread, which a fork would leave behind holding whatever lock it held. (The OS threads of
    OpenBLAS, which numpy and scipy start, are stopped by OpenBLAS's own fork handler; Python ≥ 3.12 counts
    them in its fork warning, which is why the forking submit ignores it.)"""
    from urdf_dyn.reports.plotting import worker_allowed
    return worker_allowed() and threading.active_count() == 1


def _load_numba():
    """numba imported and its typing and target contexts loaded here (what a process does before its first
    compilation or cache load; the job needs them anyway), for the forked workers to inherit."""
    from numba.core.registry import cpu_target
    cpu_target.typing_context.refresh()
    cpu_target.target_context.refresh()


def _longest_chain_first(units, unrecorded: float = 0.3) -> list:
    """The units' indices, the one with the longest chain of compile seconds to the end of the list first (its
    own seconds plus the longest chain among the units that call it: a caller compiles only once its callees
    are cached), ties in the job's order; ``unrecorded`` seconds for a unit the list gives none.

    In the job's order alone, the last chain (``loop_geometry`` → ``actuate`` → ``_actuation_samples``, ≈ 10 of
    the list's 30 CPU-s) started late and one worker idled for seconds at the end while the other compiled
    it; longest chain first, the two workers finish together, Hu's highest-level-first list schedule
    (T. C. Hu, Parallel sequencing and assembly line problems, Oper. Res. 9(6), 1961). The job waits longer for its first kernels, but it
    computes little between them (≈ 2 s of the first job), and the pool ends ≈ 3 s sooner."""
    index = {u[0]: i for i, u in enumerate(units)}
    callers = [[] for _ in units]
    for j, u in enumerate(units):
        for c in u[4]:
            if c != u[0] and c in index:
                callers[index[c]].append(j)
    chain = [0.0] * len(units)
    for i in reversed(_callees_first(units, index)):
        own = units[i][5] if len(units[i]) > 5 and units[i][5] > 0 else unrecorded
        chain[i] = own + max((chain[j] for j in callers[i]), default=0.0)
    return sorted(range(len(units)), key=lambda i: (-chain[i], i))


def _callees_first(units, index) -> list:
    """The units' indices with every unit after the units it calls (a depth-first post-order)."""
    out, seen = [], set()

    def visit(i):
        if i in seen:
            return
        seen.add(i)
        for c in units[i][4]:
            if c != units[i][0] and c in index:
                visit(index[c])
        out.append(i)
    for i in range(len(units)):
        visit(i)
    return out


def _units():
    from urdf_dyn.cli.kernel_list import GROUPS
    out = []
    for _, kernels in GROUPS:
        for k in kernels:
            mod, qual, sig, callees = k[:4]
            out.append((f"{mod}.{qual}", mod, qual, sig, tuple(callees), k[4] if len(k) > 4 else 0.0))
    return out


FAILED = "compile_ahead.failed"   # in NUMBA_CACHE_DIR: the kernels a worker failed on or the pool gave up
FORKED_WAIT = 300.0              # [s] the longest a forked process waits for a worker's kernel


def _note_failed(name: str):
    folder = os.environ.get("NUMBA_CACHE_DIR")
    if folder:
        try:
            with open(os.path.join(folder, FAILED), "a") as f:
                f.write(name + "\n")
        except OSError:
            pass


def _failed(folder: str) -> set:
    try:
        with open(os.path.join(folder, FAILED)) as f:
            return set(f.read().split())
    except OSError:
        return set()


def _alive(pid: int) -> bool:
    """Whether process ``pid`` exists (signal 0 asks without sending)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:             # another user's process: it exists
        return True
    return True


def _cached(folder: str, unit) -> bool:
    """Whether numba's cache folder has an index file of the unit's kernel (numba names it
    ``<module's last part>.<qualname>-<line>.pyXY.nbi``, in a subfolder per source folder)."""
    import glob
    mod, qual = unit[1], unit[2]
    pattern = os.path.join(glob.escape(folder), "**", glob.escape(f"{mod.rsplit('.', 1)[-1]}.{qual}") + "-*.nbi")
    return bool(glob.glob(pattern, recursive=True))


def _write_marker(path: str):
    try:
        with open(path, "w") as f:
            f.write("the kernels of urdf_dyn.cli.kernel_list are in this cache\n")
    except OSError:
        pass


def _mode() -> str:
    """``URDF_DYN_COMPILE_AHEAD``: "on" (also 1, yes), "off" (0, no) or "auto" (the default, also empty). Any
    other value (a typo such as ``of``) is said in a RuntimeWarning that names it, and read as "auto"."""
    raw = os.environ.get("URDF_DYN_COMPILE_AHEAD", "auto")
    mode = raw.strip().lower()
    if mode in ("on", "1", "yes"):
        return "on"
    if mode in ("off", "0", "no"):
        return "off"
    if mode not in ("auto", ""):
        import warnings
        warnings.warn(f"URDF_DYN_COMPILE_AHEAD={raw!r} is none of on, off, auto (or 1, 0, yes, no): read as auto",
                      RuntimeWarning, stacklevel=2)
    return "auto"


def _room() -> bool:
    """Auto mode: at least two cores, and at least 1.5 of them idle now besides this job (measured over 0.2 s
    on a first run only; where that cannot be measured, the 1-minute load average under the cores less one
    half). Workers that compete with other jobs for the cores made the first run slower, not faster; the
    load average alone also counted the user's own runs of the minute before, which have ended
    (benchmarks/RESULTS_first_minute.md)."""
    cores = os.cpu_count() or 1
    if cores < 2:
        return False
    idle = _idle_cores()
    if idle is not None:
        return idle >= 1.5
    try:
        return os.getloadavg()[0] < cores - 0.5
    except (OSError, AttributeError):       # no load average either: the cores decide
        return True


def start(bar=None) -> CompileAhead | None:
    """Start the pool if the kernel cache is cold (no marker) and it is on, or auto with room (``_room``); the job's cache misses
    then wait for it. Returns the pool, or None."""
    global _current
    mode = _mode()
    if mode == "off":
        return None
    if _current is not None and _current.pid == os.getpid():
        return _current         # one pool per process (a second job of the same process, e.g. in tests)
    folder = os.environ.get("NUMBA_CACHE_DIR")
    if not folder:
        return None
    marker = os.path.join(folder, MARKER)
    if os.path.exists(marker) or (mode == "auto" and not _room()):
        return None
    try:
        os.makedirs(folder, exist_ok=True)
        units = [u for u in _units() if not _cached(folder, u)]
    except (OSError, ImportError):
        return None
    if not units:           # all there (a run that ended before its workers did): nothing to start
        _write_marker(marker)
        return None
    try:
        os.remove(os.path.join(folder, FAILED))      # a new pool: what an earlier one gave up is tried again
    except OSError:
        pass
    from urdf_dyn.numba_cache import on_miss
    try:
        ahead = _current = CompileAhead(units, max(1, min(os.cpu_count() or 1, 8, len(units))), bar, marker)
    except Exception:  # noqa: BLE001 - no process can start here (fork's EAGAIN/ENOMEM, ...): the job compiles
        return None
    on_miss(ahead.wait_for)
    atexit.register(ahead.close)
    return ahead
