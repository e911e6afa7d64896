"""Writes the third round of cases into the bad-input corpus: the surfaces added before it (sweep files, the
sizing job's payload/motion/hydraulics keys, floating-base states, MCAP bags, MJCF input and export, SDF and
xacro namespaces, large trajectory files) and the command-line options that name a scheduler or a solref.
Run from anywhere: ``python tests/bad_inputs/make_corpus_v3.py`` (the NPZ of 10⁶ × 300 zeros takes ~2 min
to compress with bzip2, to 3 kB). ``NAME.cli.json`` holds an argv (``{HERE}`` is this folder, ``{OUT}`` the
case's output folder); ``*.sweep.yaml`` runs as ``urdf-dyn sweep``; ``*.mcap`` and ``*.npz`` are played by
``urdf-dyn view`` on the PUMA 560; ``*.xml``, ``*.sdf`` are read by ``urdf-dyn info``. Expected outcomes:
``expected.tsv``."""
import io
import json
import zipfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
CS = "../../robots/crank_slider.urdf"
SIZE = (f"robot: {{file: {CS}}}\njob: size\nmotion:\n  independent: [crank]\n"
        "  waypoints: [{crank: 0.0}, {crank: 0.2}]\n  durations: [0.2]\n")
SWEEP = SIZE.replace("job: size\n", "job: sweep\n") + "payload: {link: rod, mass: 1}\n"
PUMA = "../../robots/puma560.urdf"

FILES = {
    # sweeps: code execution, memory, bounds, types (sweep_job / sweep / sweep_checks)
    "sweep_scheduler_in_file.sweep.yaml":
        SWEEP + "sweep:\n  parameters: {payload.mass: [1, 2]}\n  scheduler: tcp://127.0.0.1:8786\n",
    "sweep_grid_billion.sweep.yaml": SWEEP + "sweep:\n  parameters:\n" + "".join(
        f"    motion.waypoints[1].crank{i}: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n" for i in range(9)),
    "sweep_range_num_trillion.sweep.yaml":
        SWEEP + "sweep:\n  parameters: {payload.mass: {start: 0, stop: 1, num: 1000000000000}}\n",
    "sweep_range_step_trillion.sweep.yaml":
        SWEEP + "sweep:\n  parameters: {payload.mass: {start: 0, stop: 1.0e+6, step: 1.0e-6}}\n",
    "sweep_workers_huge.sweep.yaml": SWEEP + "sweep:\n  parameters: {payload.mass: [1, 2]}\n  workers: 100000\n",
    "sweep_mixed_values.sweep.yaml": SWEEP + "sweep:\n  parameters: {robot.xacro_args.x: [1, huge]}\n",
    "sweep_all_cases_fail.sweep.yaml": SIZE.replace("job: size\n", "job: sweep\n")
        + "sweep:\n  parameters: {motion.csv: [no_a.csv, no_b.csv]}\n  workers: 0\n",
    "sweep_record_not_object.sweep.yaml": SWEEP + "sweep:\n  parameters: {payload.mass: [1, 2]}\n  workers: 0\n",
    "sweep_record_other_case.sweep.yaml": SWEEP + "sweep:\n  parameters: {payload.mass: [1, 2]}\n  workers: 0\n",
    "sweep_via_run_scheduler.scenario.yaml":
        SWEEP + "sweep:\n  parameters: {payload.mass: [1, 2]}\n  scheduler: tcp://127.0.0.1:8786\n",
    # the sizing job's keys that acted silently
    "size_payload_window_reversed.scenario.yaml": SIZE + "payload: {link: rod, mass: 1, from: 0.15, until: 0.05}\n",
    "size_payload_inertia_not_pd.scenario.yaml":
        SIZE + "payload: {link: rod, mass: 1, inertia: [[1, 0, 0], [0, -1, 0], [0, 0, 1]]}\n",
    "size_payload_inertia_triangle.scenario.yaml":
        SIZE + "payload: {link: rod, mass: 1, inertia: [[1, 0, 0], [0, 1, 0], [0, 0, 5]]}\n",
    "size_hydraulics_supply_unknown.scenario.yaml": SIZE + "hydraulics: {relief: 3.5e+7, pump_flow: 0.007, supply: {crankk: 0.001}}\n",
    "size_hydraulics_motor_unknown.scenario.yaml": SIZE + "hydraulics: {relief: 3.5e+7, pump_flow: 0.007, motors: {swing: {displacement: 1.0e-4}}}\n",
    "size_waypoint_dependent_joint.scenario.yaml": SIZE.replace("[{crank: 0.0}", "[{crank: 0.0, slider: 0.3}"),
    # floating base
    "floating_zero_quaternion.scenario.yaml": f"robot: {{file: {PUMA}, floating_base: true}}\njob: simulate\n"
        "duration: 0.01\ninitial_state: {q: {root_joint.qw: 0}}\n",
    # MJCF input
    "mjcf_doctype.xml": '<?xml version="1.0"?>\n<!DOCTYPE mujoco [<!ENTITY x "0.1">]>\n<mujoco><worldbody>'
        '<body name="b"><joint type="hinge"/><geom size="&x;"/></body></worldbody></mujoco>\n',
    "mjcf_capsule_fromto.xml": '<mujoco model="cap"><worldbody><body name="b"><joint name="j" type="hinge"/>'
        '<geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.05"/></body></worldbody></mujoco>\n',
    # namespaces: loads with one located warning
    "sdf_undeclared_drake.sdf": '<sdf version="1.7"><model name="m">\n<link name="base"/>\n<link name="a">'
        '<inertial><mass>1</mass><inertia><ixx>0.01</ixx><iyy>0.01</iyy><izz>0.01</izz></inertia></inertial>'
        '</link>\n<joint name="j" type="revolute"><parent>base</parent><child>a</child><axis><xyz>0 0 1</xyz>'
        '<drake:rotor_inertia>0.1</drake:rotor_inertia></axis></joint>\n</model></sdf>\n',
    "xacro_undeclared_drake.xacro": '<robot name="d" xmlns:xacro="http://www.ros.org/wiki/xacro">\n'
        '<xacro:property name="m" value="1"/>\n<link name="base"/>\n<link name="a"><inertial><mass value="${m}"/>'
        '<inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>\n'
        '<joint name="j" type="revolute"><parent link="base"/><child link="a"/><axis xyz="0 0 1"/>'
        '<limit lower="-1" upper="1" effort="1" velocity="1"/>\n<drake:rotor_inertia value="0.1"/></joint>\n</robot>\n',
    "urdf_visual_nan.urdf": '<robot name="v">\n<link name="base"/>\n<link name="a"><inertial><mass value="1"/>'
        '<inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>\n<visual><origin '
        'xyz="nan 0 0"/><geometry><box size="0.1 0.1 0.1"/></geometry></visual></link>\n<joint name="j" '
        'type="revolute"><parent link="base"/><child link="a"/><axis xyz="0 0 1"/><limit lower="-1" upper="1" '
        'effort="1" velocity="1"/></joint>\n</robot>\n',
}

