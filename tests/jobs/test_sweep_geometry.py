"""Sweeps at speed: the machine checks that depend only on the geometry (ISO 6015, the lift chart,
the working ranges, the stall envelopes) are computed once per robot file and scenario keys and reused by
the cases of a sweep (a ``jobs.geometry_cache.GeometryCache`` with its memory tier, one per worker); a reused result is the fresh one, and
a changed input it depends on (a bore, the robot file's bytes) is computed again. Per-case plots are off in
a sweep unless ``sweep.plots: true``."""
import shutil
from pathlib import Path

import numpy as np
import pytest
import yaml

from conftest import ROOT
from test_excavator_job import launch_data
from urdf_dyn.jobs import sizing_checks as sc
from urdf_dyn.jobs.geometry_cache import GeometryCache
from urdf_dyn.jobs.sizing_schema import SizeDocument
from urdf_dyn.jobs.sizing_stall import run_stall
from urdf_dyn.jobs.sweep_job import run_sweep_file
from urdf_dyn.launch.document import Scenario, build_model, validate
from urdf_dyn.machines.loads import Frame
from urdf_dyn.machines.pins import PinSpec
from urdf_dyn.machines.sizing import Cylinder

CHECKS = ("iso6015", "lift_chart", "working_range")


def _launch(path, data):
    launch = Scenario(Path(path), data)
    validate(launch, SizeDocument, job="size")
    return launch


def _checks(launch, model=None, cache=None):
    """The job's geometry-only results for ``launch``: machine_checks' three and the stall envelopes, from
    ``cache`` (a GeometryCache; None: computed) as one run takes them."""
    model = model or build_model(launch)
    doc = launch.doc
    frames = {n: Frame(f.link, tuple(f.xyz), tuple(f.rpy)) for n, f in doc.frames.items()}
    cyl = {n: Cylinder(c.bore, c.rod, c.count) for n, c in doc.actuators.cylinders.items()}
    if cache is not None:
        cache.begin_run()
    out = sc.machine_checks(launch, model, cyl, frames, cache)
    pins = {n: PinSpec(p) if isinstance(p, str) else PinSpec(p.joint, p.count) for n, p in doc.design.pins.items()}
    out["stall"] = run_stall(launch, model, cyl, frames, pins, cache)
    return out


def _diff(a, b, where="result"):
    """Where ``a`` and ``b`` differ (None if nowhere): every field, item and array element compared exactly
    (NaN equals NaN); objects by their type and fields."""
    if type(a) is not type(b):
        return f"{where}: {type(a).__name__} != {type(b).__name__}"
    if isinstance(a, np.ndarray):
        same = a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")
        return None if same else f"{where}: arrays differ"
    if isinstance(a, float):
        return None if a == b or (np.isnan(a) and np.isnan(b)) else f"{where}: {a!r} != {b!r}"
    if isinstance(a, dict):
        if list(a) != list(b):
            return f"{where}: keys {list(a)} != {list(b)}"
        return next((d for k in a if (d := _diff(a[k], b[k], f"{where}[{k!r}]"))), None)
    if isinstance(a, (list, tuple)):
        if len(a) != len(b):
            return f"{where}: lengths {len(a)} != {len(b)}"
        return next((d for i, (x, y) in enumerate(zip(a, b)) if (d := _diff(x, y, f"{where}[{i}]"))), None)
    if hasattr(a, "__dict__") and not callable(a):
        return _diff(vars(a), vars(b), f"{where}.")
    return None if a == b else f"{where}: {a!r} != {b!r}"


def _same(a, b):
    """Equal to the last bit (``_diff``); the difference is printed when not."""
    d = _diff(a, b)
    assert d is None, d
    return True


def _small(**changes):
    """The main job's scenario with a coarser lift chart (the test's time); every check on."""
    data = launch_data(dt=0.1, **changes)
    if data.get("lift_chart"):
        data["lift_chart"]["radii"], data["lift_chart"]["heights"] = [4.5, 7.5], [3.0, -1.5]
    return data


