"""The sizing job's machine-check sections (urdf_dyn.jobs.sizing_checks): bad input in iso6015, lift_chart,
stability and working_range gives one line naming the key and exit status 2, before any slow work; the
report prints published figures only when the scenario's reference: block gives them."""
import json
import re

import pytest
import yaml

import urdf_dyn as ud
from _robots import ROOT
from urdf_dyn.cli.main import main
from urdf_dyn.errors import ScenarioError
from urdf_dyn.launch import run_scenario
from test_excavator_job import launch_data

SRC = ROOT / "scenarios" / "excavator_dig.scenario.yaml"


def scenario(**changes):
    return launch_data(dt=0.1, **changes)


def lip_out(d):
    d["frames"]["lip"]["xyz"] = [1.6, 0.0, 0.0]


def holding(v):
    return lambda d: d["iso6015"].__setitem__("holding_relief", v)


def both_polygons(d):
    d["stability"]["footprint"] = [[1, -1], [1, 1], [-1, 1], [-1, -1]]


BAD = [
    (lip_out, "iso6015.lip: the lip (1.600 m from the bucket pivot) is farther out than the tooth tip (1.570 m)"),
    (holding(0.0), "iso6015.holding_relief: must be > 0 [Pa], got 0"),
    (holding(-3e7), "iso6015.holding_relief: must be > 0 [Pa]"),
    (holding({"boom_cyl": -1.0}), "iso6015.holding_relief.boom_cyl: must be > 0 [Pa]"),
    (holding({"arm_cyl": 3e7}), "iso6015.holding_relief.arm_cyl: no such cylinder"),
    (lambda d: d["iso6015"].__setitem__("lip", "teeth"), "iso6015.lip: unknown frame 'teeth'"),
    (lambda d: d.pop("stability"), "lift_chart: needs the tipping polygon of the ZMP check"),
    (both_polygons, "stability: give exactly one of track"),
    (lambda d: d["stability"]["track"].__setitem__("gauge", 0.0), "stability.track.gauge"),
    (lambda d: d["lift_chart"].pop("radii"), "lift_chart.radii"),
    (lambda d: d["working_range"].__setitem__("tip", "nope"), "working_range.tip: unknown frame 'nope'"),
]


@pytest.mark.parametrize("change,message", BAD)
def test_bad_machine_check_input_names_the_key(tmp_path, change, message):
    data = scenario()
    change(data)
    f = tmp_path / "bad.yaml"
    f.write_text(yaml.safe_dump(data))
    with pytest.raises(ud.ScenarioError) as e:
        run_scenario(f, out_dir=tmp_path / "o", progress=False, echo=lambda *a: None)
    assert message in str(e.value) and "\n" not in str(e.value)
    assert main(["run", str(f), "--out-dir", str(tmp_path / "o")]) == 2


def test_reference_figures_only_when_given(tmp_path):
    """Without the reference: block the report has no published column and no data-sheet numbers."""
    data = scenario(soil=None, lift_chart=None, stability=None, reference=None, hydraulics=None)
    data["iso6015"].update(relief=35e6, holding_relief=35e6)      # no hydraulics: the reliefs as numbers
    data["design"].update(stall_relief=35e6)
    data["design"]["buckling"]["relief"] = 35e6
    data["design"].pop("lateral", None)           # its corner tooth needs the bucket width (soil.width)
    f = tmp_path / "noref.yaml"
    f.write_text(yaml.safe_dump(data))
    lines = []
    run_scenario(f, out_dir=tmp_path / "o", progress=False, echo=lines.append)
    md = (tmp_path / "o" / "sizing_report.md").read_text()
    assert "published" not in md and "140.5" not in md and "6.73" not in md
    js = json.loads((tmp_path / "o" / "sizing_report.json").read_text())
    assert "published" not in js["iso6015"] and "published" not in js["working_range"]
    assert set(js["working_range"]) == {"max_digging_depth_m", "max_reach_ground_m", "max_cutting_height_m",
                                        "max_loading_height_m", "vertical_wall_depth_m", "level_bottom_2440_depth_m"}
    assert js["iso6015"]["limited_by"]["bucket"] in ("bucket_cyl", "stick_cyl", "boom_cyl")
    assert not any("published" in ln for ln in lines)


def size_doc(path):
    from urdf_dyn.jobs.sizing_schema import SizeDocument
    from urdf_dyn.launch.document import read_scenario, validate
    return validate(read_scenario(path), SizeDocument, "size")


@pytest.mark.parametrize("change,msg", [
    (lambda d: (d["hydraulics"].pop("heavy_lift_relief"), d["design"].update(stall_relief="heavy_lift")),
     "design.stall_relief: heavy_lift needs hydraulics.heavy_lift_relief"),
    (lambda d: d["hydraulics"].pop("line_reliefs"), "iso6015.holding_relief: line needs hydraulics.line_reliefs"),
    (lambda d: d["hydraulics"]["line_reliefs"]["boom_cyl"].pop("rod"), "hydraulics.line_reliefs.boom_cyl.rod"),
    (lambda d: d["hydraulics"]["line_reliefs"]["boom_cyl"].__setitem__("head", 4.1e9), "hydraulics.line_reliefs.boom_cyl.head: must be <= 100000000.0"),
    (lambda d: d["actuators"]["cylinders"]["boom_cyl"].__setitem__("clearance", 0.05),
     "actuators.cylinders.boom_cyl.clearance: must be <= 0.01"),
    (lambda d: d["actuators"]["cylinders"]["boom_cyl"].__setitem__("pin_diameter", 9.0),
     "actuators.cylinders.boom_cyl.pin_diameter: must be <= 1.0"),
    (lambda d: d["design"]["buckling"].__setitem__("pin_friction", 0.9), "design.buckling.pin_friction: must be <= 0.5"),
    (lambda d: d["design"].__setitem__("stall_relief", 5e8), "design.stall_relief"),
    (lambda d: d["iso6015"].__setitem__("arm_bucket", "largest"), "iso6015.arm_bucket"),
    (lambda d: d["iso6015"].__setitem__("holding_relief", 5e9), "iso6015.holding_relief: must be <= 100000000.0"),
])
def test_named_reliefs_are_resolved_or_named(tmp_path, change, msg):
    """The reliefs named by word (main, heavy_lift, line, line_head) come from hydraulics:; a missing one is
    named, and a line relief is a number within (0, 100 MPa]; the keys of the stall, ISO arm and buckling
    models refuse a figure outside its physical range (the schema's bounds, each with its reason in
    sizing_schema), naming the key."""
    data = scenario()
    change(data)
    f = tmp_path / "r.yaml"
    f.write_text(yaml.safe_dump(data))
    with pytest.raises(ScenarioError, match=re.escape(msg)):
        size_doc(f)


def test_named_reliefs_resolve_to_the_numbers(tmp_path):
    f = tmp_path / "r.yaml"
    f.write_text(yaml.safe_dump(scenario()))
    doc = size_doc(f)
    h = doc.hydraulics
    assert doc.iso6015.relief == h.relief and doc.design.stall_relief == h.heavy_lift_relief
    assert {c: (v.head, v.rod) for c, v in doc.iso6015.holding_relief.items()} == \
        {c: (v.head, v.rod) for c, v in h.line_reliefs.items()}
    assert doc.design.buckling.relief == {c: v.head for c, v in h.line_reliefs.items()}
    assert doc.relief_names == {"iso6015.relief": "main", "iso6015.holding_relief": "line",
                                "design.stall_relief": "heavy_lift", "design.buckling.relief": "line_head"}

