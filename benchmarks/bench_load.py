"""Loading speed: URDF file -> Model (urdf_dyn.load) against Pinocchio's URDF parser, on the largest
robot descriptions of example-robot-data.

    python benchmarks/bench_load.py            # writes benchmarks/RESULTS_load.md
    python benchmarks/bench_load.py --quick    # fewer repeats, prints only

Timed per robot (min and median over repeats, one call per repeat, after one warm-up load so that the
numba kernels and Python imports are not counted):
- ``urdf_dyn.load(path)``, and its stages: lxml parse (safe settings) + located checks, yourdfpy's
  reading of the checked tree, and the rest (Featherstone model, transmissions, couplings);
- ``pin.buildModelFromUrdf(path)`` (urdfdom/TinyXML2 + model building in C++).
Meshes are never loaded by either.
"""
from __future__ import annotations

import argparse
import datetime
import importlib.metadata
import io
import os
import platform
import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

import urdf_dyn as ud  # noqa: E402
from urdf_dyn.io import urdf as _urdf  # noqa: E402

ROBOTS = [  # (label, path under example-robot-data/robots)
    ("tiago_dual", "tiago_description/robots/tiago_dual.urdf"),
    ("romeo", "romeo_description/urdf/romeo.urdf"),
    ("talos_full_v2", "talos_data/robots/talos_full_v2.urdf"),
    ("g1_29dof_with_hand", "g1_description/urdf/g1_29dof_with_hand_rev_1_0.urdf"),
    ("centauro", "centauro_description/urdf/centauro.urdf"),
    ("alex_psyonic_hands", "alex_description/urdf/alex_psyonic_hands.urdf"),
    ("human", "human_description/robots/human.urdf"),
    ("tiago_pro", "tiago_pro_description/robots/tiago_pro.urdf"),
    ("icub", "icub_description/robots/icub.urdf"),
    ("pr2", "pr2_description/urdf/pr2.urdf"),
    ("panda", "panda_description/urdf/panda.urdf"),
]


def erd_dir():
    dist = importlib.metadata.distribution("example-robot-data")
    return Path(dist.locate_file("cmeel.prefix/share/example-robot-data/robots"))


def timed(f, repeat):
    f()
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t0)
    return min(ts), float(np.median(ts))


def stages(path, repeat):
    """(parse+check, yourdfpy) median seconds for one file."""
    import yourdfpy
    data = path.read_bytes()

    def parse_check():
        root = _urdf._parse_xml(data, str(path))
        _urdf._Checker(str(path)).check(root)
        return root

    root = parse_check()
    from lxml import etree
    text = etree.tostring(root)

    def ydp():
        yourdfpy.URDF.load(io.BytesIO(text), build_scene_graph=False, load_meshes=False,
                           build_collision_scene_graph=False, load_collision_meshes=False, mesh_dir=str(path.parent))
    return timed(parse_check, repeat)[1], timed(ydp, repeat)[1]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    import pinocchio as pin
    repeat = 3 if args.quick else 15
    base = erd_dir()
    rows = []
    warnings.simplefilter("ignore", ud.ModelWarning)
    for label, rel in ROBOTS:
        path = base / rel
        m = ud.load(path)
        pm = pin.buildModelFromUrdf(str(path))
        t_ud = timed(lambda: ud.load(path), repeat)
        t_pin = timed(lambda: pin.buildModelFromUrdf(str(path)), repeat)
        s_parse, s_ydp = stages(path, repeat)
        rows.append((label, path.stat().st_size, len(m.links), m.nv, pm.nv, t_ud, t_pin, s_parse, s_ydp))
        print(f"{label:20s} {path.stat().st_size / 1024:7.0f} KiB  links {len(m.links):4d}  nv {m.nv:4d}  "
              f"urdf_dyn {1e3 * t_ud[1]:7.2f} ms  pinocchio {1e3 * t_pin[1]:6.2f} ms  ratio "
              f"{t_ud[0] / t_pin[0]:5.1f}", flush=True)
    if args.quick:
        return 0
    head = ("| robot | file [KiB] | links | nv | urdf_dyn.load [ms] min / median | of which lxml parse + checks "
            "[ms] | of which yourdfpy [ms] | pin.buildModelFromUrdf [ms] min / median | ratio of minima |\n"
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    lines = [head]
    for label, size, nl, nv, _, tu, tp, sp, sy in rows:
        lines.append(f"| {label} | {size / 1024:.0f} | {nl} | {nv} | {1e3 * tu[0]:.2f} / {1e3 * tu[1]:.2f} | "
                     f"{1e3 * sp:.2f} | {1e3 * sy:.2f} | {1e3 * tp[0]:.2f} / {1e3 * tp[1]:.2f} | {tu[0] / tp[0]:.1f} |")
    vers = {p: importlib.metadata.version(p) for p in ("pin", "example-robot-data", "yourdfpy", "lxml", "numpy")}
    text = (f"# Loading speed: urdf_dyn.load vs Pinocchio's URDF parser\n\n"
            f"`python benchmarks/bench_load.py`, {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, "
            f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores (shared with other jobs), "
            f"Python {platform.python_version()}; " + ", ".join(f"{k} {v}" for k, v in vers.items())
            + f". {repeat} repeats after one warm-up load; meshes not loaded. Ratios use the minima (the "
            "medians move with the load of the shared machine).\n\n" + "\n".join(lines) + "\n\n"
            "urdf_dyn's time is the sum of: lxml parsing with safe settings and the located checks of every "
            "element; yourdfpy reading the checked tree into its dataclasses; and building the Featherstone "
            "model (fixed-joint merging, spatial inertias, transmissions, couplings). Pinocchio's parser is "
            "C++ (urdfdom on TinyXML2) and checks nothing beyond well-formedness.\n")
    (HERE / "RESULTS_load.md").write_text(text)
    print(f"wrote {HERE / 'RESULTS_load.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
