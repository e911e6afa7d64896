"""``jobs.beside``: a computation started in a forked process gives its result to the job; where the child
cannot (it raised, its result cannot be pickled) the job computes it itself; ``close`` ends a child the job no
longer waits for. And ``GeometryCache.ahead``: the later ``get`` with the same arguments takes the child's
result, other arguments are computed where they are asked for, and a result a tier holds is never started."""
import os
import time

import pytest

from urdf_dyn.jobs.beside import Beside
from urdf_dyn.jobs.geometry_cache import GeometryCache

pytestmark = pytest.mark.skipif(not Beside().allowed, reason="no forked process here (not Linux, one core, "
                                "or URDF_DYN_PLOT_WORKER=0)")


@pytest.fixture(autouse=True)
def _kernels_ready(monkeypatch):
    """These tests' children compile nothing: the kernels' readiness (``numba_cache.kernels_ready``, which a
    cold cache in this process fails) is not what they test, except where a test sets it."""
    import urdf_dyn.numba_cache as nc
    monkeypatch.setattr(nc, "kernels_ready", lambda: True)


def _here():
    raise AssertionError("computed in the job although the child gave its result")


def test_the_child_computes_the_result():
    b = Beside()
    p = b.start(lambda: ("pid", os.getpid(), [1.5, 2.5]))
    child = p.pid
    assert child is not None and child != os.getpid()
    assert p.take(_here) == ("pid", child, [1.5, 2.5])
    assert p.given is True
    b.close()


@pytest.mark.parametrize("fn", [lambda: 1 / 0, lambda: (lambda: None)], ids=["raises", "unpicklable"])
def test_the_job_computes_what_the_child_cannot_give(fn):
    b = Beside()
    p = b.start(fn)
    assert p.take(lambda: ("here", os.getpid())) == ("here", os.getpid())
    assert p.given is False
    b.close()


def test_close_ends_a_child_still_running():
    b = Beside()
    p = b.start(lambda: time.sleep(60))
    pid = p.pid
    t0 = time.perf_counter()
    b.close()
    assert time.perf_counter() - t0 < 10
    with pytest.raises(ProcessLookupError):      # ended and reaped
        os.kill(pid, 0)


def test_nothing_is_forked_where_no_plot_worker_may_be(monkeypatch):
    monkeypatch.setenv("URDF_DYN_PLOT_WORKER", "0")
    b = Beside()
    assert not b.allowed and b.start(lambda: 1) is None


class _Doc:
    class robot:
        file = "robot.urdf"

        @staticmethod
        def model_dump(mode="json"):
            return {"file": "robot.urdf"}

    iso6015 = {"relief": 3.5e7}


class _Scenario:
    def __init__(self, path):
        self.path, self.doc = path, _Doc()


def test_get_takes_the_result_started_ahead(tmp_path):
    (tmp_path / "robot.urdf").write_text("<robot name='r'/>")
    sc = _Scenario(tmp_path / "s.yaml")
    b = Beside()
    for memory in (False, True):
        cache = GeometryCache(memory=memory, disk=False)
        assert cache.ahead(sc, "stall", ("iso6015",), lambda: ("computed by", os.getpid()), b.start)
        assert not cache.ahead(sc, "stall", ("iso6015",), _here, b.start)        # started once
        kind, pid = cache.get(sc, "stall", ("iso6015",), _here)
        assert kind == "computed by" and pid != os.getpid()
        # another check (another key) is computed where it is asked for
        assert cache.get(sc, "lateral", ("iso6015",), lambda: os.getpid()) == os.getpid()
    # held in the memory tier: nothing is started
    assert not cache.ahead(sc, "stall", ("iso6015",), _here, b.start)
    assert cache.get(sc, "stall", ("iso6015",), _here)[1] == pid
    b.close()


def test_no_child_where_it_would_compile_the_kernels_beside_the_job(monkeypatch, tmp_path):
    """A cold kernel cache that this process compiles itself (no marker, no compile workers' hook): nothing is
    forked. The marker (the main job's kernels all cached) or the hook (compile workers running) allow it."""
    import urdf_dyn.numba_cache as nc
    monkeypatch.undo()
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(nc, "_miss", None)
    b = Beside()
    assert not nc.kernels_ready() and b.start(lambda: 1) is None
    monkeypatch.setattr(nc, "_miss", lambda py_func: False)
    assert nc.kernels_ready()
    monkeypatch.setattr(nc, "_miss", None)
    (tmp_path / nc.MARKER).write_text("")
    p = b.start(lambda: 2)
    assert p is not None and p.take(_here) == 2
    b.close()


def test_the_child_ignores_ctrl_c_and_keeps_the_jobs_warning_filters():
    """SIGINT (a Ctrl-C reaches the whole process group) leaves the child to the job, which ends it; the
    child's warnings follow the job's filters (here: a DeprecationWarning is an error, so the child fails and
    the job computes the result)."""
    import signal
    import warnings
    b = Beside()
    p = b.start(lambda: time.sleep(60))
    time.sleep(0.5)
    os.kill(p.pid, signal.SIGINT)
    time.sleep(0.3)
    assert p.alive                                   # still there: no KeyboardInterrupt, no traceback
    b.close()

    def warns():
        warnings.warn("old", DeprecationWarning)
        return "child"
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        p = b.start(warns)
    assert p.take(lambda: "job") == "job" and p.given is False
    b.close()


def test_a_child_that_never_answers_is_ended_and_the_job_computes(tmp_path):
    b = Beside()
    p = b.start(lambda: time.sleep(60))
    pid = p.pid
    assert p.take(lambda: "job", timeout=0.5) == "job" and p.given is False
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    b.close()


def test_the_job_starts_its_kinds_checks_ahead_and_ends_them_when_it_fails(monkeypatch, tmp_path):
    """``run_sizing`` calls the kind's ``ahead`` right after its plan, with its cache and a ``start`` that
    forks; a job that fails after it (here: the viewer's processes cannot be made) ends the children."""
    import yaml
    from test_excavator_job import launch_data

    import urdf_dyn.jobs.sizing_job as sj
    from urdf_dyn.jobs.excavator_kind import ExcavatorKind
    seen = []

    def ahead(self, plan, cache, start):
        seen.append((cache, start(lambda: time.sleep(60))))

    class Refused(Exception):
        pass

    def refuse(*a, **k):
        raise Refused
    monkeypatch.setattr(ExcavatorKind, "ahead", ahead)
    monkeypatch.setattr(sj, "viewer_tasks", refuse)
    f = tmp_path / "dig.yaml"
    f.write_text(yaml.safe_dump(launch_data()))
    from urdf_dyn.launch import run_scenario
    with pytest.raises(Refused):
        run_scenario(f, out_dir=tmp_path / "out", progress=False, echo=lambda *a: None)
    (cache, pending), = seen
    assert isinstance(cache, GeometryCache) and pending is not None and pending.pid is None     # ended
