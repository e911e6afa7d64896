"""The bad-input corpus (tests/bad_inputs/): malformed and malicious launch files, excavator pin tables,
trajectories, URDF and xacro files, each run through the ``urdf-dyn`` command in its own process, as a user would.

Each case must end with the exit status of ``expected.tsv`` (2 for an error, 0 where a located warning
leaves a meaningful run; 0 and no warning at all for "(no warning)"), print exactly one ``urdf-dyn: error:`` line (or one ``warning:`` line) that
contains the expected text (the file and the key or element), print no traceback, create no file in its
working folder (the malicious xacro files would ``touch pwned``), leave a good earlier run's output in its
output folder intact, and stay within 2 s of CPU time and 500 MB of peak resident memory.

Kinds (by name): ``*.launch.yaml`` (``urdf-dyn run``), ``*.sweep.yaml`` (``urdf-dyn sweep``), ``*.cli.json``
(an argv: command-line options such as ``--scheduler`` or ``--solref``), ``*.urdf``/``*.xacro``/``*.sdf``/
``*.xml`` (``urdf-dyn info``), ``*.npz``/``*.csv``/``*.mcap`` (``urdf-dyn view`` on the PUMA 560).
``SETUP`` prepares a case's folder (a stored sweep record; a service that is not Dask) ``bad_inputs/runner.py`` imports urdf_dyn once and forks one process per case
(two at a time) that runs ``urdf_dyn.cli.main.main(argv)`` under RLIMIT_CPU and RLIMIT_AS; ``os.wait4``
measures each child's CPU time and peak RSS.
"""
import json
import os
import subprocess
import sys
import time

import pytest

from _robots import ROOT

HERE = ROOT / "tests" / "bad_inputs"
CPU_S, RSS_MB = 2.0, 500
EXPECTED = {}
for line in (HERE / "expected.tsv").read_text().splitlines():
    if line.strip() and not line.startswith("#"):
        name, rc, text = line.split("\t")
        EXPECTED[name] = (int(rc), text)
CASES = sorted(p.name for p in HERE.iterdir()
               if p.name.endswith((".yaml", ".xacro", ".urdf", ".npz", ".csv", ".mcap", ".xml", ".sdf", ".cli.json")))
GOOD = "earlier_good_run.png"  # a good earlier run's output, in every case's output folder before it runs
WRITES_RESULTS = {"sweep_all_cases_fail.sweep.yaml"}  # its records and tables are the answer (every case failed)


def command(name, work):
    f = str(HERE / name)
    if name.endswith((".launch.yaml", ".scenario.yaml")):
        return ["launch", f, "--out-dir", str(work / "out")]
    if name.endswith(".sweep.yaml"):
        return ["sweep", f, "--out-dir", str(work / "out")]
    if name.endswith(".cli.json"):
        subst = {"{HERE}": str(HERE), "{OUT}": str(work / "out"), "{NOT_DASK_PORT}": str(_not_dask_port())}
        argv = json.loads((HERE / name).read_text())
        for k, v in subst.items():
            argv = [a.replace(k, v) for a in argv]
        return argv
    if name.endswith(".pins.yaml"):  # excavator pin tables
        return ["excavator", f, "-o", str(work / "out" / "machine.urdf")]
    if name.endswith((".xacro", ".urdf", ".sdf", ".xml")):
        return ["info", f]
    return ["view", str(ROOT / "robots" / "puma560.urdf"), "--traj", f, "--out", str(work / "x.png")]


_SERVICE = []


def _not_dask_port():
    """A local TCP service that greets like SSH (its banner read as a Dask frame length claims exabytes)."""
    if not _SERVICE:
        import socket
        import threading
        srv = socket.socket()
        srv.bind(("127.0.0.1", 0))
        srv.listen(8)

        def serve():
            while True:
                try:
                    c, _ = srv.accept()
                except OSError:
                    return
                c.sendall(b"SSH-2.0-OpenSSH_9.6\r\n")
                c.close()
        threading.Thread(target=serve, daemon=True).start()
        _SERVICE.append(srv)
    return _SERVICE[0].getsockname()[1]


