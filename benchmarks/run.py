"""urdf_dyn speed benchmarks, side by side with Pinocchio and MuJoCo in one process (issues: speed, 14).

    python benchmarks/run.py            # writes benchmarks/RESULTS.md (takes a few minutes)
    python benchmarks/run.py --quick    # fewer repeats and sizes, for a smoke test

Every timing is the min and the median over repeats of a loop of calls; ratios are ours / peer (lower
is better). Numba kernels are compiled (and cached) before timing.
"""
from __future__ import annotations

import argparse
import datetime
import os
import sys
import time
from pathlib import Path


HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SHARED = Path(os.environ.get("URDF_DYN_SHARED_DATA") or ROOT.parent / "shared" / "data")  # a worktree may keep it elsewhere
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))


from bench_common import us, versions  # noqa: E402
from bench_dynamics import (batched_id, batched_threads, closed_loop_fd, closed_loop_id, floating_per_call,  # noqa: E402
                           growth, ladder, memory, trajectory_dynamics, tree_per_call)
from bench_jobs import animation_export, install, startup, wall_times  # noqa: E402


def verdict(ok, text):
    return f"{text}: " + ("**met**" if ok else "**missed**")


#: the tracked targets' "before" figures (measured on main before the work, same machine)
BEFORE = {"cid1": "205 µs = 42× mj_inverse", "cfd1": "1 018 µs = 131× mj_forward", "UR5 ID": "1.55×", "UR5 H": "1.93×",
          "UR5 FD (ABA)": "1.40×", "Panda ID": "1.4×", "Panda H": "1.9×", "Panda FD (ABA)": "1.2×",
          "install": "68 s, 1.2 GB", "first": "≈ 64 s", "warm": "6.5–7.3 s", "batched": "1.66×", "threads": "0.51–0.55×"}