@pytest.fixture(scope="module")
def fresh():
    """The checks computed without any cache (the oracle)."""
    return _checks(_launch(ROOT / "scenarios" / "x.yaml", _small()))


def test_reused_results_are_the_fresh_ones_and_inputs_they_depend_on_are_not_served(fresh, tmp_path):
    cache = GeometryCache(memory=True, disk=False)    # a sweep worker's
    first = _checks(_launch(ROOT / "scenarios" / "x.yaml", _small()), cache=cache)
    assert cache.stats() == {"hits": 0, "misses": 5, "entries": 5}     # + the stall's out-of-plane cases
    # another load case: other soil, other swing times, other payload: every check is reused
    data = _small()
    data["soil"]["preset"] = "gravel"
    data["motion"]["durations"][2] = data["motion"]["durations"][4] = 3.4
    data["payload"] = {"link": "bucket", "mass": 900.0, "com": [0.75, 0.0, 0.35]}
    reused = _checks(_launch(ROOT / "scenarios" / "x.yaml", data), cache=cache)
    assert cache.stats()["hits"] == 5
    for k in (*CHECKS, "stall"):
        assert _same(reused[k], fresh[k]), k
        assert _same(first[k], fresh[k]), k
        assert reused[k] is not first[k]          # each case its own copy
    assert reused["iso6015"].bucket_N == fresh["iso6015"].bucket_N > 5e4   # a real force, N
    # a bore is an input of ISO 6015, the lift chart and the stall: computed again, not the cached value;
    # the working ranges do not read actuators: reused
    data = _small()
    data["actuators"]["cylinders"]["bucket_cyl"]["bore"] = 0.13
    before = cache.stats()
    bigger = _checks(_launch(ROOT / "scenarios" / "x.yaml", data), cache=cache)
    after = cache.stats()
    assert after["misses"] - before["misses"] == 4 and after["hits"] - before["hits"] == 1   # + lateral
    outside = _checks(_launch(ROOT / "scenarios" / "x.yaml", data))          # the oracle: no cache
    for k in ("iso6015", "lift_chart", "stall"):
        assert _same(bigger[k], outside[k]), k
    assert bigger["iso6015"].bucket_N != fresh["iso6015"].bucket_N     # and it did change the force
    assert _same(bigger["working_range"], fresh["working_range"])


def test_copies_share_read_only_arrays_and_keep_their_own_objects(fresh):
    """A reused result is a new object tree whose arrays are the cache's, read-only: writing into one raises
    (no case changes another's numbers), changing an object or a list changes no other case's copy; the
    result returned where it was computed stays writeable; export/install between processes hand over equal
    results."""
    cache = GeometryCache(memory=True, disk=False)
    launch = _launch(ROOT / "scenarios" / "x.yaml", _small())
    first = _checks(launch, cache=cache)
    a, b = (_checks(launch, cache=cache)["stall"] for _ in range(2))
    assert a is not b and a.free_bodies is not b.free_bodies and a.free_bodies[0] is not b.free_bodies[0]
    wa, wb = a.free_bodies[0].loads[0].wrench, b.free_bodies[0].loads[0].wrench
    assert wa is wb and not wa.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        wa[0] = 1.0
    a.free_bodies.clear()
    a.env = None
    assert b.free_bodies and b.env is not None and _same(b, fresh["stall"])
    assert first["stall"].free_bodies[0].loads[0].wrench.flags.writeable
    other = GeometryCache(memory=True, disk=False)
    assert other.install(cache.export()) == cache.stats()["entries"]
    again = _checks(launch, cache=other)
    assert other.stats()["misses"] == 0
    for k in (*CHECKS, "stall"):
        assert _same(again[k], fresh[k]), k


