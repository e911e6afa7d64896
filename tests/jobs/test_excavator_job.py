"""The main job (scenarios/excavator_dig.scenario.yaml), shortened (dt = 0.05 s, no animation): the report's JSON
keys, units in every CSV column, the soil setting the bucket cylinder's peak during the dig (against the same
cycle without soil), the payload filling and leaving continuously, loads following their phase when a
duration changes, and one-line errors for bad input."""
import csv
import json

import numpy as np
import pytest
import yaml

import urdf_dyn as ud
from _robots import ROOT
from urdf_dyn.cli.main import main
from urdf_dyn.launch import run_scenario

SRC = ROOT / "scenarios" / "excavator_dig.scenario.yaml"


def launch_data(dt=0.05, **changes):
    """The main job's scenario with the robot's absolute path, samples every ``dt`` [s], no animation, and
    top-level sections replaced (None: removed)."""
    data = yaml.safe_load(SRC.read_text())
    data["robot"]["file"] = str(ROOT / "robots" / "excavator.urdf")
    data["motion"]["dt"] = dt
    data["outputs"].pop("animation", None)
    for k, v in changes.items():
        if v is None:
            data.pop(k, None)
        else:
            data[k] = v
    if data.get("soil") is None and "design" in data:
        data["design"].pop("duty", None)     # the duty mix's activities cut the scenario's soil
    return data


def run(tmp_path, data, name="dig"):
    f = tmp_path / f"{name}.yaml"
    f.write_text(yaml.safe_dump(data))
    lines = []
    res, written = run_scenario(f, out_dir=tmp_path / name, progress=False, echo=lines.append)
    return res, written, lines


def sizing_run(tmp_path, data, name="dig"):
    """``compute(plan, cache)`` of the scenario ``data`` (written to ``tmp_path``): the SizingRun, nothing
    rendered (the geometry cache in memory only)."""
    from urdf_dyn.jobs.geometry_cache import GeometryCache
    from urdf_dyn.jobs.sizing_job import SizeDocument
    from urdf_dyn.jobs.sizing_plan import SizingPlan
    from urdf_dyn.jobs.sizing_run import compute
    from urdf_dyn.launch import read_scenario, validate
    f = tmp_path / f"{name}.yaml"
    f.write_text(yaml.safe_dump(data))
    sc = read_scenario(f)
    validate(sc, SizeDocument)
    return compute(SizingPlan.from_scenario(sc), GeometryCache(disk=False), progress=False, echo=lambda *a: None)


@pytest.fixture(scope="module")
def main_job(tmp_path_factory):
    """The main job through its pipeline in this process: (folder, SizingRun, Manifest)."""
    from urdf_dyn.jobs.geometry_cache import GeometryCache
    from urdf_dyn.jobs.sizing_job import SizeDocument
    from urdf_dyn.jobs.sizing_plan import SizingPlan
    from urdf_dyn.jobs.sizing_run import compute
    from urdf_dyn.launch import read_scenario, validate
    from urdf_dyn.reports.plotting import PlotWorker
    from urdf_dyn.reports.sizing_render import render
    tmp = tmp_path_factory.mktemp("dig")
    f = tmp / "dig.yaml"
    f.write_text(yaml.safe_dump(launch_data()))
    sc = read_scenario(f)
    validate(sc, SizeDocument)
    sizing = compute(SizingPlan.from_scenario(sc), GeometryCache(disk=False), progress=False)
    (tmp / "dig").mkdir()
    plots = PlotWorker(parallel=False)
    manifest = render(sizing, tmp / "dig", plots)
    plots.wait()
    return tmp, sizing, manifest