def verdicts(per, bat, thr, cl, traj, cid, anim, start, wall, mem):
    """One line per tracked target (before → after), then the earlier ones still tracked."""
    out = []
    for what, o, p, _ in cid:
        if what.startswith("one state"):
            out.append(verdict(o[0] <= 3 * p[0], f"- one state, closed-loop ID + actuator + loop forces (excavator, "
                               f"`actuator_forces` on its Data): before {BEFORE['cid1']}; now {us(o[0])} µs vs mj_inverse "
                               f"{us(p[0])} µs = {o[0] / p[0]:.1f}× (target ≤ 3×)"))
    for m, o, p in cl:
        if m == "nullspace":
            out.append(verdict(o[0] <= 3 * p[0], f"- one state of `constrained_forward_dynamics` (default method, compiled "
                               f"on its Data): before {BEFORE['cfd1']}; now {us(o[0])} µs vs mj_forward {us(p[0])} µs = "
                               f"{o[0] / p[0]:.1f}× (target ≤ 3×)"))
    for name, nv, what, o, p in per:
        if name in ("UR5", "Panda"):
            out.append(verdict(o[0] <= 1.5 * p[0], f"- one call {name} {what}: before {BEFORE.get(f'{name} {what}', '?')}; "
                               f"now {us(o[0])} µs vs Pinocchio {us(p[0])} µs = {o[0] / p[0]:.2f}× (target ≤ 1.5×)"))
    for what, o, p, _ in cid:
        if what.startswith("batches"):
            out.append(verdict(o[0] <= 2 * p[0], f"- batched closed-loop ID per sample, {what}: before {BEFORE['batched']}; "
                               f"now {us(o[0])} µs vs mj_inverse {us(p[0])} µs = {o[0] / p[0]:.2f}× (target ≤ 2×)"))
    for name, N, th, o, p in thr:
        out.append(verdict(o <= 0.7 * p, f"- batched ID {name} N = {N}, {th} thread(s) each: before {BEFORE['threads']}; "
                           f"now {us(o)} vs pin.rneaInParallel {us(p)} µs/sample = {o / p:.2f}× (target ≤ 0.7×)"))
    first = [r for r in start if r[0].startswith("first")]
    inst = [r for r in start if r[0].startswith("python3 -m venv")]
    if inst:
        out.append(verdict(inst[0][1] <= 20.0, f"- install (README command 1's venv + uv line, uv's cache warm): "
                           f"before {BEFORE['install']}; now {inst[0][1]:.1f} s, {inst[0][2]:.0f} MB (target ≤ 20 s)"))
    if first:
        out.append(verdict(first[0][1] <= 25.0, f"- first job with empty numba and check caches, as the README runs it (GIF and "
                           f"recording included): before {BEFORE['first']}; now {first[0][1]:.1f} s wall (target ≤ 25 s)"))
    if first and inst:
        t = first[0][1] + inst[0][1]
        out.append(verdict(t <= 45.0, f"- README command 1: install {inst[0][1]:.1f} s (uv's cache warm) + first job "
                           f"{first[0][1]:.1f} s = {t:.1f} s (target ≤ 45 s on a fresh clone with empty caches: "
                           f"the verdict is benchmarks/RESULTS_first_minute.md's, this row only tracks it)"))
    warm = [r for r in start if r[0] == "warm run"]
    for label, wall_s, imp, tot in sorted(warm, key=lambda r: r[1])[:1]:  # the best warm run
        out.append(verdict(wall_s <= 3.0, f"- {label} of the job without the animation: before {BEFORE['warm']}; now "
                           f"{wall_s:.2f} s wall (the job itself {tot - imp:.2f} s in the process; target ≤ 3 s)"))
    for label, wall_s, imp, tot in (r for r in start if "--no-cache" in r[0]):
        out.append(f"- {label}: {wall_s:.2f} s wall (the job itself {tot - imp:.2f} s in the process; a second run "
                   "of the same machine reuses ISO 6015, the lift chart, the working ranges and the stall "
                   "envelopes, and their plots, from the first run — `jobs.disk_cache`)")
    warm = [r for r in start if r[0] == "warm run with the animation"]
    for label, wall_s, imp, tot in sorted(warm, key=lambda r: r[1])[:1]:
        out.append(verdict(wall_s <= 4.5, f"- {label} (GIF and HTML recording, as the README runs it): now "
                           f"{wall_s:.2f} s wall (target ≤ 4.5 s)"))
    for label, wall_s, _, _ in (r for r in start if r[0].startswith("CLI on bad input")):
        out.append(verdict(wall_s <= 1.0, f"- a CLI command that fails on bad input: {wall_s:.2f} s wall (target ≤ 1 s)"))
    out += ["", "Earlier targets still tracked:", ""]
    for name, N, t, p in traj:
        if p is not None:
            out.append(verdict(t[0] <= 0.3, f"- main-job dynamics (consistent motion + sizing), {N} samples: "
                               f"{t[0]:.3g} s warm (target ≤ 0.3 s)"))
    for m, o, p in cl:
        if m.startswith("fast_qdd"):
            out.append(verdict(o[0] <= 3 * p[0], f"- `fast_qdd` simulator step {us(o[0])} µs vs mj_forward {us(p[0])} µs = "
                               f"{o[0] / p[0]:.1f}× (target ≤ 3×)"))
    for n, total, r, e in anim:
        if isinstance(total, float):
            out.append(verdict(total <= 2.0, f"- dig-cycle GIF ({n} frames, 640×480): {total:.2f} s (target ≤ 2 s)"))
    for job, sec in wall:
        if job.startswith("simulate") and "10 s" in job:
            out.append(verdict(sec <= 2, f"- 10 s excavator simulation: {sec:.1f} s wall (target ≤ 2 s)"))
    for name, N, b, p in mem:
        out.append(verdict(p <= 1024, f"- batched ID at N = {N}: peak RSS {p:.0f} MiB (target ≤ 1 GB)"))
    return out


