"""The sizing report's plot worker (urdf_dyn.reports.plotting.PlotWorker): a forked process that draws
the plots while the job computes. Its PNGs must be the bytes the job's own process draws, a plot's error must
reach the caller, and it must not start where it cannot run safely (another thread, a child process, or
URDF_DYN_PLOT_WORKER=0)."""
import sys
import threading

import numpy as np
import pytest

from urdf_dyn.reports.plotting import PlotWorker
from urdf_dyn.reports.excavator_plots import plot_soil
from urdf_dyn.machines.loads import SoilLoads
from urdf_dyn.machines.soil import soil_cutting, soil_preset

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the worker is forked: Linux only")


def _soil_info():
    t = np.linspace(0.0, 4.0, 401)
    edge = np.column_stack([0.5 * t, 0 * t, -0.3 * np.sin(np.pi * t / 4)])
    face = np.tile([-0.51, 0.0, 0.86], (len(t), 1))
    soil = soil_preset("clay")
    cut = soil_cutting(t, edge, face, soil, 0.0, 1.3, 1.19)
    return t, SoilLoads({}, soil, cut, soil.density * cut.volume, "bucket", np.ones(len(t), bool), edge)


@linux_only
def test_worker_draws_the_bytes_the_caller_draws(tmp_path, monkeypatch):
    monkeypatch.delenv("URDF_DYN_PLOT_WORKER", raising=False)
    t, info = _soil_info()
    w = PlotWorker()
    assert w.parallel
    out = w.submit(tmp_path / "a.png", plot_soil, t, info, tmp_path / "a.png", {"dig": (0.0, 4.0)})
    assert out == str(tmp_path / "a.png")
    w.wait()
    assert not w.parallel                                   # wait() ends the worker
    plot_soil(t, info, tmp_path / "b.png", {"dig": (0.0, 4.0)})
    a, b = (tmp_path / "a.png").read_bytes(), (tmp_path / "b.png").read_bytes()
    assert len(a) > 10_000 and a == b


@linux_only
def test_two_workers_draw_the_callers_bytes_each(tmp_path, monkeypatch):
    """Two worker processes (PLOT_PROCESSES) draw at once; every PNG is still the caller's bytes."""
    import os
    monkeypatch.delenv("URDF_DYN_PLOT_WORKER", raising=False)
    t, info = _soil_info()
    w = PlotWorker(processes=2)
    assert w.parallel and w._ex._max_workers == min(2, os.cpu_count() or 1)
    for k in range(4):
        w.submit(tmp_path / f"w{k}.png", plot_soil, t, info, tmp_path / f"w{k}.png", {"dig": (0.0, 4.0)})
    w.wait()
    plot_soil(t, info, tmp_path / "own.png", {"dig": (0.0, 4.0)})
    own = (tmp_path / "own.png").read_bytes()
    assert all((tmp_path / f"w{k}.png").read_bytes() == own for k in range(4))


@linux_only
def test_a_plot_error_reaches_the_caller(tmp_path, monkeypatch):
    monkeypatch.delenv("URDF_DYN_PLOT_WORKER", raising=False)
    w = PlotWorker()
    assert w.parallel
    w.submit(tmp_path / "x.png", plot_soil, None, None, tmp_path / "x.png")
    with pytest.raises(AttributeError):          # no soil record to draw
        w.wait()
    assert not (tmp_path / "x.png").exists()


def test_no_worker_where_it_cannot_run_safely(tmp_path, monkeypatch):
    monkeypatch.setenv("URDF_DYN_PLOT_WORKER", "0")
    assert not PlotWorker().parallel
    monkeypatch.delenv("URDF_DYN_PLOT_WORKER")
    seen = []
    th = threading.Thread(target=lambda: seen.append(PlotWorker().parallel))  # e.g. a Dask thread worker
    th.start()
    th.join()
    assert seen == [False]
    assert not PlotWorker(parallel=False).parallel
    # without a worker the plot is drawn at submit()
    t, info = _soil_info()
    PlotWorker(parallel=False).submit(tmp_path / "c.png", plot_soil, t, info, tmp_path / "c.png")
    assert (tmp_path / "c.png").stat().st_size > 10_000


def _logged_soil(log, *args):
    """plot_soil(*args), after appending this process's id to ``log`` (who drew it)."""
    import os
    with open(log, "a") as f:
        f.write(f"{os.getpid()}\n")
    plot_soil(*args)


