"""The viewer (issue 5) draws for real: offscreen through EGL in this process, and in a real window under
Xvfb in a subprocess. Pixels are checked: something drawn, frames differ between poses, an opened loop
shows in red next to its segment, arrows in their colours. In CI (env CI set) nothing here may skip: the
GL packages come from .ci/run.

pyglet picks its backend once per process, so this module renders headless only; the window and the
"core never imports the viewer" checks run in subprocesses."""
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

import urdf_dyn as ud
from _robots import ROOT

IN_CI = bool(os.environ.get("CI"))


def _require(mod):
    if IN_CI:
        return __import__(mod)
    return pytest.importorskip(mod, reason=f"{mod} not installed (pip install -e '.[viewer]')")


for _m in ("trimesh", "pyglet", "imageio"):
    _require(_m)

# The viewer installs as the package urdf_dyn_viewer (pyproject package-dir: viewer/). Without an install
# (PYTHONPATH=.), make it importable here and in subprocesses through a symlink in a temporary folder.
_SHIM = None
try:
    import urdf_dyn_viewer  # noqa: F401
except ImportError:
    _SHIM = tempfile.mkdtemp(prefix="urdf_dyn_viewer_shim_")
    os.symlink(ROOT / "viewer", Path(_SHIM) / "urdf_dyn_viewer")
    sys.path.insert(0, _SHIM)


def _env(**extra):
    env = dict(os.environ)
    paths = [str(ROOT)] + ([_SHIM] if _SHIM else []) + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join(paths)
    env.update(extra)
    return env


from urdf_dyn_viewer.backend import ViewerError  # noqa: E402
from urdf_dyn_viewer.playback import Motion, Playback, demo_motion, motion_from_pose  # noqa: E402
from urdf_dyn_viewer.scene import RobotScene, ViewerWarning  # noqa: E402

PUMA = ROOT / "robots" / "puma560.urdf"
EXCAVATOR = ROOT / "robots" / "excavator.urdf"
FOUR_BAR = ROOT / "robots" / "four_bar.urdf"
BG = np.array([0.93, 0.94, 0.96]) * 255


@pytest.fixture(scope="module")
def gl():
    """Headless pyglet for this process; fails (does not skip) when EGL is missing."""
    from urdf_dyn_viewer.backend import select
    assert select(True), "pyglet was imported with a display backend before this test module"
    return True


def _viewer(model, q_or_motion, **kw):
    from urdf_dyn_viewer.export import offscreen_viewer
    motion = q_or_motion if isinstance(q_or_motion, Motion) else motion_from_pose(model, q_or_motion)
    return offscreen_viewer(RobotScene(model), Playback(motion), **kw)


def _drawn(img):
    """Fraction of pixels that differ from the background."""
    return float(np.mean(np.abs(img.astype(float) - BG).sum(axis=-1) > 30))


def _red(img):
    r, g, b = (img[..., k].astype(int) for k in range(3))
    return (r > 200) & (g < 40) & (b < 40)