def test_the_run_record_holds_the_motion_loads_actuation_and_checks(main_job):
    """The SizingRun of the main job: one motion, the soil's wrench in f_ext, the hydraulics, every check
    asked for, the strokes, and nothing taken from a cache that was not asked for."""
    _, sizing, manifest = main_job
    N = len(sizing.t)
    assert sizing.q.shape == sizing.qd.shape == sizing.qdd.shape == (N, sizing.plan.model.nq)
    assert set(sizing.f_ext) == {"bucket"} and sizing.f_ext["bucket"].shape == (N, 6)
    assert sizing.loads.cut.reached and sizing.loads.mass.max() > 500
    assert sizing.actuation.u.shape == (N, 4) and sizing.power.peak_flow > 0
    assert set(sizing.checks) == {"iso6015", "lift_chart", "working_range", "stability", "design", "stall"}
    assert sizing.strokes == {"end_reached": []} and "none reached" in sizing.strokes_line   # the stroke margins
    assert sizing.provenance == ()
    assert sizing.plan.kind.name == "excavator" and list(sizing.windows) == ["dig", "curl", "swing", "dump", "return"]
    from urdf_dyn.algorithms.kinematics import body_poses        # the poses, computed once, are the motion's
    assert not sizing.poses.flags.writeable and np.array_equal(sizing.poses, body_poses(sizing.model, sizing.q))
    # what render wrote: the f_ext the run applied, bit for bit
    with np.load(manifest["f_ext_npz"]) as z:
        assert list(z["links"]) == ["bucket"] and np.array_equal(z["wrench"][0], sizing.f_ext["bucket"])


def test_the_checks_and_actuators_of_the_run(main_job):
    """The run's record: ISO 6015's forces in the 20 t class's range, a lift chart, a finite tipping margin,
    the pump demand, the soil's share of the bucket's load, every actuator's peak over its RMS."""
    _, sizing, _ = main_job
    iso = sizing.checks["iso6015"]
    assert 100e3 < iso.bucket_N < 200e3 and 80e3 < iso.arm_N < 150e3
    assert np.isfinite(sizing.checks["lift_chart"].front).any()
    assert np.isfinite(sizing.checks["stability"].min_margin)
    assert sizing.power.peak_flow > 0
    peak_bucket = np.linalg.norm(sizing.f_ext["bucket"][:, 3:], axis=1).max()
    assert peak_bucket > sizing.loads.cut.magnitude.max() * 0.5
    u = np.abs(sizing.actuation.u)
    assert np.all(u.max(axis=0) >= np.sqrt((u ** 2).mean(axis=0))) and np.all(u.max(axis=0) > 0)
    assert sorted(sizing.actuation.names) == ["boom_cyl", "bucket_cyl", "stick_cyl", "swing"]


def test_report_json_and_units(main_job):
    """The rendered report: the record's figures under their JSON keys, CSV headers with units, the sections."""
    tmp, sizing, written = main_job
    js = json.loads((tmp / "dig" / "sizing_report.json").read_text())
    assert js["iso6015"]["bucket_digging_force_N"] == sizing.checks["iso6015"].bucket_N
    assert isinstance(js["lift_capacity"], list) and js["lift_capacity"]
    assert js["stability"]["min_margin_m"] == sizing.checks["stability"].min_margin
    for key in ("actuator_forces_csv", "pin_loads_csv", "hydraulics_csv", "soil_csv"):
        with open(written[key]) as fh:
            header = next(csv.reader(fh))
        assert all(h.endswith("]") and " [" in h for h in header), header
    for key in ("forces_png", "soil_png", "soil_direction_png", "pump_flow_png", "envelope_png", "lift_chart_png", "zmp_png", "report"):
        assert key in written
    md = (tmp / "dig" / "sizing_report.md").read_text()
    for s in ("pull use", "Soil", "Hydraulics", "ISO 6015", "ISO 10567", "Stability", "L/min", "kN·m"):
        assert s in md


