"""The first minute, side by side: the main job's warm run (with and without the GIF and HTML recording), the
model's load (kept vs built), the first run per kernel with an empty numba cache — each for a "before" tree
(a git commit, exported with ``git archive``) and the working tree, in fresh processes run in turn, with the
1-minute load average before each figure.

    python benchmarks/bench_first_minute.py --before 9a0b0e3 [--runs 5] [--what warm,load,first]

Writes ``benchmarks/RESULTS_first_minute.md`` (the table of this run, added above the earlier ones: the
history is kept). Both trees run with the same interpreter and installed libraries (this tree's ``.venv``);
the "before" tree is put first on ``PYTHONPATH``. The caches (numba kernels, machine checks, models) are the
user's, warmed by one unmeasured run of each tree first, except for ``first`` (an empty numba cache folder).
Speed is never asserted in tests: these are the figures.
"""
from __future__ import annotations

import argparse
import datetime
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PY = str(ROOT / ".venv" / "bin" / "python") if (ROOT / ".venv" / "bin" / "python").exists() else sys.executable


def load_average() -> float:
    return os.getloadavg()[0]


def export(commit: str, into: Path) -> Path:
    """The tree of ``commit`` under ``into`` (git archive), for the "before" column."""
    into.mkdir(parents=True, exist_ok=True)
    arch = subprocess.run(["git", "-C", str(ROOT), "archive", commit], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=arch, check=True)
    (into / "urdf_dyn_viewer").symlink_to("viewer")       # as the install maps it (pyproject package-dir)
    # the editable install's finder maps urdf_dyn to this checkout ahead of sys.path: taken out at start-up
    # (site runs sitecustomize after the .pth files), in every process of the run (PYTHONPATH is inherited)
    (into / "sitecustomize.py").write_text(
        "import sys\nsys.meta_path[:] = [f for f in sys.meta_path if not "
        "str(getattr(f, '__module__', '') or type(f).__module__).startswith('__editable__')]\n")
    return into


def scenario(tree: Path, folder: Path, animation: bool) -> Path:
    """The main job's scenario of ``tree``, with its robot path absolute, without the GIF and the recording
    unless ``animation``."""
    data = yaml.safe_load((tree / "scenarios" / "excavator_dig.scenario.yaml").read_text())
    data["robot"]["file"] = str(tree / "robots" / "excavator.urdf")
    if not animation:
        for k in ("animation", "animation_fps", "animation_size", "recording"):
            data["outputs"].pop(k, None)
    f = folder / f"dig_{'anim' if animation else 'plain'}.yaml"
    f.write_text(yaml.safe_dump(data))
    return f


def _env(tree: Path, **extra) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree), **extra)
    env.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    return env


def module(name: str, *args) -> list:
    """The command ``python -m name args``."""
    return [PY, "-m", name, *map(str, args)]


def code(text: str) -> list:
    return [PY, "-c", text]


def timed(cmd, env) -> tuple[float, float]:
    """(wall seconds, load average before) of one fresh process."""
    la = load_average()
    t0 = time.perf_counter()
    # run from a neutral folder: python puts the working folder first on sys.path (-m, -c)
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   cwd=tempfile.gettempdir())
    return time.perf_counter() - t0, la


def warm_job(trees: dict, runs: int, animation: bool, folder: Path, *flags) -> dict:
    """Median wall time of ``urdf-dyn run`` of the main job per tree (one unmeasured run first), runs taken
    in turn between the trees so that the machine's load falls on both alike; ``flags`` added to the command
    (``--no-cache``: the geometry-only checks recomputed, as after an edit of a section they read)."""
    files = {name: scenario(tree, folder, animation) for name, tree in trees.items()}
    cmds = {name: module("urdf_dyn.cli", "run", files[name], "--out-dir", folder / name, *flags) for name in trees}
    for name in trees:
        timed(cmds[name], _env(trees[name]))
    out = {name: [] for name in trees}
    for _ in range(runs):
        for name in trees:
            out[name].append(timed(cmds[name], _env(trees[name])))
    return out


def model_load(trees: dict, runs: int) -> dict:
    """Median wall time of a process that imports urdf_dyn and loads the excavator (the model kept where the
    tree keeps it)."""
    out = {name: [] for name in trees}
    cmds = {name: code(f"import urdf_dyn; assert urdf_dyn.__file__.startswith({str(tree)!r}); "
                       f"urdf_dyn.load({str(tree / 'robots' / 'excavator.urdf')!r})") for name, tree in trees.items()}
    for name, tree in trees.items():
        timed(cmds[name], _env(tree))
    for _ in range(runs):
        for name, tree in trees.items():
            out[name].append(timed(cmds[name], _env(tree)))
    return out


def first_job(trees: dict, folder: Path, animation: bool) -> dict:
    """Wall time of the main job with an empty numba cache folder, then of the second run on that cache."""
    out = {}
    for name, tree in trees.items():
        f = scenario(tree, folder, animation)
        cache = Path(tempfile.mkdtemp(prefix="xdg-", dir=folder))    # numba's, the checks', the models'
        env = _env(tree, XDG_CACHE_HOME=str(cache))
        env.pop("NUMBA_CACHE_DIR", None)
        cmd = module("urdf_dyn.cli", "run", f, "--out-dir", folder / f"first_{name}")
        out[name] = [timed(cmd, env), timed(cmd, env)]
    return out


def readme_command_1() -> tuple[str, str]:
    """README command 1, split into (the install, the first job) at ``&& .venv/bin/urdf-dyn``."""
    import re
    text = (ROOT / "README.md").read_text()
    line = re.search(r"^# 1\..*\n(python3 -m venv .*)$", text, re.M).group(1)
    install, job = line.split(" && .venv/bin/urdf-dyn ", 1)
    return install, ".venv/bin/urdf-dyn " + job


