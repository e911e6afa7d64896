"""The batch path (N ≥ PARALLEL_MIN_BATCH runs over every core in chunks) against Pinocchio row by row,
and against the single-state path."""
import numpy as np
import pytest

import urdf_dyn as ud
from _robots import UR5E_XACRO
from urdf_dyn.algorithms import _calls


@pytest.fixture(scope="module")
def ur5e():
    if not UR5E_XACRO.is_file():
        pytest.skip(f"{UR5E_XACRO} is absent (the shared robot files are not part of the repository)")
    return ud.load(UR5E_XACRO)


def test_parallel_batches_match_pinocchio_and_single_calls(ur5e):
    pin = pytest.importorskip("pinocchio")
    pm = pin.buildModelFromXML(ur5e.urdf_xml)
    pd = pm.createData()
    perm = [ur5e.joint_index(pm.names[i]) for i in range(1, pm.njoints)]
    N = _calls.PARALLEL_MIN_BATCH + 37  # parallel, and not a multiple of the chunk count
    rng = np.random.default_rng(9)
    Q, QD, QDD = rng.uniform(-np.pi, np.pi, (3, N, 6))
    tau = ud.inverse_dynamics(ur5e, Q, QD, QDD)
    H = ud.mass_matrix(ur5e, Q)
    qdd_aba = ud.forward_dynamics(ur5e, Q, QD, tau)
    qdd_crba = ud.forward_dynamics(ur5e, Q, QD, tau, algorithm="crba")
    assert np.allclose(qdd_aba, QDD, atol=1e-8) and np.allclose(qdd_crba, QDD, atol=1e-8)
    for n in list(range(0, N, 53)) + [N - 1]:
        qp, vp, ap = Q[n, perm], QD[n, perm], QDD[n, perm]
        t_pin = pin.rnea(pm, pd, qp, vp, ap)
        assert np.allclose(tau[n, perm], t_pin, rtol=1e-9, atol=1e-9)
        Hp = pin.crba(pm, pd, qp)
        Hp = np.triu(Hp) + np.triu(Hp, 1).T
        assert np.allclose(H[n][np.ix_(perm, perm)], Hp, rtol=1e-9, atol=1e-9)
        assert np.allclose(tau[n], ud.inverse_dynamics(ur5e, Q[n], QD[n], QDD[n]), rtol=1e-14, atol=1e-12)


def test_external_forces_in_a_parallel_batch(ur5e):
    N = _calls.PARALLEL_MIN_BATCH + 5
    rng = np.random.default_rng(3)
    Q = rng.uniform(-1, 1, (N, 6))
    W = rng.normal(size=(N, 6))
    tau = ud.inverse_dynamics(ur5e, Q, 0 * Q, 0 * Q, f_ext={"tool0": W})
    for n in (0, N // 2, N - 1):
        assert np.allclose(tau[n], ud.inverse_dynamics(ur5e, Q[n], 0 * Q[n], 0 * Q[n], f_ext={"tool0": W[n]}))
