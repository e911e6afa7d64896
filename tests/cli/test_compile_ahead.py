"""Compiling ahead in worker processes (``urdf_dyn.cli.compile_ahead``): the kernel list names real kernels with
signatures numba accepts, and a kernel a worker compiles is loaded by the job from the cache, not compiled a
second time."""
from __future__ import annotations

import importlib
import textwrap
import warnings

import numba
import pytest
from numba.core import types

from urdf_dyn.cli import compile_ahead
from urdf_dyn.cli.kernel_list import GROUPS
from urdf_dyn.reports.plotting import worker_allowed


def test_every_listed_kernel_is_a_compiled_kernel_with_a_signature_numba_reads():
    seen = 0
    for _, kernels in GROUPS:
        for mod, qual, sig, callees, *_ in kernels:
            if mod.startswith("urdf_dyn_viewer"):
                pytest.importorskip("urdf_dyn_viewer.gif")
            obj = importlib.import_module(mod)
            for part in qual.split("."):
                obj = getattr(obj, part)
            assert isinstance(obj, numba.core.registry.CPUDispatcher), (mod, qual)
            ts = [compile_ahead._type(t) for t in sig]
            assert [compile_ahead.plain(t) for t in ts] == sig          # the plain form round-trips
            assert len(ts) == obj.py_func.__code__.co_argcount, (mod, qual)
            seen += 1
    assert seen >= 30


def test_plain_forms_of_arrays_scalars_and_tuples():
    ro = types.Array(types.float64, 2, "C", readonly=True)
    assert compile_ahead.plain(ro) == "float64 2 C ro"
    assert compile_ahead.plain(types.Array(types.int64, 1, "A")) == "int64 1 A"
    assert compile_ahead.plain(types.UniTuple(types.float64, 2)) == ["float64", "float64"]
    assert compile_ahead._type(["int64", "float64 1 C"]) == types.Tuple(
        [types.int64, types.Array(types.float64, 1, "C")])
    assert compile_ahead.plain(types.unicode_type) is None                # not listed: compiled where called


@pytest.mark.parametrize("fork", [False, True], ids=["spawned", "forked"])
def test_a_kernel_compiled_ahead_is_loaded_by_the_job_not_compiled_again(tmp_path, monkeypatch, fork):
    from numba.core import event
    if fork and not worker_allowed():
        pytest.skip("no forked worker here (not Linux, or URDF_DYN_PLOT_WORKER=0)")
    monkeypatch.setattr(compile_ahead, "_fork_here", lambda: fork)

    from urdf_dyn import numba_cache
    name = f"ahead_kernel_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(textwrap.dedent("""
        from numba import njit

        @njit(cache=True)
        def twice(x):
            return 2.0 * x
    """))
    monkeypatch.syspath_prepend(str(tmp_path))          # the worker gets this sys.path too (spawned or forked)
    mod = importlib.import_module(name)
    numba_cache.install()
    here = []

    class Seen(event.Listener):
        def on_start(self, ev):
            here.append(getattr(ev.data["dispatcher"], "py_func", None))

        def on_end(self, ev):
            pass

    said = []

    class Bar:                                      # the bar of cli.compiling: told what the job waits for
        def start(self, what):
            said.append(what)

        def end(self):
            said.append("end")

    ahead = compile_ahead.CompileAhead([(f"{name}.twice", name, "twice", ["float64"], (), 0.0)], 1, Bar())
    numba_cache.on_miss(ahead.wait_for)
    lsn = Seen()
    event.register("numba:compile", lsn)
    try:
        assert mod.twice(3.0) == 6.0
        with ahead.cond:                            # the pool's thread marks the unit done
            assert ahead.cond.wait_for(lambda: ahead.state[0] != "running", 60)
    finally:
        event.unregister("numba:compile", lsn)
        ahead.close()
    assert ahead.state == {0: "done"}
    assert mod.twice.py_func not in here            # loaded from the worker's cache entry
    assert not ahead.wait_for(mod.twice.py_func)    # done: nothing to wait for
    waited = [f"{name}.twice (in a worker process, 0 of 1 kernels done)", "end"]
    # a spawned worker needs ~1 s to start, so the job's call always waits for it; a forked one may have
    # written the cache entry before the call, which then loads it without waiting
    assert said == waited or (fork and said == []), said


def test_no_pool_unless_on_nor_when_marked_or_every_kernel_is_cached(tmp_path, monkeypatch):
    monkeypatch.setattr(compile_ahead, "_current", None)
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("URDF_DYN_COMPILE_AHEAD", raising=False)
    monkeypatch.setattr(compile_ahead, "_idle_cores", lambda: 0.4)
    assert compile_ahead.start() is None                   # auto, and a busy machine: no pool
    monkeypatch.setattr(compile_ahead.os, "cpu_count", lambda: 1)
    monkeypatch.setattr(compile_ahead, "_idle_cores", lambda: 1.0)
    assert compile_ahead.start() is None                   # auto, and one core: no pool
    monkeypatch.setenv("URDF_DYN_COMPILE_AHEAD", "off")
    assert compile_ahead.start() is None
    monkeypatch.setenv("URDF_DYN_COMPILE_AHEAD", "on")
    (tmp_path / compile_ahead.MARKER).write_text("")
    assert compile_ahead.start() is None                   # marked: nothing is looked at
    (tmp_path / compile_ahead.MARKER).unlink()
    units = compile_ahead._units()
    for _, mod, qual, *_ in units:                          # an index file of every kernel, as numba names it
        sub = tmp_path / mod.rsplit(".", 1)[0].replace(".", "_")
        sub.mkdir(exist_ok=True)
        (sub / f"{mod.rsplit('.', 1)[-1]}.{qual}-12.py311.nbi").write_text("")
    assert all(compile_ahead._cached(str(tmp_path), u) for u in units)
    assert compile_ahead.start() is None                    # all cached: no pool, and the marker written
    assert (tmp_path / compile_ahead.MARKER).exists()
    (tmp_path / "urdf_dyn_algorithms" / "_kernels.split_tree-12.py311.nbi").unlink()
    assert [u[2] for u in units if not compile_ahead._cached(str(tmp_path), u)] == ["split_tree"]


def _forked_view(tmp_path, monkeypatch, worker_pids):
    """A CompileAhead as a process forked from the job sees it: another pid, the pool's worker pids."""
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    ahead = compile_ahead.CompileAhead.__new__(compile_ahead.CompileAhead)
    unit = ("urdf_dyn.algorithms._kernels.split_tree", "urdf_dyn.algorithms._kernels", "split_tree", [], (), 0.0)
    ahead.units, ahead.by_name, ahead.pid, ahead.worker_pids = [unit], {unit[0]: [0]}, -1, tuple(worker_pids)
    from urdf_dyn.algorithms import _kernels
    return ahead, _kernels.split_tree.py_func