CLI = {
    "cli_scheduler_port_out_of_range": ["sweep", "{HERE}/sweep_record_not_object.sweep.yaml", "--out-dir", "{OUT}",
                                        "--scheduler", "host:99999"],
    "cli_scheduler_port_word": ["sweep", "{HERE}/sweep_record_not_object.sweep.yaml", "--out-dir", "{OUT}",
                                "--scheduler", "tcp://127.0.0.1:abc"],
    "cli_scheduler_not_dask": ["sweep", "{HERE}/sweep_record_not_object.sweep.yaml", "--out-dir", "{OUT}",
                               "--scheduler", "127.0.0.1:{NOT_DASK_PORT}"],
    "cli_workers_huge": ["sweep", "{HERE}/sweep_record_not_object.sweep.yaml", "--out-dir", "{OUT}",
                         "--workers", "100000"],
    "cli_export_solref_one": ["export", "{HERE}/../../robots/four_bar.urdf", "--mjcf", "{OUT}/x.xml",
                              "--solref", "0.02"],
    "cli_export_solref_nan": ["export", "{HERE}/../../robots/four_bar.urdf", "--mjcf", "{OUT}/x.xml",
                              "--solref", "nan,1"],
    "cli_export_solref_inf": ["export", "{HERE}/../../robots/four_bar.urdf", "--mjcf", "{OUT}/x.xml",
                              "--solref", "inf,1"],
    "cli_export_solref_signs": ["export", "{HERE}/../../robots/four_bar.urdf", "--mjcf", "{OUT}/x.xml",
                                "--solref=1,-1"],
}