def test_stall_convergence_sliding_buckling_cases_and_fe_export(main_job):
    """The stall record of the main job: anchored design loads refined to convergence, the sliding case never
    above the anchored one on the same grid (sliding only adds a limit), the buckling check's reachable
    compression from the same envelopes and at most the relief force that bounds it, the case matrix's rows
    bounded by the converged loads, and the FE export written through the manifest, every body in
    equilibrium."""
    from urdf_dyn.reports.manifest import OUTPUTS
    _, sizing, manifest = main_job
    stall, design, cyl = sizing.checks["stall"], sizing.checks["design"], sizing.plan.cylinders
    conv, sliding = stall.convergence, stall.sliding
    assert conv.friction is None and sliding.friction == pytest.approx(0.5)
    assert all(conv.converged.values()) and stall.loads == conv.loads
    for p, d in conv.loads.items():
        assert d["design_load_N"] >= conv.grid_loads[p]["design_load_N"]
        assert sliding.grid_loads[p]["design_load_N"] <= conv.grid_loads[p]["design_load_N"] * (1 + 1e-9)
    reach = stall.env.push_forces({c: v.count for c, v in cyl.items()})
    assert set(design.buckling) == {"boom_cyl", "stick_cyl", "bucket_cyl"}
    for c, b in design.buckling.items():
        assert b.reachable == reach[c] > 0
        assert b.reachable <= b.load * (1 + 1e-6)          # the head-end line relief bounds every stall state
        assert b.relief == sizing.plan.scenario.doc.design.buckling.relief[c]
    rows = stall.cases
    assert [r.anchoring for r in rows[:6]] == ["anchored"] * 3 + ["sliding, μ = 0.5"] * 3
    top = next(r for r in rows if r.case.startswith("design loads"))
    assert top.pins == {p: d["design_load_N"] for p, d in conv.loads.items()}
    for r in rows[:3]:
        assert all(r.pins[p] <= top.pins[p] * (1 + 1e-9) for p in top.pins)
        assert r.ring["tilting_moment_Nm"] > 0
    assert manifest["free_body_csv"].endswith(OUTPUTS["free_body_csv"].file)
    assert manifest["free_body_bdf"].endswith(OUTPUTS["free_body_bdf"].file)
    for fb in stall.free_bodies:
        assert np.abs(fb.residual).max() <= 1e-9 * fb.largest_force
    every = stall.free_bodies + (stall.lateral.free_bodies if getattr(stall, "lateral", None) else [])
    with open(manifest["free_body_csv"]) as fh:
        res_rows = [r for r in csv.reader(fh) if r[2] == "residual"]
    assert len(res_rows) == len(every) and {r[0] for r in res_rows} == {f.case for f in every}
    text = open(manifest["free_body_bdf"]).read()
    assert text.count("\nFORCE,") == sum(len(f.loads) for f in every)
    assert sizing.checks["iso6015"].arm_bucket == "max_moment"


def test_soil_sets_the_bucket_cylinder_peak_during_the_dig(main_job, tmp_path):
    tmp, sizing, written = main_job
    res = sizing.actuation
    bare, _, _ = run(tmp_path, launch_data(soil=None, iso6015=None, lift_chart=None, stability=None), "bare")
    a, b = sizing.windows["dig"]
    dig = (res.t >= a) & (res.t <= b)
    k = res.names.index("bucket_cyl")
    with_soil, without = np.abs(res.u[dig, k]).max(), np.abs(bare.u[dig, k]).max()
    assert with_soil > 2 * without and with_soil - without > 30e3
    # the CSV carries the force in kN
    i = np.argmax(np.abs(res.u[:, k]) * dig)
    csv_kN = np.array([float(x) for x in _column(written["actuator_forces_csv"], "u[bucket_cyl] [kN]")])
    assert csv_kN[i] * 1e3 == pytest.approx(res.u[i, k])
    assert sizing.loads.cut.depth.max() > 0.2 and sizing.loads.cut.magnitude.max() > 20e3


