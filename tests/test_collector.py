"""collector.raised: the garbage collector's thresholds raised inside the block, never lowered, restored after
the last of nested or concurrent blocks; a launched job runs inside it."""
import gc
import threading

import pytest

from urdf_dyn import collector


@pytest.fixture
def thresholds():
    saved = gc.get_threshold()
    gc.set_threshold(701, 9, 11)
    yield (701, 9, 11)
    gc.set_threshold(*saved)


def test_raised_sets_the_larger_and_restores(thresholds):
    with collector.raised((5000, 3, 20)):
        assert gc.get_threshold() == (5000, 9, 20)       # each the larger: 9 is kept, never lowered
        with collector.raised():
            assert gc.get_threshold() == (10_000, 10, 20)
        assert gc.get_threshold() == (10_000, 10, 20)    # an inner block's end restores nothing
    assert gc.get_threshold() == thresholds


def test_restored_after_an_error(thresholds):
    with pytest.raises(RuntimeError):
        with collector.raised():
            raise RuntimeError("boom")
    assert gc.get_threshold() == thresholds


def test_overlapping_blocks_in_threads_restore_the_first_callers(thresholds):
    inside, leave = threading.Event(), threading.Event()

    def other():
        with collector.raised():
            inside.set()
            leave.wait(5)

    t = threading.Thread(target=other)
    with collector.raised():
        t.start()
        inside.wait(5)
    assert gc.get_threshold() == (10_000, 10, 11)        # the thread's block is still open
    leave.set()
    t.join(5)
    assert gc.get_threshold() == thresholds


def test_a_launched_job_runs_with_the_raised_thresholds(thresholds, tmp_path, monkeypatch):
    import pydantic

    from urdf_dyn.launch import registry

    class Doc(pydantic.BaseModel):
        job: str

    seen = []

    def run(launch, **kw):
        seen.append(gc.get_threshold())
        return "done"
    monkeypatch.setitem(registry._REGISTERED, "probe_gc", registry.Job("probe_gc", Doc, run))
    out = registry.run_document({"job": "probe_gc"}, base_path=tmp_path / "a.yaml")
    assert out == "done"
    assert seen == [(10_000, 10, 11)]                    # THRESHOLDS, the caller's larger oldest kept
    assert gc.get_threshold() == thresholds


def test_freeze_in_a_forked_child_freezes_the_inherited_heap():
    """collector.freeze moves every tracked object to the permanent generation (what a forked child calls)."""
    import multiprocessing
    ctx = multiprocessing.get_context("fork")
    q = ctx.Queue()

    def child():
        before = gc.get_freeze_count()
        collector.freeze()
        q.put((before, gc.get_freeze_count(), len(gc.get_objects())))

    p = ctx.Process(target=child)
    p.start()
    before, after, left = q.get(timeout=30)
    p.join(30)
    assert after > before + 1000        # the inherited heap (pytest's and the package's objects) is frozen
    assert left < after                  # and no longer among the objects the collector tracks


def test_the_command_line_freezes_the_heap_only_as_the_program(monkeypatch, capsys):
    """urdf-dyn as the program (main() reading sys.argv) ends with collector.freeze; main(argv) called from
    Python (a test, a script that goes on) does not."""
    import sys

    from urdf_dyn.cli.main import main
    calls = []
    monkeypatch.setattr(collector, "freeze", lambda: calls.append(1))
    from conftest import ROOT
    robot = str(ROOT / "robots" / "puma560.urdf")
    assert main(["info", robot]) == 0
    assert calls == []
    monkeypatch.setattr(sys, "argv", ["urdf-dyn", "info", robot])
    assert main() == 0
    assert calls == [1]
    monkeypatch.setattr(sys, "argv", ["urdf-dyn", "info", "no_such_robot.urdf"])
    assert main() == 2                   # the error path ends the process too
    assert calls == [1, 1]
