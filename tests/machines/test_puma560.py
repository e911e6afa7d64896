"""robots/puma560.urdf against its source: the standard-DH PUMA 560 of Corke's Robotics Toolbox
(`mdl_puma560` / `rtb.models.DH.Puma560`, after Corke & Armstrong-Helouvry, ICRA 1994).

Oracles, each independent of the URDF's numbers:
- forward kinematics: the DH product A1...A6 computed here in numpy from the toolbox's DH table;
- gravity torques: dV/dq evaluated in closed form from the DH frames and the toolbox's COMs r_i (given in
  the DH link frames), and the toolbox's published gravload(qn) (robotics-toolbox-python
  tests/test_DHRobot.py, 4 decimals);
- mass matrix: the toolbox's published inertia(qn) (same test file), which includes the rotor inertias
  Jm G^2 that the URDF leaves out and the toolbox's link-3 inertia that the URDF repairs (its NOTE 2).
"""
from pathlib import Path

from conftest import ROOT
import numpy as np
import pytest

import urdf_dyn as ud

URDF = ROOT / "robots" / "puma560.urdf"
G = 9.81

# toolbox standard DH table (d1 = 0.672: base_link is the mounting surface)
D = [0.672, 0.0, 0.15005, 0.4318, 0.0, 0.0]
A = [0.0, 0.4318, 0.0203, 0.0, 0.0, 0.0]
ALPHA = [np.pi / 2, 0.0, -np.pi / 2, np.pi / 2, -np.pi / 2, 0.0]
MASS = [0.0, 17.4, 4.8, 0.82, 0.34, 0.09]
COM = [(0, 0, 0), (-0.3638, 0.006, 0.2275), (-0.0203, -0.0141, 0.070), (0, 0.019, 0), (0, 0, 0), (0, 0, 0.032)]
JM = np.array([200e-6, 200e-6, 200e-6, 33e-6, 33e-6, 33e-6])  # rotor inertias (not in the URDF)
GEAR = np.array([-62.6111, 107.815, -53.7063, 76.0364, 71.923, 76.686])
QN = np.array([0, np.pi / 4, np.pi, 0, np.pi / 4, 0])  # toolbox "nominal" pose


def rotx(t):
    c, s = np.cos(t), np.sin(t)
    return np.array([[1, 0, 0, 0], [0, c, -s, 0], [0, s, c, 0], [0, 0, 0, 1.0]])


def rotz(t):
    c, s = np.cos(t), np.sin(t)
    return np.array([[c, -s, 0, 0], [s, c, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1.0]])


def trans(x, y, z):
    T = np.eye(4)
    T[:3, 3] = x, y, z
    return T


def dh_link(i, q):
    """A_i(q) = Rz(q) Tz(d_i) Tx(a_i) Rx(alpha_i), standard DH."""
    return rotz(q) @ trans(A[i], 0, D[i]) @ rotx(ALPHA[i])


def dh_frames(q):
    """[T_0, T_1, ..., T_6]: DH frame i in the base frame."""
    T = [np.eye(4)]
    for i in range(6):
        T.append(T[-1] @ dh_link(i, q[i]))
    return T


def gravity_dh(q):
    """g_j(q) = dV/dq_j with V = -sum_i m_i g . p_ci: closed form from DH frames and toolbox COMs."""
    T = dh_frames(q)
    gvec = np.array([0.0, 0.0, -G])
    pc = [(T[i + 1] @ np.r_[COM[i], 1.0])[:3] for i in range(6)]
    tau = np.zeros(6)
    for j in range(6):
        z, o = T[j][:3, 2], T[j][:3, 3]
        tau[j] = -sum(MASS[i] * gvec @ np.cross(z, pc[i] - o) for i in range(j, 6))
    return tau


@pytest.fixture(scope="module")
def model():
    return ud.load(URDF)


def random_q(n, seed=7):
    return np.random.default_rng(seed).uniform(-np.pi, np.pi, size=(n, 6))


def test_loads(model):
    assert model.joint_names == ("joint1", "joint2", "joint3", "joint4", "joint5", "joint6")
    assert model.total_mass == pytest.approx(sum(MASS), abs=1e-12)
    red = {t.joints[0]: t.mechanical_reduction for t in model.transmissions}
    assert [red[f"joint{i}"] for i in range(1, 7)] == pytest.approx(list(GEAR))


def test_forward_kinematics_equals_dh_product(model):
    # link1, link4..link6 are DH frames 1, 4..6; link2 and link3 sit on their joint axes, one fixed
    # transform short of DH frames 2 and 3 (see the URDF's FRAMES comment); tool0 is the flange.
    to_dh = {
        "link1": (1, np.eye(4)),
        "link2": (2, trans(0.4318, 0, 0)),
        "link3": (3, trans(0.0203, 0, 0.15005) @ rotx(-np.pi / 2)),
        "link4": (4, np.eye(4)),
        "link5": (5, np.eye(4)),
        "link6": (6, np.eye(4)),
    }
    for q in np.vstack([np.zeros(6), QN, random_q(10)]):
        T = dh_frames(q)
        for link, (i, F) in to_dh.items():
            np.testing.assert_allclose(ud.link_pose(model, q, link) @ F, T[i], rtol=0, atol=1e-12,
                                       err_msg=f"{link} at q={q}")
        np.testing.assert_allclose(ud.link_pose(model, q, "tool0"), T[6] @ trans(0, 0, 0.05625), rtol=0, atol=1e-12)


