"""Ball (spherical) tree joints against Pinocchio's ``JointModelSpherical``, and their configuration space.

Oracle: a Pinocchio model built joint by joint from the same description as the URDF+ text (Pinocchio's URDF
parser has no ball joint): ``JointModelSpherical`` (q = quaternion (x, y, z, w), v = ω in the child frame,
our layout exactly), ``JointModelRevoluteUnaligned`` and ``JointModelPrismaticUnaligned``. The tree has a
ball joint mid-chain, two in a row, and one at the root of a branch. At random states RNEA τ, CRBA H, ABA q̈,
forward kinematics of every link, a LOCAL Jacobian, energies, ``integrate`` and ``difference`` agree to 1e-9
(relative, norm-based; ``test_floating_base._compare``). Independently of Pinocchio: ``qdot`` is the derivative
of ``integrate``; a passive simulation with a ball joint conserves energy and keeps the quaternion unit.
"""
from __future__ import annotations

import numpy as np
import pytest

pin = pytest.importorskip("pinocchio")

import urdf_dyn  # noqa: E402
from urdf_dyn.algorithms.configuration import difference, integrate, qdot  # noqa: E402
from test_floating_base import TOL, _compare, _random_state, _rel  # noqa: E402

#: (link, mass [kg], centre of mass (3,) [m], inertia about the centre of mass (ixx, iyy, izz, ixy, ixz, iyz))
LINKS = [("base", 4.0, (0.02, -0.01, 0.1), (0.05, 0.06, 0.04, 0.001, -0.002, 0.003)),
         ("upper", 2.0, (0.0, 0.03, -0.2), (0.03, 0.028, 0.006, 0.0005, 0.0, -0.001)),
         ("lower", 1.5, (0.01, 0.0, -0.18), (0.02, 0.021, 0.004, 0.0, 0.0007, 0.0)),
         ("wrist", 0.4, (0.0, 0.02, -0.03), (0.001, 0.0012, 0.0009, 0.0001, 0.0, 0.0)),
         ("hand", 0.6, (0.03, 0.0, -0.05), (0.002, 0.0025, 0.0015, 0.0, 0.0002, 0.0001)),
         ("side", 1.0, (0.1, 0.0, 0.0), (0.004, 0.01, 0.011, 0.0, 0.0, 0.0005)),
         ("slider", 0.8, (0.0, 0.0, 0.05), (0.003, 0.003, 0.002, 0.0, 0.0, 0.0))]
#: (joint, type, parent, child, origin xyz, origin rpy, axis)
JOINTS = [("yaw", "revolute", "world", "base", (0, 0, 0.5), (0, 0, 0.2), (0, 0, 1)),
          ("shoulder", "ball", "base", "upper", (0.1, 0.05, 0.2), (0.3, -0.2, 0.1), None),
          ("elbow", "revolute", "upper", "lower", (0, 0.02, -0.4), (0, 0.1, 0), (0.6, 0.8, 0)),
          ("wrist_1", "ball", "lower", "wrist", (0, 0, -0.35), (0, 0, 0), None),
          ("wrist_2", "spherical", "wrist", "hand", (0.01, 0, -0.06), (0.2, 0, 0.4), None),
          ("hip", "ball", "base", "side", (-0.1, 0.0, 0.05), (0, 0.5, 0), None),
          ("lift", "prismatic", "side", "slider", (0.2, 0, 0), (0, 0, 0), (0, 0.6, 0.8))]


def _urdf(limits=True):
    out = ['<robot name="balls"><link name="world"/>']
    for n, m, c, (ixx, iyy, izz, ixy, ixz, iyz) in LINKS:
        out.append(f'<link name="{n}"><inertial><origin xyz="{c[0]} {c[1]} {c[2]}"/><mass value="{m}"/>'
                   f'<inertia ixx="{ixx}" iyy="{iyy}" izz="{izz}" ixy="{ixy}" ixz="{ixz}" iyz="{iyz}"/>'
                   '</inertial></link>')
    for n, t, p, c, xyz, rpy, ax in JOINTS:
        axis = f'<axis xyz="{ax[0]} {ax[1]} {ax[2]}"/>' if ax else ""
        lim = '<limit lower="-3" upper="3" effort="10" velocity="5"/>' if limits and t in ("revolute", "prismatic") else ""
        out.append(f'<joint name="{n}" type="{t}"><parent link="{p}"/><child link="{c}"/>'
                   f'<origin xyz="{xyz[0]} {xyz[1]} {xyz[2]}" rpy="{rpy[0]} {rpy[1]} {rpy[2]}"/>{axis}{lim}</joint>')
    return "".join(out) + "</robot>"


