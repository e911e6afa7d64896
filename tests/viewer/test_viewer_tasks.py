"""The job's GIF and recording with one warm-up (jobs.outputs.viewer_tasks): the recording's process is forked
by the GIF's once that has built the model's scene; each writes what the caller itself would write; a GIF
process killed before it forked the recording's leaves the job to write the recording itself; a job that
fails before its run folder is written ends both at once. In CI (env CI set) nothing here may skip."""
from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np

import urdf_dyn as ud
from viewerkit import FOUR_BAR, env as _env, gl, require  # noqa: F401
from _robots import ROOT

require("viser")

CHILD = textwrap.dedent("""
    import os, signal, sys, time
    from pathlib import Path
    import numpy as np
    import yaml
    import urdf_dyn as ud
    from urdf_dyn.jobs.outputs import viewer_tasks
    from urdf_dyn.jobs.sizing_schema import SizeDocument
    from urdf_dyn.launch.document import Scenario, validate
    out = Path({out!r})
    data = yaml.safe_load(open({scenario!r}).read())
    data["robot"]["file"] = {robot!r}
    data["outputs"] = {{"directory": str(out), "animation": "a.gif", "recording": "r.html", "animation_fps": 4,
                        "animation_size": "160x120"}}
    launch = Scenario(out / "x.yaml", data)
    validate(launch, SizeDocument, job="size")
    m = ud.load({robot!r})
    mo = __import__("urdf_dyn_viewer.playback", fromlist=["demo_motion"]).demo_motion(m, duration=1.0, dt=0.1)
    tr = ud.Trajectory(mo.t, mo.q, mo.qd, mo.qdd, np.zeros_like(mo.q), np.zeros(len(mo.t)), m.joint_names)
    out.mkdir(parents=True, exist_ok=True)
    tr.save(out / "motion.npz")
    import urdf_dyn.jobs.outputs as outputs
    _lost = outputs.RecordingTask._lost
    outputs.RecordingTask._lost = lambda self: (print("LOST"), _lost(self))   # the job writes it itself
    lines, written = [], {{}}
    rec, anim = viewer_tasks(launch, m, out, lines.append)
    print("FORKED", anim._proc is not None, rec._proc is None, rec.hosted)
    case = {case!r}
    if case == "never":
        t0 = time.perf_counter()
        rec.close()
        anim.close()
        print("closed", round(time.perf_counter() - t0, 2))
        time.sleep(1.0)
    else:
        if case == "killed":
            os.kill(anim._proc.pid, signal.SIGKILL)
        rec.start()
        anim.start(tr)
        anim.finish(written)
        rec.finish(written)
    print("RESULT", sorted(written.items()), lines, sorted(os.listdir(out)), "pyglet.gl" in sys.modules)
""")


def _run(tmp_path, case):
    code = CHILD.format(out=str(tmp_path / "out"), scenario=str(ROOT / "scenarios" / "excavator_dig.scenario.yaml"),
                        robot=str(FOUR_BAR), case=case)
    r = subprocess.run([sys.executable, "-c", code], env=_env(), capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "FORKED True True False" in r.stdout, r.stdout      # one process forked here, the other by it
    return r.stdout


def _launch(out):
    import yaml
    from urdf_dyn.jobs.sizing_schema import SizeDocument
    from urdf_dyn.launch.document import Scenario, validate
    data = yaml.safe_load((ROOT / "scenarios" / "excavator_dig.scenario.yaml").read_text())
    data["robot"]["file"] = str(FOUR_BAR)
    data["outputs"] = {"directory": str(out), "recording": "r.html", "animation_fps": 4}
    launch = Scenario(out / "x.yaml", data)
    validate(launch, SizeDocument, job="size")
    return launch


def _recording_here(out):
    """The recording of the folder ``out`` written in this process (after the child's is moved away)."""
    from urdf_dyn.jobs.outputs import write_recording
    theirs = (out / "r.html").read_bytes()
    (out / "r.html").unlink()
    here, lines = {}, []
    write_recording(_launch(out), ud.load(FOUR_BAR), out, here, lines.append)
    assert not lines
    return theirs, Path(here["recording"]).read_bytes()


def test_one_warm_up_writes_the_gif_and_the_recording_the_caller_would(tmp_path, gl):
    """Both files under their final names only; the recording byte-identical to the one written in this
    process, the GIF's frames those that render_trajectory draws here; the caller never loads OpenGL."""
    from urdf_dyn_viewer.export import render_trajectory
    from urdf_dyn_viewer.playback import demo_motion
    from viewerkit import gif_frames
    out = _run(tmp_path, "done")
    d = tmp_path / "out"
    assert f"RESULT [('animation', '{d / 'a.gif'}'), ('recording', '{d / 'r.html'}')] [] " \
           "['a.gif', 'motion.npz', 'r.html'] False" in out, out
    assert "LOST" not in out                                   # written by the forked process
    theirs, ours = _recording_here(d)
    assert theirs == ours
    m = ud.load(FOUR_BAR)
    mo = demo_motion(m, duration=1.0, dt=0.1)
    tr = ud.Trajectory(mo.t, mo.q, mo.qd, mo.qdd, np.zeros_like(mo.q), np.zeros(len(mo.t)), m.joint_names)
    here = render_trajectory(m, tr, tmp_path / "here.gif", fps=4, size=(160, 120))
    a, b = gif_frames(d / "a.gif"), gif_frames(here)
    assert len(a) == len(b) == 5 and all(np.array_equal(x, y) for x, y in zip(a, b))


def test_a_gif_process_killed_at_once_leaves_the_recording_to_the_job(tmp_path):
    """SIGKILL before the GIF's process has forked the recording's: the GIF's failure is one warning, and the
    recording is written by the job itself, the same bytes."""
    out = _run(tmp_path, "killed")
    d = tmp_path / "out"
    assert f"RESULT [('recording', '{d / 'r.html'}')] ['WARNING: outputs.animation a.gif not written: its " \
           "drawing process ended without an answer (killed by signal 9); the other outputs are written'] " \
           "['motion.npz', 'r.html']" in out, out
    assert "LOST" in out
    theirs, ours = _recording_here(d)
    assert theirs == ours


def test_a_job_that_fails_first_ends_both_at_once_and_nothing_is_written(tmp_path):
    """close() before start(): returns at once; a second later neither process has written anything."""
    out = _run(tmp_path, "never")
    closed = [ln for ln in out.splitlines() if ln.startswith("closed")][0].split()
    assert float(closed[1]) < 2.0, out
    assert "RESULT [] [] ['motion.npz'] False" in out, out
