"""The viewer draws for real (this file: the clock, scenes, offscreen frames, the CLI; the window,
the fast drawing paths and the sizing run's layers: test_viewer_window.py): offscreen through EGL in this process, and in a real window under
Xvfb in a subprocess. Pixels are checked: something drawn, frames differ between poses, an opened loop
shows in red next to its segment, arrows in their colours. In CI (env CI set) nothing here may skip: the
GL packages come from .ci/run.

pyglet picks its backend once per process, so this module renders headless only; the window and the
"core never imports the viewer" checks run in subprocesses."""
import subprocess
import sys
import warnings

import numpy as np
import pytest

import urdf_dyn as ud
from viewerkit import (EXCAVATOR, FOUR_BAR, PUMA, ROOT, ViewerError, Motion, Playback, RobotScene,  # noqa: F401
                       ViewerWarning, demo_motion, drawn as _drawn, env as _env, gif_frames as _gif_frames, gl,
                       motion_from_pose, red as _red, viewer as _viewer)


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
    tr = simulate(m, np.array([0, 0.3, -0.5, 0, 0.4, 0]), duration=0.5, options=ud.SimulateOptions(dt_out=0.05, progress=False))
    tr.save(tmp_path / "fall.npz")
    out = tmp_path / "fall.mp4"
    assert main(["view", str(PUMA), "--traj", str(tmp_path / "fall.npz"), "--out", str(out), "--fps", "20",
                 "--show", "joint2,joint3"]) == 0
    frames = [f for f in imageio.get_reader(out)]
    assert len(frames) == 11 and frames[0].shape == (480, 640, 3)
    assert np.mean(np.abs(frames[0].astype(float) - frames[-1]).sum(-1) > 30) > 0.005
    png = tmp_path / "pose.png"      # --q assembles, holding the joint it names: the loop is drawn closed
    assert main(["view", str(FOUR_BAR), "--q", "crank_joint=1.3", "--out", str(png)]) == 0
    assert _red(imageio.imread(png)).sum() < 5
    assert main(["view", str(FOUR_BAR), "--q", "crank_joint=1.3", "--no-assemble", "--out", str(png)]) == 0
    assert _red(imageio.imread(png)).sum() > 100


SIGN_ERROR = ROOT / "tests" / "constraints" / "data" / "parallelogram_sign_error.urdf"
FIX = "closes if predecessor xyz z = -1.12 instead of +1.12"


def test_open_loop_gap_is_drawn_with_its_size_and_fix(tmp_path, capsys, gl):
    """A loop with a sign error in its point: the window/GIF viewer draws the gap between Fp and Fs in red,
    labelled with its size and the nearest fix; urdf-dyn view loads it open with the loader's error as a
    warning (exit status 0: drawing the gap is what the user asked for)."""
    import imageio.v2 as imageio
    from urdf_dyn.cli.main import main
    m = ud.load(SIGN_ERROR, check_loops=False)
    v = _viewer(m, m.q_initial())
    try:
        img = v.render()
        labels = [t for _, t, _ in v._world_labels]
        assert labels == ["tie_rod_crank_pin: gap 2.24 m, 0 rad", FIX]
        (lp, Fp, Fs), = v.robot.loop_frames()
        a, b = np.array(v.project(Fp[:3, 3])), np.array(v.project(Fs[:3, 3]))
        assert np.linalg.norm(a - b) > 100 and 0 <= a[1] < 480 and 0 <= b[1] < 480   # both ends in view
        assert _red(img).sum() > 300
    finally:
        v.close()
    gif = tmp_path / "sign.gif"
    assert main(["view", str(SIGN_ERROR), "--out", str(gif), "--fps", "5"]) == 0
    err = capsys.readouterr().err
    assert "cannot be assembled near the initial configuration" in err and FIX in err and "drawn open" in err
    frame, = imageio.mimread(gif)    # the raw initial pose (a demo motion would close the loop on the wrong branch)
    assert _red(np.asarray(frame)[..., :3]).sum() > 300


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
    from urdf_dyn.launch import run_scenario
    data = yaml.safe_load((ROOT / "scenarios" / "four_bar.scenario.yaml").read_text())
    data["robot"]["file"] = str(FOUR_BAR)
    data["duration"] = 0.5
    data["outputs"] = {"directory": str(tmp_path / "out"), "animation": "swing.gif", "animation_fps": 10,
                       "animation_size": "200x150"}
    f = tmp_path / "fb.scenario.yaml"
    f.write_text(yaml.safe_dump(data))
    _, written = run_scenario(f, progress=False, echo=lambda *a: None)
    frames = _gif_frames(written["animation"])
    assert len(frames) == 6 and frames[0].shape == (150, 200, 3)
    assert np.mean(np.abs(frames[0] - frames[-1]).sum(-1) > 30) > 0.005
