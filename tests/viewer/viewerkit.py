"""Shared set-up of the GL viewer's tests (test_viewer.py, test_viewer_window.py): the viewer importable
without an install, headless pyglet, an offscreen viewer, pixel helpers, Xvfb. In CI (env CI set) nothing
may skip: the GL packages come from .ci/run."""
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

from _robots import ROOT

IN_CI = bool(os.environ.get("CI"))


def require(mod):
    if IN_CI:
        return __import__(mod)
    return pytest.importorskip(mod, reason=f"{mod} not installed (pip install -e '.[viewer]')")


for _m in ("trimesh", "pyglet", "imageio"):
    require(_m)

# The viewer installs as the package urdf_dyn_viewer (pyproject package-dir: viewer/). Without an install
# (PYTHONPATH=.), make it importable here and in subprocesses through a symlink in a temporary folder.
_SHIM = None
try:
    import urdf_dyn_viewer  # noqa: F401
except ImportError:
    _SHIM = tempfile.mkdtemp(prefix="urdf_dyn_viewer_shim_")
    os.symlink(ROOT / "viewer", Path(_SHIM) / "urdf_dyn_viewer")
    sys.path.insert(0, _SHIM)


def env(**extra):
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


def viewer(model, q_or_motion, **kw):
    from urdf_dyn_viewer.export import offscreen_viewer
    motion = q_or_motion if isinstance(q_or_motion, Motion) else motion_from_pose(model, q_or_motion)
    return offscreen_viewer(RobotScene(model), Playback(motion), **kw)


def drawn(img):
    """Fraction of pixels that differ from the background."""
    return float(np.mean(np.abs(img.astype(float) - BG).sum(axis=-1) > 30))


def red(img):
    r, g, b = (img[..., k].astype(int) for k in range(3))
    return (r > 200) & (g < 40) & (b < 40)


def gif_frames(path):
    import imageio.v2 as imageio
    return [f[..., :3].astype(float) for f in imageio.mimread(path)]


def start_xvfb():
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