def fresh_clone(ref: str, runs: int, folder: Path) -> list:
    """README command 1 as a new user meets it: ``git clone`` of this repository at ``ref`` into ``folder``,
    empty uv, numba and urdf_dyn caches (``UV_CACHE_DIR``, ``XDG_CACHE_HOME`` pointing at empty folders), the
    install and the first job timed apart, then ``runs`` warm runs of the same command. Rows of (what,
    [(wall, load before)]); the first job's peak memory is taken by GNU time where there is one."""
    import shutil
    clone = folder / "clone"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    subprocess.run(["git", "-C", str(clone), "checkout", "-q", ref], check=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "URDF_DYN", "VIRTUAL_ENV"))}
    env.update(XDG_CACHE_HOME=str(folder / "xdg"), UV_CACHE_DIR=str(folder / "uv"), PYTHONDONTWRITEBYTECODE="1")
    install, job = readme_command_1()
    gnu_time = shutil.which("time") or ("/usr/bin/time" if os.path.exists("/usr/bin/time") else None)

    def sh(cmd, peak=None):
        la = load_average()
        t0 = time.perf_counter()
        full = [gnu_time, "-f", "%M", "-o", str(peak), "bash", "-c", cmd] if peak and gnu_time else ["bash", "-c", cmd]
        subprocess.run(full, cwd=clone, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return time.perf_counter() - t0, la
    rows = [("README command 1: the install (fresh clone, empty uv cache)", [sh(install)])]
    first = sh(job, folder / "peak_kb")
    peak = (folder / "peak_kb").read_text().strip().splitlines()[-1] if (folder / "peak_kb").exists() else "?"
    rows.append((f"README command 1: the first job (empty numba and urdf_dyn caches; peak RSS {peak} kB)", [first]))
    rows.append(("the same command again (warm)", [sh(job) for _ in range(runs)]))
    return rows


def recording_messages(html_path: Path) -> tuple[int, int]:
    """(all messages, messages naming ``/arrows…``) of a recording (viser's embedded zstd msgpack)."""
    import base64
    import re

    import msgspec
    import zstandard
    html = html_path.read_text()
    b = base64.b64decode(re.search(r'__VISER_EMBED_DATA__="([^"]*)"', html).group(1))
    inner = zstandard.ZstdDecompressor().decompress(b[8:], max_output_size=int.from_bytes(b[:8], "little"))
    n = int.from_bytes(inner[:8], "little")
    msgs = msgspec.msgpack.decode(inner[8:8 + n])["messages"]
    return len(msgs), sum(1 for _, m in msgs if str(m.get("name", "")).startswith("/arrows"))


def _cell(samples) -> str:
    walls = [w for w, _ in samples]
    las = [la for _, la in samples]
    return (f"{statistics.median(walls):.2f} s (median of {len(walls)}; {min(walls):.2f}–{max(walls):.2f}; "
            f"load {min(las):.1f}–{max(las):.1f})")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--before", default="main", help="git commit of the 'before' column")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--what", default="warm,load", help="comma list of: warm, anim, nocache (warm, the checks "
                    "recomputed: --no-cache), load, first, clone (README command 1 on a fresh clone of --ref, install "
                    "and first job timed apart, then --runs warm runs)")
    ap.add_argument("--ref", default="HEAD", help="the commit --what clone checks out")
    ap.add_argument("--out", default=str(HERE / "RESULTS_first_minute.md"))
    args = ap.parse_args()
    what = set(args.what.split(","))
    rows, notes = [], []
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        trees = {"before": export(args.before, d / "before"), "now": ROOT}
        if "load" in what:
            r = model_load(trees, args.runs)
            rows.append(("import urdf_dyn + load the excavator (fresh process, warm caches)", r))
        if "warm" in what:
            r = warm_job(trees, args.runs, False, d)
            rows.append(("warm main job without the animation", r))
        if "nocache" in what:
            r = warm_job(trees, args.runs, False, d, "--no-cache")
            rows.append(("warm main job without the animation, the machine checks recomputed (--no-cache)", r))
        if "anim" in what:
            r = warm_job(trees, args.runs, True, d)
            rows.append(("warm main job with the GIF and the HTML recording", r))
            counts = {name: recording_messages(d / name / "dig_cycle.html") for name in trees}
            notes.append("viser messages in the recording (all / arrows): " + "; ".join(
                f"{name} {a} / {b}" for name, (a, b) in counts.items()))
        if "clone" in what:
            for label, samples in fresh_clone(args.ref, args.runs, d):
                rows.append((label, {"now": samples}))
        if "first" in what:
            for anim in (False,):
                r = first_job(trees, d, anim)
                rows.append(("first main job, empty numba and urdf_dyn caches (no animation)",
                             {k: v[:1] for k, v in r.items()}))
                rows.append(("second main job on that cache", {k: v[1:] for k, v in r.items()}))
    stamp = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    lines = [f"## {stamp}: before = `{args.before}`, now = the working tree ({os.cpu_count()} cores)", "",
             "| what | before | now |", "|---|---|---|"]
    lines += [f"| {what} | {_cell(r['before']) if 'before' in r else '–'} | {_cell(r['now'])} |" for what, r in rows]
    lines += [""] + [f"- {n}" for n in notes] if notes else []
    text = "\n".join(lines) + "\n"
    print(text)
    out = Path(args.out)
    head = "# The first minute: warm run, model load, first run (bench_first_minute.py)\n\n"
    old = out.read_text()[len(head):] if out.exists() and out.read_text().startswith(head) else ""
    out.write_text(head + text + "\n" + old)


if __name__ == "__main__":
    main()