def _pinocchio():
    pm = pin.Model()
    jid = {"world": 0}
    inertia = {n: (m, c, I) for n, m, c, I in LINKS}
    for n, t, p, c, xyz, rpy, ax in JOINTS:
        placement = pin.SE3(pin.rpy.rpyToMatrix(*rpy), np.array(xyz, float))
        a = None if ax is None else np.array(ax, float) / np.linalg.norm(ax)
        jm = (pin.JointModelSpherical() if t in ("ball", "spherical") else pin.JointModelRevoluteUnaligned(a)
              if t == "revolute" else pin.JointModelPrismaticUnaligned(a))
        j = pm.addJoint(jid[p], jm, placement, n)
        m, com, (ixx, iyy, izz, ixy, ixz, iyz) = inertia[c]
        Ic = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
        pm.appendBodyToJoint(j, pin.Inertia(m, np.array(com, float), Ic), pin.SE3.Identity())
        pm.addBodyFrame(c, j, pin.SE3.Identity(), 0)
        jid[c] = j
    return pm


def test_ball_joints_equal_pinocchio_spherical():
    model, pm = urdf_dyn.load(_urdf()), _pinocchio()
    assert model.nv == pm.nv == 3 + 4 * 3 and model.nq == pm.nq == 3 + 4 * 4
    assert model.q_names[1:5] == ("shoulder.qx", "shoulder.qy", "shoulder.qz", "shoulder.qw")
    assert model.joint_names[1:4] == ("shoulder.rx", "shoulder.ry", "shoulder.rz")
    assert model.joint_types[model.joint_index("wrist_2.rx")] == "ball"        # "spherical" is a synonym
    assert not model.is_fixed_base and model.q_units[1:5] == ("1",) * 4
    err = _compare(model, pm, seed=7, n=3)
    assert max(err.values()) < TOL, err


def test_ball_joint_neutral_and_normalisation():
    model = urdf_dyn.load(_urdf())
    q = model.neutral()
    k = model.q_names.index("hip.qw")
    assert q[k] == 1.0 and q[k - 3:k].tolist() == [0, 0, 0]
    q2 = q.copy()
    q2[k - 3:k + 1] = (0.0, 0.0, 0.0, 3.0)                          # a quaternion of norm 3: the same pose
    assert np.allclose(urdf_dyn.forward_kinematics(model, q2)["slider"],
                       urdf_dyn.forward_kinematics(model, q)["slider"], atol=1e-14)
    assert np.allclose(urdf_dyn.normalize(model, q2), q)
    q2[k - 3:k + 1] = 0.0
    with pytest.raises(urdf_dyn.StateError, match="quaternion .* of ball joint 'hip', is zero"):
        urdf_dyn.inverse_dynamics(model, q2, np.zeros(model.nv), np.zeros(model.nv))


def test_ball_qdot_is_the_derivative_of_integrate_and_difference_inverts_it():
    model = urdf_dyn.load(_urdf())
    rng = np.random.default_rng(4)
    q, v, _, _ = _random_state(model, rng)
    h = 1e-6
    fd = (integrate(model, q, v, h) - integrate(model, q, v, -h)) / (2 * h)
    assert np.abs(fd - qdot(model, q, v)).max() < 1e-8
    q1 = integrate(model, q, v, 0.3)
    assert _rel(difference(model, q, q1), 0.3 * v) < 1e-12


def test_passive_motion_with_ball_joints_conserves_energy():
    model = urdf_dyn.load(_urdf(limits=False).replace('"revolute"', '"continuous"'))   # no limit stops
    rng = np.random.default_rng(11)
    q0, v0, _, _ = _random_state(model, rng)
    traj = urdf_dyn.simulate(model, q0, 0.5 * v0, duration=0.5, options=urdf_dyn.SimulateOptions(dt_out=0.05, passive=False, rtol=1e-11, atol=1e-12))
    assert traj.q.shape == (len(traj.t), model.nq) and traj.q_names == model.q_names
    assert np.ptp(traj.energy) < 1e-7 * max(1.0, np.abs(traj.energy).max())
    assert traj.meta["quaternion_drift"] < 1e-8
    k = model.q_names.index("shoulder.qx")
    assert np.abs(np.linalg.norm(traj.q[:, k:k + 4], axis=1) - 1).max() < 1e-14
