"""Writes the launch-file and trajectory cases of the bad-input corpus (the xacro cases are hand-written
files beside this script). Run from anywhere: ``python tests/bad_inputs/make_corpus.py``. The expected
one-line error of every case is in ``expected.tsv``; ``tests/test_bad_inputs.py`` runs them all."""
import io
import zipfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
PUMA = "../../robots/puma560.urdf"
EXC = "../../robots/crank_slider.urdf"
SIM = f"robot: {{file: {PUMA}}}\njob: simulate\n"
SIZE = (f"robot: {{file: {EXC}}}\njob: size\nmotion:\n  independent: [crank]\n"
        "  waypoints: [{crank: 0.0}, {crank: 0.2}]\n  durations: [0.2]\n")

SOIL = ("soil: {{{extra}, ground: {{height: 0.0}}, edge: rod, plate: [-1, 0, 0], width: 1.0, capacity: 1.0, "
        "during: dig}}\n")

LAUNCH = {
    "billion_laughs": "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{c}: &{c} [{', '.join(['*' + p] * 10)}]\n" for p, c in zip("abcdefgh", "bcdefghi")) + f"robot: {{file: {PUMA}}}\n",
    "python_tag": f"robot: {{file: {PUMA}}}\nduration: !!python/object/apply:os.system ['touch pwned']\n",
    "robot_number": "robot: 5\n",
    "robot_file_number": "robot: {file: 5}\n",
    "package_dirs_number": f"robot: {{file: {PUMA}, package_dirs: 7}}\n",
    "xacro_args_list": f"robot: {{file: {PUMA}, xacro_args: [a, b]}}\n",
    "gravity_two_values": f"robot: {{file: {PUMA}, gravity: [0, -9.81]}}\n",
    "gravity_word": f"robot: {{file: {PUMA}, gravity: down}}\n",
    "robot_missing_file": "robot: {file: no_such_robot.urdf}\n",
    "robot_section_missing": "job: simulate\nduration: 1.0\n",
    "top_level_list": "- robot\n- job\n",
    "top_level_scalar": "just a sentence\n",
    "yaml_syntax": f"robot: {{file: {PUMA}\nduration: [1, 2\n",
    "yaml_tab_indent": f"robot:\n\tfile: {PUMA}\n",
    "deep_nesting": "robot: " + "[" * 5000 + "]" * 5000 + "\n",
    "unknown_top_key": SIM + "durration: 2.0\n",
    "unknown_solver_key": SIM + "solver: {rtoll: 1.0e-6}\n",
    "unknown_job": f"robot: {{file: {PUMA}}}\njob: dance\n",
    "rtol_negative": SIM + "solver: {rtol: -1}\n",
    "atol_zero": SIM + "solver: {atol: 0}\n",
    "rtol_word": SIM + "solver: {rtol: tight}\n",
    "dt_out_tiny": SIM + "solver: {dt_out: 1.0e-12}\n",
    "dt_out_negative": SIM + "solver: {dt_out: -0.01}\n",
    "duration_huge": SIM + "duration: 1.0e+12\n",
    "duration_negative": SIM + "duration: -2\n",
    "duration_inf": SIM + "duration: .inf\n",
    "duration_nan": SIM + "duration: .nan\n",
    "max_step_zero": SIM + "solver: {max_step: 0}\n",
    "integrator_unknown": SIM + "solver: {integrator: Euler}\n",
    "loop_solver_unknown": SIM + "solver: {loop_solver: magic}\n",
    "residual_tol_negative": SIM + "solver: {residual_tol: -0.001}\n",
    "t_stab_negative": SIM + "solver: {t_stab: -0.1}\n",
    "passive_word": SIM + "solver: {passive: maybe}\n",
    "controller_unknown": SIM + "controller: {type: pid}\n",
    "controller_kp_word": SIM + "controller: {type: gravity_compensation, kp: strong}\n",
    "controller_tau_unknown_joint": SIM + "controller: {type: constant, tau: {jiont2: 1.0}}\n",
    "computed_torque_no_trajectory": SIM + "controller: {type: computed_torque}\n",
    "waypoints_one": SIM + "controller:\n  type: computed_torque\n  trajectory: {waypoints: [{joint1: 0}], durations: []}\n",
    "durations_mismatch": SIM + "controller:\n  type: computed_torque\n  trajectory: {waypoints: [{joint1: 0}, {joint1: 1}], durations: [1, 2]}\n",
    "durations_zero": SIM + "controller:\n  type: computed_torque\n  trajectory: {waypoints: [{joint1: 0}, {joint1: 1}], durations: [0]}\n",
    "waypoint_word": SIM + "controller:\n  type: computed_torque\n  trajectory: {waypoints: [{joint1: 0}, {joint1: far}], durations: [1]}\n",
    "initial_q_unknown_joint": SIM + "initial_state: {q: {joint_2: 0.5}}\n",
    "initial_q_wrong_length": SIM + "initial_state: {q: [0, 0, 0]}\n",
    "initial_qd_word": SIM + "initial_state: {qd: fast}\n",
    "outputs_trajectory_suffix": SIM + "duration: 0.05\noutputs: {trajectory: run.txt}\n",
    "animation_size_bad": SIM + "outputs: {animation: a.gif, animation_size: big}\n",
    "animation_fps_zero": SIM + "outputs: {animation: a.gif, animation_fps: 0}\n",
    "size_dt_zero": SIZE + "  dt: 0\n",
    "size_design_engine_power_zero": SIZE + "design: {pumps: {engine_power: 0}}\n",
    "size_design_efficiency_over_one": SIZE + "design: {pumps: {engine_power: 1.0e+5, volumetric_efficiency: 1.2}}\n",
    "size_design_friction_negative": SIZE + "design: {friction: -0.1}\n",
    "size_design_buckling_threshold_below_one": SIZE + "design: {buckling: {threshold: 0.9}}\n",
    "size_design_sn_exponent_zero": SIZE + "design: {fatigue: {m: 0}}\n",
    "size_dt_negative": SIZE + "  dt: -0.01\n",
    "size_dt_tiny": SIZE + "  dt: 1.0e-10\n",
    "size_no_actuators": SIZE + "actuators: {actuated: []}\n",
    "size_unknown_actuator": SIZE + "actuators: {actuated: [crank_joint]}\n",
    "size_cylinders_word": SIZE + "actuators: {cylinders: two}\n",
    "size_cylinder_bore_negative": SIZE + "actuators: {cylinders: {crank: {bore: -0.1, rod: 0.05}}}\n",
    "size_cylinder_unknown": SIZE + "actuators: {cylinders: {arm_cyl: {bore: 0.1, rod: 0.05}}}\n",
    "size_weights_word": SIZE + "actuators: {weights: heavy}\n",
    "size_bounds_word": SIZE + "actuators: {bounds: wide}\n",
    "size_payload_inertia_word": SIZE + "payload: {link: rod, mass: 1, inertia: big}\n",
    "size_payload_mass_negative": SIZE + "payload: {link: rod, mass: -1}\n",
    "size_payload_unknown_link": SIZE + "payload: {link: rood, mass: 1}\n",
    "size_independent_unknown": SIZE.replace("[crank]", "[crank_joint]"),
    "size_motion_csv_missing": f"robot: {{file: {EXC}}}\njob: size\nmotion:\n  independent: [crank]\n  csv: no_such.csv\n",
    "size_no_waypoints": f"robot: {{file: {EXC}}}\njob: size\nmotion: {{independent: [crank]}}\n",
    "size_soil_preset_unknown": SIZE + SOIL.format(extra="preset: mud"),
    "size_soil_density_negative": SIZE + SOIL.format(extra="preset: clay, density: -1400"),
    "size_soil_swell_negative": SIZE + SOIL.format(extra="preset: clay, swell: -1.3"),
    "size_motor_torque_and_displacement": SIZE + "hydraulics: {relief: 3.5e+7, pump_flow: 1.0e-3, motors: {crank: {displacement: 1.0e-3, torque: 50}}}\n",
}