WHY = """## Reading these numbers

Measured on a quiet machine (no other developer's process; the load average of each section is in the line at
the top): ratios are ours / the peer's in the same process a moment apart. The machine is a 2-core
Firecracker VM whose timings still move by ±5–10 % run to run, and a section that meets a burst of another
process's work can read 1.5× slower (an earlier run of this same code read one state of `actuator_forces` at
22 µs and the 2-thread batch at 0.73×; two reruns of those sections minutes later read 14.0 µs and 0.54–0.56×).

## What was built for these targets

- **Lean core install.** Core dependencies are what the main job imports; `[sweep]` (dask, pyarrow), `[ros]`
  (mcap), `[gauss]` (sympy), `[video]` (imageio-ffmpeg), `[viewer]`, `[mujoco]`, `[all]`; a command that needs
  a missing extra names it in one line, exit status 2 (`urdf_dyn.extras.require`).
- **Single-state calls on a `Data`.** `actuator_forces` / `constrained_inverse_dynamics` (`actuation_one`) and
  `constrained_forward_dynamics` (`forward_one`, RBDA §8.5 method 3) at one state run on a plan kept in the
  Data: the independent set of RBDA §8.8 is kept between calls and re-checked (`explicit_kept`, the same
  step the batch path runs), not re-chosen by complete pivoting; the model side is packed into one int64 and
  one float64 array (9 and 12 arguments to unbox instead of 30 and 26); the kernels return a status and
  write into the result's own buffer, whose arrays the result's fields view; the keyword wrapper is gone
  from the two calls. Forward dynamics answers on the compiled path only where it proves the kept set's size
  is the SVD rank with no singular value near the threshold (`_certified`), else the readable path answers
  and warns as before. Tests hold every path to the readable reference on every robot with loops
  (tests/constraints/test_single_state.py, ≤ 1e-12 relative for u, τ_ID, q̈).
- **One-call CRBA.** The kernel allocates 3 work arrays instead of 11 and keeps its per-body temporaries in
  scalars (UR5 1.18 → 0.80 µs, Panda 1.51 → 0.86 µs for the kernel alone); H is still returned full.
- **Compile.** Every kernel compiles one variant in the main job (tests/jobs/test_compile_variants.py counts
  numba's signatures with an empty cache, callees included: the workspace views of `constraints/_sample`
  compiled 32 variants on a first run, one per literal part number, until the numbers became numpy ints); the cache is keyed by the kernel modules' contents and shared by checkouts
  (tests/algorithms/test_kernel_cache.py, which also fails if a module with compiled code is left out of
  the key).
- **The machine checks kept between runs** (`jobs.disk_cache`): ISO 6015, the lift chart, the working ranges
  and the stall envelopes depend only on the robot and a few scenario sections; their results and plots are
  kept under `~/.cache/urdf_dyn/checks/`, keyed by those sections, the model's content (the expanded URDF
  and every array the algorithms read) and the library's sources, so a second run of the same machine —
  another soil, motion or payload — takes them from there and says so; `--no-cache` recomputes them (the
  row "machine checks recomputed" above is that run).
- **The warm job**: working ranges with one forward-kinematics pass per stroke point, `body_poses` with its
  4×4 products written out, one body-pose pass per motion shared by the loads, the tipping margin and the
  pins (`machines.poses`; six before), the recording's poses set without viser's per-call setter, and the
  HTML recording written by a forked process while the GIF is drawn (in a thread its 2.3 s of Python shared
  the GIL with the GIF's loop; the file is byte-identical).
- **The model kept by content, the arrows batched, the viewer's URL first** (RESULTS_first_minute.md, before/after
  side by side with the load average): `urdf_dyn.load` of a URDF/xacro file reuses the Model kept under
  `~/.cache/urdf_dyn/models` while the file, every file its build read and the library are unchanged (a warm
  run imports neither yourdfpy nor trimesh: process + load 2.47 → 0.83 s, warm job without the animation
  6.62 → 5.06 s, with it 15.41 → 12.89 s, medians of 3 at load 4.3–6.2); the recording sends one
  arrows node per kind and sample (arrow messages 7 153 → 901, all 14 901 → 8 649); the browser viewer prints
  its URL before drawing the force plot; a tqdm bar names the kernel numba compiles once a compilation takes
  over a second.
- **Sweeps** (RESULTS_sweep.md): the geometry-only checks once per worker and robot (and from the disk when
  an earlier run kept them), per-case plots off unless `sweep.plots: true`, cases sent to Dask in groups,
  each worker warmed up with one coarse case.

## Why the misses remain, and what would close them (2026-11-28 15:17–15:19, main at `8ebce5f`)

This run's load average was 0.55 at its start and 1.67 at its end (its own jobs' processes); a CPU probe
(`sum(i*i for i in range(10**7))` in one process) read 0.70 CPU-s at its start and 0.51 at its end (0.50–0.92
over the day: the machine's speed moves between a fast and a slow state). 17 of 17 target rows met. The
first minute's verdicts are the fresh clones' (RESULTS_first_minute.md, 14:57–15:02, in turn with the
session-start tree `b96320e`): the install 13.6–14.5 s, the first job 18.7–19.9 s, README command 1
32.6–34.4 s, the warm job with the animation 3.79 s median and without it 2.29 s (all met).

- **First job with empty caches (18.5 s here; met).** CPU-bound: ≈ 34.5 CPU-s on 2 cores, of which the two
  compile workers take ≈ 20 (from ≈ 1 to ≈ 11 s, both cores; the job waits for its kernels until its plan is
  done), then the motion, the checks (with the stall and lateral cases in forked children), the GIF, the
  recording and the plots on both cores to the end. The workers are now forked from the job once it has
  loaded numba (`da50a69`): ≈ 0.9 CPU-s less for each, 18.0–18.2 against 19.3–22.5 s in turn. On this
  machine's slow state (probe 0.76–0.90, ≈ 1.4× the CPU seconds) that CPU would take ≈ 25–27 s: what would
  make it safe there is ≈ 3 CPU-s less compiling (LLVM re-optimises every linked callee inside each caller:
  2.6–2.8 of `_actuation_samples`' 5 CPU-s, `benchmarks/compile_stages.py`; `NUMBA_OPT=2` and dropping the
  kernels' cfunc wrappers saved nothing).
- **The warm job with the animation (4.11 s here; met).** CPU-bound on 2 cores: 6–9 CPU-s (the job 1.8–2.0,
  the plot worker 1.2–1.4, the GIF's process 2.1–2.7, the recording's 1.9–2.4). In the GIF's process the main
  thread's drawing and reading 1.2 CPU-s, llvmpipe's rasteriser threads 0.65, Pillow's LZW ≈ 0.5 (14:10,
  `/proc/self/task`); the recording is mostly viser's message handling. It measured 5.27 s on the slow
  state (11:24): ≈ 1.5 CPU-s less would make it safe there, which only fewer frames or a cheaper rasteriser
  than llvmpipe would give.
- **The warm job with its machine checks recomputed** (`--no-cache`, as after an edit of a section they read;
  not a target): 7.05 s here; 9.15 → 6.85 s median of 5 when the stall envelopes and the lateral cases moved
  beside the job's motion (`bench_first_minute.py --what nocache`, 13:00).
- **The dig-cycle GIF alone (2.06 s; target 2 s):** the same 318 frames: the drawing, llvmpipe's
  rasterising and Pillow's LZW, as above; 2.9 s in the run before (13:00), the same code.
- **The 10 s excavator simulation (2.5 s; target 2 s):** not worked on in this round.
- **UR5 ID, H and FD: met with margin** (1.04×, 1.16×, 0.94× Pinocchio): the single-state entries run RNEA,
  CRBA and ABA on work arrays in their own stack frame (no heap allocation, no reference count) and check nq
  and nv themselves, so that Python checks only what unboxing trusts.
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", default=str(HERE / "RESULTS.md"))
    ap.add_argument("--only", default="", help="comma-separated section names to run (default: all)")
    ap.add_argument("--readme", action="store_true", help="write the README's speed block also for --only/--quick")
    args = ap.parse_args()
    cpu, ver = versions()
    per, bat, thr, cl, traj, cid, anim, start, wall, gro, lad, mem = ([] for _ in range(12))
    sections = (("tree per call", lambda: tree_per_call(per, args.quick)),
                ("batched ID", lambda: batched_id(bat, args.quick)),
                ("floating per call", lambda: floating_per_call(per, args.quick)),
                ("batched ID threads", lambda: batched_threads(thr, args.quick)),
                ("closed-loop FD", lambda: closed_loop_fd(cl, args.quick)),
                ("trajectory dynamics", lambda: trajectory_dynamics(traj, args.quick)),
                ("closed-loop ID", lambda: closed_loop_id(cid, args.quick)),
                ("animation", lambda: animation_export(anim, args.quick)),
                ("startup", lambda: startup(start, args.quick)),
                ("install", lambda: install(start, args.quick)),
                ("growth", lambda: growth(gro, args.quick)), ("ladder", lambda: ladder(lad, args.quick)),
                ("memory", lambda: memory(mem)), ("wall times", lambda: wall_times(wall, args.quick)))
    only = {x.strip() for x in args.only.split(",") if x.strip()}
    load = []
    for name, f in sections:
        if only and name not in only:
            continue
        t0 = time.perf_counter()
        print(f"{name} ...", end=" ", flush=True)
        f()
        load.append(os.getloadavg()[0])
        print(f"{time.perf_counter() - t0:.1f} s", flush=True)
    L = [f"# urdf_dyn benchmarks", "",
         f"Measured {datetime.date.today().isoformat()} by `python benchmarks/run.py{' --quick' if args.quick else ''}` "
         f"on {cpu}, {os.cpu_count()} cores, shared (1-minute load average during the run "
         f"{min(load, default=0):.1f}–{max(load, default=0):.1f}); " + ", ".join(f"{k} {v}" for k, v in ver.items()) + ".",
         "Times are the minimum over repeats (median in brackets); ratio = ours / peer, lower is better.", "",
         "## Targets (before → now)", ""]
    L += verdicts(per, bat, thr, cl, traj, cid, anim, start, wall, mem)
    L += ["", "## Main-job dynamics through closed loops (excavator, 12 dof, 4 loops, 4 actuators)", "",
          "| stage | samples | compiled path s | readable reference µs/sample | compiled µs/sample |", "|---|---:|---:|---:|---:|"]
    for name, N, t, p in traj:
        L.append(f"| {name} | {N} | {t[0]:.3g} ({t[1]:.3g}) | {'' if p is None else f'{p[0] * 1e6:.0f}'} | {t[0] / N * 1e6:.1f} |")
    L += ["", "## Closed-loop inverse dynamics per sample (shared excavator) vs MuJoCo `mj_inverse`", "",
          "| urdf_dyn (ID eq. 8.62 + actuator forces 8.63 + loop forces) | µs | mj_inverse µs | ratio |", "|---|---:|---:|---:|"]
    for what, o, p, settings in cid:
        L.append(f"| {what} | {us(o[0])} ({us(o[1])}) | {us(p[0])} ({us(p[1])}) | {o[0] / p[0]:.2f} |")
    if cid:
        L += ["", f"MuJoCo settings: {cid[0][3]}."]
    L += ["", "## Tree dynamics, one call (target: ≤ 2× Pinocchio for UR5 and Panda)", "",
          "| robot | nv | algorithm | urdf_dyn µs | Pinocchio µs | ratio |", "|---|---:|---|---:|---:|---:|"]
    for name, nv, what, o, p in per:
        L.append(f"| {name} | {nv} | {what} | {us(o[0])} ({us(o[1])}) | {us(p[0])} ({us(p[1])}) | {o[0] / p[0]:.1f} |")
    L += ["", "## Batched inverse dynamics at equal threads (UR5, N = 10 000; target ≤ 0.7× pin.rneaInParallel)", "",
          "| robot | N | threads (each) | urdf_dyn µs/sample | pin.rneaInParallel µs/sample | ratio |", "|---|---:|---:|---:|---:|---:|"]
    for name, N, th, o, p in thr:
        L.append(f"| {name} | {N} | {th} | {us(o)} | {us(p)} | {o / p:.2f} |")
    L += ["", "## Batched inverse dynamics, per sample, against a Python loop over pin.rnea", "",
          "| robot | N | urdf_dyn batch µs | Python loop over pin.rnea µs | pin.rneaInParallel (1 thread) µs | ratio to loop | ratio to rneaInParallel |",
          "|---|---:|---:|---:|---:|---:|---:|"]
    for name, N, o, p, par in bat:
        L.append(f"| {name} | {N} | {us(o)} | {us(p)} | {us(par)} | {o / p:.2f} | {o / par:.2f} |")
    L += ["", "## Closed-loop forward dynamics, excavator (shared MJCF-derived model; `fast_qdd` target ≤ 3× mj_forward)", "",
          "| method | urdf_dyn µs | MuJoCo mj_forward µs | ratio |", "|---|---:|---:|---:|"]
    for m, o, p in cl:
        L.append(f"| {m} | {us(o[0])} ({us(o[1])}) | {us(p[0])} ({us(p[1])}) | {o[0] / p[0]:.0f} |")
    L += ["", "## Animation export (dig-cycle GIF, 15 fps, 640×480; target ≤ 2 s)", "",
          "| frames | total s | rendering s | one palette + encoding s |", "|---:|---:|---:|---:|"]
    for n, total, r, e in anim:
        if isinstance(total, float):
            L.append(f"| {n} | {total:.2f} | {r:.2f} | {e:.2f} |")
    L += ["", "## Start-up: the job without the animation, in a fresh process (target ≤ 3 s warm)", "",
          "| run | process wall s | `import urdf_dyn.cli.main` s | in-process job s |", "|---|---:|---:|---:|"]
    for label, wall_s, imp, tot in start:
        if label.startswith("python3 -m venv"):
            imp = tot = float("nan")       # the install row holds (seconds, MB)
        L.append(f"| {label} | {wall_s:.2f} | {'' if imp != imp else f'{imp:.2f}'} | {'' if tot != tot else f'{tot:.2f}'} |")
    L += ["", "## Wall times", "", "| job | wall s |", "|---|---:|"]
    for job, sec in wall:
        L.append(f"| {job} | {sec:.2f} |")
    L += ["", "## Cost growth with the number of bodies (chain, one call, µs)", "",
          "| bodies | ID (RNEA) | FD (ABA) | H (CRBA) |", "|---:|---:|---:|---:|"]
    for n, a, b, c in gro:
        L.append(f"| {n} | {us(a)} | {us(b)} | {us(c)} |")
    L += ["", "## Ladder of RBDA Fig. 8.4: spanning-tree vs sparse (§8.13) closed-loop FD, one call (µs)", "",
          "| rungs | nv | nullspace (§8.8) | lambda (§8.5 method 2) | sparse (§8.13) |", "|---:|---:|---:|---:|---:|"]
    for k, nv, a, b, c in lad:
        L.append(f"| {k} | {nv} | {us(a)} | {us(b)} | {us(c)} |")
    L += ["", "## Peak memory of a batched ID", "", "| robot | N | RSS before MiB | peak RSS MiB |", "|---|---:|---:|---:|"]
    for name, N, b, p in mem:
        L.append(f"| {name} | {N} | {b:.0f} | {p:.0f} |")
    L += ["", WHY]
    Path(args.out).write_text("\n".join(L) + "\n")
    print(f"wrote {args.out}")
    if args.readme or not (args.quick or only):
        readme_speed(L[2:L.index("Earlier targets still tracked:")])


def readme_speed(lines):
    """Put a five-line summary of this run's verdicts into the README's speed block (between its two markers):
    when and where it was measured, how many targets were met, the first three verdicts (one state of
    closed-loop ID and FD against MuJoCo, UR5 ID against Pinocchio) and a link to the dated log in RESULTS.md."""
    readme = ROOT / "README.md"
    text = readme.read_text()
    a, b = "<!-- speed: written by benchmarks/run.py -->", "<!-- /speed -->"
    if a not in text or b not in text:
        return
    body = [x for x in lines if x.strip() and not x.startswith("#")]
    verdicts = [x for x in body if x.startswith("- ")]
    met = sum(x.rstrip().endswith("**met**") for x in verdicts)
    judged = sum(x.rstrip().endswith(("**met**", "**missed**")) for x in verdicts)
    summary = [body[0].split(" on ")[0] + ": "
               f"{met} of {judged} targets met; every table, the misses' profiles and the dated log in "
               "[benchmarks/RESULTS.md](benchmarks/RESULTS.md)."] + verdicts[:3] + [
               "- the install, the first job and the warm job: [benchmarks/RESULTS.md](benchmarks/RESULTS.md)"]
    text = text[:text.index(a) + len(a)] + "\n" + "\n".join(summary[:5]) + "\n" + text[text.index(b):]
    readme.write_text(text)
    print(f"wrote the speed block of {readme}")


if __name__ == "__main__":
    main()

