"""Trajectories as ROS 2 bags: written by urdf_dyn (mcap + mcap-ros2-support), read back by the OTHER
library, rosbags (its own MCAP reader and CDR deserialiser), value by value."""
import subprocess
import sys

import numpy as np
import pytest

import urdf_dyn as ud
from _robots import ROOT

rosbags = pytest.importorskip("rosbags", reason="rosbags (the [test] extra) reads the bags back")


def _read_with_rosbags(path):
    from rosbags.highlevel import AnyReader
    from rosbags.typesys import Stores, get_typestore
    out = {}
    with AnyReader([path], default_typestore=get_typestore(Stores.ROS2_HUMBLE)) as reader:
        types = {c.topic: c.msgtype for c in reader.connections}
        for conn, timestamp, raw in reader.messages():
            msg = reader.deserialize(raw, conn.msgtype)
            out.setdefault(conn.topic, []).append((timestamp, msg))
    return types, out


@pytest.fixture(scope="module")
def four_bar_run():
    model = ud.load(ROOT / "robots" / "four_bar.urdf")
    traj = ud.simulate(model, model.q_initial(), None, 0.2, options=ud.SimulateOptions(dt_out=0.02))
    return model, traj


def test_joint_states_and_residuals_read_back_by_rosbags(tmp_path, four_bar_run):
    model, traj = four_bar_run
    af = ud.actuator_forces(model, traj.q, traj.qd, traj.qdd, actuated=["crank_joint"])
    path = ud.write_mcap(tmp_path / "run.mcap", traj, actuator_forces=af)
    types, msgs = _read_with_rosbags(tmp_path / "run.mcap")
    assert types == {"/joint_states": "sensor_msgs/msg/JointState", "/actuator_forces": "sensor_msgs/msg/JointState",
                     "/loop_residuals": "std_msgs/msg/Float64MultiArray"}
    N = len(traj.t)
    assert all(len(msgs[k]) == N for k in types)
    for k, (stamp_ns, m) in enumerate(msgs["/joint_states"]):
        assert stamp_ns == round(traj.t[k] * 1e9)
        assert m.header.stamp.sec + m.header.stamp.nanosec * 1e-9 == pytest.approx(traj.t[k], abs=1e-9)
        assert list(m.name) == list(model.joint_names)
        np.testing.assert_array_equal(m.position, traj.q[k])      # float64 in CDR: bit-exact
        np.testing.assert_array_equal(m.velocity, traj.qd[k])
        np.testing.assert_array_equal(m.effort, traj.tau[k])
    for k, (_, m) in enumerate(msgs["/actuator_forces"]):
        assert list(m.name) == ["crank_joint"] and len(m.position) == 0
        np.testing.assert_array_equal(m.effort, af.u[k])
    for k, (_, m) in enumerate(msgs["/loop_residuals"]):
        assert m.layout.dim[0].label == ",".join(traj.loop_names) and m.layout.dim[0].size == len(traj.loop_names)
        np.testing.assert_array_equal(m.data, traj.residuals[k])
    assert str(path).endswith("run.mcap")


def test_trajectory_save_mcap_round_trip(tmp_path, four_bar_run):
    """Trajectory.save dispatches .mcap; our reader gives back every recorded value."""
    _, traj = four_bar_run
    traj.save(tmp_path / "run.mcap")
    back = ud.Trajectory(**ud.read_mcap(tmp_path / "run.mcap"))
    np.testing.assert_allclose(back.t, traj.t, atol=1e-9)
    for a in ("q", "qd", "tau", "residuals"):
        np.testing.assert_array_equal(getattr(back, a), getattr(traj, a))
    assert back.joint_names == traj.joint_names and back.loop_names == traj.loop_names


def test_tree_robot_has_no_residual_topic(tmp_path):
    model = ud.load(ROOT / "robots" / "puma560.urdf")
    traj = ud.simulate(model, np.zeros(6), None, 0.05, controller=ud.GravityCompensation(model), options=ud.SimulateOptions(dt_out=0.01))
    traj.save(tmp_path / "p.mcap")
    types, msgs = _read_with_rosbags(tmp_path / "p.mcap")
    assert set(types) == {"/joint_states"} and len(msgs["/joint_states"]) == len(traj.t)


def test_bad_bag_is_a_one_line_error(tmp_path):
    bad = tmp_path / "bad.mcap"
    bad.write_bytes(b"not an mcap file")
    with pytest.raises(ud.ModelError, match="bad.mcap"):
        ud.read_mcap(bad)


def test_cli_view_plays_an_mcap(tmp_path, four_bar_run):
    pytest.importorskip("trimesh")
    _, traj = four_bar_run
    traj.save(tmp_path / "run.mcap")
    out = tmp_path / "frame.png"
    r = subprocess.run([sys.executable, "-m", "urdf_dyn.cli", "view", str(ROOT / "robots" / "four_bar.urdf"),
                        "--traj", str(tmp_path / "run.mcap"), "--out", str(out)], capture_output=True, text=True,
                       timeout=300)
    if r.returncode != 0 and "EGL" in r.stderr:
        pytest.skip(f"no headless EGL here: {r.stderr.strip()[:200]}")
    assert r.returncode == 0, r.stderr
    assert out.stat().st_size > 1000


def test_launch_outputs_accept_mcap(tmp_path):
    """A simulate launch file with `outputs: {trajectory: [run.mcap]}` writes the bag."""
    import yaml
    from urdf_dyn.launch import run_scenario
    data = yaml.safe_load((ROOT / "scenarios" / "four_bar.scenario.yaml").read_text())
    data["robot"]["file"] = str(ROOT / "robots" / "four_bar.urdf")
    data["duration"] = 0.1
    data["outputs"] = {"directory": str(tmp_path), "trajectory": ["run.mcap", "run.npz"]}
    f = tmp_path / "fb.scenario.yaml"
    f.write_text(yaml.safe_dump(data))
    traj, written = run_scenario(f, out_dir=tmp_path, progress=False, echo=lambda *a: None)
    types, msgs = _read_with_rosbags(tmp_path / "run.mcap")
    assert set(types) == {"/joint_states", "/loop_residuals"} and len(msgs["/joint_states"]) == len(traj.t)
    np.testing.assert_array_equal(msgs["/joint_states"][-1][1].position, traj.q[-1])
