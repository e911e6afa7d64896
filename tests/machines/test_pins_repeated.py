"""``pins.joint_wrenches_repeated`` and ``pins.pin_loads_repeated`` (S load sets on the same poses, the poses
and spatial transforms computed once) against the plain calls on the poses repeated S times: the same
numbers, bit for bit, for moving states with loop forces and a tip load; and the bad row counts named."""
import numpy as np
import pytest

import urdf_dyn as ud
from _robots import ROOT
from urdf_dyn.machines.pins import PinSpec, joint_wrenches, joint_wrenches_repeated, pin_loads, pin_loads_repeated
from urdf_dyn.machines.poses import body_poses

EXC = ROOT / "robots" / "excavator.urdf"
Y = ["swing", "boom_cyl", "stick_cyl", "bucket_cyl"]


@pytest.fixture(scope="module")
def sets():
    model = ud.load(EXC)
    mo = ud.spline_motion(Y, [[0.1, -0.4, -0.85, -0.45], [1.2, -0.15, -0.05, 0.4]], [2.0], 0.01, "quintic")
    Q, QD, QDD = ud.consistent_motion(model, mo, progress=False)
    k = slice(20, 190, 17)
    Q, QD, QDD = Q[k], QD[k], QDD[k]
    S, N = 3, len(Q)
    rng = np.random.default_rng(7)
    qd = np.concatenate([QD, np.zeros_like(QD), -2.0 * QD])           # moving, at rest, faster and reversed
    qdd = np.concatenate([QDD, np.zeros_like(QDD), 4.0 * QDD])
    lf = {lp.name: rng.normal(size=(S * N, 6)) * 1e4 for lp in model.loops}
    fx = {"bucket": rng.normal(size=(S * N, 6)) * 1e3}
    return model, Q, qd, qdd, lf, fx, S


def test_repeated_sets_are_the_plain_call_on_repeated_poses(sets):
    model, Q, qd, qdd, lf, fx, S = sets
    Qs = np.concatenate([Q] * S)
    ref = joint_wrenches(model, Qs, qd, qdd, lf, fx)
    assert ref.shape == (S * len(Q), model.NB, 6) and np.abs(ref).max() > 1e3
    assert np.array_equal(joint_wrenches_repeated(model, Q, qd, qdd, lf, fx), ref)
    assert np.array_equal(joint_wrenches_repeated(model, Q, qd, qdd, lf, fx, body_poses(model, Q)),
                          ref)
    pins = {"boom_foot": "boom", "pair": PinSpec("boom_cyl_pin", 2), "eye": "stick_cylinder_eye"}
    t = np.arange(S * len(Q)) * 0.01
    a = pin_loads(model, t, Qs, qd, qdd, pins, loop_forces=lf, f_ext=fx, swing="swing")
    b = pin_loads_repeated(model, t, Q, qd, qdd, pins, loop_forces=lf, f_ext=fx, swing="swing")
    assert a.names == b.names and a.kind == b.kind
    for n in a.names:
        assert np.array_equal(a.wrench[n], b.wrench[n])
    assert np.array_equal(a.swing.tilting, b.swing.tilting) and np.array_equal(a.swing.axial, b.swing.axial)


def test_repeated_sets_name_bad_rows(sets):
    model, Q, qd, qdd, lf, fx, S = sets
    with pytest.raises(ValueError, match="multiple of q's"):
        joint_wrenches_repeated(model, Q, qd[:-1], qdd[:-1], lf, fx)
    with pytest.raises(ValueError, match="loop_forces"):
        pin_loads_repeated(model, np.zeros(len(qd)), Q, qd, qdd, {"boom_foot": "boom"})
