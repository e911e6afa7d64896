"""The job's GIF drawn by a forked process (jobs.outputs.AnimationTask): the GIF it writes is the one drawn in
the caller, a process never started or killed leaves no file and its failure is said, and a process that has
drawn with OpenGL draws in place; and the loop gaps the overlay labels skipped where every loop is closed
(scene.RobotScene.gap_labels) against closure.loop_gaps. In CI (env CI set) nothing here may skip."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import urdf_dyn as ud
from viewerkit import EXCAVATOR, FOUR_BAR, env as _env, gl  # noqa: F401
from _robots import ROOT

CHILD = textwrap.dedent("""
    import os, signal, sys, time
    import numpy as np
    import yaml
    import urdf_dyn as ud
    from urdf_dyn.jobs.outputs import AnimationTask
    from urdf_dyn.jobs.sizing_schema import SizeDocument
    from urdf_dyn.launch.document import Scenario, validate
    out = {out!r}
    data = yaml.safe_load(open({scenario!r}).read())
    data["robot"]["file"] = {robot!r}
    data["outputs"] = {{"directory": out, "animation": "a.gif", "animation_fps": 4, "animation_size": "160x120"}}
    launch = Scenario(__import__("pathlib").Path(out) / "x.yaml", data)
    validate(launch, SizeDocument, job="size")
    m = ud.load({four_bar!r})
    mo = __import__("urdf_dyn_viewer.playback", fromlist=["demo_motion"]).demo_motion(m, duration=1.0, dt=0.1)
    tr = ud.Trajectory(mo.t, mo.q, mo.qd, mo.qdd, np.zeros_like(mo.q), np.zeros(len(mo.t)), m.joint_names)
    os.makedirs(out, exist_ok=True)
    lines, written = [], {{}}
    task = AnimationTask(launch, m, __import__("pathlib").Path(out), lines.append)
    assert task._proc is not None, "not forked"
    case = {case!r}
    if case == "never":
        t0 = time.perf_counter()
        task.close()
        print("closed", round(time.perf_counter() - t0, 2), task._proc.exitcode)
    elif case == "killed":
        time.sleep(0.5)
        os.kill(task._proc.pid, signal.SIGKILL)
        task.start(tr)
        task.finish(written)
    else:
        task.start(tr)
        task.finish(written)
    print("RESULT", written, lines, sorted(os.listdir(out)), "pyglet.gl" in sys.modules)
