"""External loads along a motion (urdf_dyn.machines.loads): each wrench is checked against an independent
computation — the rigid payload of Model.with_payload (RNEA with the added inertia), finite differences of
positions in time, and the generalised force Jᵀf of the link Jacobian (virtual work)."""
import numpy as np
import pytest

import urdf_dyn as ud
from _robots import ROOT
from urdf_dyn.machines.loads import (Frame, frame_poses, payload_wrench, phase_mask, phase_times,
                                         point_acceleration, point_positions, point_wrench, profile)

EXC = ROOT / "robots" / "excavator.urdf"
Y = ["swing", "boom_cyl", "stick_cyl", "bucket_cyl"]


@pytest.fixture(scope="module")
def swing_dig():
    model = ud.load(EXC)
    mo = ud.spline_motion(Y, [[0, -0.4, -0.85, -0.45], [1.0, -0.15, -0.05, 0.4]], [2.0], 0.002, "quintic")
    Q, QD, QDD = ud.consistent_motion(model, mo, progress=False)
    return model, mo.t, Q, QD, QDD


def test_point_payload_wrench_equals_rigid_payload(swing_dig):
    """A constant point mass as the wrench m (g − a_c) gives the actuator forces of the model with the mass
    added to the bucket's inertia."""
    model, t, Q, QD, QDD = swing_dig
    k = slice(None, None, 100)
    com = [0.75, 0.0, 0.35]
    w = payload_wrench(model, Q[k], QD[k], QDD[k], "bucket", com, 1800.0)
    a = ud.actuator_forces(model, Q[k], QD[k], QDD[k], f_ext={"bucket": w}, warn=False).u
    b = ud.actuator_forces(model.with_payload("bucket", 1800.0, com), Q[k], QD[k], QDD[k], warn=False).u
    assert np.abs(a - b).max() < 1e-12 * np.abs(b).max()


def test_point_payload_wrench_equals_rigid_payload_at_random_tree_states(swing_dig):
    """The same equivalence through the tree's RNEA at random states (not on the loops, large q̇, q̈): the
    point acceleration inside the wrench (the forward pass of RBDA Table 5.1) is exact, as the inertia
    added to the bucket is; its directional-difference fallback agrees to O(ε²)."""
    from urdf_dyn.machines.loads import _point_acceleration_fd
    model = swing_dig[0]
    rng = np.random.default_rng(7)
    Q, QD, QDD = rng.uniform(-1, 1, (40, model.nv)), rng.normal(size=(40, model.nv)), rng.normal(size=(40, model.nv))
    com = [0.75, 0.1, 0.35]
    w = payload_wrench(model, Q, QD, QDD, "bucket", com, 1800.0)
    a = ud.inverse_dynamics(model, Q, QD, QDD, f_ext={"bucket": w})
    b = ud.inverse_dynamics(model.with_payload("bucket", 1800.0, com), Q, QD, QDD)
    assert np.abs(a - b).max() < 1e-11 * np.abs(b).max()
    pa = point_acceleration(model, Q, QD, QDD, "bucket", com)
    assert np.abs(pa - _point_acceleration_fd(model, Q, QD, QDD, "bucket", com)).max() < 1e-5 * np.abs(pa).max()


def test_point_acceleration_matches_time_differences(swing_dig):
    model, t, Q, QD, QDD = swing_dig
    p = point_positions(model, Q, "bucket", [1.47, 0, 0])
    a = point_acceleration(model, Q, QD, QDD, "bucket", [1.47, 0, 0])
    a_fd = np.gradient(np.gradient(p, t, axis=0), t, axis=0)
    assert np.abs(a - a_fd)[5:-5].max() < 1e-3 * np.abs(a).max()


def test_world_force_at_a_point_is_jacobian_transpose(swing_dig):
    """A force f (world axes) at a world point p of the bucket, as a wrench in the bucket frame, changes the
    tree's inverse dynamics by −J_pᵀ f with J_p = v_o + ω × (p − o) from link_jacobian (virtual work)."""
    model, t, Q, QD, QDD = swing_dig
    q = Q[500]
    z = np.zeros(model.nv)
    f = np.array([3e3, -2e3, -40e3])
    T = ud.link_pose(model, q, "bucket")
    p = T[:3, :3] @ np.array([1.47, 0.1, 0.0]) + T[:3, 3]
    w = point_wrench(model, q, "bucket", f, p, frame="world")[0]
    J = ud.link_jacobian(model, q, "bucket", frame="local_world_aligned")
    r = p - T[:3, 3]
    Jp = J[3:] - np.cross(r, J[:3].T).T        # v_p = v_o + ω × r = v_o − r × ω
    d = ud.inverse_dynamics(model, q, z, z, f_ext={"bucket": w}) - ud.inverse_dynamics(model, q, z, z)
    assert np.allclose(d, -Jp.T @ f, atol=1e-6 * np.abs(f).max())
    # the same force given in another link's frame, and in a named frame on the bucket's edge
    Ts = ud.link_pose(model, q, "stick")
    f_s, p_s = Ts[:3, :3].T @ f, Ts[:3, :3].T @ (p - Ts[:3, 3])
    assert np.allclose(point_wrench(model, q, "bucket", f_s, p_s, frame="stick")[0], w)
    edge = Frame("bucket", (1.47, 0.1, 0.0), (0.0, 0.3, 0.0))
    Te = frame_poses(model, q, edge)[0]
    assert np.allclose(Te[:3, 3], p)
    assert np.allclose(point_wrench(model, q, "bucket", Te[:3, :3].T @ f, frame="edge", frames={"edge": edge})[0], w)


def test_phases_and_profiles():
    win = phase_times(["dig", "curl", "swing", "dig"], [2.0, 1.5, 3.0, 1.0])
    assert win["curl"] == (2.0, 3.5) and win["dig"] == (0.0, 7.5)
    t = np.linspace(0, 7.5, 16)
    assert phase_mask(t, win, "swing").sum() == np.sum((t >= 3.5) & (t <= 6.5))
    assert profile([0.5, 2.0, 5.0], [0, 1, 3], [0, 10, 30]) == pytest.approx([5, 20, 30])
    with pytest.raises(ValueError, match="phase names"):
        phase_times(["a"], [1.0, 2.0])
    with pytest.raises(KeyError, match="unknown frame"):
        frame_poses(ud.load(EXC), np.zeros(12), "nowhere")
