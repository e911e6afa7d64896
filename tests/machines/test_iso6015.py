"""ISO 6015 digging forces against virtual work by finite differences: the cylinder force times the
stroke per unit of tip arc, with the arc measured between poses assembled a small stroke apart
(``assemble`` + ``forward_kinematics`` only, none of the module's Jacobians or G), and the data sheet."""
import numpy as np
import pytest

import urdf_dyn as ud
from _robots import ROOT
from urdf_dyn.machines.iso6015 import CAT320_ISO6015, digging_forces
from urdf_dyn.machines.sizing import Cylinder
from urdf_dyn.constraints.assembly import assemble

EXC = ROOT / "robots" / "excavator.urdf"
ACTS = ("swing", "boom_cyl", "stick_cyl", "bucket_cyl")
CYL = {"boom_cyl": Cylinder(0.120, 0.085, 2), "stick_cyl": Cylinder(0.140, 0.100, 1),
       "bucket_cyl": Cylinder(0.120, 0.085, 1)}
TIP = np.array([1.47, 0.0, 0.0, 1.0])  # bucket tip radius along the bucket frame's x axis
P = 35e6


@pytest.fixture(scope="module")
def model():
    return ud.load(EXC)


@pytest.fixture(scope="module")
def res(model):
    return digging_forces(model, CYL, relief_pressure=P, n=(5, 7, 9))


def tip_at(model, q, cyl, ds):
    qq = q.copy()
    qq[model.joint_index(cyl)] += ds
    qq = assemble(model, qq, hold=ACTS, tol=1e-10)
    return (ud.forward_kinematics(model, qq)["bucket"] @ TIP)[:3], qq


def fd_force(model, q, cyl, h=1e-5):
    """Virtual work: F · d(arc) = p A · d(stroke), central differences over assembled poses."""
    pp, _ = tip_at(model, q, cyl, h)
    pm, _ = tip_at(model, q, cyl, -h)
    return P * CYL[cyl].cap_area * 2 * h / np.linalg.norm(pp - pm), pp - pm


def test_bucket_force_is_virtual_work(model, res):
    F, d = fd_force(model, res.bucket_pose, "bucket_cyl")
    assert abs(res.bucket_N - F) <= 1e-5 * F
    # the tip moves on the arc about the bucket pivot: tangential, at the tip radius
    pivot = ud.forward_kinematics(model, res.bucket_pose)["bucket"][:3, 3]
    r = res.bucket_tip - pivot
    assert abs(np.linalg.norm(r) - 1.47) < 1e-9
    assert abs(r @ d) <= 1e-6 * np.linalg.norm(d)


def test_arm_force_is_virtual_work_about_the_stick_pivot(model, res):
    F, d = fd_force(model, res.arm_pose, "stick_cyl")
    assert abs(res.arm_N - F) <= 1e-5 * F
    pivot = ud.forward_kinematics(model, res.arm_pose)["stick"][:3, 3]
    assert abs((res.arm_tip - pivot) @ d) <= 1e-6 * np.linalg.norm(d)


@pytest.mark.parametrize("cyl,attr", [("bucket_cyl", "bucket"), ("stick_cyl", "arm")])
def test_iso_position_is_the_maximum(model, res, cyl, attr):
    """ISO 6015 / SAE J1179: the position of the largest force. Neighbouring strokes (by finite
    differences again) give no more."""
    q = getattr(res, f"{attr}_pose")
    F0 = getattr(res, f"{attr}_N")
    for ds in (-0.04, 0.04):
        _, qq = tip_at(model, q, cyl, ds)
        assert fd_force(model, qq, cyl)[0] <= F0 * (1 + 1e-6)


def test_holding_forces_are_virtual_work(model, res):
    """The stick cylinder holds the bucket's reaction: u_stick = F · (tip motion per stick stroke) · d."""
    F = res.bucket_N
    _, d = fd_force(model, res.bucket_pose, "bucket_cyl")
    d = d / np.linalg.norm(d)
    pp, _ = tip_at(model, res.bucket_pose, "stick_cyl", 1e-5)
    pm, _ = tip_at(model, res.bucket_pose, "stick_cyl", -1e-5)
    u = F * (pp - pm) @ d / 2e-5
    bar = u / (CYL["stick_cyl"].cap_area if u > 0 else CYL["stick_cyl"].annulus_area) / 1e5
    assert abs(res.holding_bar["bucket"]["stick_cyl"] - bar) <= 1e-4 * abs(bar)


def test_envelope_contains_the_iso_figures(res):
    assert res.grid_tip.shape == (5 * 7 * 9, 3)
    assert np.all(res.grid_bucket_N > 0) and np.all(res.grid_arm_N > 0)
    # the bucket force depends on the bucket stroke only: the grid's best is at most the ISO maximum
    assert res.grid_bucket_N.max() <= res.bucket_N * (1 + 1e-9)


def test_against_the_cat320_data_sheet(res):
    """Within 15 % of the data sheet's ISO 6015 figures (robots/excavator.urdf header, source [1])."""
    assert abs(res.bucket_N - CAT320_ISO6015["bucket_N"]) <= 0.15 * CAT320_ISO6015["bucket_N"]
    assert abs(res.arm_N - CAT320_ISO6015["arm_N"]) <= 0.15 * CAT320_ISO6015["arm_N"]
    assert "bucket digging force" in res.table()


def test_plot_envelope(res, tmp_path):
    p = res.plot_envelope(tmp_path / "dig.png")
    assert (tmp_path / "dig.png").stat().st_size > 10_000 and str(p).endswith("dig.png")


def test_missing_cylinder_is_named(model):
    with pytest.raises(KeyError, match="bucket_cyl"):
        digging_forces(model, {"stick_cyl": CYL["stick_cyl"]})


def test_holding_pressure_limits_the_forces(model, res):
    """SAE J1179 §3.3: with a holding limit no holding cylinder exceeds it, and no force grows."""
    lim = digging_forces(model, CYL, relief_pressure=P, n=(5, 7, 9), holding_pressure=38e6)
    for case in ("bucket", "arm"):
        assert all(abs(p) <= 380 * (1 + 1e-9) for p in lim.holding_bar[case].values())
    assert lim.bucket_N <= res.bucket_N * (1 + 1e-9)
