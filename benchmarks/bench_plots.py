"""CPU seconds of the main job's report plots, drawn as the plot worker draws them.

    .venv/bin/python benchmarks/bench_plots.py [--repeat 5] [--commit BEFORE_COMMIT | --tree BEFORE_TREE]

First the main job (``scenarios/excavator_dig.scenario.yaml``, warm caches) runs once in this process with
``URDF_DYN_PLOT_WORKER=0``; every plot it submits to its ``PlotWorker`` (function and arguments) is kept.
Then each repetition starts a fresh process that does what the worker does: its warm-up
(``plotting._plot_worker_init``: matplotlib imported, the garbage collector set), then each plot drawn once,
in the job's order, timed with ``time.process_time`` (user + system CPU of the process). The process holds
less than the real worker, which inherits the job's heap through the fork (its collector then costs more;
``gc.callbacks`` in the worker measure that). With ``--commit`` (exported with ``bench_first_minute.export``)
or ``--tree`` the rows alternate between that tree ("before") and this one ("now"), with the 1-minute load
average before each, and the PNGs of the two trees are compared byte for byte. Under load these are not
verdicts: CPU seconds inflate on a busy machine; compare the pairs, and their medians.
"""
from __future__ import annotations

import argparse
import json
import os
import pickle
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

DRAW = r"""
import json, os, pickle, sys, time
calls = pickle.load(open(sys.argv[1], "rb"))      # unpickling imports the results' modules (the job preloads them)
t0 = time.process_time()
from urdf_dyn.reports.plotting import _plot_worker_init
_plot_worker_init()
res = {"warm-up": time.process_time() - t0}
for path, fn, args in calls:
    p = os.path.join(sys.argv[2], os.path.basename(path))
    args = tuple(p if isinstance(a, (str, os.PathLike)) and str(a) == path else a for a in args)
    t = time.process_time()
    fn(*args)
    res[os.path.basename(path)] = time.process_time() - t
print(json.dumps(res))
"""


def capture(into: Path) -> Path:
    """Run the main job here with the plots drawn in this process and keep each submitted plot call."""
    os.environ["URDF_DYN_PLOT_WORKER"] = "0"
    from urdf_dyn.cli.main import main
    from urdf_dyn.reports import plotting
    calls, submit = [], plotting.PlotWorker.submit

    def keep(self, path, fn, *args, check=None):
        calls.append((str(path), fn, args))
        return submit(self, path, fn, *args, check=check)
    plotting.PlotWorker.submit = keep
    try:
        main(["run", str(ROOT / "scenarios" / "excavator_dig.scenario.yaml"), "--out-dir", str(into / "run")])
    finally:
        plotting.PlotWorker.submit = submit
    f = into / "calls.pkl"
    f.write_bytes(pickle.dumps(calls))
    return f


def draw(tree, calls: Path, out: Path) -> dict:
    """{plot file: CPU s} (and ``warm-up``) of one fresh process of ``tree`` (None: this one)."""
    out.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, PYTHONPATH=str(tree)) if tree else dict(os.environ)
    r = subprocess.run([sys.executable, "-c", DRAW, str(calls), str(out)], env=env, capture_output=True,
                       text=True, check=True, cwd=ROOT)
    return json.loads(r.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--commit", help="the 'before' column: this commit, exported")
    ap.add_argument("--tree", help="the 'before' column: this exported tree (bench_first_minute.export)")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        before = a.tree
        if a.commit:
            sys.path.insert(0, str(ROOT / "benchmarks"))
            from bench_first_minute import export
            before = str(export(a.commit, tmp / "before"))
        calls = capture(tmp)
        trees = ([("before", before)] if before else []) + [("now", None)]
        rows = {name: [] for name, _ in trees}
        for k in range(a.repeat):
            for name, tree in trees:                   # in turn: the machine's load falls on both alike
                load = os.getloadavg()[0]
                r = draw(tree, calls, tmp / name)
                rows[name].append(r)
                print(f"{k + 1} {name:6s} load {load:4.2f}  plots {sum(v for p, v in r.items() if p != 'warm-up'):.3f} "
                      f"CPU-s  warm-up {r['warm-up']:.3f}", flush=True)
        print(f"\nmedian CPU s over {a.repeat} processes each:")
        print(f"{'plot':24s}" + "".join(f"{name:>9s}" for name in rows))
        for p in rows["now"][0]:
            print(f"{p:24s}" + "".join(f"{statistics.median(r[p] for r in rs):9.3f}" for rs in rows.values()))
        print(f"{'plots, total':24s}" + "".join(
            f"{statistics.median(sum(v for p, v in r.items() if p != 'warm-up') for r in rs):9.3f}"
            for rs in rows.values()))
        if before:
            same = [p.name for p in sorted((tmp / "now").glob("*.png"))
                    if (tmp / "before" / p.name).read_bytes() == p.read_bytes()]
            differ = sorted({p.name for p in (tmp / "now").glob("*.png")} - set(same))
            print(f"\nPNGs byte-identical between the trees: {len(same)}; differing: {', '.join(differ) or 'none'}")


if __name__ == "__main__":
    main()
