"""Trajectories as ROS 2 bags: MCAP files with ROS 2 (CDR) messages, written and read without a ROS install
by the maintained ``mcap`` + ``mcap-ros2-support`` libraries. Foxglove, PlotJuggler, ``ros2 bag`` (with the
MCAP storage plugin) and ``rosbags`` open them.

Topics (one message per trajectory sample, stamped with the sample's time t [s] → ``header.stamp`` and the
MCAP log time in ns):

- ``/joint_states`` — ``sensor_msgs/msg/JointState``: name = the tree joints, position [rad | m],
  velocity [rad/s | m/s], effort = joint forces τ [N m | N];
- ``/actuator_forces`` — ``sensor_msgs/msg/JointState`` with name = the actuators and only ``effort``
  [N m | N] (written when actuator forces are given);
- ``/loop_residuals`` — ``std_msgs/msg/Float64MultiArray``: ‖δ_k‖ per loop joint [m, rad], its one
  dimension labelled with the loop names separated by commas (written for closed-loop trajectories).
"""
from __future__ import annotations

import numpy as np

from urdf_dyn.extras import require
from urdf_dyn.errors import ModelError
from urdf_dyn.io.files import atomic_path

__all__ = ["write_mcap", "read_mcap", "JOINT_STATE_DEF", "FLOAT64_MULTI_ARRAY_DEF"]

_SEP = "=" * 80
#: ROS 2 message definition of sensor_msgs/msg/JointState with its dependencies (the ros2msg encoding).
JOINT_STATE_DEF = f"""std_msgs/Header header
string[] name
float64[] position
float64[] velocity
float64[] effort
{_SEP}
MSG: std_msgs/Header
builtin_interfaces/Time stamp
string frame_id
{_SEP}
MSG: builtin_interfaces/Time
int32 sec
uint32 nanosec
"""
#: ROS 2 message definition of std_msgs/msg/Float64MultiArray with its dependencies.
FLOAT64_MULTI_ARRAY_DEF = f"""MultiArrayLayout layout
float64[] data
{_SEP}
MSG: std_msgs/MultiArrayLayout
MultiArrayDimension[] dim
uint32 data_offset
{_SEP}
MSG: std_msgs/MultiArrayDimension
string label
uint32 size
uint32 stride
"""