def test_soil_force_opposes_the_edge_velocity_in_the_main_job(main_job):
    """soil.csv: wherever the edge is in the soil and moving, the force on it has a negative component
    along its velocity (it opposes the cut) and lies within 30° of the backward travel (the rake from the
    cutting plate keeps the wedge's resultant near −v); the payload never exceeds a heaped bucket of loose
    soil (1.19 m³ × 1417 kg/m³)."""
    tmp, sizing, written = main_job
    with open(written["soil_csv"]) as fh:
        rows = list(csv.reader(fh))
    h = rows[0]
    a = np.array([[float(x) for x in r] for r in rows[1:]])
    f = a[:, [h.index(f"force_{k} [N]") for k in "xyz"]]
    v = a[:, [h.index(f"edge_velocity_{k} [m/s]") for k in "xyz"]]
    m = (a[:, h.index("depth [m]")] > 0) & (np.linalg.norm(v, axis=1) > 0.05)
    assert m.sum() > 10
    cos = np.einsum("ij,ij->i", f[m], -v[m]) / np.linalg.norm(f[m], axis=1) / np.linalg.norm(v[m], axis=1)
    assert np.all(cos > np.cos(np.radians(30)))
    assert a[:, h.index("payload [kg]")].max() <= 1.19 * 115 * 16.0185 / 1.30 * (1 + 1e-9)


def _column(path, name):
    with open(path) as fh:
        rows = list(csv.reader(fh))
    j = rows[0].index(name)
    return [r[j] for r in rows[1:]]


def test_payload_fills_and_leaves_continuously_and_follows_its_phase(tmp_path):
    """Soil mass from the cut volume: no step between samples; with the dig phase 1 s longer, the edge
    still cuts only inside the dig phase and the payload still leaves during the dump."""
    from urdf_dyn.jobs.sizing_job import SizeDocument
    from urdf_dyn.jobs.sizing_plan import SizingPlan
    from urdf_dyn.jobs.sizing_run import compute
    from urdf_dyn.launch.document import read_scenario, validate
    for extra in (0.0, 1.0):
        data = launch_data(iso6015=None, lift_chart=None, working_range=None, design=None, stability=None)
        data["motion"]["durations"][0] += extra
        f = tmp_path / f"d{extra}.yaml"
        f.write_text(yaml.safe_dump(data))
        L = read_scenario(f)
        validate(L, SizeDocument)
        run = compute(SizingPlan.from_scenario(L), progress=False)
        mo, win, m = run.plan.motion, run.windows, run.loads.mass
        assert set(run.f_ext) == {"bucket"} and run.power is not None and run.checks == {}
        assert m.max() > 1000 and np.abs(np.diff(m)).max() < 0.1 * m.max()
        cut_t = mo.t[run.loads.cut.in_soil]
        assert win["dig"][0] <= cut_t.min() and cut_t.max() <= win["curl"][1]
        a, b = win["dump"]
        assert m[mo.t < a].max() == pytest.approx(m.max()) and m[mo.t > b + 1e-9].max() == 0.0
        assert 0 < m[np.argmin(np.abs(mo.t - 0.5 * (a + b)))] < m.max()


BAD = [
    (dict(loads=[{"link": "shovel", "force": [0, 0, -1000]}]), "loads[0].link: unknown link 'shovel'"),
    ("preset", "soil.preset: unknown value 'mud'"),
    ("cohesion", "soil.cohesion: must be >= 0"),
    ("ground", "soil.ground.height: the cutting edge never goes below the ground"),
    ("phase", "soil.during: unknown phase 'digging'"),
]


