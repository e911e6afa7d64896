"""A ball joint in the viewer: a trajectory of a ball-joint pendulum (q: the joint's qx … qw columns, by
``Model.q_names``) plays on its robot, the scene poses the link by the joint's quaternion (the same pose as
``forward_kinematics``), and a zero quaternion is refused naming the ball joint. In-process: no OpenGL."""
import numpy as np
import pytest

import urdf_dyn as ud
from urdf_dyn_viewer.backend import ViewerError
from urdf_dyn_viewer.playback import motion_from_trajectory
from urdf_dyn_viewer.scene import RobotScene

#: a pendulum on a ball joint below a fixed support; the bob has a box visual
ROBOT = """<robot name="ball_pendulum">
  <link name="support"/>
  <link name="bob"><inertial><origin xyz="0 0 -0.5"/><mass value="1"/>
    <inertia ixx="0.01" iyy="0.02" izz="0.03" ixy="0" ixz="0" iyz="0"/></inertial>
    <visual><origin xyz="0 0 -0.5"/><geometry><box size="0.1 0.2 0.3"/></geometry></visual></link>
  <joint name="socket" type="ball"><parent link="support"/><child link="bob"/><origin xyz="0 0 1"/></joint>
</robot>"""


@pytest.fixture(scope="module")
def ball_run(tmp_path_factory):
    model = ud.load(ROBOT)
    q0 = model.neutral()
    q0[:4] = np.array([0.3, -0.2, 0.1, 0.9]) / np.linalg.norm([0.3, -0.2, 0.1, 0.9])
    traj = ud.simulate(model, q0, np.array([1.0, -0.5, 2.0]), 0.3, options=ud.SimulateOptions(dt_out=0.01, passive=False))
    path = tmp_path_factory.mktemp("ball") / "swing.npz"
    traj.save(path)
    return model, traj, path


def test_a_ball_joint_trajectory_plays_and_poses_the_link(ball_run):
    model, traj, path = ball_run
    assert model.q_names == ("socket.qx", "socket.qy", "socket.qz", "socket.qw")
    mo = motion_from_trajectory(model, ud.Trajectory.load(path), str(path))
    assert np.allclose(mo.q, traj.q, rtol=0, atol=1e-12)
    assert np.ptp(mo.q, axis=0).max() > 1e-2                       # the bob turns
    scene = RobotScene(model)
    for k in (0, len(mo) // 2, len(mo) - 1):
        scene.set_q(mo.q[k])
        T_bob = ud.forward_kinematics(model, mo.q[k])["bob"]
        want = T_bob @ np.array([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, -0.5], [0, 0, 0, 1.0]])
        assert np.allclose(scene.visual_T[0], want, atol=1e-12)
        assert np.allclose(T_bob[:3, 3], (0, 0, 1))                  # the socket's centre does not move


def test_a_zero_ball_quaternion_is_refused(ball_run):
    model, traj, path = ball_run
    bad = ud.Trajectory.load(path)
    bad.q[3] = 0.0
    with pytest.raises(ViewerError, match="quaternion of ball joint 'socket'"):
        motion_from_trajectory(model, bad, str(path))
