"""Runs corpus cases through ``urdf_dyn.cli.main.main`` in forked child processes, with limits.

    python runner.py RESULTS.json WORKDIR CASE_JSON...      (each CASE_JSON: {"name": ..., "argv": [...]})

The runner imports urdf_dyn and its dependencies once; every case then runs in its own forked process
(two at a time) with RLIMIT_CPU (10 s) and RLIMIT_AS (2 GiB) as a backstop, stdout/stderr redirected to
files, its working folder as the current directory. ``os.wait4`` gives each child's exit status, CPU time
and peak resident memory, written to RESULTS.json. A fork per case keeps the corpus fast on a shared
machine (the imports, ~1.5 s of CPU, are paid once) while each case still runs the CLI end to end.
"""
import json
import os
import resource
import sys

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import importlib  # noqa: E402

cli = importlib.import_module("urdf_dyn.cli.main")  # the module (urdf_dyn.cli.main is also a function name)
import urdf_dyn.launch.registry  # noqa: E402,F401
import urdf_dyn.loading  # noqa: E402,F401
import urdf_dyn.jobs.simulate_job  # noqa: E402,F401
import urdf_dyn.jobs.sizing_job  # noqa: E402,F401
import urdf_dyn.constraints.motion  # noqa: E402,F401
import xacro  # noqa: E402,F401
import urdf_dyn.jobs.sweep_job  # noqa: E402,F401
import urdf_dyn.jobs.sweep  # noqa: E402,F401
import urdf_dyn.reports.sweep_results  # noqa: E402,F401
import pyarrow  # noqa: E402,F401
import tqdm.auto  # noqa: E402,F401
import urdf_dyn.io.mcap  # noqa: E402,F401
import mcap.reader  # noqa: E402,F401
import mcap_ros2.decoder  # noqa: E402,F401


def child(argv, work):
    os.chdir(work)
    resource.setrlimit(resource.RLIMIT_CPU, (10, 10))
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
    out = os.open("stdout.txt", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    err = os.open(os.path.join("..", os.path.basename(work) + ".stderr"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    os.dup2(out, 1)
    os.dup2(err, 2)
    sys.stdout = os.fdopen(1, "w", buffering=1)
    sys.stderr = os.fdopen(2, "w", buffering=1)
    try:
        rc = cli.main(argv)
    except SystemExit as e:
        rc = e.code if isinstance(e.code, int) else 1
    except BaseException:  # noqa: BLE001 - report like the interpreter would
        import traceback
        traceback.print_exc()
        rc = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(rc)


def main():
    results_path, cases = sys.argv[1], [json.loads(a) for a in sys.argv[2:]]
    results, running, pending = {}, {}, list(cases)
    while pending or running:
        while pending and len(running) < 2:
            c = pending.pop(0)
            os.makedirs(c["work"], exist_ok=True)
            pid = os.fork()
            if pid == 0:
                child(c["argv"], c["work"])
            running[pid] = c
        pid, status, ru = os.wait4(-1, 0)
        c = running.pop(pid)
        results[c["name"]] = {"rc": os.waitstatus_to_exitcode(status), "cpu": ru.ru_utime + ru.ru_stime,
                              "rss_mb": ru.ru_maxrss / 1024}
    with open(results_path, "w") as fh:
        json.dump(results, fh)


if __name__ == "__main__":
    main()