""")


def _run(tmp_path, case):
    code = CHILD.format(out=str(tmp_path / "out"), scenario=str(ROOT / "scenarios" / "excavator_dig.scenario.yaml"),
                        robot=str(EXCAVATOR), four_bar=str(FOUR_BAR), case=case)
    r = subprocess.run([sys.executable, "-c", code], env=_env(), capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout


def test_the_forked_process_writes_the_gif_the_caller_would_draw(tmp_path, gl):
    """The forked process writes a.gif under its final name only (no temporary file left), the caller never
    loads OpenGL, and the frames are those that render_trajectory draws in this process for the same
    motion."""
    from urdf_dyn_viewer.export import render_trajectory
    from urdf_dyn_viewer.playback import demo_motion
    from viewerkit import gif_frames
    out = _run(tmp_path, "done")
    gif = tmp_path / "out" / "a.gif"
    assert f"RESULT {{'animation': '{gif}'}} [] ['a.gif'] False" in out, out
    m = ud.load(FOUR_BAR)
    mo = demo_motion(m, duration=1.0, dt=0.1)
    tr = ud.Trajectory(mo.t, mo.q, mo.qd, mo.qdd, np.zeros_like(mo.q), np.zeros(len(mo.t)), m.joint_names)
    here = render_trajectory(m, tr, tmp_path / "here.gif", fps=4, size=(160, 120))
    a, b = gif_frames(gif), gif_frames(here)
    assert len(a) == len(b) == 5 and all(np.array_equal(x, y) for x, y in zip(a, b))


def test_a_process_never_started_ends_at_once_and_writes_nothing(tmp_path):
    """A job that fails before its run folder is written closes the task: the process (maybe still
    importing) is ended at once and nothing is written."""
    out = _run(tmp_path, "never")
    closed = [ln for ln in out.splitlines() if ln.startswith("closed")][0].split()
    assert float(closed[1]) < 2.0, out
    assert "RESULT {} [] [] False" in out, out


def test_a_killed_drawing_process_is_reported_and_leaves_no_file(tmp_path):
    """The process dies (SIGKILL) before it answers: finish() says so in one warning naming the output and
    the signal; no GIF, no temporary file."""
    out = _run(tmp_path, "killed")
    assert "RESULT {} ['WARNING: outputs.animation a.gif not written: its drawing process ended without an " \
           "answer (killed by signal 9); the other outputs are written'] [] False" in out, out


def test_a_process_that_has_drawn_with_opengl_draws_in_place(tmp_path, gl):
    """Here pyglet's GL is loaded (the ``gl`` fixture): the task is not forked, start() draws the GIF."""
    import yaml
    from urdf_dyn.jobs.outputs import AnimationTask
    from urdf_dyn.jobs.sizing_schema import SizeDocument
    from urdf_dyn.launch.document import Scenario, validate
    from urdf_dyn_viewer.playback import demo_motion
    assert "pyglet.gl" in sys.modules
    data = yaml.safe_load((ROOT / "scenarios" / "excavator_dig.scenario.yaml").read_text())
    data["robot"]["file"] = str(EXCAVATOR)
    data["outputs"] = {"directory": str(tmp_path), "animation": "a.gif", "animation_fps": 4, "animation_size": "160x120"}
    launch = Scenario(tmp_path / "x.yaml", data)
    validate(launch, SizeDocument, job="size")
    m = ud.load(FOUR_BAR)
    mo = demo_motion(m, duration=0.5, dt=0.1)
    tr = ud.Trajectory(mo.t, mo.q, mo.qd, mo.qdd, np.zeros_like(mo.q), np.zeros(len(mo.t)), m.joint_names)
    task, written = AnimationTask(launch, m, tmp_path, print), {}
    assert task._proc is None
    task.start(tr)
    task.finish(written)
    assert written == {"animation": str(tmp_path / "a.gif")} and (tmp_path / "a.gif").is_file()


@pytest.mark.parametrize("robot", [FOUR_BAR, EXCAVATOR, ROOT / "robots" / "four_bar_spherical.urdf"])
def test_gap_labels_skip_only_closed_loops(robot):
    """Poses near and far from closure (the initial pose moved by 1e-5 to 0.5 rad): the labels equal those
    made from closure.loop_gaps directly at tolerances away from every gap; each gap's size is at most its
    loop's residual (the reason loops whose residual is under half the tolerance are skipped)."""
    from urdf_dyn.constraints.closure import loop_gaps
    from urdf_dyn_viewer.scene import RobotScene
    m = ud.load(robot)
    scene = RobotScene(m, visuals=[])
    rng = np.random.default_rng(7)
    checked = 0
    for scale in (1e-5, 1e-3, 1e-1, 0.5):
        for _ in range(6):
            q = m.q_initial() + scale * rng.normal(size=m.nq)
            scene.set_q(q, graph=False)
            res = scene.loop_residuals()
            gaps = loop_gaps(m, q)
            for g in gaps:
                assert g.size <= res[g.name] * (1 + 1e-9) + 1e-15
            for tol in (1e-6, 1e-4, 1e-2, 0.3):
                if any(abs(g.size - tol) < 0.05 * tol for g in gaps):
                    continue                      # never at a boundary where round-off decides
                expect = {g.name for g in gaps if g.size > tol}
                assert set(scene.gap_labels(tol)) == expect
                checked += bool(expect) + (len(expect) < len(gaps))
    assert checked > 10
