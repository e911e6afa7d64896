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
