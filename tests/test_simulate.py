"""Simulation: energy conservation, dissipation, tracking, failure handling, trajectory files."""
import csv

import numpy as np
import pytest

import urdf_dyn as ud
from _robots import UR5E_XACRO, pendulum_urdf
from urdf_dyn.applications.controllers import ComputedTorque
from urdf_dyn.applications.simulate import Trajectory, simulate
from urdf_dyn.applications.trajectories import QuinticTrajectory, SplineTrajectory


@pytest.fixture(scope="module")
def ur5e():
    if not UR5E_XACRO.is_file():
        pytest.skip(f"{UR5E_XACRO} is absent (the shared robot files are not part of the repository)")
    return ud.load(UR5E_XACRO)


def test_passive_ur5e_conserves_energy(ur5e):
    q0 = np.array([0.3, -1.0, 1.2, 0.1, 0.5, 0.0])
    tr = simulate(ur5e, q0, np.array([0.5, 0, -0.3, 0, 0.2, 1.0]), 2.0, rtol=1e-10, atol=1e-12,
                  passive=False)
    assert len(tr) == 201 and tr.t[-1] == pytest.approx(2.0)
    drift = np.max(np.abs(tr.energy - tr.energy[0])) / np.max(np.abs(tr.energy))
    assert drift <= 1e-6
    # the arm really moved (a frozen simulation would conserve energy trivially)
    assert np.max(np.abs(tr.q[-1] - q0)) > 0.5


def test_damping_dissipates_energy_monotonically():
    model = ud.load(pendulum_urdf(damping=0.5))
    tr = simulate(model, [1.0], [0.0], 3.0, rtol=1e-10, atol=1e-12)
    dE = np.diff(tr.energy)
    assert np.all(dE <= 1e-9) and tr.energy[-1] < tr.energy[0] - 1.0
    # dE/dt = −b q̇²: integrate the recorded q̇ (trapezoid) and compare with the energy lost
    lost = np.trapezoid(0.5 * tr.qd[:, 0] ** 2, tr.t)
    assert tr.energy[0] - tr.energy[-1] == pytest.approx(lost, rel=2e-3)


def test_computed_torque_tracks_a_spline(ur5e):
    W = np.array([[0, -1.2, 1.0, 0, 0.5, 0], [0.8, -0.8, 0.6, -0.5, 0.9, 1.0], [0.2, -1.5, 1.4, 0.3, 0.1, -0.5]])
    ref = SplineTrajectory(W, [1.0, 1.0])
    tr = simulate(ur5e, W[0], None, 2.0, controller=ComputedTorque(ur5e, ref, 400.0, 40.0), rtol=1e-9, atol=1e-11)
    qr, qdr, qddr = ref(tr.t)
    assert np.max(np.abs(tr.q - qr)) < 1e-6
    # once tracking is exact, the torques are the inverse dynamics of the reference (plus nothing else:
    # UR5e has no damping)
    assert np.allclose(tr.tau, ud.inverse_dynamics(ur5e, qr, qdr, qddr), atol=1e-3)


def test_quintic_boundary_conditions():
    tr = QuinticTrajectory([0.0, 1.0], [1.0, -1.0], 2.0)
    q, qd, qdd = tr(np.array([0.0, 1.0, 2.0, 3.0]))
    assert q[0] == pytest.approx([0, 1]) and q[2] == pytest.approx([1, -1]) and q[3] == pytest.approx([1, -1])
    assert np.allclose(qd[[0, 2, 3]], 0) and np.allclose(qdd[[0, 2, 3]], 0)
    assert q[1] == pytest.approx([0.5, 0.0])  # symmetric about the midpoint
    # velocity is the derivative of position (finite differences)
    h = 1e-6
    assert (tr(0.7 + h)[0] - tr(0.7 - h)[0]) / (2 * h) == pytest.approx(tr(0.7)[1], rel=1e-6)


def test_failing_simulation_keeps_what_it_computed():
    model = ud.load(pendulum_urdf())

    def bad(t, q, qd):
        return np.array([np.nan]) if t > 0.5 else np.zeros(1)

    with pytest.raises(ud.SimulationError) as ei:
        simulate(model, [0.5], None, 2.0, controller=bad, dt_out=0.01)
    tr = ei.value.trajectory
    assert tr is not None and 40 <= len(tr) <= 51 and tr.t[-1] <= 0.5 + 1e-12
    assert np.all(np.isfinite(tr.q))


def test_trajectory_files_roundtrip(tmp_path, ur5e):
    tr = simulate(ur5e, np.zeros(6), None, 0.1, dt_out=0.05)
    tr.save(tmp_path / "t.npz")
    back = Trajectory.load(tmp_path / "t.npz")
    assert np.array_equal(back.q, tr.q) and back.joint_names == ur5e.joint_names
    tr.save(tmp_path / "t.csv")
    with open(tmp_path / "t.csv") as fh:
        rows = list(csv.reader(fh))
    assert rows[0][:2] == ["t", "q[shoulder_pan_joint]"] and rows[0][-1] == "energy"
    assert len(rows) == 1 + len(tr) and float(rows[-1][0]) == pytest.approx(0.1)


def test_bad_state_arguments_raise_state_error(ur5e):
    with pytest.raises(ud.StateError, match="q must have shape"):
        ud.inverse_dynamics(ur5e, np.zeros(5), np.zeros(6), np.zeros(6))
    with pytest.raises(ud.StateError, match="non-finite"):
        ud.forward_dynamics(ur5e, np.zeros(6), np.full(6, np.nan), np.zeros(6))
    with pytest.raises(ValueError):  # StateError is a ValueError, for numpy-style callers
        ud.mass_matrix(ur5e, "abc")