def test_a_changed_robot_file_is_computed_again(fresh, tmp_path):
    """The key is the robot file's SHA-256: the same path with other bytes (the stick cylinder's stroke) is a
    miss, and its working range is the fresh one of the changed robot, not the cached one."""
    robot = tmp_path / "excavator.urdf"
    shutil.copy(ROOT / "robots" / "excavator.urdf", robot)
    data = _small(iso6015=None, lift_chart=None, design=None)
    data["robot"]["file"] = str(robot)
    cache = GeometryCache(memory=True, disk=False)
    same = _checks_ranges(tmp_path, data, cache)
    assert _same(same, fresh["working_range"])                   # the same bytes: the same ranges
    assert cache.stats()["misses"] == 1
    text = robot.read_text()
    old = 'lower="-1.493635212184" upper="0.010364787816"'       # stick_cyl: a shorter stroke
    assert text.count(old) == 1
    robot.write_text(text.replace(old, 'lower="-1.343635212184" upper="0.010364787816"'))
    changed = _checks_ranges(tmp_path, data, cache)
    assert cache.stats()["misses"] == 2 and cache.stats()["hits"] == 0
    outside = _checks_ranges(tmp_path, data)                           # the oracle: no cache
    assert _same(changed, outside)
    assert _diff(changed.to_dict(), fresh["working_range"].to_dict()) is not None    # the shorter stroke shows


def _checks_ranges(folder, data, cache=None):
    launch = _launch(folder / "x.yaml", data)
    model = build_model(launch)
    frames = {n: Frame(f.link, tuple(f.xyz), tuple(f.rpy)) for n, f in launch.doc.frames.items()}
    if cache is not None:
        cache.begin_run()
    return sc.machine_checks(launch, model, {}, frames, cache)["working_range"]


def _short_sweep(folder, plots, tables=None):
    """Two load cases of a short excavator move, in this process (workers: 0)."""
    base = {"robot": {"file": str(ROOT / "robots" / "excavator.urdf")},
            "motion": {"independent": ["swing", "boom_cyl", "stick_cyl", "bucket_cyl"], "type": "quintic",
                       "waypoints": [{"swing": 0.0, "boom_cyl": -0.40, "stick_cyl": -0.85, "bucket_cyl": -0.45},
                                     {"swing": 0.6, "boom_cyl": -0.15, "stick_cyl": -0.45, "bucket_cyl": 0.05}],
                       "durations": [1.2], "dt": 0.05},
            "payload": {"link": "bucket", "mass": 1500.0, "com": [0.75, 0.0, 0.35]},
            "actuators": {"cylinders": {"boom_cyl": {"bore": 0.12, "rod": 0.085, "count": 2}}}}
    sweep = {"job": "size", "parameters": {"payload.mass": [0.0, 2500.0]}, "workers": 0}
    if plots is not None:
        sweep["plots"] = plots
    if tables is not None:
        sweep["tables"] = tables
    doc = {"job": "sweep", "sweep": sweep, "outputs": {"directory": str(folder / "out"),
                                                       "animation": "never.gif"}, **base}
    f = folder / "sweep.scenario.yaml"
    f.write_text(yaml.safe_dump(doc, sort_keys=False))
    res, written = run_sweep_file(f, progress=False, echo=lambda *a: None)
    assert [r["status"] for r in res.records] == ["ok", "ok"]
    return res, sorted(p.name for p in (folder / "out" / "cases").glob("*/*"))


@pytest.mark.parametrize("plots", [None, False])
def test_per_case_files_are_off_by_default(tmp_path, plots):
    """By default a case writes only its record: the metrics come from its run in the worker."""
    res, files = _short_sweep(tmp_path, plots)
    assert files == [] and not [p for p in (tmp_path / "out" / "cases").iterdir() if p.is_dir()]
    assert all(np.isfinite(r["metrics"]["peak[boom_cyl]"]) for r in res.records)


def test_sweep_tables_true_writes_each_cases_tables_without_plots(tmp_path):
    """``sweep.tables: true``: each case's tables and reports as the job writes them, no plot; the record's
    metrics are the figures of the case's own sizing_report.json (an independent path: the rendered JSON)."""
    import json
    res, files = _short_sweep(tmp_path, None, tables=True)
    assert files.count("actuator_forces.csv") == 2 and files.count("sizing_report.json") == 2, files
    assert not [f for f in files if f.endswith((".png", ".gif", ".html"))], files
    for r in res.records:
        report = json.loads((tmp_path / "out" / "cases" / r["hash"] / "sizing_report.json").read_text())
        assert r["metrics"]["peak[boom_cyl]"] == report["actuators"]["boom_cyl"]["peak"]
    (tmp_path / "again").mkdir()
    default, _ = _short_sweep(tmp_path / "again", None)
    assert {r["hash"] for r in default.records}.isdisjoint(r["hash"] for r in res.records)   # not each other's record