def mcap_bags():
    """(name, bytes) of the MCAP cases, written with mcap_ros2's writer and then (for the chunk case) edited."""
    from mcap.data_stream import RecordBuilder
    from mcap.records import Chunk, DataEnd, Footer
    from mcap.stream_reader import StreamReader
    from mcap.writer import CompressionType
    from mcap_ros2.writer import Writer

    from urdf_dyn.io.mcap import JOINT_STATE_DEF
    names = [f"joint{i}" for i in range(1, 7)]

    def bag(msgs, schema=("sensor_msgs/msg/JointState", JOINT_STATE_DEF), compression=CompressionType.NONE):
        buf = io.BytesIO()
        w = Writer(buf, compression=compression)
        js = w.register_msgdef(*schema)
        for k, m in enumerate(msgs):
            w.write_message("/joint_states", js, m, log_time=k, publish_time=k, sequence=k)
        w.finish()
        return buf.getvalue()

    def js(k, pos=None, nm=None):
        return {"header": {"stamp": {"sec": 0, "nanosec": k * 1000}, "frame_id": ""}, "name": nm or names,
                "position": [0.1] * 6 if pos is None else pos, "velocity": [0.0] * 6, "effort": [0.0] * 6}
    yield "mcap_fewer_positions.mcap", bag([js(0), js(1, pos=[0.1] * 3)])
    yield "mcap_no_positions.mcap", bag([js(0, pos=[]), js(1, pos=[])])
    yield "mcap_wrong_schema.mcap", bag([{"data": "hello"}], schema=("std_msgs/msg/String", "string data\n"))
    yield "mcap_other_names.mcap", bag([js(0), js(1, nm=[f"j{i}" for i in range(6)])])
    # a zstd chunk without a content size in its frame, claiming 1 TiB: zstandard allocates the claim
    import zstandard
    z = bag([js(0), js(1)], compression=CompressionType.ZSTD)
    ch = next(r for r in StreamReader(io.BytesIO(z), emit_chunks=True).records if isinstance(r, Chunk))
    data = zstandard.ZstdCompressor(write_content_size=False).compress(zstandard.decompress(ch.data))
    b = RecordBuilder()
    Chunk(compression="zstd", data=data, message_end_time=ch.message_end_time,
          message_start_time=ch.message_start_time, uncompressed_crc=0, uncompressed_size=1 << 40).write(b)
    DataEnd(data_section_crc=0).write(b)
    Footer(summary_start=0, summary_offset_start=0, summary_crc=0).write(b)
    start = z.index(b"\x06", 8)  # the chunk record follows the magic and the header
    yield "mcap_chunk_1tib.mcap", z[:start] + b.end() + z[:8]


def huge_npz(path, nv=300, compression=zipfile.ZIP_BZIP2):
    """An NPZ of t (10⁶,) and q (10⁶, nv) zeros: 2.4 GB once read for nv = 300. With bzip2 (a few kB; numpy
    never writes it) Python's zipfile inflates a whole 4 kB block at once: a decompression bomb. With
    deflate, as ``np.savez_compressed`` writes it (nv = 80: 640 MB read from 620 kB), only the product of
    the dimensions, counted before reading, bounds it."""
    from numpy.lib import format as npformat
    n = 1_000_000
    with zipfile.ZipFile(path, "w", compression=compression, compresslevel=9) as zf:
        for key, shape in (("t", (n,)), ("q", (n, nv))):
            with zf.open(f"{key}.npy", "w", force_zip64=True) as fh:
                npformat.write_array_header_1_0(fh, {"descr": "<f8", "fortran_order": False, "shape": shape})
                left, chunk = int(np.prod(shape)) * 8, bytes(8 << 20)
                while left:
                    fh.write(chunk[:min(left, len(chunk))])
                    left -= min(left, len(chunk))


if __name__ == "__main__":
    import sys
    sys.path.insert(0, str(HERE.parents[1]))
    for name, text in FILES.items():
        (HERE / name).write_text(text)
    for name, argv in CLI.items():
        (HERE / f"{name}.cli.json").write_text(json.dumps(argv) + "\n")
    for name, data in mcap_bags():
        (HERE / name).write_bytes(data)
    if "--npz" in sys.argv:
        huge_npz(HERE / "traj_bzip2_bomb.npz")
        huge_npz(HERE / "traj_product_huge.npz", nv=80, compression=zipfile.ZIP_DEFLATED)
    print(f"{len(FILES) + len(CLI)} cases and the MCAP bags written to {HERE}")
