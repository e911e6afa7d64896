"""The arm as a machine kind of the sizing pipeline (jobs/arm_kind.py): the shipped palletizer scenario through
plan → compute → render in this process. Its drive sizing equals the standalone computation
(machines.drives.arm_sizing: the payload on the wrist where the scenario's phases say, ID of its own) on the
same motion; the report speaks of drives; bad drive data and mixed kinds are located errors."""
import shutil

import numpy as np
import pytest
import yaml

from _robots import ROOT
from urdf_dyn.errors import ScenarioError

SCENARIO = ROOT / "scenarios" / "palletizer_cycle.scenario.yaml"


def _plan(path):
    from urdf_dyn.jobs.sizing_job import SizeDocument
    from urdf_dyn.jobs.sizing_plan import SizingPlan
    from urdf_dyn.launch import read_scenario, validate
    sc = read_scenario(path)
    validate(sc, SizeDocument)
    return SizingPlan.from_scenario(sc)


@pytest.fixture(scope="module")
def pallet(tmp_path_factory):
    from urdf_dyn.jobs.geometry_cache import GeometryCache
    from urdf_dyn.jobs.sizing_run import compute
    from urdf_dyn.reports.plotting import PlotWorker
    from urdf_dyn.reports.sizing_render import render
    tmp = tmp_path_factory.mktemp("pallet")
    run = compute(_plan(SCENARIO), GeometryCache(disk=False), progress=False)
    plots = PlotWorker(parallel=False)
    manifest = render(run, tmp, plots)
    plots.wait()
    return tmp, run, manifest


def test_pipeline_drives_equal_the_standalone_sizing(pallet):
    from urdf_dyn.machines.drives import arm_sizing
    _, run, _ = pallet
    sz = run.checks["drives"]
    kp = run.plan.kind_plan
    assert run.plan.kind.name == "arm" and len(run.model.balancers) == 2
    assert sz.payload.mass == 700.0 and sz.payload.com == (0.4, 0.0, 0.0)
    ref = arm_sizing(run.model, kp.data, run.t, run.q, run.qd, run.qdd, payload=sz.payload, loaded=sz.loaded)
    assert sz.names == ref.names
    assert np.allclose(sz.u, ref.u, rtol=1e-9, atol=1e-6 * np.abs(ref.u).max())
    assert np.allclose(sz.motors.torque, ref.motors.torque, rtol=1e-9, atol=1e-9 * np.abs(ref.motors.torque).max())
    # the payload is on from the grip to the release only (the scenario's phases)
    w = run.windows
    assert sz.loaded[(run.t > w["grip"][0] + 0.01) & (run.t < w["lower"][1] - 0.01)].all()
    assert not sz.loaded[run.t < w["grip"][0] - 0.01].any() and not sz.loaded[run.t > w["release"][0] + 0.01].any()
    assert [r.joint for r in sz.wrist] == ["joint_4", "joint_5", "joint_6"]
    F = sz.balancers["j2_balancer_left"][1]
    assert np.all(F < 0)                                  # the J2 balancers pull throughout


def test_report_speaks_of_drives(pallet):
    tmp, run, manifest = pallet
    text = (tmp / "sizing_report.md").read_text()
    assert "## Electric drives" in text and "## Reducers" in text and "## Wrist payload" in text
    for word in ("push", "pull capacity", "cap p", "rod p", "bar"):
        assert word not in text.split("## Electric drives")[0], word
    for key in ("drive_csv", "drive_operating_points_png", "drive_cycle_png"):
        assert key in manifest and (tmp / manifest[key].split("/")[-1]).stat().st_size > 1000
    js = (tmp / "sizing_report.json").read_text()
    assert '"drives"' in js and '"wrist"' in js and '"balancers"' in js


def _write(tmp_path, change):
    data = yaml.safe_load(SCENARIO.read_text())
    data["robot"]["file"] = str(ROOT / "robots" / "fanuc_m900ib700" / "fanuc_m900ib700_loops.urdf")
    drives = yaml.safe_load((ROOT / "robots" / "fanuc_m900ib700" / "m900ib700_drives.yaml").read_text())
    change(data, drives)
    (tmp_path / "drives.yaml").write_text(yaml.safe_dump(drives))
    data["drives"] = {"data": "drives.yaml"}
    p = tmp_path / "s.scenario.yaml"
    p.write_text(yaml.safe_dump(data))
    return p


@pytest.mark.parametrize("change, words", [
    (lambda s, d: d["drives"].pop("joint_6"), "drives.data: .*no drive for the actuated joint\\(s\\) joint_6"),
    (lambda s, d: d["reducers"]["RV-80N-101"].update(efficiency=1.5), "drives.data: .*reducers.RV-80N-101.efficiency"),
    (lambda s, d: d["payload_limits"].update(joint_9={"moment": 1, "inertia": 1, "source": "x"}),
     "drives.data: .*payload_limits.joint_9: no joint 'joint_9'"),
    (lambda s, d: s.update(hydraulics={"relief": 3.0e7, "pump_flow": 0.007}), "two machine kinds"),
])
def test_bad_drive_scenarios_are_located(tmp_path, change, words):
    with pytest.raises(ScenarioError, match=words) as e:
        _plan(_write(tmp_path, change))
    assert "s.scenario.yaml" in str(e.value)