@pytest.mark.parametrize("change,message", BAD)
def test_bad_input_names_the_key(tmp_path, change, message):
    data = launch_data()
    data["motion"]["dt"] = 0.1
    for k in ("iso6015", "lift_chart", "stability", "hydraulics"):
        data.pop(k)
    if isinstance(change, dict):
        data.update(change)
    elif change == "preset":
        data["soil"]["preset"] = "mud"
    elif change == "cohesion":
        data["soil"]["cohesion"] = -5e3
    elif change == "ground":
        data["soil"]["ground"]["height"] = -5.0
    elif change == "phase":
        data["soil"]["during"] = ["digging"]
    f = tmp_path / "bad.yaml"
    f.write_text(yaml.safe_dump(data))
    with pytest.raises(ud.ScenarioError) as e:
        run_scenario(f, out_dir=tmp_path / "o", progress=False, echo=lambda *a: None)
    assert message in str(e.value) and "\n" not in str(e.value)
    assert main(["launch", str(f), "--out-dir", str(tmp_path / "o")]) == 2


def test_constant_payload_in_seconds_or_phases_still_works(tmp_path):
    """The old `payload:` (from/until in seconds) as a point mass's wrench gives the forces of the per-sample
    loaded models (the path kept for a payload with inertia); `during: <phase>` gives the same window."""
    base = launch_data(soil=None, iso6015=None, lift_chart=None, stability=None, hydraulics=None)
    base["motion"]["dt"] = 0.1
    pl = {"link": "bucket", "mass": 1800.0, "com": [0.75, 0.0, 0.35]}
    a = dict(base, payload=dict(pl, **{"from": 4.5, "until": 13.3}))
    b = dict(base, payload=dict(pl, **{"from": 4.5, "until": 13.3}, inertia=[[0.0] * 3] * 3))
    c = dict(base, payload=dict(pl, during=["curl", "swing"]))
    ra, rb, rc = (run(tmp_path, d, n)[0] for d, n in ((a, "a"), (b, "b"), (c, "c")))
    assert np.abs(ra.u - rb.u).max() < 1e-6 * np.abs(rb.u).max()
    assert np.abs(ra.u - rc.u).max() < 1e-6 * np.abs(rb.u).max()


def test_loads_by_phase_profile_and_csv(tmp_path):
    """A world-frame force on the cutting edge during `swing`, ramped by waypoints, changes the forces only
    inside that phase; the same wrench from a CSV gives the same forces; the pin loads carry it."""
    base = launch_data(soil=None, iso6015=None, lift_chart=None, stability=None, hydraulics=None)
    base["motion"]["dt"] = 0.1
    load = {"link": "bucket", "frame": "world", "point": [0.0, 0.0, 0.0], "force": [0.0, 0.0, -20e3],
            "during": "swing", "profile": [[0.0, 0.0], [2.0, 1.0], [4.8, 1.0]]}
    (tmp_path / "w.csv").write_text("t,fx,fy,fz,nx,ny,nz\n0,0,0,0,0,0,0\n2,0,0,-20000,0,0,0\n4.8,0,0,-20000,0,0,0\n")
    r0 = run(tmp_path, base, "none")[0]
    # (a force on the bucket applied at the world origin: its line of action passes through the swing axis)
    r1 = run(tmp_path, dict(base, loads=[load]), "prof")[0]
    csv_load = {k: v for k, v in load.items() if k not in ("force", "profile")}
    r2 = run(tmp_path, dict(base, loads=[dict(csv_load, csv=str(tmp_path / "w.csv"))]), "csv")[0]
    a, b = 8.5, 13.3   # the swing phase (durations 4.5 + 4.0, then 4.8)
    inside = (r0.t >= a - 1e-9) & (r0.t <= b + 1e-9)
    assert np.allclose(r1.u[~inside], r0.u[~inside], atol=1e-6)
    assert np.abs(r1.u[inside] - r0.u[inside]).max() > 1e3
    assert np.allclose(r2.u, r1.u, atol=1e-6)
    assert np.abs(r1.pin_force["boom_cylinder_eye"] - r0.pin_force["boom_cylinder_eye"])[inside].max() > 1e3


