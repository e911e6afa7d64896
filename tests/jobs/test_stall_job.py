"""The main job's stall envelopes and pin design loads (scenarios/excavator_dig.scenario.yaml): every design
pin has its design load and case in sizing_report.json and pin_design_loads.csv, and the design load equals
the pin's force evaluated directly (``pins.pin_loads``, one state) at the case's pose with the held tip force
recomputed from the stall envelope at that pose — a second evaluation, not the report's numbers copied."""
import csv
import json

import numpy as np
import pytest
from _robots import ROOT
from test_excavator_job import launch_data, run


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("stall")
    return (tmp,) + run(tmp, launch_data())


def test_every_pin_has_its_design_load_and_case(job):
    tmp, res, written, lines = job
    js = json.loads((tmp / "dig" / "sizing_report.json").read_text())
    data = launch_data()
    for name in data["design"]["pins"]:
        p = js["pins"][name]
        c = p["design_case"]
        assert p["design_load_N"] > 0 and c["cylinder"] in ("boom_cyl", "stick_cyl", "bucket_cyl")
        assert c["direction"] in ("tangent", "fan", "corner") and set(c["pose"]) == {"boom_cyl", "stick_cyl", "bucket_cyl"}
        assert c["limited_by"] in ("boom_cyl", "stick_cyl", "bucket_cyl", "tipping", "sliding")
    assert js["stall"]["poses"] >= 2000
    rows = {r["pin"]: r for r in csv.DictReader(open(written["pin_design_loads_csv"]))}
    for name in data["design"]["pins"]:
        assert float(rows[name]["design_load_N"]) == pytest.approx(js["pins"][name]["design_load_N"], rel=1e-5)
        assert rows[name]["design_case"].startswith(js["pins"][name]["design_case"]["cylinder"])
    assert (tmp / "dig" / "stall_envelopes.png").stat().st_size > 10_000
    assert (tmp / "dig" / "pin_design_loads.png").stat().st_size > 10_000


def test_design_load_is_the_pin_force_at_its_case(job):
    """For the boom foot and the bucket pivot: assemble the case's pose, apply the case's tip force (its
    magnitude and angle in the boom plane from the report) at the lip and evaluate the pin directly."""
    import urdf_dyn as ud
    from urdf_dyn.constraints.assembly import assemble
    from urdf_dyn.machines.pins import PinSpec, pin_loads
    tmp, res, written, lines = job
    js = json.loads((tmp / "dig" / "sizing_report.json").read_text())
    data = launch_data()
    model = ud.load(ROOT / "robots" / "excavator.urdf")
    lip = data["frames"][data["iso6015"]["lip"]]
    for name in ("boom_foot", "bucket_pivot"):
        spec = data["design"]["pins"][name]
        pin = PinSpec(spec) if isinstance(spec, str) else PinSpec(spec["joint"], spec.get("count", 1))
        c = js["pins"][name]["design_case"]
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
        assert pl.force(name)[0] == pytest.approx(js["pins"][name]["design_load_N"], rel=1e-6)
