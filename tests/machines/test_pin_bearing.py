"""A pin's plain bearing (urdf_dyn.machines.pin_bearing): p = F/(d L) on a hand case, and the relative rotation
rate of the two bodies a pin joins against independent figures — a tree joint driven at a known rate, and a
loop joint of the excavator's bucket linkage against the difference of its two bodies' pitch angles (every pin
axis is y) differentiated by numpy.gradient."""
from pathlib import Path

import numpy as np
import pytest

import urdf_dyn
from urdf_dyn.machines.pin_bearing import bearing_pressure, pin_bearing, pin_bodies, relative_rate

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def excavator():
    return urdf_dyn.load(ROOT / "robots" / "excavator.urdf")


def test_bearing_pressure_by_hand():
    """500 kN on a 100 mm pin over 250 mm of bushing: 500e3 / (0.1 · 0.25) = 20 MPa."""
    assert bearing_pressure(500e3, 0.1, 0.25) == pytest.approx(20e6)
    assert bearing_pressure(np.array([0.0, 250e3]), 0.1, 0.25).tolist() == pytest.approx([0.0, 10e6])
    with pytest.raises(ValueError, match="must be > 0"):
        bearing_pressure(1.0, 0.0, 0.25)


def test_tree_joint_rate_and_pv(excavator):
    """The swing joint turned at 0.7 rad/s: |ω_rel| = 0.7; on a 0.2 m pin v = 0.07 m/s and p·v = p · 0.07."""
    m = excavator
    t = np.linspace(0.0, 2.0, 201)
    Q = np.tile(m.q_initial(), (len(t), 1))
    Q[:, m.joint_index("swing")] = 0.7 * t
    assert relative_rate(m, t, Q, "swing") == pytest.approx(np.full(len(t), 0.7), rel=1e-9)
    f = np.tile([3e4, 0.0, 4e4], (len(t), 1))                     # |f| = 50 kN
    b = pin_bearing(m, t, Q, "swing", f, 0.2, 0.5)
    assert b.p == pytest.approx(np.full(len(t), 5e5)) and b.v == pytest.approx(np.full(len(t), 0.07), rel=1e-9)
    assert b.peaks()["pv_mean_Pa_m_s"] == pytest.approx(5e5 * 0.07, rel=1e-9)


def test_loop_joint_rate_against_the_bodies_pitch(excavator):
    """The bucket cylinder's eye (a loop joint) along a curl: the relative rate equals |d/dt (θ_b − θ_a)| with
    θ the pitch of each body's world rotation (atan2 of its x axis in the x–z plane), away from the ends."""
    from urdf_dyn.constraints.motion import consistent_motion
    from urdf_dyn.machines.poses import body_poses
    from urdf_dyn.simulation.trajectories import spline_motion
    m = excavator
    names = ["swing", "boom_cyl", "stick_cyl", "bucket_cyl"]
    W = np.array([[0.0, -0.4, -0.6, -0.4], [0.0, -0.4, -0.6, 0.5]])
    mo = spline_motion(names, W, [3.0], 0.005, "quintic")
    Q, _, _ = consistent_motion(m, mo)
    a, b = pin_bodies(m, "bucket_cylinder_eye")
    T = body_poses(m, Q)
    th = [np.unwrap(np.arctan2(-T[:, k, 2, 0], T[:, k, 0, 0])) for k in (a, b)]
    ref = np.abs(np.gradient(th[1] - th[0], mo.t))
    got = relative_rate(m, mo.t, Q, "bucket_cylinder_eye")
    inner = slice(20, -20)
    assert ref[inner].max() > 0.1                                # the pin does turn
    assert got[inner] == pytest.approx(ref[inner], rel=2e-3, abs=1e-4)
    with pytest.raises(KeyError, match="no joint or loop"):
        pin_bodies(m, "nope")
