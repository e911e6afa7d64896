"""The machine's cores: how many are idle now (``idle_cores``), for the choices a job makes about its own
processes (compile ahead in worker processes on a first run, ``cli.compile_ahead``; draw plots in the job's
process as well as in its plot worker, ``reports.plotting``). Measured over a short interval rather than
from the 1-minute load average, which still counts the job's own processes of the minute before (its
compile workers, its previous run)."""
from __future__ import annotations

import os
import time

__all__ = ["idle_cores"]


def idle_cores(interval: float = 0.2) -> float | None:
    """The cores idle now [cores]: the idle share of the machine's CPU time over ``interval`` seconds
    (``/proc/stat``'s first line, idle + iowait, Linux) times the cores, measured while this process sleeps;
    None where there is no /proc/stat (then the caller decides without it)."""
    def sample():
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        return v[3] + (v[4] if len(v) > 4 else 0), sum(v)
    try:
        i0, t0 = sample()
        time.sleep(interval)
        i1, t1 = sample()
    except (OSError, ValueError, IndexError):
        return None
    cores = os.cpu_count() or 1
    # clamped: iowait may step back between two readings on some kernels (proc(5))
    return min(float(cores), max(0.0, cores * (i1 - i0) / max(t1 - t0, 1)))
