"""Stall envelopes + pin design loads on the main job's excavator.

    python benchmarks/bench_stall.py            # writes benchmarks/RESULTS_stall.md
    python benchmarks/bench_stall.py --quick    # one repeat, prints only

Timed, warm (one untimed run first so that numba's cached kernels are loaded and Python imports are done):
``stall_envelopes`` on a 13 x 13 x 13 stroke grid (2 197 poses; boom, stick and bucket cylinder each at
the working relief; the ISO tangent and a fan of 36 directions + tangent; holding reliefs, tipping polygon
and friction from scenarios/excavator_dig.scenario.yaml) and ``StallEnvelopes.design_loads`` for the
scenario's pins (``design.pins``). Min and median over repeats, wall clock (time.perf_counter).
"""
from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

import urdf_dyn as ud  # noqa: E402
from urdf_dyn.machines.pins import PinSpec  # noqa: E402
from urdf_dyn.machines.sizing import Cylinder  # noqa: E402
from urdf_dyn.machines.stability import tipping_polygon  # noqa: E402
from urdf_dyn.machines.stall import DEFAULT_FRICTION, stall_envelopes  # noqa: E402


def inputs():
    sc = yaml.safe_load((ROOT / "scenarios" / "excavator_dig.scenario.yaml").read_text())
    model = ud.load(ROOT / "scenarios" / sc["robot"]["file"])
    cyl = {k: Cylinder(v["bore"], v["rod"], v.get("count", 1)) for k, v in sc["actuators"]["cylinders"].items()}
    lip = sc["frames"][sc["iso6015"]["lip"]]
    tr = sc["stability"]["track"]
    design = sc.get("design", {})
    pins = {n: PinSpec(p) if isinstance(p, str) else PinSpec(p["joint"], p.get("count", 1))
            for n, p in design.get("pins", {}).items()}
    return dict(model=model, cylinders=cyl, relief=float(sc["iso6015"]["relief"]),
                tip=(lip["link"], tuple(lip["xyz"])), holding_relief=sc["iso6015"]["holding_relief"],
                footprint=tipping_polygon(tr["roller_length"], tr["gauge"]),
                friction=float(design.get("friction") or DEFAULT_FRICTION)), pins


def once(kw, pins):
    t0 = time.perf_counter()
    env = stall_envelopes(kw["model"], kw["cylinders"], kw["relief"], kw["tip"], holding_relief=kw["holding_relief"],
                          footprint=kw["footprint"], friction=kw["friction"], n=(13, 13, 13), n_fan=36)
    t1 = time.perf_counter()
    dl = env.design_loads(kw["model"], pins)
    t2 = time.perf_counter()
    return t1 - t0, t2 - t1, env, dl


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeats", type=int, default=5)
    a = ap.parse_args()
    kw, pins = inputs()
    once(kw, pins)                                            # warm-up
    runs = [once(kw, pins) for _ in range(1 if a.quick else a.repeats)]
    env, dl = runs[-1][2], runs[-1][3]
    te = [r[0] for r in runs]
    td = [r[1] for r in runs]
    tt = [r[0] + r[1] for r in runs]
    lines = [
        "# Stall envelopes + pin design loads (benchmarks/bench_stall.py)", "",
        f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} cores (shared with other sessions), Python {platform.python_version()}, numpy {np.__version__}; "
        f"{len(runs)} warm repeats.", "",
        f"Grid: {len(env.X)} poses (13 x 13 x 13 strokes), 3 working cylinders, ISO tangent + {len(env.fan_deg)} fan "
        f"directions + tangent; {len(dl)} pins.", "",
        "| part | min [s] | median [s] |", "|---|---:|---:|",
        f"| stall_envelopes (grid, 4 batched compiled statics, bounds) | {min(te):.2f} | {statistics.median(te):.2f} |",
        f"| design_loads (4 batched pins.pin_loads, max over every stall state) | {min(td):.2f} | {statistics.median(td):.2f} |",
        f"| **total** (target < 10 s) | **{min(tt):.2f}** | **{statistics.median(tt):.2f}** |", "",
        "Per working cylinder: the largest held tip force over the grid [kN] and its binding limit:", "",
        "| cylinder | tangent max | limited by | fan worst max | limited by |", "|---|---:|---|---:|---|"]
    for c in env.working:
        t, f = env.tangent[c], env.fan[c]
        kt, kf = int(np.argmax(t["force_N"])), int(np.argmax(f["force_N"]))
        lines.append(f"| {c} | {t['force_N'][kt] / 1e3:.1f} | {t['limited_by'][kt]} | {f['force_N'][kf] / 1e3:.1f} | "
                     f"{f['limited_by'][kf]} |")
    lines += ["", "Design loads per pin (per pin of a pair) [kN] and the case that gives them:", "",
              "| pin | design load | cylinder | direction | tip force | limited by | strokes (boom, stick, bucket) [m] |",
              "|---|---:|---|---|---:|---|---|"]
    for n, d in dl.items():
        c = d["design_case"]
        lines.append(f"| {n} | {d['design_load_N'] / 1e3:.1f} | {c['cylinder']} | {c['direction']} {c['angle_deg']:.0f}° | "
                     f"{c['tip_force_N'] / 1e3:.1f} | {c['limited_by']} | "
                     + ", ".join(f"{v:+.3f}" for v in c["pose"].values()) + " |")
    text = "\n".join(lines) + "\n"
    print(text)
    if not a.quick:
        (HERE / "RESULTS_stall.md").write_text(text)


if __name__ == "__main__":
    main()
