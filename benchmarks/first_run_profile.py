"""The first run of the main job, per kernel and per phase: what numba compiles, for how long, and where the rest
of the minute goes — run in this process with an empty numba cache and empty urdf_dyn caches (a temporary
``XDG_CACHE_HOME`` and ``NUMBA_CACHE_DIR``) unless told otherwise.

    python benchmarks/first_run_profile.py [--scenario FILE] [--json out.json] [--write-list] [--ahead]
    python benchmarks/first_run_profile.py --list-only     # the listed kernels alone: CPU seconds each

Per kernel: numba's ``"numba:compile"`` events (``numba.core.event``): exclusive seconds (without the nested
compilations of its callees), inclusive seconds, signatures. Per phase: the job's steps (model load, the
geometry-only checks, the consistent motion, sizing, the kind's checks, outputs) wrapped with a clock, and the
compile seconds inside each. ``--write-list`` writes ``urdf_dyn/cli/kernel_list.py``, the kernels the main job
compiles, in the order it compiles them and grouped by the call that compiled them (``urdf_dyn.cli.compiling``
compiles these groups ahead in worker processes on a machine's first run).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
T0 = time.perf_counter()


def _setup_caches(keep: bool, ahead: bool):
    os.environ["URDF_DYN_COMPILE_AHEAD"] = "on" if ahead else "off"  # off: this process compiles every kernel
    if keep:
        return
    d = tempfile.mkdtemp(prefix="first_run_")
    os.environ["XDG_CACHE_HOME"] = d
    os.environ.pop("NUMBA_CACHE_DIR", None)     # urdf_dyn keys it under XDG_CACHE_HOME


class Recorder:
    """Every compilation: (kernel, signature, start, end, exclusive seconds, depth, top-level index, exclusive
    CPU seconds of the compiling thread). Wall seconds are the job's clock; CPU seconds are the verdict on a
    shared machine (a compile competing for a core takes longer on the clock, not in CPU)."""

    def __init__(self):
        self.recs, self.stack, self.top, self.dispatchers = [], [], -1, {}
        self.lock = threading.Lock()

    def listener(self):
        from numba.core import event
        outer = self

        class _L(event.Listener):
            def on_start(self, ev):
                d = ev.data or {}
                f = getattr(d.get("dispatcher"), "py_func", None)
                name = f"{f.__module__}.{f.__qualname__}" if f is not None else "?"
                if not outer.stack:
                    outer.top += 1
                outer.stack.append([name, d.get("args"), time.perf_counter(), 0.0, time.thread_time(), 0.0])
                outer.dispatchers[name] = d.get("dispatcher")

            def on_end(self, ev):
                name, args, s, child, cs, cchild = outer.stack.pop()
                e, ce = time.perf_counter(), time.thread_time()
                outer.recs.append((name, args, s - T0, e - T0, e - s - child, len(outer.stack), outer.top,
                                   ce - cs - cchild))
                if outer.stack:
                    outer.stack[-1][3] += e - s
                    outer.stack[-1][5] += ce - cs
        return _L()


PHASES = [("urdf_dyn.loading", "load", "load the model"),
          ("urdf_dyn.jobs.sizing_checks", "machine_checks", "geometry-only checks (ISO 6015, lift chart, ranges)"),
          ("urdf_dyn.constraints.motion", "consistent_motion", "consistent motion"),
          ("urdf_dyn.machines.sizing", "size_motion", "closed-loop inverse dynamics and sizing"),
          ("urdf_dyn.jobs.sizing_job", "SizingPlan.from_scenario", "the plan (scenario, model, ...)"),
          ("urdf_dyn.jobs.sizing_job", "compute", "all computation (sizing_run.compute)"),
          ("urdf_dyn.jobs.sizing_job", "render", "reports, tables and plots"),
          ("urdf_dyn.jobs.sizing_job", "write_animation", "the GIF"),
          ("urdf_dyn.jobs.sizing_job", "RecordingTask.finish", "the HTML recording (waiting for it)"),
          ("urdf_dyn.reports.plotting", "PlotWorker.wait", "waiting for the plot worker")]


def _wrap_phases(phases: list):
    import importlib
    for mod, name, label in PHASES:
        try:
            m = importlib.import_module(mod)
            *owner, name = name.split(".")
            for o in owner:
                m = getattr(m, o)
            f = m.__dict__[name]
        except (ImportError, AttributeError, KeyError):
            continue
        cm = isinstance(f, classmethod)

        def w(*a, _f=f.__func__ if cm else f, _label=label, **k):
            s = time.perf_counter()
            try:
                return _f(*a, **k)
            finally:
                phases.append((_label, s - T0, time.perf_counter() - T0))
        setattr(m, name, classmethod(w) if cm else w)
    from urdf_dyn.jobs.excavator_kind import ExcavatorKind
    f = ExcavatorKind.checks

    def checks(*a, **k):
        s = time.perf_counter()
        try:
            return f(*a, **k)
        finally:
            phases.append(("the kind's checks (stall envelopes, pins, cycle, ...)", s - T0, time.perf_counter() - T0))
    ExcavatorKind.checks = checks


def _union(recs):
    spans = []
    for r in sorted(recs, key=lambda r: r[2]):
        if spans and r[2] < spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], r[3])
        else:
            spans.append([r[2], r[3]])
    return spans


def report(recs, phases, wall) -> str:
    import collections
    ex, inc, sigs = collections.defaultdict(float), collections.defaultdict(float), collections.defaultdict(int)
    cpu = collections.defaultdict(float)
    for name, args, s, e, x, depth, top, cx in recs:
        ex[name] += x
        inc[name] += e - s
        sigs[name] += 1
        cpu[name] += cx
    spans = _union(recs)
    total = sum(e - s for s, e in spans)
    ours = {n for n in ex if n.startswith("urdf_dyn")}
    lines = [f"wall {wall:.1f} s; {len(ours)} urdf_dyn kernels ({sum(sigs[n] for n in ours)} signatures), "
             f"{len(ex)} dispatchers with numba's own, {len(recs)} compilations, {total:.1f} s compiling "
             f"(load average {os.getloadavg()[0]:.1f} at the end); {sum(cpu.values()):.1f} CPU s compiling", "",
             "| kernel | signatures | exclusive s | inclusive s | exclusive CPU s |", "|---|---:|---:|---:|---:|"]
    top = sorted(ex, key=lambda n: -cpu[n])
    for n in top[:20]:
        lines.append(f"| {n.removeprefix('urdf_dyn.')} | {sigs[n]} | {ex[n]:.1f} | {inc[n]:.1f} | {cpu[n]:.1f} |")
    rest = top[20:]
    lines.append(f"| ({len(rest)} more) | {sum(sigs[n] for n in rest)} | {sum(ex[n] for n in rest):.1f} | | "
                 f"{sum(cpu[n] for n in rest):.1f} |")
    numba_own = sum(ex[n] for n in ex if not n.startswith("urdf_dyn"))
    own_cpu = sum(cpu[n] for n in ex if not n.startswith("urdf_dyn"))
    lines += ["", f"numba's own overloads (np.empty, np.zeros, string formatting, ...): {numba_own:.1f} s exclusive "
              f"({own_cpu:.1f} CPU s)", "",
              "| phase | start s | seconds | of which compiling |", "|---|---:|---:|---:|"]

    def comp(a, b):
        return sum(max(0.0, min(b, e) - max(a, s)) for s, e in spans)
    seen = set()
    for label, s, e in sorted(phases, key=lambda p: p[1]):
        if label in seen and e - s < 0.05:
            continue
        seen.add(label)
        lines.append(f"| {label} | {s:.1f} | {e - s:.1f} | {comp(s, e):.1f} |")
    return "\n".join(lines)


def _callees(disp, args) -> list:
    """The urdf_dyn kernels a compiled overload calls (numba's typemap: the Dispatcher-typed values)."""
    from numba.core import types
    cres = getattr(disp, "overloads", {}).get(tuple(args))
    ann = getattr(cres, "type_annotation", None)
    out = set()
    for t in getattr(ann, "typemap", {}).values():
        if isinstance(t, types.Dispatcher):
            f = t.dispatcher.py_func
            if f.__module__.startswith("urdf_dyn"):
                out.add(f"{f.__module__}.{f.__qualname__}")
    return sorted(out)


# kernels the job's forked processes compile (the GIF's palette mapping), which this process's recorder does not
# see: (seconds, [module, qualified name, argument types, callees, seconds]), appended to the list
FORKED = [(0.12, [["urdf_dyn_viewer.gif", "_bgra_indices", ["uint8 3 C", "uint8 1 C", "uint8 2 C"], [], 0.12]])]


def write_list(recs, dispatchers, path: Path):
    """The urdf_dyn kernels compiled, grouped by top-level compilation, callees before callers, each with the
    kernels it calls."""
    from urdf_dyn.cli.compile_ahead import plain
    groups: dict = {}
    for name, args, s, e, x, depth, top, _ in sorted(recs, key=lambda r: r[3]):
        if not name.startswith("urdf_dyn") or args is None:
            continue
        sig = [plain(a) for a in args]
        if any(a is None for a in sig):
            continue
        g = groups.setdefault(top, {"seconds": 0.0, "kernels": []})
        mod, _, qual = name.rpartition(".")
        if getattr(sys.modules.get(mod), qual, None) is not dispatchers.get(name):
            continue            # not the module's own dispatcher (register_jitable's): compiled in its callers
        g["kernels"].append([mod, qual, sig, _callees(dispatchers.get(name), args), round(x, 2)])
        if depth == 0:
            g["seconds"] += e - s
    listed = {(k[0], k[1]) for g in groups.values() for k in g["kernels"]}
    extra = [{"seconds": sec, "kernels": [k for k in ks if (k[0], k[1]) not in listed]} for sec, ks in FORKED]
    body = "".join(f"    ({g['seconds']:.2f}, [\n" + "".join(f"        {k!r},\n" for k in g["kernels"]) + "    ]),\n"
                   for g in [g for _, g in sorted(groups.items())] + [g for g in extra if g["kernels"]])
    path.write_text(
        '"""The kernels the main job (scenarios/excavator_dig.scenario.yaml) compiles on a first run, in groups of one\n'
        "top-level compilation each (callees first), in the order the job calls them, with the seconds each took\n"
        "where recorded: ``urdf_dyn.cli.compiling`` compiles them ahead in worker processes. Generated by\n"
        '``benchmarks/first_run_profile.py --write-list``; a kernel missing here is compiled where it is called."""\n'
        "__all__ = [\"GROUPS\"]\n\n"
        "# GROUPS: (seconds, kernels); a kernel: [module, qualified name, argument types, the kernels it calls,\n"
        "#   its own compile seconds when recorded (without its callees')];\n"
        "# a type: a scalar's name, \"dtype ndim layout[ ro]\" for an array (ro: read-only), a list for a tuple\n"
        f"GROUPS = [\n{body}]\n")


def list_only():
    """Compile every kernel of ``cli.kernel_list`` in this process, in the list's order, as the worker processes
    of ``cli.compile_ahead`` do between them: the CPU seconds of each and in all (the pool's work on a first
    run, without the job around it)."""
    from urdf_dyn.cli import compile_ahead
    la0 = os.getloadavg()[0]
    rows = []
    for name, mod, qual, sig, _, _ in compile_ahead._units():
        c = time.process_time()
        compile_ahead.compile_one(mod, qual, sig)
        rows.append((name, time.process_time() - c))
    for name, c in rows:
        print(f"| {name.removeprefix('urdf_dyn.')} | {c:.2f} |")
    print(f"{len(rows)} kernels compiled in {sum(c for _, c in rows):.1f} CPU s (load average {la0:.1f} at the "
          f"start, {os.getloadavg()[0]:.1f} at the end)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scenario", default=str(ROOT / "scenarios" / "excavator_dig.scenario.yaml"))
    ap.add_argument("--keep-caches", action="store_true", help="use the user's caches as they are")
    ap.add_argument("--json", help="write the raw records here")
    ap.add_argument("--write-list", action="store_true", help="write urdf_dyn/cli/kernel_list.py")
    ap.add_argument("--out-dir", default=None)
    ap.add_argument("--ahead", action="store_true", help="with the worker processes of cli.compile_ahead (the "
                    "kernels listed are then compiled there; the table shows what this process compiled and the "
                    "waits for the workers)")
    ap.add_argument("--list-only", action="store_true", help="compile the kernels of cli.kernel_list in this "
                    "process, no job: CPU seconds per kernel and in all")
    args = ap.parse_args()
    _setup_caches(args.keep_caches, args.ahead)
    if args.list_only:
        import urdf_dyn  # noqa: F401  (sets NUMBA_CACHE_DIR)
        return list_only()
    la0 = os.getloadavg()[0]
    rec = Recorder()
    import urdf_dyn  # noqa: F401  (sets NUMBA_CACHE_DIR)
    from urdf_dyn.numba_cache import on_compile
    on_compile(rec.listener)
    phases: list = []
    _wrap_phases(phases)
    from urdf_dyn.cli import compile_ahead
    wait = compile_ahead.CompileAhead.wait_for

    def wait_for(self, py_func):
        s = time.perf_counter()
        waited = wait(self, py_func)
        if waited:
            phases.append((f"waiting for the workers: {py_func.__qualname__}", s - T0, time.perf_counter() - T0))
        return waited
    compile_ahead.CompileAhead.wait_for = wait_for
    from urdf_dyn.cli.main import main as cli
    out = args.out_dir or tempfile.mkdtemp(prefix="first_run_out_")
    rc = cli(["run", args.scenario, "--out-dir", out])
    wall = time.perf_counter() - T0
    import resource
    ru = resource.getrusage(resource.RUSAGE_SELF)
    print(f"\nload average at the start {la0:.1f}; this process's CPU {ru.ru_utime + ru.ru_stime:.1f} s")
    print(report(rec.recs, phases, wall))
    if args.json:
        Path(args.json).write_text(json.dumps({"wall": wall, "phases": phases,
                                               "recs": [(r[0], None, *r[2:]) for r in rec.recs]}))
    if args.write_list:
        write_list(rec.recs, rec.dispatchers, ROOT / "urdf_dyn" / "cli" / "kernel_list.py")
    sys.exit(rc)


if __name__ == "__main__":
    main()
