"""Simulation: energy conservation, dissipation, tracking, failure handling, trajectory files."""
import csv

import numpy as np
import pytest

import urdf_dyn as ud
from _robots import UR5E_XACRO, pendulum_urdf
from urdf_dyn.simulation.controllers import ComputedTorque
from urdf_dyn.simulation.simulate import Trajectory, simulate
from urdf_dyn.simulation.trajectories import QuinticTrajectory, SplineTrajectory


@pytest.fixture(scope="module")
def ur5e():
    if not UR5E_XACRO.is_file():
        pytest.skip(f"{UR5E_XACRO} is absent (the shared robot files are not part of the repository)")
    return ud.load(UR5E_XACRO)


def test_passive_ur5e_conserves_energy(ur5e):
    q0 = np.array([0.3, -1.0, 1.2, 0.1, 0.5, 0.0])
    # limits=False: the wrist joints reach their ±2π end stops within 2 s, whose inelastic impacts dissipate
    # energy (tests/simulation/test_limits.py); this test is about the integrator alone
    tr = simulate(ur5e, q0, np.array([0.5, 0, -0.3, 0, 0.2, 1.0]), 2.0, options=ud.SimulateOptions(rtol=1e-10, atol=1e-12, passive=False, limits=False))
    assert len(tr) == 201 and tr.t[-1] == pytest.approx(2.0)
    drift = np.max(np.abs(tr.energy - tr.energy[0])) / np.max(np.abs(tr.energy))
    assert drift <= 1e-6
    # the arm really moved (a frozen simulation would conserve energy trivially)
    assert np.max(np.abs(tr.q[-1] - q0)) > 0.5


def test_damping_dissipates_energy_monotonically():
    model = ud.load(pendulum_urdf(damping=0.5))
    tr = simulate(model, [1.0], [0.0], 3.0, options=ud.SimulateOptions(rtol=1e-10, atol=1e-12))
    dE = np.diff(tr.energy)
    assert np.all(dE <= 1e-9) and tr.energy[-1] < tr.energy[0] - 1.0
    # dE/dt = −b q̇²: integrate the recorded q̇ (trapezoid) and compare with the energy lost
    lost = np.trapezoid(0.5 * tr.qd[:, 0] ** 2, tr.t)
    assert tr.energy[0] - tr.energy[-1] == pytest.approx(lost, rel=2e-3)


def test_computed_torque_tracks_a_spline(ur5e):
    W = np.array([[0, -1.2, 1.0, 0, 0.5, 0], [0.8, -0.8, 0.6, -0.5, 0.9, 1.0], [0.2, -1.5, 1.4, 0.3, 0.1, -0.5]])
    ref = SplineTrajectory(W, [1.0, 1.0])
    tr = simulate(ur5e, W[0], None, 2.0, controller=ComputedTorque(ur5e, ref, 400.0, 40.0), options=ud.SimulateOptions(rtol=1e-9, atol=1e-11))
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
        simulate(model, [0.5], None, 2.0, controller=bad, options=ud.SimulateOptions(dt_out=0.01))
    tr = ei.value.trajectory
    assert tr is not None and 40 <= len(tr) <= 51 and tr.t[-1] <= 0.5 + 1e-12
    assert np.all(np.isfinite(tr.q))


def test_trajectory_files_roundtrip(tmp_path, ur5e):
    tr = simulate(ur5e, np.zeros(6), None, 0.1, options=ud.SimulateOptions(dt_out=0.05))
    tr.save(tmp_path / "t.npz")
    back = Trajectory.load(tmp_path / "t.npz")
    assert np.array_equal(back.q, tr.q) and back.joint_names == ur5e.joint_names
    tr.save(tmp_path / "t.csv")
    with open(tmp_path / "t.csv") as fh:
        rows = list(csv.reader(fh))
    assert rows[0][:2] == ["t", "q[shoulder_pan_joint]"] and rows[0][1 + 4 * 6] == "energy"
    assert rows[0][-1] == "stop_force[wrist_3_joint]"   # the end-stop columns follow (UR5e limits ±2π)
    assert len(rows) == 1 + len(tr) and float(rows[-1][0]) == pytest.approx(0.1)
    back = Trajectory.load(tmp_path / "t.csv")
    assert np.array_equal(back.stop_active, tr.stop_active) and np.array_equal(back.stop_force, tr.stop_force)


def test_bad_state_arguments_raise_state_error(ur5e):
    with pytest.raises(ud.StateError, match="q must have shape"):
        ud.inverse_dynamics(ur5e, np.zeros(5), np.zeros(6), np.zeros(6))
    with pytest.raises(ud.StateError, match="non-finite"):
        ud.forward_dynamics(ur5e, np.zeros(6), np.full(6, np.nan), np.zeros(6))
    with pytest.raises(ValueError):  # StateError is a ValueError, for numpy-style callers
        ud.mass_matrix(ur5e, "abc")


# -- closed-loop machines under the built-in controllers (they act through the actuators) -------------------
ROBOTS = ud.__path__[0] + "/../robots/"
HOLD = {  # robot file: (joints to set before assembling, their values), actuators from the file
    "excavator.urdf": (["swing", "boom_cyl", "stick_cyl", "bucket_cyl"], [0.5, -0.4, -0.6, -0.3]),  # properly
    "rbda_fig8_3.urdf": (["joint1", "joint4"], [0.9, -0.4]),                                      # properly
    "four_bar.urdf": (["crank_joint"], [0.4]),                                                   # redundantly
}


