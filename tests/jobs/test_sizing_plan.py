"""The plan of a sizing run checks every key up front (urdf_dyn.jobs.sizing_plan, jobs.excavator_plan): a bad
key in any section — the generic ones and each of the excavator's check sections — is refused by
``SizingPlan.from_scenario`` itself, before the run computes anything, with one line naming the file, the key
path and the key's line in the file; the command line exits with status 2."""
import re

import pytest
import yaml

from urdf_dyn.cli.main import main
from urdf_dyn.errors import ScenarioError
from urdf_dyn.jobs.sizing_job import SizeDocument
from urdf_dyn.jobs.sizing_plan import SizingPlan
from urdf_dyn.launch.document import read_scenario, validate
from test_excavator_job import launch_data


def _set(*path_value):
    *path, value = path_value

    def change(d):
        node = d
        for k in path[:-1]:
            node = node[k]
        node[path[-1]] = value
    return change


def _pop(*path):
    def change(d):
        node = d
        for k in path[:-1]:
            node = node[k]
        node.pop(path[-1])
    return change


def _add_bucket_tube(d):
    d["actuators"]["cylinders"]["bucket_cyl"].update(tube_outer=0.10, rod_length=1.0)   # the tube inside the bore


def _no_soil(d):
    d.pop("soil")
    d["design"].pop("duty", None)              # the duty mix re-cuts the scenario's soil


#: (change, the key the error names, the key whose line it gives, words of the message)
BAD = [
    (_set("frames", "lip", "link", "buket"), "frames.lip.link", "frames.lip.link", "unknown link 'buket'"),
    (_set("loads", [{"link": "stick", "force": [0, 0, -1], "during": "dgi"}]),
     "loads[0].during", "loads[0].during", "unknown phase 'dgi'"),
    (_set("actuators", "cylinders", "boom_cyl", "rod", 0.3), "actuators.cylinders.boom_cyl",
     "actuators.cylinders.boom_cyl", "need 0 < rod < bore"),
    (_set("soil", "edge", "nowhere"), "soil.edge", "soil.edge", "unknown frame 'nowhere'"),
    (_set("hydraulics", "supply", "slew", 0.5), "hydraulics.supply.slew", "hydraulics.supply.slew", "unknown actuator"),
    (_set("iso6015", "lip", "teeth"), "iso6015.lip", "iso6015.lip", "unknown frame 'teeth'"),
    (_set("iso6015", "tip", "nope"), "iso6015.tip", "iso6015.tip", "unknown frame 'nope'"),
    (_set("iso6015", "holding_relief", {"arm_cyl": 3e7}), "iso6015.holding_relief.arm_cyl",
     "iso6015.holding_relief.arm_cyl", "no such cylinder"),
    (_set("frames", "lip", "xyz", [1.6, 0.0, 0.0]), "iso6015.lip", "iso6015.lip", "farther out than the tooth tip"),
    (_pop("stability"), "lift_chart", "lift_chart", "needs the tipping polygon"),
    (_set("working_range", "tip", "nope"), "working_range.tip", "working_range.tip", "unknown frame 'nope'"),
    (_set("stability", "footprint", [[1, -1], [1, 1], [-1, 1], [-1, -1]]), "stability", "stability",
     "give exactly one of track"),
    (_set("design", "pins", "boom_foot", "bom"), "design.pins", "design.pins", "no joint or loop named 'bom'"),
    (_set("design", "swing_bearing", "slew"), "design.swing_bearing", "design.swing_bearing", "unknown joint 'slew'"),
    (_set("design", "pumps", "priority", ["boom_cyl", "winch"]), "design.pumps.priority", "design.pumps.priority",
     "unknown section 'winch'"),
    (_no_soil, "design.lateral.bucket_width", "design.lateral", "give the bucket width (or soil.width)"),
    (_add_bucket_tube, "actuators.cylinders.bucket_cyl", "actuators.cylinders.bucket_cyl",
     "need 0 < rod < bore < tube_outer"),
]


def _line_of(text, dotted):
    """The line of ``dotted``'s last key in ``text`` (the YAML PyYAML wrote), found by walking the keys."""
    lines, start = text.splitlines(), 0
    for part in re.findall(r"[^.\[\]]+|\[\d+\]", dotted):
        if part.startswith("["):
            continue
        for i in range(start, len(lines)):
            if re.match(rf"\s*(- )?{re.escape(part)}:", lines[i]):
                start = i
                break
        else:
            raise AssertionError(f"{dotted} not in the file")
    return start + 1


@pytest.mark.parametrize("change,key,line_key,words", BAD, ids=[b[1] + ":" + b[3][:20] for b in BAD])
def test_the_plan_refuses_a_bad_key_naming_file_line_and_key(tmp_path, change, key, line_key, words, monkeypatch):
    """SizingPlan.from_scenario raises, so the run (``compute``) never starts: the message is one line,
    ``<file>: <key>: <what> (line <n>)``, with <n> the key's line in the file."""
    import urdf_dyn.jobs.sizing_job as sizing_job
    data = launch_data(dt=0.1)
    change(data)
    f = tmp_path / "bad.yaml"
    text = yaml.safe_dump(data, sort_keys=False)
    f.write_text(text)
    sc = read_scenario(f)
    validate(sc, SizeDocument)
    with pytest.raises(ScenarioError) as e:
        SizingPlan.from_scenario(sc)
    msg = str(e.value)
    assert msg.startswith(f"{f}: {key}: ") and words in msg and "\n" not in msg, msg
    assert msg.endswith(f"(line {_line_of(text, line_key)})"), msg

    def never(*a, **k):
        raise AssertionError("compute ran on a scenario its plan should have refused")
    monkeypatch.setattr(sizing_job, "compute", never)
    assert main(["run", str(f), "--out-dir", str(tmp_path / "o")]) == 2
    assert not (tmp_path / "o").exists()


def test_a_valid_plan_carries_the_check_frames(tmp_path):
    """The main job's plan resolves the check sections' frames once; a key left at its default is located
    at its section's line."""
    f = tmp_path / "ok.yaml"
    text = yaml.safe_dump(launch_data(dt=0.1), sort_keys=False)
    f.write_text(text)
    sc = read_scenario(f)
    validate(sc, SizeDocument)
    plan = SizingPlan.from_scenario(sc)
    ch, doc = plan.kind_plan.checks, sc.doc
    assert ch.lip == plan.frames[doc.iso6015.lip] and ch.range_tip == plan.frames[doc.working_range.tip]
    assert sc.line_of("iso6015.lip") == _line_of(text, "iso6015.lip")
    assert "arm_bucket:" not in text
    assert sc.line_of("iso6015.arm_bucket") == _line_of(text, "iso6015")