def npz_bytes(**arrays):
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def good_arrays(n=5, nv=6):
    names = np.array([f"joint{i + 1}" for i in range(nv)])
    z = np.zeros((n, nv))
    return dict(t=np.linspace(0, 0.4, n), q=z, qd=z, qdd=z, tau=z, energy=np.zeros(n), joint_names=names)


def lying_header():
    raw = npz_bytes(**good_arrays())
    src = zipfile.ZipFile(io.BytesIO(raw))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename == "q.npy":
                hdr_end = data.index(b"\n") + 1
                header = data[:hdr_end].replace(b"(5, 6)", b"(9999999999, 6)")
                pad = (64 - len(header) % 64) % 64
                header = header[:-1] + b" " * pad + b"\n"
                header = header[:8] + (len(header) - 10).to_bytes(2, "little") + header[10:]
                data = header + data[hdr_end:]
            dst.writestr(info.filename, data)
    return out.getvalue()


def csv_text(rows, header=None):
    header = header or (["t"] + [f"{k}[joint{i}]" for k in ("q", "qd", "qdd", "tau") for i in range(1, 7)]
                        + ["energy"])
    return ",".join(header) + "\n" + "".join(",".join(map(str, r)) + "\n" for r in rows)


ROW = [0.0] * 26


def trajectories():
    a = good_arrays()
    yield "traj_truncated.npz", npz_bytes(**a)[:300]
    yield "traj_lying_header.npz", lying_header()
    yield "traj_text_as_npz.npz", b"this is not a zip file\n"
    yield "traj_missing_arrays.npz", npz_bytes(t=a["t"], q=a["q"])
    yield "traj_wrong_shape.npz", npz_bytes(**{**a, "q": np.zeros((5, 3))})
    yield "traj_nan_time.npz", npz_bytes(**{**a, "t": np.array([0, np.nan, 0.2, 0.3, 0.4])})
    yield "traj_object_array.npz", _object_npz(a)
    yield "traj_other_robot.npz", npz_bytes(**{**a, "joint_names": np.array([f"j{i}" for i in range(6)])})
    yield "traj_empty.npz", npz_bytes(**good_arrays(n=0))
    yield "traj_decreasing_time.csv", csv_text([[0.2] + ROW[1:], [0.1] + ROW[1:]]).encode()
    yield "traj_word.csv", csv_text([[0.0] + ROW[1:-1] + ["heavy"]]).encode()
    yield "traj_bad_header.csv", csv_text([[0.0, 1.0]], header=["time", "x"]).encode()
    yield "traj_ragged.csv", csv_text([[0.0] + ROW[1:], [0.1, 0.2]]).encode()
    yield "traj_empty.csv", b""
    yield "traj_binary.csv", bytes(range(256)) * 4
    yield "traj_joint_order.csv", csv_text([[0.0] + ROW[1:]], header=(
        ["t"] + [f"q[joint{i}]" for i in range(1, 7)] + [f"qd[joint{i}]" for i in range(6, 0, -1)]
        + [f"{k}[joint{i}]" for k in ("qdd", "tau") for i in range(1, 7)] + ["energy"])).encode()


def _object_npz(a):
    """An NPZ whose q.npy holds a pickled object array (np.save refuses to write one without pickles)."""
    buf = io.BytesIO()
    np.save(buf, np.array([[None] * 6] * 5, dtype=object), allow_pickle=True)
    raw = npz_bytes(**{k: v for k, v in a.items() if k != "q"})
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(raw)) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            dst.writestr(info.filename, src.read(info))
        dst.writestr("q.npy", buf.getvalue())
    return out.getvalue()


if __name__ == "__main__":
    for name, text in LAUNCH.items():
        (HERE / f"{name}.scenario.yaml").write_text(text)
    for name, data in trajectories():
        (HERE / name).write_bytes(data)
    print(f"{len(LAUNCH)} launch files and the trajectories written to {HERE}")
