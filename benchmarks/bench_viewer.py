"""Offscreen frames per second of the viewer at 640x480 (issue 5; target >= 30 fps on 2 cores, no GPU).

    python benchmarks/bench_viewer.py [--frames 300] [--size 640x480] [--out benchmarks/RESULTS_viewer.md]

For the excavator (55 visuals, 4 loops) and the PUMA 560 (13 visuals), along the demo motion of
``urdf-dyn view`` (every frame a new pose), EGL headless (Mesa llvmpipe here):
- draw: pose + draw + glFinish, the loop overlay and the heads-up text on (what the window shows);
- draw + read: the same and glReadPixels into numpy (what an export does per frame);
- bare: draw + read without overlay and text (the scene alone);
- GIF, MP4: the whole export (render + encode) of the 4 s demo motion at 30 fps, frames per second.
Each figure is the best of 3 runs. Results go to a Markdown file.
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
try:
    import urdf_dyn_viewer  # noqa: F401
except ImportError:  # not installed (PYTHONPATH=.): viewer/ installs as urdf_dyn_viewer
    shim = tempfile.mkdtemp(prefix="urdf_dyn_viewer_shim_")
    os.symlink(ROOT / "viewer", Path(shim) / "urdf_dyn_viewer")
    sys.path.insert(0, shim)

import numpy as np  # noqa: E402

import urdf_dyn  # noqa: E402
from urdf_dyn_viewer.backend import select  # noqa: E402

ROBOTS = {"excavator": ROOT / "robots" / "excavator.urdf", "puma560": ROOT / "robots" / "puma560.urdf"}


def _rate(fn, n, repeats=3):
    best = np.inf
    for _ in range(repeats):
        t = time.perf_counter()
        for k in range(n):
            fn(k)
        best = min(best, time.perf_counter() - t)
    return n / best


def bench(name, path, frames, size):
    from pyglet import gl

    from urdf_dyn_viewer.export import offscreen_viewer, render_motion
    from urdf_dyn_viewer.playback import Playback, demo_motion
    from urdf_dyn_viewer.scene import RobotScene
    model = urdf_dyn.load(path)
    motion = demo_motion(model, duration=4.0, dt=1.0 / 30.0)
    robot = RobotScene(model)
    v = offscreen_viewer(robot, Playback(motion), size=size)
    Q = motion.q

    def pose(k):
        robot.set_q(Q[k % len(Q)])

    def draw(k):
        pose(k)
        v.switch_to()
        v.on_draw()
        gl.glFinish()

    def draw_read(k):
        pose(k)
        v.render()

    out = {"visuals": len(robot.visuals), "triangles": int(sum(len(x.mesh.faces) for x in robot.visuals)),
           "loops": len(model.loops)}
    for _ in range(10):
        draw_read(0)  # warm up
    out["draw"] = _rate(draw, frames)
    out["draw+read"] = _rate(draw_read, frames)
    v.flags["loops"] = v.flags["hud"] = False
    out["bare"] = _rate(draw_read, frames)
    out["renderer"] = gl.gl_info.get_renderer()
    v.close()
    with tempfile.TemporaryDirectory() as d:
        for fmt in ("gif", "mp4"):
            t = time.perf_counter()
            render_motion(model, motion, Path(d) / f"{name}.{fmt}", fps=30, size=size, robot=robot)
            out[fmt] = len(motion) / (time.perf_counter() - t)
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--frames", type=int, default=300)
    p.add_argument("--size", default="640x480")
    p.add_argument("--out", default=str(ROOT / "benchmarks" / "RESULTS_viewer.md"))
    a = p.parse_args(argv)
    size = tuple(int(x) for x in a.size.split("x"))
    select(True)
    load0 = os.getloadavg()[0]
    rows = {}
    for name, path in ROBOTS.items():
        rows[name] = r = bench(name, path, a.frames, size)
        print(f"{name:10s} draw {r['draw']:6.1f} fps   draw+read {r['draw+read']:6.1f} fps   bare {r['bare']:6.1f} fps   "
              f"GIF {r['gif']:5.1f} fps   MP4 {r['mp4']:5.1f} fps", flush=True)
    import imageio
    import pyglet
    import trimesh
    renderer = next(iter(rows.values()))["renderer"]
    lines = [
        "# Viewer: offscreen frames per second",
        "",
        f"`python benchmarks/bench_viewer.py` — {size[0]}x{size[1]}, EGL headless, {renderer}; "
        f"{os.cpu_count()} CPUs ({platform.processor() or platform.machine()}), Python {platform.python_version()}, "
        f"pyglet {pyglet.version}, trimesh {trimesh.__version__}, imageio {imageio.__version__}. "
        f"Load average {load0:.1f} before / {os.getloadavg()[0]:.1f} after (other jobs share the machine: the "
        "figures are noisy). "
        f"Demo motion of `urdf-dyn view` (a new pose every frame), best of 3 runs of {a.frames} frames. "
        "Target (issue 5): >= 30 fps.",
        "",
        "| robot | visuals | triangles | loops | draw (overlay + text) | draw + read pixels | bare scene + read | "
        "GIF export | MP4 export |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, r in rows.items():
        lines.append(f"| {name} | {r['visuals']} | {r['triangles']} | {r['loops']} | {r['draw']:.0f} fps | "
                     f"{r['draw+read']:.0f} fps | {r['bare']:.0f} fps | {r['gif']:.0f} fps | {r['mp4']:.0f} fps |")
    lines += [
        "",
        "draw: pose (forward kinematics, node transforms) + trimesh/pyglet draw + loop overlay + heads-up text + "
        "glFinish — what the window does per frame. draw + read: plus glReadPixels into numpy (an export frame). "
        "bare: without overlay and text. GIF/MP4: the whole `render_motion` of the 121-frame demo motion, "
        "encoding included (GIF quantisation by Pillow, MP4 by ffmpeg/libx264).",
        "",
    ]
    Path(a.out).write_text("\n".join(lines))
    print(f"wrote {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
