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

__all__ = ["write_mcap", "read_mcap", "JOINT_STATE_DEF", "FLOAT64_MULTI_ARRAY_DEF", "MAX_MCAP_BYTES", "MAX_MESSAGES",
           "MAX_VALUES", "MAX_CHUNK_BYTES"]

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


MAX_MCAP_BYTES = 1 << 30
"""Largest bag ``read_mcap`` reads, and the most its chunks may hold once decompressed (1 GiB)."""
MAX_MESSAGES = 1_000_000
"""Most ``/joint_states`` messages (samples) ``read_mcap`` reads (the bound of ``Trajectory.load``)."""
MAX_VALUES = 1 << 24
"""Most values of one array (samples × joints) ``read_mcap`` builds: 16.7 M doubles, 134 MB."""
MAX_CHUNK_BYTES = 64 << 20
"""Largest uncompressed chunk (one message is decoded from within one; writers use ~1 MiB chunks)."""
_SCHEMAS = {"/joint_states": "sensor_msgs/msg/JointState", "/loop_residuals": "std_msgs/msg/Float64MultiArray"}


def _check_chunks(fh, path):
    """Walk the bag's records without decompressing them; refuse a chunk whose claimed uncompressed size
    (what the decompressor allocates) passes ``MAX_MCAP_BYTES``, alone or with the chunks before it."""
    from mcap.records import Chunk
    from mcap.stream_reader import StreamReader
    total = 0
    for rec in StreamReader(fh, skip_magic=False, emit_chunks=True).records:
        if not isinstance(rec, Chunk):
            continue
        if rec.compression not in ("", "zstd", "lz4"):
            raise ModelError(f"a chunk uses compression {rec.compression!r} (MCAP knows '', zstd, lz4)", file=str(path))
        claim = len(rec.data) if rec.compression == "" else rec.uncompressed_size
        total += claim
        if claim > MAX_CHUNK_BYTES:
            raise ModelError(f"a chunk claims {claim} bytes uncompressed, more than {MAX_CHUNK_BYTES} "
                             "(urdf_dyn.io.mcap.MAX_CHUNK_BYTES)", file=str(path))
        if total > MAX_MCAP_BYTES:
            raise ModelError(f"a chunk claims {claim} bytes uncompressed; the bag's chunks would hold more than "
                             f"{MAX_MCAP_BYTES} bytes (urdf_dyn.io.mcap.MAX_MCAP_BYTES)", file=str(path))
    fh.seek(0)


def read_mcap(path):
    """Read ``/joint_states`` (and ``/loop_residuals``) of an MCAP bag: the fields of a ``Trajectory``
    (``ud.Trajectory(**ud.read_mcap(path))``; the input layer does not build application objects).

    Accepts bags written by ``write_mcap`` or by ROS 2 (``ros2 bag record /joint_states`` with the MCAP
    storage): the joint order is the first message's; qdd and energy are not recorded and come back as
    zeros. Returns a dict t (N,), q, qd, qdd, tau (N, nv), energy (N,), joint_names, meta, residuals (N, L) or
    None, loop_names. Bounded before anything is allocated: the file and its decompressed chunks at most
    ``MAX_MCAP_BYTES``, at most ``MAX_MESSAGES`` samples of ``MAX_VALUES`` values.

    Raises ModelError naming the file (and the message: its index and topic) if it is not an MCAP file,
    holds no ``sensor_msgs/msg/JointState`` on /joint_states, a topic carries another schema, a message has
    no positions, or its positions, velocities or efforts do not match its joint names.
    """
    import os

    McapError = require("mcap.exceptions", "reading a ROS 2 bag (MCAP)").McapError
    make_reader = require("mcap.reader", "reading a ROS 2 bag (MCAP)").make_reader
    DecoderFactory = require("mcap_ros2.decoder", "reading a ROS 2 bag (MCAP)").DecoderFactory

    t, q, qd, tau, res, names, loop_names = [], [], [], [], [], None, ()
    where = ""

    def bad(msg):
        return ModelError(f"{where}: {msg}" if where else msg, file=str(path))
    try:
        if os.path.getsize(path) > MAX_MCAP_BYTES:
            raise bad(f"{os.path.getsize(path)} bytes, more than {MAX_MCAP_BYTES} (MAX_MCAP_BYTES)")
        with open(path, "rb") as fh:
            _check_chunks(fh, path)
            reader = make_reader(fh, decoder_factories=[DecoderFactory()])
            counts = {}
            for schema, channel, message, msg in reader.iter_decoded_messages(topics=list(_SCHEMAS)):
                k = counts[channel.topic] = counts.get(channel.topic, -1) + 1
                where = f"message {k} on {channel.topic}"
                if schema is None or schema.name != _SCHEMAS[channel.topic]:
                    raise bad(f"schema {getattr(schema, 'name', None)!r}, expected {_SCHEMAS[channel.topic]}")
                if k >= MAX_MESSAGES:
                    raise bad(f"more than {MAX_MESSAGES} messages (MAX_MESSAGES)")
                if channel.topic == "/joint_states":
                    if names is None:
                        names = tuple(msg.name)
                        if not names:
                            raise bad("no joint names")
                    if (k + 1) * len(names) > MAX_VALUES:
                        raise bad(f"{k + 1} samples of {len(names)} joints: more than {MAX_VALUES} values")
                    if tuple(msg.name) != names:
                        if sorted(msg.name) != sorted(names):
                            raise bad(f"names joints {list(msg.name)}, the first message {list(names)}")
                    order = [list(msg.name).index(n) for n in names]
                    t.append(msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9)
                    for dst, src, key in ((q, msg.position, "position"), (qd, msg.velocity, "velocity"),
                                          (tau, msg.effort, "effort")):
                        if not len(src) and key != "position":
                            dst.append(np.zeros(len(names)))
                        elif len(src) != len(names):
                            raise bad(f"{len(src)} {key} values for {len(names)} joint names")
                        else:
                            dst.append(np.asarray(src, float)[order])
                else:
                    if len(msg.data) * (k + 1) > MAX_VALUES:
                        raise bad(f"more than {MAX_VALUES} residual values")
                    res.append(np.asarray(msg.data, float))
                    if msg.layout.dim:
                        loop_names = tuple(s for s in msg.layout.dim[0].label.split(",") if s)
    except ModelError:
        raise
    except (OSError, ValueError, KeyError, IndexError, AttributeError, TypeError, EOFError, McapError) as e:
        raise bad(f"cannot read the MCAP bag: {type(e).__name__}: {e}") from None
    if names is None:
        raise ModelError("no sensor_msgs/msg/JointState messages on /joint_states", file=str(path))
    return _trajectory(path, t, q, qd, tau, res, names, loop_names)


def _trajectory(path, t, q, qd, tau, res, names, loop_names):
    q = np.asarray(q, float).reshape(len(t), len(names))
    has_res = bool(res) and len(res) == len(q) and len({len(r) for r in res}) == 1
    return dict(t=np.asarray(t, float), q=q, qd=np.asarray(qd, float).reshape(q.shape), qdd=np.zeros_like(q),
                tau=np.asarray(tau, float).reshape(q.shape), energy=np.zeros(len(q)), joint_names=names,
                meta={"loaded_from": str(path)}, residuals=np.asarray(res, float) if has_res else None,
                loop_names=loop_names if has_res else ())