def test_a_forked_process_waits_for_the_workers_kernel_instead_of_compiling_it(tmp_path, monkeypatch):
    import os
    import threading
    import time
    ahead, f = _forked_view(tmp_path, monkeypatch, [os.getpid()])     # a live "worker"
    sub = tmp_path / "urdf_dyn_algorithms"

    def worker_writes_it():
        time.sleep(0.3)
        sub.mkdir()
        (sub / "_kernels.split_tree-12.py311.nbi").write_text("")

    t = threading.Thread(target=worker_writes_it)
    t0 = time.perf_counter()
    t.start()
    assert ahead.wait_for(f) is True                 # waited, then numba reads the cache once more
    assert time.perf_counter() - t0 >= 0.25
    t.join()


def test_a_forked_process_compiles_itself_when_the_pool_is_gone_or_gave_the_kernel_up(tmp_path, monkeypatch):
    import os
    import subprocess
    import sys
    import time
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()                                          # a pid that no longer runs
    ahead, f = _forked_view(tmp_path, monkeypatch, [p.pid])
    t0 = time.perf_counter()
    assert ahead.wait_for(f) is False                 # no worker alive: compile here, at once
    assert time.perf_counter() - t0 < 1.0
    ahead.worker_pids = (os.getpid(),)                # alive, but the kernel failed in its worker
    compile_ahead._note_failed(ahead.units[0][0])
    t0 = time.perf_counter()
    assert ahead.wait_for(f) is False
    assert time.perf_counter() - t0 < 1.0


