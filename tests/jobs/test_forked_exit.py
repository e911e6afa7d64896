"""The processes a job forks (the GIF's and the recording's, ``jobs.outputs._ForkedOutput``; the checks computed
beside it, ``jobs.beside``; the plot worker's, ``reports.plotting.PlotWorker``) end with ``os._exit`` once they have answered: they never run the exit hooks they
inherit from the job's thread pools (``concurrent.futures`` registers one per pool with
``threading._register_atexit``; from Python 3.12.8 it takes a lock that the job's pool thread may have held
at the fork, and the process would never end). Probed with a hook of the same kind registered in the job
before the fork, in a fresh interpreter (the hook is process-wide)."""
import subprocess
import sys
import textwrap

import pytest

from urdf_dyn.reports.plotting import worker_allowed

pytestmark = pytest.mark.skipif(not worker_allowed(), reason="no forked process here (not Linux, or "
                                "URDF_DYN_PLOT_WORKER=0)")

CHILD = textwrap.dedent("""
    import os, sys, threading
    from pathlib import Path
    marker, job = Path(sys.argv[1]), os.getpid()

    def hook():                                # what concurrent.futures registers for each of its pools
        if os.getpid() != job:
            marker.write_text(str(os.getpid()))
    threading._register_atexit(hook)

    from urdf_dyn.jobs.outputs import _ForkedOutput
    from urdf_dyn.jobs.beside import Beside

    class Task(_ForkedOutput):
        key = "recording"
        def _warm(self, shared):
            return None
        def _write(self, state, payload, out, say):
            out[self.key] = "written by " + str(os.getpid())
        def _here(self, payload):
            self._out[self.key] = "here"
        def _lost(self):
            self._out[self.key] = "lost"

    class Outputs:
        recording = "r.html"
    class Doc:
        outputs = Outputs()
    class Launch:
        doc = Doc()
    task = Task(Launch(), None, Path("."), print)
    assert task.forked
    task.start("payload")
    written = {}
    task.finish(written)
    assert written["recording"].startswith("written by ") and written["recording"] != "written by " + str(job)
    assert task._proc.exitcode == 0

    import urdf_dyn.numba_cache as nc
    nc.kernels_ready = lambda: True            # this test's child computes no kernel
    b = Beside()
    p = b.start(lambda: 42)
    assert p.take(lambda: None) == 42 and p.given
    b.close()

    from urdf_dyn.reports.plotting import PlotWorker
    plots = PlotWorker(processes=1)
    assert plots.parallel
    out = marker.parent / "plot.txt"
    plots.submit(out, Path.write_text, out, "drawn")
    plots.wait()                               # the worker ended and joined
    assert out.read_text() == "drawn"
    print("OK", marker.exists())
""")


def test_forked_processes_skip_the_jobs_thread_pool_exit_hooks(tmp_path):
    marker = tmp_path / "hook_ran_in_a_child"
    r = subprocess.run([sys.executable, "-c", CHILD, str(marker)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "OK False" in r.stdout and not marker.exists(), (r.stdout, r.stderr)