def _posed(name):
    from urdf_dyn.constraints.assembly import assemble
    model = ud.load(ROBOTS + name)
    joints, vals = HOLD[name]
    q = model.q_initial().copy()
    for j, v in zip(joints, vals):
        q[model.joint_index(j)] += v
    return model, assemble(model, q, hold=joints)


@pytest.mark.parametrize("name", sorted(HOLD))
def test_gravity_compensation_holds_a_closed_loop_machine(name):
    """From rest, gravity compensation through the actuators must hold the pose: the analytic answer is
    q̈ = 0 for all t. Checked with an independent closed-loop solver — Pinocchio's constraintDynamics with the
    loop contacts read from the URDF (tests/reference.py) — on the controller's τ: ‖q̈‖ ≤ 1e-9 of the
    free fall's, with no torque on the passive joints; then the simulated motion: the pose stays, q̈ stays
    zero."""
    pytest.importorskip("pinocchio")
    from reference import PinLoops
    model, q = _posed(name)
    ref = PinLoops(ROBOTS + name, model.joint_names)
    z = np.zeros(model.nv)
    ctrl = ud.GravityCompensation(model)
    tau = ctrl(0.0, q, z)
    driven = [model.joint_index(a.joint) for a in ud.actuators_of(model)]
    assert np.all(np.delete(tau, driven) == 0.0)                       # passive pins get no torque
    fall = np.linalg.norm(ref.accelerations(q, z, np.zeros(model.nv))[0])
    held = np.linalg.norm(ref.accelerations(q, z, tau)[0])
    print(f"{name}: free fall |q̈| {fall:.3g}, held {held:.2e}")
    assert fall > 0.1 and held <= 1e-9 * fall
    # every pose is an equilibrium under this controller (neutral, no restoring force), so the integrator's
    # local errors (atol 1e-10) and Baumgarte's correction of the loop residual move it a little
    tr = simulate(model, q, None, 1.0, controller=ctrl, options=ud.SimulateOptions(dt_out=0.05))
    print(f"{name}: simulated 1 s, |q - q0| {np.abs(tr.q - q).max():.1e}, |q̈| {np.abs(tr.qdd).max():.1e}")
    assert np.abs(tr.q - q).max() <= 1e-8 and np.abs(tr.qdd).max() <= 1e-7 * fall
    for i in (5, 20):  # and along the run, again against Pinocchio
        assert np.linalg.norm(ref.accelerations(tr.q[i], tr.qd[i], tr.tau[i])[0]) <= 1e-7 * fall


def _reference_controller(model, plan_free):
    """The controllers' formula written with the readable reference: q̈ projected onto K q̈ = k by least
    squares, u = actuator_forces(compiled=False), τ = actuation_matrix · u."""
    from urdf_dyn.constraints.inverse import actuation_matrix, actuator_forces, actuators_of

    def tau(q, qd, qdd):
        K, k = ud.loop_constraints(model, q, qd)
        qdd = qdd + np.linalg.lstsq(K, k - K @ qdd, rcond=1e-9)[0]
        u = actuator_forces(model, q, qd, qdd, check=False, warn=False, compiled=not plan_free).u
        return actuation_matrix(model, q, actuators_of(model)) @ u
    return tau


def test_fast_controllers_equal_the_reference_formula():
    """GravityCompensation and ComputedTorque on closed loops (one compiled call per state through
    ActuationPlan) against their formula evaluated with the readable reference path, along a moving excavator
    (swinging, so centrifugal loads and q̇ ≠ 0 enter ComputedTorque): ≤ 1e-9 relative."""
    model, q0 = _posed("excavator.urdf")
    qd0 = np.zeros(model.nv)
    qd0[model.joint_index("swing")] = 0.3
    tr = simulate(model, q0, qd0, 0.3, controller=ud.GravityCompensation(model), options=ud.SimulateOptions(dt_out=0.1))
    ref = _reference_controller(model, plan_free=True)
    gc = ud.GravityCompensation(model)
    q1 = q0.copy()
    q1[model.joint_index("boom_cyl")] += 0.05
    ct = ComputedTorque(model, lambda t: (q1, np.zeros(model.nv), np.zeros(model.nv)), kp=25.0, kd=10.0)
    z = np.zeros(model.nv)
    for q, qd in zip(tr.q, tr.qd):
        want = ref(q, z, z)
        assert np.abs(gc(0.0, q, qd) - want).max() <= 1e-9 * np.abs(want).max()
        want = ref(q, qd, 25.0 * (q1 - q) - 10.0 * qd)
        assert np.abs(ct(0.0, q, qd) - want).max() <= 1e-9 * np.abs(want).max()


def test_gravity_compensated_swing_is_unchanged_by_the_fast_path():
    """The excavator's gravity-compensated swing (the benchmark's 10 s run, shortened): the trajectory under
    the fast controller equals, bit for bit, the one under the controller's formula on the compiled
    ``actuator_forces`` (the path before ActuationPlan)."""
    model = ud.load(ROBOTS + "excavator.urdf")
    qd0 = np.r_[0.3, np.zeros(model.nv - 1)]
    slow = _reference_controller(model, plan_free=False)
    z = np.zeros(model.nv)
    a = simulate(model, model.q_initial(), qd0, 0.5, controller=ud.GravityCompensation(model), options=ud.SimulateOptions(dt_out=0.01))
    b = simulate(model, model.q_initial(), qd0, 0.5, controller=lambda t, q, qd: slow(q, z, z), options=ud.SimulateOptions(dt_out=0.01))
    for k in ("q", "qd", "qdd", "tau", "energy", "residuals"):
        assert np.array_equal(getattr(a, k), getattr(b, k)), k
    assert np.abs(a.tau).max() > 1e5                                  # the boom cylinder carries the machine
