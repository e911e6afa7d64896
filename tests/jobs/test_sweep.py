"""Load-case sweeps on Dask: the sweep's numbers are those of each case run alone through the
ordinary launch path, on an embedded LocalCluster and on a real scheduler + worker started as separate
processes; a failing case is recorded and the others finish; an interrupted sweep resumes with only the
missing cases; bad parameter paths and values are one-line errors before anything runs."""
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import yaml

pytest.importorskip("distributed")
pytest.importorskip("pyarrow")

from urdf_dyn.jobs.sweep import expand, parse_path, set_path, sweep_axes  # noqa: E402
from urdf_dyn.jobs.sweep_job import SweepDocument, plan_sweep, run_sweep_file  # noqa: E402
from urdf_dyn.errors import ScenarioError  # noqa: E402
from urdf_dyn.launch import read_scenario, run_scenario, validate  # noqa: E402

from conftest import ROOT
EXCAVATOR = ROOT / "robots" / "excavator.urdf"
PY = sys.executable


def _base():
    """A short excavator move (1.2 s, dt 0.05: 25 samples) with 1.5 t in the bucket."""
    return {
        "robot": {"file": str(EXCAVATOR)},
        "job": "size",
        "motion": {"independent": ["swing", "boom_cyl", "stick_cyl", "bucket_cyl"], "type": "quintic",
                   "waypoints": [{"swing": 0.0, "boom_cyl": -0.40, "stick_cyl": -0.85, "bucket_cyl": -0.45},
                                 {"swing": 0.6, "boom_cyl": -0.15, "stick_cyl": -0.45, "bucket_cyl": 0.05}],
                   "durations": [1.2], "dt": 0.05},
        "payload": {"link": "bucket", "mass": 1500.0, "com": [0.75, 0.0, 0.35]},
        "actuators": {"cylinders": {"boom_cyl": {"bore": 0.12, "rod": 0.085, "count": 2},
                                    "stick_cyl": {"bore": 0.14, "rod": 0.10}}},
    }


def _write_sweep(folder, parameters, out, **sweep):
    doc = {"job": "sweep", "sweep": {"job": "size", "parameters": parameters, **sweep},
           "outputs": {"directory": str(out)}, **_base()}
    doc["job"] = "sweep"
    p = Path(folder) / "sweep.scenario.yaml"
    p.write_text(yaml.safe_dump(doc, sort_keys=False))
    return p


#: 2 payloads x 2 boom rod diameters; a rod of 0.2 m does not fit the 0.12 m bore: the sizing job raises
PARAMS = {"payload.mass": [0.0, 2500.0], "actuators.cylinders.boom_cyl.rod": [0.085, 0.2]}


def _rows(table):
    return {r["hash"]: r for r in table.to_pylist()}


@pytest.fixture(scope="module")
def local_sweep(tmp_path_factory):
    d = tmp_path_factory.mktemp("local")
    f = _write_sweep(d, PARAMS, d / "out", workers=2)
    res, written = run_sweep_file(f, progress=False, echo=lambda *a: None)
    return d, f, res, written


def test_paths_and_expansion():
    """Oracle: the combinations written out by hand."""
    assert parse_path("motion.durations[2]") == ["motion", "durations", 2]
    assert parse_path("actuators.cylinders.boom_cyl.bore") == ["actuators", "cylinders", "boom_cyl", "bore"]
    for bad in ("", ".a", "a..b", "a[x]", "[0]", "a.", "a.[1]"):
        with pytest.raises(ValueError):
            parse_path(bad)
    doc = {"motion": {"durations": [1.0, 2.0, 3.0]}}
    set_path(doc, "motion.durations[2]", 4.5)
    set_path(doc, "payload.mass", 10)
    assert doc == {"motion": {"durations": [1.0, 2.0, 4.5]}, "payload": {"mass": 10}}
    with pytest.raises(ValueError, match="index 3 out of range"):
        set_path(doc, "motion.durations[3]", 1.0)
    with pytest.raises(ValueError, match="not a list"):
        set_path(doc, "payload[0]", 1.0)
    assert expand({"a": [1, 2], "b": ["x", "y", "z"]}) == [
        {"a": 1, "b": "x"}, {"a": 1, "b": "y"}, {"a": 1, "b": "z"},
        {"a": 2, "b": "x"}, {"a": 2, "b": "y"}, {"a": 2, "b": "z"}]
    assert expand({"a": [1, 2], "b": [3, 4]}, combine="zip") == [{"a": 1, "b": 3}, {"a": 2, "b": 4}]
    assert expand({"a": [1, 2], "b": [3, 4], "c": [5, 6]}, zip_groups=[["a", "c"]]) == [
        {"a": 1, "c": 5, "b": 3}, {"a": 1, "c": 5, "b": 4}, {"a": 2, "c": 6, "b": 3}, {"a": 2, "c": 6, "b": 4}]
    assert expand({"d": {"start": 3.0, "stop": 4.0, "step": 0.5}}) == [{"d": 3.0}, {"d": 3.5}, {"d": 4.0}]
    assert expand({"d": {"start": 0.0, "stop": 1.0, "num": 3}}) == [{"d": 0.0}, {"d": 0.5}, {"d": 1.0}]
    with pytest.raises(ValueError, match="different numbers"):
        expand({"a": [1, 2], "b": [3]}, combine="zip")
    assert sweep_axes({"a": 0, "b": 0, "c": 0}, [["a", "c"]]) == {"a": ["c"], "b": []}