def _stamp(t):
    ns = int(round(float(t) * 1e9))
    return ns, {"sec": ns // 1_000_000_000, "nanosec": ns % 1_000_000_000}


def write_mcap(path, traj, actuator_forces=None, frame_id=""):
    """Write a trajectory as an MCAP ROS 2 bag (topics in the module docstring), atomically.

    Args:
        path: output ``.mcap`` file.
        traj: a ``Trajectory`` (t (N,) [s], q, qd, tau (N, nv), joint_names; residuals (N, L) and loop_names
            if it has loops).
        actuator_forces: optional actuator forces: an ``ActuatorForces`` (``names``, ``u`` (N, m)) or a
            mapping {actuator name: (N,) array} [N m | N].
        frame_id: ``header.frame_id`` of every message.

    Returns:
        str(path).

    Raises:
        ValueError if the arrays' lengths disagree with ``traj.t``.
    """
    Writer = require("mcap_ros2.writer", "writing a ROS 2 bag (MCAP)").Writer

    t = np.asarray(traj.t, float)
    N = len(t)
    names = [str(n) for n in traj.joint_names]
    q, qd, tau = (np.asarray(a, float).reshape(N, len(names)) for a in (traj.q, traj.qd, traj.tau))
    act_names, U = [], None
    if actuator_forces is not None:
        if hasattr(actuator_forces, "names"):
            act_names, U = list(actuator_forces.names), np.asarray(actuator_forces.u, float)
        else:
            act_names = list(actuator_forces)
            U = np.column_stack([np.asarray(actuator_forces[n], float) for n in act_names])
        U = U.reshape(-1, len(act_names))
        if len(U) != N:
            raise ValueError(f"actuator forces have {len(U)} samples, the trajectory {N}")
    res = None if traj.residuals is None else np.asarray(traj.residuals, float).reshape(N, -1)
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as fh:
            w = Writer(fh)
            js = w.register_msgdef("sensor_msgs/msg/JointState", JOINT_STATE_DEF)
            arr = w.register_msgdef("std_msgs/msg/Float64MultiArray", FLOAT64_MULTI_ARRAY_DEF) if res is not None \
                else None
            label = ",".join(str(n) for n in traj.loop_names)
            for k in range(N):
                ns, stamp = _stamp(t[k])
                header = {"stamp": stamp, "frame_id": frame_id}
                w.write_message("/joint_states", js, {"header": header, "name": names, "position": q[k].tolist(),
                                "velocity": qd[k].tolist(), "effort": tau[k].tolist()}, log_time=ns,
                                publish_time=ns, sequence=k)
                if U is not None:
                    w.write_message("/actuator_forces", js, {"header": header, "name": act_names, "position": [],
                                    "velocity": [], "effort": U[k].tolist()}, log_time=ns, publish_time=ns,
                                    sequence=k)
                if arr is not None:
                    L = res.shape[1]
                    w.write_message("/loop_residuals", arr, {"layout": {"dim": [{"label": label, "size": L,
                                    "stride": L}], "data_offset": 0}, "data": res[k].tolist()}, log_time=ns,
                                    publish_time=ns, sequence=k)
            w.finish()
    return str(path)


def read_mcap(path):
    """Read ``/joint_states`` (and ``/loop_residuals``) of an MCAP bag: the fields of a ``Trajectory``
    (``ud.Trajectory(**ud.read_mcap(path))``; the input layer does not build application objects).

    Accepts bags written by ``write_mcap`` or by ROS 2 (``ros2 bag record /joint_states`` with the MCAP
    storage): the joint order is the first message's; qdd and energy are not recorded and come back as
    zeros. Returns a dict t (N,), q, qd, qdd, tau (N, nv), energy (N,), joint_names, meta, residuals (N, L) or
    None, loop_names. Raises ModelError naming the file if it holds no ``sensor_msgs/msg/JointState`` on
    /joint_states, or is not an MCAP file.
    """
    McapError = require("mcap.exceptions", "reading a ROS 2 bag (MCAP)").McapError
    make_reader = require("mcap.reader", "reading a ROS 2 bag (MCAP)").make_reader
    DecoderFactory = require("mcap_ros2.decoder", "reading a ROS 2 bag (MCAP)").DecoderFactory

    t, q, qd, tau, res, names, loop_names = [], [], [], [], [], None, ()
    try:
        with open(path, "rb") as fh:
            reader = make_reader(fh, decoder_factories=[DecoderFactory()])
            for schema, channel, message, msg in reader.iter_decoded_messages(
                    topics=["/joint_states", "/loop_residuals"]):
                if channel.topic == "/joint_states":
                    if names is None:
                        names = tuple(msg.name)
                    order = [list(msg.name).index(n) for n in names]
                    t.append(msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9)
                    for dst, src in ((q, msg.position), (qd, msg.velocity), (tau, msg.effort)):
                        src = list(src)
                        dst.append([src[i] for i in order] if src else [0.0] * len(names))
                else:
                    res.append(list(msg.data))
                    if msg.layout.dim:
                        loop_names = tuple(s for s in msg.layout.dim[0].label.split(",") if s)
    except (OSError, ValueError, KeyError, McapError) as e:
        raise ModelError(f"cannot read the MCAP bag: {e}", file=str(path)) from None
    if names is None:
        raise ModelError("no sensor_msgs/msg/JointState messages on /joint_states", file=str(path))
    return _trajectory(path, t, q, qd, tau, res, names, loop_names)


def _trajectory(path, t, q, qd, tau, res, names, loop_names):
    q = np.asarray(q, float)
    has_res = bool(res) and len(res) == len(q)
    return dict(t=np.asarray(t, float), q=q, qd=np.asarray(qd, float), qdd=np.zeros_like(q),
                tau=np.asarray(tau, float), energy=np.zeros(len(q)), joint_names=names,
                meta={"loaded_from": str(path)}, residuals=np.asarray(res, float) if has_res else None,
                loop_names=loop_names if has_res else ())
