"""Speed of the design cases on the main job's cycle (scenarios/excavator_dig.scenario.yaml).

    python benchmarks/bench_design.py            # writes benchmarks/RESULTS_design.md
    python benchmarks/bench_design.py --quick    # one repeat, prints only

The main job runs once (its inputs to ``jobs.sizing_design.run_design`` are recorded on the way); then each
part is timed on those inputs, warm (compiled kernels cached, one warm-up call), min and median over repeats:
every pin's force (``machines.pins.pin_loads``: the compiled actuation path for λ, then the batched RNEA
backward pass), rainflow and damage-equivalent loads, rod buckling over the stroke, the pumps against the
engine, the shortest-cycle search, and ``run_design`` as the job calls it (all of them).
"""
from __future__ import annotations

import argparse
import datetime
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

import urdf_dyn.jobs.sizing_design as sd  # noqa: E402
from urdf_dyn.launch.registry import run_scenario  # noqa: E402

SCENARIO = ROOT / "scenarios" / "excavator_dig.scenario.yaml"


def _record():
    """Run the main job once; return run_design's arguments and the job's wall time [s]."""
    seen = {}
    real = sd.run_design

    def spy(*a):
        seen["args"] = a
        return real(*a)

    sd.run_design = spy
    try:
        with tempfile.TemporaryDirectory() as d:
            t0 = time.perf_counter()
            run_scenario(SCENARIO, out_dir=d, echo=lambda *_: None)
            wall = time.perf_counter() - t0
    finally:
        sd.run_design = real
    return seen["args"], wall


def _time(f, repeats):
    f()
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t0)
    return min(ts), float(np.median(ts))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    reps = 1 if a.quick else 5
    from urdf_dyn.machines.buckling import buckling
    from urdf_dyn.machines.cycle import shortest_cycle
    from urdf_dyn.machines.fatigue import damage_equivalent_load, magnitude_history, periodic_cycles
    from urdf_dyn.machines.pins import pin_loads
    from urdf_dyn.machines.pumps import pump_power, section_loads
    args, wall = _record()
    launch, model, t, Q, QD, QDD, f_ext, res, hyd, cyl = args
    dc = sd.run_design(*args)
    pins = dc.pins.specs
    cyc_kw = sd._cycle_inputs(launch, model, t, launch.doc.design, cyl, dict(
        engine_power=dc.pumps.engine_power, margin=dc.pumps.margin, eta_v=dc.pumps.eta_v, eta_hm=dc.pumps.eta_hm,
        priority=dc.pumps.priority), [])
    rows = [
        ("every pin (λ by the compiled path + batched RNEA backward pass)",
         lambda: pin_loads(model, t, Q, QD, QDD, pins, f_ext=f_ext, actuated=res.names, swing="swing")),
        ("rainflow + damage-equivalent load, all pins",
         lambda: [damage_equivalent_load(periodic_cycles(magnitude_history(w[:, 3:])), **dc.fatigue)
                  for w in dc.pins.wrench.values()]),
        ("rod buckling over the stroke, 3 cylinders",
         lambda: [buckling(n, b.column, b.load / (np.pi * b.column.bore ** 2 / 4), b.threshold)
                  for n, b in dc.buckling.items()]),
        ("pumps against the engine",
         lambda: pump_power(hyd.t, *section_loads(hyd), engine_power=dc.pumps.engine_power, pump_flow=hyd.pump_flow,
                            relief=hyd.relief, margin=dc.pumps.margin, eta_v=dc.pumps.eta_v, eta_hm=dc.pumps.eta_hm)),
        ("shortest-cycle search (SLSQP, 5 segments)", lambda: shortest_cycle(model, f_ext=f_ext, actuated=res.names,
                                                                             **cyc_kw)),
        ("run_design as the job calls it (all of the above)", lambda: sd.run_design(*args)),
    ]
    out = []
    for name, f in rows:
        mn, md = _time(f, reps)
        out.append((name, mn, md))
        print(f"{name}: min {mn * 1e3:.1f} ms, median {md * 1e3:.1f} ms")
    c = dc.cycle
    lines = ["# Design cases: speed (benchmarks/bench_design.py)", "",
             f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC; {platform.processor() or platform.machine()}, "
             f"{os.cpu_count()} CPUs (shared with other jobs); Python {platform.python_version()}; {reps} repeats after "
             "one warm-up; the main job's cycle: "
             f"{len(t)} samples, {len(pins)} pins.", "",
             "| part | min | median |", "|---|---:|---:|"]
    lines += [f"| {n} | {mn * 1e3:.1f} ms | {md * 1e3:.1f} ms |" for n, mn, md in out]
    lines += ["", f"Main job with the design cases, warm, one run: {wall:.1f} s wall.",
              f"Shortest cycle found: {c.total:.2f} s ({c.evaluations} candidate cycles evaluated); binding: "
              + "; ".join(c.to_dict()["binding_limits"]) + ".", "",
              "Targets: the design-case analysis under 10 s and the shortest-cycle search under 30 s. "
              "The stall envelopes (item 1, 2 000 poses) are not part of this branch and not timed here."]
    if not a.quick:
        (HERE / "RESULTS_design.md").write_text("\n".join(lines) + "\n")
        print("wrote", HERE / "RESULTS_design.md")


if __name__ == "__main__":
    main()
