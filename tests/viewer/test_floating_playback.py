"""Playing a floating-base trajectory: the viewer matches q's columns by the position coordinates'
names (``Model.q_names``: a floating joint's x … qw) and q̇, q̈, τ by the joints', so a trajectory that
``simulate`` writes (CSV or NPZ) plays on its own robot, and refuses a fixed-base robot instead of showing a
quaternion component as a joint angle. In-process: no OpenGL needed."""
import numpy as np
import pytest

import urdf_dyn as ud
from urdf_dyn_viewer.playback import motion_from_trajectory
from urdf_dyn_viewer.backend import ViewerError

#: a body with a swinging arm, both with mass (a floating base needs a non-singular H)
ROBOT = """<robot name="swinger">
  <link name="body"><inertial><mass value="2"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="arm"><inertial><origin xyz="0.3 0 0"/><mass value="1"/>
    <inertia ixx="0.01" iyy="0.02" izz="0.02" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="hinge" type="continuous"><parent link="body"/><child link="arm"/><axis xyz="0 1 0"/></joint>
</robot>"""


@pytest.fixture(scope="module")
def floating_run(tmp_path_factory):
    model = ud.load(ROBOT, floating_base=True)
    q0 = model.q_initial()
    traj = ud.simulate(model, q0, np.r_[0.3, -0.2, 0.5, 1.0, 0.4, -0.7, 2.0], 0.2, options=ud.SimulateOptions(dt_out=0.01, passive=False))
    d = tmp_path_factory.mktemp("fb")
    return model, traj, {ext: traj.save(d / f"fall.{ext}") or d / f"fall.{ext}" for ext in ("csv", "npz")}


@pytest.mark.parametrize("ext", ["csv", "npz"])
def test_a_floating_trajectory_plays_on_its_robot(floating_run, ext):
    model, traj, files = floating_run
    assert model.nq == model.nv + 1                      # the quaternion: one more position coordinate
    back = ud.Trajectory.load(files[ext])
    mo = motion_from_trajectory(model, back, str(files[ext]))
    assert mo.q.shape == (len(traj.t), model.nq)
    assert np.allclose(mo.q, traj.q, rtol=0, atol=1e-9)     # column for column, by name (CSV: printed digits)
    assert np.allclose(mo.qd, traj.qd, rtol=0, atol=1e-6)
    i = model.q_names.index("root_joint.qw")
    assert np.allclose(np.linalg.norm(mo.q[:, i - 3:i + 1], axis=1), 1.0, atol=1e-8)   # a unit quaternion
    assert np.ptp(mo.q[:, i - 3:i + 1], axis=0).max() > 1e-3    # that turns: a wrong column would show it


def test_a_floating_trajectory_is_refused_by_the_fixed_base_robot(floating_run):
    _, _, files = floating_run
    fixed = ud.load(ROBOT)
    with pytest.raises(ViewerError, match="floating-base"):
        motion_from_trajectory(fixed, ud.Trajectory.load(files["csv"]), str(files["csv"]))
