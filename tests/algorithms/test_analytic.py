"""Tree dynamics against closed-form solutions (independent of Pinocchio)."""
import numpy as np
import pytest

import urdf_dyn as ud
from _robots import pendulum_urdf, slider_urdf

G = 9.81


@pytest.mark.parametrize("axis", ["0 1 0", "1 0 0", "0 -1 0"])
def test_pendulum_inverse_and_forward_dynamics(axis):
    m, l, Ic = 2.0, 0.7, 0.01
    model = ud.load(pendulum_urdf(m, l, Ic, axis))
    rng = np.random.default_rng(1)
    J = Ic + m * l ** 2  # about the hinge
    for q, qd, qdd in rng.normal(size=(5, 3)):
        # Lagrange: J q̈ + m g l sin(q) = τ for rotation about y (x: the same by symmetry; -y: the sign of
        # q flips, sin is odd, so the same formula holds in the joint's own coordinate).
        tau = J * qdd + m * G * l * np.sin(q)
        assert ud.inverse_dynamics(model, [q], [qd], [qdd])[0] == pytest.approx(tau, rel=1e-12, abs=1e-12)
        assert ud.forward_dynamics(model, [q], [qd], [tau])[0] == pytest.approx(qdd, rel=1e-10, abs=1e-12)
        assert ud.mass_matrix(model, [q])[0, 0] == pytest.approx(J, rel=1e-12)
        E = 0.5 * J * qd ** 2 + m * G * (1.0 - l * np.cos(q))  # V = m g h, COM height h = 1 - l cos q
        assert ud.kinetic_energy(model, [q], [qd]) + ud.potential_energy(model, [q]) == pytest.approx(E, rel=1e-12)


def test_slider_with_fixed_payload_merged():
    model = ud.load(slider_urdf(3.0))
    assert model.nv == 1 and model.total_mass == pytest.approx(4.0)
    # τ = (m + m_p)(q̈ + g), whatever the payload's lateral offset (no rotation possible)
    for qdd in (-2.0, 0.0, 5.0):
        assert ud.inverse_dynamics(model, [0.3], [0.7], [qdd])[0] == pytest.approx(4.0 * (qdd + G), rel=1e-12)
    # the fixed child link stays addressable: its pose is origin (0,0,0.5) + q on z, yawed by 1 rad
    T = ud.link_pose(model, [0.3], "payload")
    assert T[:3, 3] == pytest.approx([0, 0, 0.8])
    assert T[0, 0] == pytest.approx(np.cos(1.0))


def test_external_force_on_pendulum():
    """A horizontal force F along +x at the bob's COM adds a torque −F·(lever) about the hinge."""
    m, l = 1.5, 0.5
    model = ud.load(pendulum_urdf(m, l, 0.0))
    q = 0.3
    F = 4.0
    # wrench in the link frame at the link origin (the hinge): force R^T F_world, torque r × f with
    # r = COM position in the link frame (0, 0, -l)
    R = np.array([[np.cos(q), 0, np.sin(q)], [0, 1, 0], [-np.sin(q), 0, np.cos(q)]])
    f_link = R.T @ np.array([F, 0, 0])
    n_link = np.cross([0, 0, -l], f_link)
    tau = ud.inverse_dynamics(model, [q], [0.0], [0.0], f_ext={"bob": np.r_[n_link, f_link]})[0]
    # statics about y: the COM is at r = (−l sin q, 0, −l cos q); the force's moment about +y is
    # r_z F_x = −F l cos q, and τ + τ_ext = g(q) gives τ = m g l sin q + F l cos q
    assert tau == pytest.approx(m * G * l * np.sin(q) + F * l * np.cos(q), rel=1e-12)


def test_batch_equals_single_calls():
    model = ud.load(pendulum_urdf())
    rng = np.random.default_rng(5)
    Q, QD, QDD = rng.normal(size=(3, 7, 1))
    batch = ud.inverse_dynamics(model, Q, QD, QDD)
    assert batch.shape == (7, 1)
    for k in range(7):
        assert batch[k] == pytest.approx(ud.inverse_dynamics(model, Q[k], QD[k], QDD[k]), rel=1e-15)
