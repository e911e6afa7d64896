"""Helpers shared by the benchmark modules: timing, generated robots, the peers' robot files, versions."""
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SHARED = Path(os.environ.get("URDF_DYN_SHARED_DATA") or ROOT.parent / "shared" / "data")  # a worktree may keep it elsewhere
sys.path.insert(0, str(ROOT))

import urdf_dyn as ud  # noqa: E402


def timeit(f, number, repeat):
    """(min, median) seconds per call of f over many short loops of calls.

    On a shared machine a long loop is likely to be preempted: each loop is sized to last about 2 ms (at
    least ``number``/10 calls, at least one), and there are at least 25 loops (``repeat`` if more, fewer
    when a single call is long, ~3 s in all), so that ours and the peer's are both timed in quiet slices."""
    f()
    t0 = time.perf_counter()
    f()
    t1 = max(time.perf_counter() - t0, 1e-9)
    number = max(1, int(0.002 / t1))
    repeat = max(3, min(max(repeat, 25), int(3.0 / (t1 * number)) + 1))
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            f()
        times.append((time.perf_counter() - t0) / number)
    return min(times), float(np.median(times))


def us(x):
    return f"{x * 1e6:.3g}"


def chain_urdf(n, branch=False):
    """A generated n-body chain (alternating y/z revolute axes, 0.3 m links, 1 kg)."""
    links = ['<link name="base"/>'] + [
        f'<link name="l{i}"><inertial><origin xyz="0.15 0 0"/><mass value="1"/>'
        f'<inertia ixx="0.001" iyy="0.008" izz="0.008" ixy="0" ixz="0" iyz="0"/></inertial></link>' for i in range(n)]
    joints = [f'<joint name="j{i}" type="revolute"><parent link="{"base" if i == 0 else f"l{i - 1}"}"/>'
              f'<child link="l{i}"/><origin xyz="{0 if i == 0 else 0.3} 0 0"/><axis xyz="0 {i % 2} {1 - i % 2}"/>'
              f'<limit lower="-3" upper="3" effort="100" velocity="5"/></joint>' for i in range(n)]
    return f'<robot name="chain{n}">' + "".join(links + joints) + "</robot>"


def ladder_urdf(rungs):
    """RBDA Fig. 8.4's ladder: two rails of `rungs` links each, joined at every level by a rung with a
    revolute loop joint at its far end (planar, vertical x-z plane)."""
    L = []
    J = []
    loops = []
    inert = ('<inertial><origin xyz="0 0 0.15"/><mass value="1"/><inertia ixx="0.008" iyy="0.008" izz="0.001" '
             'ixy="0" ixz="0" iyz="0"/></inertial>')
    L.append('<link name="base"/>')
    for side, x in (("a", 0.0), ("b", 0.4)):
        for i in range(rungs):
            L.append(f'<link name="{side}{i}">{inert}</link>')
            parent = "base" if i == 0 else f"{side}{i - 1}"
            J.append(f'<joint name="{side}j{i}" type="continuous"><parent link="{parent}"/><child link="{side}{i}"/>'
                     f'<origin xyz="{x if i == 0 else 0} 0 {0 if i == 0 else 0.3}"/><axis xyz="0 1 0"/></joint>')
    for i in range(rungs):
        L.append(f'<link name="r{i}"><inertial><origin xyz="0.2 0 0"/><mass value="0.5"/><inertia ixx="0.0005" '
                 f'iyy="0.007" izz="0.007" ixy="0" ixz="0" iyz="0"/></inertial></link>')
        J.append(f'<joint name="rj{i}" type="continuous"><parent link="a{i}"/><child link="r{i}"/>'
                 f'<origin xyz="0 0 0.3"/><axis xyz="0 1 0"/></joint>')
        loops.append(f'<loop name="rung{i}" type="revolute"><predecessor link="r{i}"><origin xyz="0.4 0 0"/>'
                     f'</predecessor><successor link="b{i}"><origin xyz="0 0 0.3"/></successor><axis xyz="0 1 0"/></loop>')
    return f'<robot name="ladder{rungs}">' + "".join(L + J + loops) + "</robot>"


def erd_path(name):
    """A URDF of example-robot-data (the wheel ships the files, not always the Python module)."""
    import importlib.metadata as md
    dist = md.distribution("example-robot-data")
    for f in dist.files:
        s = str(f)
        if s.endswith(name):
            return Path(dist.locate_file(f)).resolve()
    raise FileNotFoundError(name)


def erd_package_dirs():
    p = erd_path("ur5_robot.urdf")
    while p.name != "robots" and p.parent != p:
        p = p.parent
    return [str(p)]


def _per_call(rows, name, model, pm, pd, ours, theirs, n, rep):
    """One row per algorithm (ID, H, FD) of one robot: urdf_dyn and Pinocchio on the same state."""
    import pinocchio as pin
    (q, v, a), (qp, vp, ap) = ours, theirs
    for what, f, peer in (
            ("ID", lambda: ud.inverse_dynamics(model, q, v, a), lambda: pin.rnea(pm, pd, qp, vp, ap)),
            ("H", lambda: ud.mass_matrix(model, q), lambda: pin.crba(pm, pd, qp)),
            ("FD (ABA)", lambda: ud.forward_dynamics(model, q, v, a), lambda: pin.aba(pm, pd, qp, vp, ap))):
        rows.append((name, model.nv, what, timeit(f, n, rep), timeit(peer, n, rep)))


def versions():
    import numba
    import pinocchio
    import scipy
    out = {"python": platform.python_version(), "numpy": np.__version__, "scipy": scipy.__version__,
           "numba": numba.__version__, "pinocchio": pinocchio.__version__}
    try:
        import mujoco
        out["mujoco"] = mujoco.__version__
    except ImportError:
        pass
    cpu = platform.processor()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return cpu, out