def test_known_poses():
    # by hand from the DH table: at q = 0 the wrist centre is (a2 + a3, -d3, d1 + d4), frame 6 unrotated
    T = dh_frames(np.zeros(6))[6]
    np.testing.assert_allclose(T, trans(0.4521, -0.15005, 1.1038), atol=1e-15)


def test_gravity_torques_against_dh_closed_form(model):
    Q = np.vstack([np.zeros(6), [0, np.pi / 2, -np.pi / 2, 0, 0, 0], QN, random_q(20, seed=3)])
    g = ud.gravity_torques(model, Q)
    for q, gq in zip(Q, g):
        np.testing.assert_allclose(gq, gravity_dh(q), rtol=0, atol=1e-10, err_msg=f"q={q}")


@pytest.mark.parametrize("q, published", [
    # robotics-toolbox-python tests/test_DHRobot.py::test_gravload, Puma560().gravload(qn), g = 9.81
    (QN, [-0.0000, 31.6399, 6.0351, 0.0000, 0.0283, 0.0]),
])
def test_gravity_torques_against_published_toolbox_values(model, q, published):
    np.testing.assert_allclose(ud.gravity_torques(model, q), published, rtol=0, atol=1e-4)


def test_gravity_torques_reference_poses(model):
    # closed-form values at the zero ("L") and READY poses, from gravity_dh (4 decimals):
    # qz: shoulder holds upper arm + forearm horizontal; qr: arm vertical, only COM offsets load it.
    np.testing.assert_allclose(ud.gravity_torques(model, np.zeros(6)), [0, 37.4837, 0.2489, 0, 0, 0], atol=1e-4)
    np.testing.assert_allclose(ud.gravity_torques(model, [0, np.pi / 2, -np.pi / 2, 0, 0, 0]),
                               [0, -0.7752, 0.2489, 0, 0, 0], atol=1e-4)


def test_mass_matrix_against_published_toolbox_inertia(model):
    # robotics-toolbox-python tests/test_DHRobot.py::test_inertia: Puma560().inertia(qn), 4 decimals.
    Ir = np.array([
        [3.6594, -0.4044, 0.1006, -0.0025, 0.0000, -0.0000],
        [-0.4044, 4.4137, 0.3509, 0.0000, 0.0024, 0.0000],
        [0.1006, 0.3509, 0.9378, 0.0000, 0.0015, 0.0000],
        [-0.0025, 0.0000, 0.0000, 0.1925, 0.0000, 0.0000],
        [0.0000, 0.0024, 0.0015, 0.0000, 0.1713, 0.0000],
        [-0.0000, 0.0000, 0.0000, 0.0000, 0.0000, 0.1941]])
    H = ud.mass_matrix(model, QN)
    # the toolbox adds rotor inertia reflected through the gears, Jm G^2, to the diagonal
    H_src = H + np.diag(JM * GEAR ** 2)
    # the URDF raised link 3's Izz (about z3, in DH frame 3) from 0.0125 to 0.020 (its NOTE 2); remove
    # that: dH_jk = dI (z3 . z_(j-1)) (z3 . z_(k-1)) for the joints j, k <= 3 that move link 3
    T = dh_frames(QN)
    c = np.array([T[3][:3, 2] @ T[j][:3, 2] for j in range(3)] + [0, 0, 0])
    H_src -= (0.020 - 0.0125) * np.outer(c, c)
    np.testing.assert_allclose(H_src, Ir, rtol=0, atol=1e-4)


def test_agrees_with_pinocchio(model):
    pin = pytest.importorskip("pinocchio")
    pm = pin.buildModelFromUrdf(str(URDF))
    pd = pm.createData()
    for q in random_q(5, seed=11):
        pin.framesForwardKinematics(pm, pd, q)
        for link in ("link1", "link2", "link3", "link4", "link5", "link6", "tool0"):
            np.testing.assert_allclose(ud.link_pose(model, q, link), pd.oMf[pm.getFrameId(link)].homogeneous,
                                       rtol=0, atol=1e-12)
        np.testing.assert_allclose(ud.gravity_torques(model, q), pin.computeGeneralizedGravity(pm, pd, q),
                                   rtol=0, atol=1e-10)
        H = pin.crba(pm, pd, q)
        H = np.triu(H) + np.triu(H, 1).T
        np.testing.assert_allclose(ud.mass_matrix(model, q), H, rtol=0, atol=1e-12)