def test_sweep_plots_true_draws_each_cases_plots(tmp_path):
    res, files = _short_sweep(tmp_path, True)
    pngs = [f for f in files if f.endswith(".png")]
    assert pngs.count("actuator_forces.png") == 2 and pngs.count("force_vs_stroke.png") == 2, files


def test_sweep_plots_must_be_a_boolean(tmp_path):
    from urdf_dyn.errors import ScenarioError
    with pytest.raises(ScenarioError, match=r"sweep\.plots") as e:
        _short_sweep(tmp_path, "sometimes")
    assert "\n" not in str(e.value)


def test_warm_up_shares_the_geometry_checks_between_workers(tmp_path, monkeypatch):
    """Two workers' warm-ups (here in turn, in this process, each with an empty cache) compute one group of
    checks each (sweep_case.WARM_SPLIT); installed together they serve a case of the sweep without any
    computation, and the case's results are those of a fresh computation."""
    from urdf_dyn.jobs import sweep_case
    from urdf_dyn.jobs.sweep_case import install_geometry, run_case, warm_worker
    data = _small()
    data.pop("outputs")
    data["outputs"] = {"plots": False}
    base = tmp_path / "dig.scenario.yaml"
    base.write_text(yaml.safe_dump(data))
    blobs = {}
    for i in range(2):                              # each worker process: its own WorkerState
        monkeypatch.setattr(sweep_case, "WORKER", sweep_case.WorkerState())
        w = warm_worker("size", data, str(base), (i, 2))
        assert w["status"] == "ok", w["error"]
        # ranges | ISO 6015, lift, stall, lateral and the buckling check, which reads the stall envelopes'
        # reach (worker 0 leaves it out: computed without the reach, it would serve no case); neither
        # computes the shortest cycle or the duty mix (sweep_case.WARM_NEVER: keyed by the main cycle)
        assert sweep_case.WORKER.geometry.stats()["misses"] == (1 if i == 0 else 4 + 1)
        blobs.update(w["geometry"])
    monkeypatch.setattr(sweep_case, "WORKER", sweep_case.WorkerState())
    assert install_geometry(blobs) == 5 + 1
    rec = run_case("size", data, str(base), tmp_path / "case", files=True)
    assert rec["status"] == "ok", rec["error"]
    st = sweep_case.WORKER.geometry.stats()
    assert st["misses"] == 2 and st["hits"] == 5 + 1, st       # the case computes the cycle and the duty mix
    import json
    report = json.loads((tmp_path / "case" / "sizing_report.json").read_text())
    fresh = _checks(_launch(base, data))
    assert report["iso6015"]["bucket_digging_force_N"] == fresh["iso6015"].bucket_N
    ranges = json.loads(json.dumps(fresh["working_range"].to_dict()))
    assert {k: report["working_range"][k] for k in ranges} == ranges
    # the metrics taken from the run in process are the figures its rendered report prints, to the bit
    m = rec["metrics"]
    assert m["stability_margin_min"] == report["stability"]["min_margin_m"]
    assert m["pump_flow_peak"] == report["hydraulics"]["peak_flow_L_min"]
    assert m["peak[boom_cyl]"] == report["actuators"]["boom_cyl"]["peak"]


# --- between runs: the disk cache (jobs.disk_cache) -----------------------------------------------------

@pytest.fixture
def disk(tmp_path, monkeypatch):
    """The disk cache on, in a temporary folder."""
    from urdf_dyn.jobs import disk_cache
    monkeypatch.setenv("URDF_DYN_CACHE", "on")
    monkeypatch.setenv("URDF_DYN_CACHE_DIR", str(tmp_path / "cache"))
    return disk_cache.cache_dir()