def test_the_example_sweep_file_is_valid():
    """scenarios/excavator_sweep.scenario.yaml: 6 soils (every preset of machines/soil.py) x 10 swing times at
    the main job's 10 ms, every case accepted by job: size, with the machine checks on and the per-case files
    off."""
    from urdf_dyn.machines.soil import SOILS
    launch = read_scenario(ROOT / "scenarios" / "excavator_sweep.scenario.yaml")
    validate(launch, SweepDocument, job="sweep")
    cases, params, axes = plan_sweep(launch)
    assert len(cases) == 60 and len({c.hash for c in cases}) == 60
    assert sorted({c.params["soil.preset"] for c in cases}) == sorted(SOILS)
    assert not any(c.files for c in cases)
    assert axes == {"soil.preset": [], "motion.durations[2]": ["motion.durations[4]"]}
    c = cases[-1]
    assert c.data["soil"]["preset"] == "gravel" and c.data["motion"]["durations"][2:5:2] == [4.8, 4.8]
    assert c.data["iso6015"] is not None and c.data["lift_chart"] is not None and c.data["working_range"]
    assert c.data["motion"]["dt"] == 0.01 and c.data["outputs"] == {"plots": False}


def test_machine_quantities_come_from_the_runs_fields():
    """The stability margin and pump flow are the run's ``checks["stability"].min_margin`` and
    ``power.peak_flow`` (in L/min), never guessed from similar fields: the pumps' capacity and the footprint
    beside them must not be taken; without those checks they are None. (That they equal the rendered
    report's figures: test_sweep_geometry's warm-up test.)"""
    from types import SimpleNamespace as NS
    from urdf_dyn.reports.sweep_results import case_metrics

    class Result:  # SizingResult's summary() and maps
        names = ("boom_cyl",)
        pressures = {"boom_cyl": (np.array([0.0, 120.0]), np.array([30.0, 0.0]))}
        pin_force = {"eye": np.array([1.0, 5.0, 2.0])}
        pin_moment = {"eye": np.array([0.0, 0.0, 0.0])}

        def summary(self):
            return [{"name": "boom_cyl", "unit": "N", "peak": 4e5, "rms": 2e5, "limit": 8e5, "peak_power": 1e5}]

    m = case_metrics(NS(actuation=Result(), power=None, checks={}))
    assert m["stability_margin_min"] is None and m["pump_flow_peak"] is None
    assert m["margin[boom_cyl]"] == 0.5 and m["pin_force[eye]"] == 5.0 and m["p_cap_max_bar[boom_cyl]"] == 120.0
    assert case_metrics(Result()) == m                      # a bare SizingResult: the same columns
    run = NS(actuation=Result(), power=NS(peak_flow=421.0 / 6e4, pump_flow=429.0 / 6e4),
             checks={"stability": NS(min_margin=0.402, footprint=np.array([[1.825, -1.585], [-1.825, 1.585]]))})
    m = case_metrics(run)
    assert m["stability_margin_min"] == 0.402 and m["pump_flow_peak"] == 421.0 / 6e4 * 6e4
    assert m["sources"]["stability_margin_min"].startswith("SizingRun.checks['stability'].min_margin")
    assert case_metrics(NS(t=np.zeros(3))) == {"units": {}, "sources": {}}   # another job's result: no metrics


