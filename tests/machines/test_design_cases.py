"""The design cases' glue (urdf_dyn.machines.design_cases): the cylinders' pin-to-pin lengths read from the
URDF against the closed lengths of its pin table (robots/excavator_pins.yaml, calibrated estimates) and the
published strokes (1260 / 1504 / 1104 mm, CAT 320 S1), and a report built from a short cycle (every key present;
rendered by urdf_dyn.reports.design_report)."""
import numpy as np
import pytest

import urdf_dyn as ud
from _robots import ROOT
from urdf_dyn.machines.design_cases import design_cases, stroke_lengths
from urdf_dyn.machines.buckling import CylinderColumn
from urdf_dyn.machines.pins import PinSpec
from urdf_dyn.reports.design_report import render_design
from urdf_dyn.reports.plotting import PlotWorker
from urdf_dyn.reports.sizing_render import Report

EXC = ROOT / "robots" / "excavator.urdf"


@pytest.mark.parametrize("joint, stroke", [("boom_cyl", 1.260), ("stick_cyl", 1.504), ("bucket_cyl", 1.104)])
def test_stroke_lengths_match_the_published_strokes(joint, stroke):
    from urdf_dyn.machines.pin_table import load_pin_table
    closed = getattr(load_pin_table(ROOT / "robots" / "excavator_pins.yaml").cylinders, joint[:-4]).min_length
    lo, hi = stroke_lengths(ud.load(EXC), joint)
    assert lo == pytest.approx(closed, abs=1e-6) and hi - lo == pytest.approx(stroke, abs=1e-6)


def test_report_has_every_key(tmp_path):
    model = ud.load(EXC)
    mo = ud.spline_motion(["swing", "boom_cyl", "stick_cyl", "bucket_cyl"],
                          [[0, -0.4, -0.85, -0.45], [0.5, -0.15, -0.05, 0.4]], [2.0], 0.02, "quintic")
    Q, QD, QDD = ud.consistent_motion(model, mo, progress=False)
    col = CylinderColumn(0.14, 0.1, 0.175, 1.804, *stroke_lengths(model, "stick_cyl"))
    dc = design_cases(model, mo.t, Q, QD, QDD, pins={"boom_nose": "stick", "eye": PinSpec("boom_cylinder_eye", 2)},
                      swing="swing", columns={"stick_cyl": col}, relief=35e6)
    plots = PlotWorker(parallel=False)
    rep = Report(None, tmp_path, plots)
    rep.js["actuators"] = {"stick_cyl": {}}
    render_design(rep, dc)
    plots.wait()
    md, js = rep.md, rep.js
    assert set(rep.manifest) == {"pin_design_loads_csv", "pin_forces_csv", "pin_loads_png", "buckling_png"}
    assert set(js["pins"]) == {"boom_nose", "eye"}
    assert js["pins"]["eye"]["cycle_peak_N"] > 0 and js["pins"]["eye"]["damage_equivalent_N"] > 0
    assert js["actuators"]["stick_cyl"]["buckling_safety_factor"] == pytest.approx(dc.buckling["stick_cyl"].safety_factor)
    assert "swing_bearing" in js and (tmp_path / "pin_design_loads.csv").is_file()
    assert (tmp_path / "pin_loads.png").is_file() and (tmp_path / "buckling.png").is_file()
    rows = (tmp_path / "pin_design_loads.csv").read_text().splitlines()
    assert rows[0].startswith("pin,joint,kind,count,cycle_peak_N") and len(rows) == 3
    assert any("Design cases" in line for line in md)
    import csv
    with open(tmp_path / "pin_forces.csv") as fh:
        table = list(csv.reader(fh))
    assert table[0][:5] == ["t [s]", "boom_nose fx [N]", "boom_nose fy [N]", "boom_nose fz [N]", "boom_nose |f| [N]"]
    data = np.array(table[1:], float)
    assert len(data) == len(mo.t)
    assert np.allclose(np.linalg.norm(data[:, 1:4], axis=1), data[:, 4])
    assert data[:, 4].max() == pytest.approx(js["pins"]["boom_nose"]["cycle_peak_N"], rel=1e-12)