def _stored_record(name, work, content):
    """Write a record at the hash of the sweep's first case: ``content(case)`` -> its text."""
    from urdf_dyn.jobs.sweep_job import SweepDocument, plan_sweep
    from urdf_dyn.launch.document import read_scenario, validate
    launch = read_scenario(HERE / name)
    validate(launch, SweepDocument, job="sweep")
    c = plan_sweep(launch)[0][0]
    d = work / "out" / "cases"
    d.mkdir(parents=True, exist_ok=True)
    (d / f"{c.hash}.json").write_text(content(c))


SETUP = {
    "sweep_record_not_object.sweep.yaml": lambda n, w: _stored_record(n, w, lambda c: "[1, 2]\n"),
    "sweep_record_other_case.sweep.yaml": lambda n, w: _stored_record(n, w, lambda c: json.dumps(
        {"hash": c.hash, "index": 0, "params": {"payload.mass": 99.0}, "job": "size", "status": "ok", "metrics": {}})),
    "sweep_record_metric_word.sweep.yaml": lambda n, w: _stored_record(n, w, lambda c: json.dumps(
        {"hash": c.hash, "index": 0, "params": c.params, "job": "size", "status": "ok",
         "metrics": {"peak_force[crank]": "huge"}})),
}


def _snapshot(work):
    return {str(x.relative_to(work)): x.read_bytes() for x in work.rglob("*") if x.is_file()}


def run_corpus(names, base):
    """{name: (exit status, stderr, CPU s, peak RSS MB, files left in its folder)} from runner.py; each case's
    output folder holds ``GOOD`` before it runs, and files it changed or removed count as left."""
    before = {}
    for n in names:
        work = base / _dir(n)
        (work / "out").mkdir(parents=True, exist_ok=True)
        (work / "out" / GOOD).write_bytes(b"a good earlier run")
        if n in SETUP:
            SETUP[n](n, work)
        before[n] = _snapshot(work)
    cases = [json.dumps({"name": n, "argv": command(n, base / _dir(n)), "work": str(base / _dir(n))}) for n in names]
    out = base / "results.json"
    r = subprocess.run([sys.executable, str(HERE / "runner.py"), str(out)] + cases, capture_output=True, text=True,
                       timeout=900, env=dict(os.environ, OPENBLAS_NUM_THREADS="1", NUMBA_NUM_THREADS="1"))
    assert r.returncode == 0, r.stderr
    res = json.loads(out.read_text())
    table = {}
    for n in names:
        work = base / _dir(n)
        now = _snapshot(work)
        left = sorted(k for k, v in now.items() if before[n].get(k) != v and k != "stdout.txt"
                      and not (n in WRITES_RESULTS and k.startswith("out/") and k != f"out/{GOOD}"))
        left += sorted(f"removed: {k}" for k in before[n] if k not in now)
        d = res[n]
        table[n] = (d["rc"], (base / f"{_dir(n)}.stderr").read_text(), d["cpu"], d["rss_mb"], left)
    return table


def _dir(name):
    return name.replace(".", "_")


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    t0 = time.monotonic()
    table = run_corpus(CASES, tmp_path_factory.mktemp("bad_inputs"))
    print(f"corpus: {len(CASES)} cases in {time.monotonic() - t0:.1f} s")
    return table


def test_corpus_is_complete():
    """At least 50 cases; every file has an expected outcome and every expectation a file."""
    assert len(CASES) >= 50
    assert sorted(EXPECTED) == CASES


@pytest.mark.parametrize("name", CASES)
def test_bad_input(name, results):
    rc, err, cpu, rss, left = results[name]
    want_rc, want = EXPECTED[name]
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert "Traceback" not in err, err
    assert rc == want_rc, err
    kind = "urdf-dyn: error: " if want_rc == 2 else "warning: "
    mine = [ln for ln in lines if ln.startswith(kind)]
    if want == "(no warning)":  # a valid file that used to print a library's warning
        assert not mine and rc == 0, err
        return
    assert len(mine) == 1, err
    assert want in mine[0].replace(str(HERE) + "/", ""), mine[0]
    assert not [f for f in left if f != "x.png"], f"files created: {left}"  # the canary (touch pwned) stays absent
    assert cpu < CPU_S, f"{cpu:.2f} s of CPU"
    assert rss < RSS_MB, f"{rss:.0f} MB peak RSS"
    print(f"{name}: exit {rc}, {cpu:.2f} s CPU, {rss:.0f} MB")
