"""Launch files and the CLI end to end: outputs written, torques right (Pinocchio on the reference
motion), loops reported, errors as one line with exit status 2."""
import csv
import subprocess
import sys

import numpy as np
import pytest
import yaml

import urdf_dyn as ud
from _robots import ROOT
from urdf_dyn.cli.main import main
from urdf_dyn.jobs.simulate_job import SimulateDocument, build_controller
from urdf_dyn.launch import read_scenario, run_scenario, validate
from urdf_dyn.simulation.simulate import Trajectory

PUMA_LAUNCH = ROOT / "scenarios" / "puma560_pick.scenario.yaml"


def test_puma_launch_writes_outputs_and_torques_match_pinocchio(tmp_path):
    pin = pytest.importorskip("pinocchio")
    traj, written = run_scenario(PUMA_LAUNCH, out_dir=tmp_path, progress=False, echo=lambda *a: None)
    for key in ("trajectory.npz", "trajectory.csv", "torques_csv", "plot", "report", "motion_plot"):
        assert key in written
    for f in ("joint_torques.png", "motion.png"):
        assert (tmp_path / f).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with open(tmp_path / "joint_torques.csv") as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == ["t [s]"] + [f"tau[joint{i}] [N m]" for i in range(1, 7)] and len(rows) == len(traj) + 1
    assert "| joint1 |" in (tmp_path / "torque_report.md").read_text()
    back = Trajectory.load(tmp_path / "trajectory.npz")
    assert np.array_equal(back.tau, traj.tau)
    # computed-torque tracking is exact to ~1e-6 rad, so the torques are the inverse dynamics of the reference
    launch = read_scenario(PUMA_LAUNCH)
    validate(launch, SimulateDocument)
    model = ud.load(ROOT / "robots" / "puma560.urdf")
    _, ref = build_controller(launch, model)
    qr, qdr, qddr = ref(traj.t)
    assert np.max(np.abs(traj.q - qr)) < 1e-5
    pm = pin.buildModelFromUrdf(str(ROOT / "robots" / "puma560.urdf"))
    pd = pm.createData()
    tau_pin = np.array([pin.rnea(pm, pd, a, b, c) for a, b, c in zip(qr, qdr, qddr)])
    assert np.max(np.abs(traj.tau - tau_pin)) < 1e-2 * np.max(np.abs(tau_pin))


def _copy_launch(src, tmp_path, **changes):
    data = yaml.safe_load(src.read_text())
    data["robot"]["file"] = str((src.parent / data["robot"]["file"]).resolve())
    data.update(changes)
    f = tmp_path / src.name
    f.write_text(yaml.safe_dump(data))
    return f


def test_closed_loop_launch_reports_mobility_residual_and_energy(tmp_path):
    f = _copy_launch(ROOT / "scenarios" / "four_bar.scenario.yaml", tmp_path, duration=1.0)
    lines = []
    traj, written = run_scenario(f, out_dir=tmp_path / "out", progress=False, echo=lines.append)
    text = "\n".join(map(str, lines))
    assert "n = 3, n^c = 5, rank r = 2, dof n - r = 1" in text
    assert "coupler_rocker_pin" in text and "max |E(t) - E(0)|" in text
    assert traj.residuals.max() < 1e-8
    assert np.max(np.abs(traj.energy - traj.energy[0])) < 1e-6


@pytest.mark.parametrize("bad, message", [
    ({"durattion": 1.0}, "durattion: unknown key"),
    ({"controller": {"type": "pid"}}, "controller.type: unknown value 'pid'"),
    ({"initial_state": {"q": {"nope": 1.0}}}, "unknown joint 'nope'"),
    ({"solver": {"rtol": "tight"}}, "'tight' is not a number"),
])
def test_bad_launch_files_give_one_line_and_status_2(tmp_path, bad, message, capsys):
    f = _copy_launch(PUMA_LAUNCH, tmp_path, **bad)
    assert main(["launch", str(f), "--out-dir", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert message in err and str(f) in err and len(err.strip().splitlines()) == 1


def test_cli_id_fd_info_json_roundtrip(capsys):
    import json
    puma = str(ROOT / "robots" / "puma560.urdf")
    assert main(["id", puma, "--q", "0,-1.2,1.0,0,0.5,0", "--qdd", "joint3=2.0", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["units"][0] == "N m" and len(out["tau"]) == 6
    tau = ",".join(str(x) for x in out["tau"])
    assert main(["fd", puma, "--q", "0,-1.2,1.0,0,0.5,0", "--tau", tau, "--json", "--algorithm", "crba"]) == 0
    qdd = json.loads(capsys.readouterr().out)["qdd"]
    assert np.allclose(qdd, [0, 0, 2.0, 0, 0, 0], atol=1e-9)  # FD(ID(q̈)) = q̈ through the CLI
    assert main(["info", str(ROOT / "robots" / "crank_slider.urdf")]) == 0
    assert "n = 3, n^c = 5, r = 2, dof = 1" in capsys.readouterr().out
    assert main(["id", puma, "--q", "1,2"]) == 2
    assert "expected 6 values" in capsys.readouterr().err


def test_console_script_simulate_writes_trajectory(tmp_path):
    out = tmp_path / "run.csv"
    r = subprocess.run([sys.executable, "-m", "urdf_dyn.cli", "simulate", str(ROOT / "robots" / "puma560.urdf"),
                        "--duration", "0.2", "--controller", "gravity", "--out", str(out)], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    traj_rows = list(csv.reader(out.open()))
    assert len(traj_rows) == 22 and traj_rows[0][0] == "t"
    # gravity compensation from rest: the arm does not move
    q = np.array(traj_rows[-1][1:7], float)
    assert np.max(np.abs(q)) < 1e-9
