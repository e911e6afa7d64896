"""The main job's stall envelopes and pin design loads (scenarios/excavator_dig.scenario.yaml), asserted on the
run's record (``compute(plan, cache).checks["stall"]``): every design pin has its design load and case, and the
design load equals the pin's force evaluated directly (``pins.pin_loads``, one state) at the case's pose with
the held tip force recomputed from the stall envelope at that pose — a second evaluation, not the record's
numbers copied. One test reads the rendered files (pin_design_loads.csv and the two plots)."""
import csv

import numpy as np
import pytest
from _robots import ROOT
from test_excavator_job import launch_data, sizing_run

CYLS = ("boom_cyl", "stick_cyl", "bucket_cyl")


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    return sizing_run(tmp_path_factory.mktemp("stall"), launch_data())


def test_every_pin_has_its_design_load_and_case(job):
    stall = job.checks["stall"]
    for name in launch_data()["design"]["pins"]:
        d = stall.loads[name]
        c = d["design_case"]
        assert d["design_load_N"] > 0 and c["cylinder"] in CYLS
        assert c["direction"] in ("tangent", "fan", "corner") and set(c["pose"]) == set(CYLS)
        assert c["limited_by"] in (*CYLS, "tipping", "sliding")
    assert len(stall.env.X) >= 2000 and stall.env.summary()["poses"] == len(stall.env.X)


def test_the_rendered_design_loads(tmp_path, job):
    """pin_design_loads.csv holds the record's design loads and cases; the two plots are drawn."""
    from urdf_dyn.reports.plotting import PlotWorker
    from urdf_dyn.reports.sizing_render import render
    plots = PlotWorker(parallel=False)
    written = render(job, tmp_path, plots)
    plots.wait()
    loads = job.checks["stall"].loads
    rows = {r["pin"]: r for r in csv.DictReader(open(written["pin_design_loads_csv"]))}
    for name in launch_data()["design"]["pins"]:
        assert float(rows[name]["design_load_N"]) == pytest.approx(loads[name]["design_load_N"], rel=1e-5)
        assert rows[name]["design_case"].startswith(loads[name]["design_case"]["cylinder"])
    assert (tmp_path / "stall_envelopes.png").stat().st_size > 10_000
    assert (tmp_path / "pin_design_loads.png").stat().st_size > 10_000


def test_design_load_is_the_pin_force_at_its_case(job):
    """For the boom foot and the bucket pivot: assemble the case's pose, apply the case's tip force (its
    magnitude and angle in the boom plane from the record) at the lip and evaluate the pin directly."""
    import urdf_dyn as ud
    from urdf_dyn.constraints.assembly import assemble
    from urdf_dyn.machines.pins import PinSpec, pin_loads
    loads = job.checks["stall"].loads
    data = launch_data()
    model = ud.load(ROOT / "robots" / "excavator.urdf")
    lip = data["frames"][data["iso6015"]["lip"]]
    for name in ("boom_foot", "bucket_pivot"):
        spec = data["design"]["pins"][name]
        pin = PinSpec(spec) if isinstance(spec, str) else PinSpec(spec["joint"], spec.get("count", 1))
        c = loads[name]["design_case"]
        q = model.q_initial()
        start = {k: q[model.joint_index(k)] for k in c["pose"]}
        for s in np.linspace(0.0, 1.0, 21)[1:]:   # follow the initial configuration's branch (a pose near the
            for k, v in c["pose"].items():        # boom's dead centre has a second assembly close by)
                q[model.joint_index(k)] = start[k] + s * (v - start[k])
            q = assemble(model, q, hold=("swing", "boom_cyl", "stick_cyl", "bucket_cyl"), residual_tol=1e-12)
        th = np.radians(c["angle_deg"])
        f = c["tip_force_N"] * np.array([np.cos(th), 0.0, np.sin(th)])
        R = ud.link_pose(model, q, lip["link"])[:3, :3]
        fl = R.T @ f
        z = np.zeros((1, model.nv))
        pl = pin_loads(model, [0.0], q[None], z, z, {name: pin},
                       f_ext={lip["link"]: np.r_[np.cross(lip["xyz"], fl), fl]})
        assert pl.force(name)[0] == pytest.approx(loads[name]["design_load_N"], rel=1e-6)


def test_the_stall_computed_beside_the_job_is_the_one_computed_in_it(tmp_path, job, monkeypatch):
    """The sizing job starts the stall envelopes and the lateral cases in forked processes right after its
    plan (``ExcavatorKind.ahead``, ``jobs.beside``); ``compute`` then takes them from the cache. Both came from
    the children (not from the job's fallback), and they are the ``job`` fixture's, computed in the job's
    process, to the bit."""
    import yaml

    from urdf_dyn.jobs.beside import Beside
    from urdf_dyn.jobs.geometry_cache import GeometryCache
    from urdf_dyn.jobs.sizing_job import SizeDocument
    from urdf_dyn.jobs.sizing_plan import SizingPlan
    from urdf_dyn.jobs.sizing_run import compute
    from urdf_dyn.launch import read_scenario, validate
    import urdf_dyn.numba_cache as nc
    monkeypatch.setattr(nc, "kernels_ready", lambda: True)   # the ``job`` fixture has compiled the kernels
    beside = Beside()
    if not beside.allowed:
        pytest.skip("no forked process here (not Linux, one core, or URDF_DYN_PLOT_WORKER=0)")
    f = tmp_path / "dig.yaml"
    f.write_text(yaml.safe_dump(launch_data()))
    sc = read_scenario(f)
    validate(sc, SizeDocument)
    plan, cache, started = SizingPlan.from_scenario(sc), GeometryCache(disk=False), []

    def start(fn):
        started.append(beside.start(fn))
        return started[-1]
    plan.kind.ahead(plan, cache, start)
    assert len(started) == 2 and all(p is not None for p in started)        # the envelopes, the lateral cases
    run = compute(plan, cache, progress=False, echo=lambda *a: None)
    beside.close()
    assert [p.given for p in started] == [True, True]
    ours, theirs = run.checks["stall"], job.checks["stall"]
    _same(ours, theirs)
    assert ours.lateral is not None


def _same(a, b, path="result"):
    """Equal to the bit: the same types, keys and attributes, arrays of the same dtype, shape and values (a
    result sent from a child is unpickled into compact arrays where the job's own holds views)."""
    assert type(a) is type(b), path
    if isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape, path
        assert np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"), path
    elif isinstance(a, dict):
        assert list(a) == list(b), path
        for k in a:
            _same(a[k], b[k], f"{path}[{k!r}]")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            _same(x, y, f"{path}[{i}]")
    elif hasattr(a, "__dict__"):
        _same(vars(a), vars(b), path)
    elif isinstance(a, float) and a != a:
        assert b != b, path
    else:
        assert a == b, path
