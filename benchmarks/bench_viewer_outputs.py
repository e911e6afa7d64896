"""CPU seconds of the main job's two viewer processes, the GIF's and the HTML recording's, inside the warm main
job (``urdf-dyn run scenarios/excavator_dig.scenario.yaml``): each process (``urdf_dyn.jobs.outputs``'
``_ForkedOutput._child``, wrapped here) reports ``time.process_time()`` (its threads included; a forked process
starts at zero) at the end of its warm-up (``_warm``) and around its writing (``_write``), and the job's own
process its CPU time and wall time.

    python benchmarks/bench_viewer_outputs.py OUT_DIR [--before COMMIT] [--after COMMIT] [--pairs 3]
                                              [--after-env NAME=VALUE]

With ``--before`` the job of that commit (exported as ``bench_first_minute.export`` does) and of this tree
(or of ``--after``'s commit) run in turn (before, after, before, after ...), one unmeasured run of each first; the medians are printed
side by side. Each tree's run folder stays in OUT_DIR/<before|after>/ to compare the outputs. The 1-minute
load average is printed with each run: the processes share 2 cores with the job and its plot worker, so
the figures move with the load.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_first_minute import PY, ROOT, _env, export, load_average, scenario

CHILD = r"""
import json, os, sys, time
from urdf_dyn.jobs import outputs as O
where = sys.argv[1]
child = O._ForkedOutput._child

def timed_child(self, conn, go, shared=None, host=()):
    rec, warm, write = {}, self._warm, self._write
    def w(shared=None):
        r = warm(shared)
        rec["warm"] = time.process_time()
        return r
    def wr(*a):
        c = time.process_time()
        write(*a)
        rec["write"] = time.process_time() - c
    self._warm, self._write = w, wr
    try:
        child(self, conn, go, shared, host)
    finally:
        with open(os.path.join(where, self.key + ".json"), "w") as f:
            json.dump(rec, f)

O._ForkedOutput._child = timed_child
from urdf_dyn.cli.main import main
c, t = time.process_time(), time.perf_counter()
rc = main(sys.argv[2:])
with open(os.path.join(where, "job.json"), "w") as f:
    json.dump({"cpu": time.process_time() - c, "wall": time.perf_counter() - t, "rc": rc}, f)
"""

KEYS = ("animation.warm", "animation.write", "recording.warm", "recording.write", "job.cpu", "job.wall")


def run(tree: Path, scen: Path, out: Path, env=()) -> dict:
    where = Path(tempfile.mkdtemp(prefix="bvo_"))
    la = load_average()
    subprocess.run([PY, "-c", CHILD, str(where), "run", str(scen), "--out-dir", str(out)], env=_env(tree, **dict(env)),
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tempfile.gettempdir())
    d = {"load": la}
    for name in ("animation", "recording", "job"):
        for k, v in json.loads((where / f"{name}.json").read_text()).items():
            d[f"{name}.{k}"] = v
    return d


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out_dir", type=Path)
    ap.add_argument("--before")
    ap.add_argument("--after", help="a commit to time instead of this working tree (exported likewise)")
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--after-env", action="append", default=[], help="NAME=VALUE for the after tree's runs")
    a = ap.parse_args()
    a.out_dir.mkdir(parents=True, exist_ok=True)
    trees = {}
    for name, commit in (("before", a.before), ("after", a.after)):
        if commit:
            trees[name] = export(commit, Path(tempfile.mkdtemp(prefix="bvo_tree_")))
            subprocess.run([PY, "-m", "compileall", "-q", str(trees[name] / "urdf_dyn"), str(trees[name] / "viewer")],
                           check=True)
    trees.setdefault("after", ROOT)
    scen = {name: scenario(tree, a.out_dir, True).rename(a.out_dir / f"dig_{name}.yaml") for name, tree in trees.items()}
    for name, tree in trees.items():
        run(tree, scen[name], a.out_dir / name)
    rows = {name: [] for name in trees}
    for p in range(a.pairs):
        for name, tree in trees.items():
            d = run(tree, scen[name], a.out_dir / name, [e.split("=", 1) for e in a.after_env] if name == "after" else ())
            rows[name].append(d)
            print(f"{p} {name:6s} " + "  ".join(f"{k} {d[k]:.3f}" for k in KEYS) + f"  load {d['load']:.2f}",
                  flush=True)
    for name in trees:
        med = {k: statistics.median(r[k] for r in rows[name]) for k in KEYS}
        print(f"median {name:6s} " + "  ".join(f"{k} {med[k]:.3f}" for k in KEYS)
              + f"  (GIF+recording {sum(med[k] for k in KEYS[:4]):.3f} CPU-s)")


if __name__ == "__main__":
    sys.exit(main())