def _refuse(*a, **k):
    raise AssertionError("computed, though an earlier run kept the result")


def test_a_second_run_takes_the_checks_from_disk_and_they_are_the_fresh_ones(fresh, disk, monkeypatch):
    cache = GeometryCache()                          # the disk tier on (URDF_DYN_CACHE), as a job's
    first = _checks(_launch(ROOT / "scenarios" / "x.yaml", _small()), cache=cache)
    assert cache.served_from_disk() == [] and len(list(disk.glob("*.pkl"))) == 5      # + the lateral cases
    # a second run: a new model of the same robot; nothing may be computed (the check functions refuse)
    import urdf_dyn.machines.iso6015 as iso
    import urdf_dyn.machines.lift_chart as lc
    import urdf_dyn.machines.stall as stall
    import urdf_dyn.machines.working_range as wr
    for mod, name in ((iso, "digging_forces"), (lc, "lift_chart"), (wr, "working_range"), (stall, "stall_envelopes")):
        monkeypatch.setattr(mod, name, _refuse)
    data = _small()
    data["soil"]["preset"] = "gravel"                # a load case the checks do not read
    second = _checks(_launch(ROOT / "scenarios" / "x.yaml", data), cache=cache)
    assert cache.served_from_disk() == ["iso6015", "lift_chart", "working_range", "stall", "lateral"]
    for k in (*CHECKS, "stall"):
        assert _same(second[k], fresh[k]), k         # the oracle: computed with no cache at all
        assert _same(first[k], fresh[k]), k
    assert second["iso6015"].bucket_N > 5e4


def test_the_disk_cache_recomputes_what_changed(fresh, disk, tmp_path):
    """Another bore (a section the key reads), another robot (the model's content: the stick cylinder's
    stroke in a copy of the URDF), other library sources and a corrupt file are each computed again; with
    URDF_DYN_CACHE=off nothing is read or written."""
    from urdf_dyn.jobs import disk_cache
    cache = GeometryCache()
    _checks(_launch(ROOT / "scenarios" / "x.yaml", _small()), cache=cache)
    data = _small()
    data["actuators"]["cylinders"]["bucket_cyl"]["bore"] = 0.13
    bigger = _checks(_launch(ROOT / "scenarios" / "x.yaml", data), cache=cache)
    assert cache.served_from_disk() == ["working_range"]          # the only one that does not read actuators
    assert bigger["iso6015"].bucket_N != fresh["iso6015"].bucket_N
    robot = tmp_path / "excavator.urdf"
    text = (ROOT / "robots" / "excavator.urdf").read_text()
    old = 'lower="-1.493635212184" upper="0.010364787816"'
    robot.write_text(text.replace(old, 'lower="-1.343635212184" upper="0.010364787816"'))
    data = _small(iso6015=None, lift_chart=None, design=None)
    data["robot"]["file"] = str(robot)
    changed = _checks_ranges(tmp_path, data, cache)
    assert cache.served_from_disk() == []
    assert _diff(changed.to_dict(), fresh["working_range"].to_dict()) is not None
    # other library sources: another file name, computed again
    files = set(disk.glob("*.pkl"))
    old_lib = disk_cache.library_digest()
    disk_cache._library = "another version"
    try:
        _checks_ranges(tmp_path, data, cache)
        assert cache.served_from_disk() == [] and len(set(disk.glob("*.pkl")) - files) == 1
    finally:
        disk_cache._library = old_lib
    # a truncated file: ignored, computed again, rewritten
    for f in disk.glob("*.pkl"):
        f.write_bytes(f.read_bytes()[:100])
    again = _checks_ranges(tmp_path, data, cache)
    assert cache.served_from_disk() == [] and _same(again, changed)
    assert _same(_checks_ranges(tmp_path, data, cache), changed) and cache.served_from_disk() == ["working_range"]


