"""machines.poses.body_poses: the body poses of a motion, read-only and without a memo (a sizing run computes
them once, ``SizingRun.poses``, and passes them down); each machine function given the poses answers bit for
bit what it computes without them."""
import threading

import numpy as np
import pytest

import urdf_dyn as ud
from _robots import ROOT
from urdf_dyn.algorithms import kinematics
from urdf_dyn.machines import loads, pins, poses, stability


@pytest.fixture(scope="module")
def motion():
    m = ud.load(ROOT / "robots" / "excavator.urdf")
    rng = np.random.default_rng(3)
    Q = m.q_initial() + 0.05 * rng.standard_normal((40, m.nq))
    QD, QDD = 0.1 * rng.standard_normal((2, 40, m.nv))
    return m, Q, QD, QDD


def test_poses_are_read_only_and_never_remembered(motion, monkeypatch):
    m, Q, _, _ = motion
    calls = []
    real = kinematics.body_poses
    monkeypatch.setattr(kinematics, "body_poses", lambda model, q: calls.append(1) or real(model, q))
    T = poses.body_poses(m, Q)
    assert np.array_equal(T, real(m, Q)) and T.shape == (40, m.NB + 1, 4, 4)
    with pytest.raises(ValueError):
        T[0, 1, 0, 3] = 1.0                                              # read-only: shared by its callers
    assert poses.body_poses(m, Q) is not T and len(calls) == 2             # no memo: computed each call
    one = poses.body_poses(m, Q[0])                                      # one state: N = 1
    assert one.shape == (1, m.NB + 1, 4, 4) and np.array_equal(one[0], real(m, Q[:1])[0])
    state = [v for k, v in vars(poses).items() if not k.startswith("__")
             and isinstance(v, (dict, list, set, threading.local))]
    assert state == []                                                   # no module-level cache


def test_machine_functions_given_the_poses_answer_as_without(motion):
    m, Q, QD, QDD = motion
    T = poses.body_poses(m, Q)
    edge = loads.Frame("bucket", (1.4, 0.0, 0.0))
    F = np.tile([-2e4, 0.0, 1e4], (len(Q), 1))
    a = loads.soil_wrench(m, Q, QD, QDD, edge, F, (0.5, 0, 0.2), np.full(len(Q), 900.0))
    b = loads.soil_wrench(m, Q, QD, QDD, edge, F, (0.5, 0, 0.2), np.full(len(Q), 900.0), poses=T)
    assert np.array_equal(a["bucket"], b["bucket"])
    ld = [loads.WrenchLoad("stick", np.tile([0, 0, -5e3], (len(Q), 1)), np.zeros((len(Q), 3)), (1, 0, 0), "world")]
    assert np.array_equal(loads.wrench_loads(m, Q, ld)["stick"], loads.wrench_loads(m, Q, ld, poses=T)["stick"])
    poly = stability.tipping_polygon(4.0, 2.4)
    za = stability.zmp_margin(m, poly, Q, QD, QDD, warn=False)
    zb = stability.zmp_margin(m, poly, Q, QD, QDD, warn=False, poses=T)
    assert np.array_equal(za.margin, zb.margin)
    lf = {lp.name: np.full((len(Q), 6), 1e3) for lp in m.loops}
    assert np.array_equal(pins.joint_wrenches(m, Q, QD, QDD, lf), pins.joint_wrenches(m, Q, QD, QDD, lf, poses=T))