def _logged_plots(tmp_path, monkeypatch, n):
    """A worker with ``n`` soil plots submitted (p0.png ...), each logging who drew it to who.txt, and a core
    forced idle (``caller_may_draw``): (worker, log path, (t, info))."""
    from urdf_dyn.reports import plotting
    monkeypatch.delenv("URDF_DYN_PLOT_WORKER", raising=False)
    monkeypatch.setattr(plotting, "caller_may_draw", lambda: True)
    t, info = _soil_info()
    log = tmp_path / "who.txt"
    w = PlotWorker(processes=1)
    assert w.parallel
    for k in range(n):
        w.submit(tmp_path / f"p{k}.png", _logged_soil, log, t, info, tmp_path / f"p{k}.png", {"dig": (0.0, 4.0)})
    return w, log, (t, info)


@linux_only
def test_the_waiting_caller_draws_what_no_worker_began(tmp_path, monkeypatch):
    """With a core idle (forced here) the caller draws the plots the worker has not begun, from the last back:
    every plot is drawn once, by one of the two, into the bytes the caller draws alone."""
    import os
    w, log, (t, info) = _logged_plots(tmp_path, monkeypatch, 8)
    w.wait()
    who = log.read_text().split()
    assert len(who) == 8                                     # each plot drawn once
    assert str(os.getpid()) in who and set(who) != {str(os.getpid())}   # by both: the worker began the first
    plot_soil(t, info, tmp_path / "own.png", {"dig": (0.0, 4.0)})
    own = (tmp_path / "own.png").read_bytes()
    assert all((tmp_path / f"p{k}.png").read_bytes() == own for k in range(8))


@linux_only
def test_a_caller_without_an_idle_core_leaves_every_plot_to_the_worker(tmp_path, monkeypatch):
    """No core idle (forced here; the job's GIF and recording processes at work): every plot is drawn by the
    worker, none by the caller."""
    import os
    from urdf_dyn.reports import plotting
    w, log, _ = _logged_plots(tmp_path, monkeypatch, 4)
    monkeypatch.setattr(plotting, "caller_may_draw", lambda: False)
    w.wait()
    who = log.read_text().split()
    assert len(who) == 4 and str(os.getpid()) not in who


def _fails(path):
    raise ValueError(f"{path}: drawn by the caller")


@linux_only
def test_the_first_submitted_error_is_raised_when_the_caller_draws(tmp_path, monkeypatch):
    from urdf_dyn.reports import plotting
    monkeypatch.delenv("URDF_DYN_PLOT_WORKER", raising=False)
    monkeypatch.setattr(plotting, "caller_may_draw", lambda: True)
    t, info = _soil_info()
    w = PlotWorker(processes=1)
    w.submit(tmp_path / "a.png", plot_soil, None, None, tmp_path / "a.png")               # AttributeError
    for k in range(4):
        w.submit(tmp_path / f"b{k}.png", plot_soil, t, info, tmp_path / f"b{k}.png")
    w.submit(tmp_path / "c.png", _fails, tmp_path / "c.png")                # drawn by the caller, first
    with pytest.raises(AttributeError):                      # the first submitted error, not the caller's
        w.wait()
    assert not w.parallel


def test_the_caller_draws_only_with_a_core_idle_now(monkeypatch):
    """Measured now (cores idle over 0.05 s), not from the 1-minute load average, which still counts a first
    run's ended compile workers; the load average only where the idle cores cannot be measured."""
    import os
    from urdf_dyn import cores
    from urdf_dyn.reports import plotting
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr(os, "getloadavg", lambda: (2.7, 2.7, 2.7))             # the job's own minute
    monkeypatch.setattr(cores, "idle_cores", lambda interval=0.2: 0.95)
    assert plotting.caller_may_draw()
    monkeypatch.setattr(cores, "idle_cores", lambda interval=0.2: 0.2)        # its GIF and recording at work
    assert not plotting.caller_may_draw()
    monkeypatch.setattr(cores, "idle_cores", lambda interval=0.2: None)       # no /proc/stat: the load average
    assert not plotting.caller_may_draw()
    monkeypatch.setattr(os, "getloadavg", lambda: (1.8, 1.0, 1.0))
    assert plotting.caller_may_draw()
    monkeypatch.setattr(plotting, "CALLER_DRAWS", False)
    monkeypatch.setattr(cores, "idle_cores", lambda interval=0.2: 2.0)
    assert not plotting.caller_may_draw()


def test_idle_cores_reads_the_machine_now():
    """Between 0 and the machine's cores, or None where there is no /proc/stat."""
    import os
    from urdf_dyn.cores import idle_cores
    idle = idle_cores(0.05)
    if idle is None:
        pytest.skip("no /proc/stat on this system")
    assert 0.0 <= idle <= (os.cpu_count() or 1) + 1e-9
