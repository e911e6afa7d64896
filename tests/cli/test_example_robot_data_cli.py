"""Every URDF of example-robot-data either loads or is refused with a located error, and every one that
loads runs ``urdf-dyn info``, ``id`` and ``fd`` (in-process, through the CLI's ``main``) and the viewer's
demo motion and one offscreen frame without an exception. ``fd`` may refuse, with exit status 2 and a
message naming the joints, a robot whose joint-space inertia is singular (Romeo's massless finger links).
About 1–3 minutes in all (mesh loading dominates)."""
import contextlib
import io
import warnings
from importlib import metadata

import numpy as np
import pytest

import urdf_dyn as ud
from urdf_dyn.cli.main import main

try:
    ROBOTS = metadata.distribution("example-robot-data").locate_file(
        "cmeel.prefix/share/example-robot-data/robots")
    FILES = sorted(ROBOTS.rglob("*.urdf")) if ROBOTS.is_dir() else []
except metadata.PackageNotFoundError:  # pragma: no cover - the [test] extra installs it
    ROBOTS, FILES = None, []


@pytest.fixture(scope="module")
def gl():
    from urdf_dyn_viewer.backend import select
    assert select(True)
    return True


def _cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(list(argv))
    return rc, out.getvalue(), err.getvalue()


@pytest.mark.skipif(not FILES, reason="example-robot-data is not installed")
@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(ROBOTS)) for p in FILES] if FILES else None)
def test_example_robot_data_loads_or_is_refused_with_a_location(path, gl):
    from urdf_dyn_viewer.export import offscreen_viewer
    from urdf_dyn_viewer.playback import Playback, demo_motion
    from urdf_dyn_viewer.scene import RobotScene
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            model = ud.load(path, package_dirs=[str(ROBOTS)])
        except ud.ModelError as e:
            assert str(path) in str(e) and (e.line or e.element), str(e)  # located: file and line or element
            return
        pk = ["--package-dir", str(ROBOTS)]
        for cmd in ("info", "id", "fd"):
            rc, out, err = _cli(cmd, str(path), *pk)
            if cmd == "fd" and rc == 2:
                assert "H is singular: joint(s)" in err and len(err.strip().splitlines()) == 1, err
                continue
            assert rc == 0, err
        motion = demo_motion(model)
        assert len(motion) >= 1 and np.all(np.isfinite(motion.q))
        v = offscreen_viewer(RobotScene(model), Playback(motion), size=(96, 72))
        try:
            img = v.render()
        finally:
            v.close()
    assert img.shape[:2] == (72, 96)