def test_cache_off_reads_and_writes_nothing(disk, tmp_path, monkeypatch):
    monkeypatch.setenv("URDF_DYN_CACHE", "off")
    cache = GeometryCache()
    data = _small(iso6015=None, lift_chart=None, design=None)
    _checks_ranges(tmp_path, data, cache)
    _checks_ranges(tmp_path, data, cache)
    assert cache.served_from_disk() == [] and not disk.exists()


def test_no_cache_option_turns_the_disk_cache_off(monkeypatch):
    """``urdf-dyn run|size|sweep --no-cache``: the job runs with the disk cache off (and its workers, by the
    environment); without the option it stays on."""
    import urdf_dyn.jobs.sweep_job as sweep_job
    import urdf_dyn.launch as launch_pkg
    from urdf_dyn.cli.main import main
    from urdf_dyn.jobs import disk_cache
    seen = []
    record = lambda *a, **k: seen.append(disk_cache.enabled())
    monkeypatch.setattr(launch_pkg, "run_scenario", record)
    monkeypatch.setattr(sweep_job, "run_sweep_file", record)
    for cmd in ("run", "size", "sweep"):
        monkeypatch.setenv("URDF_DYN_CACHE", "on")
        assert main([cmd, "x.yaml"]) == 0
        assert main([cmd, "x.yaml", "--no-cache"]) == 0
    assert seen == [True, False] * 3


def test_a_second_run_copies_the_plots_of_the_kept_checks(disk, tmp_path, monkeypatch):
    """A geometry check's plot is a function of its result alone: drawn once, kept beside the result, and a
    later run that takes the result from disk copies the plot (byte for byte) without drawing it."""
    from urdf_dyn.reports import check_plots
    data = _small(iso6015=None, lift_chart=None, design=None)      # the working ranges alone: quick
    launch = _launch(tmp_path / "x.yaml", data)
    frames = {n: Frame(f.link, tuple(f.xyz), tuple(f.rpy)) for n, f in launch.doc.frames.items()}
    cache = GeometryCache()

    def run(name):                                   # one run: the check, its plot copied or drawn and kept
        (tmp_path / name).mkdir()
        cache.begin_run()
        out = sc.machine_checks(launch, build_model(launch), {}, frames, cache)["working_range"]
        files = {"working_range": tmp_path / name / "working_range.png"}
        if not cache.copy_kept_plots(files):
            check_plots.plot_working_range(out, files["working_range"])
            cache.keep_plots(files)
        return out, files["working_range"]

    result, png = run("first")
    assert cache.served_from_disk() == [] and png.stat().st_size > 10_000
    monkeypatch.setattr(check_plots, "plot_working_range", _refuse)
    _, png2 = run("second")
    assert cache.served_from_disk() == ["working_range"]
    assert png2.read_bytes() == png.read_bytes() and png2.parent.name == "second"


def test_the_disk_cache_keeps_the_newest_files_and_drops_stale_temporaries(disk, monkeypatch):
    """At most MAX_FILES results and plots are kept, the least recently used dropped first; a temporary file
    older than an hour (a killed run's) is removed, a fresh one (a write in progress) is not."""
    import os
    import time
    from urdf_dyn.jobs import disk_cache
    monkeypatch.setattr(disk_cache, "MAX_FILES", 3)
    disk.mkdir(parents=True, mode=0o700)
    name = lambda c, ext: c * 40 + ext    # noqa: E731 - the cache's own names: 40 hex digits
    stale, fresh = disk / f".{name('a', '.pkl')}.x1y2z3.tmp", disk / f".{name('b', '.pkl')}.x1y2z3.tmp"
    stale.write_bytes(b"x"), fresh.write_bytes(b"x")
    os.utime(stale, (time.time() - 7200, time.time() - 7200))
    for i in range(5):
        f = disk / name(str(i), ".pkl")
        f.write_bytes(b"r")
        os.utime(f, (time.time() - 100 + i, time.time() - 100 + i))
    src = disk.parent / "plot.png"
    src.write_bytes(b"png")
    assert disk_cache.keep_file(src, disk / name("e", ".png"))
    assert sorted(p.name for p in disk.iterdir()) == [fresh.name, name("3", ".pkl"), name("4", ".pkl"),
                                                      name("e", ".png")]
