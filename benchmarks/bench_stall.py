"""The main job's stall part: envelopes, converged pin design loads (anchored and sliding), case matrix and FE
export, as ``urdf-dyn run scenarios/excavator_dig.scenario.yaml`` computes them (``jobs.sizing_stall.run_stall``
without the geometry cache).

    python benchmarks/bench_stall.py            # writes benchmarks/RESULTS_stall.md
    python benchmarks/bench_stall.py --quick    # one repeat, prints only

Timed warm (one untimed run first: numba's cached kernels loaded, imports done), wall clock
(time.perf_counter), min and median over repeats, with the 1-minute load average before each repeat (the
machine is shared: a figure taken at a load above 1.5 is not a verdict). Parts: the grid's envelopes
(``stall_envelopes``, anchored), the anchored search (``stall_refine.converged_design_loads``) and the whole
``run_stall`` (both ground conditions, case matrix, free bodies). The size of the result as the geometry cache
keeps it (pickled) is given too.
"""
from __future__ import annotations

import argparse
import datetime
import os
import pickle
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

from urdf_dyn.jobs.sizing_checks import tipping_polygon_of  # noqa: E402
from urdf_dyn.jobs.sizing_schema import SizeDocument  # noqa: E402
from urdf_dyn.jobs.sizing_stall import run_stall  # noqa: E402
from urdf_dyn.launch.document import Scenario, build_model, validate  # noqa: E402
from urdf_dyn.machines.loads import Frame  # noqa: E402
from urdf_dyn.machines.pins import PinSpec  # noqa: E402
from urdf_dyn.machines.sizing import Cylinder  # noqa: E402
from urdf_dyn.machines.stall import stall_envelopes  # noqa: E402
from urdf_dyn.machines.stall_refine import converged_design_loads  # noqa: E402

SCENARIO = ROOT / "scenarios" / "excavator_dig.scenario.yaml"


def inputs():
    launch = Scenario(SCENARIO, yaml.safe_load(SCENARIO.read_text()))
    validate(launch, SizeDocument, job="size")
    doc = launch.doc
    model = build_model(launch)
    frames = {n: Frame(f.link, tuple(f.xyz), tuple(f.rpy)) for n, f in doc.frames.items()}
    cyl = {n: Cylinder(c.bore, c.rod, c.count) for n, c in doc.actuators.cylinders.items()}
    pins = {n: PinSpec(p) if isinstance(p, str) else PinSpec(p.joint, p.count) for n, p in doc.design.pins.items()}
    lip = frames[doc.iso6015.lip]
    args = (model, cyl, doc.design.stall_relief or doc.iso6015.relief, (lip.link, tuple(lip.xyz)))
    kw = dict(holding_relief=doc.iso6015.holding_relief, footprint=tipping_polygon_of(launch))
    return launch, model, cyl, frames, pins, args, kw


def once(inp):
    launch, model, cyl, frames, pins, args, kw = inp
    t0 = time.perf_counter()
    env = stall_envelopes(*args, **kw)
    t1 = time.perf_counter()
    conv = converged_design_loads(*args, pins, env=env, **kw)
    t2 = time.perf_counter()
    rep = run_stall(launch, model, cyl, frames, pins)
    t3 = time.perf_counter()
    return dict(env=t1 - t0, search=t2 - t1, run_stall=t3 - t2), rep, conv


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    inp = inputs()
    once(inp)                                                 # warm-up
    runs, loads = [], []
    for _ in range(1 if a.quick else a.repeats):
        loads.append(os.getloadavg()[0])
        runs.append(once(inp))
    _, rep, conv = runs[-1]
    size = len(pickle.dumps(rep, protocol=pickle.HIGHEST_PROTOCOL))
    g = conv.summary()["_grid"]
    t = {k: [r[0][k] for r in runs] for k in runs[0][0]}
    lines = [
        "# The main job's stall part (benchmarks/bench_stall.py)", "",
        f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} cores (shared with other sessions), Python {platform.python_version()}, numpy {np.__version__}; "
        f"{len(runs)} warm repeats; 1-minute load average before each: {', '.join(f'{x:.2f}' for x in loads)} "
        f"(above 1.5: not a verdict).", "",
        f"Grid {' x '.join(map(str, g['n']))} strokes ({len(rep.env.X)} poses), {len(rep.env.fan_deg)} fan directions "
        f"+ tangent, 3 working cylinders, {len(conv.loads)} pins; search: {g.get('method', 'local grids')}.", "",
        "| part | min [s] | median [s] |", "|---|---:|---:|",
        f"| stall_envelopes (the grid, anchored) | {min(t['env']):.2f} | {statistics.median(t['env']):.2f} |",
        f"| converged_design_loads (anchored, from that grid) | {min(t['search']):.2f} | {statistics.median(t['search']):.2f} |",
        f"| **run_stall** (anchored + sliding, case matrix, FE free bodies; no cache) | **{min(t['run_stall']):.2f}** | "
        f"**{statistics.median(t['run_stall']):.2f}** |", "",
        f"The result as the geometry cache keeps it (the StallReport pickled): {size / 1e6:.2f} MB.", "",
        "Design loads per pin (per pin of a pair) [kN], anchored, and the case that gives them:", "",
        "| pin | grid | converged | passes | cylinder | direction | tip force | limited by | strokes (boom, stick, bucket) [m] |",
        "|---|---:|---:|---:|---|---|---:|---|---|"]
    for n, d in conv.loads.items():
        c = d["design_case"]
        lines.append(f"| {n} | {conv.grid_loads[n]['design_load_N'] / 1e3:.1f} | {d['design_load_N'] / 1e3:.1f} | "
                     f"{len(conv.history[n]) - 1} | {c['cylinder']} | {c['direction']} {c['angle_deg']:.1f}° | "
                     f"{c['tip_force_N'] / 1e3:.1f} | {'+'.join(c.get('binding', [c['limited_by']]))} | "
                     + ", ".join(f"{v:+.4f}" for v in c["pose"].values()) + " |")
    text = "\n".join(lines) + "\n"
    print(text)
    if not a.quick:
        (HERE / "RESULTS_stall.md").write_text(text)


if __name__ == "__main__":
    main()