def test_room_is_measured_now_not_from_the_minute_before(monkeypatch):
    import os
    monkeypatch.setattr(compile_ahead.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(compile_ahead.os, "getloadavg", lambda: (1.9, 1.9, 1.9))   # the user's last run, ended
    monkeypatch.setattr(compile_ahead, "_idle_cores", lambda: 1.9)
    assert compile_ahead._room()
    monkeypatch.setattr(compile_ahead, "_idle_cores", lambda: 0.6)                  # another job on a core
    assert not compile_ahead._room()
    monkeypatch.setattr(compile_ahead, "_idle_cores", lambda: None)                 # no /proc/stat
    assert not compile_ahead._room()                                                  # the load average decides
    monkeypatch.setattr(compile_ahead.os, "getloadavg", lambda: (0.3, 0.3, 0.3))
    assert compile_ahead._room()
    monkeypatch.undo()
    if os.path.exists("/proc/stat"):
        idle = compile_ahead._idle_cores(0.05)
        assert 0.0 <= idle <= (os.cpu_count() or 1) + 1e-9


@pytest.mark.parametrize("raw, want", [("on", "on"), (" YES ", "on"), ("0", "off"), ("off", "off"), ("", "auto"),
                                       ("auto", "auto")])
def test_the_switch_reads_its_values(monkeypatch, raw, want):
    monkeypatch.setenv("URDF_DYN_COMPILE_AHEAD", raw)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert compile_ahead._mode() == want


def test_a_typo_in_the_switch_is_said_not_silently_read_as_auto(monkeypatch):
    monkeypatch.setenv("URDF_DYN_COMPILE_AHEAD", "of")
    with pytest.warns(RuntimeWarning, match="URDF_DYN_COMPILE_AHEAD='of' is none of on, off, auto"):
        assert compile_ahead._mode() == "auto"


def test_the_pool_starts_the_longest_chain_first():
    """A unit's priority is its own seconds plus the longest chain of its callers': the chain a → b → c (each
    calling the one before) goes before the lone d although d is listed first, and a unit's callees always
    come before it (their chain is longer by their own seconds), in the real list too."""
    units = [("d", "m", "d", [], (), 1.5), ("a", "m", "a", [], (), 1.0), ("b", "m", "b", [], ("a", "b"), 1.0),
             ("c", "m", "c", [], ("b", "x"), 1.0), ("e", "m", "e", [], (), 0.0)]
    order = [units[i][0] for i in compile_ahead._longest_chain_first(units, unrecorded=0.25)]
    assert order == ["a", "b", "d", "c", "e"]         # chains 3, 2, 1.5, 1, 0.25
    real = compile_ahead._units()
    pos = {real[i][0]: k for k, i in enumerate(compile_ahead._longest_chain_first(real))}
    assert len(pos) == len(real)
    for name, _, _, _, callees, _ in real:
        assert all(pos[c] < pos[name] for c in callees if c in pos and c != name), name


def test_a_worker_ends_without_the_interpreters_teardown():
    """A compile worker (its initializer ``_worker_init``) leaves at its end without the interpreter's
    teardown of its heap (≈ 1 CPU-s per worker at the end of every first run, which the job waited for): a
    finaliser that the teardown would run does not run, what the worker wrote is flushed, its status is 0."""
    import subprocess
    import sys
    code = ("import sys\nfrom urdf_dyn.cli.compile_ahead import _worker_init\n"
            "class Late:\n    def __del__(self):\n        print('torn down', flush=True)\n"
            "keep = Late()\n_worker_init()\nsys.stdout.write('compiled')\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "compiled", r.stdout


FORKED = textwrap.dedent("""
    import os, sys, threading
    from pathlib import Path
    tmp, job = Path(sys.argv[1]), os.getpid()
    os.environ["NUMBA_CACHE_DIR"] = str(tmp / "cache")
    (tmp / "fork_kernel.py").write_text("from numba import njit\\n@njit(cache=True)\\ndef twice(x):\\n    return 2.0 * x\\n")
    sys.path.insert(0, str(tmp))

    def hook():                                # what concurrent.futures registers for each of its pools
        if os.getpid() != job:
            (tmp / "hook_ran_in_a_worker").write_text(str(os.getpid()))
    threading._register_atexit(hook)

    from numba.core import event
    from urdf_dyn import numba_cache
    from urdf_dyn.cli import compile_ahead

    class Told(event.Listener):                # in the compile bar's place: told of every compilation
        def on_start(self, ev):
            with open(tmp / "told.txt", "a") as f:
                f.write(str(os.getpid()) + "\\n")
        def on_end(self, ev):
            pass
    numba_cache.on_compile(Told())
    numba_cache.install()                      # registered with numba before the fork
    ahead = compile_ahead.CompileAhead([("fork_kernel.twice", "fork_kernel", "twice", ["float64"], (), 0.0)], 1)
    numba_cache.on_miss(ahead.wait_for)
    import fork_kernel
    assert fork_kernel.twice(3.0) == 6.0       # from the worker's cache entry (waited for, or found there)
    with ahead.cond:                           # the pool's thread marks the unit done
        assert ahead.cond.wait_for(lambda: ahead.state[0] != "running", 60)
    assert ahead.state == {0: "done"}
    workers = {str(p) for p in ahead.worker_pids}
    ahead.pool.shutdown(wait=True)             # each worker gets its sentinel and ends
    told = set((tmp / "told.txt").read_text().split()) if (tmp / "told.txt").exists() else set()
    print("OK", ahead.forked, len(workers), sorted(told & workers), str(job) in told,
          (tmp / "hook_ran_in_a_worker").exists())
""")


@pytest.mark.skipif(not worker_allowed(), reason="no forked worker here (not Linux, or URDF_DYN_PLOT_WORKER=0)")
def test_forked_workers_compile_without_the_jobs_bar_and_end_before_its_exit_hooks(tmp_path):
    """Forked from a job (a fresh interpreter, one thread), the pool's worker compiles the kernel the job then
    loads from the cache (the job compiles nothing: its listener is told of nothing in the job); the job's
    compile-bar listener, registered before the fork, is not told of the worker's compilation either (the
    job draws the bar); and the worker ends before the exit hooks it inherited from the job's thread pools
    run (``processes.leave_first``)."""
    import subprocess
    import sys
    r = subprocess.run([sys.executable, "-c", FORKED, str(tmp_path)], capture_output=True, text=True, timeout=180)
    assert r.returncode == 0, r.stderr
    assert "OK True 1 [] False False" in r.stdout, (r.stdout, r.stderr)
