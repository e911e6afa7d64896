"""machines.poses.body_poses: the body poses of a motion computed once for the machine modules; a changed
motion is computed again (never served stale), and the shared array cannot be changed by a caller."""
import numpy as np
import pytest

import urdf_dyn as ud
from _robots import ROOT
from urdf_dyn.algorithms import kinematics
from urdf_dyn.machines import poses


def test_poses_are_remembered_for_the_same_states_and_recomputed_for_others(monkeypatch):
    m = ud.load(ROOT / "robots" / "excavator.urdf")
    m2 = ud.load(ROOT / "robots" / "excavator.urdf")                     # another model object
    rng = np.random.default_rng(3)
    Q = m.q_initial() + 0.05 * rng.standard_normal((40, m.nq))
    calls = []
    real = kinematics.body_poses
    monkeypatch.setattr(kinematics, "body_poses", lambda model, q: calls.append(1) or real(model, q))
    T = poses.body_poses(m, Q)
    assert np.array_equal(T, real(m, Q)) and T.shape == (40, m.NB + 1, 4, 4)
    assert poses.body_poses(m, Q.copy()) is T and len(calls) == 1        # equal states: the same array
    with pytest.raises(ValueError):
        T[0, 1, 0, 3] = 1.0                                              # read-only: shared by its callers
    Q[7, 2] += 1e-9                                                      # a changed motion, same object
    T2 = poses.body_poses(m, Q)
    assert len(calls) == 2 and np.array_equal(T2, real(m, Q)) and not np.array_equal(T2, T)
    poses.body_poses(m2, Q)
    assert len(calls) == 3
    one = poses.body_poses(m, Q[0])                                      # one state: N = 1
    assert one.shape == (1, m.NB + 1, 4, 4) and np.array_equal(one[0], real(m, Q[:1])[0])
