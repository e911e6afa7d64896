"""The bad-input corpus (tests/bad_inputs/): malformed and malicious launch files, excavator pin tables,
trajectories, URDF and xacro files, each run through the ``urdf-dyn`` command in its own process, as a user would.

Each case must end with the exit status of ``expected.tsv`` (2 for an error, 0 where a located warning
leaves a meaningful run), print exactly one ``urdf-dyn: error:`` line (or one ``warning:`` line) that
contains the expected text (the file and the key or element), print no traceback, create no file in its
working folder (the malicious xacro files would ``touch pwned``), and stay within 2 s of CPU time and 500 MB
of peak resident memory. ``bad_inputs/runner.py`` imports urdf_dyn once and forks one process per case
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
CASES = sorted(p.name for p in HERE.iterdir() if p.name.endswith((".yaml", ".xacro", ".urdf", ".npz", ".csv")))


def command(name, work):
    f = str(HERE / name)
    if name.endswith(".scenario.yaml"):
        return ["launch", f, "--out-dir", str(work / "out")]
    if name.endswith(".pins.yaml"):  # excavator pin tables (issue 25)
        return ["excavator", f, "-o", str(work / "out" / "machine.urdf")]
    if name.endswith((".xacro", ".urdf")):
        return ["info", f]
    return ["view", str(ROOT / "robots" / "puma560.urdf"), "--traj", f, "--out", str(work / "x.png")]


def run_corpus(names, base):
    """{name: (exit status, stderr, CPU s, peak RSS MB, files left in its folder)} from runner.py."""
    cases = [json.dumps({"name": n, "argv": command(n, base / _dir(n)), "work": str(base / _dir(n))}) for n in names]
    out = base / "results.json"
    r = subprocess.run([sys.executable, str(HERE / "runner.py"), str(out)] + cases, capture_output=True, text=True,
                       timeout=900, env=dict(os.environ, OPENBLAS_NUM_THREADS="1", NUMBA_NUM_THREADS="1"))
    assert r.returncode == 0, r.stderr
    res = json.loads(out.read_text())
    table = {}
    for n in names:
        work = base / _dir(n)
        left = sorted(str(x.relative_to(work)) for x in work.rglob("*") if x.name not in ("out", "stdout.txt"))
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
    assert len(mine) == 1, err
    assert want in mine[0].replace(str(HERE) + "/", ""), mine[0]
    assert not [f for f in left if f != "x.png"], f"files created: {left}"  # the canary (touch pwned) stays absent
    assert cpu < CPU_S, f"{cpu:.2f} s of CPU"
    assert rss < RSS_MB, f"{rss:.0f} MB peak RSS"
    print(f"{name}: exit {rc}, {cpu:.2f} s CPU, {rss:.0f} MB")
