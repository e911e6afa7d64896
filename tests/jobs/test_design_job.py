"""The main job's design cases (scenarios/excavator_dig.scenario.yaml, dt = 0.05 s), asserted on the run's
record (``compute(plan, cache).checks["design"]``): every pin and cylinder has its results, the pins agree
with the loop-joint pin loads that the sizing itself computes (a second path: ``size_motion``'s λ from
``actuator_forces``, per pin of a pair), and the cylinder's base pin carries the cylinder's force up to the
barrel's weight and inertia. One test reads the rendered files (their keys, headers and sections)."""
import csv
import json

import numpy as np
import pytest
from test_excavator_job import launch_data, sizing_run

CYLS = ("boom_cyl", "stick_cyl", "bucket_cyl")


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    return sizing_run(tmp_path_factory.mktemp("design"), launch_data())


def test_every_pin_and_cylinder_has_its_results(job):
    run = job
    design, stall = run.checks["design"], run.checks["stall"]
    pins = launch_data()["design"]["pins"]
    assert sorted(design.pins.names) == sorted(pins)
    for name in pins:
        assert design.pins.cycle_peak(name)[0] > 0 and design.damage[name] > 0
        assert stall.loads[name]["design_load_N"] > 0 and stall.loads[name]["design_case"]   # test_stall_job
    for n in CYLS:
        assert 1.0 < design.buckling[n].safety_factor < 20
    p = design.pumps
    assert p.engine_power == pytest.approx(121e3) and p.peak_power > 10e3 and p.power_limited_s >= 0
    c = design.cycle
    assert 5 < c.total < 60 and len(c.binding) == 5 == len(run.windows)
    assert set(c.peaks) >= {"relief boom_cyl", "torque swing", "power engine", "flow pumps"}
    assert max(c.peaks.values()) == pytest.approx(1.0, abs=2e-3)          # the shortest cycle is tight


def test_pins_agree_with_the_sizing_loop_loads(job):
    run = job
    res, pl = run.actuation, run.checks["design"].pins
    # size_motion reports the loop pins per pin of a pair too (pin_count): λ from its own actuator_forces call
    assert res.pin_count["boom_cylinder_eye"] == 2
    for name in ("boom_cylinder_eye", "stick_cylinder_eye", "bucket_cylinder_eye"):
        assert pl.cycle_peak(name)[0] == pytest.approx(res.pin_force[name].max(), rel=1e-9)
    assert pl.cycle_peak("h_link_pin")[0] == pytest.approx(res.pin_force["h_link_bucket_pin"].max(), rel=1e-9)
    # the base pin: the cylinder force ± the barrel's weight and inertia (280 kg pair: < 2 kN per pin)
    u = np.abs(res.u[:, res.names.index("boom_cyl")]).max()
    assert abs(pl.cycle_peak("boom_cylinder_base")[0] - u / 2) < 2e3


def test_the_rendered_design_files(tmp_path, job):
    """What render writes of the design cases: the JSON keys from the record, the CSV headers, the section."""
    from urdf_dyn.reports.plotting import NoPlots
    from urdf_dyn.reports.sizing_render import render
    run = job
    written = render(run, tmp_path, NoPlots())
    js = json.loads((tmp_path / "sizing_report.json").read_text())
    design = run.checks["design"]
    for name in launch_data()["design"]["pins"]:
        assert js["pins"][name]["cycle_peak_N"] == design.pins.cycle_peak(name)[0]
        assert js["pins"][name]["damage_equivalent_N"] == design.damage[name]
    for n in CYLS:
        assert js["actuators"][n]["buckling_safety_factor"] == design.buckling[n].safety_factor
    assert js["cycle"]["shortest_s"] == pytest.approx(design.cycle.total)
    rows = list(csv.DictReader(open(written["pin_design_loads_csv"])))
    assert sorted(r["pin"] for r in rows) == sorted(design.pins.names)
    with open(written["pump_power_csv"]) as fh:
        assert next(csv.reader(fh))[:3] == ["t [s]", "pump pressure [bar]", "flow demanded [L/min]"]
    assert any("Design cases" in line for line in (tmp_path / "sizing_report.md").read_text().splitlines())
