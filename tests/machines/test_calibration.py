"""Calibration of a pin table's estimated geometry: ``urdf_dyn.machines.calibration`` (its mechanism limits:
test_calibration_limits.py).

Oracles, none of them the calibration's own output:
- a reachable target: the figures of the table as it was, the start a table with one pin moved; the
  optimiser must find the moved pin's way back (the pin within 3 mm, the figure within 0.1 %);
- plane geometry: a move of the whole front keeps every published length (boom, stick, tip radius), and
  what a link carries (centres of mass, inertias, visuals) stays where it was in the link's own frame;
- the CLI contract: bad parameters give one line and exit status 2.
"""
import math

import numpy as np
import pytest

from _robots import ROOT
from urdf_dyn.machines.calibration import Checks, apply_parameters, calibrate, evaluate, parse_parameters
from urdf_dyn.machines.excavator_builder import link_frames
from urdf_dyn.machines.pin_table import load_pin_table
from urdf_dyn.machines.sizing import Cylinder
from urdf_dyn.machines.stability import tipping_polygon

PINS = ROOT / "robots" / "excavator_pins.yaml"
CYL = {"boom_cyl": Cylinder(0.120, 0.085, 2), "stick_cyl": Cylinder(0.140, 0.100, 1),
       "bucket_cyl": Cylinder(0.120, 0.085, 1)}
#: coarse grids: this test checks the optimiser, not the figures' resolution
CHECKS = Checks(cylinders=CYL, relief=35e6, holding_relief=35e6, footprint=tipping_polygon(3.65, 2.38),
                lip_offset=(-0.102, 0.0, 0.172), fast=dict(wr_n=5, iso_n=(5, 7, 9), iso_zoom=3),
                full=dict(wr_n=5, iso_n=(5, 7, 9), iso_zoom=3))


@pytest.fixture(scope="module")
def table():
    return load_pin_table(PINS)


def _local(frame, p):
    (o, e) = frame
    c, s = math.cos(e), math.sin(e)
    d = np.asarray(p, float) - o
    return np.array([c * d[0] + s * d[1], -s * d[0] + c * d[1]])


def test_recovers_a_moved_pin(table):
    """The stick cylinder's eye (the stick tail) moved 40 mm down: calibrated back to the ISO 6015 arm force of
    the table as it was, with the eye's height as the one parameter, the eye returns to within 3 mm of where
    it was (the force's grid search resolves about 0.1 %, some 2 mm of the eye's height)."""
    keys = ("iso6015.arm_digging_force_N",)
    checks = Checks(**{**CHECKS.__dict__, "fast": dict(wr_n=5, iso_n=(9, 13, 17), iso_zoom=5)})  # the ISO grid
    checks.full = checks.fast                                   # of the main job: smooth in the pin's height
    targets = evaluate(table, checks, keys, "fast")
    moved = apply_parameters(table, ["pins.stick_cylinder_eye.z"], [-0.04])
    start = evaluate(moved, checks, keys, "fast")
    assert abs(start[keys[0]] / targets[keys[0]] - 1) > 0.01      # the move is felt: > 1 % on the arm force
    cal = calibrate(moved, targets, ["pins.stick_cylinder_eye.z"], {"pins.stick_cylinder_eye.z": (-0.1, 0.1)}, checks,
                    tolerances={k: 0.001 for k in keys}, regularization=0.0, max_evaluations=30, diff_step=0.002)
    assert cal.table.pin("stick_cylinder_eye") == pytest.approx(table.pin("stick_cylinder_eye"), abs=3e-3)
    assert cal.parameters["pins.stick_cylinder_eye.z"] == pytest.approx(0.04, abs=3e-3)
    assert cal.feasible                                          # within the mechanism limits throughout
    assert all(cal.within().values()) and not all(cal.within("before").values())
    assert "| ISO 6015 arm (stick) digging force [N] |" in cal.report()


def test_front_move_keeps_lengths_and_carries_masses_and_visuals(table):
    moved = apply_parameters(table, ["front.z", "pins.stick_cylinder_eye.x"], [0.2, -0.05])
    d = lambda t, a, b: float(np.linalg.norm(t.pin(a) - t.pin(b)))  # noqa: E731
    for a, b in (("boom_foot", "boom_nose"), ("boom_nose", "bucket_pivot"), ("bucket_pivot", "tip"),
                 ("boom_foot", "boom_cylinder_eye"), ("side_link_pivot", "bucket_cylinder_eye")):
        assert d(moved, a, b) == pytest.approx(d(table, a, b), abs=1e-12), (a, b)
    assert np.allclose(moved.pin("boom_cylinder_base"), table.pin("boom_cylinder_base"))
    assert np.allclose(moved.pin("boom_foot"), table.pin("boom_foot") + [0, 0.2])
    assert np.allclose(moved.pin("stick_cylinder_eye"), table.pin("stick_cylinder_eye") + [-0.05, 0.2])
    f0, f1 = link_frames(table), link_frames(moved)
    for link in ("boom", "stick", "bucket", "boom_cyl_barrel", "boom_cyl_rod", "stick_cyl_rod"):
        a, b = getattr(table.masses, link), getattr(moved.masses, link)
        assert np.allclose(_local(f0[link], a.com), _local(f1[link], b.com), atol=1e-12), link
    # the boom cylinder turned about its fixed base: its inertia turned with it (same principal moments)
    from urdf_dyn.machines.pin_table import inertia_matrix
    I0, I1 = (inertia_matrix(getattr(t.masses, "boom_cyl_barrel").inertia) for t in (table, moved))
    assert f1["boom_cyl_barrel"][1] != pytest.approx(f0["boom_cyl_barrel"][1], abs=1e-3)
    assert np.allclose(np.linalg.eigvalsh(I0), np.linalg.eigvalsh(I1), rtol=1e-9)
    # a visual on a pin that moved is on the pin: the stick cylinder eye's pin shape
    v = next(v for v in moved.visuals["stick"] if v.name == "stick_cyl_eye_pin")
    assert np.allclose([v.xyz[0], v.xyz[2]], moved.pin("stick_cylinder_eye"), atol=1e-12)


def test_bad_parameters(table, tmp_path, capsys):
    with pytest.raises(KeyError, match="unknown calibration parameter 'pins.nose.x'"):
        apply_parameters(table, ["pins.nose.x"], [0.1])
    with pytest.raises(ValueError, match="NAME=LOW:HIGH"):
        parse_parameters("front.z=0.1")
    with pytest.raises(ValueError, match="parameter front.z: bounds 0.1:0.2 m must be finite and contain 0"):
        calibrate(table, {"iso6015.arm_digging_force_N": 1e5}, ["front.z"], {"front.z": (0.1, 0.2)}, CHECKS)
    from urdf_dyn.cli.main import main
    scen = ROOT / "scenarios" / "excavator_dig.scenario.yaml"
    assert main(["excavator", str(PINS), "--calibrate", str(scen), "--parameters", "front.q=-1:1",
                 "-o", str(tmp_path / "x.yaml")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "front.q" in err[0], err
