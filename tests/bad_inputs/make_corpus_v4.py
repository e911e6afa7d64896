"""Writes the cases of the fourth reliability round into the bad-input corpus: numbers outside their physical
range in the sizing job's design and soil sections (each refused naming its key, before any work), a duplicate
pump priority, a mesh with a NaN vertex (named by the mesh file), a zero quaternion in an SDF pose, in a floating base's ``--q0`` and in a floating-base
trajectory CSV, a URDF attribute with an undeclared ``drake:`` prefix (loads with one located warning), and a
stored sweep record with a word where a metric's number goes (its ``SETUP`` in test_bad_inputs.py). Files a
case reads but that are not cases are in ``data/``. Run from anywhere:
``python tests/bad_inputs/make_corpus_v4.py``. Expected outcomes: ``expected.tsv``."""
import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
CS = "../../robots/crank_slider.urdf"
SIZE = (f"robot: {{file: {CS}}}\njob: size\nmotion:\n  independent: [crank]\n"
        "  waypoints: [{crank: 0.0}, {crank: 0.2}]\n  durations: [0.2]\n")
SOIL = "soil: {{preset: clay, {}ground: {{height: 0.0}}, edge: rod, plate: [-1, 0, 0], width: {}, capacity: 1.0, during: dig}}\n"
SWEEP = SIZE.replace("job: size\n", "job: sweep\n") + "payload: {link: rod, mass: 1}\n"
PUMA = "../../robots/puma560.urdf"
Q = ["root.x", "root.y", "root.z", "root.qx", "root.qy", "root.qz", "root.qw", "j"]
V = ["root.x", "root.y", "root.z", "root.rx", "root.ry", "root.rz", "j"]

FILES = {
    "size_soil_cohesion_huge.scenario.yaml": SIZE + SOIL.format("cohesion: 1.0e+300, ", "1.0"),
    "size_soil_width_huge.scenario.yaml": SIZE + SOIL.format("", "1.0e+300"),
    "size_payload_mass_huge.scenario.yaml": SIZE + "payload: {link: rod, mass: 1.0e+300}\n",
    "size_design_sn_exponent_400.scenario.yaml": SIZE + "design: {fatigue: {m: 400}}\n",
    "size_design_efficiency_tiny.scenario.yaml":
        SIZE + "design: {pumps: {engine_power: 1.0e+5, volumetric_efficiency: 1.0e-300}}\n",
    "size_design_engine_power_tiny.scenario.yaml": SIZE + "design: {pumps: {engine_power: 1.0e-300}}\n",
    "size_design_buckling_threshold_inf.scenario.yaml": SIZE + "design: {buckling: {threshold: .inf}}\n",
    "size_design_pump_priority_twice.scenario.yaml":
        SIZE + "design: {pumps: {engine_power: 1.0e+5, priority: [crank, crank]}}\n",
    "sdf_pose_zero_quaternion.sdf": '<sdf version="1.9"><model name="m">\n<link name="base"/>\n<link name="a">'
        '<pose rotation_format="quat_xyzw">0 0 0.1 0 0 0 0</pose>\n<inertial><mass>1</mass><inertia><ixx>0.01</ixx>'
        '<iyy>0.01</iyy><izz>0.01</izz></inertia></inertial></link>\n<joint name="j" type="revolute"><parent>base'
        '</parent><child>a</child><axis><xyz>0 0 1</xyz></axis></joint>\n</model></sdf>\n',
    "urdf_undeclared_drake_attribute.urdf": '<robot name="d">\n<link name="base"/>\n<link name="a" drake:x="1">'
        '<inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>'
        '</link>\n<joint name="j" type="revolute"><parent link="base"/><child link="a"/><axis xyz="0 0 1"/>'
        '<limit lower="-1" upper="1" effort="1" velocity="1"/></joint>\n</robot>\n',
    "data/floating_free.xml": '<mujoco model="fb"><worldbody><body name="b"><freejoint name="root"/>'
        '<geom type="box" size="0.1 0.1 0.1" mass="1"/>\n<body name="c" pos="0 0 0.3"><joint name="j" '
        'type="hinge"/><geom type="box" size="0.05 0.05 0.05" mass="1"/></body></body></worldbody></mujoco>\n',
    "data/floating_traj_zero_quaternion.csv": ",".join(
        ["t"] + [f"q[{n}]" for n in Q] + [f"{k}[{n}]" for k in ("qd", "qdd", "tau") for n in V] + ["energy"]) + "\n"
        + "".join(",".join([f"{0.1 * i:g}"] + ["0"] * (len(Q) + 3 * len(V) + 1)) + "\n" for i in range(3)),
    "data/nan_vertex.stl": "solid t\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nvertex nan 1 0\n"
        "endloop\nendfacet\nendsolid t\n",
    "data/nan_vertex_mesh.urdf": '<robot name="m">\n<link name="base"/>\n<link name="a"><inertial><mass value="1"/>'
        '<inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>\n<visual><geometry>'
        '<mesh filename="nan_vertex.stl"/></geometry></visual></link>\n<joint name="j" type="revolute"><parent '
        'link="base"/><child link="a"/><axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/>'
        '</joint>\n</robot>\n',
    "sweep_record_metric_word.sweep.yaml": SWEEP + "sweep:\n  parameters: {payload.mass: [1, 2]}\n  workers: 0\n",
}

CLI = {
    "cli_q0_zero_quaternion": ["simulate", f"{{HERE}}/{PUMA}", "--floating-base", "--q0", "root_joint.qw=0"],
    "cli_view_nan_mesh_vertex": ["view", "{HERE}/data/nan_vertex_mesh.urdf", "--out", "{OUT}/x.png"],
    "cli_view_floating_traj_zero_quaternion": ["view", "{HERE}/data/floating_free.xml", "--traj",
                                               "{HERE}/data/floating_traj_zero_quaternion.csv", "--out", "{OUT}/x.png"],
}

if __name__ == "__main__":
    (HERE / "data").mkdir(exist_ok=True)   # files the cases read, not cases themselves
    for name, text in FILES.items():
        (HERE / name).write_text(text)
    for name, argv in CLI.items():
        (HERE / f"{name}.cli.json").write_text(json.dumps(argv) + "\n")
    print(f"{len(FILES) + len(CLI)} cases written to {HERE}")