# -- no GL -------------------------------------------------------------------------------------------------
def test_core_never_imports_the_viewer():
    code = ("import sys, importlib, pkgutil, urdf_dyn\n"
            "for m in pkgutil.walk_packages(urdf_dyn.__path__, 'urdf_dyn.'):\n"
            "    if not m.name.endswith('__main__'): importlib.import_module(m.name)\n"
            "[getattr(urdf_dyn, n) for n in urdf_dyn.__all__]\n"
            "bad = [m for m in sys.modules if m.split('.')[0] in ('urdf_dyn_viewer', 'pyglet') or m.startswith('trimesh.viewer')]\n"
            "assert not bad, bad\n")
    r = subprocess.run([sys.executable, "-c", code], env=_env(), capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr


def test_playback_clock():
    m = Motion(np.linspace(0.0, 2.0, 21), np.linspace(0.0, 2.0, 21)[:, None])
    pb = Playback(m, speed=2.0, repeat=True)
    assert pb.advance(0.25) == pytest.approx(0.5) and pb.q[0] == pytest.approx(0.5)
    assert pb.advance(1.0) == pytest.approx(0.5)  # 0.5 + 2.0 wraps over the 2 s motion
    pb.repeat = False
    pb.advance(5.0)
    assert pb.time == 2.0 and pb.paused  # stops at the end
    pb.toggle_pause()
    assert pb.time == 0.0 and not pb.paused  # playing again restarts
    pb.seek(1.0)
    assert pb.step(+1) == pytest.approx(1.1) and pb.paused
    assert pb.step(-3) == pytest.approx(0.8)
    pb.paused = True
    assert pb.advance(1.0) == pytest.approx(0.8)  # paused: time stands still
    assert pb.seek_fraction(0.5) == pytest.approx(1.0)
    assert pb.scale_speed(0.5) == 1.0
    assert m.q_at(0.05)[0] == pytest.approx(0.05) and m.q_at(-1)[0] == 0.0 and m.q_at(9)[0] == 2.0


def test_frame_times():
    from urdf_dyn_viewer.export import frame_times
    t = frame_times(0.0, 1.0, fps=10)
    assert len(t) == 11 and t[-1] == pytest.approx(1.0)
    t = frame_times(0.0, 1.0, fps=10, speed=2.0)
    assert len(t) == 6 and t[-1] == pytest.approx(1.0)
    assert len(frame_times(0.0, 0.95, fps=10)) == 11  # the last sample is always shown
    with pytest.raises(ViewerError):
        frame_times(0, 1, fps=0)


def test_demo_motion_keeps_the_loops_closed():
    from urdf_dyn.constraints.loops import loop_residuals
    m = ud.load(FOUR_BAR)
    mo = demo_motion(m, duration=1.0, dt=0.1)
    assert mo.q.shape == (11, 3) and np.ptp(mo.q[:, 0]) > 0.3
    for q in mo.q:
        assert max(np.abs(v).max() for v in loop_residuals(m, q).values()) < 1e-6
    p = demo_motion(ud.load(PUMA), duration=1.0, dt=0.1)
    assert np.all(np.ptp(p.q, axis=0) > 0.3) and np.allclose(p.q[0], p.q[-1])


def test_trajectory_columns_are_matched_by_name():
    from urdf_dyn.simulation.simulate import Trajectory
    from urdf_dyn_viewer.playback import motion_from_trajectory
    m = ud.load(FOUR_BAR)
    q = np.arange(6.0).reshape(2, 3)
    names = ("rocker_joint", "crank_joint", "coupler_joint")
    tr = Trajectory(np.array([0.0, 1.0]), q, q, q, q, np.zeros(2), names)
    mo = motion_from_trajectory(m, tr)
    assert np.array_equal(mo.q[:, 0], q[:, 1]) and np.array_equal(mo.q[:, 2], q[:, 0])
    with pytest.raises(ViewerError, match="rocker_joint"):
        motion_from_trajectory(m, Trajectory(np.array([0.0, 1.0]), q[:, :2], q[:, :2], q[:, :2], q[:, :2],
                                             np.zeros(2), names[1:]))


MESH_URDF = """<robot name="meshy">
  <material name="red"><color rgba="1 0 0 1"/></material>
  <link name="base">
    <visual><origin xyz="0 0.5 0"/><geometry><mesh filename="{ok}" scale="2 2 2"/></geometry><material name="red"/></visual>
    <visual><origin xyz="0 -0.3 0"/><geometry><mesh filename="package://meshpkg/part.stl"/></geometry></visual>
    <visual><geometry><mesh filename="does/not/exist.stl"/></geometry></visual>
    <visual><geometry><mesh filename="package://no_such_package/x.dae"/></geometry></visual>
  </link>
  <link name="arm"><visual><origin xyz="0 0 0.2"/><geometry><cylinder radius="0.02" length="0.4"/></geometry></visual></link>
  <joint name="j" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 1 0"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
</robot>"""


def test_meshes_load_and_missing_ones_become_placeholders(tmp_path, gl):
    import trimesh
    pkg = tmp_path / "meshpkg"
    pkg.mkdir()
    trimesh.creation.box(extents=(0.1, 0.1, 0.1)).export(pkg / "part.stl")
    trimesh.creation.box(extents=(0.1, 0.2, 0.3)).export(tmp_path / "ok.stl")
    f = tmp_path / "meshy.urdf"
    f.write_text(MESH_URDF.format(ok="ok.stl"))
    m = ud.load(f, package_dirs={"meshpkg": str(pkg)})
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        rs = RobotScene(m)
    msgs = [str(x.message) for x in w if issubclass(x.category, ViewerWarning)]
    assert len(msgs) == 1 and "does/not/exist.stl" in msgs[0] and "no_such_package" in msgs[0]  # one warning
    ok, pk, miss, nopkg, arm = rs.visuals
    assert not ok.placeholder and np.allclose(ok.mesh.extents, (0.2, 0.4, 0.6))  # scale applied
    assert tuple(ok.mesh.visual.face_colors[0]) == (255, 0, 0, 255)
    assert not pk.placeholder and miss.placeholder and nopkg.placeholder and not arm.placeholder
    v = _viewer(m, [0.5])
    try:
        img = v.render()
    finally:
        v.close()
    magenta = (img[..., 0] > 200) & (img[..., 1] < 60) & (img[..., 2] > 200)
    assert magenta.sum() > 20  # the placeholders are drawn


# -- offscreen rendering -------------------------------------------------------------------------------------
@pytest.mark.parametrize("robot, q2", [(PUMA, {"joint1": 0.8, "joint2": 0.6, "joint3": -1.0}),
                                       (EXCAVATOR, {"swing": 1.2})])
def test_render_robot_to_png_and_poses_differ(robot, q2, tmp_path, gl):
    import imageio.v2 as imageio
    from urdf_dyn_viewer.export import render_motion
    m = ud.load(robot)
    qa = m.q_initial()
    qb = qa.copy()
    for j, v in q2.items():
        qb[m.joint_index(j)] = v
    if m.loops:
        from urdf_dyn.constraints.assembly import assemble
        qb = assemble(m, qb, hold=list(q2))
    imgs = []
    for k, q in enumerate((qa, qb)):
        path = render_motion(m, motion_from_pose(m, q), tmp_path / f"{m.name}_{k}.png", size=(320, 240))
        img = imageio.imread(path)
        assert img.shape == (240, 320, 3)
        imgs.append(img.astype(float))
        assert _drawn(img) > 0.10  # robot, ground grid and text cover a good part of the image
        dark = img.sum(axis=-1) < 300
        assert dark[60:, :].mean() > 0.01  # shaded robot below the text panel, not just text
    assert np.mean(np.abs(imgs[0] - imgs[1]).sum(axis=-1) > 30) > 0.01  # frames differ between poses


def test_open_loop_is_red_near_its_segment_and_toggles_off(gl):
    import pyglet
    m = ud.load(FOUR_BAR)
    q_closed = m.q_initial()
    q_open = q_closed.copy()
    q_open[0] = 1.3  # the crank moved without the rest: the loop is open by ~0.17 m
    v = _viewer(m, q_closed)
    try:
        closed = v.render()
        assert _red(closed).sum() < 5
        assert any("closed" in t for t, _ in v.hud_lines())
        v.playback.motion = motion_from_pose(m, q_open)
        v.robot.set_q(q_open)
        img = v.render()
        red = _red(img)
        assert red.sum() > 150
        (lp, Fp, Fs), = v.robot.loop_frames()
        a, b = v.project(Fp[:3, 3]), v.project(Fs[:3, 3])
        ys, xs = np.nonzero(red)
        xs_gl = xs
        ys_gl = img.shape[0] - 1 - ys  # image rows top-down; projection y bottom-up
        # most red pixels lie within a few pixels of the projected segment Fp-Fs
        p, d = np.array(a), np.array(b) - np.array(a)
        s = np.clip(((xs_gl - p[0]) * d[0] + (ys_gl - p[1]) * d[1]) / (d @ d), 0, 1)
        dist = np.hypot(xs_gl - (p[0] + s * d[0]), ys_gl - (p[1] + s * d[1]))
        assert np.mean(dist < 8) > 0.6 and np.linalg.norm(d) > 50
        assert any("OPEN" in t and lp.name in t for t, _ in v.hud_lines())
        v.on_key_press(pyglet.window.key.L, 0)  # loop overlay off
        assert _red(v.render()).sum() < 5
    finally:
        v.close()


def test_keys_drive_the_player(gl):
    import pyglet
    k = pyglet.window.key
    m = ud.load(PUMA)
    mo = Motion(np.linspace(0, 1, 11), np.outer(np.linspace(0, 1, 11), np.ones(6)))
    v = _viewer(m, mo)
    try:
        pb = v.playback
        first = v.render()
        v.on_key_press(k.SPACE, 0)
        assert pb.paused
        v.on_key_press(k.RIGHT, 0)
        assert pb.time == pytest.approx(0.1) and np.allclose(v.robot.q, 0.1)
        v.on_key_press(k.END, 0)
        assert pb.time == 1.0
        v.on_key_press(k._5, 0)
        assert pb.time == pytest.approx(0.5)
        v.on_key_press(k.BRACKETLEFT, 0)
        assert pb.time == 0.0
        v.on_key_press(k.PLUS, 0)
        assert pb.speed == 2.0
        v.on_key_press(k.R, 0)
        assert not pb.repeat
        v.on_key_press(k._9, 0)
        assert np.mean(np.abs(v.render().astype(float) - first).sum(-1) > 30) > 0.01
        v.on_key_press(k.J, 0)
        assert not v.flags["hud"]
        v.on_key_press(k.T, 0)
        v.on_key_press(k.P, 0)
        assert v.flags["actuators"] and v.flags["pins"]
    finally:
        v.close()


def test_force_arrows_are_drawn(gl):
    from urdf_dyn_viewer.forces import ForceSource
    m = ud.load(FOUR_BAR)
    mo = motion_from_pose(m, m.q_initial())
    v = _viewer(m, mo, forces=ForceSource(m, mo))
    try:
        base = v.render()
        v.flags["pins"] = True
        img = v.render()
        cyan = (img[..., 0] < 60) & (img[..., 1] > 120) & (img[..., 2] > 170)
        assert cyan.sum() > 30 and (((base[..., 0] < 60) & (base[..., 1] > 120) & (base[..., 2] > 170)).sum() < 5)
        v.flags["actuators"] = True
        img = v.render()
        orange = (img[..., 0] > 220) & (img[..., 1] > 80) & (img[..., 1] < 150) & (img[..., 2] < 60)
        assert orange.sum() > 30
        assert any("u = " in t for t, _ in v.hud_lines())
    finally:
        v.close()


def test_pin_forces_match_closed_loop_dynamics():
    """With applied τ, the pin loads solve Kᵀλ = τ_ID − τ: the same joint forces as the closed-loop FD's λ."""
    from urdf_dyn.constraints.forward import constrained_forward_dynamics
    from urdf_dyn.constraints.loops import loop_constraints
    from urdf_dyn_viewer.forces import ForceSource
    m = ud.load(FOUR_BAR)
    q, qd = m.q_initial(), np.zeros(3)
    tau = np.array([2.0, 0.0, 0.0])
    fd = constrained_forward_dynamics(m, q, qd, tau, passive=False)
    mo = Motion(np.zeros(1), q[None], qd[None], fd.qdd[None], tau[None])
    src = ForceSource(m, mo)
    acts, pins = src.values(0)
    assert src.from_tau and acts["crank_joint"] == 2.0
    lp = m.loops[0]
    lam = np.asarray(lp.T).T @ pins[lp.name]
    K, _ = loop_constraints(m, q, qd)
    assert np.allclose(K.T @ lam, K.T @ fd.lam, atol=1e-8 * (1 + np.abs(K.T @ fd.lam).max()))
    arrows = src.arrows(0, RobotScene(m).set_q(q).body_T)
    pin = [a for a in arrows if a.kind == "pin"][0]
    assert pin.value == pytest.approx(np.linalg.norm(fd.loop_forces[lp.name][3:]), rel=1e-6)


# -- export and CLI ------------------------------------------------------------------------------------------
def _gif_frames(path):
    import imageio.v2 as imageio
    return [f[..., :3].astype(float) for f in imageio.mimread(path)]


def test_cli_view_writes_a_moving_excavator_gif(tmp_path, gl):
    from urdf_dyn.cli.main import main
    out = tmp_path / "excavator.gif"
    assert main(["view", str(EXCAVATOR), "--out", str(out), "--fps", "5", "--size", "320x240"]) == 0
    frames = _gif_frames(out)
    assert len(frames) == 21 and frames[0].shape == (240, 320, 3)  # the 4 s demo motion at 5 fps
    assert np.mean(np.abs(frames[0] - frames[10]).sum(-1) > 30) > 0.02
    assert _red(frames[10].astype(np.uint8)).sum() < 5  # the loops stay closed: no red


def test_cli_view_trajectory_to_mp4_and_pose_to_png(tmp_path, gl):
    import imageio.v2 as imageio
    from urdf_dyn.cli.main import main
    from urdf_dyn.simulation.simulate import simulate
    m = ud.load(PUMA)
    tr = simulate(m, np.array([0, 0.3, -0.5, 0, 0.4, 0]), duration=0.5, dt_out=0.05, progress=False)
    tr.save(tmp_path / "fall.npz")
    out = tmp_path / "fall.mp4"
    assert main(["view", str(PUMA), "--traj", str(tmp_path / "fall.npz"), "--out", str(out), "--fps", "20",
                 "--show", "joint2,joint3"]) == 0
    frames = [f for f in imageio.get_reader(out)]
    assert len(frames) == 11 and frames[0].shape == (480, 640, 3)
    assert np.mean(np.abs(frames[0].astype(float) - frames[-1]).sum(-1) > 30) > 0.005
    png = tmp_path / "pose.png"
    assert main(["view", str(FOUR_BAR), "--q", "crank_joint=1.3", "--out", str(png)]) == 0
    assert _red(imageio.imread(png)).sum() > 100


@pytest.mark.parametrize("argv, msg", [
    (["--size", "big"], "WIDTHxHEIGHT"),
    (["--out", "x.avi"], "unknown format"),
    (["--show", "nope"], "unknown name"),
    (["--traj", "missing.npz"], "not found"),
    (["--q", "crank_joint=abc"], "not a number"),
    (["--q", "1,2"], "2 values for 3 joints"),
])
def test_cli_view_errors_are_one_line(argv, msg, capsys, tmp_path, gl):
    from urdf_dyn.cli.main import main
    assert main(["view", str(FOUR_BAR), "--out", str(tmp_path / "x.png")] + argv) == 2
    err = capsys.readouterr().err
    assert msg in err and err.count("\n") == 1


def test_without_display_view_renders_offscreen_to_a_file(tmp_path, monkeypatch, capsys, gl):
    from urdf_dyn.cli.main import main
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.chdir(tmp_path)
    assert main(["view", str(FOUR_BAR), "--q", "0.9,-0.5,1.2"]) == 0
    assert (tmp_path / "four_bar_view.png").is_file()
    assert "no display" in capsys.readouterr().out


def test_launch_outputs_animation(tmp_path, gl):
    import yaml
    from urdf_dyn.launch import run_launch
    data = yaml.safe_load((ROOT / "scenarios" / "four_bar.scenario.yaml").read_text())
    data["robot"]["file"] = str(FOUR_BAR)
    data["duration"] = 0.5
    data["outputs"] = {"directory": str(tmp_path / "out"), "animation": "swing.gif", "animation_fps": 10,
                       "animation_size": "200x150"}
    f = tmp_path / "fb.scenario.yaml"
    f.write_text(yaml.safe_dump(data))
    _, written = run_launch(f, progress=False, echo=lambda *a: None)
    frames = _gif_frames(written["animation"])
    assert len(frames) == 6 and frames[0].shape == (150, 200, 3)
    assert np.mean(np.abs(frames[0] - frames[-1]).sum(-1) > 30) > 0.005


# -- a real window ---------------------------------------------------------------------------------------------
def _start_xvfb():
    exe = shutil.which("Xvfb")
    if exe is None:
        if IN_CI:
            pytest.fail("Xvfb is not installed (.ci/run installs xvfb)")
        pytest.skip("Xvfb is not installed")
    r, w = os.pipe()
    proc = subprocess.Popen([exe, "-displayfd", str(w), "-screen", "0", "1024x768x24", "-nolisten", "tcp"],
                            pass_fds=(w,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(w)
    with os.fdopen(r) as fh:
        num = fh.readline().strip()  # Xvfb writes the display number it chose once it is ready
    if not num:
        proc.kill()
        pytest.fail("Xvfb did not start")
    return proc, f":{num}"


def test_window_under_xvfb_plays_and_screenshots(tmp_path):
    proc, display = _start_xvfb()
    shot = tmp_path / "window.png"
    code = textwrap.dedent(f"""
        import urdf_dyn, numpy as np
        from urdf_dyn_viewer.cli import _window
        from urdf_dyn_viewer.playback import demo_motion
        m = urdf_dyn.load({str(FOUR_BAR)!r})
        mo = demo_motion(m, duration=1.0, dt=0.05)
        _window(m, mo, (400, 300), 30.0, 1.0, [], True, max_frames=12, screenshot={str(shot)!r})
        import pyglet
        assert not pyglet.options['headless']
        print('ok')
    """)
    try:
        r = subprocess.run([sys.executable, "-c", code], env=_env(DISPLAY=display), capture_output=True, text=True,
                           timeout=120)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert r.returncode == 0 and "ok" in r.stdout, r.stderr
    import imageio.v2 as imageio
    img = imageio.imread(shot)
    assert img.shape == (300, 400, 3) and _drawn(img) > 0.1
    coupler = (img[..., 1] > 90) & (img[..., 0] < 60) & (img[..., 2] < 80)  # the green coupler bar
    assert coupler.sum() > 100


def test_run_view_force_arrows_and_loop_tolerance_options(tmp_path, gl):
    """run_view honours ``forces`` and ``loop_tol`` when the CLI passes them (flags not wired yet)."""
    import argparse

    import imageio.v2 as imageio
    from urdf_dyn_viewer.cli import run_view
    ns = dict(robot=str(FOUR_BAR), package_dir=[], xacro_arg=[], traj=None, fps=30.0, speed=1.0, size="320x240",
              show="", no_loops=False)
    out = tmp_path / "arrows.png"
    assert run_view(argparse.Namespace(**ns, q=None, out=str(out), forces=True)) == 0
    img = imageio.imread(out)
    assert ((img[..., 0] < 60) & (img[..., 1] > 120) & (img[..., 2] > 170)).sum() > 10  # pin arrow
    # the four-bar opened by 0.17 m: red at the default tolerance (test above), not at loop_tol = 10
    out2 = tmp_path / "tol.png"
    q = "crank_joint=1.3"
    assert run_view(argparse.Namespace(**ns, q=q, out=str(out2), loop_tol=10.0)) == 0
    assert _red(imageio.imread(out2)).sum() < 5
    with pytest.raises(ViewerError, match="loop-tol"):
        run_view(argparse.Namespace(**ns, q=None, out=str(out2), loop_tol=-1.0))


def test_gif_delays_add_up_to_the_motion_time(tmp_path):
    from PIL import Image
    from urdf_dyn_viewer.export import write_frames
    frames = [np.full((8, 8, 3), 8 * k, np.uint8) for k in range(31)]
    assert write_frames(tmp_path / "a.gif", iter(frames), fps=30) == 31
    im = Image.open(tmp_path / "a.gif")
    delays = []
    for k in range(im.n_frames):
        im.seek(k)
        delays.append(im.info["duration"])
    assert im.n_frames == 31 and set(delays) <= {30, 40} and sum(delays) == 1030  # 31 frames at 30 fps
    with pytest.raises(ViewerError, match="format"):
        write_frames(tmp_path / "a.avi", iter(frames), fps=30)


# -- the fast drawing paths (issue 14) against the reference ones -------------------------------------------
def test_body_buffers_draw_what_trimesh_draws(gl):
    """The robot drawn from BodyMeshes (static buffers, one transform per body, closed meshes culled) against
    trimesh's own SceneViewer.on_draw (one vertex list per visual, posed through the scene graph)."""
    from pyglet import gl as G
    from trimesh.viewer.windowed import SceneViewer
    m = ud.load(EXCAVATOR)
    v = _viewer(m, demo_motion(m, duration=1.0, dt=0.1), size=(320, 240))
    try:
        for name, geom in v.scene.geometry.items():  # trimesh's vertex lists (the viewer keeps textured ones only)
            SceneViewer.add_geometry(v, name, geom, smooth=False)
        for q in (v.playback.motion.q[0], v.playback.motion.q[-1]):
            v.robot.set_q(q)  # updates the scene graph too
            v.switch_to()
            v._draw_scene()
            G.glFinish()
            ours = v.read_pixels().astype(float)
            SceneViewer.on_draw(v)
            G.glFinish()
            ref = v.read_pixels().astype(float)
            assert _drawn(ref) > 0.05
            differ = np.abs(ours - ref).sum(-1) > 30
            assert differ.mean() < 0.005, differ.mean()  # silhouette pixels at most
    finally:
        v.close()


def test_glyph_text_matches_pyglet_labels(gl):
    """The heads-up text from the glyph atlas (one draw) against pyglet Labels of the same lines."""
    import pyglet
    from pyglet import gl as G
    from urdf_dyn_viewer.window import FONT_NAMES, FONT_SIZE
    m = ud.load(FOUR_BAR)
    v = _viewer(m, m.q_initial(), size=(320, 240))
    lines = [("four_bar   t =   0.123 s / 1.000 s   x1", (20, 20, 30, 255)),
             ("crank_joint  q =   +1.2346 rad |δ| = 3.1e-07 · ‖x‖", (0, 150, 0, 255))]
    try:
        imgs = []
        for use_labels in (False, True):
            v.switch_to()
            G.glClear(G.GL_COLOR_BUFFER_BIT | G.GL_DEPTH_BUFFER_BIT)
            G.glDisable(G.GL_LIGHTING)
            G.glDisable(G.GL_DEPTH_TEST)
            G.glMatrixMode(G.GL_PROJECTION)
            G.glPushMatrix()
            G.glLoadIdentity()
            G.glOrtho(0, v.width, 0, v.height, -1, 1)
            G.glMatrixMode(G.GL_MODELVIEW)
            G.glPushMatrix()
            G.glLoadIdentity()
            for k, (text, rgba) in enumerate(lines):
                y = v.height - 4 - 13 * k
                if use_labels:
                    pyglet.text.Label(text, font_name=FONT_NAMES, font_size=FONT_SIZE, x=6, y=y, anchor_x="left",
                                      anchor_y="top", color=rgba).draw()
                else:
                    v.text.add(text, 6, y, rgba)
            if use_labels:
                pyglet.text.Label("bottom anchored", font_name=FONT_NAMES, font_size=FONT_SIZE, x=40, y=60,
                                  anchor_y="bottom", color=(200, 0, 0, 255)).draw()
            else:
                v.text.add("bottom anchored", 40, 60, (200, 0, 0, 255), anchor_y="bottom")
            v.text.draw()
            G.glPopMatrix()
            G.glMatrixMode(G.GL_PROJECTION)
            G.glPopMatrix()
            G.glMatrixMode(G.GL_MODELVIEW)
            G.glEnable(G.GL_DEPTH_TEST)
            G.glEnable(G.GL_LIGHTING)
            G.glFinish()
            imgs.append(v.read_pixels().astype(float))
        ink = np.abs(imgs[1] - BG).sum(-1) > 30
        assert ink.sum() > 300  # the labels wrote text
        assert np.abs(imgs[0] - imgs[1]).max() <= 2  # the same glyphs at the same pixels
    finally:
        v.close()


def test_gif_of_a_loop_robot_has_every_frame_and_shows_the_robot(tmp_path, gl):
    """A GIF through the fast path (BGRA reads mapped through one palette): the frame count of a 2.5 s motion
    at 8 fps (0, 1/8, ..., 2.5 s: 21 frames), every frame showing the excavator where the camera projects its
    bounding box, and each frame equal, up to the palette, to the RGB frame of the same pose drawn directly."""
    from PIL import Image
    from urdf_dyn_viewer.export import render_motion
    m = ud.load(EXCAVATOR)
    motion = demo_motion(m, duration=2.5, dt=0.05)
    out = render_motion(m, motion, tmp_path / "dig.gif", fps=8, size=(320, 240))
    frames = _gif_frames(out)
    assert len(frames) == 21 and frames[0].shape == (240, 320, 3)
    assert Image.open(out).info.get("loop") == 0
    v = _viewer(m, motion, size=(320, 240))
    try:
        for k in (0, 10, 20):
            v.playback.seek(k / 8)
            v.robot.set_q(v.playback.q)
            direct = v.render().astype(float)
            gif = frames[k]
            assert np.mean(np.abs(gif - direct)) < 3 and np.mean(np.abs(gif - direct).sum(-1) > 60) < 0.002
            # the robot: URDF yellow (CAT yellow body) pixels inside the projected bounding box of the visuals
            pts = v.robot.points(v.robot.q[None])
            uv = np.array([v.project(p) for p in pts])
            x0, y0 = uv.min(axis=0)
            x1, y1 = uv.max(axis=0)
            r, g, b = gif[..., 0], gif[..., 1], gif[..., 2]
            yellow = (r > 150) & (g > 100) & (b < 80)
            ys, xs = np.nonzero(yellow)
            assert len(xs) > 500
            rows_gl = gif.shape[0] - 1 - ys
            assert np.mean((xs >= x0 - 2) & (xs <= x1 + 2) & (rows_gl >= y0 - 2) & (rows_gl <= y1 + 2)) > 0.99
        assert max(np.mean(np.abs(frames[0] - f).sum(-1) > 30) for f in frames) > 0.01  # it moves
    finally:
        v.close()


def test_bgra_frames_map_to_the_palette_cells_of_their_rgb(tmp_path):
    """The compiled mapping of framebuffer reads (B, G, R, A, bottom row first) against the 15-bit cell of the
    same pixels as RGB top row first, computed with numpy; and compiled from an empty numba cache without any
    warning (a fresh process with warnings as errors)."""
    from urdf_dyn_viewer.gif import GifWriter
    rng = np.random.default_rng(3)
    rgb = rng.integers(0, 256, (37, 53, 3), dtype=np.uint8)
    bgra = np.concatenate([rgb[::-1, :, ::-1], np.full((37, 53, 1), 255, np.uint8)], axis=-1)
    lut = rng.integers(0, 255, 32768).astype(np.uint8)
    w = GifWriter(np.zeros((255, 3), np.uint8), lut, 10)
    r, g, b = (rgb[..., k].astype(np.int64) for k in range(3))
    assert np.array_equal(w.indices(bgra), lut[((r >> 3) << 10) | ((g >> 3) << 5) | (b >> 3)])
    # the same frame through the worker thread: the GIF's one frame holds those indices
    palette = rng.integers(0, 256, (255, 3)).astype(np.uint8)
    w = GifWriter(palette, lut, 10)
    w.add_bgra(bgra)
    assert w.save(tmp_path / "one.gif") == 1
    from PIL import Image
    assert np.array_equal(np.asarray(Image.open(tmp_path / "one.gif")), w.indices(bgra))
    code = ("import warnings; warnings.simplefilter('error')\n"
            "import numpy as np\n"
            "from urdf_dyn_viewer.gif import _bgra_indices\n"
            "out = _bgra_indices(np.zeros((2, 3, 4), np.uint8), np.arange(32768).astype(np.uint8), np.empty((2, 3), np.uint8))\n"
            "assert out.shape == (2, 3)\n")
    r = subprocess.run([sys.executable, "-c", code], env=_env(NUMBA_CACHE_DIR=str(tmp_path / "numba")),
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and not r.stderr.strip(), r.stderr