@pytest.mark.parametrize("params, sweep, message", [
    ({"payload.masss": [1.0]}, {}, r"sweep\.parameters\.payload\.masss = 1\.0: payload\.masss: unknown key"),
    ({"payload.mass": ["heavy"]}, {}, r"sweep\.parameters\.payload\.mass = 'heavy': payload\.mass: 'heavy' is not a number"),
    ({"payload.mass": [-5.0]}, {}, r"sweep\.parameters\.payload\.mass = -5\.0: payload\.mass: must be >= 0"),
    ({"motion.durations[4]": [1.0]}, {}, r"sweep\.parameters\.motion\.durations\[4\]: index 4 out of range"),
    ({"motion.durations[x]": [1.0]}, {}, r"sweep\.parameters\.motion\.durations\[x\]: malformed path"),
    ({"payload.mass": [1.0]}, {"set": {"solver.rtol": 1e-6}}, r"solver: unknown key for job: size"),
    ({"payload.mass": [1.0, 2.0], "motion.dt": [0.1]}, {"zip": [["payload.mass", "motion.dt"]]},
     r"sweep\.zip: payload\.mass, motion\.dt have different numbers of values"),
    ({"payload.mass": [1.0, 1.0]}, {}, r"the same document"),
])
def test_bad_sweeps_are_one_line_errors_before_anything_runs(tmp_path, params, sweep, message):
    f = _write_sweep(tmp_path, params, tmp_path / "out", **sweep)
    with pytest.raises(ScenarioError, match=message) as e:
        run_sweep_file(f, progress=False, echo=lambda *a: None)
    assert "\n" not in str(e.value) and str(f) in str(e.value)
    assert not (tmp_path / "out").exists()  # nothing ran
    r = subprocess.run([PY, "-m", "urdf_dyn.cli", "sweep", str(f)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_local_cluster_matches_each_case_alone(local_sweep):
    """Oracle: each case written as its own launch file and run by ``run_scenario`` in this process."""
    d, f, res, written = local_sweep
    rows = res.table.to_pylist()
    assert len(rows) == 4 and res.stats["computed"] == 4 and res.stats["workers"] == 2
    for case in res.records:
        doc = _base()
        doc["payload"]["mass"] = case["params"]["payload.mass"]
        doc["actuators"]["cylinders"]["boom_cyl"]["rod"] = case["params"]["actuators.cylinders.boom_cyl.rod"]
        doc["outputs"] = {"directory": str(d / f"alone{case['index']}")}
        lf = d / f"alone{case['index']}.scenario.yaml"
        lf.write_text(yaml.safe_dump(doc))
        row = next(r for r in rows if r["case"] == case["index"])
        if case["params"]["actuators.cylinders.boom_cyl.rod"] >= 0.12:  # the job refuses rod >= bore
            with pytest.raises(ScenarioError) as e:
                run_scenario(lf, echo=lambda *a: None)
            assert row["status"] == "failed"
            alone = re.sub(r" \(line \d+\)$", "", e.value.args[0])   # a file's error names the key's line;
            assert alone.split(": ", 1)[1] in row["error"]           # a sweep case is a document in memory
            continue
        alone, _ = run_scenario(lf, echo=lambda *a: None)
        assert row["status"] == "ok"
        for s in alone.summary():
            assert row[f"peak[{s['name']}]"] == s["peak"], s["name"]     # identical, not close
            assert row[f"rms[{s['name']}]"] == s["rms"], s["name"]
        for k, v in alone.pin_force.items():
            assert row[f"pin_force[{k}]"] == float(np.max(v)), k
        cap = alone.pressures["boom_cyl"][0]
        assert row["p_cap_max_bar[boom_cyl]"] == float(cap.max())
    # the model is read once per worker, not once per case
    ok = [r for r in res.records if r["status"] == "ok"]
    assert sum(r["model_built"] for r in res.records) <= len({r["worker"] for r in res.records}) <= 2
    assert any(not r["model_built"] for r in ok) or len({r["worker"] for r in ok}) == len(ok)


def test_the_local_clusters_workers_run_without_the_dashboards_monitors():
    """The embedded LocalCluster's workers run with QUIET_CLUSTER's settings (no dashboard reads what the
    profiler and the monitors gather): no statistical profiler, slower health checks."""
    import dask
    from distributed import Client

    from urdf_dyn.jobs.sweep import QUIET_CLUSTER, local_cluster
    keys = list(QUIET_CLUSTER)
    with local_cluster(1) as cluster, Client(cluster) as client:
        got = list(client.run(lambda: [dask.config.get(k) for k in keys]).values())
    assert got == [[QUIET_CLUSTER[k] for k in keys]]
    assert QUIET_CLUSTER["distributed.worker.profile.enabled"] is False


def test_failing_case_is_recorded_and_the_rest_finish(local_sweep):
    d, f, res, written = local_sweep
    failed = [r for r in res.records if r["status"] == "failed"]
    assert len(failed) == 2 and all(r["params"]["actuators.cylinders.boom_cyl.rod"] == 0.2 for r in failed)
    assert all("need 0 < rod < bore" in r["error"] for r in failed)
    assert sum(r["status"] == "ok" for r in res.records) == 2
    summary = Path(written["summary"]).read_text()
    assert "## Failed cases" in summary and "need 0 < rod < bore" in summary
    # the envelope comes from the finished cases: the heavier payload loads the boom cylinder most
    env = {e["metric"]: e for e in res.envelope}
    assert env["peak[boom_cyl]"]["params"]["payload.mass"] == 2500.0
    assert env["margin[boom_cyl]"]["worst"] == "min"
    # the files: table (Parquet = CSV), envelope, plots
    import pyarrow.csv as pcsv
    import pyarrow.parquet as pq
    t = pq.read_table(written["results_parquet"])
    c = pcsv.read_csv(written["results_csv"])
    assert t.num_rows == c.num_rows == 4
    np.testing.assert_allclose(t["peak[boom_cyl]"].to_numpy(zero_copy_only=False),
                               c["peak[boom_cyl]"].to_numpy(zero_copy_only=False), rtol=1e-15)
    assert json.loads(Path(written["envelope"]).read_text())[0]["metric"]
    for k in ("peak_vs_payload_mass", "heatmap_peak"):
        assert Path(written[k]).stat().st_size > 10_000


def _wait_for(pred, timeout, what):
    t0 = time.time()
    while time.time() - t0 < timeout:
        if pred():
            return
        time.sleep(0.2)
    raise TimeoutError(what)


def test_real_scheduler_and_worker_give_the_same_table(local_sweep, tmp_path):
    """``dask scheduler`` and ``dask worker`` as separate processes on 127.0.0.1 (a free port chosen by the
    scheduler, published in a scheduler file); each has a timeout and is always stopped."""
    d, f, res, _ = local_sweep
    sfile = tmp_path / "scheduler.json"
    env = {**os.environ, "DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "30s"}
    procs = []
    try:
        procs.append(subprocess.Popen(
            [PY, "-m", "dask", "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
             "--scheduler-file", str(sfile), "--idle-timeout", "300"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, start_new_session=True))
        _wait_for(lambda: sfile.is_file() and sfile.stat().st_size > 0, 60, "the scheduler did not start")
        address = json.loads(sfile.read_text())["address"]
        assert address.startswith("tcp://127.0.0.1:")
        procs.append(subprocess.Popen(
            [PY, "-m", "dask", "worker", "--scheduler-file", str(sfile), "--nworkers", "1", "--nthreads", "1",
             "--no-dashboard", "--death-timeout", "60", "--lifetime", "300s"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, start_new_session=True))
        res2, _ = run_sweep_file(f, out_dir=tmp_path / "out", scheduler=address, progress=False,
                                 echo=lambda *a: None)
    finally:
        for p in reversed(procs):
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
        for p in procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait(timeout=10)
    assert res2.stats["computed"] == 4 and res2.stats["workers"] == 1
    a, b = _rows(res.table), _rows(res2.table)
    assert a.keys() == b.keys()
    for h in a:
        for col, v in a[h].items():
            if col not in ("seconds", "worker"):
                assert b[h][col] == v, (h, col)


def test_interrupted_sweep_resumes_with_only_the_missing_cases(tmp_path):
    """Ctrl-C (SIGINT to the process group, as a terminal sends it) during ``urdf-dyn sweep``: the finished
    cases stay; the rerun computes only the others, and the table has every case."""
    # 20 cases with their plots (≈ 0.5–1 s each): the sweep is still running when Ctrl-C comes, however fast
    # the machine (with 6 cases a quiet machine finished them between the check below and the signal)
    masses = [125.0 * i for i in range(20)]
    f = _write_sweep(tmp_path, {"payload.mass": masses}, tmp_path / "out", workers=1, plots=True)
    cases = tmp_path / "out" / "cases"
    # SIGINT as a terminal's shell leaves it (default): a library earlier in the same pytest process may have
    # set it to "ignored", which a child inherits across exec, and the child would then never see Ctrl-C
    p = subprocess.Popen([PY, "-m", "urdf_dyn.cli", "sweep", str(f)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, start_new_session=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        _wait_for(lambda: len(list(cases.glob("*.json"))) >= 2 or p.poll() is not None, 240, "no case finished")
        assert p.poll() is None, "the sweep ended before it could be interrupted"
        os.killpg(p.pid, signal.SIGINT)
        out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait(timeout=10)
    assert p.returncode == 130, err[-2000:]
    done = len(list(cases.glob("*.json")))
    assert 2 <= done < len(masses), done
    assert "rerun to compute the rest" in out
    res, written = run_sweep_file(f, progress=False, echo=lambda *a: None)
    assert res.stats["skipped"] == done and res.stats["computed"] == len(masses) - done
    assert [r["params"]["payload.mass"] for r in res.records] == masses
    assert all(r["status"] == "ok" for r in res.records)
    peaks = res.table["peak[boom_cyl]"].to_pylist()
    assert all(np.diff(peaks) > 0)  # more soil, more boom force: the resumed rows fit the others