def test_out_of_plane_cases_in_the_main_job(main_job):
    """design.lateral of the main job: a corner-tooth row per stalling cylinder whose pin forces never exceed
    the planar anchored row's (the corner only adds a roll moment: tipping may bind sooner, never later), the
    swing stall's ring torque the swing relief's D p, moments only at the main chain's pins, the six end
    stops and the ring at the tipping limit, and every exported free body in equilibrium."""
    _, sizing, manifest = main_job
    stall = sizing.checks["stall"]
    lat = stall.lateral
    rows = {r.case: r for r in lat.rows}
    planar = {r.case: r for r in stall.cases if r.anchoring == "anchored"}
    for c in ("boom_cyl", "stick_cyl", "bucket_cyl"):
        r = rows[f"corner tooth, {c} stall"]
        assert all(r.pins[p] <= planar[f"{c} stall"].pins[p] * (1 + 1e-9) for p in r.pins)
        assert r.moments["bucket_pivot"] > 0 and r.side["bucket_pivot"] <= 1e-6 * r.pins["bucket_pivot"]
    T = lat.settings["swing_torque_Nm"]
    assert T == pytest.approx(7.4e4 / 2.68e7 * 2.55e7)
    assert rows["swing stall against a wall"].ring["torque_Nm"] == pytest.approx(T, rel=1e-9)
    assert all(r.ring.get("torque_Nm", 0.0) <= T * (1 + 1e-9) for r in lat.rows)    # the swing relief holds every case
    for r in (rows["swing stall against a wall"], rows["eccentric tooth load"]):
        assert all(r.moments[p] > 0 and r.side[p] > 0 for p in ("boom_foot", "boom_nose", "bucket_pivot"))
        assert all(r.moments[p] == 0 for p in ("side_link_pivot", "h_link_pin", "boom_cylinder_eye"))
        assert r.torsion["boom"] > 0 and r.torsion["stick"] > 0
    assert sum(k.startswith("end stop") for k in rows) == 6
    assert rows["slewing ring at the tipping limit"].ring["tilting_moment_Nm"] > 0
    for fb in lat.free_bodies:
        assert np.abs(fb.residual).max() <= 1e-9 * fb.largest_force, (fb.case, fb.body)
    with open(manifest["free_body_csv"]) as fh:
        cases = {r[0] for r in csv.reader(fh) if r[2] == "residual"}
    assert {fb.case for fb in lat.free_bodies} <= cases


def test_viewer_files_written_before_the_checks_are_those_render_writes(main_job, tmp_path):
    """The job writes the files the viewers read (motion, actuator and pin CSVs, soil, f_ext, view.json) from
    the run without its checks, so that its GIF and recording are drawn while the checks are computed;
    ``render`` then records them in their places. Both folders and manifests equal the plain render's, byte
    for byte and key for key."""
    import dataclasses
    from urdf_dyn.reports.plotting import NoPlots
    from urdf_dyn.reports.sizing_render import render, viewer_inputs
    folder, sizing, manifest = main_job
    so_far = dataclasses.replace(sizing, checks={}, strokes={}, strokes_line="")
    out = tmp_path / "early"
    out.mkdir()
    keys = viewer_inputs(so_far, out)
    assert keys == {"motion_npz", "actuator_forces_csv", "pin_loads_csv", "soil_csv", "f_ext_npz", "view_json"}
    first = {k: (out / manifest.describe(k).file).read_bytes() for k in keys}
    for k in keys:
        assert first[k] == (folder / "dig" / manifest.describe(k).file).read_bytes(), k
    again = render(sizing, out, NoPlots(), present=keys)
    assert [k for k in again if k in manifest] == [k for k in manifest if k in again]
    for k in keys:                                        # recorded, not written a second time
        assert (out / manifest.describe(k).file).read_bytes() == first[k]
    for k in ("report", "report_json", "hydraulics_csv"):
        assert (out / manifest.describe(k).file).read_bytes() == (folder / "dig" / manifest.describe(k).file).read_bytes()
