"""Where a first run's compiling goes, kernel by kernel and stage by stage: every kernel of
``urdf_dyn/cli/kernel_list.py`` compiled in this process, in the list's order, with an empty numba cache (a
temporary ``XDG_CACHE_HOME``), and for each the CPU seconds of the compiling thread split into numba's passes
(by pass name: type inference, lowering, inlining of ``inline="always"`` callees, ...) and LLVM's stages
(``llvm:fpasses``: the function passes on the kernel's own module; ``llvm:mpasses``: the module passes after
every callee's module is linked in, which optimises the callees again inside each caller; ``llvm:emit``:
machine code), each exclusive of the stages nested in it.

    python benchmarks/compile_stages.py [FILTER ...]     # rows whose name contains a FILTER (all by default)

A kernel of the list that is ``inline="always"`` is skipped (its callers inline it; a list generated before it
became so still names it). CPU seconds inflate on a loaded machine: compare pairs run in turn.
"""
from __future__ import annotations

import collections
import functools
import importlib
import os
import sys
import tempfile
import time

__all__ = ["main"]


def _timed(acc: dict, stack: list, category):
    """Wrap a function so that its thread CPU time, less that of the wrapped calls nested in it, adds to
    acc[category(args)]."""
    def deco(f):
        @functools.wraps(f)
        def w(*a, **k):
            stack.append([category(a), time.thread_time(), 0.0])
            try:
                return f(*a, **k)
            finally:
                c, s, child = stack.pop()
                d = time.thread_time() - s
                acc[c] += d - child
                if stack:
                    stack[-1][2] += d
        return w
    return deco


def main(filters=()):
    os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="compile_stages_")
    os.environ["URDF_DYN_COMPILE_AHEAD"] = "off"
    os.environ.pop("NUMBA_CACHE_DIR", None)             # urdf_dyn keys it under XDG_CACHE_HOME
    import urdf_dyn  # noqa: F401  (sets NUMBA_CACHE_DIR)
    from numba.core import codegen, compiler_machinery
    from urdf_dyn.cli import compile_ahead
    acc, stack = collections.defaultdict(float), []
    pm, lib = compiler_machinery.PassManager, codegen.CPUCodeLibrary
    pm._runPass = _timed(acc, stack, lambda a: "numba:" + a[2].name())(pm._runPass)
    for name, cat in (("_optimize_functions", "llvm:fpasses"), ("_optimize_final_module", "llvm:mpasses"),
                      ("_get_module_for_linking", "llvm:link")):
        setattr(lib, name, _timed(acc, stack, lambda a, c=cat: c)(getattr(lib, name)))
    jit = codegen.JITCodeLibrary
    jit._finalize_specific = _timed(acc, stack, lambda a: "llvm:emit")(jit._finalize_specific)
    rows, total = [], collections.defaultdict(float)
    for name, mod, qual, sig, _, _ in compile_ahead._units():
        d = getattr(importlib.import_module(mod), qual, None)
        if d is None or getattr(d, "targetoptions", {}).get("inline") == "always":
            continue
        acc.clear()
        c = time.process_time()
        compile_ahead.compile_one(mod, qual, sig)
        rows.append((name, time.process_time() - c, dict(acc)))
        for k, v in acc.items():
            total[k] += v
    top = sorted(total, key=lambda k: -total[k])[:8]
    print(f"load average {os.getloadavg()[0]:.1f} at the end; CPU seconds")
    print("| kernel | all | " + " | ".join(top) + " | rest |\n|---|" + "---:|" * (len(top) + 2))
    for name, c, got in rows + [("all", sum(r[1] for r in rows), total)]:
        if name != "all" and filters and not any(f in name for f in filters):
            continue
        print(f"| {name.removeprefix('urdf_dyn.')} | {c:.2f} | " + " | ".join(f"{got.get(k, 0):.2f}" for k in top)
              + f" | {c - sum(got.get(k, 0) for k in top):.2f} |")


if __name__ == "__main__":
    main(sys.argv[1:])
