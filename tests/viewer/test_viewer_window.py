"""The GL viewer in a real window under Xvfb, its fast drawing paths against the reference ones,
and the layers of a sizing run (the dig bench, the soil force and the payload, as in the browser
viewer). In CI (env CI set) nothing here may skip."""
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import urdf_dyn as ud
from viewerkit import (BG, EXCAVATOR, FOUR_BAR, ViewerError, demo_motion, drawn as _drawn,  # noqa: F401
                       env as _env, gif_frames as _gif_frames, gl, red as _red, start_xvfb as _start_xvfb,
                       viewer as _viewer)

# -- a real window ---------------------------------------------------------------------------------------------
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


# -- the fast drawing paths against the reference ones -------------------------------------------
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


def test_the_streamed_gif_is_the_file_pillow_writes():
    """gif._encode writes each frame as the next one comes (gif._stream); the bytes are those of Pillow's own
    save(save_all=True, loop=0, optimize=False) of the same frames: random pictures, runs of equal pictures
    (whose delays add up), one picture, the same picture only, and none."""
    import io
    import queue
    from urdf_dyn_viewer.gif import _encode, _frames
    rng = np.random.default_rng(5)
    palette = rng.integers(0, 256, (255, 3)).astype(np.uint8)
    pics = [rng.integers(0, 255, (24, 31)).astype(np.uint8) for _ in range(5)]
    pics[3][:10] = pics[2][:10]                                   # a frame that changes only in part
    runs = {"random": pics, "equal runs": [pics[0]] * 3 + [pics[1]] * 2 + pics[2:] + [pics[4]] * 2,
            "one": pics[:1], "one picture": [pics[0]] * 4, "none": []}

    def items(seq):
        q = queue.Queue()
        for a in seq:
            q.put(("index", a))
        q.put(None)
        return q

    for name, seq in runs.items():
        ours = _encode(items(seq), palette, None, 7.0)
        frames = _frames(items(seq), palette, None, 7.0)
        first, pillow = next(frames, None), io.BytesIO()
        if first is not None:
            first.save(pillow, format="GIF", save_all=True, append_images=frames, loop=0, optimize=False)
        assert ours == pillow.getvalue(), name


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


def test_gif_of_a_sizing_run_draws_the_bench_the_soil_force_and_the_payload(tmp_path, gl):
    """A run folder (motion, soil.csv, view.json) rendered as the sizing job's GIF shows the bench's brown
    top, the soil force's purple arrow while the edge cuts and the payload's green dot once soil is in the
    bucket; the same motion without the run's files shows none of them."""
    import json

    from urdf_dyn.machines.loads import Frame, frame_poses
    from urdf_dyn_viewer.export import render_trajectory
    from urdf_dyn_viewer.overlay import BENCH_RGBA, PAYLOAD_RGB, SOIL_RGB
    from urdf_dyn_viewer.playback import motion_from_trajectory
    from webrun import write_soil, write_view_json
    m = ud.load(EXCAVATOR)
    mo = demo_motion(m, duration=8.0, dt=0.2)
    t, q = mo.t, mo.q
    tr = ud.Trajectory(t, q, mo.qd, mo.qdd, np.zeros_like(q), np.zeros(len(t)), m.joint_names)
    tr.save(tmp_path / "motion.npz")
    write_view_json(tmp_path, m)
    edge_z = frame_poses(m, q, Frame("bucket", (1.47, 0.0, 0.0)))[:, 2, 3]
    view = json.loads((tmp_path / "view.json").read_text())
    view["bench_height"] = float(np.percentile(edge_z, 70))     # the demo dips the edge below it
    (tmp_path / "view.json").write_text(json.dumps(view))
    force, mass = write_soil(tmp_path, m, motion_from_trajectory(m, tr), dig_until=8.0, release=(9.0, 10.0),
                             ground=view["bench_height"])
    out = render_trajectory(m, tr, tmp_path / "run.gif", fps=5, size=(320, 240), run_dir=tmp_path)
    plain = render_trajectory(m, tr, tmp_path / "plain.gif", fps=5, size=(320, 240))
    frames, bare = _gif_frames(out), _gif_frames(plain)

    def near(img, rgb, tol=90):   # the arrow and its label (0.8 of the colour)
        return int((np.abs(img - 255 * np.array(rgb)).sum(-1) < tol).sum())
    k = int(np.argmax(np.linalg.norm(force, axis=1)))          # frames are the samples (0.2 s, 5 fps)
    assert np.linalg.norm(force[k]) > 0 and mass.max() > 0
    assert near(frames[k], SOIL_RGB) > 15 and near(bare[k], SOIL_RGB) == 0
    j = len(t) - 1                                              # the bucket holds its soil at the end
    assert mass[j] > 0 and near(frames[j], PAYLOAD_RGB, 40) > 10 and near(bare[j], PAYLOAD_RGB, 40) == 0
    bench = 0.55 * 255 * np.array(BENCH_RGBA[:3]) + 0.45 * 255 * np.array([0.93, 0.94, 0.96])  # over the background
    top = [(np.abs(f - bench).sum(-1) < 40).sum() for f in (frames[0], bare[0])]
    # without the run's files no bench: only stray pixels of a similar colour remain (the specular highlight
    # on the yellow stick is one), under 5 % of what the bench top covers when drawn
    assert top[0] > 300 and top[1] < 0.05 * top[0], top
