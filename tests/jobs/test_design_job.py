"""The main job's design cases (scenarios/excavator_dig.scenario.yaml, dt = 0.05 s): every pin and cylinder has
its keys in sizing_report.json, and the pins agree with the loop-joint pin loads that the sizing itself
reports (a second path: ``size_motion``'s λ from ``actuator_forces``, per pin of a pair), and the cylinder's
base pin carries the cylinder's force up to the barrel's weight and inertia."""
import csv
import json

import numpy as np
import pytest
from test_excavator_job import launch_data, run

CYLS = ("boom_cyl", "stick_cyl", "bucket_cyl")


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("design")
    return (tmp,) + run(tmp, launch_data())


def test_every_pin_and_cylinder_has_its_keys(job):
    tmp, res, written, lines = job
    js = json.loads((tmp / "dig" / "sizing_report.json").read_text())
    data = launch_data()
    for name in data["design"]["pins"]:
        p = js["pins"][name]
        assert p["cycle_peak_N"] > 0 and p["damage_equivalent_N"] > 0
        assert p["design_load_N"] > 0 and p["design_case"]       # from the stall envelopes (test_stall_job)
    for n in CYLS:
        assert 1.0 < js["actuators"][n]["buckling_safety_factor"] < 20
    h = js["hydraulics"]
    assert h["engine_power_kW"] == pytest.approx(121.0) and h["peak_power_kW"] > 10 and h["power_limited_s"] >= 0
    assert 5 < js["cycle"]["shortest_s"] < 60 and len(js["cycle"]["binding_limits"]) == 5
    rows = list(csv.DictReader(open(written["pin_design_loads_csv"])))
    assert sorted(r["pin"] for r in rows) == sorted(data["design"]["pins"])
    with open(written["pump_power_csv"]) as fh:
        assert next(csv.reader(fh))[:3] == ["t [s]", "pump pressure [bar]", "flow demanded [L/min]"]
    assert set(js["cycle"]["peak_ratios"]) >= {"relief boom_cyl", "torque swing", "power engine", "flow pumps"}
    assert max(js["cycle"]["peak_ratios"].values()) == pytest.approx(1.0, abs=2e-3)   # the shortest cycle is tight
    assert any("Design cases" in line for line in (tmp / "dig" / "sizing_report.md").read_text().splitlines())


def test_pins_agree_with_the_sizing_loop_loads(job):
    tmp, res, written, lines = job
    js = json.loads((tmp / "dig" / "sizing_report.json").read_text())
    # size_motion reports the loop pins per pin of a pair too (pin_count): λ from its own actuator_forces call
    assert res.pin_count["boom_cylinder_eye"] == 2
    for name in ("boom_cylinder_eye", "stick_cylinder_eye", "bucket_cylinder_eye"):
        assert js["pins"][name]["cycle_peak_N"] == pytest.approx(res.pin_force[name].max(), rel=1e-9)
    assert js["pins"]["h_link_pin"]["cycle_peak_N"] == pytest.approx(res.pin_force["h_link_bucket_pin"].max(), rel=1e-9)
    # the base pin: the cylinder force ± the barrel's weight and inertia (280 kg pair: < 2 kN per pin)
    u = np.abs(res.u[:, res.names.index("boom_cyl")]).max()
    assert abs(js["pins"]["boom_cylinder_base"]["cycle_peak_N"] - u / 2) < 2e3
