"""The job's recording process made before the job computes (jobs.outputs.RecordingTask), and the browser
viewer's URL printed before the model and the run are loaded (viewer.cli.start_web)."""
from __future__ import annotations

import signal
import socket
import time

import numpy as np
import pytest

import urdf_dyn as ud
from _robots import ROOT
from webrun import IN_CI

viser = pytest.importorskip("viser", reason="pip install viser") if not IN_CI else __import__("viser")

FOUR_BAR = ROOT / "robots" / "four_bar.urdf"


def _launch(tmp_path):
    import yaml
    from urdf_dyn.jobs.sizing_schema import SizeDocument
    from urdf_dyn.launch.document import Scenario, validate
    data = yaml.safe_load((ROOT / "scenarios" / "excavator_dig.scenario.yaml").read_text())
    data["robot"]["file"] = str(ROOT / "robots" / "excavator.urdf")
    data["outputs"] = {"directory": str(tmp_path / "out"), "recording": "rec.html", "animation_fps": 2}
    launch = Scenario(tmp_path / "x.yaml", data)
    validate(launch, SizeDocument, job="size")
    return launch


def test_a_recording_process_never_started_waits_and_ends_with_the_job(tmp_path):
    """Made before the job computes, the forked process waits for start(); a job that fails before its run
    folder is written ends it with close() at once (it has written nothing; it may still be importing),
    and nothing is written."""
    from urdf_dyn.jobs.outputs import RecordingTask
    lines = []
    task = RecordingTask(_launch(tmp_path), ud.load(FOUR_BAR), tmp_path / "out", lines.append)
    assert task._proc is not None                        # forked (pytest's main thread, Linux)
    time.sleep(1.0)
    assert task._proc.is_alive() and not (tmp_path / "out" / "rec.html").exists()
    t0 = time.perf_counter()
    task.close()
    assert not task._proc.is_alive() and task._proc.exitcode in (0, -signal.SIGTERM)
    assert time.perf_counter() - t0 < 2 and not (tmp_path / "out").exists() and lines == []
    task.close()                                         # twice: nothing more to end


def test_the_url_is_printed_first_and_a_bad_run_folder_still_ends_in_one_line(tmp_path, capsys):
    """``view RUN --web``: the URL line comes before the run is read; a run folder whose soil.csv has no force
    columns then ends the command with status 2 and one line naming the file, and the server is stopped
    (its port can be bound again)."""
    from urdf_dyn.cli.main import main
    m = ud.load(FOUR_BAR)
    ud.Trajectory(np.array([0.0, 1.0]), np.zeros((2, 3)), np.zeros((2, 3)), np.zeros((2, 3)), np.zeros((2, 3)),
                  np.zeros(2), m.joint_names).save(tmp_path / "motion.npz")
    (tmp_path / "soil.csv").write_text("t [s],depth [m],volume [m3]\n0,0,0\n1,0,0\n")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    assert main(["view", str(FOUR_BAR), str(tmp_path), "--web", "--port", str(port)]) == 2
    out, err = capsys.readouterr()
    assert f"four_bar.urdf, run {tmp_path}: open http://localhost:{port}" in out, out
    assert "soil.csv: no three force columns" in err and err.count("\n") == 1, err
    with socket.socket() as s:
        s.bind(("127.0.0.1", port))                      # free again: the server was stopped


def test_a_robot_file_that_is_not_there_gets_its_error_and_no_url(tmp_path, capsys):
    """No URL is printed for a robot path that is no file: the loader's one-line error, status 2."""
    from urdf_dyn.cli.main import main
    missing = tmp_path / "nothing.urdf"
    assert main(["view", str(missing), "--web", "--port", "8080"]) == 2
    out, err = capsys.readouterr()
    assert "http://" not in out and f"{missing}: file not found" in err and err.count("\n") == 1, (out, err)
